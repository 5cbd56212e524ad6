"""Why does a torch.compile graph fall back to the CPU under the virtual GPU on a CUDA build of torch with
the GPU hidden? Opens a corpus file in-process (irscope.engine.session.open_file) with each stop-27 change
switched off in turn, printing the traceback of every fallback. Run on the GPU machine from the repo root:
    CUDA_VISIBLE_DEVICES= python3 validation/probes/inductor_cpu_fallback.py FILE VARIANT
VARIANT: as-is | no-arch-key | no-forget | neither."""
import contextlib
import dataclasses
import os
import sys
import traceback

sys.path.insert(0, os.getcwd())
import irscope.engine.inductor.virtual_compile as vc  # noqa: E402
import irscope.engine.virtual_gpu.device as vg  # noqa: E402

LOG = open(os.path.join(os.environ.get("OUT", "."), f"fallback_{sys.argv[2]}.txt"), "a")  # the file's fd 2 is captured


class Traced(list):
    def append(self, item):
        LOG.write(f"FALLBACK: {item}\n{traceback.format_exc()}\n")
        LOG.flush()
        super().append(item)


@dataclasses.dataclass
class Outcome(vc.CompileOutcome):
    why_cpu: list = dataclasses.field(default_factory=Traced)


vc.CompileOutcome = Outcome
variant = sys.argv[2]
if variant in ("no-arch-key", "neither"):
    vc._keyed_by_capability = contextlib.nullcontext
if variant in ("no-forget", "neither"):
    vg.forget_device_properties = lambda: None
from irscope.engine.session import open_file  # noqa: E402

result = open_file(sys.argv[1])
print(variant, "kernels:", [k.name for k in result.kernels])
print(variant, "notes:", result.notes)
