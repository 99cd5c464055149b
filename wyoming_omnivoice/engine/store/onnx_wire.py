"""The external-data references of an ONNX file, read from its protobuf wire format.

The model-folder check (:mod:`.model_files`) needs only where each external tensor lies
(location, offset, length). Parsing the file with the ``onnx`` package costs its import,
about 0.6 s on a small CPU (its ``ml_dtypes`` dependency), on every start; this reader
walks the few message fields that hold tensors and skips everything else (weights stored
inline are skipped without being read into Python objects).

Field numbers (onnx.proto, stable since IR version 3): ``ModelProto.graph`` 7;
``GraphProto.node`` 1, ``initializer`` 5; ``NodeProto.attribute`` 5; ``AttributeProto.t``
5, ``g`` 6, ``tensors`` 10, ``graphs`` 11; ``TensorProto.external_data`` 13 (key 1, value
2), ``data_location`` 14 (``EXTERNAL`` = 1).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5
_EXTERNAL = 1


class WireError(ValueError):
    """The bytes are not a protobuf message of the expected shape."""


@dataclass(frozen=True)
class ExternalTensor:
    """Where one tensor's data lies outside the graph file."""

    location: str
    offset: int
    length: int


def _varint(data: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise WireError("truncated or malformed varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos
        shift += 7


def _fields(data: memoryview) -> Iterator[tuple[int, int, memoryview | int]]:
    """``(field number, wire type, value)`` of one message; length-delimited values as
    views (not copied), others as ints."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, kind = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if kind == _VARINT:
            value, pos = _varint(data, pos)
            yield number, kind, value
        elif kind == _BYTES:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise WireError("a field runs past the end of its message")
            yield number, kind, data[pos:pos + size]
            pos += size
        elif kind in (_FIXED64, _FIXED32):
            pos += 8 if kind == _FIXED64 else 4
            if pos > len(data):
                raise WireError("truncated fixed-size field")
            yield number, kind, 0
        else:
            raise WireError(f"unsupported wire type {kind}")


def _messages(data: memoryview, number: int) -> Iterator[memoryview]:
    for field, kind, value in _fields(data):
        if field == number and kind == _BYTES and isinstance(value, memoryview):
            yield value


def _tensor(data: memoryview) -> ExternalTensor | None:
    entries: dict[str, str] = {}
    location = 0
    for field, kind, value in _fields(data):
        if field == 14 and kind == _VARINT and isinstance(value, int):
            location = value
        elif field == 13 and isinstance(value, memoryview):
            pair = {f: bytes(v).decode("utf-8", "replace") for f, k, v in _fields(value)
                    if k == _BYTES and isinstance(v, memoryview)}
            entries[pair.get(1, "")] = pair.get(2, "")
    if location != _EXTERNAL:
        return None
    try:
        return ExternalTensor(entries.get("location", ""), int(entries.get("offset") or 0),
                              int(entries.get("length") or 0))
    except ValueError as err:
        raise WireError(f"external data entry with a bad number: {err}") from None


def _graph_tensors(graph: memoryview) -> Iterator[ExternalTensor]:
    for field, kind, value in _fields(graph):
        if kind != _BYTES or not isinstance(value, memoryview):
            continue
        if field == 5:  # initializer
            found = _tensor(value)
            if found is not None:
                yield found
        elif field == 1:  # node -> attributes
            for attribute in _messages(value, 5):
                for sub, sub_kind, inner in _fields(attribute):
                    if sub_kind != _BYTES or not isinstance(inner, memoryview):
                        continue
                    if sub in (5, 10):
                        found = _tensor(inner)
                        if found is not None:
                            yield found
                    elif sub in (6, 11):
                        yield from _graph_tensors(inner)


def external_tensors(model: bytes) -> list[ExternalTensor]:
    """Every external tensor of a serialized ``ModelProto`` (initializers, tensor
    attributes, sub-graphs); WireError when the bytes are not such a model."""
    graphs = list(_messages(memoryview(model), 7))
    if not graphs:
        raise WireError("no graph in it")
    return [tensor for graph in graphs for tensor in _graph_tensors(graph)]
