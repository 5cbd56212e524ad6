#!/bin/sh
# The H100 calls of 2026-11-24, third session (issue 17): measured mode on the rows fixed offline since the
# fourth run, and triton_square.py, which no call finished, with each step of measuring said as it ends.
#   PART=A: triton_square.py alone (its sweep calls torch.compile), its measuring steps kept
#           (json/*.stderr.txt); then, in what is left of the call, tutorial 09
#   PART=B: after call A (its coalescing prediction ran 512 programs of each of triton_square's twelve
#           compilations: 6 to 59 s each), triton_square.py again with the default sample for grids too large to
#           predict whole; the cp.async row fixed offline (fla_gated_delta_rule's kernel_h line 247); fla's fused
#           recurrent backward (lines 339/340, open)
#   PART=C: after call B (triton_square's square_kernel rows agree; its two Inductor kernels of one name and one
#           specialization were not told apart by ncu's child): triton_square.py again, kernels told apart by
#           their source too
#   PART=D: after the loads made in two layouts inside a loop are counted in both (fla's fused recurrent
#           backward, lines 339/340, found offline from call B's pages): that file, and the files whose rows
#           rest on the two-layout rule (Liger's RoPE) or have loops of several layouts (fla's chunk GLA)
# Start each call with the corpus's wheels (carried as .whl, as the device's README says):
#   tar xf .device/wheels.tar && python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
#     wheels/*.whl && export PYTHONPATH=/tmp/site
#   PART=A sh validation/h100_measure5.sh     (results under $OUT/d, packed into $OUT/measure5.tar.gz)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
C=tests/corpus
T=$C/tutorials/triton-3.6
P=${PART:-A}
case $P in
  A) FILES="$C/snippets/gpu-mode-lectures/triton_square.py $T/09-persistent-matmul.py"; JOBS=1; TIMEOUT=420 ;;
  B) FILES="$C/snippets/gpu-mode-lectures/triton_square.py $C/drivers/fla_gated_delta_rule.py
            $C/drivers/fla_fused_recurrent_gla.py"; JOBS=2; TIMEOUT=420 ;;
  C) FILES="$C/snippets/gpu-mode-lectures/triton_square.py"; JOBS=1; TIMEOUT=480 ;;
  D) FILES="$C/drivers/fla_fused_recurrent_gla.py $C/drivers/liger_rope.py $C/drivers/fla_chunk_gla.py"
     JOBS=2; TIMEOUT=420 ;;
  *) echo "PART is A, B, C or D"; exit 2 ;;
esac
# shellcheck disable=SC2086
python3 validation/gpu_measure.py --out "$D/measure_$P" --budget 540 --timeout $TIMEOUT --jobs $JOBS $FILES \
  > "$D/measure_$P.log" 2>&1
echo "measure_$P rc=$?" >> "$D/rc.txt"
cat "$D/rc.txt"; grep '^#' "$D/measure_$P.log"; tail -30 "$D/measure_$P.log" | cut -c1-600
for f in "$D/measure_$P"/json/*.stderr.txt; do echo "== $f"; grep "irscope: measuring" "$f" | cut -c1-300; done
(cd "$D/measure_$P" && tar czf ncu_pages.tar.gz ncu_pages && rm -rf ncu_pages) 2>/dev/null
tar czf "$(dirname "$D")/measure5.tar.gz" --exclude="*.ncu-rep" -C "$(dirname "$D")" d
