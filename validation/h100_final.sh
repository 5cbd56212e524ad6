#!/bin/sh
# The H100 call that proves measured mode, Inductor fidelity and bank conflicts on the final code
# (issues 14, 15, 17, 18). From the repository root, with the wheels the device notes name installed:
#   sh validation/h100_final.sh        (results under $OUT/d, packed into $OUT/final.tar.gz)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
# Everything at once (16 CPU cores; Nsight Compute profiles one launch at a time across processes): the
# do_bench times of measured mode therefore share the GPU with the other checks, and the table says so.
(timeout 500 python3 validation/gpu_inductor.py --out "$D/inductor" > "$D/inductor.log" 2>&1; echo "inductor rc=$?" >> "$D/rc.txt") &
(timeout 500 python3 validation/gpu_fidelity.py kernels/compiled_block.py --out "$D/fidelity_block.md" > "$D/fidelity_block.log" 2>&1; echo "fidelity_block rc=$?" >> "$D/rc.txt") &
(timeout 520 python3 validation/gpu_measure.py --jobs 4 --out "$D/measure" kernels/*.py \
  tests/corpus/tutorials/triton-3.6/01-vector-add.py tests/corpus/tutorials/triton-3.6/02-fused-softmax.py \
  > "$D/measure.log" 2>&1; echo "measure rc=$?" >> "$D/rc.txt") &
(timeout 400 python3 -m pytest -q -p no:cacheprovider -rs tests/test_measure_tui.py -s > "$D/pytest_measure_tui.log" 2>&1; echo "pytest_tui rc=$?" >> "$D/rc.txt") &
(timeout 300 python3 validation/ncu_sectors.py kernels/bank_conflict.py kernels/compiled_block.py --out "$D/ncu_raw_new.csv" > "$D/ncu_sectors_new.log" 2>&1; echo "ncu_sectors_new rc=$?" >> "$D/rc.txt") &
(timeout 500 python3 validation/ncu_bank_conflicts.py --out "$D/bank" > "$D/bank.log" 2>&1; echo "bank rc=$?" >> "$D/rc.txt") &
wait
cat "$D/rc.txt"
tar czf "$(dirname "$D")/final.tar.gz" --exclude="*.ncu-rep" -C "$(dirname "$D")" d
ls -la "$(dirname "$D")"
