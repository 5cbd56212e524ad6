#!/bin/bash
# Issue 33: `irscope repro` round-tripped over Triton 3.6's Gluon tutorials, on the H200 machine's CPU side with
# the GPU hidden (the round trip is offline: benchmarks/repro_roundtrip.py hides the GPU in its children). The
# 2-core, 24 GB machine irscope is built on cannot hold tutorial 01's and 02's GPU-sized tensors twice (the
# original's and its reproducer's); this one has 128 GB. Three groups side by side, each file in a child of its
# own, as the benchmark runs it. Back as $OUT/gluon36_roundtrip.tar.gz.
set -u
R=/tmp/irscope-h200/gluon36_roundtrip
mkdir -p "$R"
python3 -c "import triton, torch, sys; print('triton', triton.__version__, 'torch', torch.__version__, 'python', sys.version.split()[0])" > "$R/versions.txt" 2>&1
export CUDA_VISIBLE_DEVICES=""
run() {  # a group of tutorials into $R/$1
  local name=$1; shift
  timeout ${LIMIT:-540} python3 benchmarks/repro_roundtrip.py --corpus "$@" --timeout 520 --out "$R/$name" > "$R/$name.log" 2>&1
  echo "$name rc=$?" >> "$R/rc.txt"
}
run layouts gluon/triton-3.6/02 &
run intro_copy_tma gluon/triton-3.6/01 gluon/triton-3.6/03 gluon/triton-3.6/04 &
run wgmma_rest gluon/triton-3.6/05 gluon/triton-3.6/06 gluon/triton-3.6/07 gluon/triton-3.6/08 &
wait
free -g > "$R/free.txt"
tar czf "${OUT:-/tmp}/gluon36_roundtrip.tar.gz" -C /tmp/irscope-h200 gluon36_roundtrip
