"""The main screen's background jobs: open the file, compile, prepare a compilation for the panes.

Each job runs in a thread worker and waits on the worker process (irscope/worker). It is handed what it
needs when the request starts (copies of the screen's state, read on the UI thread) and tells the screen
what happened only by posting typed messages (tui/messages.py); it assigns no state. A failure it can
recover from (a recompile that fails leaves the compilation shown) is posted as a non-fatal `Failed`; any
other exception leaves the job and reaches the screen's one failure handler as a fatal one.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

from irscope.tui.loader import describe_open_error, prepare
from irscope.tui.messages import (
    Analysed,
    Compiled,
    Failed,
    Loaded,
    PickWanted,
    Progress,
    Request,
    SessionOpened,
)
from irscope.worker.remote import open_session

Post = Callable[[Any], object]


@dataclass
class Snapshot:
    """The screen's state a job starts from (lists copied: the UI thread may change its own)."""

    path: str
    session: Any = None
    comps: list = field(default_factory=list)
    shown_index: int | None = None
    edits: dict = field(default_factory=dict)
    shown_comp: Any = None  # the compilation shown, or None


class Sessions:
    """The worker processes a screen's loads started, so that closing the screen closes one a load has
    just opened too (its `SessionOpened` may not have reached the screen yet). Safe from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: list = []
        self._closed = False

    def opened(self, session) -> None:
        with self._lock:
            if not self._closed:
                self._live.append(session)
                return
        session.close()  # the screen is gone: nobody will ask this worker anything

    def close(self, session) -> None:
        with self._lock:
            if session in self._live:
                self._live.remove(session)
        session.close()

    def close_all(self) -> None:
        with self._lock:
            self._closed = True
            live, self._live = self._live, []
        for session in live:
            session.close()


def warm_imports() -> None:
    """What the panels import when they first draw (the explainer's tables), imported while the worker
    runs the file and the screen has nothing else to do, rather than at the first paint or in the middle
    of the user's first moves. NumPy and the coalescing analysis (12 MB) are not: they arrive with the
    first answer that holds them (a coalescing analysis, the stepper's recording), unpickled in the
    thread that waited for it, so a session that never opens those panels never holds them."""
    try:
        # deferred: the explanation tables load with the first explanation asked for, not before the first paint
        import irscope.ir.explain  # noqa: F401
    except ImportError:  # the panel that needs it says so when it draws
        pass


def read_registers(session, comps) -> None:
    """Registers for the picker's rows (cuobjdump runs in the worker)."""
    wanted = [comp for comp in comps if comp.ok and comp.resources is None]
    if wanted:
        found = session.request("registers", keys=[comp.key for comp in wanted])
        for comp in wanted:
            comp.resources = found.get(comp.key)


def reporter(request: Request, post: Post, path: str) -> Callable[[str, float], None]:
    def progress(message: str, fraction: float) -> None:
        post(Progress(request, f"{os.path.basename(path)}: {message}…", fraction))

    return progress


def load(
    request: Request,
    post: Post,
    state: Snapshot,
    sessions: Sessions,
    old_session,
    open_args: dict,
    before: str | None,
) -> None:
    """Open the file in a new worker (it runs the file's __main__), then show the compilation shown
    before a reload (`before`: its kernel's name), the only one, or ask for a pick."""

    post(Progress(request, f"opening {state.path}: loading Triton…", 0.02))
    if old_session is not None:
        sessions.close(old_session)  # a reload runs the file afresh, in a new worker
    session = open_session(state.path)
    sessions.opened(session)
    threading.Thread(target=warm_imports, daemon=True, name="irscope-warm-imports").start()
    post(SessionOpened(request, session))
    ws, comps = session.request(
        "open", reporter(request, post, state.path), path=os.path.abspath(state.path), **open_args
    )
    post(Loaded(request, ws, comps))
    state.session, state.comps = session, list(comps)
    index = same_compilation(comps, before, state.shown_index) if before is not None else None
    if index is not None:
        _reload_with_edits(request, post, state, index)
        return
    if len(comps) > 1:
        read_registers(session, comps)
        post(Compiled(request, list(comps), None, {}))
        post(PickWanted(request))
        return
    post(Compiled(request, list(comps), 0, {}))
    prepare_comp(request, post, session, comps[0], state.path)


def same_compilation(comps: list, kernel_name: str | None, shown_index: int | None) -> int | None:
    """On reload: the row of the compilation shown before (same place, same kernel), else the kernel's
    first; None (the picker) when the file no longer has that kernel."""
    if (
        shown_index is not None
        and shown_index < len(comps)
        and comps[shown_index].kernel.name == kernel_name
    ):
        return shown_index
    return next((n for n, comp in enumerate(comps) if comp.kernel.name == kernel_name), None)


def _reload_with_edits(request: Request, post: Post, state: Snapshot, index: int) -> None:
    """Compilation `index` of the reloaded file with the values set with `e` applied again; the note
    says what was kept."""
    comps, edits = state.comps, dict(state.edits)
    comp = comps[index]
    kept = f"{comp.kernel.name} for {comp.target}"
    if comp.kernel.is_autotuned:
        kept += f", autotune config {comp.launch.autotune_index or 0}"
    note, severity = f"reloaded {os.path.basename(state.path)}: {kept}", "information"
    if edits:
        asked = ", ".join(f"{k}={v!r}" for k, v in edits.items())
        try:
            comp = state.session.request("recompile", key=comp.key, defines=edits)
            note += f", with your edits {asked}"
        except BaseException as exc:
            note += f"; your edits {asked} no longer apply: {describe_open_error(exc).message}"
            severity = "warning"
            edits = {}
        comps[index] = comp
    if len(comps) > 1:
        try:
            read_registers(state.session, comps)
        except Exception:  # the picker shows no registers for the rows that failed
            pass
    post(Compiled(request, list(comps), index, edits))
    prepare_comp(request, post, state.session, comp, state.path, note, severity)


def prepare_comp(
    request: Request,
    post: Post,
    session,
    comp,
    path: str,
    note: str = "",
    severity: str = "information",
) -> None:
    """The worker prepares `comp` (stage texts, source map, resources); here it becomes what the panes
    show (highlighting, links, memory marks)."""
    progress = reporter(request, post, path)
    # first every stage but the SASS (nvdisasm takes ~0.5 s even for a tiny kernel), painted at once; then
    # the SASS, shown in place (the cursors stay where they are)
    first = session.request("prepare", progress, key=comp.key, sass=False)
    post(Analysed(request, prepare(first, progress), note, severity))
    if first.pending:
        try:
            whole = session.request("prepare", None, key=comp.key)
        # the panes stay; the status line says what the SASS could not do
        except BaseException as exc:  # noqa: BLE001 - whatever ended the second prepare is said, not raised
            post(Failed(request, describe_open_error(exc), fatal=False))
            return
        post(Analysed(request, prepare(whole, lambda *a: None), "", severity, completes=True))


def recompile(
    request: Request, post: Post, state: Snapshot, target: str | None, defines: dict | None
) -> None:
    """The compilation shown for another target (and then the picker's other rows too) or with edited
    values; a failure leaves the compilation shown where it is."""
    what = (
        f"compiling for {target}"
        if target
        else "recompiling with " + ", ".join(f"{k}={v}" for k, v in (defines or {}).items())
    )
    post(Progress(request, f"{what}…", 0.3))
    try:
        comp = state.session.request(
            "recompile", key=state.shown_comp.key, target=target, defines=defines
        )
        rows = _other_rows_for(request, post, state, target, comp) if target else None
    except BaseException as exc:
        post(Failed(request, describe_open_error(exc), fatal=False))
        return
    comps = list(state.comps)
    if rows is not None:
        comps = rows
    elif state.shown_index is not None and state.shown_index < len(comps):
        comps[state.shown_index] = comp
    post(
        Compiled(
            request, comps, state.shown_index, {**state.edits, **(defines or {})}, target=target
        )
    )
    prepare_comp(request, post, state.session, comp, state.path)


def _other_rows_for(
    request: Request, post: Post, state: Snapshot, target: str, shown
) -> list | None:
    """The picker's rows compiled for a new target (the one shown is `shown`), or None when the file has
    one compilation."""
    comps = state.comps
    if len(comps) < 2 or state.shown_index is None:
        return None
    rows = []
    for n, comp in enumerate(comps):
        if n != state.shown_index:
            post(
                Progress(
                    request,
                    f"compiling for {target}: {n + 1} of {len(comps)}…",
                    0.3 + 0.3 * n / len(comps),
                )
            )
            comp = state.session.request("recompile", key=comp.key, target=target)
        else:
            comp = shown
        rows.append(comp)
    read_registers(state.session, rows)
    return rows


def compile_config(request: Request, post: Post, state: Snapshot, index: int) -> None:
    """An autotuned kernel: compile another of its configs (the file's launch, that config's meta)."""
    kernel = state.shown_comp.kernel
    post(Progress(request, f"compiling autotune config {index} of {kernel.name}…", 0.3))
    try:
        comps = state.session.request("compile_config", key=state.shown_comp.key, index=index)
        read_registers(state.session, comps)
    except BaseException as exc:
        post(Failed(request, describe_open_error(exc), fatal=False))
        return
    rows, at = with_rows_replaced(state.comps, kernel, comps)
    # the edits go: this config's compilation comes from the file's launch, without them
    post(Compiled(request, rows, at, {}, config=index))
    prepare_comp(request, post, state.session, comps[0], state.path)


def compile_named(request: Request, post: Post, state: Snapshot, row: dict) -> None:
    """A specialization named, listed by the picker and not compiled yet (`row`, of
    WorkspaceInfo.named): compiled in the worker for the target shown, added to the picker's rows after
    its kernel's others, and shown."""
    target = str(state.shown_comp.target) if state.shown_comp is not None else None
    post(
        Progress(request, f"compiling {row['label']} ({row.get('shown') or 'another size'})…", 0.3)
    )
    try:
        comp = state.session.request("compile_named", index=row["index"], target=target)
        read_registers(state.session, [comp])
    except BaseException as exc:
        post(Failed(request, describe_open_error(exc), fatal=False))
        return
    rows = list(state.comps)
    at = max(
        (
            n + 1
            for n, c in enumerate(rows)
            if c.kernel.name == comp.kernel.name and c.kernel.line == comp.kernel.line
        ),
        default=len(rows),
    )
    rows.insert(at, comp)
    post(Compiled(request, rows, at, {}, named_done=row["index"]))
    prepare_comp(request, post, state.session, comp, state.path)


def with_rows_replaced(rows: list, kernel, new_rows: list) -> tuple[list, int]:
    """The picker's rows with `kernel`'s replaced by `new_rows` (another autotune config's compilations),
    where its first row was; and the index of the first new row."""
    at = next((n for n, comp in enumerate(rows) if comp.kernel == kernel), len(rows))
    kept = [comp for comp in rows if comp.kernel != kernel]
    at = min(at, len(kept))
    return kept[:at] + list(new_rows) + kept[at:], at
