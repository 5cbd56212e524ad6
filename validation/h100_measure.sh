#!/bin/sh
# Measured mode on the H100, alone on the GPU (Nsight Compute cannot profile two processes at once, and
# do_bench must not share the GPU): every hand-written example and tutorial 01, then the TUI's M.
#   sh validation/h100_measure.sh        (results under $OUT/d, packed into $OUT/measure.tar.gz)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
timeout 420 python3 validation/gpu_measure.py --out "$D/measure" kernels/strided.py kernels/add.py kernels/softmax.py \
  kernels/matmul.py kernels/attention.py kernels/transpose.py kernels/misaligned.py kernels/layernorm.py \
  kernels/gelu.py kernels/helper.py kernels/bank_conflict.py tests/corpus/tutorials/triton-3.6/01-vector-add.py \
  > "$D/measure.log" 2>&1; echo "measure rc=$?" >> "$D/rc.txt"
timeout 100 python3 -m pytest -q -p no:cacheprovider -rs -s tests/tui/test_measured_panel.py -k gpu > "$D/pytest_measure_tui.log" 2>&1
echo "pytest_tui rc=$?" >> "$D/rc.txt"
cat "$D/rc.txt"; tail -20 "$D/measure.log"; tail -12 "$D/pytest_measure_tui.log"
tar czf "$(dirname "$D")/measure.tar.gz" -C "$(dirname "$D")" d
