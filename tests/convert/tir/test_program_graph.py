"""convert.tir.program_graph: the static graph of a PrimFunc, and the programs it refuses."""

from __future__ import annotations

import inspect

import pytest
import tvm
from conftest import ALLOC_BUFFER_KERNEL
from tvm import s_tir, te, tirx, topi

from tvm_tgraph.convert.tir import KIND, STATEMENT_KINDS, task_graph
from tvm_tgraph.errors import UnsupportedProgramError
from tvm_tgraph.workloads import WORKLOADS, as_ir_module, load_module


def test_dynamic_shapes_are_refused_with_the_construct_named():
    n = tirx.Var("n", "int32")
    a = te.placeholder((n, 64), name="A")
    b = te.placeholder((64, 64), name="B")
    func = te.create_prim_func([a, b, topi.nn.matmul(a, b)])
    with pytest.raises(UnsupportedProgramError, match="symbolic shape"):
        task_graph(as_ir_module(func))


def test_module_with_two_functions_is_refused():
    mod = tvm.IRModule({"f": WORKLOADS["softmax"](), "g": WORKLOADS["matmul_128"]()})
    with pytest.raises(UnsupportedProgramError, match="exactly one PrimFunc"):
        task_graph(mod)


def test_lowered_program_without_blocks_is_refused():
    passes = tvm.s_tir.transform
    mod = as_ir_module(WORKLOADS["softmax"]())
    lowered = passes.LowerOpaqueBlock()(passes.ConvertBlocksToOpaque()(passes.LowerInitBlock()(mod)))
    with pytest.raises(UnsupportedProgramError, match="not a root block"):
        task_graph(lowered)


def test_every_tir_statement_kind_is_known_to_the_converter():
    """Walk TVM's statement classes, not just those the suite produced: each one is either
    represented or skipped on purpose (SBlock only occurs inside SBlockRealize)."""
    classes = {name for module in (tirx.stmt, s_tir.stmt) for name, cls in vars(module).items()
               if inspect.isclass(cls) and issubclass(cls, tirx.stmt.Stmt) and cls is not tirx.stmt.Stmt}
    assert classes - set(STATEMENT_KINDS) == {"SBlock"}


def test_function_level_alloc_buffer_becomes_an_intermediate_buffer(tmp_path):
    (tmp_path / "kernel.py").write_text(ALLOC_BUFFER_KERNEL)
    graph = task_graph(load_module(f"{tmp_path / 'kernel.py'}:scaled_matmul"))
    assert set(graph.blocks) == {"matmul", "scale"}
    assert (graph.node_kind == KIND["buffer_intermediate"]).sum() == 1   # D
