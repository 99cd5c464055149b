"""External weights of ONNX graphs in model folders as users have them: linked files.

Two layouts are common and both hold the right bytes:

* a Hugging Face cache snapshot (``hf download`` without ``--local-dir``, or a folder
  that joins two repositories' snapshots by links): every file is a symbolic link into the
  repository's ``blobs/``, named by its hash. onnxruntime refuses external data whose real
  path leaves the graph's folder ("External data path escapes model directory");
* a folder of hard links (``cp -al``, a deduplicating backup tool): onnx's Python loader
  refuses external data with more than one link ("potential hardlink attack"); onnxruntime
  reads them.

Neither is copied (the weights are 2 GB) nor changed: :func:`linked_external_data` hands
onnxruntime the graph with each external location renamed to the file it links to and the
folder that file really lies in; :func:`load_external_tensors` reads external weights into
memory with plain reads, which follow links. A location itself must stay inside its folder
(no absolute path, no ``..``): a graph cannot make the server read any other file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

from wyoming_omnivoice.engine.store.model_files import ModelError

#: Graphs larger than this are not parsed just to look for linked weights (none are).
_MAX_PARSE_BYTES = 64 * 1024 * 1024


def _external_tensors(graph: Any) -> Iterator[Any]:
    """Tensors of a graph and its sub-graphs stored as external data."""
    import onnx

    def walk(g: Any) -> Iterator[Any]:
        yield from g.initializer
        for node in g.node:
            for attr in node.attribute:
                if attr.HasField("t"):
                    yield attr.t
                yield from attr.tensors
                if attr.HasField("g"):
                    yield from walk(attr.g)
                for sub in attr.graphs:
                    yield from walk(sub)

    for tensor in walk(graph):
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            yield tensor


def _info(tensor: Any) -> dict[str, str]:
    return {item.key: item.value for item in tensor.external_data}


def _checked_location(location: str, tensor_name: str) -> str:
    parts = PurePosixPath(location.replace("\\", "/")).parts
    if not parts or location.startswith(("/", "\\")) or ".." in parts or ":" in parts[0]:
        raise ModelError(f"The external data {location!r} of tensor {tensor_name} leaves "
                         "the graph's folder; the graph is not loaded.")
    return location


def _has_links(folder: Path) -> bool:
    try:
        return folder.is_symlink() or any(entry.is_symlink() for entry in folder.iterdir())
    except OSError:
        return False


def linked_external_data(path: Path, model_bytes: bytes | None, folder: Path
                         ) -> tuple[bytes, Path] | None:
    """The graph (``model_bytes``, else the file ``path``) rewritten so that onnxruntime
    reads its external weights through symbolic links, with the folder they really lie
    in; None when no weights file of it leaves ``folder`` (the graph loads as it is)."""
    if not (_has_links(folder) or path.is_symlink()):
        return None
    if model_bytes is None and path.stat().st_size > _MAX_PARSE_BYTES:
        return None
    import onnx

    model = onnx.load_from_string(model_bytes) if model_bytes is not None else \
        onnx.load(str(path), load_external_data=False)
    tensors = list(_external_tensors(model.graph))
    if not tensors:
        return None
    real_folder = folder.resolve()
    targets = {}
    for tensor in tensors:
        location = _checked_location(_info(tensor).get("location", ""), tensor.name)
        targets[location] = (folder / location).resolve()
    if all(t.is_relative_to(real_folder) for t in targets.values()):
        return None
    homes = {target.parent for target in targets.values()}
    if len(homes) != 1:
        raise ModelError(f"The external weights of {path} link into several folders "
                         f"({', '.join(sorted(map(str, homes)))}); link them from one.")
    for tensor in tensors:
        for item in tensor.external_data:
            if item.key == "location":
                item.value = targets[item.value].name
    return model.SerializeToString(), homes.pop()


def load_external_tensors(model: Any, base_dir: Path) -> None:
    """Read every external tensor of ``model`` from ``base_dir`` into memory, in place
    (what ``onnx.external_data_helper.load_external_data_for_model`` does, but through
    links: the user's folder may hold hard or symbolic links)."""
    for tensor in _external_tensors(model.graph):
        load_external_tensor(tensor, base_dir)


def load_external_tensor(tensor: Any, base_dir: Path) -> None:
    """One external tensor read into ``raw_data`` (see :func:`load_external_tensors`)."""
    import onnx

    info = _info(tensor)
    location = _checked_location(info.get("location", ""), tensor.name)
    offset = int(info.get("offset", 0) or 0)
    length = int(info["length"]) if info.get("length") else None
    path = Path(base_dir) / location
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read() if length is None else handle.read(length)
    except OSError as err:
        raise ModelError(f"Cannot read the weights of {tensor.name} from {path} "
                         f"({err.strerror or err}).") from err
    if length is not None and len(data) != length:
        raise ModelError(f"{path} ends before the weights of {tensor.name} (truncated); "
                         "download it again.")
    tensor.raw_data = data
    tensor.data_location = onnx.TensorProto.DEFAULT
    del tensor.external_data[:]


def is_linked_folder(folder: Path, names: list[str]) -> bool:
    """Whether the model files ``names`` of ``folder`` are symbolic links (a Hugging Face
    cache snapshot or a joined folder): nothing is written beside them then."""
    return any(os.path.islink(folder / name) for name in names) or folder.is_symlink()
