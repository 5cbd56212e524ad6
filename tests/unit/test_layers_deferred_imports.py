"""The package's layers, as the code has them: every import of irscope's own modules made inside a
function says why it is not at the top (the contracts themselves run in CI: `lint-imports`)."""

import ast
import os

from conftest import ROOT

PACKAGE = os.path.join(ROOT, "irscope")
REASON = "# deferred:"


def deferred_imports(path: str) -> list[tuple[int, str]]:
    """(line, statement) of every `irscope` import inside a function of the module at `path`."""
    with open(path) as f:
        tree = ast.parse(f.read())
    found = []

    def walk(node: ast.AST, inside: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if inside and isinstance(child, (ast.Import, ast.ImportFrom)):
                names = (
                    [child.module or ""]
                    if isinstance(child, ast.ImportFrom)
                    else [a.name for a in child.names]
                )
                if any(n == "irscope" or n.startswith("irscope.") for n in names):
                    found.append((child.lineno, ast.unparse(child)))
            walk(child, nested)

    walk(tree, False)
    return found


def has_reason(lines: list[str], lineno: int) -> bool:
    """The import's own line, or the comment lines and imports right above it, say `# deferred: why`."""
    index = lineno - 1
    if REASON in lines[index]:
        return True
    index -= 1
    while index >= 0:
        text = lines[index].strip()
        if REASON in text:
            return True
        if not (text.startswith("#") or text.startswith("from ") or text.startswith("import ")):
            return False
        index -= 1
    return False


def test_every_deferred_import_of_irscope_says_why():
    modules = 0
    missing = []
    for folder, _dirs, files in os.walk(PACKAGE):
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(folder, name)
            modules += 1
            with open(path) as f:
                lines = f.read().splitlines()
            for lineno, statement in deferred_imports(path):
                if not has_reason(lines, lineno):
                    missing.append(f"{os.path.relpath(path, ROOT)}:{lineno}: {statement}")
    assert modules > 100  # the walk found the package
    assert not missing, "imports inside functions without `# deferred: why`:\n" + "\n".join(missing)


def test_the_check_finds_an_import_without_a_reason(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "def f():\n    from irscope.base import names\n\n"
        "def g():\n    # deferred: the front end paints first\n    from irscope.base import paths\n"
    )
    lines = module.read_text().splitlines()
    found = deferred_imports(str(module))
    assert [lineno for lineno, _ in found] == [2, 6]
    assert [has_reason(lines, lineno) for lineno, _ in found] == [False, True]
