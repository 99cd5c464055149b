"""Language identification for long text in the voice's own script (py3langid).

A per-language voice (``de-female``) tells the engine its language, and text in another
script is caught by :mod:`.request_language`. What is left is a long sentence in another
language of the same script: a conversation agent answering in English through a German
pipeline. For that only, py3langid (a maintained fork of langid.py, pure Python + numpy)
may overrule the voice's language, and only when it is sure: at least ``MIN_LETTERS``
letters and a probability of at least ``MIN_PROBABILITY``. Measured on Home
Assistant-like replies (benchmarks/language_id_study.py): short replies are wrong 9-13 %
of the time with probabilities at most 0.51, so they never pass the gate; every sentence
that passed it was right.

The model (a few MB, about 0.5 s) loads on a background thread once the server is ready
(:mod:`.warmup`); until it is loaded, the voice's language is used as is (never a wait).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from wyoming_omnivoice.voices.ha_languages import HA_LANGUAGE_TAGS, language_for_tag

_LOGGER = logging.getLogger(__name__)

MIN_LETTERS = 40
MIN_PROBABILITY = 0.99

_lock = threading.Lock()
_identifier: Any = None
_loading: threading.Thread | None = None


def _load() -> None:
    global _identifier
    try:
        from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

        identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE,
                                                       norm_probs=True)
        known = set(identifier.nb_classes)
        identifier.set_languages(sorted(
            code for code in known if (language_for_tag(code) or "") in HA_LANGUAGE_TAGS))
    except Exception as err:  # an optional guard: never stop the server for it
        _LOGGER.warning("Language identification is off (%s); each voice speaks its own "
                        "language", err)
        return
    _identifier = identifier
    _LOGGER.debug("Language identification loaded")


def start_loading() -> None:
    """Load the model on a background thread (once)."""
    global _loading
    with _lock:
        if _loading is None:
            _loading = threading.Thread(target=_load, name="omnivoice-langid", daemon=True)
            _loading.start()


def wait_loaded(timeout: float | None = None) -> bool:
    """For tests and benchmarks: wait for the model; whether it is usable."""
    start_loading()
    assert _loading is not None
    _loading.join(timeout)
    return _identifier is not None


def confident_language(text: str, letters: int) -> str | None:
    """The OmniVoice id of ``text``'s language when py3langid is sure, else None."""
    identifier = _identifier
    if identifier is None or letters < MIN_LETTERS:
        return None
    code, probability = identifier.classify(text)
    if float(probability) < MIN_PROBABILITY:
        return None
    return language_for_tag(str(code))
