"""irscope's SASS stage (nvdisasm on the cubin, with irscope's flags and reading) against a second,
independent disassembler: `cuobjdump -sass` on the same cubin. Every instruction, at every address, must be
the same text; branch and call targets are labels in one and addresses in the other, and are compared as
addresses."""

import glob
import os
import sys

import pytest
from conftest import ROOT

from irscope.engine.session import open_file
from irscope.engine.triton_compat import find_tool

sys.path.insert(0, os.path.join(ROOT, "validation"))
from sass_listing import cuobjdump_instructions, instructions  # noqa: E402


@pytest.mark.parametrize("target", ["sm_90", "sm_100"])
def test_irscopes_sass_is_what_cuobjdump_reads_from_the_cubin(target):
    compared = 0
    for path in sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py"))):
        for comp in open_file(path, target=target, compile_ahead=False).compile_all():
            if not comp.ok:
                continue
            mine = instructions(comp.stage("sass"))
            theirs = cuobjdump_instructions(comp.asm["cubin"], find_tool("cuobjdump"))
            assert mine and mine == theirs, (
                os.path.basename(path),
                comp.kernel.name,
                sorted(set(mine.items()) ^ set(theirs.items()))[:6],
            )
            compared += 1
    assert compared >= 10
