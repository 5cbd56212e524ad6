#!/bin/sh
# What Inductor generates for a torch.compile file on the H100 (GPU visible, plain python) and under irscope's
# virtual GPU (GPU hidden, a CUDA build of torch): both caches' generated modules, to diff by hand.
#   sh validation/probes/inductor_sources.sh FILE NAME      (results under $OUT/NAME)
set -u
F=$1; N=$2; R=${OUT:-/tmp}/$N
mkdir -p "$R"
rm -rf /tmp/ind_real /tmp/ind_off
(cd /tmp && TORCHINDUCTOR_CACHE_DIR=/tmp/ind_real TORCHINDUCTOR_COMPILE_THREADS=1 timeout 150 python3 "$OLDPWD/$F" > "$R/real.log" 2>&1)
(cd /tmp && CUDA_VISIBLE_DEVICES= TORCHINDUCTOR_CACHE_DIR=/tmp/ind_off PYTHONPATH="$OLDPWD:${PYTHONPATH:-}" timeout 150 python3 -m irscope report "$OLDPWD/$F" --json > "$R/offline.json" 2> "$R/offline.log")
for side in real off; do
    mkdir -p "$R/$side"
    find /tmp/ind_$side -name '*.py' | while read -r p; do cp "$p" "$R/$side/$(basename "$(dirname "$p")")_$(basename "$p")"; done
done
ls "$R/real" "$R/off" | head -40
