#!/bin/sh
# The third H100 call of stop 28: the two files the first two calls did not finish, alone: Triton 3.7's
# tutorial 06 (from a checkout's layout) and fla_chunk_gla.py, with a longer limit per side.
#   sh validation/h100_corpus6c.sh        (results under $OUT/d; corpus wheels installed)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
T06=$(python3 -c "import os, sys; sys.path.insert(0, 'benchmarks'); import corpus; print(corpus.checkout_layout('/tmp/irscope-checkouts/triton-3.7/triton', os.path.abspath('tests/corpus/tutorials/triton-3.7/06-fused-attention.py')))")
FIDELITY_FIRST_POINT=1 FIDELITY_CHILD_TIMEOUT=540 timeout 575 python3 validation/gpu_fidelity.py "$T06" \
    "$PWD/tests/corpus/drivers/fla_chunk_gla.py" --jobs 2 --out "$D/h100_corpus_fidelity6c.md" > "$D/h100_corpus_fidelity6c.log" 2>&1
echo "fidelity rc=$?" | tee "$D/rc.txt"
