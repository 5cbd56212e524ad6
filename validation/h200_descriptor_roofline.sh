#!/bin/sh
# Stop 48 (issue 34): the DRAM bytes of launches that move their tiles through host tensor descriptors (TMA),
# which irscope now predicts (before, each program was taken for an out-of-bounds access and had no traffic).
# Nsight Compute's DRAM bytes, duration and launch statistics of validation/probes/descriptor_copy.py and of
# tests/fixtures/autotune_descriptors.py, with plain Triton; irscope's side is made offline
# (validation/ncu_launch_stats.py predict, Triton 3.6) and compared with validation/ncu_roofline.py.
# From the repository root: sh validation/h200_descriptor_roofline.sh (back as $OUT/descriptor_roofline.tgz).
set -u
D=/tmp/irscope-h200/descriptor_roofline
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
git rev-parse HEAD >> "$D/versions.txt" 2>/dev/null
timeout 60 python3 validation/probes/descriptor_copy.py > "$D/plain_run.txt" 2>&1; echo "plain rc=$?" >> "$D/plain_run.txt"
PYTHONUNBUFFERED=1 timeout 300 python3 validation/ncu_launch_stats.py measure --out "$D" \
  validation/probes/descriptor_copy.py tests/fixtures/autotune_descriptors.py 2>&1 | tee "$D/measure.log"
tar czf "${OUT:-/tmp}/descriptor_roofline.tgz" -C /tmp/irscope-h200 descriptor_roofline
