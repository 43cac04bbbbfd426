"""Converters from a source program to :class:`~tvm_tgraph.graph.ConfiguredGraph`.

Only these modules know their source; everything downstream sees configured graphs.
"""
