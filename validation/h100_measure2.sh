#!/bin/sh
# The H100 call of 2026-11-23's second session (issues 15, 17, 18): kernels/bank_conflict.py as it is now
# (bank conflicts per instruction, fidelity), then measured mode, alone on the GPU, on bank_conflict.py,
# matmul.py (bank conflicts now among the agreements) and corpus files nobody here wrote, a torch.compile
# tutorial included (ncu's child re-finds Inductor's kernels in a fresh cache). Part 2 (PART=2) measures
# Inductor's compiled_block.py and more of the corpus.
#   sh validation/h100_measure2.sh        (results under $OUT/d, packed into $OUT/measure2.tar.gz)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
C=tests/corpus
if [ "${PART:-1}" = 4 ]; then
  # part 4, on the session's final code (one tokenizer per dialect): strided.py, then more of the corpus
  timeout 500 python3 validation/gpu_measure.py --out "$D/measure_d" kernels/strided.py \
    $C/tutorials/triton-3.6/02-fused-softmax.py $C/snippets/rocm-triton/rmsnorm.py \
    $C/tutorials/triton-3.6/05-layer-norm.py $C/drivers/liger_layer_norm.py $C/drivers/flag_gems_use_gems.py \
    > "$D/measure_d.log" 2>&1; echo "measure_d rc=$?" >> "$D/rc.txt"
elif [ "${PART:-1}" = 3 ]; then
  # part 3: the cp.async probe (one thing varied per launch), then measured mode on more of the corpus
  timeout 150 python3 validation/ncu_bank_conflicts.py validation/probes/cp_async_probe.py --out "$D/probe" > "$D/probe.log" 2>&1; echo "probe rc=$?" >> "$D/rc.txt"
  timeout 380 python3 validation/gpu_measure.py --out "$D/measure_c" \
    $C/snippets/gpu-mode-lectures/triton_fused_add_mul_activation.py $C/tutorials/triton-3.6/02-fused-softmax.py \
    $C/snippets/rocm-triton/rmsnorm.py $C/tutorials/triton-3.6/05-layer-norm.py $C/drivers/flag_gems_use_gems.py \
    $C/drivers/liger_layer_norm.py kernels/compiled_block.py > "$D/measure_c.log" 2>&1; echo "measure_c rc=$?" >> "$D/rc.txt"
elif [ "${PART:-1}" = 1 ]; then
  # fidelity compiles and launches but never profiles: beside the one ncu, before any timing
  (timeout 200 python3 validation/gpu_fidelity.py kernels/bank_conflict.py --out "$D/fidelity_bank.md" > "$D/fidelity_bank.log" 2>&1; echo "fidelity_bank rc=$?" >> "$D/rc.txt") &
  timeout 150 python3 validation/ncu_bank_conflicts.py kernels/bank_conflict.py --out "$D/bank" > "$D/bank.log" 2>&1; echo "bank rc=$?" >> "$D/rc.txt"
  timeout 60 python3 validation/ncu_sectors.py kernels/bank_conflict.py --out "$D/ncu_raw_bank.csv" > "$D/ncu_sectors_bank.log" 2>&1; echo "ncu_sectors_bank rc=$?" >> "$D/rc.txt"
  wait
  timeout 300 python3 validation/gpu_measure.py --out "$D/measure" kernels/bank_conflict.py kernels/matmul.py \
    $C/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py $C/drivers/liger_rms_norm.py \
    $C/snippets/gpu-mode-lectures/triton_fused_add_mul_activation.py $C/tutorials/triton-3.6/02-fused-softmax.py \
    > "$D/measure.log" 2>&1; echo "measure rc=$?" >> "$D/rc.txt"
else
  # part 2: the compile-side fidelity (with the driver's register count) of two corpus files beside one more
  # Nsight Compute profile of bank_conflict.py (are its cp.async counts the same from run to run?), then
  # measured mode alone on the GPU
  (timeout 200 python3 validation/gpu_fidelity.py $C/snippets/gpu-mode-lectures/triton_fused_add_mul_activation.py \
    $C/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py --out "$D/fidelity_corpus.md" \
    > "$D/fidelity_corpus.log" 2>&1; echo "fidelity_corpus rc=$?" >> "$D/rc.txt") &
  timeout 150 python3 validation/ncu_bank_conflicts.py kernels/bank_conflict.py --out "$D/bank_again" > "$D/bank_again.log" 2>&1; echo "bank_again rc=$?" >> "$D/rc.txt"
  wait
  timeout 420 python3 validation/gpu_measure.py --out "$D/measure_b" \
    $C/snippets/pytorch-tutorials/torch_compile_user_defined_triton_kernel_tutorial.py \
    $C/snippets/gpu-mode-lectures/triton_fused_add_mul_activation.py $C/tutorials/triton-3.6/02-fused-softmax.py \
    $C/snippets/rocm-triton/rmsnorm.py $C/tutorials/triton-3.6/05-layer-norm.py kernels/compiled_block.py \
    $C/drivers/flag_gems_use_gems.py > "$D/measure_b.log" 2>&1; echo "measure_b rc=$?" >> "$D/rc.txt"
fi
cat "$D/rc.txt"; tail -12 "$D"/bank.log "$D"/measure*.log "$D"/fidelity_bank.log 2>/dev/null | cut -c1-400
tar czf "$(dirname "$D")/measure2.tar.gz" --exclude="*.ncu-rep" -C "$(dirname "$D")" d
