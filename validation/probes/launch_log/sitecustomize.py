"""Put on PYTHONPATH with IRSCOPE_LAUNCH_LOG=FILE: every Python process then appends the name of each Triton
kernel it launches to FILE (validation/sanitizer_bounds.py: which kernels a case ran under memcheck)."""

import os

_LOG = os.environ.get("IRSCOPE_LAUNCH_LOG")

if _LOG:
    try:
        from triton.runtime.jit import JITFunction

        _run = JITFunction.run
        _seen: set[str] = set()

        def _logged_run(self, *args, **kwargs):
            name = getattr(self, "__name__", None) or self.fn.__name__
            if name not in _seen:
                _seen.add(name)
                with open(_LOG, "a") as f:
                    f.write(name + "\n")
            return _run(self, *args, **kwargs)

        JITFunction.run = _logged_run
    except Exception:  # noqa: BLE001 - no Triton in this process: nothing to log
        pass
