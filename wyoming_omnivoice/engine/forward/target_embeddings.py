"""The text-embedding table off the GPU: target positions embedded on the device, the
rest once per decode on the host.

The published embeddings graph holds the text table (151 676 x 1024 float16: 0.31 GB on
the real model, whose root graphs are float16 throughout) to embed the prompt's text
positions, which never change during a decode. Only the target positions change from step
to step, and they are audio positions: their embedding is the sum of the 8 codebook
embeddings (a 33 MB table).

With ``host_text_table`` the IO-binding step runner (:mod:`.iobinding`) therefore

* embeds the whole grid once per decode with the published graph on the CPU provider (the
  text table stays in host memory) and uploads it as the decode's ``base``;
* embeds, at every step, the target positions alone on the device with the graph built
  here: the published graph with its text table cut to the 1025 rows an audio code can
  index (its text branch is computed and discarded there: every target position is an
  audio position), followed by a ``ScatterND`` of those rows into a copy of ``base``,
  written into the backbone's input buffer (its address stays fixed for CUDA graphs).

The values are the published graph's own, bit for bit (the same nodes compute them).

The table is found by what it is, not by its name (an export names it after its own
module: ``model.llm.embed_tokens.weight`` in our fixtures, most likely ``text_embed.weight``
in the published file): :func:`find_text_table`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.runtime.graph_set import GraphSet
from wyoming_omnivoice.engine.runtime.onnx_sessions import CPU_PROVIDER, Graph, ProviderChoice
from wyoming_omnivoice.engine.store.model_files import ModelError

#: Rows of the published text table (the Qwen3 vocabulary with OmniVoice's special tokens).
PUBLISHED_TEXT_ROWS = 151676
#: Rows of the cut text table: every id a target position holds (codes and MASK).
AUDIO_IDS = 1025
BASE = "base_embeds"
TARGET_IDS = "target_ids"
TARGET_MASK = "target_mask"
TARGET_INDEX = "target_index"
OUTPUT = "inputs_embeds"


def audio_rows_model(embeddings: Path) -> Any:
    """The published embeddings graph with its text table cut to the :data:`AUDIO_IDS`
    rows a target position can hold (inputs ``input_ids``, ``audio_mask`` and its output
    unchanged): the embeddings of target positions, bit for bit, with 4 MB of the text
    table instead of 0.3-0.6 GB (the device step graph's, :mod:`.graphs.step_graph`)."""
    import onnx
    from onnx import numpy_helper

    try:
        model = onnx.load(str(embeddings))
    except Exception as err:
        raise ModelError(f"Could not read {embeddings}: {err}") from err
    graph = model.graph
    table = find_text_table(graph)
    names = [i.name for i in graph.input]
    if table is None or [o.name for o in graph.output] != [OUTPUT] or \
            sorted(names) != ["audio_mask", "input_ids"]:
        raise ModelError(f"{embeddings} has no text table (the table gathered from "
                         f"input_ids[:, 0, :]), no single {OUTPUT} output or other inputs "
                         f"than input_ids and audio_mask ({sorted(names)})")
    cut = numpy_helper.to_array(table)[:AUDIO_IDS]
    graph.initializer.remove(table)
    graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(cut), table.name))
    order = {"input_ids": 0, "audio_mask": 1}
    inputs = sorted(graph.input, key=lambda i: order[i.name])
    del graph.input[:]
    graph.input.extend(inputs)
    del graph.value_info[:]
    return model


def target_embedding_model(embeddings: Path) -> bytes:
    """The device graph of the target positions (see the module doc), serialized:
    inputs ``base_embeds [R, L, H]``, ``target_ids [1, 8, P]``, ``target_mask [1, P]``
    (all True), ``target_index [P, 2]`` (row, column); output ``inputs_embeds``."""
    import onnx
    from onnx import helper, numpy_helper

    model = audio_rows_model(embeddings)
    graph = model.graph
    elem = graph.output[0].type.tensor_type.elem_type
    for node in graph.node:  # the published output becomes the rows' embeddings
        node.output[:] = ["target_rows_3d" if n == OUTPUT else n for n in node.output]
    graph.node.extend([
        helper.make_node("Squeeze", ["target_rows_3d", "target_axis0"], ["target_rows"]),
        helper.make_node("ScatterND", [BASE, TARGET_INDEX, "target_rows"], [OUTPUT]),
    ])
    graph.initializer.append(numpy_helper.from_array(np.array([0], np.int64), "target_axis0"))
    ids_in, mask_in = graph.input  # input_ids, audio_mask (audio_rows_model's order)
    ids_in.name, mask_in.name = TARGET_IDS, TARGET_MASK
    for node in graph.node:
        node.input[:] = [{"input_ids": TARGET_IDS, "audio_mask": TARGET_MASK}.get(n, n)
                         for n in node.input]
    graph.input.extend([
        helper.make_tensor_value_info(BASE, elem, ["R", "L", "H"]),
        helper.make_tensor_value_info(TARGET_INDEX, onnx.TensorProto.INT64, ["P", 2]),
    ])
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info(OUTPUT, elem, ["R", "L", "H"]))
    del graph.value_info[:]
    return bytes(model.SerializeToString())


#: Ops that only pick or reshape ids on their way from ``input_ids`` to the text lookup
#: (the audio lookup adds the per-codebook offsets first, so it never matches).
_SELECTING = frozenset({"Gather", "Slice", "Squeeze", "Unsqueeze", "Reshape", "Flatten",
                        "Cast", "Identity", "Split"})


def find_text_table(graph: Any) -> Any | None:
    """The text table of an embeddings graph: the rank-2 initializer that a Gather reads at
    ids picked from ``input_ids`` only (``input_ids[:, 0, :]``, whatever the export calls
    the nodes between), else the one rank-2 initializer of at least
    :data:`PUBLISHED_TEXT_ROWS` rows; None when neither finds one."""
    tables = {t.name: t for t in graph.initializer if len(t.dims) == 2}
    producer = {out: node for node in graph.node for out in node.output}

    def from_ids(name: str) -> bool:
        for _ in range(32):  # a chain of selections, never a loop
            if name == "input_ids":
                return True
            node = producer.get(name)
            if node is None or node.op_type not in _SELECTING or not node.input:
                return False
            name = node.input[0]
        return False

    for node in graph.node:
        if node.op_type == "Gather" and len(node.input) == 2 and node.input[0] in tables \
                and all(a.i == 0 for a in node.attribute if a.name == "axis") \
                and from_ids(node.input[1]):
            return tables[node.input[0]]
    large = [t for t in tables.values() if t.dims[0] >= PUBLISHED_TEXT_ROWS]
    return large[0] if len(large) == 1 else None


def text_table_summary(embeddings: Path) -> str:
    """``name [rows, width] dtype, size``: the text table as it is in the file."""
    import onnx
    from onnx import helper

    model = onnx.load(str(embeddings), load_external_data=False)
    table = find_text_table(model.graph)
    if table is None:
        return "not found"
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(table.data_type))
    size = int(np.prod(table.dims)) * dtype.itemsize
    shown = f"{size / 1e9:.2f} GB" if size >= 100e6 else f"{size / 1e6:.1f} MB"
    return f"{table.name} {list(table.dims)} {dtype.name}, {shown}"


def target_positions(rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``target_index [P, 2]`` of the target cells ``(rows, cols)`` of a grid."""
    return np.stack([rows, cols], axis=1).astype(np.int64)


def keep_text_table_on_host(graphs: GraphSet, embeddings: Path) -> None:
    """Move ``graphs``' embeddings to the CPU provider and add the device session of the
    target positions (see the module doc); the device session of the whole table goes."""
    target = Graph(embeddings, graphs.providers, threads=graphs.threads,
                   label="target embeddings", model_bytes=target_embedding_model(embeddings))
    graphs.embeddings = Graph(embeddings, ProviderChoice("cpu", (CPU_PROVIDER,)),
                              threads=graphs.threads, label="embeddings (host)")
    graphs.target_embeddings = target
