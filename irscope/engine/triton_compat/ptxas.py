"""Which ptxas Triton's NVIDIA backend runs, and `TRITON_PTXAS_PATH`, which Inductor sets to torch's own.

Triton picks ptxas per architecture from an environment variable (`TRITON_PTXAS_PATH`; Triton 3.6 reads
`TRITON_PTXAS_BLACKWELL_PATH` from sm_100 on, Triton 3.9 already from sm_90 on), falling back to the ptxas
in its wheel. The ptxas decides the PTX version Triton writes (`.version`, from ptxas' CUDA release) and
the SASS. Triton memoizes the version it read (`get_ptxas_version`, part of every compile's cache key): a
path set after a first compile would compile with the new ptxas under the old one's key, so a change of
path forgets it.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile

from irscope.engine.triton_compat.compiler import find_tool
from irscope.engine.triton_compat.driver import interpreter_lock

PTXAS_PATH = "TRITON_PTXAS_PATH"


def path_changed() -> None:
    """`TRITON_PTXAS_PATH` was set or changed: the next compile reads the ptxas version again."""
    from triton.backends.nvidia import compiler as nvidia

    forget = getattr(getattr(nvidia, "get_ptxas_version", None), "cache_clear", None)
    if forget is not None:
        forget()


@functools.lru_cache(maxsize=None)
def reads_ptxas_path(arch: int) -> bool:
    """Does this Triton run the ptxas named by `TRITON_PTXAS_PATH` for this architecture (capability, 90)?

    Asked of Triton's own `get_ptxas`, with the variable pointing at a link to the bundled ptxas under a
    name of its own: the answer is the link only if the variable is read. Done under the lock that every
    compile in this process holds, and the variable is put back before the lock is released."""
    from triton.backends.nvidia import compiler as nvidia

    bundled = find_tool("ptxas")
    if bundled is None:
        return False
    with interpreter_lock, tempfile.TemporaryDirectory(prefix="irscope-ptxas-") as folder:
        probe = os.path.join(folder, "ptxas")
        os.symlink(bundled, probe)
        saved = os.environ.get(PTXAS_PATH)
        os.environ[PTXAS_PATH] = probe
        try:
            return nvidia.get_ptxas(arch).path == probe
        except Exception:  # noqa: BLE001 - a Triton that picks ptxas otherwise: it does not read the variable
            return False
        finally:
            if saved is None:
                os.environ.pop(PTXAS_PATH, None)
            else:
                os.environ[PTXAS_PATH] = saved


def cuda_release(arch: int) -> str | None:
    """The CUDA release ("12.8") of the ptxas Triton compiles for this architecture (capability, 90) with,
    as its `--version` says; None where Triton cannot run it."""
    from triton.backends.nvidia import compiler as nvidia

    try:
        said = nvidia.get_ptxas_version(arch)
    except Exception:  # noqa: BLE001 - no ptxas this Triton can run: no release to name
        return None
    found = re.search(r"release (\d+\.\d+)", said or "")
    return found.group(1) if found else None
