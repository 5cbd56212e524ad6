#!/bin/sh
# One H100 call (issue 34, items 2-4): the roofline probe timed with do_bench (each launch's median), then under
# Nsight Compute with its DRAM bytes, duration, launch statistics and floating-point counts; irscope's side is
# made offline (validation/ncu_launch_stats.py predict, Triton 3.6 as here) and compared with
# validation/ncu_roofline.py. From the repository root: sh validation/h100_roofline.sh
set -u
D=${OUT:-/tmp/irscope-h100}/roofline
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,clocks.mem,power.limit --format=csv >> "$D/versions.txt" 2>&1
# do_bench medians, two runs of the whole probe (the spread between runs is kept)
for run in 1 2; do
  timeout 90 python3 validation/probes/roofline_timing.py > "$D/timing_$run.txt" 2>&1
done
IRSCOPE_PROBE_TIMING=0 PYTHONUNBUFFERED=1 timeout 380 python3 validation/ncu_launch_stats.py measure --flops \
  --out "$D" --launch-count 400 validation/probes/roofline_timing.py validation/probes/grid_waves.py 2>&1 | tee "$D/measure.log"
# at most 8 files come back from the machine: one archive
tar czf "${OUT:-/tmp/irscope-h100}/roofline.tgz" -C "${OUT:-/tmp/irscope-h100}" roofline && rm -rf "$D"
