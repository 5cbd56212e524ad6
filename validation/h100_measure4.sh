#!/bin/sh
# The H100 calls of 2026-11-24, second session (issue 17): measured mode on the corpus files no call had
# reached, and the files whose failures were fixed offline since (Liger RoPE's two-layout loads, tutorial
# 02's zero-filled copies), each call inside the device's 10-minute limit (gpu_measure.py --budget).
#   PART=A: the small files; PART=B: tutorials 08 and 11, the fla drivers, Liger's fused linear cross entropy;
#   PART=C: tutorials 03, 06 and 09 (autotuned) and triton_square.py (its sweep calls torch.compile)
#   PART=D: on the final code (one ncu run per file, offline fixes of calls A-C): the rows fixed offline, and
#           the files that took longest (06: 390 s) or did not finish (triton_square) with one ncu run a file
#   PART=E: the final code (one ncu run per kernel; the bank-model fixes of call B's rows): triton_square,
#           compiled_block, the fla drivers, Liger RoPE
# Start each call with the corpus's wheels (carried as .whl, as the device's README says):
#   tar xf .device/wheels.tar && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
#     wheels/*.whl && export PYTHONPATH=/tmp/site   (.device/wheels.tar: the corpus wheels but matplotlib's)
#   PART=A sh validation/h100_measure4.sh     (results under $OUT/d, packed into $OUT/measure4.tar.gz)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
C=tests/corpus
T=$C/tutorials/triton-3.6
P=${PART:-A}
JOBS=2
case $P in
  A) FILES="$C/drivers/liger_rope.py $C/drivers/liger_swiglu_mlp.py $C/drivers/fla_rms_norm.py
            $C/drivers/liger_cross_entropy.py $C/drivers/flag_gems_only_enable.py $C/snippets/rocm-triton/hbm-bw-test.py
            $T/02-fused-softmax.py $C/snippets/rocm-triton/empty.py $T/07-extern-functions.py $T/10-block-scaled-matmul.py" ;;
  B) FILES="$T/11-programmatic-dependent-launch.py $C/drivers/fla_fused_recurrent_gla.py $C/drivers/fla_chunk_gla.py
            $C/drivers/fla_gated_delta_rule.py $C/drivers/liger_fused_linear_cross_entropy.py $T/08-grouped-gemm.py"
     JOBS=3 ;;
  C) FILES="$T/03-matrix-multiplication.py $T/06-fused-attention.py $T/09-persistent-matmul.py
            $C/snippets/gpu-mode-lectures/triton_square.py"
     JOBS=4 ;;
  D) FILES="kernels/compiled_block.py $C/drivers/liger_cross_entropy.py $C/drivers/fla_gated_delta_rule.py
            $T/09-persistent-matmul.py $T/06-fused-attention.py $C/snippets/gpu-mode-lectures/triton_square.py"
     JOBS=3 ;;
  E) FILES="$C/snippets/gpu-mode-lectures/triton_square.py kernels/compiled_block.py $C/drivers/fla_chunk_gla.py
            $C/drivers/fla_gated_delta_rule.py $C/drivers/liger_rope.py"
     JOBS=3 ;;
  *) echo "PART is A, B, C, D or E"; exit 2 ;;
esac
# shellcheck disable=SC2086
python3 validation/gpu_measure.py --out "$D/measure_$P" --budget 540 --timeout 420 --jobs $JOBS $FILES \
  > "$D/measure_$P.log" 2>&1
echo "measure_$P rc=$?" >> "$D/rc.txt"
cat "$D/rc.txt"; grep '^#' "$D/measure_$P.log"; tail -30 "$D/measure_$P.log" | cut -c1-600
(cd "$D/measure_$P" && tar czf ncu_pages.tar.gz ncu_pages && rm -rf ncu_pages) 2>/dev/null
tar czf "$(dirname "$D")/measure4.tar.gz" --exclude="*.ncu-rep" -C "$(dirname "$D")" d
