"""What the studio does, apart from HTTP: takes, previews, saving, editing, moving voices.

Engine work runs on the inference worker (through :mod:`.speech`), file work on a thread;
the event loop only hands things on. Every refusal is an :class:`ApiError` whose message is
shown in the page as is.
"""

from __future__ import annotations

import asyncio
import secrets
from typing import TYPE_CHECKING, Any

import numpy as np

from wyoming_omnivoice.engine import NO_TRANSCRIPT_HINT
from wyoming_omnivoice.speech import (
    Audio,
    BusyError,
    RequestError,
    VoiceWish,
    WorkerStoppedError,
    checked_text,
    request_error_for,
)
from wyoming_omnivoice.voices import (
    ANCHOR_SEED,
    Anchor,
    Recording,
    SavedVoiceError,
    SavedVoices,
    VoiceFile,
    VoiceLanguages,
    VoicePreset,
    anchor_text_for,
    cache_clone_prompt,
    check_languages,
    check_voice_name,
    export_voice,
    parse_voice_file,
)
from wyoming_omnivoice.web.audio_files import decode_upload, sniff_audio
from wyoming_omnivoice.web.errors import ApiError, bad_request, not_found
from wyoming_omnivoice.web.options import WebLimits
from wyoming_omnivoice.web.speech import StudioSpeech
from wyoming_omnivoice.web.takes import Design, Take, TakeStore

if TYPE_CHECKING:
    from wyoming_omnivoice import Engine, VoicePrompt

MAX_DESCRIPTION = 500
MAX_TRANSCRIPT = 2000


def api_error_for(err: BaseException) -> ApiError:
    """The speech service's refusals as HTTP errors (its codes, with ``_`` for ``-``)."""
    error = request_error_for(err)
    status = 503 if error.code in ("busy", "shutting-down", "worker-stopped") else 400
    return ApiError(status, error.code.replace("-", "_"), str(error))


def checked_words(value: str) -> str:
    """A text a client sent that the server keeps or reads (a description, a transcript),
    through the speech service's entry check of characters: ``text_invalid`` for a lone
    surrogate (it could not even be sent back in a Wyoming ``info``), controls cleaned."""
    try:
        return checked_text(value)
    except RequestError as err:
        raise api_error_for(err) from None


def checked_name(name: Any) -> str:
    try:
        return check_voice_name(name)
    except ValueError as err:
        raise bad_request("bad_name", str(err)) from None


class Studio:
    def __init__(self, speech: StudioSpeech, saved: SavedVoices, limits: WebLimits) -> None:
        self.speech = speech
        self.saved = saved
        self.limits = limits
        self.takes = TakeStore(limits.max_takes)
        self._writes = asyncio.Lock()

    # ---- synthesis -----------------------------------------------------------------

    def check_text(self, text: Any) -> str:
        if not isinstance(text, str) or not text.strip():
            raise bad_request("text_required", "Give a sentence to speak")
        limit = self.limits.max_text_length
        if len(text) > limit:
            raise bad_request("text_too_long", f"The text is {len(text)} characters; the "
                              f"limit is {limit} (--max-text-length)")
        return text

    async def speak(self, text: str, voice: VoiceWish | VoicePreset, *, speed: float = 1.0,
                    reference: Anchor | VoicePrompt | None = None
                    ) -> tuple[Audio, VoicePreset]:
        """``text`` spoken (:meth:`.speech.StudioSpeech.speak`) and the voice that spoke; every
        refusal an ApiError."""
        try:
            return await self.speech.speak(text, voice, speed=speed, reference=reference)
        except (RequestError, BusyError, WorkerStoppedError, ValueError) as err:
            raise api_error_for(err) from None

    async def preview(self, text: Any, take_id: Any = None, voice: Any = None,
                      name: Any = None) -> Audio:
        text = self.check_text(text)
        if take_id is not None:
            take = self.take(take_id)
            draft_name = checked_name(name) if name else None
            audio, _ = await self.speak(text, take.design.preset(draft_name),
                                        reference=take.reference)
            return audio
        if not isinstance(voice, str) or voice not in self.speech.catalog:
            raise not_found("no_such_voice", f"There is no voice {str(voice)[:64]!r}")
        preset = self.speech.catalog.get(voice)
        assert preset is not None
        audio, _ = await self.speak(text, preset)
        return audio

    # ---- takes ---------------------------------------------------------------------

    def take(self, take_id: Any) -> Take:
        take = self.takes.get(take_id)
        if take is None:
            raise not_found("no_such_take", "That take is gone (takes are kept in memory, "
                            "the newest only, until the server restarts); make a new one")
        return take

    async def design_take(self, design: Design, another: bool) -> Take:
        """A candidate anchor: the server's anchor seed first, a new seed for another take."""
        seed = secrets.randbelow(2**31 - 1) + 1 if another else ANCHOR_SEED
        from wyoming_omnivoice import SynthesisRequest

        text = anchor_text_for(design.preset())
        request = SynthesisRequest(text=text, language=design.language,
                                   instruct=design.instruct, speed=design.speed, seed=seed)

        def build(engine: Engine) -> Anchor:
            codes, made_with = self.speech.take_codes(engine, request)
            return Anchor(codes=np.asarray(codes, dtype=np.int64), text=text,
                          made_with=made_with)

        try:
            anchor = await self.speech.on_engine(build)
        except RequestError as err:  # the line is full
            raise api_error_for(err) from None
        except ValueError as err:
            raise bad_request("bad_design", str(err)) from None
        return self.takes.add(Take(self.takes.new_id(), design, seed=seed, anchor=anchor))

    async def clone_take(self, data: bytes, transcript: Any, language: str,
                         variant: str | None = None) -> Take:
        if not isinstance(transcript, str) or not transcript.strip():
            raise bad_request("transcript_required", "Type the exact words spoken in the "
                              f"recording. {NO_TRANSCRIPT_HINT}")
        transcript = " ".join(checked_words(transcript).split())
        if len(transcript) > MAX_TRANSCRIPT:
            raise bad_request("transcript_too_long", f"The transcript is {len(transcript)} "
                              f"characters; the limit is {MAX_TRANSCRIPT} (transcript limit)")
        kind, samples, sample_rate = await decode_upload(data, self.limits)
        prompt = await self._encode(samples, sample_rate, transcript)
        return self.takes.add(Take(self.takes.new_id(), Design(None, language, variant=variant),
                                   prompt=prompt, recording=Recording(data, kind),
                                   transcript=transcript))

    async def _encode(self, samples: Audio, sample_rate: int, transcript: str) -> VoicePrompt:
        def encode(engine: Engine) -> VoicePrompt:
            prompt: VoicePrompt = engine.encode_reference(samples, sample_rate, transcript)
            return prompt

        try:
            return await self.speech.on_engine(encode)
        except RequestError as err:  # the line is full
            raise api_error_for(err) from None
        except ValueError as err:  # silence, too short: the same checks as a folder
            raise bad_request("bad_recording", str(err)) from None

    # ---- keeping -------------------------------------------------------------------

    def _check_new_name(self, value: Any) -> str:
        name = checked_name(value)
        if name in self.speech.catalog:
            raise ApiError(409, "name_taken", f"A voice named {name!r} exists already; pick "
                           "another name")
        return name

    @staticmethod
    def _description(value: Any, name: str) -> str:
        if value is None:
            return name
        if not isinstance(value, str) or len(value) > MAX_DESCRIPTION:
            raise bad_request("bad_description", f"The description must be text of at most "
                              f"{MAX_DESCRIPTION} characters")
        return str(" ".join(checked_words(value).split())) or name

    @staticmethod
    def _languages(values: Any, take: Design | None = None) -> VoiceLanguages:
        """The languages given (ids, names, a regional variant's tag such as ``pt-BR``); with
        a take, its language first and, when they name no variant, the take's variant."""
        if values is None:
            values = [take.tag] if take is not None else []
        if not isinstance(values, list):
            raise bad_request("bad_languages", "'languages' must be a list such as [\"en\"]")
        try:
            languages, variant = check_languages(values)
        except ValueError as err:
            raise bad_request("bad_languages", str(err)) from None
        if take is None:
            return VoiceLanguages(languages, variant)
        first = take.language  # the take's language stays the main one
        ordered = (first, *(language for language in languages if language != first))
        return VoiceLanguages(ordered, variant if variant is not None else take.variant)

    async def save(self, take_id: Any, name: Any, description: Any, languages: Any
                   ) -> VoicePreset:
        take = self.take(take_id)
        async with self._writes:
            name = self._check_new_name(name)
            description = self._description(description, name)
            langs = self._languages(languages, take.design)
            if take.prompt is not None:
                assert take.recording is not None and take.transcript is not None
                return await self._keep_clone(name, description, langs, take.recording,
                                              take.transcript, take.prompt)
            assert take.anchor is not None
            return await self._keep_design(name, description, langs, take.design.instruct,
                                           take.design.speed, take.anchor)

    async def _keep_design(self, name: str, description: str, languages: VoiceLanguages,
                           instruct: str | None, speed: float | None, anchor: Anchor
                           ) -> VoicePreset:
        made_with = anchor.made_with or f"steps={self.speech.options.num_step}"
        preset = await self._saving(self.saved.save_designed, name, description, languages,
                                    instruct, speed, anchor, made_with)
        self.speech.voices.add([preset], anchors={name: anchor})
        return preset

    async def _keep_clone(self, name: str, description: str, languages: VoiceLanguages,
                          recording: Recording, transcript: str, prompt: VoicePrompt
                          ) -> VoicePreset:
        preset = await self._saving(self.saved.save_cloned, name, description, languages,
                                    recording, transcript)
        # Cached as a start would cache it, so a restart does not encode it again.
        await asyncio.to_thread(cache_clone_prompt, self.speech.data_dir,
                                self.speech.fingerprint, preset, transcript, prompt)
        self.speech.voices.add([preset], prompts={name: prompt})
        return preset

    async def _saving(self, save: Any, *args: Any) -> VoicePreset:
        try:
            preset: VoicePreset = await asyncio.to_thread(save, *args)
        except SavedVoiceError as err:
            status = 409 if err.code == "name_taken" else 400
            raise ApiError(status, err.code, str(err)) from None
        except ValueError as err:
            raise bad_request("bad_voice", str(err)) from None
        return preset

    async def update(self, name: str, description: Any, languages: Any) -> VoicePreset:
        async with self._writes:
            preset = self._editable(name)
            description = self._description(
                description if description is not None else preset.description, name)
            langs = self._languages(
                languages if languages is not None
                else VoiceLanguages(preset.languages, preset.variant).written())
            preset = await self._saving(self.saved.update, name, description, langs)
            self.speech.voices.add([preset])
            return preset

    def _editable(self, name: str) -> VoicePreset:
        preset = self.speech.catalog.get(checked_name(name))
        if preset is None:
            raise not_found("no_such_voice", f"There is no voice {name!r}")
        if self.saved.kind_of(name) is None:
            raise ApiError(403, "not_editable", f"Voice {name!r} comes from "
                           f"{preset.source}; edit it there")
        return preset

    async def delete(self, name: str) -> None:
        async with self._writes:
            self._editable(name)
            if name == self.speech.default_voice:
                raise ApiError(409, "default_voice", f"Voice {name!r} is the server's default "
                               "voice (--voice); start the server with another one first")
            await self._saving(self.saved.delete, name)
            await asyncio.to_thread(self.speech.voices.unchoose_voice, name)
            self.speech.voices.remove(name)

    # ---- the household's voice per language ---------------------------------------

    async def choose_for(self, language: Any, name: Any) -> str:
        """``name`` becomes the household's voice of ``language``; the language as
        written (``de``, ``pt-BR``)."""
        if not isinstance(language, str) or not language.strip():
            raise bad_request("bad_language", "Name the language (e.g. de, pt-BR)")
        name = checked_name(name)
        async with self._writes:
            if name not in self.speech.catalog:
                raise not_found("no_such_voice", f"There is no voice {name!r}")
            try:
                return await asyncio.to_thread(self.speech.voices.choose_for, language, name)
            except ValueError as err:
                raise bad_request("bad_language", str(err)) from None

    async def unchoose(self, language: Any) -> bool:
        """No household voice for ``language`` any more; False when none was chosen."""
        if not isinstance(language, str) or not language.strip():
            raise bad_request("bad_language", "Name the language (e.g. de, pt-BR)")
        async with self._writes:
            try:
                return await asyncio.to_thread(self.speech.voices.unchoose, language)
            except ValueError as err:
                raise bad_request("bad_language", str(err)) from None

    # ---- moving --------------------------------------------------------------------

    async def export(self, name: str) -> dict[str, Any]:
        preset = self.speech.catalog.get(checked_name(name))
        if preset is None:
            raise not_found("no_such_voice", f"There is no voice {name!r}")
        recording = None
        if preset.clone is not None:
            data = await asyncio.to_thread(preset.clone.audio_path.read_bytes)
            kind = sniff_audio(data)
            recording = Recording(data, kind) if kind else None
        try:
            anchor = None if preset.is_cloned else await self.speech.anchor_of(preset)
            return export_voice(preset, anchor, recording)
        except ValueError as err:
            raise ApiError(409, "not_exportable", str(err)) from None

    async def import_voice(self, document: Any, rename: Any = None) -> VoicePreset:
        try:
            voice: VoiceFile = parse_voice_file(
                document, max_audio_bytes=self.limits.max_upload_bytes, sniff=sniff_audio)
        except ValueError as err:
            raise bad_request("bad_voice_file", str(err)) from None
        name = checked_name(rename) if rename else voice.name
        description = checked_words(voice.description)
        async with self._writes:
            self._check_new_name(name)
            if voice.recording is not None:
                assert voice.transcript is not None
                transcript = checked_words(voice.transcript)
                _kind, samples, rate = await decode_upload(voice.recording.data, self.limits)
                prompt = await self._encode(samples, rate, transcript)
                return await self._keep_clone(name, description, voice.languages,
                                              voice.recording, transcript, prompt)
            assert voice.anchor is not None
            return await self._keep_design(name, description, voice.languages,
                                           voice.instruct, voice.speed, voice.anchor)
