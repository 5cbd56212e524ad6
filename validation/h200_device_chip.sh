#!/bin/sh
# Stop 46 (issue 34): irscope on a GPU describes that GPU, not the target's representative chip. Prints the
# properties Triton's driver and torch give (`gpu_properties`), the chip irscope builds of them, and
# `irscope report` of a 66- and a 2400-program launch on this GPU (its launch statistics and roofline lines),
# beside the same report made with CUDA_VISIBLE_DEVICES="" (the virtual sm_90: an H100). Back as
# $OUT/device_chip.tar.gz.
set -u
R=/tmp/irscope-h200/device_chip
mkdir -p "$R"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" > "$R/versions.txt"
git rev-parse HEAD >> "$R/versions.txt" 2>/dev/null
PYTHONPATH=$PWD:${PYTHONPATH:-} python3 - > "$R/properties.json" 2> "$R/properties.err" <<'PY'
import json
from irscope.engine.triton_compat.driver import local_gpu_target
from irscope.engine.triton_compat.measure import gpu_properties
props = gpu_properties()
target = local_gpu_target()
print(json.dumps({"properties": props, "target": target.name, "chip": target.chip.__dict__,
                  "bandwidth_gbps": target.chip.bandwidth / 1e9}, indent=1, default=str))
PY
PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 200 python3 -m irscope report tests/fixtures/grid_of_66.py > "$R/report_gpu.txt" 2>&1
echo "gpu rc=$?" >> "$R/rc.txt"
PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 200 python3 -m irscope report tests/fixtures/grid_of_66.py --json > "$R/report_gpu.json" 2>> "$R/report_gpu.err"
echo "gpu json rc=$?" >> "$R/rc.txt"
CUDA_VISIBLE_DEVICES="" PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 200 python3 -m irscope report tests/fixtures/grid_of_66.py > "$R/report_virtual.txt" 2>&1
echo "virtual rc=$?" >> "$R/rc.txt"
tar czf "${OUT:-/tmp}/device_chip.tar.gz" -C /tmp/irscope-h200 device_chip
