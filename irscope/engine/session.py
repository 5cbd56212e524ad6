"""The headless entry point: open a kernel file, learn its launches, compile what the user asks for."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Callable

from irscope.base.errors import IrscopeError, KernelsOutOfReach, UserCodeError
from irscope.base.missing import jit_definitions, missing_in_modules, missing_kernels
from irscope.base.model import Kernel, Launch
from irscope.base.names import TARGETS
from irscope.base.paths import PACKAGE_DIR
from irscope.engine.capture.children import children_note
from irscope.engine.capture.discover import (
    UserFile,
    find_kernels,
    kernel_file_text,
    kernels_beside_launched,
    kernels_of_launches,
    read_module,
    read_user_file,
)
from irscope.engine.capture.retarget import device_suffix, run_on_other_targets
from irscope.engine.capture.run import run_user_file
from irscope.engine.compile import ahead
from irscope.engine.inductor.kernels import inductor_kernel_of
from irscope.engine.inductor.ptxas import ptxas_note
from irscope.engine.inductor.scripts import generated_target, virtual_compile_failure
from irscope.engine.overrides import Overrides, check_arg_names, launch_arguments
from irscope.engine.triton_compat import (
    RawLaunch,
    Target,
    check_caches,
    config_kwargs,
    debugger_calls,
    local_gpu_target,
    warm_triton_key,
)
from irscope.engine.triton_compat.driver import resolve_target
from irscope.engine.virtual_gpu.device import describe_virtual_device
from irscope.engine.workspace import Workspace, with_config


def open_file(
    path: str,
    *,
    target: str | None = None,
    run_main: bool = True,
    overrides: Overrides | None = None,
    compile_ahead: bool = True,
    ahead_sass: bool = True,
    kernel_name: str | None = None,
    config: int | None = None,
    budget=None,
    on_launch: Callable[[RawLaunch], None] | None = None,
    file_args: list[str] | tuple[str, ...] = (),
    command: list[str] | tuple[str, ...] | None = None,
    retarget: bool = True,
) -> Workspace:
    """Load a kernel file, run its `__main__` to capture launches, and get ready to compile.

    With no GPU, each launch starts compiling in a child process as soon as it is captured (engine/compile/ahead.py),
    and then disassembled unless `ahead_sass` is false (SASS will not be asked for); none starts if
    `compile_ahead` is false (nothing will be compiled), or for a launch not of `kernel_name` or not with
    autotune `config` (when the caller will compile only those). `on_launch` hears of each launch as it is
    captured. `file_args` are the file's own command line (`sys.argv[1:]`). `command`, in place of a
    path: `[MODULE, ARGS...]`, run as `python -m MODULE ARGS...` (a test session: `pytest tests/x.py`), whose
    every launch is captured, of whichever module's kernels. `retarget` false: a file that launched
    nothing is not run again for other targets (retarget.py; a library's module, opened to list its kernels)."""
    user_file = read_module(command[0], command[1:]) if command else read_user_file(path)
    resolved = resolve_target(target)
    local = local_gpu_target()
    overrides = overrides or Overrides()
    cache_warning = check_caches()  # a read-only or full cache: compile without one, and say so
    if compile_ahead and not cache_warning:
        warm_triton_key()  # the install's hash, while the file runs (the first compile needs it)

    def run(on: Target):
        hooks = [on_launch] if on_launch is not None else []
        if compile_ahead and local is None:
            hooks.append(
                _compiler_ahead(
                    on, overrides, kernel_name, config, ahead_sass, user_file.text, user_file.path
                )
            )
        return run_user_file(
            user_file,
            run_main=run_main,
            use_interpreter=local is None,
            target=on,
            on_launch=(lambda raw: [hook(raw) for hook in hooks]) if hooks else None,
            budget=budget,
            argv=file_args,
        )

    ahead.forget_waiting()
    result, first, retarget_note = run(resolved), resolved, None
    # launched nothing on the default virtual GPU? (retarget.py)
    if target is None and local is None and run_main and retarget and user_file.command is None:
        resolved, result, retarget_note = run_on_other_targets(
            user_file.shown, resolved, result, run
        )
    ahead.start_waiting()  # the file's core is free now: a launch that found none free gets its child
    kernels = find_kernels(result.namespace, user_file)
    kernels += kernels_of_launches(
        [(raw.jit, raw.autotune_configs) for raw in result.launches], kernels
    )
    if not kernels:
        if result.error is not None:
            _no_virtual_compile(user_file, result, local)
            raise UserCodeError(
                _user_error_line(user_file, result, retarget_note), _user_traceback(result)
            )
        # its kernels may live in modules it imports: it did not get to launch them
        if result.stopped_cause:
            at = f" at line {result.stopped_line}" if result.stopped_line else ""
            raise IrscopeError(
                f"{user_file.shown} launched no kernel before the run was stopped{at} "
                f"({result.stopped_cause}); IRSCOPE_CAPTURE_LIMIT / IRSCOPE_CAPTURE_QUIET (seconds) "
                f"let it run longer"
            )
        if user_file.command is not None:
            elsewhere = children_note(result.children, user_file.shown)
            raise IrscopeError(
                f"`{user_file.shown}` launched no Triton kernel while it ran"
                + (
                    f" ({_exit_line(result.exit_status, user_file.command)})"
                    if result.exit_status
                    else ""
                )
                + (
                    f"; {elsewhere}"
                    if elsewhere
                    else "; give it the tests or script that launch some"
                )
            )
        # defined where no module attribute holds them: inside a function (a kernel factory), or wrapped by a
        # library's own decorator (FlagGems' pointwise_dynamic): named from the source
        unreached = jit_definitions(user_file.text)
        if unreached:
            names = ", ".join(f"{name} (line {line})" for name, line in unreached)
            raise KernelsOutOfReach(
                f"{user_file.shown} keeps its @triton.jit functions where irscope cannot take them as kernels "
                f"(inside functions, or wrapped by a library's decorator: {names}), and its run launched none; "
                f"open a file that calls them",
                unreached,
            )
        raise IrscopeError(
            f"{user_file.shown} defines no @triton.jit kernel and launched none while it ran"
            f"; open a file that defines or launches one, e.g. kernels/add.py"
        )
    # Inductor's kernels are compiled for the GPU they were generated for
    if target is None and local is None:
        resolved, written_for = _inductor_target(kernels, resolved)
        if written_for:
            result.notes.append(written_for)
    result.notes.extend(_ptxas_notes(kernels, resolved))
    result.notes[:] = _debugger_notes(kernels, user_file, result.notes)
    by_jit = {id(k.jit): k for k in kernels}
    check_arg_names(overrides, kernels, user_file)
    launches = [_launch(raw, by_jit, overrides) for raw in result.launches if id(raw.jit) in by_jit]
    warning = None
    if result.error is not None:
        site = f"{_exception_line(result.error)}{_raise_site(result, user_file)}"
        if launches:
            warning = (
                f"{user_file.shown} raised {site} after its kernels launched; showing the {len(launches)} "
                f"launch(es) captured before that"
            )
        # --no-run: the kernels are defined, and their arguments come from -D/--arg anyway
        elif not run_main:
            warning = f"{user_file.shown} raised {site} after its kernels were defined; going on without the rest"
        else:
            _no_virtual_compile(user_file, result, local)
            raise UserCodeError(
                _user_error_line(user_file, result, retarget_note), _user_traceback(result)
            )
    warning = "; ".join(w for w in (cache_warning, warning) if w) or None
    notes = ([retarget_note] if retarget_note else []) + list(result.notes)
    if user_file.notebook is not None:
        notes.extend(user_file.notebook.notes(user_file.shown))
    if result.stopped:
        notes.append(
            f"{user_file.shown}: {result.stopped} (IRSCOPE_CAPTURE_QUIET / IRSCOPE_CAPTURE_LIMIT "
            f"give it longer)"
        )
    printed = [line.strip() for line in result.output.splitlines() if line.strip()]
    device = _device_line(resolved, local) + (
        device_suffix(first, resolved) if resolved is not first else ""
    )
    raised = (
        f"{_exception_line(result.error)}{_raise_site(result, user_file)}" if result.error else None
    )
    if result.exit_status:
        notes.append(f"`{user_file.shown}` {_exit_line(result.exit_status, user_file.command)}")
    missing = missing_kernels(
        kernels,
        launches,
        user_file.path,
        ran=run_main,
        stopped_line=result.stopped_line,
        stopped_cause=result.stopped_cause,
        raised=raised,
    )
    if (
        user_file.command is not None
    ):  # the launched kernels' modules: their kernels nothing launched
        missing = missing_in_modules(
            kernels + kernels_beside_launched(kernels),
            launches,
            stopped_cause=result.stopped_cause,
            raised=raised,
        )
    return Workspace(
        user_file,
        kernels,
        launches,
        resolved,
        overrides,
        warning,
        notes,
        device,
        printed[-1][:200] if printed else "",
        missing,
    )


def local_sources(path: str) -> list[str]:
    """The opened file and the modules its run imported from the file's folder and below (not from an
    installed package, nor irscope's own): the files whose saves change what the file compiles."""
    folder = os.path.join(os.path.dirname(os.path.abspath(path)), "")
    found = {os.path.abspath(path)}
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not (isinstance(file, str) and file.endswith(".py")):
            continue
        file = os.path.abspath(file)
        if (
            file.startswith(folder)
            and not file.startswith(os.path.join(PACKAGE_DIR, ""))
            and "-packages" + os.sep not in file
        ):
            found.add(file)
    return sorted(found)


# pytest's exit statuses (pytest.ExitCode), said in words
_PYTEST_EXITS = {
    1: "tests failed (in Triton's interpreter a launch cut short writes incomplete results, so a test may fail "
    "here that passes on a GPU)",
    2: "the session was interrupted",
    3: "pytest's own internal error",
    4: "pytest could not start: an option it does not know, or a conftest.py that failed to import (a package "
    "the tests need and this environment lacks)",
    5: "no tests were collected",
}


def _exit_line(status, command: tuple[str, ...] | None) -> str:
    """How the command (`-m MODULE ...`) ended, in words; pytest's statuses named."""
    if command and command[0] == "pytest" and status in _PYTEST_EXITS:
        return (
            f"ended with pytest's exit status {status}: {_PYTEST_EXITS[status]}; "
            f"`python -m {' '.join(command)}` shows its output"
        )
    return f"ended with exit status {status}"


def _no_virtual_compile(user_file: UserFile, result, local: Target | None) -> None:
    """torch.compile failed inside Inductor on the virtual GPU: one line that says what and what to do."""
    line = virtual_compile_failure(result.error, user_file.shown) if local is None else None
    if line:
        raise IrscopeError(line)


def _ptxas_notes(kernels: list[Kernel], target: Target) -> list[str]:
    note = ptxas_note(target) if any(k.inductor is not None for k in kernels) else None
    return [note] if note else []


def _debugger_notes(kernels: list[Kernel], user_file: UserFile, notes: list[str]) -> list[str]:
    """`notes` with one line per debugger call in a kernel or its helpers, which the compile leaves out
    (triton_compat/debugger_calls.py). It replaces the run's note that the interpreter skipped that call."""
    calls = list(dict.fromkeys(call for k in kernels for call in debugger_calls(k.jit)))
    if not calls:
        return notes
    skipped = {
        f"breakpoint() at line {c.line} skipped (no debugger under irscope)"
        for c in calls
        if c.file == user_file.path
    }  # the run's note for the same call (capture.no_terminal)
    said = [c.note(None if c.file == user_file.path else os.path.relpath(c.file)) for c in calls]
    return [n for n in notes if n not in skipped] + said


def _inductor_target(kernels: list[Kernel], resolved: Target) -> tuple[Target, str | None]:
    wanted = generated_target(kernels)
    if wanted is None or wanted == resolved.name:
        return resolved, None
    if wanted in TARGETS:
        return Target(wanted), (
            f"compiled for {wanted}, the GPU Inductor generated these kernels for (their "
            f"triton_meta); --target picks another"
        )
    return resolved, (
        f"Inductor generated these kernels for {wanted}, which irscope has no target for; compiled "
        f"for {resolved.name} with Inductor's configs for {wanted} (--target picks another)"
    )


def _device_line(target: Target, local: Target | None) -> str:
    if local is None:
        return describe_virtual_device(target)
    return (
        f"this machine's GPU ({local.name}); launches ran on it, compiled for {target.name}; benchmarks "
        "run once and time nothing (--measure measures)"
    )


def _exception_line(exc: BaseException) -> str:
    """`Type: first line of its message`; a bare `assert` is named by its own statement, which is all the
    cause there is (`AssertionError (assert x.is_cuda)`)."""
    detail = str(exc).strip().splitlines()
    if detail:
        return f"{type(exc).__name__}: {detail[0]}"
    frames = traceback.extract_tb(exc.__traceback__)
    statement = (frames[-1].line or "").strip() if frames else ""
    return (
        f"{type(exc).__name__} ({statement[:120]})"
        if statement.startswith("assert")
        else type(exc).__name__
    )


def _raise_site(result, user_file: UserFile) -> str:
    """ " at line N" of the opened file where the exception passed last, when it did."""
    tb = result.error.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == user_file.path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" at line {line}" if line else ""


def _compiler_ahead(
    target: Target,
    overrides: Overrides,
    kernel_name: str | None,
    config: int | None,
    disassemble_too: bool,
    source_text: str,
    user_path: str,
):
    """What to do with each launch as it is captured: start compiling the ones that will be compiled."""

    def on_launch(raw: RawLaunch) -> None:
        # not the JIT's specialization: compiled by the parent
        if inductor_kernel_of(raw.jit) is not None:
            return
        # a benchmark sweep's later point, or a config only a GPU's timing picks: named when the file opens,
        # compiled only on request
        if raw.explored or (raw.reused_choice and config is None):
            return
        if not with_config(raw, config) or kernel_name not in (
            None,
            raw.jit.__name__,
            f"{raw.jit.fn.__module__}:{raw.jit.__name__}",
        ):
            return
        try:
            args, kwargs = launch_arguments(raw, overrides)
        # an odd -D/--arg: reported when the parent compiles, not inside the user's run
        except Exception:
            return
        text = (
            source_text
            if raw.jit.fn.__code__.co_filename == user_path
            else kernel_file_text(raw.jit.fn.__code__.co_filename)
        )
        ahead.start(raw.jit, args, kwargs, target, text, disassemble_too=disassemble_too)

    return on_launch


def _user_error_line(user_file: UserFile, result, retarget_note: str | None = None) -> str:
    """The one line of a run that raised before any launch; with the note of the other targets it was run on
    in vain (retarget.py), where it asked the device what it is (a tutorial that raises "requires a Blackwell
    GPU" on the default sm_90 and launches nothing from its __main__ on sm_100 either)."""
    said = _command_line_error(result)
    if said:
        return (
            f"{user_file.shown} rejected its command line ({said}); give the file its own arguments after "
            f"`--`: irscope [COMMAND] {user_file.shown} -- ARGS"
        )
    what = _exception_line(result.error) + _raise_site(result, user_file)
    elsewhere = f"; {retarget_note}" if retarget_note else ""
    return (
        f"{user_file.shown} raised {what} while irscope ran it (your code's traceback follows); "
        f"fix it, or pass --no-run and give arguments with -D/--arg{elsewhere}"
    )


def _command_line_error(result) -> str | None:
    """argparse's own error line (`prog: error: ...`, the last thing it prints before exiting with status 2)
    when the file's parser rejected its command line; it went to the file's output, which irscope keeps."""
    if not isinstance(result.error, SystemExit) or result.error.code != 2:
        return None
    printed = _printed(result)
    return printed[-1][:200] if printed and ": error: " in printed[-1] else None


def _user_traceback(result) -> str:
    """What follows the error line: the traceback, or for a rejected command line argparse's usage and error
    (all a `SystemExit: 2` traceback would say is the status)."""
    if _command_line_error(result) is None:
        return result.user_traceback
    printed = _printed(result)
    usage = max(
        (i for i, line in enumerate(printed) if line.startswith("usage:")), default=len(printed) - 1
    )
    return "\n".join(printed[max(usage, len(printed) - 8) :])


def _printed(result) -> list[str]:
    return [line.rstrip() for line in result.output.splitlines() if line.strip()]


def _launch(raw: RawLaunch, by_jit: dict[int, Kernel], overrides: Overrides) -> Launch:
    kernel = by_jit[id(raw.jit)]
    if kernel.inductor is not None:  # the wrapper passes no constexprs: the config's, then -D's
        config = (raw.autotune_configs or [None])[raw.autotune_index or 0]
        args, kwargs = (
            raw.args,
            {**(config_kwargs(config) if config is not None else {}), **overrides.defines},
        )
    else:
        args, kwargs = launch_arguments(raw, overrides)
    # the autotuner's known configs grew while the file ran (configs its pruning made): count them all
    count = (
        len(raw.autotune_configs)
        if raw.autotune_index is not None and raw.autotune_configs
        else raw.autotune_count
    )
    return Launch(
        kernel,
        args,
        kwargs,
        raw.resolved_grid(),
        "captured",
        raw.autotune_index,
        count,
        raw.interp_error,
        autotune_first=raw.autotune_first,
        warmup=raw.warmup,
        autotune_tried=raw.autotune_tried,
        programs=raw.programs,
        explored=raw.explored,
        out_of_bounds=raw.out_of_bounds,
        choice_by_timing=bool(raw.reused_choice),
        inputs_released=raw.inputs_released,
        repeat_grids=dict(raw.repeat_grids),
    )
