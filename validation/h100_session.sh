#!/bin/sh
# One H100 call for the validations that need a GPU (issues 14, 17, 18). From the repository root:
#   sh validation/h100_session.sh        (everything under $OUT/d, packed into $OUT/session.tar.gz)
set -u
D=${OUT:-/tmp/irscope-h100}/d
mkdir -p "$D"
python3 -c "import triton, torch; print('triton', triton.__version__, 'torch', torch.__version__, torch.cuda.get_device_name(0))" | tee "$D/versions.txt"
nvidia-smi --query-gpu=name,driver_version,clocks.max.mem,clocks.max.sm --format=csv >> "$D/versions.txt" 2>&1
# A: off the profiler, in the background, each in processes of its own.
(timeout 330 python3 validation/gpu_fidelity.py --out "$D/h100_kernels_fidelity.md" > "$D/h100_kernels_fidelity.log" 2>&1; echo "fidelity rc=$?" >> "$D/rc.txt") &
(timeout 330 python3 validation/gpu_inductor.py --out "$D/inductor" > "$D/inductor.log" 2>&1; echo "inductor rc=$?" >> "$D/rc.txt") &
(timeout 200 python3 validation/gpu_occupancy.py --collect "$D/h100_occupancy.json" > "$D/occupancy.log" 2>&1; echo "occupancy rc=$?" >> "$D/rc.txt") &
# B: Nsight Compute: sectors per request for every example (raw CSV), then source-level raw data.
timeout 240 python3 validation/ncu_sectors.py --out "$D/ncu_raw.csv" > "$D/ncu_sectors.log" 2>&1; echo "ncu_sectors rc=$?" >> "$D/rc.txt"
timeout 220 sh validation/ncu_source_raw.sh "$D/ncu_source" > "$D/ncu_source.log" 2>&1; echo "ncu_source rc=$?" >> "$D/rc.txt"
wait
# C: timing alone on the GPU.
timeout 60 python3 validation/timing_probe.py > "$D/timing_probe.json" 2> "$D/timing_probe.err"; echo "timing rc=$?" >> "$D/rc.txt"
cat "$D/rc.txt"; tail -3 "$D"/*.log
tar czf "$(dirname "$D")/session.tar.gz" --exclude="*.ncu-rep" -C "$(dirname "$D")" d
ls -la "$(dirname "$D")"
