#!/bin/bash
# The report's forked copies (engine/forked_map.py) on a machine with a GPU: irscope running on the GPU has
# initialised CUDA, which a forked copy cannot use, so the report must compute its analyses in the worker
# (copies_for -> 0), and come out the same as with IRSCOPE_JOBS=1. bank_conflict.py's two compilations and
# the 2400-program launch of grid_of_66.py, each with the GPU visible, timed. Back as $OUT/forked_report.tar.gz.
set -u
R=/tmp/irscope-h200/forked_report
mkdir -p "$R"
python3 -c "import triton, torch, sys; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0), 'python', sys.version.split()[0])" > "$R/versions.txt" 2>&1
for f in kernels/bank_conflict.py tests/fixtures/grid_of_66.py; do
  n=$(basename "$f" .py)
  for jobs in default 1; do
    s=$(date +%s%N)
    if [ "$jobs" = default ]; then
      timeout 200 python3 -m irscope report --json "$f" > "$R/$n.$jobs.json" 2> "$R/$n.$jobs.err"
    else
      IRSCOPE_JOBS=1 timeout 200 python3 -m irscope report --json "$f" > "$R/$n.$jobs.json" 2> "$R/$n.$jobs.err"
    fi
    rc=$?; echo "$n jobs=$jobs rc=$rc ms=$(( ($(date +%s%N) - s) / 1000000 ))" >> "$R/rc.txt"
  done
  python3 - "$R/$n.default.json" "$R/$n.1.json" >> "$R/rc.txt" <<'PY'
import json, sys
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k != "seconds"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
a, b = (strip(json.load(open(p))) for p in sys.argv[1:3])
print(sys.argv[1], "kernels", len(a["kernels"]), "same as IRSCOPE_JOBS=1:", a == b)
PY
done
tar czf "${OUT:-/tmp}/forked_report.tar.gz" -C /tmp/irscope-h200 forked_report
