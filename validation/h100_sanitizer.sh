#!/bin/sh
# The H100 call for the out-of-bounds finding (validation/sanitizer_bounds.py): every case under
# compute-sanitizer's memcheck, from the repository root, the corpus libraries carried as .whl:
#   sh validation/h100_sanitizer.sh      (results in $OUT/sanitizer.tar.gz)
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site
D=/tmp/sanitizer
mkdir -p "$D"
{ python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))"; compute-sanitizer --version | tail -1; } > "$D/versions.txt" 2>&1
timeout ${BUDGET:-540} python3 validation/sanitizer_bounds.py --gpu "$D" --jobs ${JOBS:-6} > "$D/run.log" 2>&1
echo "rc=$?" >> "$D/run.log"
tail -40 "$D/run.log"
tar -czf "${OUT:-/tmp}/sanitizer.tar.gz" -C /tmp sanitizer
