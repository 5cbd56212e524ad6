#!/bin/sh
# The H100 calls of 2026-11-24 (issue 17), on that session's code: measured mode alone on the GPU, one file at
# a time, each call inside the device's 10-minute limit (gpu_measure.py --budget).
#   PART=1: the files whose call-4 failures were fixed offline since (tests/functional/test_validation_measured_call4.py), tutorial
#           02 now measured with the grid its compiled kernel runs with
#   PART=2: FlagGems and tutorial 02 again (the first call's budget did not reach the one, and the other's ncu
#           child stopped at the warmup), torch.compile's compiled_block.py, then corpus files never measured
#           before, small ones first
#   PART=3: the files part 2's budget did not reach; PART=4: more of the corpus
# Start each call with the corpus's wheels (carried as .whl, as the device's README says):
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
#     .whl/*.whl && export PYTHONPATH=/tmp/site
#   sh validation/h100_measure3.sh     (results under $OUT/d, packed into $OUT/measure3.tar.gz)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
C=tests/corpus
P=${PART:-1}
case $P in
  1) FILES="kernels/strided.py $C/tutorials/triton-3.6/02-fused-softmax.py $C/snippets/rocm-triton/rmsnorm.py
            $C/tutorials/triton-3.6/05-layer-norm.py $C/drivers/liger_layer_norm.py $C/drivers/flag_gems_use_gems.py" ;;
  2) FILES="$C/drivers/flag_gems_use_gems.py $C/tutorials/triton-3.6/02-fused-softmax.py kernels/compiled_block.py
            $C/snippets/gpu-mode-lectures/vector_add.py $C/snippets/gpu-mode-lectures/triton_square.py
            $C/snippets/rocm-triton/softmax.py $C/tutorials/triton-3.6/04-low-memory-dropout.py $C/drivers/liger_rope.py
            $C/drivers/liger_swiglu_mlp.py $C/drivers/liger_cross_entropy.py $C/drivers/fla_rms_norm.py
            $C/drivers/flag_gems_only_enable.py $C/snippets/rocm-triton/hbm-bw-test.py" ;;
  3) FILES="$C/snippets/gpu-mode-lectures/vector_add.py $C/snippets/gpu-mode-lectures/triton_square.py
            $C/snippets/rocm-triton/softmax.py $C/tutorials/triton-3.6/04-low-memory-dropout.py $C/drivers/liger_rope.py
            $C/drivers/liger_swiglu_mlp.py $C/drivers/fla_rms_norm.py $C/drivers/liger_cross_entropy.py
            $C/drivers/flag_gems_only_enable.py $C/snippets/rocm-triton/hbm-bw-test.py" ;;
  *) FILES="$C/tutorials/triton-3.6/11-programmatic-dependent-launch.py $C/drivers/fla_fused_recurrent_gla.py
            $C/drivers/fla_chunk_gla.py $C/drivers/fla_gated_delta_rule.py $C/drivers/liger_fused_linear_cross_entropy.py
            $C/tutorials/triton-3.6/08-grouped-gemm.py $C/tutorials/triton-3.6/03-matrix-multiplication.py" ;;
esac
# shellcheck disable=SC2086
python3 validation/gpu_measure.py --out "$D/measure_$P" --budget 510 --timeout 240 $FILES > "$D/measure_$P.log" 2>&1
echo "measure_$P rc=$?" >> "$D/rc.txt"
python3 validation/gpu_measure.py --rebuild "$D/measure_$P" > /dev/null 2>&1
cat "$D/rc.txt"; tail -30 "$D/measure_$P.log" | cut -c1-600
(cd "$D/measure_$P" && tar czf ncu_pages.tar.gz ncu_pages && rm -rf ncu_pages) 2>/dev/null
tar czf "$(dirname "$D")/measure3.tar.gz" --exclude="*.ncu-rep" -C "$(dirname "$D")" d
