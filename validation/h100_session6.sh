#!/bin/sh
# One H100 call (2026-11-27), two measurements side by side, packed into $OUT/session6.tar.gz:
#   cov/      issue 29: irscope's capture on the GPU (side (b')) run again on today's code, against what plain
#             Triton compiled in call 4 (side (a), recorded: it depends on Triton 3.6 and the corpus files only):
#             benchmarks/coverage.py --gpu-from <call 4's parts> --live. Side (b) is replayed offline later.
#   gluon/    issue 31: the Gluon kernels offline against the real launch, stage by stage and registers
#             (validation/gpu_fidelity.py over kernels/gluon_copy.py and Triton 3.6's Gluon tutorials that an
#             H100 runs), then Nsight Compute's sectors per request for each of their launches
#             (validation/ncu_sectors.py: the ground truth for a Gluon coalescing prediction).
# From the repository root, the corpus libraries carried as wheels (.whl):
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
#     .whl/*.whl && export PYTHONPATH=/tmp/site && sh validation/h100_session6.sh
# NAME: the folder and archive (session6: the first call; session6b: the second, after the capture's fixes,
# NCU=0: its ncu data came back whole from the first)
set -u
NAME=${NAME:-session6}
D=${OUT:-/tmp/irscope-h100}/$NAME
mkdir -p "$D/cov" "$D/gluon"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
git rev-parse HEAD >> "$D/versions.txt" 2>/dev/null
R=validation/data/h100_coverage
# later parts over earlier ones, as run 4's replay read them
PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-} timeout ${COV_BUDGET:-500} python3 benchmarks/coverage.py \
  --gpu-from $R/run4_part1_rest/coverage.json.gz $R/run4_part1_slow/coverage.json.gz $R/run4_part2_slow/coverage.json.gz \
  $R/run4_part2_more/coverage.json.gz $R/run4_part3_adasplash/coverage.json.gz \
  --live --target sm_90 --jobs ${JOBS:-8} --timeout ${TIMEOUT:-300} --out "$D/cov" > "$D/cov/coverage.log" 2>&1 &
COV=$!
G=tests/corpus/tutorials/gluon/triton-3.6
GLUON="kernels/gluon_copy.py $G/01-intro.py $G/02-layouts.py $G/03-async-copy.py $G/04-tma.py $G/05-wgmma.py
       $G/07-persistence.py $G/08-warp-specialization.py"
# shellcheck disable=SC2086
(PYTHONUNBUFFERED=1 FIDELITY_FIRST_POINT=1 FIDELITY_CHILD_TIMEOUT=200 timeout 330 python3 validation/gpu_fidelity.py \
  $GLUON --jobs 4 --out "$D/gluon/fidelity.md" > "$D/gluon/fidelity.log" 2>&1; echo "fidelity rc=$?" >> "$D/rc.txt"
 # shellcheck disable=SC2086
 [ "${NCU:-1}" = 1 ] && PYTHONUNBUFFERED=1 timeout 150 python3 validation/ncu_sectors.py kernels/gluon_copy.py $G/02-layouts.py \
  --out "$D/gluon/ncu_sectors.csv" > "$D/gluon/ncu_sectors.log" 2>&1; echo "ncu_sectors rc=$?" >> "$D/rc.txt") &
GL=$!
wait $COV; echo "coverage rc=$?" >> "$D/rc.txt"
wait $GL
cat "$D/rc.txt"
tail -60 "$D/cov/coverage.md" 2>/dev/null
tail -30 "$D/gluon/fidelity.md" 2>/dev/null
cat "$D/gluon/ncu_sectors.csv" 2>/dev/null | cut -c1-200
tar czf "${OUT:-/tmp/irscope-h100}/$NAME.tar.gz" -C "${OUT:-/tmp/irscope-h100}" "$NAME"
