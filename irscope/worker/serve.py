"""The worker's side of an interactive session (the TUI): open the file, then answer requests.

Each request runs in a thread of its own, so a long one (running the file, recording a program) never
holds up a short one (stop the capture). What goes back is plain data: `views` of compilations and the
analyses' own dataclasses, never a tensor or a Triton object.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import traceback
from typing import Any, Callable

from irscope.analysis.coalescing.sectors import analyze_coalescing
from irscope.analysis.recording import Recording
from irscope.analysis.roofline import roofline
from irscope.analysis.vectorize.what_if import WhatIf, what_if
from irscope.analysis.vectorize.why_not import why_not_vectorized
from irscope.base import errors
from irscope.base.errors import IrscopeError
from irscope.base.target import Target
from irscope.base.textsafe import safe_text, scrub
from irscope.engine.capture.budget import CaptureBudget
from irscope.engine.compile.compilation import Compilation
from irscope.engine.compile.recompile import recompile
from irscope.engine.inductor.ptxas import ptxas_note
from irscope.engine.measure import measure, why_not_measurable
from irscope.engine.overrides import Overrides
from irscope.engine.recording import record_program
from irscope.engine.session import local_sources, open_file
from irscope.findings import findings
from irscope.worker.diffs import compile_spec, diff_doc, pass_list
from irscope.worker.views import CompilationView, KernelInfo, LaunchInfo, WorkspaceInfo, literal

Progress = Callable[[str, float], None]


class Server:
    """The opened file and its compilations, by key. One per worker."""

    def __init__(self) -> None:
        self.ws = None
        self.comps: dict[int, Any] = {}
        self.named: list = []  # the opened file's named specializations (workspace.Named), by the index sent
        self.budget = None
        self._lock = threading.Lock()

    # ---- requests

    def handle(self, op: str, args: dict, progress: Progress) -> Any:
        method = getattr(self, f"op_{op}", None)
        if method is None:
            raise IrscopeError(f"the worker has no request named {op!r}")
        return scrub(
            method(progress=lambda text, fraction: progress(safe_text(text), fraction), **args)
        )

    def op_open(
        self,
        progress: Progress,
        path: str,
        target: str | None,
        run_main: bool,
        defines: list[str],
        arg_types: list[str],
        kernel: str | None,
        config: int | None,
        file_args: list[str] = (),
        command: list[str] | None = None,
    ) -> tuple[WorkspaceInfo, list]:

        def show(p) -> None:
            line = f" · running line {p.line}" if p.line else ""
            progress(
                f"captured {p.launches} launch(es) of {p.kernels} kernel(s){line} · x: go on with these",
                0.1 + 0.35 * min(1.0, p.seconds / 30),
            )

        self.opened_with = {
            "run_main": run_main,
            "defines": defines,
            "arg_types": arg_types,
        }  # for ncu's child
        progress("running the file to capture its launches", 0.1)
        self.budget = CaptureBudget(path, on_progress=show)
        try:
            ws = open_file(
                path,
                target=target,
                run_main=run_main,
                overrides=Overrides.parse(defines, arg_types),
                kernel_name=kernel,
                config=config,
                budget=self.budget,
                file_args=file_args,
                command=command,
            )
        finally:
            self.budget = None
        progress("compiling", 0.5)
        comps = ws.compile_all(kernel_name=kernel, config=config)
        self.ws = ws
        self.named = ws.named_all(kernel_name=kernel, config=config)
        info = WorkspaceInfo(
            ws.user_file.path,
            ws.device,
            ws.run_warning,
            list(ws.notes),
            [m.to_json() for m in ws.missing],
            [self.named_row(n, i) for i, n in enumerate(self.named)],
            local_sources(path),
        )
        return info, [self.snapshot(comp) for comp in comps]

    def named_row(self, named, index: int) -> dict:
        """A named specialization as the picker lists it (plain data; compiled with op_compile_named)."""
        launch = named.launch
        return {
            "index": index,
            "name": named.kernel.name,
            "label": self.ws.kernel_label(named.kernel),
            "line": named.kernel.line,
            "grid": tuple(launch.grid) if launch.grid else None,
            "constexprs": {k: literal(v) for k, v in named.constexprs.items()},
            "spec": dict(named.specialization),
            "warps": named.num_warps,
            "number": named.number,
            "why": launch.named_why,
            "compiled": False,
        }

    def op_compile_named(
        self, progress: Progress, index: int, target: str | None = None
    ) -> CompilationView:
        """Compile a named specialization (the picker's row `index` of WorkspaceInfo.named), for `target`
        (the target shown), exactly as the file's own launches were compiled."""

        return self.snapshot(
            self.ws.compile_named(self.named[index], Target(target) if target else None)
        )

    def op_stop_capture(self, progress: Progress) -> None:
        budget = self.budget
        if budget is not None:
            budget.stop_now()

    def op_registers(self, progress: Progress, keys: list[int]) -> dict:
        """Registers and spills for the picker's rows (cuobjdump runs here)."""
        out = {}
        for key in keys:
            comp = self.comps[key]
            if comp.ok:
                try:
                    out[key] = comp.resources
                except Exception:  # noqa: BLE001 - the picker shows no registers for this row
                    pass
        return out

    def op_prepare(self, progress: Progress, key: int, sass: bool = True) -> CompilationView:
        """Every stage's text (SASS disassembled here), resources and SASS encodings. With sass=False, the
        answer does not wait for nvdisasm (~0.5 s for even a tiny kernel): the SASS text says it is coming,
        `pending` names it, and nvdisasm runs on, so that the second prepare finds it done or nearly."""
        comp = self.comps[key]
        view = self.snapshot(comp)
        stages = [s for s in comp.stage_names if s != "source"]
        if comp.ok:
            # the encodings take an nvdisasm run of their own (~0.4 s): beside the SASS text's, not after it
            encodings = (
                threading.Thread(target=lambda: comp.sass_controls, name="irscope-nvdisasm-hex")
                if comp.target.is_nvidia and "cubin" in comp.asm
                else None
            )
            if encodings is not None:
                encodings.start()
            if not sass and "sass" in stages:
                comp.prefetch_sass()
                stages.remove("sass")
                view.texts["sass"] = SASS_PENDING
                view.pending = ("sass",)
            for n, stage in enumerate(stages):
                progress(f"loading {stage}", 0.6 + 0.3 * n / len(stages))
                view.texts[stage] = comp.stage(stage)
            if encodings is not None and not view.pending:
                encodings.join()
                view.sass_controls = comp.sass_controls
        view.resources = comp.resources
        return view

    def op_recompile(
        self, progress: Progress, key: int, target: str | None = None, defines: dict | None = None
    ) -> CompilationView:

        return self.snapshot(recompile(self.comps[key], target=target, defines=defines))

    def op_compile_config(self, progress: Progress, key: int, index: int) -> list[CompilationView]:
        comp = self.comps[key]
        return [
            self.snapshot(c) for c in self.ws.compile(comp.kernel, target=comp.target, config=index)
        ]

    def op_diff(self, progress: Progress, sides: list, stage: str | None = None) -> dict:
        """The TUI's diff mode: two compilations by source line (worker/diffs.py)."""
        return diff_doc(self, sides, stage)

    def op_compile_spec(self, progress: Progress, key: int, spec: str) -> CompilationView:
        """A diff side typed as `irscope diff --left` takes it, for the kernel of compilation `key`."""
        return self.snapshot(compile_spec(self, key, spec))

    def op_call(self, progress: Progress, name: str, key: int, args: tuple = ()) -> Any:
        """One analysis of compilation `key`, by its name in ANALYSES."""
        answer = ANALYSES.get(name)
        if answer is None:
            raise IrscopeError(f"the worker has no analysis named {name!r}")
        return answer(self, self.comps[key], *args)

    # ---- views

    def snapshot(self, comp) -> CompilationView:
        with self._lock:
            key = next((k for k, c in self.comps.items() if c is comp), None)
            if key is None:
                # unique across workers: a reload starts a new one
                key = (os.getpid() << 24) | len(self.comps)
                self.comps[key] = comp
        kernel, launch = comp.kernel, comp.launch
        configs = [str(c) for c in kernel.autotune_configs or []]
        label = self.ws.kernel_label(kernel) if self.ws is not None else kernel.name
        return CompilationView(
            key,
            label,
            KernelInfo(
                kernel.name,
                kernel.file,
                kernel.line,
                kernel.module,
                configs,
                list(kernel.heuristics),
                (self.ws.shown_path(kernel.file) if self.ws is not None else None) or kernel.file,
                inductor_view(kernel.inductor_info, comp.target),
                kernel.language,
                self.ws.cell(kernel.file, kernel.line) if self.ws is not None else None,
                self.ws.cell_labels(kernel.file) if self.ws is not None else (),
            ),
            LaunchInfo(
                tuple(launch.grid) if launch.grid else None,
                launch.origin,
                launch.autotune_index,
                launch.autotune_count,
                launch.interp_error,
                dict(launch.guesses),
                tuple(launch.autotune_tried),
                launch.out_of_bounds.describe() if launch.out_of_bounds else None,
                launch.inputs_released,
            ),
            comp.target,
            comp.failure,
            comp.source_text,
            dict(comp.signature),
            {name: literal(value) for name, value in comp.constexprs.items()},
            dict(comp.specialization),
            comp.num_warps,
            comp.num_stages,
            comp.block_warps if comp.ok else comp.num_warps,
            dict(comp.grid_launches),
        )


def inductor_view(info: dict | None, target=None) -> dict | None:
    """An Inductor kernel's plain data for the front end: strings, numbers, lists and dicts only; with the
    line that says its PTX/SASS may not be what a CUDA build of torch compiles for `target` (inductor/ptxas.py)."""
    if info is None:
        return None
    if target is not None:
        info = {**info, "ptxas_note": ptxas_note(target)}

    # names read from the user's file: no terminal escapes reach the screen
    def clean(
        value: Any,
    ) -> Any:
        if isinstance(value, str):
            return safe_text(value)
        if isinstance(value, dict):
            return {safe_text(str(k)): clean(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [clean(v) for v in value]
        return literal(value)

    return clean(info)


def error_reply(exc: BaseException) -> dict:
    """An exception as the front end rebuilds it: irscope's own errors keep their class and fields."""

    if isinstance(exc, errors.IrscopeError) and getattr(errors, type(exc).__name__, None) is type(
        exc
    ):
        fields = {
            k: v for k, v in vars(exc).items() if isinstance(v, (str, int, float, type(None)))
        }
        return scrub({"error": type(exc).__name__, "message": str(exc), "fields": fields})
    return scrub(
        {
            "error": "",
            "message": f"{type(exc).__name__}: {exc}",
            "fields": {},
            "detail": "".join(traceback.format_exception(exc)),
        }
    )


# ---- what the front end asks of one compilation (`view.call(name, ...)`), by name


def _what_if(server: Server, comp: Compilation) -> WhatIf | None:
    result = what_if(comp)
    return (
        None if result is None else dataclasses.replace(result, comp=server.snapshot(result.comp))
    )


def _measured(server: Server, comp: Compilation) -> dict | str:
    """Measured mode (only with a GPU): the measurement and the findings it adds, or why it cannot run."""
    why = why_not_measurable(comp.target.name)
    if why:
        return why
    done = measure(server.ws, comp, **getattr(server, "opened_with", {}))
    return {"measured": done.to_json(), "findings": findings(comp)}


def _recorded(
    server: Server, comp: Compilation, program_id: tuple[int, ...], *rest: Any
) -> Recording:
    rec = record_program(comp.launch, program_id, *rest)
    return dataclasses.replace(rec, tensors={})  # the copies stay here; nothing shows them


# What the SASS pane shows while nvdisasm works (prepare's first answer, sass=False).
SASS_PENDING = "// nvdisasm is disassembling the cubin: the SASS follows in a moment\n"

# the ranked list the report and `irscope check` show
# the pipeline view: one more compile with the pass dumps on
ANALYSES: dict[str, Callable[..., Any]] = {
    "why_not_vectorized": lambda server, comp: why_not_vectorized(comp),
    "what_if": _what_if,
    # the ranked list the report and `irscope check` show
    "findings": lambda server, comp: findings(comp),
    "why_not_measurable": lambda server, comp: why_not_measurable(comp.target.name),
    "measure": _measured,
    "coalescing": lambda server, comp: analyze_coalescing(comp),
    "roofline": lambda server, comp: roofline(comp),
    "passes": lambda server, comp: pass_list(comp),
    "record_program": _recorded,
}
