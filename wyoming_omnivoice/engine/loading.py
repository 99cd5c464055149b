"""A model directory's graphs loaded for :meth:`.core.Engine.load`: the precision resolved
for the device, the backbone variant prepared at the first start (else the published file,
with the reason), the graphs loaded, and a prepared folder that does not load built once
more."""

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
        except NotPreparable as err:  # loading the file as published says what is wrong
            _LOGGER.warning("%s; loading the backbone as published", err)
            precision = "published"
        except (OSError, RuntimeError, ValueError) as err:
            if isinstance(err, ModelError):
                raise
            # A failing conversion costs speed, not the service.
            _LOGGER.error("Could not prepare the %s backbone (%s); the server runs the "
                          "published fp32 backbone (slower) this time and tries to "
                          "prepare it again at the next start", precision, err)
            precision = "published"
    preparing = time.perf_counter() - started
    if cuda_graph is None:
        cuda_graph = prepared is not None
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
    return paths, graphs, precision
