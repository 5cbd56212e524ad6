#!/bin/sh
# A third H200 call (2026-11-28, issue 33), everything back as $OUT/repro4.tar.gz:
#   rg/  validation/repro_gpu.py over liger's fused linear cross entropy (the writer's storage fix) and FlagGems'
#        only_enable driver (the first call's last list ran out of time in it);
#   uk/  torch.compile's user-defined kernels (the PyTorch tutorial): their reproducers compiled to cubins other
#        than the original's in the second call. Both caches kept, and each kernel's metadata printed side by side.
set -u
R=/tmp/irscope-h200/repro4
mkdir -p "$R/rg" "$R/uk/A" "$R/uk/B" "$R/uk/repros"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$R/versions.txt"
git rev-parse HEAD >> "$R/versions.txt" 2>/dev/null
C=tests/corpus
(PYTHONUNBUFFERED=1 timeout 420 python3 validation/repro_gpu.py $C/drivers/liger_fused_linear_cross_entropy.py \
  $C/drivers/flag_gems_only_enable.py --out "$R/rg" --timeout 200 > "$R/rg.log" 2>&1; echo "rg rc=$?" >> "$R/rc.txt") &
ROOT=$PWD
F=$ROOT/$C/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py
U=$R/uk
(cd "$(dirname "$F")" && TRITON_CACHE_DIR=$U/A timeout 200 python3 "$F" > "$U/original.log" 2>&1
 echo "original rc=$?" >> "$U/rc.txt"
 TRITON_CACHE_DIR=$U/W PYTHONPATH=$ROOT:${PYTHONPATH:-} timeout 200 python3 "$ROOT/benchmarks/repro_roundtrip.py" --write "$F" "$U/repros" \
   > "$U/write.log" 2>&1; echo "write rc=$?" >> "$U/rc.txt"
 for r in "$U"/repros/*.py; do TRITON_CACHE_DIR=$U/B/$(basename "$r" .py) timeout 120 python3 "$r" >> "$U/repros.log" 2>&1; echo "$r rc=$?" >> "$U/rc.txt"; done
 find "$U/A" "$U/B" -name "*.json" ! -name "__grp__*" | sort | while read -r j; do
   echo "== $j"; python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps({k: v for k, v in sorted(d.items()) if k not in ('shared', 'tmem_size')}))" "$j"
 done > "$U/metadata.txt" 2>&1
 find "$U/A" "$U/B" -name "*.cubin" -exec sha256sum {} + > "$U/cubins.txt"
 find "$U/A" "$U/B" -name "*.ptx" | sort | while read -r p; do echo "== $p"; grep -n "^\.file\|\.target\|\.maxnreg\|\.reqntid\|\.maxntid" "$p" | head -8; done > "$U/ptx_heads.txt") &
wait
cat "$R/rc.txt" "$U/rc.txt"
tar czf "${OUT:-/tmp}/repro4.tar.gz" -C /tmp/irscope-h200 repro4
