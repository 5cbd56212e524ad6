#!/bin/bash
# Stop 49 (issue 29): tutorial 09 (persistent matmul) of Triton 3.6, its real side recorded on the GPU in one
# device call (validation/gpu_fidelity.py, FIDELITY_REAL_ONLY), to be compared with irscope's offline compile
# anywhere afterwards. Its real run takes most of a call (each autotuned kernel compiles every config), so the
# two sides no longer share one. The file runs from /tmp/t09/ and Triton's path is recorded: the offline side
# must see both at the same paths (the IR's debug locations hold them).
set -u
D="${OUT:-/tmp}"
mkdir -p /tmp/t09
cp tests/corpus/tutorials/triton-3.6/09-persistent-matmul.py /tmp/t09/
python3 -c "import sys, triton, torch; print('python', sys.version.split()[0], 'triton', triton.__version__, triton.__file__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" > "$D/versions.txt" 2>&1
PYTHONUNBUFFERED=1 FIDELITY_FIRST_POINT=1 FIDELITY_AFTER_ERROR=1 FIDELITY_CHILD_TIMEOUT=560 \
  FIDELITY_REAL_RECORD="$D/t09_real.json.xz" FIDELITY_REAL_ONLY=1 timeout 585 python3 \
  validation/gpu_fidelity.py /tmp/t09/09-persistent-matmul.py --out "$D/record.md" > "$D/record.log" 2>&1
echo "record rc=$?" >> "$D/rc.txt"
ls -la "$D" >> "$D/rc.txt"
