#!/bin/sh
# The H100 calls for issue 29's coverage (benchmarks/coverage.py): for each corpus file, what plain Triton
# compiles running it as written, what irscope shows offline (GPU hidden), and what irscope shows on the GPU.
# Each call runs one part of the corpus (a device command has 10 minutes); from the repository root:
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
#     .whl/*.whl && export PYTHONPATH=/tmp/site      (the corpus libraries the device lacks, carried as .whl)
#   PART=A sh validation/h100_coverage.sh             (results under $OUT/PART)
#   PART="drivers/ snippets/" NAME=rest sh validation/h100_coverage.sh   (several filters: under $OUT/NAME)
#   EXTRA=--gpu-only PART=A sh validation/h100_coverage.sh   (sides (a) and (b') only; side (b) replayed here
#     later: python benchmarks/coverage.py --gpu-from DIR/coverage.json ..., as run4 was: see
#     validation/data/h100_coverage/run4_README.md)
set -u
P=${PART:-A}
D=${OUT:-/tmp/irscope-h100}/${NAME:-$P}  # NAME: a folder name for a PART of several filters
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
case $P in
  A) FILTERS="tutorials/" ;;
  B) FILTERS="drivers/" ;;
  C) FILTERS="snippets/ community/ courses/" ;;
  *) FILTERS="$P" ;;
esac
# shellcheck disable=SC2086
PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-} timeout ${BUDGET:-560} python3 benchmarks/coverage.py $FILTERS \
  --target sm_90 --jobs ${JOBS:-8} --timeout ${TIMEOUT:-240} ${EXTRA:-} --out "$D" > "$D/coverage.log" 2>&1
echo "coverage $P rc=$?" | tee "$D/rc.txt"
tail -40 "$D/coverage.md" 2>/dev/null
