"""``wyoming-omnivoice --check-model``: what a model folder holds, and whether the engine
can use it as intended, in about a minute.

No real OmniVoice files reach the project's machines: the engine is tested on graphs that
we export ourselves in the published layout. This check reads a user's real download and
prints what a support request needs, each line a fact, and ``PROBLEM:`` before anything the
engine would not use as intended (the exit code is then 1):

* every graph's inputs and outputs with their element types, against the contract (names,
  int64 ids and codes, bool masks, float32 or float16 states);
* the text table of the embeddings graph (found by the lookup that reads it), its type and
  size;
* the backbone's patterns that the prepared variants rewrite (rotary chain, NaN guards,
  RMSNorm chains, MatMul weights for int8, the fused layout): found, or which is missing;
* the device's default variant (or ``--precision``) prepared and loaded as a server start
  would (kept for the server);
* the multi-row checks of the backbone and the vocoder;
* the time of one decode step (embeddings, backbone, scoring) and of a vocoder call.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_LOGGER = logging.getLogger(__name__)

#: Element types each graph's inputs and outputs may have (anything else is a problem).
FLOATS = ("float32", "float16")
CONTRACT: dict[str, dict[str, tuple[str, ...]]] = {
    "embeddings": {"input_ids": ("int64",), "audio_mask": ("bool",),
                   "inputs_embeds": FLOATS},
    "backbone": {"inputs_embeds": ("float32",), "attention_mask": ("bool",),
                 "hidden_states": ("float32",)},
    "heads": {"hidden_states": FLOATS, "logits": FLOATS},
    "vocoder": {"codes": ("int64",), "waveform_24k": ("float32",)},
}


class Report:
    """The lines printed, and the problems among them."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.problems: list[str] = []

    def line(self, text: str) -> None:
        self.write(text)

    def problem(self, text: str) -> None:
        self.problems.append(text)
        self.write(f"PROBLEM: {text}")


def _type_name(value: Any) -> str:
    from onnx import helper

    elem = value.type.tensor_type.elem_type
    try:
        return str(helper.tensor_dtype_to_np_dtype(elem).name)
    except Exception:
        return f"type {elem}"


def _dims(value: Any) -> str:
    dims = value.type.tensor_type.shape.dim
    return "[" + ", ".join(d.dim_param or str(d.dim_value) for d in dims) + "]"


def check_interfaces(paths: Any, report: Report) -> None:
    """Each graph's inputs and outputs with their types, against :data:`CONTRACT`."""
    import onnx

    for label, path in (("embeddings", paths.embeddings), ("backbone", paths.backbone),
                        ("heads", paths.heads), ("vocoder", paths.vocoder)):
        graph = onnx.load(str(path), load_external_data=False).graph
        report.line(f"{label} ({path.name}):")
        wanted = CONTRACT[label]
        seen = {}
        for kind, values in (("in", graph.input), ("out", graph.output)):
            for value in values:
                seen[value.name] = _type_name(value)
                report.line(f"  {kind:3} {value.name:16} {seen[value.name]:8} {_dims(value)}")
        for name, types in wanted.items():
            if name not in seen:
                report.problem(f"{path.name} has no {name}")
            elif seen[name] not in types:
                report.problem(f"{path.name}: {name} is {seen[name]}, not "
                               f"{' or '.join(types)}")
        extra = sorted(set(seen) - set(wanted))
        if extra and label == "backbone":
            report.problem(f"{path.name} has other inputs or outputs: {extra}")


def check_text_table(paths: Any, report: Report) -> None:
    from wyoming_omnivoice.engine.forward.target_embeddings import text_table_summary

    summary = text_table_summary(paths.embeddings)
    report.line(f"text table: {summary}")
    if summary == "not found":
        report.problem("the embeddings graph has no text table gathered from "
                       "input_ids[:, 0, :] (--host-text-table cannot be used)")


def check_patterns(paths: Any, report: Report) -> None:
    """The backbone's rewrite patterns (what each prepared variant needs), found or not."""
    from wyoming_omnivoice.engine.offline.fused_layout import LayoutNotFound, read_layout
    from wyoming_omnivoice.engine.offline.prepare import rewrite_backbone
    from wyoming_omnivoice.engine.store.prepared_store import NotPreparable

    try:
        model, info = rewrite_backbone(paths.backbone)
    except NotPreparable as err:
        report.problem(f"the backbone cannot be prepared at all: {err}")
        return
    removed = ", ".join(f"{n} {k}" for k, n in info["canonical_form"].items() if n)
    report.line(f"backbone patterns: rotary tables {info['rotary_tables']}, NaN guards "
                f"{info['nan_guards_removed']}, RMSNorm chains {info['rms_norms_fused']} "
                f"(canonical form: {removed or 'nothing removed'})")
    for pattern, why in info["patterns_missing"].items():
        report.line(f"  missing: {pattern}: {why}")
    inits = {t.name for t in model.graph.initializer}
    matmuls = sum(1 for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in inits)
    report.line(f"  int8: {matmuls} MatMul weights to quantize" if matmuls else
                "  int8: no MatMul reads its weight from an initializer (not preparable)")
    try:
        layout = read_layout(model)
        report.line(f"  fused: {len(layout.layers)} layers read (fp32-fused, fp16-fused "
                    "preparable)")
    except LayoutNotFound as err:
        report.line(f"  fused: not preparable ({err})")


def check_engine(model_dir: Path, device: str, precision: str, report: Report,
                 cache_dir: Path | None) -> None:
    """The variant prepared and loaded as a start would; multi-row checks; timings."""
    import numpy as np

    from wyoming_omnivoice.engine.audio.vocoder import Vocoder
    from wyoming_omnivoice.engine.core import Engine
    from wyoming_omnivoice.engine.decoding.decoder import DecodeOptions
    from wyoming_omnivoice.engine.store.model_files import ModelError

    started = time.perf_counter()
    try:
        engine = Engine.load(model_dir, device=device, precision=precision,
                             cache_dir=cache_dir)
    except (ModelError, RuntimeError, ValueError) as err:
        report.problem(f"the engine does not load: {err}")
        return
    report.line(f"engine: {engine.device.upper()}, backbone {engine.precision}, hidden "
                f"{engine.hidden_size}, loaded in {time.perf_counter() - started:.1f} s")
    if engine.precision_fallback:
        report.problem(f"the published backbone runs in place of the variant asked for: "
                       f"{engine.precision_fallback}")
    if engine.graphs.prepared is not None:
        for pattern, why in engine.graphs.prepared.info.get("patterns_missing", {}).items():
            report.line(f"  prepared {engine.precision} without the {pattern}: {why}")
    check = engine.row_check
    if check.ok:
        report.line(f"backbone, two rows: {check.describe()}")
    else:
        report.problem(f"backbone, two rows: {check.reason} (batches decode row by row)")
    problem = Vocoder(engine.vocoder).rows_problem()
    if problem is None:
        report.line("vocoder, two rows: a two-row decode equals its rows decoded alone")
    else:
        report.problem(f"vocoder, two rows: {problem} (every item decoded alone)")
    options = DecodeOptions(num_step=1)
    engine.generate_codes("Hello there.", options=options)  # sessions initialised
    started = time.perf_counter()
    codes = engine.generate_codes("The living room lights are on.", options=options)
    step = time.perf_counter() - started
    stats = engine.last_stats
    started = time.perf_counter()
    engine.vocoder_runner.decode(np.asarray(codes))
    vocode = time.perf_counter() - started
    report.line(f"one decode step: {step * 1000:.0f} ms (backbone {stats.backbone_s * 1000:.0f}"
                f" ms, {stats.length} positions); vocoder of {codes.shape[1]} frames: "
                f"{vocode * 1000:.0f} ms")


def check_model(model_dir: Path, *, device: str = "auto", precision: str = "auto",
                cache_dir: Path | None = None,
                write: Callable[[str], None] = print) -> int:
    """Run every check on ``model_dir``, printing with ``write``; 0 when the engine can use
    the model as intended, 1 otherwise (each problem printed on a ``PROBLEM:`` line)."""
    from wyoming_omnivoice.engine.store.model_files import ModelError, ModelPaths

    started = time.perf_counter()
    report = Report(write)
    try:
        paths = ModelPaths.from_dir(model_dir)
        paths.check()
    except ModelError as err:
        report.problem(str(err))
        return 1
    report.line(f"model folder: {paths.root}")
    check_interfaces(paths, report)
    check_text_table(paths, report)
    check_patterns(paths, report)
    check_engine(paths.root, device, precision, report, cache_dir)
    verdict = "the engine can use this model as intended" if not report.problems else \
        f"{len(report.problems)} problem(s)"
    report.line(f"checked in {time.perf_counter() - started:.0f} s: {verdict}")
    return 1 if report.problems else 0
