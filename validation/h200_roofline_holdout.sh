#!/bin/sh
# One H200 call (issue 34): the roofline model checked on launches it was not fitted on. Each probe given (after
# the call's name) is timed with do_bench in three runs, then run under Nsight Compute (DRAM bytes, duration,
# launch statistics, FP counts), then irscope reports it on this GPU (its SMs, L2 and bandwidth: an H200's, none
# of them fitted). Compared here with
#   python validation/ncu_roofline.py compare validation/data/h200_roofline_holdout/CALL
# From the repository root (one archive back under $OUT):
#   sh validation/h200_roofline_holdout.sh call2 validation/probes/roofline_holdout.py \
#     validation/probes/roofline_holdout2.py validation/probes/roofline_timing.py
# The first call ran `call1` with the first holdout and the timing probe, and two timing runs.
set -u
CALL=$1
shift
D=${OUT:-/tmp/irscope-h200}/$CALL
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
git rev-parse HEAD >> "$D/versions.txt" 2>/dev/null
ncu --version >> "$D/versions.txt" 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv >> "$D/versions.txt" 2>&1
for run in 1 2 3; do
  for probe in "$@"; do
    timeout 100 python3 "$probe" >> "$D/timing_$run.txt" 2>&1
  done
done
echo "timing done $(date +%T)"
IRSCOPE_PROBE_TIMING=0 PYTHONUNBUFFERED=1 timeout 300 python3 validation/ncu_launch_stats.py measure --flops \
  --out "$D" --launch-count 400 "$@" 2>&1 | tee "$D/measure.log"
echo "ncu done $(date +%T)"
IRSCOPE_PROBE_TIMING=0 PYTHONUNBUFFERED=1 timeout 200 python3 validation/ncu_launch_stats.py predict --on-gpu \
  --out "$D" "$@" 2>&1 | tee "$D/predict.log"
echo "predict done $(date +%T)"
tar czf "${OUT:-/tmp/irscope-h200}/$CALL.tgz" -C "${OUT:-/tmp/irscope-h200}" "$CALL" && rm -rf "$D"
