#!/bin/sh
# A sixth H200 call (2026-11-29, issue 33): reproducers of the kernels the writer refused before, on the GPU.
# FlagGems' kernels read the module `flag_gems.utils.triton_lang_extension` (now made again with what they
# read of it); Gluon tutorial 07 gives its matmuls an aggregate class (`MMAImpl`) whose method reads tutorial 05
# imported by file name (now written whole). validation/repro_gpu.py: each reproducer, run with plain Triton,
# must compile to a cubin the original's run compiled. Needs the corpus wheels:
#   carry [".whl"]; pip install --no-index --no-deps --target /tmp/site .whl/*.whl; export PYTHONPATH=/tmp/site
# FILES=... names other files (the second run: FlagGems use_gems alone, after its StridedBuffer arguments).
# NAME=... names the run's folder (default repro7; stop 46's run of 07 alone: NAME=repro9).
# Back as $OUT/NAME.tar.gz.
set -u
NAME=${NAME:-repro7}
R=/tmp/irscope-h200/$NAME
mkdir -p "$R"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" > "$R/versions.txt"
C=tests/corpus
PYTHONUNBUFFERED=1 PYTHONPATH=$PWD:${PYTHONPATH:-} timeout 540 python3 validation/repro_gpu.py \
  ${FILES:-$C/tutorials/gluon/triton-3.6/07-persistence.py $C/drivers/flag_gems_use_gems.py $C/drivers/flag_gems_only_enable.py} \
  --out "$R" --timeout 250 > "$R/repro_gpu.log" 2>&1
echo "repro_gpu rc=$?" >> "$R/rc.txt"
tar czf "${OUT:-/tmp}/$NAME.tar.gz" -C /tmp/irscope-h200 "$NAME"
