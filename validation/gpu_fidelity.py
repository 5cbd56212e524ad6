"""Prove on a GPU that irscope's offline compile is what the GPU runs.

For every kernel file in kernels/ (or the files given):
  1. "real": run the file as-is on the GPU with plain Triton; collect every kernel the JIT compiled
     (its stages, and the driver's register count `n_regs`);
  2. "offline": in a process that sees no GPU (CUDA_VISIBLE_DEVICES=""), let irscope capture the
     launches on CPU and compile them for the GPU's target;
  3. compare: each stage byte for byte, and irscope's registers against the driver's n_regs.

The two sides use separate Triton caches, so neither can reuse the other's output. A file that calls
torch.compile: each side gets Inductor's cache at one path (the path is in the IR's debug locations), moved
aside after the side ends so that the next side generates its own kernels; the real side compiles with
TORCHINDUCTOR_COMPILE_THREADS=1, so Inductor's triton.compile calls happen where they are recorded.
Writes a Markdown table (stdout, and --out FILE). Run from the repository root:
    python3 validation/gpu_fidelity.py --out $OUT/fidelity.md
    FIDELITY_FIRST_POINT=1 python3 validation/gpu_fidelity.py tests/corpus/*/*.py tests/corpus/*/*/*.py --jobs 6
(FIDELITY_FIRST_POINT: the real run's benchmark sweeps stop at their first point, as on the virtual GPU.)

A file whose real run takes most of a device call (tutorial 09) is compared in two steps, one file at a time:
    FIDELITY_REAL_RECORD=real.json.xz FIDELITY_REAL_ONLY=1 python3 validation/gpu_fidelity.py FILE   # on the GPU
    FIDELITY_REAL_RECORD=real.json.xz python3 validation/gpu_fidelity.py FILE     # anywhere, no GPU needed
The first writes what the real run compiled (its device and versions with it) and stops; the second reads it
instead of running the file on a GPU. Both sides must see the file, and Triton's own files, at the same paths
(the IR's debug locations hold them): validation/data/h200_tutorial09_fidelity/call3/README.md says how.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
IR_STAGES = ("ttir", "ttgir", "llir", "ptx")
CHILD_TIMEOUT_S = int(os.environ.get("FIDELITY_CHILD_TIMEOUT", "300"))


def collect_real(path: str, out_json: str) -> None:
    """Child process, GPU visible: run the file with plain Triton, dump what its JIT compiled."""
    from triton.runtime.autotuner import Autotuner, Heuristics
    from triton.runtime.jit import JITFunction

    sys.path.insert(0, ROOT)
    sys.path.insert(0, os.path.join(ROOT, "validation"))
    from sass_listing import cuobjdump_instructions, without_file_times

    from irscope.engine.toolchain import disassemble
    from irscope.engine.triton_compat import find_tool

    compiled_here = _keep_compiles()
    namespace = run_as_written(path)
    kernels = []
    seen = set()
    # Every kernel the JIT compiled, wherever it is defined: the file's own, a sibling module's, a library's.
    import gc

    from triton.compiler.compiler import CompiledKernel
    everywhere, loose = [], []
    for obj in gc.get_objects():
        try:
            if isinstance(obj, JITFunction):
                everywhere.append(obj)
            elif isinstance(obj, CompiledKernel):
                loose.append(obj)
        except ReferenceError:  # a weak proxy whose object is gone
            pass
    loose += compiled_here  # the same object twice is counted once below

    def describe(name: str, compiled, via: str) -> dict:
        import base64
        import hashlib
        load_error = None
        try:
            compiled._init_handles()
        except Exception as exc:  # noqa: BLE001 - e.g. OutOfResources: the autotuner skipped this config too
            load_error = f"{type(exc).__name__}: {exc}"
        stages = {s: compiled.asm[s] for s in IR_STAGES if s in compiled.asm}  # Gluon: no ttir
        stages["sass"] = disassemble(compiled.asm["cubin"])
        # the real cubin read by a second disassembler, independent of irscope's SASS path
        sass_cuobjdump = cuobjdump_instructions(compiled.asm["cubin"], find_tool("cuobjdump"))
        return {"sass_cuobjdump": {str(a): text for a, text in sass_cuobjdump.items()},"name": name, "hash": compiled.metadata.hash, "stages": stages, "via": via,
                "metadata": {k: repr(v) for k, v in compiled.metadata._asdict().items()},
                "n_regs": None if load_error else compiled.n_regs,
                "n_spills": None if load_error else compiled.n_spills, "load_error": load_error,
                "cubin_sha": hashlib.sha256(compiled.asm["cubin"]).hexdigest(),
                "cubin_sha_without_times": hashlib.sha256(without_file_times(compiled.asm["cubin"])).hexdigest(),
                "cubin_b64": base64.b64encode(compiled.asm["cubin"]).decode()}

    collected = set()
    for value in [*namespace.values(), *everywhere]:
        while isinstance(value, (Autotuner, Heuristics)):
            value = value.fn
        if not isinstance(value, JITFunction) or id(value) in seen:
            continue
        seen.add(id(value))
        for device_cache in value.device_caches.values():
            for compiled in device_cache[0].values():
                collected.add(id(compiled))
                kernels.append(describe(value.fn.__name__, compiled, "by the JIT"))
    # Kernels compiled outside the JIT's cache: torch.compile's Inductor compiles a file's own @triton.jit
    # kernels (and its generated ones) itself, with triton.compile.
    for compiled in loose:
        if id(compiled) not in collected:
            collected.add(id(compiled))
            kernels.append(describe(compiled.metadata.name, compiled,
                                    "outside the JIT (torch.compile, or triton.compile called directly)"))
    with open(out_json, "w") as f:
        json.dump(kernels, f)


def _write_record(real_json: str, record: str) -> int:
    """The real side's kernels, with the GPU and versions that compiled them, xz-compressed at `record`; each
    cubin by its hash alone (its SASS, both disassemblies, is kept), so that a device call's file brings back
    a tutorial's hundred autotune compilations."""
    import lzma

    import torch
    import triton

    kernels = [{k: v for k, v in kernel.items() if k != "cubin_b64"} for kernel in json.load(open(real_json))]
    with lzma.open(record, "wt", encoding="utf-8") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "triton": triton.__version__,
                   "triton_file": triton.__file__, "torch": torch.__version__, "kernels": kernels}, f)
    return len(kernels)


def _read_record(record: str, real_json: str) -> dict:
    """A record _write_record made (in an earlier device call), written out as the real side's JSON."""
    import lzma

    with lzma.open(record, "rt", encoding="utf-8") as f:
        doc = json.load(f)
    with open(real_json, "w") as f:
        json.dump(doc["kernels"], f)
    return {k: v for k, v in doc.items() if k != "kernels"}


def run_as_written(path: str) -> dict:
    """Run a file as `python FILE` would, GPU visible, and wait for the GPU; its globals (empty when it ended
    itself with sys.exit(0)). Shared with benchmarks/coverage.py, whose GPU side runs files the same way."""
    import runpy

    import torch
    sys.path.insert(0, ROOT)
    sys.path.insert(0, os.path.dirname(path))
    if os.environ.get("FIDELITY_FIRST_POINT"):
        # benchmark sweeps at their first point only, as irscope's virtual GPU runs them, so that a
        # tutorial's sweep takes seconds: the launches of that point are real ones all the same
        import triton.testing

        from irscope.engine.triton_compat.benchmark_sweep import run_first_point
        triton.testing.Mark.run = run_first_point
    from irscope.engine.capture.run import no_terminal
    sys.argv = [path]  # the file's own argument parser must not see this script's arguments
    with no_terminal([], path):  # a file's ipdb.set_trace() / input() would wait for a terminal
        try:
            namespace = runpy.run_path(path, run_name="__main__")
        except SystemExit as exc:  # a file that ends itself with sys.exit(): what it compiled still counts
            if exc.code not in (None, 0):
                raise
            namespace = {}
        except Exception as exc:
            # FIDELITY_AFTER_ERROR=1: a file that fails after its launches (tutorial 09 reads its profile with
            # hatchet at its last line) is compared on what it compiled until then, as irscope shows it
            if not os.environ.get("FIDELITY_AFTER_ERROR"):
                raise
            print(f"the file raised {type(exc).__name__}: {exc}; comparing what it compiled before", file=sys.stderr)
            namespace = {}
    torch.cuda.synchronize()
    return namespace


def _keep_compiles() -> list:
    """Every kernel `triton.compile` returns in this process, kept alive: Inductor compiles with
    triton.compile outside Triton's JIT and may keep only a launcher made from the binary, not the
    CompiledKernel. Its compiles happen in this process because `_child` runs the real side with
    TORCHINDUCTOR_COMPILE_THREADS=1 (otherwise a pool of compile workers does them, unseen here)."""
    import triton

    kept: list = []
    original = triton.compile

    def compile_and_keep(*args, **kwargs):
        compiled = original(*args, **kwargs)
        kept.append(compiled)
        return compiled

    triton.compile = compile_and_keep
    return kept


def collect_offline(path: str, target: str, out_json: str) -> None:
    """Child process, no GPU visible: irscope's capture and offline compile, every autotune config."""
    import hashlib

    sys.path.insert(0, ROOT)
    import torch

    from irscope.base.errors import IrscopeError
    from irscope.engine.compile import ahead
    from irscope.engine.session import open_file
    if os.environ.get("FIDELITY_FIRST_POINT") and torch.cuda.is_available():
        # irscope with the GPU visible runs a benchmark sweep for real, until its capture budget stops the
        # run (3 s without a new launch): its first point only, as the real run here and the virtual GPU do
        import triton.testing

        from irscope.engine.triton_compat.benchmark_sweep import run_first_point
        triton.testing.Mark.run = run_first_point

    sys.path.insert(0, os.path.join(ROOT, "validation"))
    from sass_listing import without_file_times

    ws = open_file(path, target=target)
    comps, failed = [], []
    launched = [k for k in ws.kernels if any(launch.kernel is k for launch in ws.launches)]
    for kernel in launched:
        for config in range(len(kernel.autotune_configs or [None])):
            try:
                comps.extend(ws.compile(kernel, config=config if kernel.is_autotuned else None))
            except IrscopeError as exc:  # a config the capture never reached: that config's row, not the file's end
                failed.append({"name": kernel.name, "config": config, "error": f"not compiled: {exc}"})
    out = list(failed)
    for comp in comps:
        if comp.failure is not None:
            out.append({"name": comp.kernel.name, "error": comp.failure.message})
            continue
        out.append({"name": comp.kernel.name, "hash": comp.metadata["hash"],
                    "metadata": {k: repr(v) for k, v in comp.metadata.items()},
                    "stages": {s: comp.stage(s) for s in (*IR_STAGES, "sass") if _has_stage(comp, s)},
                    "registers": comp.resources.registers, "spills": comp.resources.spills,
                    "cubin_sha": hashlib.sha256(comp.asm["cubin"]).hexdigest(),
                    "cubin_sha_without_times": hashlib.sha256(without_file_times(comp.asm["cubin"])).hexdigest(),
                    "cubin_b64": __import__("base64").b64encode(comp.asm["cubin"]).decode(),
                    "config": comp.launch.autotune_index,
                    # which steps a compile-ahead child did (engine/compile/ahead.py): "cs" compiled and disassembled
                    "ahead": ahead.progress(ahead.compilation_key(comp.kernel.jit, comp.target, comp.spec))})
    with open(out_json, "w") as f:  # with what the run said: a capture stopped early, the device it saw
        json.dump({"compilations": out, "notes": ws.notes, "warning": ws.run_warning, "device": ws.device}, f)


def _has_stage(comp, stage: str) -> bool:
    """Whether irscope shows `stage` for this compilation (a Gluon kernel starts at TTGIR: no TTIR)."""
    from irscope.base.errors import IrscopeError
    try:
        comp.stage(stage)
    except IrscopeError:
        return False
    return True


def _child(mode: str, path: str, target: str, cache: str, out_json: str, hide_gpu: bool,
           inductor_cache: str | None = None) -> str:
    env = dict(os.environ, TRITON_CACHE_DIR=cache, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    if hide_gpu:
        env["CUDA_VISIBLE_DEVICES"] = ""
    if inductor_cache is not None:
        # Inductor's kernel modules at one path on every side (the path is in the IR's debug locations),
        # and, on the real side, Inductor's compiles in the process that records them (_keep_compiles)
        env["TORCHINDUCTOR_CACHE_DIR"] = inductor_cache
        if mode == "real":
            env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    try:
        done = subprocess.run([sys.executable, __file__, "--child", mode, path, target, out_json], env=env,
                              capture_output=True, text=True, cwd=ROOT, timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return f"timed out after {CHILD_TIMEOUT_S} s"
    if done.returncode != 0:
        return (done.stderr or done.stdout).strip().splitlines()[-1] if (done.stderr or done.stdout) else "failed"
    return ""


def _set_aside(folder: str, side: str) -> None:
    """Move a side's Inductor cache out of the way, so that the next side starts with none at that path."""
    import shutil

    if os.path.isdir(folder):
        shutil.rmtree(f"{folder}-{side}", ignore_errors=True)
        os.rename(folder, f"{folder}-{side}")


def _kernel_arguments(ttir: str) -> list[str]:
    """The kernel's arguments as TTIR declares them (type and specialization attributes), debug locations
    left out: `%n: i32 {tt.divisibility = 16 : i32}` (`%arg2` in older Triton)."""
    import re

    line = next((l for l in ttir.splitlines() if "tt.func" in l and "public" in l), "")
    inside = line[line.find("(") + 1:line.rfind(")")] if "(" in line else ""
    inside = re.sub(r"\s*loc\([^()]*(\([^()]*\)[^()]*)*\)", "", inside)
    return [a.strip().rstrip(",") for a in re.split(r",\s*(?=%[\w.$-]+:)", inside) if a.strip()]


def _signature_difference(offline_ttir: str, real_ttir: str) -> str:
    """Where two compilations of one kernel differ in the arguments they were specialized for."""
    a, b = _kernel_arguments(offline_ttir), _kernel_arguments(real_ttir)
    if len(a) != len(b):
        return f"{len(a)} arguments offline vs {len(b)} in the real launch (constexprs or 1s differ)"
    diff = [f"offline `{x}` vs real `{y}`" for x, y in zip(a, b) if x != y]
    return "arguments: " + "; ".join(diff) if diff else "same arguments (another difference in the TTIR)"


def compare(path: str, target: str) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        real_json, off_json = os.path.join(tmp, "real.json"), os.path.join(tmp, "offline.json")
        inductor = os.path.join(tmp, "inductor")
        record = os.environ.get("FIDELITY_REAL_RECORD")
        recorded = None
        if record and os.path.exists(record):  # the real side, recorded on a GPU in an earlier call
            recorded = _read_record(record, real_json)
        else:
            err = _child("real", path, target, os.path.join(tmp, "cache-real"), real_json, hide_gpu=False,
                         inductor_cache=inductor)
            if err:
                return [{"file": os.path.relpath(path, ROOT), "kernel": "-", "result": f"real run failed: {err}"}]
            _set_aside(inductor, "real")  # each side generates its own kernels, at the same path
            if record:
                count = _write_record(real_json, record)
                if os.environ.get("FIDELITY_REAL_ONLY"):
                    return [{"file": os.path.relpath(path, ROOT), "kernel": "-",
                             "result": f"real side recorded: {count} compilations in {record}"}]
        err = _child("offline", path, target, os.path.join(tmp, "cache-offline"), off_json, hide_gpu=True,
                     inductor_cache=inductor)
        if err:
            return [{"file": os.path.relpath(path, ROOT), "kernel": "-", "result": f"offline failed: {err}"}]
        _set_aside(inductor, "offline")
        if os.environ.get("FIDELITY_OFFLINE_SAVE"):  # irscope's side kept, to compare again without compiling
            import shutil

            shutil.copy(off_json, os.environ["FIDELITY_OFFLINE_SAVE"])
        on_gpu_json = os.path.join(tmp, "on_gpu.json")
        skip_on_gpu = bool(os.environ.get("FIDELITY_SKIP_ON_GPU") or recorded)
        if skip_on_gpu:  # a file whose real run takes most of a device call, or no GPU here
            on_gpu_err = "not run (FIDELITY_SKIP_ON_GPU)" if not recorded else "not run (the real side was recorded)"
        else:
            on_gpu_err = _child("offline", path, target, os.path.join(tmp, "cache-on-gpu"), on_gpu_json,
                                hide_gpu=False, inductor_cache=inductor)
        on_gpu_doc = json.load(open(on_gpu_json)) if not on_gpu_err and os.path.exists(on_gpu_json) else {}
        on_gpu = on_gpu_doc.get("compilations", [])
        if not os.path.exists(real_json) or not os.path.exists(off_json):
            return [{"file": os.path.relpath(path, ROOT), "kernel": "-",
                     "result": "a run ended without writing its kernels (the file exited early)"}]
        real = json.load(open(real_json))
        offline_doc = json.load(open(off_json))
    offline = offline_doc["compilations"]
    uses_torch_compile = "torch.compile" in open(path, encoding="utf-8", errors="replace").read()
    said = {"offline notes": offline_doc.get("notes"), "offline device": offline_doc.get("device"),
            "on-GPU notes": on_gpu_doc.get("notes"), "on-GPU error": on_gpu_err or None,
            "real side recorded": recorded}
    if not offline:
        why = ""
        if not real and uses_torch_compile:
            why = (" (its kernels go through torch.compile: Inductor compiles them itself, outside Triton's JIT; "
                   "none was seen in the real run's process either)")
        return [{"file": os.path.relpath(path, ROOT), "kernel": "-", "raw": said,
                 "result": f"offline compiled nothing; the real run compiled {len(real)} kernel(s) through "
                           f"Triton's JIT{why}"}]
    for comp in offline:
        row = {"file": os.path.relpath(path, ROOT), "kernel": comp["name"]}
        if comp.get("config") is not None:
            row["kernel"] += f" (config {comp['config']})"
        if "error" in comp:
            rows.append({**row, "result": f"offline compile error: {comp['error']}"})
            continue
        match = next((r for r in real if r["name"] == comp["name"] and _same_compilation(r, comp, recorded)), None)
        if match is None:
            candidates = [r for r in real if r["name"] == comp["name"]]
            why = "; ".join(
                ", ".join(f"{k}: {comp['metadata'].get(k)} vs {r['metadata'].get(k)}"
                          for k in sorted(set(comp["metadata"]) | set(r["metadata"]))
                          if k != "hash" and comp["metadata"].get(k) != r["metadata"].get(k))
                or "same metadata; " + _signature_difference(*(x["stages"].get("ttir") or x["stages"]["ttgir"]
                                                                    for x in (comp, r)))
                for r in candidates)
            keep = os.environ.get("FIDELITY_MISMATCH_DIR")
            if keep:  # leave both sides' IR behind, to diff by hand
                for i, r in enumerate([comp, *candidates]):
                    for stage in ("ttir", "ttgir"):
                        if stage not in r["stages"]:
                            continue
                        with open(os.path.join(keep, f"{comp['name']}.{i}.{stage}"), "w") as f:
                            f.write(r["stages"][stage])
            if not candidates and uses_torch_compile:
                why = ("the file launches it inside torch.compile: on the GPU, Inductor compiled it with "
                       "options of its own or not at all, and no compilation of this name was found")
            rows.append({**row, "result": f"no real launch compiled this specialization ({len(candidates)} "
                                          f"of this kernel: {why})"})
            continue
        # a stage neither side has (a Gluon kernel's TTIR) is left blank; one side's alone differs
        identical = {s: comp["stages"].get(s) == match["stages"].get(s) for s in (*IR_STAGES, "sass")
                     if s in comp["stages"] or s in match["stages"]}
        # irscope's offline SASS against cuobjdump's reading of the real cubin, instruction by instruction
        sys.path.insert(0, os.path.join(ROOT, "validation"))
        from sass_listing import instructions
        identical["sass (cuobjdump)"] = ({str(a): t for a, t in instructions(comp["stages"]["sass"]).items()}
                                         == match.get("sass_cuobjdump"))
        row.update({s: "identical" if ok else "DIFFERENT" for s, ok in identical.items()})
        if recorded is None:
            row["cubin"] = "identical" if comp["cubin_sha"] == match["cubin_sha"] else "DIFFERENT"
        elif "cubin_sha_without_times" in match:  # another machine's files: their times in the line tables differ
            row["cubin"] = ("identical but for file times" if comp["cubin_sha_without_times"]
                            == match["cubin_sha_without_times"] else "DIFFERENT")
        else:
            row["cubin"] = "not compared (the record holds the cubin's hash with the file times of its machine)"
        row["raw"] = {"offline": {"hash": comp["hash"], "cubin_sha256": comp["cubin_sha"], "registers": comp["registers"],
                                  "spills": comp["spills"]},
                      "real": {"hash": match["hash"], "cubin_sha256": match["cubin_sha"], "n_regs": match["n_regs"],
                               "n_spills": match["n_spills"], "via": match.get("via"),
                               "load_error": match.get("load_error")}}
        cubin_ok = row["cubin"] != "DIFFERENT"
        if row["cubin"] == "DIFFERENT":  # both binaries, to see which ELF sections differ
            row["raw"]["offline"]["cubin_b64"] = comp.get("cubin_b64")
            row["raw"]["real"]["cubin_b64"] = match.get("cubin_b64")
        loaded = match.get("load_error") is None
        row["registers"] = f"{comp['registers']} / {match['n_regs'] if loaded else 'not loaded'}"
        row["spills"] = f"{comp['spills']} / {match['n_spills'] if loaded else 'not loaded'}"
        twin = next((c for c in on_gpu if c.get("hash") == comp["hash"]), None)
        row["irscope on GPU"] = ("not run" if skip_on_gpu else
                                 "identical" if twin and twin["stages"] == comp["stages"] else "DIFFERENT")
        if twin is None and not skip_on_gpu:  # why irscope with the GPU visible has no such compilation, in its own words
            row["note"] = (f"irscope on GPU failed: {on_gpu_err}" if on_gpu_err else
                           "irscope on GPU did not capture this specialization; its notes: "
                           + ("; ".join(on_gpu_doc.get("notes") or []) or "none"))
        row["raw"]["said"] = said
        row["compiled by"] = {"cs": "child", "c": "child (SASS: irscope)"}.get(comp.get("ahead") or "", "irscope")
        same = all(identical.values()) and cubin_ok and (skip_on_gpu or row["irscope on GPU"] == "identical")
        if not loaded:  # the driver refused the binary (too much shared memory): no registers to compare
            row["result"] = "identical, not loadable" if same else "FAIL"
            row["note"] = f"the real run's driver refused to load it: {match['load_error']}"
        else:
            row["result"] = "PASS" if same and comp["registers"] == match["n_regs"] else "FAIL"
        rows.append(row)
    # and the other way round: what the real run compiled that irscope offline did not
    for r in real:
        if not any(c.get("name") == r["name"] and _same_compilation(r, c, recorded) for c in offline if "stages" in c):
            rows.append({"file": os.path.relpath(path, ROOT), "kernel": r["name"], "raw": {**said, "via": r.get("via")},
                         "result": "the real run compiled this specialization; irscope offline did not",
                         "note": f"compiled {r.get('via') or 'by the JIT'}; offline notes: "
                                 + ("; ".join(said["offline notes"] or []) or "none")})
    return rows


# metadata written alike on both sides (integers; a record's lists are tuples offline)
_CONFIG_METADATA = ("num_warps", "num_stages", "num_ctas", "maxnreg", "shared", "tmem_size", "global_scratch_size")


def _same_compilation(real: dict, offline: dict, recorded: dict | None) -> bool:
    """Whether a real compilation and an offline one are the same specialization: the same Triton hash, or,
    against a record made on another machine, the same first IR (TTIR; TTGIR for Gluon) and the same options
    an autotune config sets outside the IR, and what the compile found (_CONFIG_METADATA). A record's hashes
    cannot match: Triton's hash covers its install (libtriton.so), which differs between Python versions'
    wheels of one release. A first IR that differs leaves both unmatched, each in a row of its own."""
    if recorded is None:
        return real["hash"] == offline.get("hash")
    stage = "ttir" if "ttir" in real["stages"] else "ttgir"

    def options(compilation: dict) -> list:  # autotune configs that differ in these alone share a TTIR
        return [compilation.get("metadata", {}).get(k) for k in _CONFIG_METADATA]

    return real["stages"].get(stage) == offline.get("stages", {}).get(stage) and options(real) == options(offline)


def compare_safely(path: str, target: str) -> list[dict]:
    """compare(), with a failure of this script's own made a row of its file rather than the end of the run."""
    try:
        return compare(path, target)
    except Exception as exc:  # noqa: BLE001
        return [{"file": os.path.relpath(path, ROOT), "kernel": "-",
                 "result": f"gpu_fidelity.py failed on this file: {type(exc).__name__}: {exc}"}]


def markdown(rows: list[dict], target: str) -> str:
    import torch
    import triton
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    # a record compare() read (each row keeps what it says of itself): the table names where the real side ran
    real = next((r["raw"]["said"]["real side recorded"] for r in rows
                 if (r.get("raw") or {}).get("said", {}).get("real side recorded")), None)
    if real is not None:
        gpu += (f" (the real side read from {os.path.basename(os.environ['FIDELITY_REAL_RECORD'])}: recorded on "
                f"{real['device']}, Triton {real['triton']}, PyTorch {real['torch']})")
    head = (f"Run {datetime.date.today().isoformat()} on {gpu}, Triton {triton.__version__}, "
            f"PyTorch {torch.__version__}, target {target}. Registers and spills: irscope (offline) / "
            f"driver (real launch). Stages: irscope's offline compile (no GPU visible, launch captured in the "
            f"interpreter) against the real launch's. 'irscope on GPU': irscope with the GPU visible "
            f"(launch captured for real) gives the same text as offline. 'sass (cuobjdump)': irscope's offline "
            f"SASS against `cuobjdump -sass` of the real cubin, instruction by instruction. 'compiled by': offline, whether a "
            f"compile-ahead child (irscope/engine/compile/ahead.py) compiled and disassembled it while the file ran, the "
            f"text then read back from Triton's cache, or irscope's own compile did.\n\n")
    cols = ["file", "kernel", *IR_STAGES, "sass", "sass (cuobjdump)", "cubin", "registers", "spills", "irscope on GPU", "compiled by",
            "result", "note"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in rows:
        lines.append("| " + " | ".join(str(row.get(c, "")).replace("|", "\\|").replace("\n", " ") for c in cols)
                     + " |")
    return head + "\n".join(lines) + "\n"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        mode, path, target, out_json = sys.argv[2:6]
        if mode == "real":
            collect_real(path, out_json)
        else:
            collect_offline(path, target, out_json)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--target", default="sm_90")
    parser.add_argument("--out")
    parser.add_argument("--jobs", type=int, default=1, help="files compared at once (each in its own processes)")
    args = parser.parse_args()
    files = args.files or sorted(glob.glob(os.path.join(ROOT, "kernels", "*.py")))
    from concurrent.futures import ThreadPoolExecutor, as_completed
    done: dict[int, list[dict]] = {}

    def in_order() -> list[dict]:
        return [row for i in sorted(done) for row in done[i]]

    def write(rows: list[dict]) -> str:
        text = markdown(rows, args.target)
        if args.out:  # rewritten as each file finishes: a run stopped from outside keeps what it did
            with open(args.out, "w") as f:
                f.write(text)
            with open(os.path.splitext(args.out)[0] + ".json", "w") as f:  # the raw data the table was made from
                json.dump(rows, f, indent=1)
        return text

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {pool.submit(compare_safely, os.path.abspath(p), args.target): i for i, p in enumerate(files)}
        for future in as_completed(futures):
            done[futures[future]] = found = future.result()
            for row in found:
                print({k: v for k, v in row.items() if k != "raw"}, file=sys.stderr, flush=True)
            write(in_order())
    rows = in_order()
    print(write(rows))
    return 0 if all(r.get("result") == "PASS" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
