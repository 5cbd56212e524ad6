"""Raw facts for the measured mode (issue 17), on the GPU: the device's properties as Triton's driver and
torch report them, the DRAM peak they imply, a large device-to-device copy's achieved bandwidth, and
triton.testing.do_bench on the strided gather (the measured-mode example of docs/commands.md) with its
quantiles. Prints JSON."""
import json
import sys

import torch
import triton
import triton.testing

sys.path.insert(0, "kernels")
import strided  # noqa: E402

props = triton.runtime.driver.active.utils.get_device_properties(0)
tp = torch.cuda.get_device_properties(0)
out = {"triton": triton.__version__, "torch": torch.__version__, "driver_props": props,
       "torch_props": {k: str(getattr(tp, k)) for k in dir(tp) if not k.startswith("_")}}
out["peak_gbps_from_props"] = 2 * props["mem_clock_rate"] * 1e3 * props["mem_bus_width"] / 8 / 1e9
a = torch.empty(1 << 28, dtype=torch.uint8, device="cuda")
b = torch.empty_like(a)
ms = triton.testing.do_bench(lambda: b.copy_(a))
out["copy_256MiB_ms"] = ms
out["copy_gbps"] = 2 * a.numel() / ms / 1e6
n = 4096
for size in (n, 1 << 22):
    x = torch.randn(8 * size, device="cuda")
    q = triton.testing.do_bench(lambda: strided.strided_gather(x), quantiles=[0.5, 0.2, 0.8])
    out[f"strided_n{size}_ms_q50_q20_q80"] = q
print(json.dumps(out, indent=1, default=str))
