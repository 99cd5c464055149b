"""A model directory's graphs loaded for :meth:`.core.Engine.load`: the precision resolved
for the device, the backbone variant prepared at the first start, the graphs loaded, and a
prepared folder that does not load built once more.

A variant that cannot be prepared is never passed over quietly. With ``auto`` the published
backbone runs in its place: one warning naming the variant and the cause, and the cause kept
(:attr:`.graph_set.GraphSet.precision_fallback`) for the metrics and the status pages. With
the variant asked for by name, the load fails with the cause (:class:`PrecisionUnavailable`):
the user asked for a speed that this model cannot give."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from wyoming_omnivoice.engine.offline.prepare import prepare_backbone
from wyoming_omnivoice.engine.runtime.graph_set import GraphSet, load_graphs
from wyoming_omnivoice.engine.runtime.onnx_sessions import choose_providers
from wyoming_omnivoice.engine.runtime.precision import VARIANTS, check_precision, resolve_precision
from wyoming_omnivoice.engine.store.model_files import ModelError, ModelPaths
from wyoming_omnivoice.engine.store.prepared_store import NotPreparable, discard_prepared

_LOGGER = logging.getLogger(__name__)


class PrecisionUnavailable(ModelError):
    """The backbone variant asked for by name cannot be prepared (the message says why)."""


def _unavailable(asked: str, variant: str, cause: str) -> str | None:
    """The fallback's cause for ``auto`` (logged once); raises for a variant asked for by
    name."""
    if asked != "auto":
        raise PrecisionUnavailable(
            f"--precision {asked}: the {variant} backbone cannot be prepared from this model "
            f"({cause}). Run --check-model to see what the model files hold, or start with "
            "--precision published (the published backbone, slower) or auto.")
    reason = f"the {variant} backbone could not be prepared: {cause}"
    _LOGGER.warning("Running the published backbone (slower): %s", reason)
    return reason


def load_model_graphs(
    model_dir: str | Path,
    device: str,
    *,
    precision: str,
    threads: int | None,
    cuda_graph: bool | None,
    allow_tf32: bool,
    prepared_dir: Path | None,
    cache_dir: Path | None,
    prepack: bool,
) -> tuple[ModelPaths, GraphSet, str]:
    """The model's paths, its loaded graphs and the backbone variant in use (see
    :meth:`.core.Engine.load` for the arguments)."""
    check_precision(precision)
    asked = precision
    fallback: str | None = None
    paths = ModelPaths.from_dir(model_dir)
    providers = choose_providers(device, allow_tf32=allow_tf32)
    if device == "auto":
        _LOGGER.info("device auto: trying %s", providers.device.upper())
    precision = resolve_precision(precision, providers.device)
    prepared = None
    started = time.perf_counter()
    if precision in VARIANTS:
        try:
            prepared = prepare_backbone(paths, precision, root=prepared_dir,
                                        cache_dir=cache_dir)
        except NotPreparable as err:
            if paths.backbone.exists() and "inputs" in str(err):
                # Not the bidirectional backbone's interface: loading the file as published
                # says what is wrong (and how to fix it).
                _LOGGER.warning("%s; loading the backbone as published", err)
                fallback = str(err)
            else:
                fallback = _unavailable(asked, precision, str(err))
            precision = "published"
        except (OSError, RuntimeError, ValueError) as err:
            if isinstance(err, ModelError):
                raise
            # A failing conversion costs speed, not the service (with auto); the next start
            # tries to prepare it again.
            fallback = _unavailable(asked, precision, f"{err}; tried again at the next start")
            precision = "published"
    preparing = time.perf_counter() - started
    if cuda_graph is None:  # capture needs the rotary table (no shape-derived compute)
        cuda_graph = prepared is not None and prepared.max_positions is not None
    # The fused SkipSimplifiedLayerNormalization of CUDA returns zeros for large fp16
    # inputs (onnxruntime#29034); keep the fp16 backbone's RMSNorm unfused there.
    disabled = ("SkipLayerNormFusion",) if precision == "fp16" and \
        providers.device == "cuda" else ()
    try:
        graphs = load_graphs(paths, providers, prepared=prepared, threads=threads,
                             cuda_graph=cuda_graph, disabled_optimizers=disabled,
                             prepack=prepack)
    except ModelError as err:
        if prepared is None:
            raise
        # Damage the record's sizes and samples do not catch: build it once more.
        discard_prepared(prepared, str(err).split(". ")[0])
        prepared = prepare_backbone(paths, precision, root=prepared_dir,
                                    cache_dir=cache_dir)
        graphs = load_graphs(paths, providers, prepared=prepared, threads=threads,
                             cuda_graph=cuda_graph, disabled_optimizers=disabled,
                             prepack=prepack)
    graphs.load_seconds = {"prepared backbone": preparing, **graphs.load_seconds}
    graphs.precision_fallback = fallback
    return paths, graphs, precision
