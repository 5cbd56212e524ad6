#!/bin/bash
# Issue 29: a whole record of what plain Triton compiles running adasplash's corpus driver on a GPU. Its
# autotuners compile one config after the other (3 to 40 s each), so the run outlasts one device call (call
# 4's record was cut at 540 s, which left one specialization irscope shows offline "never compiled"). Run
# twice in a row on one warm machine: the second call finds the first's compiles in the kept caches
# (.device/ is ignored by git, so it stays between calls) and goes further; both calls' records are kept.
# Needs the corpus wheels (adasplash's among them):
#   carry [".whl"]; this script installs them into /tmp/site itself.
# Usage: CALL=1 bash validation/h200_adasplash_record.sh   (then CALL=2 at once). Back as $OUT/adasplash_CALL.tar.gz.
set -u
CALL=${CALL:-1}
R=/tmp/irscope-h200/adasplash_call$CALL
mkdir -p "$R"
if [ ! -d /tmp/site/adasplash ]; then
  pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl > "$R/pip.log" 2>&1
fi
export PYTHONPATH=/tmp/site
python3 -c "import triton, torch, sys; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0), 'python', sys.version.split()[0])" > "$R/versions.txt" 2>&1
git rev-parse HEAD >> "$R/versions.txt" 2>/dev/null
du -sh .device/adasplash-caches 2>/dev/null > "$R/caches_before.txt"
timeout 570 python3 benchmarks/coverage.py --gpu-only --files drivers/adasplash_attention.py \
  --target sm_90 --timeout ${LIMIT:-540} --gpu-caches .device/adasplash-caches --out "$R" > "$R/coverage.log" 2>&1
echo "coverage rc=$?" > "$R/rc.txt"
du -sh .device/adasplash-caches 2>/dev/null > "$R/caches_after.txt"
[ -f "$R/coverage.json" ] && gzip -f "$R/coverage.json"
tar czf "${OUT:-/tmp}/adasplash_$CALL.tar.gz" -C /tmp/irscope-h200 "adasplash_call$CALL"
