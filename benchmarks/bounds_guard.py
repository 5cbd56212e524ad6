"""What checking every access for out-of-bounds lanes costs a launch run whole in Triton's interpreter: the same
launches timed with and without `bounds_guard` (engine/triton_compat/bounds.py), side by side in one run.

    python benchmarks/bounds_guard.py [--repeat 3]

Kernels: a vector add (one load pair and a store per program, many small programs), a row softmax (wide rows,
few programs), a blocked matmul (loads in a loop) and a pointer-table gather (every address outside the
launch's arguments: the guard looks up the live tensors once per launch). Prints the best of the repeats, each
way, and the ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.runtime.jit import JITFunction  # noqa: E402

from irscope.engine.triton_compat.bounds import bounds_guard  # noqa: E402
from irscope.engine.triton_compat.interpreter import kernel_parameters  # noqa: E402
from irscope.engine.triton_compat.lang_patch import (  # noqa: E402
    call_interpreted,
    grid_executor_patches_once,
    interpreter_for,
)


@triton.jit
def add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(
        out + offs,
        tl.load(x + offs, mask=offs < n) + tl.load(y + offs, mask=offs < n),
        mask=offs < n,
    )


@triton.jit
def softmax(x, out, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    v = tl.load(x + row * cols + offs, mask=offs < cols, other=-float("inf"))
    e = tl.exp(v - tl.max(v, 0))
    tl.store(out + row * cols + offs, e / tl.sum(e, 0), mask=offs < cols)


@triton.jit
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        acc += tl.dot(
            tl.load(a + rm[:, None] * K + rk[None, :]), tl.load(b + rk[:, None] * N + rn[None, :])
        )
    tl.store(c + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def gather(table, out, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = tl.load(table + row).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(out + row * BLOCK + offs, tl.load(base + offs))


def launches():
    x, y = torch.randn(1 << 16), torch.randn(1 << 16)
    rows = [torch.randn(256) for _ in range(64)]
    table = torch.tensor([r.data_ptr() for r in rows], dtype=torch.int64)
    a, b = torch.randn(128, 128), torch.randn(128, 128)
    yield (
        "add 65536 (256 programs)",
        add,
        (x, y, torch.empty_like(x), x.numel()),
        {"BLOCK": 256},
        (256,),
    )
    s = torch.randn(64, 1000)
    yield "softmax 64 x 1000", softmax, (s, torch.empty_like(s), 1000), {"BLOCK": 1024}, (64,)
    yield (
        "matmul 128^3 (16 programs)",
        matmul,
        (a, b, torch.empty(128, 128), 128, 128, 128),
        {"BM": 32, "BN": 32, "BK": 32},
        (4, 4),
    )
    yield (
        "gather 64 rows by a table",
        gather,
        (table, torch.empty(64 * 256)),
        {"BLOCK": 256},
        (64,),
        rows,
    )


def timed(jit, args, kwargs, grid, guarded: bool) -> float:
    interpreter = interpreter_for(jit)
    guard = (
        bounds_guard(kernel_parameters(jit, args, kwargs)) if guarded else contextlib.nullcontext()
    )
    original_call, JITFunction.__call__ = (
        JITFunction.__call__,
        call_interpreted,
    )  # as the capture does
    try:
        start = time.perf_counter()
        with grid_executor_patches_once(), guard:
            interpreter.run(*args, grid=grid, warmup=False, **kwargs)
        return time.perf_counter() - start
    finally:
        JITFunction.__call__ = original_call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    repeat = parser.parse_args().repeat
    print(f"{'launch':30} {'plain s':>9} {'guarded s':>10} {'ratio':>6}")
    for name, jit, args, kwargs, grid, *_keep in launches():
        plain = min(timed(jit, args, kwargs, grid, False) for _ in range(repeat))
        guarded = min(timed(jit, args, kwargs, grid, True) for _ in range(repeat))
        print(f"{name:30} {plain:9.3f} {guarded:10.3f} {guarded / plain:6.2f}")


if __name__ == "__main__":
    main()
