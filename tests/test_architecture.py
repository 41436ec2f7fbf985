"""The package's layering (ARCHITECTURE.md): every import points down the stack, UI libraries stay in the UI.

Reads every ``import`` statement of every module with ``ast`` — also those inside functions, which would
otherwise hide an upward dependency — and resolves relative imports to module names. Each checker is
also run on a small synthetic package with a planted violation, so a checker that finds nothing is known
to be able to find something.
"""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "moco_lab"

#: Bottom to top, as in ARCHITECTURE.md.
LAYERS = ["util", "symbolic", "results", "modeling", "ocp", "engine", "solve", "tools", "examples", "analysis",
          "viz", "ui"]

#: Third-party libraries allowed only in some layers.
UI_LIBRARIES = {"ipywidgets": {"ui"}, "IPython": {"ui"}, "plotly": {"viz", "ui"}}
NO_PYDRAKE = {"util", "results", "symbolic"}


def modules(root: Path):
    """(path, dotted module name, is a package __init__) of every module under ``root``."""
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        yield path, ".".join(parts), is_package


def imports(nodes, module: str, is_package: bool):
    """Absolute names imported by the import statements among ``nodes``: (name, line).

    ``from a.b import c`` yields ``a.b`` and ``a.b.c`` (``c`` may be a module).
    """
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[:len(base) - (node.level - 1)]
                target = ".".join(anchor + ([node.module] if node.module else []))
            else:
                target = node.module
            yield target, node.lineno
            for alias in node.names:
                yield f"{target}.{alias.name}", node.lineno


def all_imports(path: Path, module: str, is_package: bool):
    return imports(ast.walk(ast.parse(path.read_text(), str(path))), module, is_package)


def layer_of(name: str, root_name: str):
    parts = name.split(".")
    if parts[0] != root_name or len(parts) < 2:
        return None
    return parts[1] if parts[1] in LAYERS else None


def layer_violations(root: Path) -> list[str]:
    bad = []
    for path, module, is_package in modules(root):
        own = layer_of(module, root.name)
        if own is None:
            continue  # the top-level __init__: the facade re-exports from every layer
        for target, line in all_imports(path, module, is_package):
            other = layer_of(target, root.name)
            if other is not None and LAYERS.index(other) > LAYERS.index(own):
                bad.append(f"{path.relative_to(root.parent)}:{line}: {own} imports {target} ({other} is above)")
    return sorted(set(bad))


def library_violations(root: Path, library: str, allowed: set) -> list[str]:
    bad = []
    for path, module, is_package in modules(root):
        own = layer_of(module, root.name)
        for target, line in all_imports(path, module, is_package):
            if target.split(".")[0] == library and own not in allowed:
                bad.append(f"{path.relative_to(root.parent)}:{line}: {target}")
    return sorted(set(bad))


def import_cycles(root: Path) -> list[list[str]]:
    """Cycles among the modules' imports, every one of them: module level, inside functions (lazy imports) and
    under ``if TYPE_CHECKING:`` (a dependency for the reader even where Python does not execute it), so that no
    two modules depend on each other, directly or through others."""
    mods = {m for _, m, _ in modules(root)}
    graph = {}
    for path, module, is_package in modules(root):
        every = [n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, (ast.Import, ast.ImportFrom))]
        deps = set()
        for target, _ in imports(every, module, is_package):
            while target and target not in mods:
                target = target.rpartition(".")[0]
            # a package's __init__ importing its own children is how packages re-export
            if target and target != module and target != root.name and not target.startswith(module + "."):
                deps.add(target)
        graph[module] = deps
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return cycles


# ------------------------------------------------------------------ the package
def test_every_subpackage_is_a_known_layer():
    found = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert found == set(LAYERS), f"subpackages {sorted(found ^ set(LAYERS))} differ from ARCHITECTURE.md's layers"
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"modules outside the layers: {loose}"


def test_imports_point_down_the_stack():
    bad = layer_violations(PACKAGE)
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("library, allowed", sorted(UI_LIBRARIES.items()))
def test_ui_libraries_stay_in_the_ui_layers(library, allowed):
    bad = library_violations(PACKAGE, library, allowed)
    assert not bad, f"{library} outside {sorted(allowed)}:\n" + "\n".join(bad)


def test_data_layers_do_not_need_drake():
    bad = [b for layer in NO_PYDRAKE for b in library_violations(PACKAGE, "pydrake", set(LAYERS) - {layer})
           if f"/{layer}/" in b]
    assert not bad, bad


def test_no_import_cycles_between_modules():
    cycles = import_cycles(PACKAGE)
    assert not cycles, cycles


# ------------------------------------------------------------------ the checkers can fail
def _package(tmp_path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for rel, text in {"__init__.py": "", **files}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


def test_checkers_find_planted_violations(tmp_path):
    root = _package(tmp_path, {
        "util/__init__.py": "", "modeling/__init__.py": "", "viz/__init__.py": "",
        "modeling/a.py": "from . import b\n\ndef f():\n    from ..viz import draw  # upward, hidden in a function\n",
        "modeling/b.py": "from .a import f\nimport plotly.graph_objects as go\n",
        "modeling/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .d import D\n",
        "modeling/d.py": "def g():\n    from .c import C\n",
        "viz/draw.py": "from ..modeling import a\n",
        "util/x.py": "import pydrake.all\n",
    })
    assert layer_violations(root) == ["pkg/modeling/a.py:4: modeling imports pkg.viz (viz is above)",
                                      "pkg/modeling/a.py:4: modeling imports pkg.viz.draw (viz is above)"]
    assert library_violations(root, "plotly", {"viz", "ui"}) == ["pkg/modeling/b.py:2: plotly.graph_objects"]
    assert library_violations(root, "pydrake", set(LAYERS) - {"util"}) == ["pkg/util/x.py:1: pydrake.all"]
    assert import_cycles(root) == [["pkg.modeling.a", "pkg.modeling.b", "pkg.modeling.a"],
                                   ["pkg.modeling.a", "pkg.viz.draw", "pkg.modeling.a"],  # through a function
                                   ["pkg.modeling.c", "pkg.modeling.d", "pkg.modeling.c"]]  # TYPE_CHECKING


# ------------------------------------------------------------------ private names, hints, docstrings
def private_uses(root: Path) -> list[str]:
    """Imports of another module's private names (``from .x import _y``) and ``module._y`` accesses."""
    bad = []
    for path, _, _ in modules(root):
        tree = ast.parse(path.read_text())
        module_aliases = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        bad.append(f"{path.relative_to(root.parent)}:{node.lineno}: imports {alias.name}")
                    module_aliases.add(alias.asname or alias.name)  # may be a module (from . import codegen)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    module_aliases.add(alias.asname or alias.name.split(".")[0])
        submodules = {m.rsplit(".", 1)[-1] for _, m, _ in modules(root)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in module_aliases and node.value.id in submodules
                    and node.attr.startswith("_") and not node.attr.startswith("__")):
                bad.append(f"{path.relative_to(root.parent)}:{node.lineno}: uses {node.value.id}.{node.attr}")
    return sorted(set(bad))


def _public_functions(root: Path):
    """(where, function node, class name or None) of public functions and methods of public classes."""
    for path, _, _ in modules(root):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                yield f"{path.relative_to(root.parent)}:{node.lineno} {node.name}", node, None
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                for sub in node.body:
                    if isinstance(sub, ast.FunctionDef) and (not sub.name.startswith("_") or sub.name == "__init__"):
                        yield f"{path.relative_to(root.parent)}:{sub.lineno} {node.name}.{sub.name}", sub, node


def missing_type_hints(root: Path) -> list[str]:
    bad = []
    for where, fn, _ in _public_functions(root):
        a = fn.args
        params = [p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls")]
        params += [p for p in (a.vararg, a.kwarg) if p is not None]
        missing = [p.arg for p in params if p.annotation is None]
        if fn.returns is None and fn.name != "__init__":
            missing.append("return")
        if missing:
            bad.append(f"{where}: {missing}")
    return bad


def missing_docstrings(root: Path) -> list[str]:
    """Public functions, classes and methods without a docstring (an override inherits its base's)."""
    documented: dict[str, tuple[list[str], set[str]]] = {}
    for path, _, _ in modules(root):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
                documented[node.name] = (bases, {s.name for s in node.body if isinstance(s, ast.FunctionDef)
                                                 and ast.get_docstring(s) is not None})

    def inherited(cls: str, name: str, seen=()) -> bool:
        for base in documented.get(cls, ([], set()))[0]:
            if base in documented and base not in seen:
                if name in documented[base][1] or inherited(base, name, seen + (base,)):
                    return True
        return False

    bad = []
    for where, fn, cls in _public_functions(root):
        if fn.name.startswith("__") or ast.get_docstring(fn) is not None:
            continue
        if cls is not None and inherited(cls.name, fn.name):
            continue
        bad.append(where)
    return bad


def test_no_module_uses_another_modules_private_names():
    bad = private_uses(PACKAGE)
    assert not bad, "\n".join(bad)


def test_public_functions_have_type_hints():
    bad = missing_type_hints(PACKAGE)
    assert not bad, "\n".join(bad)


def test_public_functions_have_docstrings():
    bad = missing_docstrings(PACKAGE)
    assert not bad, "\n".join(bad)


def test_hint_docstring_and_private_checkers_can_fail(tmp_path):
    root = _package(tmp_path, {
        "util/__init__.py": "",
        "util/a.py": "def _helper():\n    pass\n\n\ndef public(x) -> int:\n    return 1\n",
        "util/b.py": ("from . import a\nfrom .a import _helper\n\n\nclass Base:\n    def run(self) -> None:\n"
                      "        \"\"\"Documented.\"\"\"\n\n\nclass Child(Base):\n    def run(self) -> None:\n"
                      "        a._helper()\n\n    def other(self):\n        pass\n"),
    })
    assert private_uses(root) == ["pkg/util/b.py:12: uses a._helper", "pkg/util/b.py:2: imports _helper"]
    assert missing_type_hints(root) == ["pkg/util/a.py:5 public: ['x']", "pkg/util/b.py:14 Child.other: ['return']"]
    assert missing_docstrings(root) == ["pkg/util/a.py:5 public", "pkg/util/b.py:14 Child.other"]


def test_paused_gc_restores_the_collector():
    """``paused_gc`` (the engine's builds run inside it) leaves the collector as it found it: enabled after an
    exception in the block, still disabled when it was disabled before, and paused through nested blocks."""
    import gc

    from moco_lab.util.memory import paused_gc

    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with paused_gc():
            assert not gc.isenabled()
            raise RuntimeError("inside")
    assert gc.isenabled()
    with paused_gc():
        with paused_gc():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
