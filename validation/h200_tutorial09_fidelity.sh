#!/bin/bash
# Stop 48 (issue 29): tutorial 09 (persistent matmul, host tensor descriptors) of Triton 3.6, offline against
# the real launch, stage by stage (validation/gpu_fidelity.py). Its real run had never been compared: it fails
# at its last line (its profile is read with hatchet, which the GPU machine lacks), and the harness dropped a
# failed run; FIDELITY_AFTER_ERROR=1 compares what it compiled before. Back as $OUT/tutorial09_fidelity.tar.gz.
set -u
D=/tmp/irscope-h200/tutorial09_fidelity
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" > "$D/versions.txt" 2>&1
# the first call gave the real side 300 s, not enough; the second 470 s, and skips irscope on the GPU (whose run
# would take as long again)
PYTHONUNBUFFERED=1 FIDELITY_FIRST_POINT=1 FIDELITY_AFTER_ERROR=1 FIDELITY_SKIP_ON_GPU=1 FIDELITY_CHILD_TIMEOUT=470 \
  timeout 590 python3 \
  validation/gpu_fidelity.py tests/corpus/tutorials/triton-3.6/09-persistent-matmul.py --out "$D/fidelity.md" \
  > "$D/fidelity.log" 2>&1
echo "fidelity rc=$?" >> "$D/rc.txt"
cd /tmp/irscope-h200 && tar czf "${OUT:-/tmp}/tutorial09_fidelity.tar.gz" tutorial09_fidelity
