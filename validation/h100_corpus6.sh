#!/bin/sh
# The H100 call for the corpus's fidelity on the code of stop 28 (issue 12, item 10): every corpus file,
# the tutorials of 3.7 and 3.8 among them, each tutorial run from a Triton checkout's layout as
# benchmarks/corpus.py runs it (corpus.checkout_layout: tutorial 07 links libdevice from there).
# From the repository root, with the corpus wheels of .device/wheels.tar installed:
#   sh validation/h100_corpus6.sh        (results under $OUT/d)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
python3 -c "import irscope, os; print('irscope from', os.path.dirname(irscope.__file__))" | tee -a "$D/versions.txt"
# Each tutorial in a checkout of its own (three folders hold a 06-fused-attention.py); the rows name these paths.
FILES=$(python3 - <<'EOF'
import os, sys
sys.path.insert(0, "benchmarks")
import corpus
for rel in corpus.corpus_files():
    path = os.path.abspath(os.path.join(corpus.CORPUS, rel))
    if rel.startswith("tutorials/"):
        folder = rel.split("/")[1]
        path = corpus.checkout_layout(os.path.join("/tmp/irscope-checkouts", folder, "triton"), path)
    print(path)
EOF
)
echo "$FILES" > "$D/files.txt"
FIDELITY_FIRST_POINT=1 FIDELITY_CHILD_TIMEOUT=300 timeout 570 python3 validation/gpu_fidelity.py $FILES \
    --jobs 14 --out "$D/h100_corpus_fidelity6.md" > "$D/h100_corpus_fidelity6.log" 2>&1
echo "fidelity rc=$?" | tee "$D/rc.txt"
tail -25 "$D/h100_corpus_fidelity6.md"
