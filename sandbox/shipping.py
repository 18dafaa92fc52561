"""Code of ours shipped into the sandbox: a subpackage of this package, as one Python file.

The sandbox runs one file of ours (the runner's read-only mount, a Job's source at
``/box/prog/main.py``), so a program made of several modules travels as one: ``bundle`` writes a
file that holds each module's source, read from this installed package's own files (never from a
box), and a loader. Run, the file creates every module under its own name, dependencies first,
registers it in ``sys.modules`` and runs its source, before anything else; then it calls the
shipped package's ``main.main()``.

Why a program in the box cannot shadow a shipped module: nothing shipped is looked up on a path.
Every shipped module is in ``sys.modules`` before the first line of ``main`` runs, so importing
it returns the shipped object whatever files exist in the working directory or on ``sys.path``;
the packages above them are bare (``__path__ = []``), so no other ``perfalign.*`` name can
resolve to a file; and the one file is read-only in the box.
"""
from __future__ import annotations

import ast
import functools
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the installed package's folder (perfalign/)
ENTRY = "main"  # the module of a shipped package whose main() the file runs
# CPython 3.11 keeps the AST converter's recursion depth per interpreter, not per thread: two threads
# parsing at once (a build's first batches, each bundling its runner) can fail spuriously with
# "SystemError: AST constructor recursion depth mismatch" (CPython gh-106905; seen here once in
# tests/perfdata/test_source_errors.py). Our parses take turns.
_PARSE_LOCK = threading.Lock()

# The file's loader: stdlib ``sys`` only (the runner's start-up is counted in milliseconds).
_LOADER = '''
import sys


def _module(name, is_package):
    """A fresh module ``name`` in sys.modules (a package's __path__ is empty: nothing below it is
    looked up on disk), set on its parent, which is created bare where it is not shipped."""
    parent, _, leaf = name.rpartition(".")
    if parent and parent not in _MADE:
        _module(parent, True)
    mod = type(sys)(name)
    mod.__package__ = name if is_package else parent
    if is_package:
        mod.__path__ = []
    sys.modules[name] = _MADE[name] = mod
    if parent:
        setattr(sys.modules[parent], leaf, mod)
    return mod


_MADE = {}
for _name, _is_package, _source in _SHIPPED:
    # "<...>": tracebacks and linecache never read a file by this name (one the program wrote)
    _code = compile(_source, "<shipped %s>" % _name, "exec", dont_inherit=True)
    exec(_code, _module(_name, _is_package).__dict__)

if __name__ == "__main__":
    sys.modules[_ENTRY].main()
'''


def module_file(name: str) -> Path:
    """The installed file of module ``name`` (``perfalign.a.b``): ``a/b.py`` or ``a/b/__init__.py``."""
    path = ROOT.joinpath(*name.split(".")[1:])
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _package_modules(package: str) -> list[str]:
    folder = module_file(package).parent
    return [package, *(f"{package}.{p.stem}" for p in sorted(folder.glob("*.py")) if p.stem != "__init__")]


def _imports(name: str, is_package: bool, tree: ast.Module) -> set[str]:
    """The ``perfalign`` modules (or packages) that module ``name`` imports, deferred imports too."""
    here = name.split(".") if is_package else name.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = (node.module or "") if not node.level else \
                ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else []))
            found.add(base)  # and `from package import module`: the module
            found.update(f"{base}.{a.name}" for a in node.names
                         if base.startswith("perfalign") and module_file(f"{base}.{a.name}").is_file())
    return {m for m in found if m == "perfalign" or m.startswith("perfalign.")}


def _ordered(sources: dict[str, str]) -> list[str]:
    """The shipped modules, each after its package and what it imports; ValueError when a shipped
    module imports a ``perfalign`` module that is not shipped (it would fail in the box)."""
    deps = {}
    for name, source in sources.items():
        is_package = module_file(name).name == "__init__.py"
        with _PARSE_LOCK:
            tree = ast.parse(source, name)
        wanted = _imports(name, is_package, tree)
        packages = {p for p in wanted if module_file(p).name == "__init__.py"}  # `from pkg import mod`
        missing = sorted(m for m in wanted - packages if m not in sources)
        if missing:
            raise ValueError(f"shipped module {name} imports {', '.join(missing)}, which is not shipped")
        parents = {name.rsplit(".", i)[0] for i in range(1, name.count(".") + 1)}
        deps[name] = (wanted | parents) & set(sources) - {name}
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise ValueError(f"shipped modules import each other: {' -> '.join((*path, name))}")
        if name not in order:
            for dep in sorted(deps[name]):
                visit(dep, (*path, name))
            order.append(name)

    for name in sorted(sources):
        visit(name, ())
    return order


@functools.cache
def bundle(package: str, *shared: str) -> str:
    """One Python file holding every module of the subpackage ``package`` and the modules
    ``shared`` (ones the host imports too); run, it calls ``package.main.main()``."""
    names = [*_package_modules(package), *shared]
    sources = {name: module_file(name).read_text(encoding="utf-8") for name in names}
    shipped = ",\n".join(repr((name, module_file(name).name == "__init__.py", sources[name]))
                         for name in _ordered(sources))
    return (f"# perfalign: {package} and {', '.join(shared) or 'nothing else'}, shipped as one file "
            f"(perfalign.sandbox.shipping)\n_ENTRY = {f'{package}.{ENTRY}'!r}\n_SHIPPED = (\n{shipped},\n)\n"
            + _LOADER)
