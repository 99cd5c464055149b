"""The Wyoming ``info`` answer: one TTS program and its voices."""

from __future__ import annotations

from wyoming.info import Attribution, Info, TtsProgram, TtsVoice

from wyoming_omnivoice import __version__
from wyoming_omnivoice.voices import Advertised, VoiceCatalog

PROGRAM_NAME = "omnivoice"
PROGRAM_DESCRIPTION = "OmniVoice text to speech (k2-fsa) on onnxruntime"
MODEL_ATTRIBUTION = Attribution(name="k2-fsa", url="https://github.com/k2-fsa/OmniVoice")
CLONED_ATTRIBUTION = Attribution(
    name="k2-fsa OmniVoice (voice cloned from a local recording)",
    url="https://github.com/k2-fsa/OmniVoice",
)


def voice_info(entry: Advertised) -> TtsVoice:
    preset = entry.preset
    return TtsVoice(
        name=preset.name,
        description=entry.description,
        attribution=CLONED_ATTRIBUTION if preset.is_cloned else MODEL_ATTRIBUTION,
        installed=True,
        version=None,
        languages=entry.languages,
        speakers=None,
    )


def build_info(catalog: VoiceCatalog, *, streaming: bool, healthy: bool = True) -> Info:
    """Info with one installed TTS program; voices in catalog order (stable), the
    household's voices first (:meth:`~wyoming_omnivoice.voices.VoiceCatalog.advertised`).

    Home Assistant shows a language's voices sorted by description (see config/voices.yaml
    for how descriptions make the intended default come first; a household voice's
    description is marked so that it comes first for its language).

    ``healthy=False`` (the synthesis worker died) advertises the program as not installed,
    so health checks and Home Assistant see that the service cannot synthesize.
    """
    program = TtsProgram(
        name=PROGRAM_NAME,
        description=PROGRAM_DESCRIPTION,
        attribution=MODEL_ATTRIBUTION,
        installed=healthy,
        version=__version__,
        voices=[voice_info(entry) for entry in catalog.advertised()],
        supports_synthesize_streaming=streaming,
    )
    return Info(tts=[program])
