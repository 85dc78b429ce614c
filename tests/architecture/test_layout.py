"""The shape of the code, checked with ``ast`` (nothing is imported): no import cycle between the modules
of ``src/cfgcheck``, counting the imports inside functions; imports inside functions only where loading
on demand is the point (the command line, the adapter registry, the rule index); the adapters in layers
(formats -> launch -> core) with no format importing another, the renderers of the input stage (``render/``)
beside the formats, and the run reaching the adapters through their registry only; no function in ``src/`` or
``rules/`` longer than 80 lines, no module in ``src/`` longer than 600 lines, and code comments that cite
upstream files or in-repository documents only."""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from pathlib import Path

from helpers import REPO

PACKAGE = REPO / "src" / "cfgcheck"
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 600

# Modules that may import other cfgcheck modules inside functions: loading on demand is what they are
# for. The console entry point and the command line import a command's modules when it runs (``cfgcheck
# --version`` imports no pipeline); the adapter registry and the rule index name their modules and
# import one when a file or a run needs it.
LAZY_BY_DESIGN = {"cfgcheck.__main__", "cfgcheck.cli", "cfgcheck.lint_command", "cfgcheck.adapters.core.registry",
                  "cfgcheck.registry"}

ADAPTERS = "cfgcheck.adapters"
LAYERS = ("formats", "launch", "core")  # each imports only the layers after it
# Format-to-format imports left between the two readers of GitOps-held chart values: where GitOps keeps
# them (``values_sources``) belongs in launch/, the production-stack ``modelSpec`` reader with its format
# alone. Rendering no longer passes through chart_values.
PENDING_FORMAT_EDGES = {
    ("cfgcheck.adapters.formats.chart_values", "cfgcheck.adapters.formats.production_stack"):
        "GitOps-held values dispatch to the production-stack reader",
    ("cfgcheck.adapters.formats.mapped", "cfgcheck.adapters.formats.chart_values"):
        "values_sources: where GitOps keeps chart values",
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources(*roots: Path) -> list[Path]:
    return sorted(p for root in roots for p in root.rglob("*.py"))


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement of a module, with whether it sits inside a function (runs when called),
    except those under ``if TYPE_CHECKING:`` (annotations only)."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []
    pending: list[tuple[ast.AST, bool]] = [(node, False) for node in tree.body]
    while pending:
        node, inside = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append((node, inside))
        elif isinstance(node, ast.If) and _is_type_checking(node):
            pending += [(child, inside) for child in node.orelse]
        else:
            nested = inside or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            pending += [(child, nested) for child in ast.iter_child_nodes(node)]
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


@functools.lru_cache(maxsize=1)
def import_edges() -> dict[str, dict[str, bool]]:
    """module -> {imported cfgcheck module: whether every import of it is inside a function} (read
    once: the tests below only read it)."""
    paths = {_module_name(p): p for p in _sources(PACKAGE)}
    known = set(paths)
    graph: dict[str, dict[str, bool]] = {}
    for module, path in paths.items():
        edges: dict[str, bool] = {}
        for node, inside in imports(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(module, path.name == "__init__.py", node, known):
                edges[target] = edges.get(target, True) and inside
        graph[module] = edges
    return graph


def import_graph() -> dict[str, set[str]]:
    return {module: set(edges) for module, edges in import_edges().items()}


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


def test_the_import_graph_has_no_cycle_counting_imports_inside_functions() -> None:
    graph = import_graph()
    assert len(graph) > 50 and graph["cfgcheck.lint"], "the graph was not built"
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_imports_inside_functions_only_where_loading_on_demand_is_the_point() -> None:
    """Nowhere else: a module that needs another only for an uncommon case is handed it (the Hub client by
    the command line, a launch helper by the adapter registry, the rule context's facts by the rule index)."""
    lazy = {(module, target) for module, edges in import_edges().items() if module not in LAZY_BY_DESIGN
            for target, inside in edges.items() if inside}
    assert not lazy, "import these at the top of the module:\n" + "\n".join(
        f"{module} -> {target}" for module, target in sorted(lazy))


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 3 and module.startswith(ADAPTERS + ".") and parts[2] in LAYERS else None


def test_adapters_import_downward_only_and_no_format_imports_another() -> None:
    """formats -> launch -> core: a module imports its own layer or the ones after it, and
    a format module imports no other format (what two formats share belongs in launch or core)."""
    wrong = []
    for module, targets in import_graph().items():
        here = _layer(module)
        for target in targets:
            there = _layer(target)
            if here is None or there is None or (module, target) in PENDING_FORMAT_EDGES:
                continue
            if LAYERS.index(there) < LAYERS.index(here) or here == there == "formats":
                wrong.append(f"{module} -> {target}")
    assert not wrong, "\n".join(sorted(wrong))
    graph = import_graph()
    assert not [edge for edge in PENDING_FORMAT_EDGES if edge[1] not in graph[edge[0]]], "drop the pending entry"


RENDER = "cfgcheck.render"
# The run: it reaches the adapters through their registry alone (which reads rendered files too).
RUN = ("cfgcheck.lint", "cfgcheck.diff", "cfgcheck.lint_command", "cfgcheck.discover")


def test_the_input_stage_renders_before_the_adapters_and_the_run_asks_the_registry() -> None:
    """The renderers (``render/``) stand where the formats do: they may use launch and core (the shell
    words and document contexts a source map is built from), never a format, and no adapter imports them
    (the registry loads one by name when it reads a file it renders). The lint run, diff mode, the lint
    command and discovery import no adapter module but the registry."""
    graph = import_graph()
    wrong = [f"{module} -> {target}" for module, targets in graph.items() for target in targets
             if (module.startswith(RENDER + ".") and _layer(target) == "formats")
             or (module.startswith(ADAPTERS + ".") and target.startswith(RENDER))
             or (module in RUN and target.startswith(ADAPTERS + ".") and target != f"{ADAPTERS}.core.registry")]
    assert not wrong, "\n".join(sorted(wrong))
    assert {f"{RENDER}.kustomize", f"{RENDER}.helm", f"{RENDER}.source_map"} <= set(graph)


def test_every_adapter_module_is_in_a_layer() -> None:
    stray = [module for module in import_graph() if module.startswith(ADAPTERS + ".")
             and _layer(module) is None and module.rsplit(".", 1)[-1] not in LAYERS]
    assert not stray, stray


def test_only_the_entry_point_imports_the_cli() -> None:
    """Even lazily: the command line sits on top, the bots and the lint run never reach back into it."""
    importers = [module for module, targets in import_graph().items() if "cfgcheck.cli" in targets]
    assert importers == ["cfgcheck.__main__"]


def test_a_cycle_is_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_an_import_inside_a_function_is_counted_and_one_for_annotations_is_not() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nimport a\nif TYPE_CHECKING:\n    import b\n"
                     "def f():\n    import c\n    return lambda: __import__('d')\nclass K:\n    def m(self):\n"
                     "        from . import e\n")
    found = {(getattr(node, "module", None) or node.names[0].name, inside) for node, inside in imports(tree)}
    assert found == {("typing", False), ("a", False), ("c", True), ("e", True)}


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


def test_no_code_names_an_issue_by_number() -> None:
    """Code says why in its own words; an issue number means nothing to a reader of a clone."""
    named = [f"{path.relative_to(REPO)}:{line}" for path in _sources(PACKAGE, REPO / "rules", REPO / "scripts", REPO / "bench",
                                                                     REPO / "tests")
             for line, text in _comments_and_docstrings(path) if re.search(r"\bissues? #?\d+", text, re.I)]
    assert not named, "\n".join(named)
