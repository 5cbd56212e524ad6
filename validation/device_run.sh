#!/bin/sh
# One device session: fidelity of the offline compile (with compile-ahead children) against real launches,
# then the core tests with the GPU hidden, then the compile-overhead benchmark on two kernels (GPU hidden).
# Run from the repository root on the GPU machine:  sh validation/device_run.sh   (results under $OUT)
set -u
OUT=${OUT:-/tmp/irscope-device}
mkdir -p "$OUT"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__)" | tee "$OUT/versions.txt"
timeout 300 python3 validation/gpu_fidelity.py --out "$OUT/fidelity.md" > "$OUT/fidelity.log" 2>&1
echo "fidelity rc=$?"; tail -20 "$OUT/fidelity.md" 2>/dev/null
CUDA_VISIBLE_DEVICES="" PYTHONPATH=$PWD timeout 200 python3 -m pytest -q -p no:cacheprovider \
  tests/functional/test_engine_compile_ahead.py tests/functional/test_engine_open_and_compile.py tests/functional/test_cli_bad_input.py > "$OUT/pytest.log" 2>&1
echo "pytest rc=$?"; tail -5 "$OUT/pytest.log"
CUDA_VISIBLE_DEVICES="" PYTHONPATH=$PWD timeout 80 python3 benchmarks/compile_overhead.py kernels/add.py kernels/attention.py --repeat 1 > "$OUT/overhead.txt" 2>&1
echo "overhead rc=$?"; cat "$OUT/overhead.txt"
