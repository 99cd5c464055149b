"""The engine's public interface: everything outside ``engine/`` imports from here.

The modules of this package are its inside: ``tests/engine/test_public_interface.py`` fails
on any import of one of them from elsewhere in ``wyoming_omnivoice`` (the offline graph work
has its own public interface, :mod:`wyoming_omnivoice.engine.offline`). ``docs/design.md``
lists the API.

``__all__`` is what every room may use. :data:`SCHEDULER_NAMES` are the step-level decode
that the speech worker schedules (a session, its items, the step hook and the interrupt of a
background forward): they resolve here too, for ``speech/`` alone; the protocols
(``wyoming_protocol/``, ``web/``) never name them (the same test holds it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wyoming_omnivoice.lazy_exports import lazy_getattr

__all__ = [
    "BACKBONE",
    "BACKBONE_FP16",
    "CAUSAL_DECODER_HELP",
    "CAUSAL_DECODER_NAMES",
    "CLONING_FILES",
    "EMBEDDINGS",
    "HEADS",
    "MIN_CANVAS_FRAMES",
    "NO_TRANSCRIPT_HINT",
    "NUM_CODEBOOKS",
    "PRECISIONS",
    "PROMPT_FORMAT_VERSION",
    "REQUIRED_FILES",
    "SHORT_REPLY",
    "TOKENIZER",
    "VARIANTS",
    "VOCODER",
    "DecodeOptions",
    "Engine",
    "ModelError",
    "SynthesisRequest",
    "VoicePrompt",
    "advertised_language_code",
    "check_model",
    "choose_providers",
    "default_num_steps",
    "default_precision",
    "estimate_num_frames",
    "instruct_vocabulary",
    "language_info",
    "layout_problems",
    "load_reference_audio",
    "normalize_instruct",
    "read_prompt_extras",
    "resolve_language",
    "return_freed_memory",
    "strict_language",
]

#: The step-level decode the speech worker schedules (see the module docstring).
SCHEDULER_NAMES = ("ForwardInterrupt", "SessionItem", "SynthesisSession", "between_steps")

#: Public name -> the module of this package that defines it (imported on first use, so
#: importing this package loads neither numpy nor onnxruntime).
_PUBLIC = {
    "BACKBONE": "store.model_files",
    "BACKBONE_FP16": "store.model_files",
    "CAUSAL_DECODER_HELP": "store.model_files",
    "CAUSAL_DECODER_NAMES": "store.model_files",
    "CLONING_FILES": "store.model_files",
    "DecodeOptions": "decoding.decoder",
    "EMBEDDINGS": "store.model_files",
    "HEADS": "store.model_files",
    "VOCODER": "store.model_files",
    "Engine": "core",
    "check_model": "model_check",
    "ForwardInterrupt": "runtime.interrupt",
    "MIN_CANVAS_FRAMES": "core",
    "ModelError": "store.model_files",
    "NO_TRANSCRIPT_HINT": "audio.reference",
    "NUM_CODEBOOKS": "constants",
    "PRECISIONS": "runtime.precision",
    "PROMPT_FORMAT_VERSION": "audio.voice_prompt",
    "REQUIRED_FILES": "store.model_files",
    "SHORT_REPLY": "warm_up",
    "SessionItem": "session",
    "SynthesisRequest": "planning",
    "SynthesisSession": "session",
    "TOKENIZER": "store.model_files",
    "VARIANTS": "runtime.precision",
    "VoicePrompt": "audio.voice_prompt",
    "advertised_language_code": "prompt.languages",
    "between_steps": "decoding.stepping",
    "choose_providers": "runtime.onnx_sessions",
    "default_num_steps": "runtime.precision",
    "default_precision": "runtime.precision",
    "return_freed_memory": "runtime.onnx_sessions",
    "estimate_num_frames": "prompt.duration",
    "instruct_vocabulary": "prompt.instruct",
    "language_info": "prompt.languages",
    "layout_problems": "store.model_files",
    "load_reference_audio": "audio.reference",
    "normalize_instruct": "prompt.instruct",
    "read_prompt_extras": "audio.voice_prompt",
    "resolve_language": "prompt.languages",
    "strict_language": "prompt.languages",
}

if TYPE_CHECKING:  # pragma: no cover
    from wyoming_omnivoice.engine.audio.reference import NO_TRANSCRIPT_HINT as NO_TRANSCRIPT_HINT
    from wyoming_omnivoice.engine.audio.reference import (
        load_reference_audio as load_reference_audio,
    )
    from wyoming_omnivoice.engine.audio.voice_prompt import (
        PROMPT_FORMAT_VERSION as PROMPT_FORMAT_VERSION,
    )
    from wyoming_omnivoice.engine.audio.voice_prompt import VoicePrompt as VoicePrompt
    from wyoming_omnivoice.engine.audio.voice_prompt import read_prompt_extras as read_prompt_extras
    from wyoming_omnivoice.engine.constants import NUM_CODEBOOKS as NUM_CODEBOOKS
    from wyoming_omnivoice.engine.core import MIN_CANVAS_FRAMES as MIN_CANVAS_FRAMES
    from wyoming_omnivoice.engine.core import Engine as Engine
    from wyoming_omnivoice.engine.decoding.decoder import DecodeOptions as DecodeOptions
    from wyoming_omnivoice.engine.decoding.stepping import between_steps as between_steps
    from wyoming_omnivoice.engine.model_check import check_model as check_model
    from wyoming_omnivoice.engine.planning import SynthesisRequest as SynthesisRequest
    from wyoming_omnivoice.engine.prompt.duration import estimate_num_frames as estimate_num_frames
    from wyoming_omnivoice.engine.prompt.instruct import instruct_vocabulary as instruct_vocabulary
    from wyoming_omnivoice.engine.prompt.instruct import normalize_instruct as normalize_instruct
    from wyoming_omnivoice.engine.prompt.languages import (
        advertised_language_code as advertised_language_code,
    )
    from wyoming_omnivoice.engine.prompt.languages import language_info as language_info
    from wyoming_omnivoice.engine.prompt.languages import resolve_language as resolve_language
    from wyoming_omnivoice.engine.prompt.languages import strict_language as strict_language
    from wyoming_omnivoice.engine.runtime.interrupt import ForwardInterrupt as ForwardInterrupt
    from wyoming_omnivoice.engine.runtime.onnx_sessions import choose_providers as choose_providers
    from wyoming_omnivoice.engine.runtime.onnx_sessions import (
        return_freed_memory as return_freed_memory,
    )
    from wyoming_omnivoice.engine.runtime.precision import PRECISIONS as PRECISIONS
    from wyoming_omnivoice.engine.runtime.precision import VARIANTS as VARIANTS
    from wyoming_omnivoice.engine.runtime.precision import default_num_steps as default_num_steps
    from wyoming_omnivoice.engine.runtime.precision import default_precision as default_precision
    from wyoming_omnivoice.engine.session import SessionItem as SessionItem
    from wyoming_omnivoice.engine.session import SynthesisSession as SynthesisSession
    from wyoming_omnivoice.engine.store.model_files import BACKBONE as BACKBONE
    from wyoming_omnivoice.engine.store.model_files import BACKBONE_FP16 as BACKBONE_FP16
    from wyoming_omnivoice.engine.store.model_files import (
        CAUSAL_DECODER_HELP as CAUSAL_DECODER_HELP,
    )
    from wyoming_omnivoice.engine.store.model_files import (
        CAUSAL_DECODER_NAMES as CAUSAL_DECODER_NAMES,
    )
    from wyoming_omnivoice.engine.store.model_files import CLONING_FILES as CLONING_FILES
    from wyoming_omnivoice.engine.store.model_files import EMBEDDINGS as EMBEDDINGS
    from wyoming_omnivoice.engine.store.model_files import HEADS as HEADS
    from wyoming_omnivoice.engine.store.model_files import REQUIRED_FILES as REQUIRED_FILES
    from wyoming_omnivoice.engine.store.model_files import TOKENIZER as TOKENIZER
    from wyoming_omnivoice.engine.store.model_files import VOCODER as VOCODER
    from wyoming_omnivoice.engine.store.model_files import ModelError as ModelError
    from wyoming_omnivoice.engine.store.model_files import layout_problems as layout_problems
    from wyoming_omnivoice.engine.warm_up import SHORT_REPLY as SHORT_REPLY


__getattr__ = lazy_getattr(__name__, _PUBLIC, globals())
