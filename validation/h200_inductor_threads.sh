#!/bin/bash
# An H200 call (2026-11-29, issue 29): with one compile thread (TORCHINDUCTOR_COMPILE_THREADS=1) irscope's report
# on a GPU showed one config per Inductor kernel of kernels/compiled_block.py where the pool gave three
# (validation/data/h200_inductor_capture); with a fresh Inductor cache the probe of the call before this one
# (validation/data/h200_held_memory) captured all three. Here, for one thread and for the default pool, with
# Inductor's cache first fresh and then warm: what plain Triton compiles (the cubins written into a fresh Triton
# cache, the compile workers' included) against what irscope's capture keeps (validation/inductor_launch_probe.py).
# Then benchmarks/coverage.py --gpu-only on Gluon tutorial 02 (plain Triton's compilations against irscope on
# the GPU). Back as $OUT/inductor_threads.tar.gz.
set -u
U=/tmp/irscope-h200/inductor_threads
mkdir -p "$U"
cubins() { find "$1" -name '*.cubin' 2>/dev/null | sed 's|.*/||' | sort | uniq -c; }
for threads in 1 default; do
  env_threads="TORCHINDUCTOR_COMPILE_THREADS=$threads"
  [ "$threads" = default ] && env_threads="IRSCOPE_UNUSED=1"
  I=$U/inductor_$threads
  env $env_threads TORCHINDUCTOR_CACHE_DIR=$I TRITON_CACHE_DIR=$U/t_plain_cold_$threads timeout 120 python3 kernels/compiled_block.py > "$U/plain_cold_$threads.out" 2>&1
  echo "== plain, Inductor cache fresh, threads $threads (rc $?)" >> "$U/summary.txt"; cubins $U/t_plain_cold_$threads >> "$U/summary.txt"
  env $env_threads TORCHINDUCTOR_CACHE_DIR=$I TRITON_CACHE_DIR=$U/t_irscope_warm_$threads timeout 120 python3 validation/inductor_launch_probe.py kernels/compiled_block.py > "$U/irscope_warm_$threads.txt" 2>&1
  echo "== irscope, Inductor cache warm, threads $threads (rc $?)" >> "$U/summary.txt"; grep '^launch' "$U/irscope_warm_$threads.txt" >> "$U/summary.txt"
  env $env_threads TORCHINDUCTOR_CACHE_DIR=$I TRITON_CACHE_DIR=$U/t_plain_warm_$threads timeout 120 python3 kernels/compiled_block.py > "$U/plain_warm_$threads.out" 2>&1
  echo "== plain, Inductor cache warm, threads $threads (rc $?)" >> "$U/summary.txt"; cubins $U/t_plain_warm_$threads >> "$U/summary.txt"
done
timeout 300 python3 benchmarks/coverage.py --files tutorials/gluon/triton-3.6/02-layouts.py --gpu-only --timeout 280 --out "$U/coverage02" > "$U/coverage02.log" 2>&1
echo "coverage 02 rc=$?" >> "$U/summary.txt"
rm -rf "$U"/inductor_* "$U"/t_*
cd /tmp/irscope-h200 && tar czf "${OUT:-/tmp}/inductor_threads.tar.gz" inductor_threads
