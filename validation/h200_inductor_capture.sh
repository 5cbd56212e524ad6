#!/bin/bash
# An H200 call (2026-11-29, issue 29): irscope running on a GPU captures torch.compile's own kernels. Before the
# fix (engine/inductor/kernels.py `_described`), irscope on the GPU captured none of kernels/compiled_block.py's
# launches (validation/data/h200_repro/repro5): Inductor compiled them in its pool of worker processes and sent
# the autotuners back pickled. Here, on the GPU: (1) `irscope report --json` with the GPU visible, (2) the same
# with one compile thread (Inductor compiles in this process), (3) validation/repro_gpu.py, whose reproducers'
# cubins must be ones the original run compiled. Run twice on one machine: the second time with Inductor's caches
# on disk warm (a first fix kept its description on the autotuner, which Inductor pickled into that cache).
# Everything back as $OUT/inductor_capture.tar.gz.
set -u
U=/tmp/irscope-h200/inductor_capture
mkdir -p "$U"
ROOT=$PWD
python3 -c "import triton, torch, os; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0), 'cpus', os.cpu_count())" > "$U/versions.txt" 2>&1
git rev-parse HEAD >> "$U/versions.txt" 2>/dev/null
for f in kernels/compiled_block.py tests/corpus/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py; do
  n=$(basename "$f" .py)
  IRSCOPE_DEBUG=1 TRITON_CACHE_DIR=$U/cache_$n timeout 240 python3 -m irscope report "$f" --json > "$U/$n.report.json" 2> "$U/$n.report.err"
  echo "$f report rc=$?" >> "$U/rc.txt"
  IRSCOPE_DEBUG=1 TORCHINDUCTOR_COMPILE_THREADS=1 TRITON_CACHE_DIR=$U/cache1_$n timeout 240 python3 -m irscope report "$f" --json > "$U/$n.report1.json" 2> "$U/$n.report1.err"
  echo "$f report one-thread rc=$?" >> "$U/rc.txt"
done
timeout 400 python3 validation/repro_gpu.py kernels/compiled_block.py tests/corpus/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py --out "$U/repro" --timeout 150 > "$U/repro.log" 2>&1
echo "repro_gpu rc=$?" >> "$U/rc.txt"
python3 - "$U" > "$U/summary.txt" 2>&1 <<'PY'
import json, sys, glob, os
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.report*.json"))):
    try:
        doc = json.load(open(path))
    except Exception as exc:
        print(os.path.basename(path), "not JSON:", exc); continue
    comps = doc.get("kernels") or []
    print(os.path.basename(path), "compilations:", len(comps), [(c.get("name"), c.get("registers")) for c in comps], "named:", len(doc.get("named") or []), "missing:", doc.get("missing"))
PY
cd /tmp/irscope-h200 && tar czf "${OUT:-/tmp}/inductor_capture.tar.gz" inductor_capture
