#!/bin/bash
# A fifth H200 call (2026-11-28, issue 33): why the torch.compile tutorial's reproducers build other cubins than
# the original with Inductor's options passed (repro5/). Both Triton caches kept; the PTX and metadata of each
# kernel the original compiled and of its reproducer's, diffed. Everything back as $OUT/repro6.tar.gz.
set -u
U=/tmp/irscope-h200/repro6
mkdir -p "$U/A" "$U/B" "$U/repros"
ROOT=$PWD
F=$ROOT/tests/corpus/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" > "$U/versions.txt"
git rev-parse HEAD >> "$U/versions.txt" 2>/dev/null
cd "$(dirname "$F")" || exit 1
TRITON_CACHE_DIR=$U/A timeout 200 python3 "$F" > "$U/original.log" 2>&1; echo "original rc=$?" >> "$U/rc.txt"
TRITON_CACHE_DIR=$U/W PYTHONPATH=$ROOT:${PYTHONPATH:-} timeout 200 python3 "$ROOT/benchmarks/repro_roundtrip.py" --write "$F" "$U/repros" \
  > "$U/write.log" 2>&1; echo "write rc=$?" >> "$U/rc.txt"
for r in "$U"/repros/*.py; do
  TRITON_CACHE_DIR=$U/B/$(basename "$r" .py) timeout 120 python3 "$r" >> "$U/repros.log" 2>&1; echo "$r rc=$?" >> "$U/rc.txt"
done
cp -r "$U/repros" "$U/repros_kept"
for name in add_kernel add_kernel_autotuned; do
  for b in "$U"/B/*/*/"$name".ptx; do
    [ -f "$b" ] || continue
    for a in "$U"/A/*/"$name".ptx; do
      echo "=== $a vs $b"; diff "$a" "$b" | head -40
      diff <(python3 -m json.tool --sort-keys "${a%.ptx}.json") <(python3 -m json.tool --sort-keys "${b%.ptx}.json") | head -30
    done
  done
done > "$U/diffs.txt" 2>&1
cd /tmp/irscope-h200 && tar czf "${OUT:-/tmp}/repro6.tar.gz" repro6
