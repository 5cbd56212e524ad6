#!/bin/sh
# One H100 call (issue 34): Nsight Compute's Launch Statistics and Occupancy sections, the DRAM bytes and the
# duration of every launch of the examples, the grid probe and three Triton tutorials (tutorial 03's autotuning
# took four minutes under ncu in a first call, whose files did not come back: more than 8); irscope's side is made
# offline (validation/ncu_launch_stats.py predict, Triton 3.6 as here) and compared with `compare`.
# From the repository root: sh validation/h100_launch_stats.sh
set -u
D=${OUT:-/tmp/irscope-h100}/launch_stats
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
ncu --version >> "$D/versions.txt" 2>&1
T=tests/corpus/tutorials/triton-3.6
PYTHONUNBUFFERED=1 timeout 560 python3 validation/ncu_launch_stats.py measure --out "$D" --launch-count 200 \
  validation/probes/grid_waves.py kernels/*.py $T/01-vector-add.py $T/02-fused-softmax.py $T/05-layer-norm.py \
  2>&1 | tee "$D/measure.log"
# at most 8 files come back from the machine: one archive
tar czf "${OUT:-/tmp/irscope-h100}/launch_stats.tgz" -C "${OUT:-/tmp/irscope-h100}" launch_stats && rm -rf "$D"
