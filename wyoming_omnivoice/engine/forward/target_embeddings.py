"""The text-embedding table off the GPU: target positions embedded on the device, the
rest once per decode on the host.

The published embeddings graph holds the text table (151 676 x 1024 float32: 0.6 GB on
the real model) to embed the prompt's text positions, which never change during a
decode. Only the target positions change from step to step, and they are audio
positions: their embedding is the sum of the 8 codebook embeddings (a 33 MB table).

With ``host_text_table`` the IO-binding step runner (:mod:`.iobinding`) therefore

* embeds the whole grid once per decode with the published graph on the CPU provider (the
  text table stays in host memory) and uploads it as the decode's ``base``;
* embeds, at every step, the target positions alone on the device with the graph built
  here: the published graph with its text table cut to the 1025 rows an audio code can
  index (its text branch is computed and discarded there: every target position is an
  audio position), followed by a ``ScatterND`` of those rows into a copy of ``base``,
  written into the backbone's input buffer (its address stays fixed for CUDA graphs).

The values are the published graph's own, bit for bit (the same nodes compute them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from wyoming_omnivoice.engine.runtime.graph_set import GraphSet
from wyoming_omnivoice.engine.runtime.onnx_sessions import CPU_PROVIDER, Graph, ProviderChoice
from wyoming_omnivoice.engine.store.model_files import ModelError

TEXT_TABLE = "model.llm.embed_tokens.weight"
#: Rows of the cut text table: every id a target position holds (codes and MASK).
AUDIO_IDS = 1025
BASE = "base_embeds"
TARGET_IDS = "target_ids"
TARGET_MASK = "target_mask"
TARGET_INDEX = "target_index"
OUTPUT = "inputs_embeds"


def target_embedding_model(embeddings: Path) -> bytes:
    """The device graph of the target positions (see the module doc), serialized:
    inputs ``base_embeds [R, L, H]``, ``target_ids [1, 8, P]``, ``target_mask [1, P]``
    (all True), ``target_index [P, 2]`` (row, column); output ``inputs_embeds``."""
    import onnx
    from onnx import helper, numpy_helper

    try:
        model = onnx.load(str(embeddings))
    except Exception as err:
        raise ModelError(f"Could not read {embeddings}: {err}") from err
    graph = model.graph
    table = next((t for t in graph.initializer if t.name == TEXT_TABLE), None)
    outputs = [o.name for o in graph.output]
    if table is None or outputs != [OUTPUT]:
        raise ModelError(f"{embeddings} has no {TEXT_TABLE} table or no single "
                         f"{OUTPUT} output: the text table cannot be kept off the device")
    cut = numpy_helper.to_array(table)[:AUDIO_IDS]
    graph.initializer.remove(table)
    graph.initializer.append(numpy_helper.from_array(np.ascontiguousarray(cut), TEXT_TABLE))
    elem = graph.output[0].type.tensor_type.elem_type
    for node in graph.node:  # the published output becomes the rows' embeddings
        node.output[:] = ["target_rows_3d" if n == OUTPUT else n for n in node.output]
    graph.node.extend([
        helper.make_node("Squeeze", ["target_rows_3d", "target_axis0"], ["target_rows"]),
        helper.make_node("ScatterND", [BASE, TARGET_INDEX, "target_rows"], [OUTPUT]),
    ])
    graph.initializer.append(numpy_helper.from_array(np.array([0], np.int64), "target_axis0"))
    names = {i.name for i in graph.input}
    ids_in = next(i for i in graph.input if i.name == "input_ids")
    mask_in = next(i for i in graph.input if i.name == "audio_mask")
    if names != {"input_ids", "audio_mask"}:
        raise ModelError(f"{embeddings} has inputs {sorted(names)}, not input_ids and "
                         "audio_mask")
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
