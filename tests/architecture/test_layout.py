"""The shape of the code, checked with ``ast`` (nothing is imported): no import cycle between the modules
of ``src/cfgcheck``, no function in ``src/`` or ``rules/`` longer than 80 lines, no module in ``src/``
longer than 600 lines, and code comments that cite upstream files or in-repository documents only."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from helpers import REPO

PACKAGE = REPO / "src" / "cfgcheck"
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 600


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py"))


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports run when the module is imported: top level, and inside top-level ``if``/``try`` blocks,
    but not under ``if TYPE_CHECKING:`` (annotations only) and not inside functions (a lazy import runs
    when the function is called, after every module has finished loading, so it cannot close a cycle)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            pending += node.body + node.orelse
        elif isinstance(node, ast.Try):
            pending += node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
    return found


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> set[str]:
    """The cfgcheck modules an import statement names."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = module.split(".") if is_package else module.split(".")[:-1]
        if node.level:
            base = base[: len(base) - node.level + 1]
            anchor = ".".join(base + ([node.module] if node.module else []))
        else:
            anchor = node.module or ""
        # ``from pkg import name``: the submodule pkg.name when there is one, else pkg itself
        names = [f"{anchor}.{alias.name}" if f"{anchor}.{alias.name}" in known else anchor
                 for alias in node.names]
    # As import-linter counts them: the module named, not the packages above it, whose ``__init__``
    # Python runs first anyway and which re-export their submodules.
    return {name for name in names if name in known} - {module}


def import_graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in _sources(PACKAGE)}
    known = set(paths)
    graph = {}
    for module, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[module] = set()
        for node in _module_level_imports(tree):
            graph[module] |= _targets(module, path.name == "__init__.py", node, known)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_graph_has_no_cycle() -> None:
    graph = import_graph()
    assert len(graph) > 50 and graph["cfgcheck.lint"], "the graph was not built"
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_only_the_entry_point_imports_the_cli() -> None:
    """Even lazily: the command line sits on top, the bots and the lint run never reach back into it."""
    importers = [_module_name(path) for path in _sources(PACKAGE)
                 if any(isinstance(node, ast.ImportFrom) and node.module in ("cli", "cfgcheck.cli")
                        or isinstance(node, ast.Import) and "cfgcheck.cli" in [a.name for a in node.names]
                        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))]
    assert importers == ["cfgcheck.__main__"]


def test_a_cycle_is_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def _function_lengths(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # the body, from its first statement (the docstring included) to its last line
            yield node.name, node.lineno, node.end_lineno - node.body[0].lineno + 1


def test_no_function_is_longer_than_80_lines() -> None:
    long = [f"{path.relative_to(REPO)}:{line} {name} has {length} lines"
            for path in _sources(PACKAGE, REPO / "rules") for name, line, length in _function_lengths(path)
            if length > MAX_FUNCTION_LINES]
    assert not long, "\n".join(long)


def test_no_module_is_longer_than_600_lines() -> None:
    # generated data lives in .json files (data/, engines/catalogs/), which this does not count
    long = [f"{path.relative_to(REPO)} has {lines} lines" for path in _sources(PACKAGE)
            if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES]
    assert not long, "\n".join(long)


# documents beside the checkout that a user's clone does not have
OUTSIDE_DOCUMENTS = re.compile(r"\.\./shared|ENGINE-FACTS|DESIGN\.md|DESIGN §|/work/")


def _comments_and_docstrings(path: Path):
    text = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring:
                yield getattr(node, "lineno", 1), docstring


def test_comments_cite_upstream_or_in_repository_documents() -> None:
    outside = [f"{path.relative_to(REPO)}:{line}: {OUTSIDE_DOCUMENTS.search(text).group(0)}"
               for path in _sources(PACKAGE, REPO / "rules", REPO / "scripts")
               for line, text in _comments_and_docstrings(path) if OUTSIDE_DOCUMENTS.search(text)]
    assert not outside, "\n".join(outside)
