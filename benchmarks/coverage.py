"""Coverage, measured (issue 29): for each corpus file, what plain Triton compiles when the file runs as written
on a GPU, against what irscope shows for the same file offline.

  (a) GPU: the file runs under plain Triton in a child process (a fresh Triton cache each), with Triton's own
      compile entry (`triton.compiler.compile`, which the JIT, the autotuner and Inductor all call) hooked:
      every compilation is recorded with its kernel, module, specialization (signature, constexprs, attrs)
      and options (num_warps, num_stages, the autotune config it was benchmarked for). The file runs the
      way validation/gpu_fidelity.py runs it (its `run_as_written`).
  (b) offline: `irscope report FILE --json --target T` with the GPU hidden, exactly as benchmarks/corpus.py
      opens a corpus file; each shown specialization counts once per autotune config the JSON lists.
  (b') on the GPU: the same `irscope report` with the GPU visible (irscope's capture of real launches), which
      must show every compilation of (a) too.
  (c) the comparison in both directions, on one key: kernel module and name, signature, specialization
      letters (D, S, constant: irscope's own words for Triton's attrs, computed on the GPU side from the
      compile's own ASTSource with irscope's functions), constexprs other than the config's, and the options:
      the autotune config as Triton prints it, else num_warps and num_stages. gpu_fidelity pairs compiled
      binaries by (name, hash); that key cannot serve here, since the report compiles one config per
      specialization and names the others without compiling them.

    python benchmarks/coverage.py [FILTER ...] [--files F ...] [--timeout 300] [--target sm_90] [--out DIR] [--append]
    python benchmarks/coverage.py --offline-only ...    # no GPU: side (b) only (rows "shown, not checked")
    python benchmarks/coverage.py --gpu-only ...        # on the GPU: sides (a) and (b') only, side by side
    python benchmarks/coverage.py --gpu-from DIR/coverage.json ...   # no GPU: (b) here against a recorded (a), (b')
    python benchmarks/coverage.py --gpu-from DIR/coverage.json --live ...   # on the GPU: (b') again, (a) as recorded
`--gpu-only` records what the GPU gives (side (b') as the compact JSON the comparison reads, `live_doc`) and
leaves side (b) to a later `--gpu-from` replay on the offline code of that day, which recomputes (b') against
(a) with its own key.
Writes DIR/coverage.json (raw data) and DIR/coverage.md (the table, with the command that made it); --append
keeps the results of files not named this time (a run split over several calls, each its own subset).
Library drivers need tests/corpus/requirements.txt installed (`pip install --no-deps -r ...`).
"""

from __future__ import annotations

import argparse
import contextlib
import contextvars
import gzip
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


corpus = _load("corpus_bench", os.path.join(ROOT, "benchmarks", "corpus.py"))
fidelity = _load("gpu_fidelity", os.path.join(ROOT, "validation", "gpu_fidelity.py"))

_CONFIG = contextvars.ContextVar("autotune_config", default=None)


# ---------------------------------------------------------------------------------------------- the key

_INDUCTOR_MODULES = ("torch._inductor.runtime.compile_tasks.", "torch._inductor.codecache.")


def make_key(
    module: str,
    name: str,
    signature: dict,
    specialization: dict,
    constexprs: dict,
    num_warps,
    num_stages,
    loose: bool = False,
) -> str:
    """The one key both sides are compared on (see the module docstring), as a stable string: an autotune
    config is in it as its meta-parameters (among the constexprs) and its launch options. `loose`: a tensor
    descriptor's block shape left out (a config's pre-hook sets it; a config irscope names but did not compile
    has none of its own)."""
    if loose:
        signature = {
            k: (v.split("[")[0] if str(v).startswith("tensordesc") else v)
            for k, v in signature.items()
        }
    if (module or "").startswith(_INDUCTOR_MODULES):
        # Inductor names the module of a generated kernel after a hash of its code and of where it was written:
        # the GPU's and the virtual GPU's differ there (validation/probes/inductor_sources.sh compares the code)
        module = "<inductor>"
    return json.dumps(
        {
            "kernel": f"{module}.{name}",
            "signature": signature,
            "specialization": specialization,
            "constexprs": {k: str(v) for k, v in constexprs.items()},
            "num_warps": num_warps,
            "num_stages": num_stages,
        },
        sort_keys=True,
    )


def shown_keys(doc: dict) -> list[dict]:
    """Side (b): what `irscope report --json` shows: each compilation (`named` false), and each other config
    its autotuner would try for that launch, which the JSON names (`named` true: `--config N` compiles it);
    and each specialization only the benchmarks' exploration reached (the JSON's "named", `compiled` false:
    `--launch N` compiles it), named with the other configs its autotuner would try for it."""
    rows = []
    # everything the key needs, from the specialization (no compile)
    for k in doc.get("named") or []:
        signature, spec = k.get("signature") or {}, k.get("specialization") or {}
        constexprs = k.get("constexprs") or {}
        rows.append(
            {
                "name": k["name"],
                "module": k.get("module"),
                "named": True,
                "config": None,
                "key": make_key(
                    k.get("module"),
                    k["name"],
                    signature,
                    spec,
                    constexprs,
                    k.get("num_warps"),
                    k.get("num_stages"),
                    loose=True,
                ),
            }
        )
        rows.extend(_other_configs(k, signature, spec, constexprs))
    for k in doc.get("kernels") or []:
        signature, spec = k.get("signature") or {}, k.get("specialization") or {}
        constexprs = k.get("constexprs") or {}
        rows.append(
            {
                "name": k["name"],
                "module": k.get("module"),
                "named": False,
                "key": make_key(
                    k.get("module"),
                    k["name"],
                    signature,
                    spec,
                    constexprs,
                    k.get("num_warps"),
                    k.get("num_stages"),
                ),
            }
        )
        rows.extend(_other_configs(k, signature, spec, constexprs))
    return rows


def _other_configs(k: dict, signature: dict, spec: dict, constexprs: dict) -> list[dict]:
    """The named rows of the configs other than `k`'s own that its autotuner would try for its launch."""
    rows = []
    tried = (k.get("autotune") or {}).get("tried") or []
    shown = next((t for t in tried if t.get("shown")), None)
    for t in tried:
        if t is shown or shown is None:
            continue
        # the compiled config's meta-parameters swapped for this one's
        named_constexprs = {
            n: v for n, v in constexprs.items() if n not in (shown.get("kwargs") or {})
        }
        named_constexprs.update(t.get("kwargs") or {})
        rows.append(
            {
                "name": k["name"],
                "module": k.get("module"),
                "named": True,
                "config": t.get("index"),
                "key": make_key(
                    k.get("module"),
                    k["name"],
                    signature,
                    spec,
                    named_constexprs,
                    t.get("num_warps"),
                    t.get("num_stages"),
                    loose=True,
                ),
            }
        )
    return rows


# --------------------------------------------------------------------------------- (a) the GPU child


def hook_compile(records: list, save=lambda: None) -> None:
    """Record every call of Triton's compile entry: replace `triton.compiler.compiler.compile` wherever a
    Triton module holds it (the JIT takes it from `triton.compiler` when it first launches a kernel), and
    note the autotune config each Autotuner benchmark compiles for."""
    import triton.compiler.compiler as cc
    from triton.runtime.autotuner import Autotuner

    original = cc.compile

    def compile_and_record(src, *args, **kwargs):
        entry = {"started": time.time()}
        try:
            entry.update(
                describe_source(src, kwargs.get("options") or (args[1] if len(args) > 1 else None))
            )
        except Exception as exc:  # noqa: BLE001 - a source this script cannot read still counts, by name
            entry.update(
                name=getattr(src, "name", "?"),
                module="?",
                describe_error=f"{type(exc).__name__}: {exc}",
            )
        entry["config"] = current_config()
        records.append(entry)
        compiled = original(src, *args, **kwargs)
        entry["hash"] = getattr(getattr(compiled, "metadata", None), "hash", None)
        save()  # a run stopped at its time limit keeps what it compiled
        return compiled

    for name, module in list(sys.modules.items()):
        if name.startswith("triton") and module is not None:
            for attr, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attr, compile_and_record)
    bench = Autotuner._bench

    def bench_for(self, *args, config, **meta):
        token = _CONFIG.set(str(config))
        try:
            return bench(self, *args, config=config, **meta)
        finally:
            _CONFIG.reset(token)

    Autotuner._bench = bench_for
    run = Autotuner.run

    # a single config, or one the autotuner's cache chose: no benchmark
    def run_within(self, *args, **kwargs):
        token = _CONFIG.set(self)
        try:
            return run(self, *args, **kwargs)
        finally:
            _CONFIG.reset(token)

    Autotuner.run = run_within


def current_config() -> str | None:
    """The autotune config a compile happens for: the one being benchmarked, else, inside an autotuner's run,
    the one it chose (its only one, or its cache's), as Triton prints it; None outside any autotuner."""
    value = _CONFIG.get()
    if value is None or isinstance(value, str):
        return value
    chosen = getattr(value, "best_config", None) or (
        value.configs[0] if len(value.configs) == 1 else None
    )
    return str(chosen) if chosen is not None else None


def describe_source(src, options) -> dict:
    """Kernel, module, specialization and options of one compile, in the report's words (irscope's own
    functions read Triton's attrs and constexprs, so both sides name them alike)."""
    from types import SimpleNamespace

    from irscope.engine.compile.compilation import Compilation

    options = options or {}
    out = {
        "num_warps": options.get("num_warps", 4),
        "num_stages": options.get("num_stages", 3),
        "num_ctas": options.get("num_ctas", 1),
    }
    jit = getattr(src, "fn", None)
    if jit is None or not hasattr(jit, "fn"):  # IRSource: a compile from a file of IR
        return {
            **out,
            "name": getattr(src, "name", "?"),
            "module": "?",
            "signature": {},
            "specialization": {},
            "constexprs": {},
        }
    stand_in = SimpleNamespace(
        spec=SimpleNamespace(signature=src.signature, attrs=src.attrs, constexprs=src.constants),
        kernel=SimpleNamespace(jit=jit),
    )
    # what `specialization` reads of its own
    stand_in.constexprs = Compilation.constexprs.fget(stand_in)
    return {
        **out,
        "name": jit.fn.__name__,
        "module": jit.fn.__module__,
        "signature": dict(src.signature),
        "specialization": Compilation.specialization.fget(stand_in),
        "constexprs": {k: str(v) for k, v in stand_in.constexprs.items()},
    }


def child(path: str, out_json: str) -> None:
    records: list = []

    def save(error: str | None = "still running when it was stopped (timed out)") -> None:
        with open(out_json + ".part", "w") as f:
            json.dump({"compiles": records, "error": error}, f)
        os.replace(out_json + ".part", out_json)

    hook_compile(records, save)
    error = None
    try:
        fidelity.run_as_written(path)
    except BaseException as exc:  # noqa: BLE001 - what the file compiled before it stopped still counts
        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
    save(error)


def compiled_on_gpu(
    rel: str, timeout: float, kept_caches: str | None = None
) -> tuple[list[dict], str | None]:
    """Side (a): run the file on the GPU in a child, fresh Triton and Inductor caches, a tutorial from a
    checkout's layout as on side (b); its compilations keyed.

    `kept_caches` (--gpu-caches): the caches in a folder of the file's own there, kept from one run to the
    next. A file whose run outlasts one device call (adasplash: its autotuners compile for minutes, one
    config after the other) is run again by a later call, which finds the compiles of the first one on disk
    and goes further. Every compilation is still recorded: the hook is on Triton's compile entry, which runs
    before Triton looks in its cache."""
    with tempfile.TemporaryDirectory(prefix="irscope-coverage-gpu-") as scratch:
        caches = scratch
        if kept_caches:
            caches = os.path.join(os.path.abspath(kept_caches), rel.replace("/", "__"))
            os.makedirs(caches, exist_ok=True)
        path = os.path.join(corpus.CORPUS, rel)
        if rel.startswith("tutorials/"):
            path = corpus.checkout_layout(os.path.join(scratch, "triton"), path)
        out_json = os.path.join(scratch, "compiles.json")
        env = dict(
            os.environ,
            TRITON_CACHE_DIR=os.path.join(caches, "triton-cache"),
            TORCHINDUCTOR_CACHE_DIR=os.path.join(caches, "inductor"),
            TORCHINDUCTOR_COMPILE_THREADS="1",
            FLAGGEMS_CACHE_DIR=os.path.join(caches, "flaggems-cache"),
            PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p),
        )
        try:
            done = subprocess.run(
                [sys.executable, __file__, "--child", path, out_json],
                env=env,
                cwd=scratch,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            error = (
                None if done.returncode == 0 else corpus._error_line(done.stderr, done.returncode)
            )
        except subprocess.TimeoutExpired:
            error = f"timed out after {timeout:g} s"
        if not os.path.exists(out_json):
            return [], error or "the run wrote nothing"
        doc = json.load(open(out_json))
    return rekeyed(doc["compiles"]), error or doc.get("error")


def rekeyed(compiles: list[dict]) -> list[dict]:
    """The GPU's compilations with the comparison's keys (exact, and with descriptor block shapes left out)."""

    def key(r: dict, loose: bool) -> str:
        return make_key(
            r["module"],
            r["name"],
            r.get("signature") or {},
            r.get("specialization") or {},
            r.get("constexprs") or {},
            r["num_warps"],
            r["num_stages"],
            loose=loose,
        )

    return [{**r, "key": key(r, False), "loose_key": key(r, True)} for r in compiles]


# ---------------------------------------------------------------------------------------- (b) offline


def shown_offline(
    rel: str, target: str, timeout: float, hide_gpu: bool = True
) -> tuple[dict | None, str | None, float]:
    """Side (b): `irscope report FILE --json --target T`, GPU hidden, as benchmarks/corpus.py opens a file
    (side (b'), with `hide_gpu` false: the same on the GPU, launches run for real)."""
    with tempfile.TemporaryDirectory(prefix="irscope-coverage-") as scratch:
        path, env = corpus.scratch_run(rel, os.path.join(corpus.CORPUS, rel), scratch, hide_gpu)
        cmd = [sys.executable, "-m", "irscope", "report", path, "--json", "--target", target]
        start = time.perf_counter()
        try:
            done = subprocess.run(
                cmd,
                cwd=scratch,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return None, f"timed out after {timeout:g} s", time.perf_counter() - start
    seconds = time.perf_counter() - start
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        return None, corpus._error_line(done.stderr, done.returncode), seconds
    return (
        doc,
        None if done.returncode == 0 else corpus._error_line(done.stderr, done.returncode),
        seconds,
    )


def missing_reason(doc: dict | None, name: str, error: str | None = None) -> str:
    """irscope's own word on a compilation it did not show: its JSON's `missing` list (kernel, reason), or,
    for a kernel it showed in other specializations, a note on a benchmark sweep it did not run whole or on
    the run's stop (the line it was on, its cause, the knobs that give it longer), or,
    where the report ended in an error (no JSON, or an exit status not 0), irscope's error line: a file that
    "launched no kernel: the run was stopped at line 143 (the 60 s limit)" said why. A report this script
    stopped at its own time limit said nothing."""
    for item in (doc or {}).get("missing") or []:
        if item.get("kernel") in (name, None):
            return item.get("reason") or "not said"
    if any(k.get("name") == name for k in (doc or {}).get("kernels") or []):
        sweeps = [
            n
            for n in (doc or {}).get("notes") or []
            if n.startswith("benchmark ") and "x values" in n
        ]
        if sweeps:
            return "said: " + sweeps[0]
        # the capture was stopped (its line, its cause, the knobs that give it longer): the kernel's later
        # specializations are among what the run did not reach
        stops = [n for n in (doc or {}).get("notes") or [] if ": stopped " in n]
        if stops:
            return "said: " + stops[0]
    if error:
        return ("not said: " if error.startswith("timed out after") else "said: ") + error
    return "not said"


# ------------------------------------------------------------------------------------------ (c) compare


def compare(rel: str, gpu: list[dict] | None, doc: dict | None, error: str | None = None) -> dict:
    """Both directions on one key. `gpu` None: offline only (nothing to compare against). A GPU compilation is
    "shown" when irscope compiled it, "named" when the JSON names its config for that launch (a config the
    report does not compile by default, as it shows one per specialization), else "compiled, not shown", with
    irscope's reason (`error`: the report's own error line, where it ended in one)."""
    rows = shown_keys(doc or {})
    compiled_here = {r["key"]: r for r in rows if not r["named"]}
    named = {r["key"]: r for r in rows if r["named"]}
    out = {"file": rel, "shown": len(compiled_here), "named": len(named), "rows": []}
    if gpu is None:
        out["rows"] = [
            {
                "kernel": r["name"],
                "config": r.get("config"),
                "result": "named (offline only)" if r["named"] else "shown (offline only)",
                "key": r["key"],
            }
            for r in rows
        ]
        return out
    compiled = {}
    for g in gpu:
        compiled.setdefault(g["key"], g)
    matched_named = set()
    for key, g in compiled.items():
        if key in compiled_here:
            result = "shown & compiled"
        elif g["loose_key"] in named:
            result = "named & compiled"
            matched_named.add(g["loose_key"])
        else:
            result = "compiled, not shown"
        row = {"kernel": g["name"], "config": g.get("config"), "result": result, "key": key}
        if result == "compiled, not shown":
            row["reason"] = missing_reason(doc, g["name"], error)
        out["rows"].append(row)
    for key, r in compiled_here.items():
        if key not in compiled:
            out["rows"].append(
                {"kernel": r["name"], "config": None, "result": "shown, never compiled", "key": key}
            )
    for key, r in named.items():
        if key not in matched_named:
            out["rows"].append(
                {
                    "kernel": r["name"],
                    "config": r.get("config"),
                    "result": "named, never compiled",
                    "key": key,
                }
            )
    out["compiled"] = len(compiled)
    return out


_KERNEL_FIELDS = (
    "name",
    "module",
    "signature",
    "specialization",
    "constexprs",
    "num_warps",
    "num_stages",
)


def compact(doc: dict | None) -> dict | None:
    """What the comparison reads of a report's JSON (its kernels' keys, the configs its autotuners would try,
    `missing` and `notes`): side (b') kept in coverage.json, small, to be keyed again by a later replay."""
    if doc is None:
        return None
    kernels = []
    for k in doc.get("kernels") or []:
        kept = {f: k.get(f) for f in _KERNEL_FIELDS}
        tried = (k.get("autotune") or {}).get("tried")
        if tried:
            kept["autotune"] = {
                "tried": [
                    {f: t.get(f) for f in ("index", "kwargs", "num_warps", "num_stages", "shown")}
                    for t in tried
                ]
            }
        kernels.append(kept)
    # the specializations only a sweep's exploration reached (shown_keys reads them too: without them a replay
    # counted run 6's six sweep files as 40 compilations short of what the GPU run itself counted)
    named = [{f: k.get(f) for f in (*_KERNEL_FIELDS, "autotune")} for k in doc.get("named") or []]
    return {
        "kernels": kernels,
        "named": named,
        "missing": doc.get("missing"),
        "notes": doc.get("notes"),
    }


def on_gpu_counts(
    gpu: list[dict] | None, doc: dict | None, error: str | None = None
) -> dict | None:
    """Side (b') against (a): how many of the GPU's compilations irscope's capture on the GPU showed or named.
    A report on the GPU that gave no JSON (`doc` None) captured none of them: each counts, as not captured."""
    if gpu is None or (doc is None and error is None):
        return None
    res = compare("", gpu, doc, error)
    reached = [r for r in res["rows"] if r["result"] in ("shown & compiled", "named & compiled")]
    return {
        "captured": len(reached),
        "compiled": res["compiled"],
        "not captured": [
            {
                "kernel": json.loads(r["key"])["kernel"],
                "config": r.get("config"),
                "reason": r["reason"],
            }
            for r in res["rows"]
            if r["result"] == "compiled, not shown"
        ],
    }


def gpu_only_result(rel: str, gpu: list[dict] | None) -> dict:
    """A file's row when side (b) was not run (`--gpu-only`): how many distinct compilations the GPU made."""
    return {
        "file": rel,
        "shown": 0,
        "named": 0,
        "rows": [],
        "compiled": None if gpu is None else len({g["key"] for g in gpu}),
    }


RESULTS = (
    "shown & compiled",
    "named & compiled",
    "compiled, not shown",
    "shown, never compiled",
    "named, never compiled",
    "shown (offline only)",
    "named (offline only)",
)


def counts(result: dict) -> dict:
    rows = result["rows"]
    return {r: sum(x["result"] == r for x in rows) for r in RESULTS}


def markdown_gpu_only(results: list[dict], command: str) -> str:
    """The table of a `--gpu-only` run: per file, what plain Triton compiled and what irscope captured on the
    GPU, the seconds of each side, and each compilation irscope's capture missed with irscope's reason."""
    lines = [
        f"Made by `{command}` (sides (a) and (b') only: side (b) is replayed offline with --gpu-from).",
        "",
        "| file | compiled on the GPU | captured by irscope on the GPU | GPU s | irscope on GPU s | notes |",
        "|---|---|---|---|---|---|",
    ]
    total, captured, missed = 0, 0, []
    for res in sorted(results, key=lambda r: r["file"]):
        live = res.get("on_gpu")
        total += res.get("compiled") or 0
        captured += live["captured"] if live else 0
        missed += [(res["file"], m) for m in (live or {}).get("not captured") or []]
        notes = "; ".join(n for n in (res.get("gpu_error"), res.get("on_gpu_error")) if n)
        seconds = [
            f"{x:.0f}" if isinstance(x, (int, float)) else "-"
            for x in (res.get("gpu_seconds"), res.get("on_gpu_seconds"))
        ]
        lines.append(
            f"| {res['file']} | {res.get('compiled', '-')} | "
            f"{live['captured'] if live else '-'} | {seconds[0]} | {seconds[1]} | "
            f"{notes.replace('|', '/')[:300]} |"
        )
    lines += [
        f"| **total** | **{total}** | **{captured}** | | | |",
        "",
        (
            f"irscope on the GPU showed or named {captured} of the {total} compilations plain Triton made "
            f"(target all)."
        ),
    ]
    if missed:
        lines += ["", *_missed_table(missed)]
    return "\n".join(lines) + "\n"


def markdown(results: list[dict], command: str, offline_only: bool, gpu_only: bool = False) -> str:
    if gpu_only:
        return markdown_gpu_only(results, command)
    cols = list(RESULTS[-2:]) if offline_only else list(RESULTS[:5]) + ["captured on the GPU"]
    lines = [
        f"Made by `{command}`.",
        "",
        '"shown": irscope compiled it (the report shows one autotune config per specialization); "named": '
        "the JSON names that config for that launch, and `--config N` compiles it.",
        "",
        "| file | " + " | ".join(cols) + " | offline s | notes |",
        "|---|" + "---|" * (len(cols) + 2),
    ]
    total = dict.fromkeys(cols, 0)
    on_gpu = [0, 0]
    results = sorted(results, key=lambda r: r["file"])
    for res in results:
        c = counts(res)
        live = res.get("on_gpu")
        if live:
            c["captured on the GPU"] = f"{live['captured']} of {live['compiled']}"
            on_gpu[0] += live["captured"]
            on_gpu[1] += live["compiled"]
        for col in cols:
            if isinstance(c.get(col), int):
                total[col] += c[col]
        notes = "; ".join(
            n
            for n in (res.get("offline_error"), res.get("gpu_error"), res.get("on_gpu_error"))
            if n
        )
        lines.append(
            f"| {res['file']} | "
            + " | ".join(str(c.get(col, "-")) for col in cols)
            + f" | {res.get('offline_seconds') or 0:.1f} | {notes.replace('|', '/')[:300]} |"
        )
    if not offline_only:
        total["captured on the GPU"] = f"{on_gpu[0]} of {on_gpu[1]}"
    lines.append("| **total** | " + " | ".join(f"**{total[col]}**" for col in cols) + " | | |")
    if not offline_only:
        reached = total["shown & compiled"] + total["named & compiled"]
        gpu_total = reached + total["compiled, not shown"]
        if gpu_total:
            lines += [
                "",
                f"{reached} of the GPU's {gpu_total} compilations shown or named "
                f"({100 * reached / gpu_total:.1f}%; target 98%), {total['shown & compiled']} of them "
                f"compiled by default; {total['shown, never compiled']} shown that the GPU never compiled "
                f"(target 0), {total['named, never compiled']} named that it never compiled; irscope on "
                f"the GPU showed or named {on_gpu[0]} of the {on_gpu[1]} it compiled (target all).",
            ]
        missing = [
            (res["file"], r)
            for res in results
            for r in res["rows"]
            if r["result"] == "compiled, not shown"
        ]
        if missing:
            lines += ["", "| file | kernel | config | irscope's reason |", "|---|---|---|---|"]
            lines += [
                f"| {f} | {r['kernel']} | {r.get('config') or ''} | {r['reason']} |"
                for f, r in missing
            ]
        missed = [
            (res["file"], m)
            for res in results
            for m in (res.get("on_gpu") or {}).get("not captured") or []
        ]
        if missed:
            lines += ["", "Not captured by irscope on the GPU:", "", *_missed_table(missed)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2])
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "filters", nargs="*", help="keep corpus files whose path under tests/corpus contains one"
    )
    parser.add_argument(
        "--files", nargs="+", help="exactly these corpus files (paths under tests/corpus)"
    )
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds per file and side (default 300)"
    )
    parser.add_argument(
        "--target", default="sm_90", help="the GPU's target, given to irscope (default sm_90)"
    )
    parser.add_argument("--offline-only", action="store_true", help="no GPU: side (b) only")
    parser.add_argument(
        "--gpu-only",
        action="store_true",
        help="on the GPU: sides (a) and (b') only, run side by side; side (b) is left to a later "
        "--gpu-from replay (the table then counts only what the GPU compiled and captured)",
    )
    parser.add_argument(
        "--out", default=".", help="folder for coverage.json and coverage.md (default .)"
    )
    parser.add_argument("--jobs", type=int, default=1, help="files run side by side (default 1)")
    parser.add_argument(
        "--gpu-from",
        nargs="+",
        metavar="COVERAGE.json",
        help="no GPU: side (a) as an earlier GPU run recorded it (its coverage.json files), side (b) "
        "run here; compares today's code against the GPU's recorded compilations",
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help="with --gpu-from, on the GPU: side (a) as recorded, side (b') run again now (today's capture on "
        "the GPU); side (b) is left to a later --gpu-from replay of this run's coverage.json",
    )
    parser.add_argument(
        "--gpu-caches",
        metavar="DIR",
        help="side (a): keep each file's Triton, Inductor and FlagGems caches under DIR from one run to the "
        "next (a file whose run outlasts a device call goes further in the next; default: fresh caches)",
    )
    parser.add_argument(
        "--append",
        action="store_true",
        help="keep the other files' results already in --out (a corpus run split over several calls)",
    )
    args = parser.parse_args(argv)
    files = args.files or corpus.corpus_files(args.filters)
    unknown = [f for f in files if not os.path.isfile(os.path.join(corpus.CORPUS, f))]
    if unknown or not files:
        print(
            f"coverage.py: no corpus file {' '.join(unknown or args.filters)} under tests/corpus; "
            "give paths under tests/corpus",
            file=sys.stderr,
        )
        return 2
    recorded = {}
    for saved_run in args.gpu_from or []:
        recorded.update(
            {
                r["file"]: r
                for r in read_saved(saved_run)["files"]
                if r.get("gpu_compiles") is not None
            }
        )
    if args.gpu_from:
        files = [f for f in files if f in recorded]
        # the longest first, so that side by side the last to end is a short one
        files.sort(key=lambda f: -(recorded[f].get("on_gpu_seconds") or 0))
    if args.gpu_only and (args.offline_only or args.gpu_from):
        print(
            "coverage.py: --gpu-only runs the GPU's sides; it goes with neither --offline-only nor --gpu-from",
            file=sys.stderr,
        )
        return 2
    if args.live and not args.gpu_from:
        print(
            "coverage.py: --live reruns side (b') against a recorded side (a): give --gpu-from",
            file=sys.stderr,
        )
        return 2
    if not args.offline_only and (args.live or not args.gpu_from):
        import torch

        if not torch.cuda.is_available():
            print(
                "coverage.py: no GPU visible; run with --offline-only for irscope's side alone",
                file=sys.stderr,
            )
            return 2
    command = "python benchmarks/coverage.py " + " ".join(shlex.quote(a) for a in argv)
    results, saved = [], os.path.join(args.out, "coverage.json")
    if args.append and os.path.exists(saved):
        with open(saved) as f:
            before = json.load(f)
        results = [r for r in before["files"] if r["file"] not in files]
        command = before["command"] + "; " + command

    def gpu_sides(rel: str) -> tuple:
        """Sides (a) and (b') side by side, each with its own time limit; their results and seconds."""

        def timed(fn, *a, **kw):
            start = time.perf_counter()
            out = fn(*a, **kw)
            return out, round(time.perf_counter() - start, 2)

        with ThreadPoolExecutor(2) as two:
            a = two.submit(timed, compiled_on_gpu, rel, args.timeout, args.gpu_caches)
            b = two.submit(timed, shown_offline, rel, args.target, args.timeout, hide_gpu=False)
            (gpu, gpu_err), gpu_s = a.result()
            (live, live_err, _), live_s = b.result()
        return gpu, gpu_err, gpu_s, live, live_err, live_s

    gpu_sides_only = args.gpu_only or args.live  # side (b) left to a later replay

    def measure(rel: str) -> dict:
        if gpu_sides_only:
            doc, off_err, seconds = None, None, 0.0
        else:
            doc, off_err, seconds = shown_offline(rel, args.target, args.timeout)
        gpu_s = live_s = None
        if rel in recorded:  # the GPU's side as recorded then, rekeyed with today's key
            was = recorded[rel]
            gpu, gpu_err = rekeyed(was["gpu_compiles"]), was.get("gpu_error")
            live, live_err = was.get("live_doc"), was.get("on_gpu_error")
            gpu_s, live_s = was.get("gpu_seconds"), was.get("on_gpu_seconds")
            if args.live:  # today's capture on this GPU against the compilations recorded then
                start = time.perf_counter()
                live, live_err, _ = shown_offline(rel, args.target, args.timeout, hide_gpu=False)
                live_s = round(time.perf_counter() - start, 2)
        elif args.offline_only:
            gpu = gpu_err = live = live_err = None
        elif args.gpu_only:
            gpu, gpu_err, gpu_s, live, live_err, live_s = gpu_sides(rel)
        else:
            gpu, gpu_err = compiled_on_gpu(rel, args.timeout, args.gpu_caches)
            live, live_err = shown_offline(rel, args.target, args.timeout, hide_gpu=False)[:2]
        res = gpu_only_result(rel, gpu) if gpu_sides_only else compare(rel, gpu, doc, off_err)
        # recorded before side (b') was kept whole
        if rel in recorded and "live_doc" not in recorded[rel] and not args.live:
            on_gpu = recorded[rel].get("on_gpu")  # its counts as then
        else:
            on_gpu = on_gpu_counts(gpu, live, live_err)
        res.update(
            offline_error=off_err,
            gpu_error=gpu_err,
            on_gpu_error=live_err,
            offline_seconds=round(seconds, 2),
            gpu_seconds=gpu_s,
            on_gpu_seconds=live_s,
            gpu_compiles=gpu,
            missing=(doc or {}).get("missing"),
            notes=(doc or {}).get("notes"),
            on_gpu=on_gpu,
            shown_on_gpu=live and shown_keys(live),
            live_doc=compact(live),
        )
        return res

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for done in as_completed([pool.submit(measure, rel) for rel in files]):
            res = done.result()
            results.append(res)
            print(
                res["file"],
                counts(res),
                res["offline_error"] or "",
                res["gpu_error"] or "",
                file=sys.stderr,
                flush=True,
            )
            write(args.out, results, command, args.offline_only, gpu_sides_only)
    print(markdown(results, command, args.offline_only, gpu_sides_only))
    return 0


def read_saved(path: str) -> dict:
    """A coverage.json, or the same gzip-compressed (coverage.json.gz: the raw data as committed)."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return json.load(f)


def _missed_table(missed: list) -> list[str]:
    """What irscope on the GPU did not capture, a row each: file, kernel, config, irscope's reason."""
    return [
        "| file | kernel | config | irscope's reason (on the GPU) |",
        "|---|---|---|---|",
        *(
            f"| {f} | {m['kernel']} | {m.get('config') or ''} | {m['reason']} |"
            if isinstance(m, dict)
            else f"| {f} | {m} | | |"
            for f, m in missed
        ),
    ]


def write(
    folder: str, results: list[dict], command: str, offline_only: bool, gpu_only: bool = False
) -> None:
    """Rewritten after each file: a run stopped from outside keeps what it did."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "coverage.json"), "w") as f:
        json.dump(
            {
                "command": command,
                "offline_only": offline_only,
                "gpu_only": gpu_only,
                "files": results,
            },
            f,
            indent=1,
        )
    with open(os.path.join(folder, "coverage.md"), "w") as f:
        f.write(markdown(results, command, offline_only, gpu_only))


if __name__ == "__main__":
    # each file's time is a new worker's, as a user gets it: never a fork of a shared warm process
    os.environ.pop("IRSCOPE_WARM_SOCKET", None)
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
