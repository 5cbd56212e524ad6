#!/bin/bash
# An H200 call (2026-11-29, issue 31): Triton 3.6's Gluon tutorials that an H100/H200 runs, offline against the
# real launch, stage by stage (validation/gpu_fidelity.py, as validation/h100_session6.sh's gluon part). On
# 2026-11-27 the offline side did not reach 02's 30, 05's 13 and 07's 8 compilations (8 GB random inputs made
# on the CPU; 07's aggregates compiled with postponed annotations); both fixed. Back as $OUT/gluon_fidelity.tar.gz.
set -u
D=/tmp/irscope-h200/gluon_fidelity
mkdir -p "$D"
python3 -c "import triton, torch, os; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" > "$D/versions.txt" 2>&1
G=tests/corpus/tutorials/gluon/triton-3.6
PYTHONUNBUFFERED=1 FIDELITY_FIRST_POINT=1 FIDELITY_CHILD_TIMEOUT=240 timeout 540 python3 validation/gpu_fidelity.py \
  kernels/gluon_copy.py $G/01-intro.py $G/02-layouts.py $G/03-async-copy.py $G/04-tma.py $G/05-wgmma.py \
  $G/07-persistence.py $G/08-warp-specialization.py --jobs 4 --out "$D/fidelity.md" > "$D/fidelity.log" 2>&1
echo "fidelity rc=$?" >> "$D/rc.txt"
cd /tmp/irscope-h200 && tar czf "${OUT:-/tmp}/gluon_fidelity.tar.gz" gluon_fidelity
