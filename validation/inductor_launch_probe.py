"""What irscope's capture keeps of Inductor's kernels on a GPU: the workspace's launches (kernel, autotune config
index, count). For the question of why, with one compile
thread (TORCHINDUCTOR_COMPILE_THREADS=1), `report` showed one config per Inductor kernel where a pool of compile
workers gave three (validation/data/h200_inductor_capture).

    python validation/inductor_launch_probe.py FILE
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from irscope.engine.session import open_file  # noqa: E402


def main() -> None:
    workspace = open_file(sys.argv[1], compile_ahead=False)
    for launch in workspace.launches:
        print(
            "launch",
            launch.kernel.name,
            "index",
            launch.autotune_index,
            "count",
            launch.autotune_count,
            "named_only",
            launch.named_only(),
            "explored",
            launch.explored,
        )
    print("notes", getattr(workspace, "notes", None))


if __name__ == "__main__":
    main()
