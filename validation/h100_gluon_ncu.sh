#!/bin/sh
# One H100 call (2026-11-27, issue 31 item 3 and issue 29): Nsight Compute's sectors per request for every launch
# of the Gluon example and of validation/probes/gluon_layouts.py (the layouts of Gluon tutorial 02), against
# irscope's prediction from the PTX, made offline in a child that sees no GPU (validation/ncu_coalescing.py with
# the CSV ncu_sectors.py recorded); beside it, irscope's capture on the GPU of the one corpus file it did not
# capture whole in run 6 (adasplash), after the limit stopped leaving out compiles. From the repository root,
# the corpus wheels carried as .whl (see h100_coverage.sh): sh validation/h100_gluon_ncu.sh
set -u
D=${OUT:-/tmp/irscope-h100}/gluon_ncu
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
R=validation/data/h100_coverage
PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 540 python3 benchmarks/coverage.py \
  --gpu-from $R/run4_part3_adasplash/coverage.json.gz --live --files drivers/adasplash_attention.py \
  --target sm_90 --timeout 520 --out "$D/adasplash" > "$D/adasplash.log" 2>&1 &
COV=$!
PYTHONUNBUFFERED=1 timeout 300 python3 validation/ncu_sectors.py kernels/gluon_copy.py validation/probes/gluon_layouts.py \
  --out "$D/ncu_gluon.csv" > "$D/ncu_sectors.log" 2>&1; echo "ncu_sectors rc=$?" >> "$D/rc.txt"
PYTHONUNBUFFERED=1 timeout 200 python3 validation/ncu_coalescing.py --measured "$D/ncu_gluon.csv" --target sm_90 \
  kernels/gluon_copy.py validation/probes/gluon_layouts.py --out "$D/gluon_coalescing.md" > "$D/ncu_coalescing.log" 2>&1
echo "ncu_coalescing rc=$?" >> "$D/rc.txt"
wait $COV; echo "adasplash rc=$?" >> "$D/rc.txt"
cat "$D/rc.txt"; cat "$D/gluon_coalescing.md"; tail -5 "$D/ncu_coalescing.log"; tail -12 "$D/adasplash/coverage.md"
tar czf "${OUT:-/tmp/irscope-h100}/gluon_ncu.tar.gz" -C "${OUT:-/tmp/irscope-h100}" gluon_ncu
