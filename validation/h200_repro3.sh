#!/bin/sh
# A second H200 call (2026-11-28, issue 33): `validation/repro_gpu.py` again over the corpus files whose
# reproducers did not all match in the first (h200_repro2.sh), on the writer's two fixes (an allocator set
# before the launch; a parameter default that reads a global of its own name), three lists side by side.
# Everything comes back as $OUT/repro3.tar.gz. From the repository root, with the wheels of h200_repro2.sh.
set -u
D=/tmp/irscope-h200/repro3
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
git rev-parse HEAD >> "$D/versions.txt" 2>/dev/null
C=tests/corpus
T=$C/tutorials/triton-3.6
run() {  # NAME TIMEOUT FILE...
  name=$1; limit=$2; shift 2
  PYTHONUNBUFFERED=1 timeout ${BUDGET:-500} python3 validation/repro_gpu.py "$@" --out "$D/$name" --timeout "$limit" \
    > "$D/$name.log" 2>&1; echo "$name rc=$?" >> "$D/rc.txt"
}
run s1 280 $T/09-persistent-matmul.py &
run s2 150 $T/08-grouped-gemm.py $T/07-extern-functions.py $C/drivers/jvp_flash_attention_fwd_jvp.py &
run s3 150 $C/drivers/liger_fused_linear_cross_entropy.py \
  $C/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py &
wait
cat "$D/rc.txt"
tar czf "${OUT:-/tmp}/repro3.tar.gz" -C /tmp/irscope-h200 repro3
