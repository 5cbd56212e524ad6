#!/bin/sh
# The H100 call for Inductor fidelity, compiled_block's fidelity, the new examples' Nsight Compute rows and
# bank conflicts (issues 14, 15, 18); measured mode (issue 17): validation/h100_measure.sh. From the repository root, with the wheels the device notes name installed:
#   sh validation/h100_final.sh        (results under $OUT/d, packed into $OUT/final.tar.gz)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
# The compile-side checks in the background (they use the GPU lightly and never profile); Nsight Compute
# one process at a time (two at once fail: "a driver resource was unavailable"); measured mode, which also
# times kernels, runs alone in validation/h100_measure.sh. (The first run of this script ran everything at
# once and lost most ncu profiles to that.)
(timeout 500 python3 validation/gpu_inductor.py --out "$D/inductor" > "$D/inductor.log" 2>&1; echo "inductor rc=$?" >> "$D/rc.txt") &
(timeout 500 python3 validation/gpu_fidelity.py kernels/compiled_block.py --out "$D/fidelity_block.md" > "$D/fidelity_block.log" 2>&1; echo "fidelity_block rc=$?" >> "$D/rc.txt") &
timeout 150 python3 validation/ncu_sectors.py kernels/bank_conflict.py kernels/compiled_block.py --out "$D/ncu_raw_new.csv" > "$D/ncu_sectors_new.log" 2>&1; echo "ncu_sectors_new rc=$?" >> "$D/rc.txt"
timeout 400 python3 validation/ncu_bank_conflicts.py --out "$D/bank" > "$D/bank.log" 2>&1; echo "bank rc=$?" >> "$D/rc.txt"
wait
cat "$D/rc.txt"
tar czf "$(dirname "$D")/final.tar.gz" --exclude="*.ncu-rep" -C "$(dirname "$D")" d
ls -la "$(dirname "$D")"
