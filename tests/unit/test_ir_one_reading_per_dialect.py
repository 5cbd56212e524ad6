"""One reading of each dialect: SASS and PTX instruction text is cut up by irscope/ir/ alone. A module
elsewhere that matches instruction lines with a regular expression of its own (an address `/*0040*/`, a guard
`@!P0` / `@%p1`, a `.loc`, an opcode such as `LDG` or `ld.global`) fails here; it should take the
instructions from ir/ptx.py or ir/sass.py. The allow-list names the few readers that must stay, and why."""

import ast
import glob
import os
import subprocess
import sys

from conftest import ROOT

# pieces of a regular expression that read SASS or PTX instruction text
MARKERS = [
    r"/\*",
    "//##",
    "U?P",
    r"@!?",
    "@(!?)",
    r"\.loc",
    r"\.file",
    "inlined_at",
    r"ld\.",
    r"st\.",
    r"cp\.async",
    "ldmatrix",
    "wgmma",
    "LDG",
    "STG",
    "LDS",
    "HMMA",
    "BAR|",
    "(U?R|",
]
# modules that may keep a reader of their own, each with the reason (none needs one today: the PTX
# executor's statement reader, analysis/ptx_program.py, cuts statements itself but tokenizes each with ir/ptx)
ALLOWED: set[str] = set()
CALLS = {"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"}


def regex_literals(source: str) -> list[str]:
    """The string literals given as the pattern of a `re.<function>(...)` call."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in CALLS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.args
        ):
            found += [
                n.value
                for n in ast.walk(node.args[0])
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            ]
    return found


def instruction_readers(source: str) -> list[str]:
    return [p for p in regex_literals(source) if any(m in p for m in MARKERS)]


def test_only_the_ir_package_reads_sass_and_ptx_instructions():
    package = os.path.join(ROOT, "irscope")
    inside = os.path.join(package, "ir", "")
    outside = {}
    for path in glob.glob(os.path.join(package, "**", "*.py"), recursive=True):
        rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
        if path.startswith(inside) or rel in ALLOWED:
            continue
        found = instruction_readers(open(path, encoding="utf-8").read())
        if found:
            outside[rel] = found
    assert not outside, outside


def test_the_allow_list_is_still_needed():
    # an allowed module that no longer reads instructions itself leaves the list
    for rel in ALLOWED:
        assert instruction_readers(open(os.path.join(ROOT, rel), encoding="utf-8").read()), rel


def test_the_check_sees_a_second_reading():
    # the scan must be able to fail: the SASS and PTX regexes irscope used to repeat are caught
    probe = (
        'import re\n_A = re.compile(r"^\\s*/\\*[0-9a-f]+\\*/\\s+(?:@(?P<pred>!?U?P[T0-9]+)\\s+)?")\n'
        'def f(line):\n    return re.match(r"\\.loc\\s+(\\d+)\\s+(\\d+)", line)\n'
        'X = re.compile(r"(LDG|STG)")\n'
    )
    assert len(instruction_readers(probe)) == 3
    assert instruction_readers('import re\nre.compile(r"tensor<([\\dx]+)x(\\w+)")\n') == []


def test_each_machine_dialect_has_its_reading_in_ir():
    modules = {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "irscope", "ir", "*.py"))}
    assert {"ptx.py", "sass.py", "amdgcn.py"} <= modules


def test_the_domain_model_and_the_readers_import_neither_torch_nor_triton():
    # Target lives in base/target.py, outside triton_compat: holding and comparing targets, and reading a
    # stage's text, need no compiler
    code = (
        "import sys, irscope.base.model, irscope.base.target, irscope.ir.ptx, irscope.ir.sass, "
        "irscope.ir.mlir, irscope.ir.llvm, irscope.ir.amdgcn, irscope.ir.normal\n"
        "print(sorted(m for m in ('torch', 'triton') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        env={**os.environ, "PYTHONPATH": ROOT},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
