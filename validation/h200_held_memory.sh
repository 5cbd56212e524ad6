#!/bin/bash
# An H200 call (2026-11-29, issues 29 and 31): irscope running on a GPU no longer holds the GPU memory of the
# tensors the file dropped (engine/capture/held_memory.py). Before, Gluon tutorial 02 ran the H200 out of memory
# at line 225 under irscope (8 of its compilations captured; validation/data/h200_gluon/on_gpu_after), holding
# its seventeen 8 GB inputs. Here: (1) benchmarks/coverage.py --gpu-only on 02: plain Triton's compilations
# against irscope's report with the GPU visible; (2) `irscope report --json` on 02, timed; (3) measured mode
# (--measure --no-ncu) on 02's first memcpy launch, whose tensors are let go of in the run; (4) what the capture
# hears of torch.compile's kernels with one compile thread and with the default pool
# (validation/inductor_launch_probe.py), beside the coverage record of what plain Triton compiles with one
# thread. Everything back as $OUT/held_memory.tar.gz.
set -u
U=/tmp/irscope-h200/held_memory
mkdir -p "$U"
python3 -c "import triton, torch, os; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0), 'cpus', os.cpu_count())" > "$U/versions.txt" 2>&1
G=tests/corpus/tutorials/gluon/triton-3.6
( time timeout 200 python3 -m irscope report $G/02-layouts.py --json > "$U/02.report.json" 2> "$U/02.report.err" ) 2> "$U/02.report.time"
echo "02 report rc=$?" >> "$U/rc.txt"
timeout 300 python3 benchmarks/coverage.py --files $G/02-layouts.py --gpu-only --timeout 280 --out "$U/coverage02" > "$U/coverage02.log" 2>&1
echo "02 coverage rc=$?" >> "$U/rc.txt"
[ $SECONDS -lt 380 ] && timeout 120 python3 -m irscope report $G/02-layouts.py --kernel memcpy_1d_kernel --measure --no-ncu > "$U/02.measure.txt" 2> "$U/02.measure.err"
echo "02 measure rc=$?" >> "$U/rc.txt"
for threads in 1 default; do
  env_threads=""
  [ "$threads" = 1 ] && env_threads="TORCHINDUCTOR_COMPILE_THREADS=1"
  [ $SECONDS -lt 440 ] || break
  env $env_threads TORCHINDUCTOR_CACHE_DIR=$U/inductor_$threads TRITON_CACHE_DIR=$U/triton_$threads timeout 90 \
    python3 validation/inductor_launch_probe.py kernels/compiled_block.py > "$U/probe_$threads.txt" 2> "$U/probe_$threads.err"
  echo "probe $threads rc=$?" >> "$U/rc.txt"
  [ "$threads" = 1 ] && [ $SECONDS -lt 480 ] && env $env_threads TORCHINDUCTOR_CACHE_DIR=$U/inductor_cov_$threads timeout 90 python3 benchmarks/coverage.py \
    --files kernels/compiled_block.py --gpu-only --timeout 80 --out "$U/coverage_block_$threads" > "$U/coverage_block_$threads.log" 2>&1
  echo "coverage block $threads rc=$?" >> "$U/rc.txt"
done
python3 - "$U" > "$U/summary.txt" 2>&1 <<'PY'
import json, sys, os
doc = json.load(open(os.path.join(sys.argv[1], "02.report.json")))
comps = doc.get("kernels") or []
print("02 compilations:", len(comps), "named:", len(doc.get("named") or []), "missing:", doc.get("missing"))
print("notes:", [n for n in doc.get("notes") or []])
PY
rm -rf "$U"/inductor_* "$U"/triton_*
cd /tmp/irscope-h200 && tar czf "${OUT:-/tmp}/held_memory.tar.gz" held_memory
