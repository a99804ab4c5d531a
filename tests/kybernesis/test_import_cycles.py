"""Import cycles between first-party modules: there are none, type-annotation imports included."""

from __future__ import annotations

import ast
import importlib.util
from functools import cache
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "memories", "graph", "connectors", "portability", "sleep", "kybernesis", "bench")


def _source(root: Path, module: str) -> Path:
    path = root.joinpath(*module.split("."))
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _absolute(node: ast.ImportFrom, module: str, root: Path) -> str | None:
    if not node.level:
        return node.module
    package = module if _source(root, module).name == "__init__.py" else module.rpartition(".")[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


@cache
def _reexports(root: Path, package: str) -> dict[str, str]:
    """The names a package's __init__ imports from other modules: name -> that module."""
    tree = ast.parse(_source(root, package).read_text(encoding="utf-8"))
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            origin = _absolute(node, package, root)
            for alias in node.names:
                names[alias.asname or alias.name] = origin or package
    return names


def _names_imported_from(root: Path, module: str, package: str) -> set[str] | None:
    """The names `module` takes from `package` by `from package import ...` (None: it imports the
    package itself, or in a way not read here)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(_source(root, module).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(alias.name == package for alias in node.names):
            return None
        if isinstance(node, ast.ImportFrom):
            origin = _absolute(node, module, root)
            if any(f"{origin}.{alias.name}" == package for alias in node.names):
                return None  # `from connectors import oauth`
            if origin == package:
                names.update(alias.name for alias in node.names)
    return names or None


def _edges(graph, root: Path = REPO) -> dict[str, set[str]]:
    """Who imports whom. An import of a module's own enclosing package for names that package only
    re-exports points at the modules the names come from: the package's __init__ importing its
    submodules is how re-exports work, not a cycle with them."""
    edges = {module: set(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    for module, imported in edges.items():
        for package in [target for target in imported if module.startswith(target + ".")]:
            names = _names_imported_from(root, module, package)
            if names is None:
                continue
            origins = {_reexports(root, package).get(name, package) for name in names}
            if package not in origins:
                imported.discard(package)
            imported.update(origin for origin in origins if origin in graph.modules and origin != module)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(edges.get(module, ())):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return found


@pytest.fixture(scope="module")
def import_graph():
    packages = [name for name in PACKAGES if importlib.util.find_spec(name) is not None]
    for name in packages:  # the code of this checkout, not of another one installed in the environment
        assert Path(importlib.util.find_spec(name).origin).is_relative_to(REPO), name
    return grimp.build_graph(*packages, cache_dir=None)


def _describe(graph, cycle: list[str], edges: dict[str, set[str]]) -> str:
    lines = [" <-> ".join(cycle)]
    for importer in cycle:
        for imported in sorted(edges[importer] & set(cycle)):
            for detail in graph.get_import_details(importer=importer, imported=imported) or [{}]:
                lines.append(f"    {importer}:{detail.get('line_number', '?')} {detail.get('line_contents', imported)}")
    return "\n".join(lines)


def test_first_party_modules_import_each_other_without_cycles(import_graph):
    edges = _edges(import_graph)
    cycles = _cycles(edges)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(import_graph, cycle, edges) for cycle in cycles)


def _package(root: Path, files: dict[str, str]):
    for name, text in files.items():
        (root / "pkgx").mkdir(exist_ok=True)
        (root / "pkgx" / name).write_text(text, encoding="utf-8")
    return grimp.build_graph("pkgx", cache_dir=None)


def test_a_module_importing_its_own_package_for_a_reexport_makes_no_cycle(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = _package(
        tmp_path,
        {
            "__init__.py": "from pkgx.keys import key\nfrom pkgx.kinds import kind\n",
            "keys.py": "def key(): ...\n",
            "kinds.py": "from pkgx import key\n\ndef kind(): ...\n",
        },
    )
    edges = _edges(graph, tmp_path)
    assert edges["pkgx.kinds"] == {"pkgx.keys"}
    assert _cycles(edges) == []


def test_a_cycle_through_reexports_is_still_found(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = _package(
        tmp_path,
        {
            "__init__.py": "from pkgx.keys import key\nfrom pkgx.kinds import kind\n",
            "keys.py": "from pkgx import kind\n\ndef key(): ...\n",
            "kinds.py": "from pkgx import key\n\ndef kind(): ...\n",
        },
    )
    assert _cycles(_edges(graph, tmp_path)) == [["pkgx.keys", "pkgx.kinds"]]
