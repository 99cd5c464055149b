"""The :class:`Engine` facade: text in, 24 kHz speech out.

Loads the four published graphs (plus our scoring graph), turns requests into plans
(language, instruct, duration and long-text chunks resolved like upstream ``generate`` and
``_generate_chunked``: :mod:`.planning`), decodes code grids in batches, and runs the
vocoder and post-processing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np

from wyoming_omnivoice.engine.audio.reference import (
    ReferenceEncoder,
    prepare_reference,
)
from wyoming_omnivoice.engine.audio.vocoder import Vocoder, check_codes
from wyoming_omnivoice.engine.audio.voice_prompt import VoicePrompt
from wyoming_omnivoice.engine.constants import FRAME_RATE, SAMPLE_RATE
from wyoming_omnivoice.engine.decoding.decoder import (
    DecodeItem,
    DecodeOptions,
    Decoder,
    DecodeStats,
)
from wyoming_omnivoice.engine.decoding.device_selection import step_session
from wyoming_omnivoice.engine.forward.iobinding import StepRunner
from wyoming_omnivoice.engine.forward.layouts import BUCKETS
from wyoming_omnivoice.engine.forward.prefix_cache import CachedBackbone, check_prefix_cache
from wyoming_omnivoice.engine.forward.row_check import check_graph_set_rows
from wyoming_omnivoice.engine.forward.target_embeddings import keep_text_table_on_host
from wyoming_omnivoice.engine.loading import load_model_graphs
from wyoming_omnivoice.engine.planning import (
    Plan,
    Planner,
    SynthesisRequest,
    check_reference_fits,
)
from wyoming_omnivoice.engine.prompt.builder import PromptBuilder
from wyoming_omnivoice.engine.rendering import render_batch
from wyoming_omnivoice.engine.runtime.graph_set import GraphSet
from wyoming_omnivoice.engine.session import SynthesisSession
from wyoming_omnivoice.engine.store.model_files import ModelPaths
from wyoming_omnivoice.engine.synthesis_stats import SynthesisStats
from wyoming_omnivoice.engine.warm_up import SHORT_REPLY, warm_up_engine

_LOGGER = logging.getLogger(__name__)

SAMPLES_PER_FRAME = SAMPLE_RATE // FRAME_RATE
#: Row-count buckets used with CUDA graphs (each captured graph has one fixed shape).
ROW_BUCKETS = (1, 2, 4, 8, 16)
#: The smallest target canvas decoded (frames, 1.6 s). A C port of OmniVoice reports that
#: canvases under about 37-40 frames degenerate into a sub-50 Hz rumble instead of speech,
#: and that the PyTorch reference does the same (kizuna-ai-lab/synthesize.cpp,
#: ``docs/models/omnivoice-0-6b.md``); "Done." resolves to 26 frames, "Hi." to 22. A
#: shorter estimate is decoded on this canvas and the extra silence is trimmed by the
#: post-processing (``remove_silence`` keeps 100 ms at each edge). Upstream has no
#: minimum: 0 decodes its canvases exactly.
MIN_CANVAS_FRAMES = 40

class Engine:
    """OmniVoice inference on onnxruntime. Blocking and not thread-safe: one owner thread."""

    sample_rate = SAMPLE_RATE

    def __init__(
        self,
        paths: ModelPaths,
        graphs: GraphSet,
        *,
        layout: str = "auto",
        io_binding: bool | None = None,
        buckets: bool | None = None,
        precision: str = "published",
        min_canvas_frames: int = MIN_CANVAS_FRAMES,
        device_loop: bool | None = None,
    ) -> None:
        """An engine over loaded graphs (see :meth:`load`)."""
        if not isinstance(min_canvas_frames, int) or min_canvas_frames < 0:
            raise ValueError("min_canvas_frames must be a whole number of frames >= 0, "
                             f"not {min_canvas_frames!r}")
        self.paths = paths
        #: The backbone variant in use (see :mod:`.precision`), and why it is the published
        #: one when another was asked for (None otherwise: :mod:`.loading`).
        self.precision = precision
        self.precision_fallback = graphs.precision_fallback
        self.graphs = graphs
        started = time.perf_counter()
        self.prompts = PromptBuilder(paths.tokenizer)
        #: A request's plans and prompts (:class:`.planning.Planner`), shared with sessions.
        self.planner = Planner(self.prompts, min_canvas_frames)
        #: Seconds the load spent per part (prepared backbone, each session, tokenizer).
        self.load_seconds: dict[str, float] = {**graphs.load_seconds,
                                               "tokenizer": time.perf_counter() - started}
        self.vocoder = graphs.vocoder
        self.device = graphs.device
        on_cuda = self.device == "cuda"
        backbone = graphs.backbone
        # On CUDA: tensors stay on the device between graphs, and lengths are bucketed so
        # allocations (and CUDA graphs, when enabled) are reused. Optional on CPU.
        use_buckets = on_cuda if buckets is None else buckets
        #: The vocoder of a batch: in frame buckets with buckets (a CUDA Conv sets up again
        #: for every new shape; see :mod:`.vocoder`), else per item.
        self.vocoder_runner = Vocoder(graphs.vocoder, bucketed=use_buckets)
        #: Where the time of the last :meth:`synthesize_batch` went (:mod:`.synthesis_stats`).
        self.last_synthesis = SynthesisStats()
        bucket_set = BUCKETS if use_buckets else None
        #: Whether the backbone may run several rows per forward (:mod:`.row_check`).
        self.row_check = check_graph_set_rows(graphs, precision)
        runner = None
        if (on_cuda if io_binding is None else io_binding) and self.row_check.ok:
            runner = StepRunner(graphs.embeddings, backbone, graphs.hidden_size,
                                cuda_graph=backbone.cuda_graph, buckets=bucket_set or (),
                                target_embeddings=graphs.target_embeddings)
        self.decoder = Decoder(
            graphs.embeddings, backbone, graphs.scorer(False, True), graphs.scorer,
            graphs.hidden_size, layout=layout, runner=runner, buckets=bucket_set,
            row_buckets=ROW_BUCKETS if backbone.cuda_graph and use_buckets else None,
            max_positions=graphs.max_positions, cached_backbone=self._cached_backbone,
        )
        self.decoder.one_row = not self.row_check.ok
        if runner is not None and (on_cuda if device_loop is None else device_loop):
            # Scoring, selection and the token update on the device (:mod:`.device_selection`)
            self.decoder.selection_graph = partial(step_session, graphs)
        self._cached: CachedBackbone | None = None
        self.hidden_size = graphs.hidden_size
        if graphs.providers.device == "cuda" and not on_cuda:
            _LOGGER.warning(
                "CUDA provider did not load for every graph (%s); running on CPU",
                ", ".join(sorted(graphs.devices)),
            )
        self.fingerprint = paths.fingerprint()
        #: The files that decide the codes only (shared keys: canonical anchors).
        self.decode_fingerprint = paths.decode_fingerprint()
        self._reference_encoder: ReferenceEncoder | None = None
        # encode_reference may be called from another thread than decodes (voice folders
        # added while serving): its sessions are its own, only their creation is guarded.
        self._reference_lock = threading.Lock()
        _LOGGER.info(
            "OmniVoice engine ready on %s (backbone %s, hidden %d, layout %s, io binding %s, "
            "buckets %s, CUDA graphs %s, model %s)",
            self.device.upper(), precision, self.hidden_size, layout, runner is not None,
            use_buckets, backbone.cuda_graph, paths.root,
        )

    @classmethod
    def load(
        cls,
        model_dir: str | Path,
        device: str = "auto",
        *,
        precision: str = "fp32",
        layout: str = "auto",
        threads: int | None = None,
        io_binding: bool | None = None,
        buckets: bool | None = None,
        cuda_graph: bool | None = None,
        allow_tf32: bool = False,
        prepared_dir: Path | None = None,
        cache_dir: Path | None = None,
        min_canvas_frames: int = MIN_CANVAS_FRAMES,
        prefix_cache: int = 0,
        prepack: bool = True,
        host_text_table: bool = False,
        device_loop: bool | None = None,
    ) -> Engine:
        """Load a model directory (see :mod:`.model_files`) on ``auto``/``cuda``/``cpu``.

        ``precision`` (see :mod:`.precision`): ``fp32`` (exact, the default), ``int8``,
        ``fp16``, ``auto`` (the device's default) run a backbone prepared once by
        :mod:`.prepare` beside the model (``prepared_dir`` overrides where; ``cache_dir`` is
        used when the model folder is read-only); ``published`` runs the published file.
        ``io_binding`` and ``buckets`` default to on for CUDA and off for CPU;
        ``cuda_graph`` (CUDA only) captures one CUDA graph per bucket shape, by default
        with a prepared backbone. ``allow_tf32`` lets CUDA multiply fp32 in TF32 (faster,
        not exact; off by default). ``min_canvas_frames``: the smallest target canvas (see
        :data:`MIN_CANVAS_FRAMES`; 0 keeps upstream's canvases). ``prefix_cache`` >= 2
        loads the prefix-cache session now (:mod:`.prefix_cache`; a decode uses it when
        its ``DecodeOptions.prefix_cache`` asks), so a backbone that cannot run it fails
        here and not at the first request; 0 (the default) loads it only if asked.
        ``prepack`` False (CPU) keeps onnxruntime from copying the backbone's weights into
        its packed layouts: they are used where they lie in its read-only memory map of the
        weights file (little anonymous memory; for one-off work such as canonical anchors).
        ``host_text_table`` keeps the text-embedding table in host memory (0.31 GB of GPU
        memory at the real size: float16 in the published file) with IO binding: see
        :mod:`.target_embeddings`.
        ``device_loop`` (default: on CUDA) runs each step's selection on the device.
        """
        check_prefix_cache(prefix_cache)
        paths, graphs, precision = load_model_graphs(
            model_dir, device, precision=precision, threads=threads, cuda_graph=cuda_graph,
            allow_tf32=allow_tf32, prepared_dir=prepared_dir, cache_dir=cache_dir,
            prepack=prepack)
        if host_text_table:  # the text table in host memory (:mod:`.target_embeddings`)
            keep_text_table_on_host(graphs, paths.embeddings)
        engine = cls(paths, graphs, layout=layout, io_binding=io_binding, buckets=buckets,
                     precision=precision, min_canvas_frames=min_canvas_frames,
                     device_loop=device_loop)
        if prefix_cache >= 2:
            engine._cached_backbone()
        return engine

    def _cached_backbone(self) -> CachedBackbone:
        """The prefix-cache session (:mod:`.prefix_cache`), loaded once."""
        if self._cached is None:
            prepared = self.graphs.prepared
            if prepared is None or self.decoder.runner is not None:
                raise ValueError(
                    f"the prefix cache needs a prepared fp32 or int8 backbone on the CPU step "
                    f"path; this engine runs the {self.precision} backbone"
                    f"{' with IO binding' if self.decoder.runner is not None else ''}. Use "
                    "--precision int8 or fp32 on the CPU, or --prefix-cache 0")
            self._cached = CachedBackbone.load(prepared, self.graphs.providers,
                                               self.graphs.threads)
        return self._cached

    def warm_up(self, lengths: Sequence[int] | None = None,
                batch_sizes: Sequence[int] | None = None, prefix_cache: int = 0,
                options: DecodeOptions | None = None) -> int:
        """Run one forward per length bucket a short reply can use, at every row bucket of
        the requests decoding at once (``batch_sizes``; default: 1, 2, 4, 8 with CUDA
        graphs, else 1); with the step loop on the device, check it and capture its step
        graphs for short replies decoded with ``options`` (:mod:`.warm_up`). Returns the
        forward shapes run. The server calls this once at startup."""
        return warm_up_engine(self, lengths, batch_sizes, prefix_cache, options)

    @property
    def min_canvas_frames(self) -> int:
        """The smallest target canvas decoded (see :data:`MIN_CANVAS_FRAMES`)."""
        return self.planner.min_canvas_frames

    @property
    def last_stats(self) -> DecodeStats:
        """Timing of the last decode (for benchmarks)."""
        return self.decoder.last_stats

    def _decode(self, plans: Sequence[Plan], options: DecodeOptions) -> list[np.ndarray]:
        items = [DecodeItem(prompt=self.planner.prompt(plan, options.denoise), rng=plan.rng)
                 for plan in plans]
        return self.decoder.decode(items, options)

    # -- public API ----------------------------------------------------------------------
    def generate_codes(
        self,
        text: str,
        *,
        language: str | None = None,
        instruct: str | None = None,
        ref_text: str | None = None,
        ref_codes: np.ndarray | None = None,
        num_frames: int | None = None,
        speed: float | None = None,
        options: DecodeOptions | None = None,
        seed: int | None = None,
    ) -> np.ndarray:
        """Decode one chunk of text into codes, int64 ``[8, T]`` (no long-text splitting)."""
        request = SynthesisRequest(
            text=text, language=language, instruct=instruct, ref_text=ref_text,
            ref_codes=ref_codes, speed=speed, num_frames=num_frames, seed=seed,
        )
        return self._decode([self.planner.plan(request)], options or DecodeOptions())[0]

    def generate_codes_batch(
        self, requests: Sequence[SynthesisRequest], *, options: DecodeOptions | None = None
    ) -> list[np.ndarray]:
        """Decode several requests in one batch (no long-text splitting; ``ref_rms`` is
        unused); per-item results equal single decodes."""
        plans = [self.planner.plan(request) for request in requests]
        if not plans:
            return []
        return self._decode(plans, options or DecodeOptions())

    def synthesize(
        self,
        text: str,
        *,
        language: str | None = None,
        instruct: str | None = None,
        ref_text: str | None = None,
        ref_codes: np.ndarray | None = None,
        ref_rms: float | None = None,
        speed: float | None = None,
        num_frames: int | None = None,
        options: DecodeOptions | None = None,
        seed: int | None = None,
    ) -> np.ndarray:
        """Text to float32 mono audio at :attr:`sample_rate`, post-processed like upstream."""
        request = SynthesisRequest(
            text=text, language=language, instruct=instruct, ref_text=ref_text,
            ref_codes=ref_codes, ref_rms=ref_rms, speed=speed, num_frames=num_frames,
            seed=seed,
        )
        return self.synthesize_batch([request], options=options)[0]

    def synthesize_batch(
        self, requests: Sequence[SynthesisRequest], *, options: DecodeOptions | None = None
    ) -> list[np.ndarray]:
        """Synthesize several requests together (one decode per chunk round)."""
        options = options or DecodeOptions()
        started = time.perf_counter()
        stats = SynthesisStats()
        plans = [self.planner.plan(req) for req in requests]
        chunked = [self.planner.chunks(plan) for plan in plans]
        stats.plan_s = time.perf_counter() - started
        codes: list[list[np.ndarray]] = [[] for _ in plans]
        rounds = max((len(c) for c in chunked), default=0)
        for round_index in range(rounds):
            members = [i for i, chunks in enumerate(chunked) if round_index < len(chunks)]
            round_plans = [self.planner.chunk(chunked[i], round_index,
                                              codes[i][0] if codes[i] else None)
                           for i in members]
            t0 = time.perf_counter()
            for i, result in zip(members, self._decode(round_plans, options), strict=True):
                codes[i].append(result)
            stats.decode_s += time.perf_counter() - t0
            step = self.decoder.last_stats
            stats.steps += step.steps
            stats.backbone_s += step.backbone_s
            stats.embed_s += step.embed_s
            stats.scoring_s += step.scoring_s
        audio = render_batch(self.vocoder_runner, codes, [p.ref_rms for p in plans], stats)
        stats.total_s = time.perf_counter() - started
        self.last_synthesis = stats
        return audio

    def open_session(self, options: DecodeOptions | None = None) -> SynthesisSession:
        """A step-level session (:mod:`.session`): requests join a running decode at the
        next step boundary and leave when done; its owner calls ``step()``. Per request,
        the same audio (or codes) as :meth:`synthesize_batch` (:meth:`generate_codes_batch`).
        """
        return SynthesisSession(self, options or DecodeOptions())

    def decode_audio(self, codes: np.ndarray) -> np.ndarray:
        """Vocoder: int ``[8, T]`` codes to raw float32 audio (no post-processing)."""
        return self.vocoder_runner.decode(check_codes(codes))

    def encode_reference(self, wav: np.ndarray, sample_rate: int, ref_text: str
                         ) -> VoicePrompt:
        """Encode a cloning reference into a ``VoicePrompt`` (codes, text, rms)."""
        with self._reference_lock:
            if self._reference_encoder is None:
                self._reference_encoder = ReferenceEncoder(
                    self.paths.root, self.graphs.providers, threads=self.graphs.threads)
            encoder = self._reference_encoder
        prepared = prepare_reference(wav, sample_rate, ref_text)
        check_reference_fits(self.prompts, self.decoder.layout_for,
                             self.decoder.max_positions, SHORT_REPLY, prepared)
        return encoder.encode_prepared(prepared)
