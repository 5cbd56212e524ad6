#!/bin/sh
# The second H100 call of stop 28: (1) the torch.compile files' graphs under the virtual GPU on a CUDA build of
# torch with the GPU hidden (validation/probes/inductor_cpu_fallback.py: does each graph take the GPU path?),
# after the fix to FakeTensor's GPU-context allocation; (2) fidelity again for the files the first call
# (h100_corpus6.sh) did not finish: the torch.compile snippets, compiled_block.py, fla_chunk_gla.py and the
# three copies of tutorial 06, fewer at once. From the repository root, with the corpus wheels installed:
#   sh validation/h100_corpus6b.sh        (results under $OUT/d)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
for f in tests/corpus/snippets/gpu-mode-lectures/triton_square.py \
         tests/corpus/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py kernels/compiled_block.py; do
    echo "== $f" >> "$D/probe.txt"
    CUDA_VISIBLE_DEVICES= OUT="$D" timeout 60 python3 validation/probes/inductor_cpu_fallback.py "$f" as-is >> "$D/probe.txt" 2>&1
done
cat "$D/probe.txt"
FILES=$(python3 - <<'PY'
import os, sys
sys.path.insert(0, "benchmarks")
import corpus
for rel in corpus.corpus_files():
    path = os.path.abspath(os.path.join(corpus.CORPUS, rel))
    if rel.startswith("tutorials/"):
        if "06-fused-attention" not in rel:
            continue
        path = corpus.checkout_layout(os.path.join("/tmp/irscope-checkouts", rel.split("/")[1], "triton"), path)
    elif not any(s in rel for s in ("triton_square", "torch_compile_user", "fla_chunk_gla")):
        continue
    print(path)
print(os.path.abspath("kernels/compiled_block.py"))
PY
)
echo "$FILES" > "$D/files.txt"
FIDELITY_FIRST_POINT=1 FIDELITY_CHILD_TIMEOUT=400 timeout 430 python3 validation/gpu_fidelity.py $FILES \
    --jobs 7 --out "$D/h100_corpus_fidelity6b.md" > "$D/h100_corpus_fidelity6b.log" 2>&1
echo "fidelity rc=$?" | tee "$D/rc.txt"
