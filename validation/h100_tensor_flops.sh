#!/bin/sh
# One H100 call (issue 34): the tensor-path counters this ncu knows (its metric list kept), then the roofline
# probe and the grid probe under ncu with every FP counter it has, for the dots' FLOPs; compared offline with
# validation/ncu_roofline.py. From the repository root: sh validation/h100_tensor_flops.sh
set -u
D=${OUT:-/tmp/irscope-h100}/tensor_flops
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
ncu --query-metrics > "$D/metrics.txt" 2>&1
grep -i "tensor" "$D/metrics.txt" > "$D/tensor_metrics.txt"
IRSCOPE_PROBE_TIMING=0 PYTHONUNBUFFERED=1 timeout 400 python3 validation/ncu_launch_stats.py measure --flops \
  --out "$D" --launch-count 400 validation/probes/roofline_timing.py validation/probes/grid_waves.py 2>&1 | tee "$D/measure.log"
tar czf "${OUT:-/tmp/irscope-h100}/tensor_flops.tgz" -C "${OUT:-/tmp/irscope-h100}" tensor_flops && rm -rf "$D"
