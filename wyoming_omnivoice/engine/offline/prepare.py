"""Prepared backbones: made once from the published file, kept beside it, never changing it.

A variant (:data:`.precision.VARIANTS`) is built from ``llm_backbone_fp32.onnx``:

* every variant: the rotary cos/sin read from a table at positions taken from the mask's
  data (:mod:`.graphs.rotary_table`), so no shape-derived value feeds compute and on CUDA every
  node can run on the CUDA provider with no Memcpy node (what CUDA graph capture needs);
  the softmax NaN guards removed (:mod:`.graphs.graph_rewrite`); and every RMSNorm chain fused
  into one ``SimplifiedLayerNormalization`` node (:mod:`.norm_fusion`; onnxruntime's own
  fusion at load does not match the exported form);
* ``fp32``: that graph; its weights stay in the published ``.data`` file (read by
  reference, nothing copied);
* ``int8``: weight matrix products quantized as onnxruntime's ``quantize_dynamic`` does
  (int8 weights per output channel, activations quantized at run time), written one weight
  at a time by :mod:`.int8_streaming` (the same files, a peak of one matrix); only the
  backbone (embeddings, heads and scoring stay fp32);
* ``fp16``: the calibrated mixed-precision pass of :mod:`.fp16_calibrate`, with
  calibration inputs from :mod:`.calibration_prompts`;
* ``fp32-fused``, ``fp16-fused``: the graph rebuilt from its weights as onnxruntime's fused
  kernels by :mod:`.fused_backbone` (own weights file); the bidirectionality probe runs on
  the source's first block before and on the whole fused graph after.

``MultiHeadAttention`` with an additive mask bias alone was measured in an earlier attempt
at 1.03x/1.06x of the unfused forward on the CPU (no gain); the fused variants use it with
everything else fused, for CUDA.

Where: ``<model_dir>/prepared/<variant>-<fingerprint>/`` when the model folder is
writable, else under the cache folder given (the server's ``<data-dir>/prepared``). The
fingerprint covers the source graph, its weights file (size, time, sampled bytes) and
:data:`PREPARE_VERSION`, so a new source or a new preparation rebuilds, and old builds of the
variant are removed. A file lock per variant serialises processes; the build is written to a
temporary folder, every file fsynced, and renamed into place, so a half-written variant is
never loaded, not even after a power loss. ``prepared.json`` records each file's size and a
sampled SHA-256 (the whole graph, the first, middle and last MiB of a weights file: a full
hash of the weights would cost seconds at every start); a folder whose files do not match
(cut, deleted, replaced) is reported as damaged and prepared again, never left in place as a
reason to run the slower published backbone for good.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.engine.runtime.onnx_sessions import (
    Graph,
    choose_providers,
    return_freed_memory,
)
from wyoming_omnivoice.engine.runtime.precision import FUSED, VARIANTS
from wyoming_omnivoice.engine.runtime.probe import check_bidirectional
from wyoming_omnivoice.engine.store.external_data import load_external_tensors
from wyoming_omnivoice.engine.store.model_files import ModelError, ModelPaths
from wyoming_omnivoice.engine.store.prepared_record import (
    GRAPH_FILE,
    INFO_FILE,
    file_records,
    fsync_dir,
    remove_folder,
)
from wyoming_omnivoice.engine.store.prepared_store import (
    PREPARE_VERSION,
    NotPreparable,
    PreparedBackbone,
    load_prepared,
    prepared_root,
    remove_stale,
    source_fingerprint,
    source_of,
    variant_lock,
)
from wyoming_omnivoice.progress import PREPARE, progress

if TYPE_CHECKING:
    import onnx

# onnx and the graph rewrites are imported only when a backbone is built: a start that
# finds its prepared backbone never imports onnx (about 0.6 s on a small CPU).

_LOGGER = logging.getLogger(__name__)

#: Rough preparation cost at the real model size on a 2-core CPU, for the progress line.
_EXPECTED_S = {"fp32": 30, "int8": 15, "fp16": 120, "fp32-fused": 40, "fp16-fused": 40}


def prepare_backbone(paths: ModelPaths | Path, variant: str, *, root: Path | None = None,
                     cache_dir: Path | None = None) -> PreparedBackbone:
    """The prepared ``variant`` of a model folder's backbone, built first if missing.

    ``paths`` is the model folder (or its :class:`ModelPaths`); ``root`` overrides where
    variants are stored, ``cache_dir`` is used when the model folder is read-only.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    source = source_of(paths)
    root = root or prepared_root(source, cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    fingerprint = source_fingerprint(source)
    target = root / f"{variant}-{fingerprint}"
    found, _ = load_prepared(target, source)
    if found is not None:
        return found
    with variant_lock(root, variant):
        found, damage = load_prepared(target, source)  # another process may have built it
        if found is not None:
            return found
        if damage is not None:
            _LOGGER.warning("The prepared %s backbone in %s is damaged (%s); the server "
                            "removes it and prepares it again", variant, target, damage)
            remove_folder(target)
        remove_stale(root, variant, keep=target.name)
        _LOGGER.info("Preparing the %s backbone from %s into %s (once per model; about %d s "
                     "at the real model size on a small CPU) ...", variant, source, target,
                     _EXPECTED_S[variant])
        start = time.perf_counter()
        staging = root / f".tmp-{target.name}-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir()
        try:
            with progress(PREPARE, f"Preparing the {variant} backbone", unit="steps"):
                info = _build(paths, source, variant, staging)
            info.update(variant=variant, fingerprint=fingerprint, version=PREPARE_VERSION,
                        source=str(source), seconds=round(time.perf_counter() - start, 1),
                        files=file_records(staging))
            with atomic_write(staging / INFO_FILE, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(info, indent=1) + "\n")
            fsync_dir(staging)
            os.replace(staging, target)
            fsync_dir(root)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        _LOGGER.info("Prepared the %s backbone in %.1f s (%s)", variant,
                     time.perf_counter() - start, target)
        for pattern, why in info.get("patterns_missing", {}).items():
            _LOGGER.warning("The %s backbone was prepared without the %s rewrite: %s",
                            variant, pattern, why)
        return_freed_memory()  # a server that prepared int8 at its start held 3.8 GB
    result, damage = load_prepared(target, source)
    if result is None:  # pragma: no cover - the rename above makes it complete
        raise ModelError(f"{target} was prepared but does not read back ({damage}); the "
                         "server runs the published backbone this time and prepares it "
                         "again at the next start")
    return result


def rewrite_backbone(source: Path) -> tuple[onnx.ModelProto, dict[str, Any]]:
    """The rewritten graph every variant starts from; weights left as references to the
    published ``.data`` file (the graph alone is small: no 2 GB protobuf limit)."""
    import onnx

    from wyoming_omnivoice.engine.constants import MAX_POSITIONS
    from wyoming_omnivoice.engine.graphs.graph_rewrite import strip_nan_guards
    from wyoming_omnivoice.engine.graphs.rotary_table import (
        RotaryChainNotFound,
        drop_unused_initializers,
        tabulate_rotary,
    )
    from wyoming_omnivoice.engine.offline.canonical_form import canonicalize
    from wyoming_omnivoice.engine.offline.norm_fusion import fuse_rms_norms

    try:
        model = onnx.load(str(source), load_external_data=False)
    except Exception as err:
        raise ModelError(f"Could not read {source}: {err}. Download it again.") from err
    names = {i.name for i in model.graph.input}
    if names != {"inputs_embeds", "attention_mask"}:
        raise NotPreparable(f"{source} has inputs {sorted(names)}, not the bidirectional "
                            "backbone's inputs_embeds and attention_mask; cannot prepare it")
    removed = canonicalize(model)
    # Each rewrite below is an optimisation: one whose pattern is not found is named in
    # "patterns_missing", and what does not need it is prepared all the same.
    missing: dict[str, str] = {}
    try:
        tables = tabulate_rotary(model, source.parent)
    except RotaryChainNotFound as err:
        tables = 0
        missing["rotary table"] = (f"no shape-derived cos/sin chain in the form it rewrites "
                                   f"({err}): no CUDA graphs, no fused variants, no prefix "
                                   "cache")
    guards = strip_nan_guards(model)
    norms = fuse_rms_norms(model)
    if not norms:
        missing["RMSNorm fusion"] = ("no Pow-ReduceMean-Add-Sqrt-Reciprocal-Mul chain: the "
                                     "norms run unfused (slower), no fused variants")
    drop_unused_initializers(model.graph)
    return model, {"rotary_tables": tables, "nan_guards_removed": guards,
                   "rms_norms_fused": norms, "canonical_form": removed,
                   "max_positions": MAX_POSITIONS if tables else 0,
                   "patterns_missing": missing}


def _build(paths: ModelPaths | Path, source: Path, variant: str, out: Path) -> dict[str, Any]:
    import onnx

    from wyoming_omnivoice.engine.offline.int8_streaming import quantize_int8

    model, info = rewrite_backbone(source)
    if variant != "fp32":
        # Quantized or fp16 graphs blur the causality probe (a dynamic activation scale is
        # shared by all positions), so the graph they come from is probed here; the loader
        # probes fp32 graphs itself.
        _check_bidirectional(model, source)
        info["bidirectional_checked"] = True
    if variant == "fp32":
        # Weights stay where they are: the graph refers to the published .data file.
        onnx.save_model(model, str(out / GRAPH_FILE))
        info["weights"] = "source"
        return info
    if variant in FUSED:
        from wyoming_omnivoice.engine.offline.fused_backbone import LayoutNotFound, build_probed
        from wyoming_omnivoice.engine.offline.fused_calibrate import calibrate_fused
        from wyoming_omnivoice.engine.offline.fused_layout import read_layout

        keep: frozenset[str] = frozenset()
        try:
            if variant == "fp16-fused":  # calibrated like fp16 (:mod:`.fused_calibrate`)
                calibration = calibrate_fused(model, source.parent, read_layout(model),
                                              _calibration_feeds(paths))
                keep, info["fp16_report"] = calibration.names, calibration.summary()
            info.update(build_probed(model, source.parent, variant, out / GRAPH_FILE, keep))
        except LayoutNotFound as err:
            raise NotPreparable(f"{source}: {err}; the fused variant cannot be built") from err
        info["weights"] = "own"
        return info
    if variant == "int8":
        # onnxruntime's quantize_dynamic holds the whole model and copies it (5.4 GB peak at
        # the real size); the streaming step writes the same files one weight at a time.
        info["int8_matmuls"] = quantize_int8(model, source.parent, out / GRAPH_FILE)
        if not info["int8_matmuls"]:
            raise NotPreparable(f"{source}: no MatMul reads its weight from an initializer "
                                "(pattern MatMul(x, W); this export computes its weights, "
                                "e.g. Transpose(W), at run time): the int8 variant would "
                                "quantize nothing")
        info["weights"] = "own"
        return info
    load_external_tensors(model, source.parent)
    info.update(_convert_fp16(paths, model, out / GRAPH_FILE))
    info["weights"] = "own"
    return info


def _check_bidirectional(model: onnx.ModelProto, source: Path) -> None:
    """The probe of :mod:`.runtime.probe` on the first attention block (the whole graph when that
    block is not found), weights read through onnxruntime's memory map of the published
    file and not prepacked: a causal export already leaves earlier positions unchanged
    there, and the whole fp32 backbone with prepacked weights cost 1.9 GB at the real size
    (first block, not prepacked: about 0.2 GB and under a second)."""
    probed = first_attention_block(model) or model
    graph = Graph(source, choose_providers("cpu"), model_bytes=probed.SerializeToString(),
                  external_data_dir=source.parent, prepack=False)
    hidden = graph.inputs["inputs_embeds"].shape[-1]
    if not isinstance(hidden, int):
        raise NotPreparable(f"{source}: inputs_embeds has no fixed hidden size")
    check_bidirectional(graph, hidden)


def first_attention_block(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """The backbone up to its first residual sum (``inputs_embeds`` + attention), its
    output named ``hidden_states``; None when the graph has no such sum or the block does
    not read the mask."""
    import onnx

    graph = model.graph
    residual = next((node for node in graph.node
                     if node.op_type == "Add" and "inputs_embeds" in node.input), None)
    if residual is None:
        return None
    producers = {out: index for index, node in enumerate(graph.node) for out in node.output}
    kept: set[int] = set()
    pending = [residual.output[0]]
    while pending:
        index = producers.get(pending.pop())
        if index is None or index in kept:
            continue
        kept.add(index)
        pending.extend(name for name in graph.node[index].input if name)
    nodes = [graph.node[index] for index in sorted(kept)]
    read = {name for node in nodes for name in node.input}
    if not {"inputs_embeds", "attention_mask"} <= read:
        return None
    output = onnx.ValueInfoProto()
    output.CopyFrom(next(o for o in graph.output if o.name == "hidden_states"))
    block = onnx.helper.make_graph(
        [*nodes, onnx.helper.make_node("Identity", [residual.output[0]], ["hidden_states"])],
        "first_attention_block", list(graph.input), [output],
        [tensor for tensor in graph.initializer if tensor.name in read])
    return onnx.helper.make_model(block, opset_imports=list(model.opset_import),
                                  ir_version=model.ir_version)


def _convert_fp16(paths: ModelPaths | Path, model: onnx.ModelProto, target: Path
                  ) -> dict[str, Any]:
    """The calibrated mixed-precision pass (:mod:`.fp16_calibrate`, the fp16 helper's),
    calibrated on realistic backbone inputs (:mod:`.calibration_prompts`)."""
    try:
        from wyoming_omnivoice.engine.offline.fp16_calibrate import DEFAULT_MARGIN, convert_to_fp16
    except ImportError as err:  # pragma: no cover - both ship with the package
        raise ModelError("This build cannot prepare the fp16 backbone (its calibrated "
                         "converter is missing). Use --precision fp32.") from err
    converted, report = convert_to_fp16(model, _calibration_feeds(paths), margin=DEFAULT_MARGIN)
    save_with_own_data(converted, target)
    return {"fp16_report": report.summary()}


def _calibration_feeds(paths: ModelPaths | Path) -> list[dict[str, Any]]:
    """Realistic backbone inputs of the model (:mod:`.calibration_prompts`)."""
    from wyoming_omnivoice.engine.offline.calibration_prompts import calibration_feeds

    model_paths = paths if isinstance(paths, ModelPaths) else \
        ModelPaths.from_dir(source_of(paths).parent)
    return calibration_feeds(model_paths.embeddings, model_paths.tokenizer)


def save_with_own_data(model: onnx.ModelProto, target: Path) -> None:
    """Save ``model`` (weights in memory) with its large weights in ``<name>.data``."""
    import onnx

    for tensor in model.graph.initializer:
        tensor.ClearField("data_location")
        del tensor.external_data[:]
    onnx.save_model(model, str(target), save_as_external_data=True,
                    all_tensors_to_one_file=True, location=target.name + ".data",
                    size_threshold=1024)
