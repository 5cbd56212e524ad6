#!/bin/sh
# One H200 call (2026-11-28, issue 33): `validation/repro_gpu.py` over the corpus files written for Triton 3.6
# that the first calls (validation/data/h200_repro) did not cover, four lists side by side, each in $OUT/sN.
# Left out: adasplash, tutorial 06 and efficient-cross-entropy (as written each runs past the call's minutes on
# a GPU), tutorial 10 (needs sm_100), triton-puzzles-lite (raises on Triton 3.6 as written).
# From the repository root, the corpus libraries the image lacks carried as wheels (.whl):
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
#     .whl/*.whl && export PYTHONPATH=/tmp/site && sh validation/h200_repro2.sh
set -u
D=${OUT:-/tmp/irscope-h200}/repro2
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
C=tests/corpus
T=$C/tutorials/triton-3.6
run() {  # NAME FILE...
  name=$1; shift
  PYTHONUNBUFFERED=1 timeout ${BUDGET:-530} python3 validation/repro_gpu.py "$@" --out "$D/$name" --timeout ${TIMEOUT:-150} \
    > "$D/$name.log" 2>&1; echo "$name rc=$?" >> "$D/rc.txt"
}
run s1 $T/09-persistent-matmul.py $T/03-matrix-multiplication.py $T/08-grouped-gemm.py &
run s2 $C/drivers/fla_gated_delta_rule.py $C/drivers/mingru_stack.py $C/community/fa2-custom-mask/fa2_original.py \
  $C/community/applied-ai/stay_attention.py &
run s3 $C/drivers/liger_fused_linear_cross_entropy.py $C/drivers/liger_cross_entropy.py $C/drivers/liger_swiglu_mlp.py \
  $C/drivers/gemlite_a16w8.py $C/drivers/jvp_flash_attention_fwd_jvp.py $C/drivers/flag_gems_use_gems.py &
run s4 $C/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py \
  $C/snippets/gpu-mode-lectures/triton_square.py $C/snippets/rocm-triton/hbm-bw-test.py \
  $C/community/applied-ai/splitk_dequant_gemm.py $T/07-extern-functions.py \
  $C/snippets/gpu-mode-lectures/triton_fused_add_mul_activation.py $C/snippets/rocm-triton/empty.py \
  $C/snippets/rocm-triton/softmax.py $T/11-programmatic-dependent-launch.py $C/snippets/rocm-triton/rmsnorm.py \
  $C/drivers/flag_gems_only_enable.py &
wait
cat "$D/rc.txt"
for s in s1 s2 s3 s4; do tail -n 4 "$D/$s.log"; done
