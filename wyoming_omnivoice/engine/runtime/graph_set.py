"""Loading and checking the graphs of one model directory: one :class:`GraphSet` out.

Each graph is opened as an onnxruntime session (:class:`.onnx_sessions.Graph`) and checked
against its I/O contract. The backbone comes either as published (with its softmax NaN
guards removed in memory, see :mod:`.graph_rewrite`) or as a prepared variant written by
:mod:`.prepare`; either way it must be bidirectional, which a probe checks by moving the
last position and watching earlier hidden states. The scoring graph is built on our side
from the published heads (:mod:`.scoring`); its variants are made on first use.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.constants import MASK_ID, NUM_CODEBOOKS
from wyoming_omnivoice.engine.graphs.scoring_cache import (
    build_scoring_bytes,
    cached_scoring_file,
    keep,
)
from wyoming_omnivoice.engine.runtime.cuda_graphs import capture_failure_message, placement_of
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, ProviderChoice
from wyoming_omnivoice.engine.runtime.probe import check_bidirectional
from wyoming_omnivoice.engine.store.model_files import CAUSAL_DECODER_HELP, ModelError, ModelPaths
from wyoming_omnivoice.engine.store.prepared_store import PreparedBackbone

_LOGGER = logging.getLogger(__name__)

#: A backbone graph file larger than this carries its weights inline (the published graph
#: is 9 MB with 1.7 GB of external data).
_MAX_REWRITE_BYTES = 256 * 1024 * 1024


@dataclass
class GraphSet:
    """The sessions one engine runs, and what was learned while loading them."""

    embeddings: Graph
    backbone: Graph
    vocoder: Graph
    heads_path: Path
    hidden_size: int
    providers: ProviderChoice
    threads: int | None = None
    #: Longest input of a prepared backbone (its rotary table); None: no limit.
    max_positions: int | None = None
    #: Where built scoring graphs are kept (the prepared root); None: built in memory.
    scoring_cache: Path | None = None
    #: Seconds each session took to load (label -> s), for the start-up line.
    load_seconds: dict[str, float] = field(default_factory=dict, repr=False)
    #: The prepared backbone loaded (None: the published file).
    prepared: PreparedBackbone | None = None
    #: Why the published backbone runs in place of the variant asked for (None: it was not
    #: asked for another, or the other runs).
    precision_fallback: str | None = None
    _scorers: dict[tuple[bool, bool], Graph] = field(default_factory=dict, repr=False)
    #: With the text table kept on the host (:mod:`.target_embeddings`): the device
    #: session of the target positions; ``embeddings`` then runs on the CPU provider.
    target_embeddings: Graph | None = None
    #: The step sessions of the device step loop by (guided, noisy), built on first use
    #: (:func:`.decoding.device_selection.step_session`: a ``StepSession``).
    selections: dict[tuple[bool, bool], Any] = field(default_factory=dict, repr=False)

    @property
    def _device_graphs(self) -> tuple[Graph, ...]:
        first = self.target_embeddings or self.embeddings
        return (first, self.backbone, self.vocoder)

    @property
    def device(self) -> str:
        """``cuda`` when every session runs on the CUDA provider, else ``cpu``."""
        return "cuda" if all(g.device == "cuda" for g in self._device_graphs) else "cpu"

    @property
    def devices(self) -> set[str]:
        return {g.device for g in self._device_graphs}

    def scorer(self, sampling: bool, guided: bool) -> Graph:
        """The scoring graph variant (built once per variant, kept on disk when there is a
        ``scoring_cache``: see :mod:`.scoring_cache`)."""
        key = (sampling, guided)
        found = self._scorers.get(key)
        if found is None:
            started = time.perf_counter()
            variant = ", ".join(name for name, on in (("sampling", sampling),
                                                      ("unguided", not guided)) if on)
            label = f"scoring ({variant})" if variant else "scoring"
            found = self._cached_scorer(sampling, guided, label)
            if found is None:
                model = build_scoring_bytes(self.heads_path, self.hidden_size,
                                            sampling=sampling, guided=guided)
                found = Graph(self.heads_path, self.providers, threads=self.threads,
                              label=label, model_bytes=model)
                if self.scoring_cache is not None:
                    keep(cached_scoring_file(self.scoring_cache, self.heads_path,
                                             self.hidden_size, sampling=sampling,
                                             guided=guided), model)
            self._scorers[key] = found
            self.load_seconds[label] = time.perf_counter() - started
        return found

    def _cached_scorer(self, sampling: bool, guided: bool, label: str) -> Graph | None:
        if self.scoring_cache is None:
            return None
        try:
            path = cached_scoring_file(self.scoring_cache, self.heads_path, self.hidden_size,
                                       sampling=sampling, guided=guided)
        except OSError:  # the heads file itself: building it says what is wrong
            return None
        if not path.is_file():
            return None
        try:
            return Graph(path, self.providers, threads=self.threads, label=label)
        except ModelError as err:
            _LOGGER.warning("Kept scoring graph %s does not load (%s); building it again",
                            path, str(err).split(". ")[0])
            path.unlink(missing_ok=True)
            return None


def load_graphs(paths: ModelPaths, providers: ProviderChoice, *,
                backbone: Path | None = None, prepared: PreparedBackbone | None = None,
                threads: int | None = None, cuda_graph: bool = False,
                disabled_optimizers: tuple[str, ...] = (), prepack: bool = True) -> GraphSet:
    """Open and check every graph of ``paths``; ``backbone`` overrides the backbone file,
    ``prepared`` replaces it by a prepared variant, and ``disabled_optimizers`` applies to
    its session; ``prepack`` False keeps the backbone's weights unpacked, in the memory map.

    The backbone session (most of the load: its weights read and prepacked, about 0.5 s
    at the real size) is made on a second thread while this one makes the others:
    onnxruntime releases the GIL while it builds a session."""
    seconds: dict[str, float] = {}

    def timed(label: str, make: Any) -> Any:
        started = time.perf_counter()
        made = make()
        seconds[label] = time.perf_counter() - started
        return made

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="omnivoice-load") as pool:
        backbone_job = pool.submit(timed, "backbone", lambda: load_backbone(
            backbone or paths.backbone, providers, threads, cuda_graph=cuda_graph,
            disabled_optimizers=disabled_optimizers, prepared=prepared,
            prepack=prepack))
        try:
            embeddings = timed("embeddings", lambda: Graph(paths.embeddings, providers,
                                                           threads=threads))
            embeddings.require(["input_ids", "audio_mask"], ["inputs_embeds"], exact=True)
            vocoder = timed("vocoder", lambda: Graph(paths.vocoder, providers,
                                                     threads=threads))
            vocoder.require(["codes"], ["waveform_24k"], exact=True)
        finally:
            backbone_graph = backbone_job.result()  # its error first: it names the model
    hidden_size = _hidden_size(backbone_graph, embeddings)
    graphs = GraphSet(embeddings=embeddings, backbone=backbone_graph, vocoder=vocoder,
                      heads_path=paths.heads, hidden_size=hidden_size,
                      providers=providers, threads=threads,
                      max_positions=prepared.max_positions if prepared else None,
                      scoring_cache=prepared.path.parent.parent if prepared else None,
                      load_seconds=seconds, prepared=prepared)
    graphs.scorer(False, True)  # the default scorer is checked at load time
    if prepared is None or not prepared.info.get("bidirectional_checked"):
        check_bidirectional(backbone_graph, hidden_size)
    return graphs


def load_backbone(path: Path, providers: ProviderChoice, threads: int | None,
                  *, cuda_graph: bool = False, disabled_optimizers: tuple[str, ...] = (),
                  prepared: PreparedBackbone | None = None, prepack: bool = True) -> Graph:
    """The backbone session, checked: bidirectional contract, bool 4-D mask."""
    backbone = None
    source: dict[str, Any] = {"disabled_optimizers": disabled_optimizers, "prepack": prepack}
    if prepared is not None:
        path = prepared.path
        source.update(model_bytes=prepared.model_bytes(),
                      external_data_dir=prepared.weights_dir,
                      label=f"{prepared.variant} backbone ({prepared.path.parent.name})")
    else:
        rewritten = _backbone_without_nan_guards(path)
        if rewritten is not None:
            source.update(model_bytes=rewritten, external_data_dir=path.parent)
    if cuda_graph and providers.device == "cuda":
        try:
            backbone = Graph(path, providers, threads=threads, cuda_graph=True, **source)
        except ModelError as err:
            _LOGGER.warning("%s", capture_failure_message(
                source.get("label", path.name), err.__cause__ or err,
                placement_of(path, providers, **source)))
    if backbone is None:
        backbone = Graph(path, providers, threads=threads, **source)
    if any(name.startswith("past_key_values") for name in backbone.inputs):
        raise ModelError(f"{path} is a causal decoder with a KV cache. {CAUSAL_DECODER_HELP}")
    backbone.require(["inputs_embeds", "attention_mask"], ["hidden_states"], exact=True)
    mask_spec = backbone.inputs["attention_mask"]
    if mask_spec.dtype is not np.bool_ or len(mask_spec.shape) != 4:
        raise ModelError(
            f"{path}: attention_mask must be a bool [B, 1, S, S] tensor, found "
            f"{mask_spec.dtype.__name__} with rank {len(mask_spec.shape)}; this is not the "
            "bidirectional OmniVoice backbone."
        )
    return backbone


def _backbone_without_nan_guards(path: Path) -> bytes | None:
    """The backbone graph with its softmax NaN guards removed, or None to load the file.

    See :mod:`.graph_rewrite`: exact, because no attention row is ever fully masked. A graph
    that cannot be parsed here is left to onnxruntime, whose error names the file; so is a
    graph with its weights inline (a copy of them in memory is not worth a few percent).
    """
    import onnx

    from wyoming_omnivoice.engine.graphs.graph_rewrite import strip_nan_guards

    try:
        if path.stat().st_size > _MAX_REWRITE_BYTES:
            _LOGGER.debug("Backbone rewrite skipped: %s holds its weights inline", path)
            return None
        model = onnx.load(str(path), load_external_data=False)
    except Exception as err:  # truncated or not ONNX: Graph() reports it
        _LOGGER.debug("Backbone rewrite skipped, %s did not parse: %s", path, err)
        return None
    removed = strip_nan_guards(model)
    if not removed:
        return None
    _LOGGER.debug("Backbone: removed %d softmax NaN guards (no mask row is ever empty)",
                  removed)
    return bytes(model.SerializeToString())


def _hidden_size(backbone: Graph, embeddings: Graph) -> int:
    for spec in (backbone.inputs["inputs_embeds"], embeddings.outputs["inputs_embeds"]):
        if len(spec.shape) == 3 and isinstance(spec.shape[2], int):
            return int(spec.shape[2])
    ids = np.full((1, NUM_CODEBOOKS, 1), MASK_ID, dtype=np.int64)
    (embeds,) = embeddings.run({"input_ids": ids, "audio_mask": np.ones((1, 1), bool)},
                               ["inputs_embeds"])
    return int(embeds.shape[-1])
