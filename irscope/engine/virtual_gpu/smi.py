"""The virtual GPU's `nvidia-smi` / `rocm-smi`: some libraries find their GPU vendor by running the
vendor's tool (flag-gems runs `nvidia-smi` at import and refuses to load when it fails). While the file
runs with no GPU, a stand-in of the target's vendor answers first on PATH: it names the virtual device,
says it is irscope's, and exits 0. It reports no clocks, memory use or utilisation."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import tempfile
from typing import Iterator


@contextlib.contextmanager
def vendor_tool(name: str, nvidia: bool) -> Iterator[str]:
    """PATH starts with a folder holding `nvidia-smi` (or `rocm-smi` for AMD) for the device `name`."""
    folder = tempfile.mkdtemp(prefix="irscope-smi-")
    tool = "nvidia-smi" if nvidia else "rocm-smi"
    line = f"GPU 0: {name} (irscope's virtual device: no GPU here, nothing measured)"
    with open(os.path.join(folder, tool), "w") as f:
        f.write(f"#!/bin/sh\necho {shlex.quote(line)}\nexit 0\n")
    os.chmod(os.path.join(folder, tool), 0o755)
    saved = os.environ.get("PATH")
    os.environ["PATH"] = folder + (os.pathsep + saved if saved else "")
    try:
        yield folder
    finally:
        if saved is None:
            os.environ.pop("PATH", None)
        else:
            os.environ["PATH"] = saved
        shutil.rmtree(folder, ignore_errors=True)
