#!/bin/bash
# Issue 33, stop 50: Triton 3.6's Gluon tutorials 02 and 06 round-tripped again on the H200 machine's CPU side
# (GPU hidden), with each round trip in a forked copy that gives its memory back (stop 47's run, one process
# round-tripping one launch after another, ran 02 out of 128 GB after 3 of 31; 06's two sm_100 SASS differed).
# A differing stage's row names its first differing line from both sides.
# Back as $OUT/gluon36_roundtrip2.tar.gz.
set -u
R=/tmp/irscope-h200/gluon36_roundtrip2
mkdir -p "$R"
python3 -c "import triton, torch, sys; print('triton', triton.__version__, 'torch', torch.__version__, 'python', sys.version.split()[0])" > "$R/versions.txt" 2>&1
git rev-parse HEAD >> "$R/versions.txt" 2>/dev/null
export CUDA_VISIBLE_DEVICES=""
TIME=""
[ -x /usr/bin/time ] && TIME="/usr/bin/time -v"  # the peak memory, where the machine has it
run() {  # a group of tutorials into $R/$1
  local name=$1; shift
  $TIME timeout ${LIMIT:-520} python3 benchmarks/repro_roundtrip.py --corpus "$@" --timeout 500 --out "$R/$name" > "$R/$name.log" 2>&1
  echo "$name rc=$?" >> "$R/rc.txt"
}
IRSCOPE_JOBS=${JOBS02:-4} run layouts gluon/triton-3.6/02 &
[ -z "${ONLY02:-}" ] && run tcgen05 gluon/triton-3.6/06 &
wait
free -g > "$R/free.txt"
tar czf "${OUT:-/tmp}/gluon36_roundtrip2.tar.gz" -C /tmp/irscope-h200 gluon36_roundtrip2
