"""Does Triton's JIT tell apart two classes made by one factory, given to a kernel as a constexpr? Their `str()`
is the same (module and qualified name; a factory renaming `__name__` does not change it), and the JIT's cache
key is a string of the specialization. Run on a GPU with plain Triton: prints what each launch wrote and how
many kernels the JIT compiled. (Stop 46; Gluon tutorial 07 makes its grouped scheduler this way.)"""

import torch
import triton
import triton.language as tl
from triton.language.core import _aggregate as aggregate


def Scaler(FACTOR):
    FACTOR = tl.constexpr(FACTOR)

    @aggregate
    class ScalerImpl:
        @triton.jit
        def apply(x):
            return x * FACTOR

    ScalerImpl.__name__ = f"Scaler({FACTOR.value})"
    return ScalerImpl


@triton.jit
def scale_kernel(src, dst, n, Impl: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(dst + offsets, Impl.apply(tl.load(src + offsets, mask=mask)), mask=mask)


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
