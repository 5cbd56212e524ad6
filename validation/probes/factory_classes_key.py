"""Does Triton's JIT tell apart two classes made by one factory, given to a kernel as a constexpr? Their `str()`
is the same (module and qualified name; a factory renaming `__name__` does not change it), and the JIT's cache
key is a string of the specialization. Run on a GPU with plain Triton: prints what each launch wrote and how
many kernels the JIT compiled. (Stop 46; Gluon tutorial 07 makes its grouped scheduler this way.) The factory
and the kernel are the test fixture's, tests/fixtures/factory_classes.py."""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures"))
from factory_classes import Scaler, scale_kernel  # noqa: E402

if __name__ == "__main__":
    x = torch.ones(1024, device="cuda")
    four, five = Scaler(4.0), Scaler(5.0)
    print("str equal:", str(four) == str(five), "| same class:", four is five)
    for impl in (four, five):
        y = torch.zeros_like(x)
        scale_kernel[(2,)](x, y, 1024, impl, BLOCK=512)
        torch.cuda.synchronize()
        print(impl.__name__, "wrote", y[0].item())
    device = torch.cuda.current_device()
    print("kernels compiled:", len(scale_kernel.device_caches[device][0]))
