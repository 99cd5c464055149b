"""Who decodes a new anchor, and in which mode: canonical wherever the server can, else its
serving mode, said once and marked.

- The serving engine runs fp32: it makes canonical anchors itself, at the canonical steps
  (:data:`.cache.CANONICAL`), whatever steps it serves with.
- Otherwise (int8 on a CPU, fp16 on a GPU) a second engine with the fp32 backbone is loaded
  when the first anchor is due (on a CPU with its weights left in onnxruntime's memory map:
  ``prepack=False``, about 0.1 GB of anonymous memory at the real size), used for the
  anchors due, and let go (:meth:`AnchorMaker.release`) when none is left.
- Where the server found no room for that engine (``anchors/plan.py``), or
  ``--canonical-anchors never``, or that engine does not load, anchors are decoded by the
  serving engine in its own mode and marked ``serving`` (:mod:`.cache`); one log line says
  why and how to get canonical ones.

Every call comes from the engine's owner thread (start-up code, then the worker), which
passes its engine in; the second engine is used on that same thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from wyoming_omnivoice.anchors.cache import CANONICAL, AnchorMode
from wyoming_omnivoice.engine import return_freed_memory
from wyoming_omnivoice.errors import one_line

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest

_LOGGER = logging.getLogger(__name__)

#: Loads the engine of canonical anchors (fp32 backbone) when the serving one is not fp32.
LoadCanonical = Callable[[], "Engine"]

HOW_TO_GET_CANONICAL = ("make them on a machine with the memory (python -m "
                        "wyoming_omnivoice.convert MODEL_DIR --anchors LANGS --data-dir DIR) "
                        "and copy DIR/anchors/ into this server's data dir, share one data dir "
                        "between replicas, or import the voices exported from one")


def canonical_options() -> DecodeOptions:
    from wyoming_omnivoice import DecodeOptions

    return DecodeOptions(num_step=CANONICAL.num_step, guidance_scale=CANONICAL.guidance_scale)


class AnchorMaker:
    """Decodes anchors canonically (the serving engine when it is fp32, else a loaded fp32
    engine), or in the serving mode when ``load_canonical`` is None (``fallback`` says why,
    once, when the first anchor is made that way)."""

    def __init__(self, serving: AnchorMode, serving_options: DecodeOptions, *,
                 serving_is_canonical: bool, load_canonical: LoadCanonical | None = None,
                 fallback: str = "", max_batch: int | None = None) -> None:
        self.serving = serving
        #: Anchors decoded at once at most (None: the server's batch size). A canonical
        #: decode on a CPU costs about six serving ones: one at a time keeps a request that
        #: arrives meanwhile from waiting longer than behind a serving batch of eight.
        self.max_batch = max_batch
        self._serving_options = serving_options
        self._serving_is_canonical = serving_is_canonical
        self._load_canonical = load_canonical
        self._fallback = fallback
        self._said_fallback = False
        self._engine: Engine | None = None
        self._lock = threading.Lock()

    @property
    def mode(self) -> AnchorMode:
        """The mode new anchors are made in (now)."""
        if self._serving_is_canonical or self._load_canonical is not None:
            return CANONICAL
        return self.serving

    def codes_on(self, engine: Engine) -> Callable[[list[SynthesisRequest]],
                                                   tuple[AnchorMode, list[Any]]]:
        """What :class:`.cache.AnchorCache` calls to decode, on ``engine``'s thread."""
        return lambda requests: self.generate(engine, requests)

    def generate(self, engine: Engine, requests: list[SynthesisRequest]
                 ) -> tuple[AnchorMode, list[Any]]:
        """The codes of ``requests`` and the mode they were decoded in."""
        if self._serving_is_canonical:
            return CANONICAL, engine.generate_codes_batch(requests, options=canonical_options())
        canonical = self._canonical_engine()
        if canonical is not None:
            return CANONICAL, canonical.generate_codes_batch(requests,
                                                            options=canonical_options())
        self._say_fallback()
        return self.serving, engine.generate_codes_batch(requests,
                                                         options=self._serving_options)

    def release(self) -> None:
        """Let the fp32 engine go (loaded again when another anchor is due)."""
        with self._lock:
            if self._engine is None:
                return
            self._engine = None
        return_freed_memory()
        _LOGGER.info("Voice anchors: the fp32 engine of canonical anchors is released")

    def _canonical_engine(self) -> Engine | None:
        with self._lock:
            if self._engine is not None or self._load_canonical is None:
                return self._engine
            _LOGGER.info("Voice anchors: loading the fp32 backbone for canonical anchors "
                         "(%s, the same person on every replica whatever its precision)",
                         CANONICAL.label)
            try:
                self._engine = self._load_canonical()
            except Exception as err:  # a failing fp32 load costs the canonical mode only
                self._load_canonical = None
                self._fallback = (f"the fp32 backbone for canonical anchors did not load "
                                  f"({one_line(str(err))})")
                return None
            return self._engine

    def _say_fallback(self) -> None:
        if self._said_fallback:
            return
        self._said_fallback = True
        _LOGGER.warning("Voice anchors: %s, so this server makes serving-precision anchors "
                        "(%s), marked and keyed as such: another replica or precision may "
                        "speak another person under the same voice name; a canonical anchor "
                        "found in the data dir replaces one; to get canonical anchors, %s",
                        self._fallback or "no canonical mode here", self.serving.label,
                        HOW_TO_GET_CANONICAL)


def serving_maker(engine: Engine, options: DecodeOptions, *,
                  load_canonical: LoadCanonical | None = None, fallback: str = "",
                  allow_tf32: bool = False, max_batch: int | None = None) -> AnchorMaker:
    """The maker of a server with ``engine`` serving at ``options``: canonical through the
    engine itself when its backbone is fp32 (and exact: no TF32), else through
    ``load_canonical``, else in the serving mode (``fallback`` says why)."""
    serving = AnchorMode.serving(engine.precision, options.num_step, options.guidance_scale)
    exact = engine.precision in (CANONICAL.precision, "published") and not allow_tf32
    return AnchorMaker(serving, options, serving_is_canonical=exact,
                       load_canonical=None if exact else load_canonical,
                       fallback=fallback or f"the {engine.precision} backbone serves here and "
                       "no fp32 engine was offered for anchors",
                       max_batch=max_batch)
