#!/bin/sh
# Raw Nsight Compute source-level data for the measured mode (issue 17): for each example file, every Triton
# launch profiled (at most 8 launches; the source-counter, stall, memory-table, launch, occupancy and
# speed-of-light sections) and the source imported, then printed per SASS instruction
# (and per CUDA-level source line) as CSV. These files are what irscope's ncu parsing is tested on without
# a GPU. Needs a GPU and ncu; run from the repository root:   sh validation/ncu_source_raw.sh OUTDIR
set -u
D=${1:-/tmp/ncu-source}
mkdir -p "$D"
ncu --version > "$D/ncu_version.txt" 2>&1
ncu --list-sections > "$D/ncu_sections.txt" 2>&1
ncu --query-metrics --chip gh100 > "$D/ncu_metrics_gh100.txt" 2>&1
for pair in strided:strided_gather transpose:transpose softmax:softmax add:add attention:attention_fwd matmul:matmul; do
  f=${pair%%:*}; k=${pair#*:}_kernel
  timeout 60 ncu -c 8 -k "regex:^$k\$" --section SourceCounters --section WarpStateStats --section MemoryWorkloadAnalysis_Tables \
    --section LaunchStats --section Occupancy --section SpeedOfLight --import-source yes --export "$D/$f" -f python3 "kernels/$f.py" > "$D/$f.profile.log" 2>&1
  echo "$f profile rc=$?"
  for p in sass cuda,sass ptx; do
    n=$(echo "$p" | tr ',' '_')
    timeout 60 ncu --import "$D/$f.ncu-rep" --page source --csv --print-source "$p" > "$D/$f.source_$n.csv" 2>&1
    echo "$f source $p rc=$? lines=$(wc -l < "$D/$f.source_$n.csv")"
  done
  timeout 60 ncu --import "$D/$f.ncu-rep" --page details --csv > "$D/$f.details.csv" 2>&1
  timeout 60 ncu --import "$D/$f.ncu-rep" --page raw --csv > "$D/$f.raw.csv" 2>&1
done
