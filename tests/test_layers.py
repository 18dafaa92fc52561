"""The layers, enforced: every import points down and no module import cycle exists.

common <- sandbox <- measure, perfdata <- alignment, kernelenv <- evaluation <- grpo <- config <- flows
<- cli (siblings may not import each other); every module is ``perfalign.<package>...``. Function-local
imports count too (a deferred import is still a dependency); ``if TYPE_CHECKING:`` imports count
only for the circles inside a package: no module circle, and a package's parts (its modules and
subpackages) import each other in one direction only."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"common": 0, "sandbox": 1, "measure": 2, "perfdata": 2, "alignment": 3, "kernelenv": 3, "evaluation": 4,
          "grpo": 5, "config": 6, "flows": 7, "cli": 8}


def _module(path: Path) -> str:
    parts = ["perfalign", *path.relative_to(ROOT).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(mod: str) -> str:
    return mod.split(".")[1]


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom, mods: set[str]) -> list[str]:
    if not node.level:
        base = node.module or ""
    else:
        pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
        pkg = pkg[:len(pkg) - node.level + 1]
        base = ".".join(pkg + ([node.module] if node.module else []))
    # `from pkg import sub` depends on the submodule; `from pkg import name` on pkg itself
    subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
    return subs + ([base] if len(subs) < len(node.names) else [])


def import_graph(type_only: bool = False) -> dict[str, set[str]]:
    """Module -> the modules it imports; ``type_only``: the ``if TYPE_CHECKING:`` imports too."""
    files = [p for top in LAYERS if (ROOT / top).is_dir() for p in (ROOT / top).rglob("*.py")]
    mods = {_module(p): p for p in files}
    graph: dict[str, set[str]] = {}
    for mod, path in mods.items():
        deps: set[str] = set()
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                       and "TYPE_CHECKING" in ast.unparse(block.test) for stmt in block.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in typing_only and not type_only:  # annotations only: not a run-time dependency
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = _resolve(mod, path.name == "__init__.py", node, set(mods))
            else:
                continue
            deps.update(n for n in names if n in mods and n != mod)
        graph[mod] = deps
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_every_import_points_down():
    upward = [f"{a} -> {b}" for a, deps in import_graph().items() for b in deps
              if LAYERS[_layer(b)] > LAYERS[_layer(a)]
              or (LAYERS[_layer(b)] == LAYERS[_layer(a)] and _layer(a) != _layer(b))]
    assert not upward, "imports that point up (or sideways between sibling layers):\n" + "\n".join(sorted(upward))


def test_no_import_cycles():
    cycles = _cycles(import_graph())
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def _part(mod: str, package: str) -> str | None:
    """The part of ``package`` (its child module or subpackage) that holds ``mod``; None outside it
    or for the package's own ``__init__``."""
    rest = mod[len(package) + 1:].split(".") if mod.startswith(package + ".") else None
    return f"{package}.{rest[0]}" if rest else None


def part_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Within every package, part -> the parts it imports (an arrow between two parts of a package)."""
    packages = {m.rsplit(".", 1)[0] for m in graph} - {"perfalign"}
    parts: dict[str, set[str]] = {}
    for pkg in packages:
        for a, deps in graph.items():
            pa = _part(a, pkg)
            for b in deps:
                pb = _part(b, pkg)
                if pa and pb and pa != pb:
                    parts.setdefault(pa, set()).add(pb)
    return parts


def test_no_import_circles_inside_packages_type_only_imports_included():
    """A type-only import is still an arrow a reader follows: no module circle even counting them,
    and the parts of a package (e.g. evaluation's tasks/ and its scoring engines) form no circle:
    one of two parts that import each other points up."""
    graph = import_graph(type_only=True)
    cycles = _cycles(graph) + _cycles(part_graph(graph))
    assert not cycles, "\n".join(" <-> ".join(c) for c in cycles)


def test_the_bottom_layer_imports_nothing_of_perfalign():
    graph = import_graph()
    assert all(_layer(b) == "common" for a, deps in graph.items() if _layer(a) == "common" for b in deps)


def test_the_checker_sees_imports():
    # the graph is not vacuous: known edges (relative, absolute, deferred) are found
    graph = import_graph()
    assert "perfalign.sandbox.core" in graph["perfalign.sandbox"]
    assert "perfalign.common.equations" in graph["perfalign.perfdata.triplets"]
    assert "perfalign.evaluation.tasks.codecontests" in graph["perfalign.evaluation.tasks.registry"]
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert "perfalign.evaluation.config" in import_graph(type_only=True)["perfalign.evaluation.tasks.base"]
    # evaluation.tasks.x -> evaluation.y is an arrow from the part evaluation.tasks to evaluation.y
    assert part_graph({"p.e.tasks.x": {"p.e.y"}, "p.e.y": set()}) == {"p.e.tasks": {"p.e.y"}}


def _code_files() -> list[Path]:
    tops = [*LAYERS, "tests", "benchmarks", "experiments", "scripts"]
    return [p for top in tops if (ROOT / top).is_dir() for p in (ROOT / top).rglob("*.py")
            if "oracles" not in p.parts]


def test_no_bare_top_level_imports():
    """From the checkout root `import sandbox` still resolves to the folder, so a stale bare import
    would pass here and break the installed wheel: every import names `perfalign.`."""
    bare = []
    for path in _code_files():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bare += [f"{path.relative_to(ROOT)}:{node.lineno} {n}" for n in names if n.split(".")[0] in LAYERS]
    assert not bare, "imports without the perfalign. namespace:\n" + "\n".join(bare)


def test_pyproject_lists_every_package():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {_module(p) for top in LAYERS for p in (ROOT / top).rglob("__init__.py")} | {"perfalign"}
    assert listed == found, f"pyproject packages differ: missing {found - listed}, extra {listed - found}"
