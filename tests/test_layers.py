"""Data flows converter -> configured graph -> network: the network imports no TVM, the
converters import no torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tvm_tgraph.convert.tir import FEATURE_SCHEMA, F_CONFIG, F_GLOBAL, F_NODE, NODE_KINDS
from tvm_tgraph.nn import TGraphConfig


@pytest.mark.parametrize("modules, forbidden", [
    (["tvm_tgraph.nn", "tvm_tgraph.graph"], "tvm"),
    (["tvm_tgraph.convert.tir", "tvm_tgraph.convert.tpugraphs", "tvm_tgraph.convert.relax_layout"], "torch"),
])
def test_layer_does_not_import(modules, forbidden):
    code = (f"import sys\nimport {', '.join(modules)}\n"
            f"print(sorted(m for m in sys.modules if m == {forbidden!r} or m.startswith({forbidden + '.'!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", f"{modules} imported {out.strip()[:200]}"


def test_a_network_is_sized_from_a_converters_schema():
    config = TGraphConfig.from_schema(FEATURE_SCHEMA, hidden=32)
    assert (config.num_node_kinds, config.node_features, config.config_features, config.global_features,
            config.hidden) == (len(NODE_KINDS), F_NODE, F_CONFIG, F_GLOBAL, 32)


#: The layers, bottom up: a module may import its own layer and the ones below, never above.
LAYERS = [
    ("core", ["tvm_tgraph"]),                       # everything of tvm_tgraph not listed above it
    ("models and strategies", ["cost_models", "search"]),
    ("workflows", ["tvm_tgraph.workflows"]),
    ("command line", ["tvm_tgraph.cli", "tvm_tgraph.__main__"]),
]


def _layer(module: str) -> int | None:
    """Index in LAYERS of a module of this project (the longest matching prefix), or None."""
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def _imports(path, module: str) -> list[str]:
    """Absolute names of everything ``path`` imports, at any depth (function bodies too)."""
    return _imports_of_tree(ast.parse(path.read_text()), path, module)


def _imports_of_tree(tree: ast.AST, path, module: str) -> list[str]:
    """Absolute names of everything imported anywhere in ``tree`` (a part of ``path``)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names += [f"{base}.{alias.name}" if _layer(f"{base}.{alias.name}") is not None and node.module is None
                      else base for alias in node.names]
    return names


def test_no_module_imports_a_layer_above_its_own():
    root = Path(__file__).resolve().parent.parent
    upward = []
    for top in ("tvm_tgraph", "cost_models", "search"):
        for path in sorted((root / top).rglob("*.py")):
            module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            mine = _layer(module)
            for name in _imports(path, module):
                theirs = _layer(name)
                if theirs is not None and theirs > mine:
                    upward.append(f"{module} ({LAYERS[mine][0]}) imports {name} ({LAYERS[theirs][0]})")
    assert not upward, "\n".join(upward)


def test_project_imports_sit_at_the_top_of_each_module_but_the_command_lines():
    """An import of this project inside a function would hide a cycle. Only the command line
    defers them, so that ``tgraph --help`` or a bad argument answers without loading TVM or torch."""
    root = Path(__file__).resolve().parent.parent
    deferred = []
    for top in ("tvm_tgraph", "cost_models", "search"):
        for path in sorted((root / top).rglob("*.py")):
            module = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            if _layer(module) == len(LAYERS) - 1:
                continue
            for function in ast.walk(ast.parse(path.read_text())):
                if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                for name in _imports_of_tree(function, path, module):
                    if _layer(name) is not None:
                        deferred.append(f"{module}.{function.name} imports {name}")
    assert not deferred, "\n".join(deferred)
