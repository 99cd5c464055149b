"""The orders the int8 preparation must reproduce: onnxruntime's quantizer sorts the nodes
topologically its own way, and onnx's save writes tensors to the weights file in its own
order (:mod:`.int8_streaming` writes the same file byte for byte)."""

from __future__ import annotations

from collections.abc import Iterator

import onnx
from onnx import TensorProto


def topological_order(nodes: list[onnx.NodeProto], graph: onnx.GraphProto
                      ) -> list[onnx.NodeProto]:
    """onnxruntime's quantizer's order: nodes without inputs first, then those ready once
    the initializers and graph inputs (by sorted name) are known, then breadth first."""
    waiting = [sum(1 for name in node.input if name) for node in nodes]
    readers: dict[str, list[int]] = {}
    ordered = [node for node, count in zip(nodes, waiting, strict=True) if count == 0]
    for index, node in enumerate(nodes):
        for name in node.input:
            if name:
                readers.setdefault(name, []).append(index)

    def release(name: str) -> None:
        for index in readers.get(name, ()):
            waiting[index] -= 1
            if waiting[index] == 0:
                ordered.append(nodes[index])

    for name in sorted({t.name for t in graph.initializer} | {i.name for i in graph.input}):
        release(name)
    position = 0
    while position < len(ordered):
        for name in ordered[position].output:
            release(name)
        position += 1
    if len(ordered) != len(nodes):
        raise ValueError("the graph is not a DAG of known inputs")
    return ordered


def tensors_in_save_order(model: onnx.ModelProto) -> Iterator[TensorProto]:
    """onnx's order of tensors written to the weights file: initializers, then node
    attribute tensors (``convert_attribute=True`` in onnxruntime's save)."""
    yield from model.graph.initializer
    for node in model.graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
    for function in model.functions:
        for node in function.node:
            for attr in node.attribute:
                if attr.HasField("t"):
                    yield attr.t
                yield from attr.tensors
