"""The warm-up: the default voice checked before ready, the rest after ready on the real
tiny engine and worker; the text warm-up works only while the server is idle."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from conftest import TINY_MODEL

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.anchors.cache import Anchor
from wyoming_omnivoice.errors import StartupError
from wyoming_omnivoice.speech.request_builder import make_request_factory
from wyoming_omnivoice.speech.warmup import check_default_voice, warm_up_after_ready
from wyoming_omnivoice.speech.worker import InferenceWorker
from wyoming_omnivoice.voices.assets import VoiceAssets
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset

OPTIONS = DecodeOptions(num_step=4)


def preset(name: str, language: str) -> VoicePreset:
    return VoicePreset(name=name, description=name, languages=(language,), instruct="female")


def test_the_default_voice_is_checked_before_ready() -> None:
    assets = VoiceAssets(anchors={"en": Anchor(codes=np.ones((8, 5), np.int64), text="A.")})
    make = make_request_factory(assets, normalize_default=True)
    request = check_default_voice(preset("en", "en"), make)
    assert request.ref_codes is not None and request.language == "en"

    def refuse(_voice: VoicePreset, _text: str) -> object:
        raise ValueError("no such instruct")

    with pytest.raises(StartupError, match="'en' failed: no such instruct"):
        check_default_voice(preset("en", "en"), refuse)  # type: ignore[arg-type]


def test_after_ready_the_worker_warms_up_first_and_text_waits_for_idle(
        caplog: pytest.LogCaptureFixture) -> None:
    engine = Engine.load(TINY_MODEL, device="cpu")
    worker = InferenceWorker(engine, options=OPTIONS)
    worker.start()
    default, other = preset("en", "en"), preset("de", "de")
    anchor = Anchor(codes=np.ones((8, 5), np.int64), text="Anchor.")
    make = make_request_factory(VoiceAssets(anchors={"en": anchor}), normalize_default=True)
    busy = threading.Event()
    busy.set()
    try:
        with caplog.at_level("INFO"):
            warmed, thread = warm_up_after_ready(
                worker, check_default_voice(default, make), OPTIONS,
                VoiceCatalog([default, other]), default, idle=lambda: not busy.is_set())
            warmed.result(60)
            assert worker.calls_done == 1  # a call: no request counted, no speed learned
            assert any("Warmed up" in message for message in caplog.messages)
            time.sleep(0.3)
            assert thread.is_alive()  # a request is in progress: the text waits
            busy.clear()
            thread.join(60)
            assert not thread.is_alive()
    finally:
        worker.stop()
