"""The HTTP endpoints: the studio's JSON API (``/api/...``) and the OpenAI-compatible speech
endpoints (``/v1/audio/...``). docs/studio.md lists them with their bodies and answers.

Handlers only translate HTTP to :class:`.studio.Studio` calls and back.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

from aiohttp import BodyPartReader, web

from wyoming_omnivoice import __version__
from wyoming_omnivoice.speech import VoiceWish
from wyoming_omnivoice.voices import VoiceLanguages, VoicePreset, parse_languages
from wyoming_omnivoice.web import design as design_controls
from wyoming_omnivoice.web.audio_files import FORMATS, encode_audio
from wyoming_omnivoice.web.errors import ApiError, bad_request
from wyoming_omnivoice.web.health import starting
from wyoming_omnivoice.web.security import BASE_PATH, OPTIONS_KEY
from wyoming_omnivoice.web.studio import Studio
from wyoming_omnivoice.web.takes import Design

_LOGGER = logging.getLogger(__name__)

STUDIO_KEY: web.AppKey[Studio] = web.AppKey("studio", Studio)


def _studio(request: web.Request) -> Studio:
    """The studio; ``503 starting`` while the server starts (:mod:`.health`)."""
    studio = request.app.get(STUDIO_KEY)
    if studio is None:
        raise starting(request)
    return studio


async def json_body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, UnicodeDecodeError):
        raise bad_request("bad_json", "The body must be a JSON object") from None
    if not isinstance(body, dict):
        raise bad_request("bad_json", "The body must be a JSON object")
    return body


def _language(value: Any) -> VoiceLanguages:
    """The one language a take speaks: an id, a name or a regional variant's tag (``pt-BR``)."""
    if not isinstance(value, str):
        raise bad_request("bad_language", "Pick the language the voice speaks")
    try:
        return parse_languages([value])
    except ValueError as err:
        raise bad_request("bad_language", str(err)) from None


def voice_json(preset: VoicePreset, studio: Studio) -> dict[str, Any]:
    kind = studio.saved.kind_of(preset.name)
    household = studio.speech.catalog.household
    return {"name": preset.name, "description": preset.description,
            "household_for": [language for language, name in household.items()
                              if name == preset.name],
            "languages": VoiceLanguages(preset.languages, preset.variant).written(),
            "variant": preset.variant, "instruct": preset.instruct,
            "kind": "cloned" if preset.is_cloned else "designed",
            "pinned": preset.anchor_file is not None, "editable": kind is not None,
            "source": preset.source}


def take_json(take: Any) -> dict[str, Any]:
    reference = take.reference
    return {"id": take.id, "kind": take.kind, "seed": take.seed,
            "instruct": take.design.instruct, "language": take.design.tag,
            "seconds": round(int(reference.codes.shape[1]) / 25, 2)}


# ---- the studio's API ------------------------------------------------------------------


async def get_info(request: web.Request) -> web.Response:
    options = request.app[OPTIONS_KEY]
    studio = _studio(request)
    return web.json_response({
        "version": __version__, "sample_rate": studio.speech.sample_rate,
        "default_voice": studio.speech.default_voice, "ingress": options.ingress,
        "model_notes": list(studio.speech.model_notes),
        "token_required": options.token is not None and not options.ingress,
        "limits": dataclasses.asdict(options.limits)})


async def get_vocabulary(request: web.Request) -> web.Response:
    return web.json_response(design_controls.vocabulary())


async def get_languages(request: web.Request) -> web.Response:
    return web.json_response({"languages": design_controls.languages(
        _studio(request).speech.catalog)})


async def get_voices(request: web.Request) -> web.Response:
    studio = _studio(request)
    return web.json_response({"voices": [voice_json(p, studio) for p in studio.speech.catalog]})


async def post_take(request: web.Request) -> web.Response:
    body = await json_body(request)
    (language,), variant = _language(body.get("language"))
    speed = body.get("speed")
    if speed is not None and (isinstance(speed, bool) or not isinstance(speed, int | float)
                              or not 0.5 <= float(speed) <= 2.0):
        raise bad_request("bad_speed", "'speed' must be a number from 0.5 to 2")
    try:
        instruct = design_controls.instruct_from_design(body.get("design", {}), language)
    except ValueError as err:
        raise bad_request("bad_design", str(err)) from None
    speed_value = None if speed is None or float(speed) == 1.0 else float(speed)
    take = await _studio(request).design_take(Design(instruct, language, speed_value, variant),
                                              another=bool(body.get("another")))
    return web.json_response({"take": take_json(take)}, status=201)


async def post_clone(request: web.Request) -> web.Response:
    """multipart/form-data: ``audio`` (the file), ``transcript``, ``language``."""
    if not request.content_type.startswith("multipart/"):
        raise bad_request("bad_form", "Send the recording as multipart/form-data")
    studio = _studio(request)
    limit = studio.limits.max_upload_bytes
    fields: dict[str, str] = {}
    audio: bytes | None = None
    reader = await request.multipart()
    while (part := await reader.next()) is not None:
        if not isinstance(part, BodyPartReader):
            continue
        if part.name == "audio":
            data = bytearray()
            while chunk := await part.read_chunk(65536):
                data += chunk
                if len(data) > limit:
                    raise ApiError(413, "upload_too_large", f"The recording is over the "
                                   f"limit of {limit} bytes (upload size limit)")
            audio = bytes(data)
        elif part.name in ("transcript", "language"):
            try:
                fields[part.name] = (await part.text())[:10000]
            except (UnicodeDecodeError, LookupError) as err:  # not UTF-8 / unknown charset
                raise bad_request("bad_form", f"The {part.name} is not text in UTF-8 "
                                  f"(or its charset): {err}") from None
    if not audio:
        raise bad_request("recording_required", "Add a recording (WAV, FLAC or OGG)")
    (language,), variant = _language(fields.get("language", "en"))
    take = await studio.clone_take(audio, fields.get("transcript"), language, variant)
    return web.json_response({"take": take_json(take)}, status=201)


async def post_preview(request: web.Request) -> web.Response:
    body = await json_body(request)
    studio = _studio(request)
    audio = await studio.preview(body.get("text"), take_id=body.get("take"),
                                 voice=body.get("voice"), name=body.get("name"))
    return web.Response(body=encode_audio(audio, studio.speech.sample_rate, "wav"),
                        content_type="audio/wav")


async def post_voice(request: web.Request) -> web.Response:
    body = await json_body(request)
    studio = _studio(request)
    preset = await studio.save(body.get("take"), body.get("name"), body.get("description"),
                               body.get("languages"))
    return web.json_response({"voice": voice_json(preset, studio), "note": RELOAD_NOTE},
                             status=201)


RELOAD_NOTE = ("Saved. Wyoming clients see the voice at their next describe; Home Assistant "
               "re-reads voices on its own schedule. To see it at once, reload the Wyoming "
               "integration (Settings > Devices & services > Wyoming Protocol > ... > Reload).")


async def put_household_voice(request: web.Request) -> web.Response:
    """``PUT /api/languages/{language}/voice {"voice": NAME}``: the household's voice of
    the language (the one a request naming no voice in it speaks with, listed first)."""
    body = await json_body(request)
    studio = _studio(request)
    name = body.get("voice")
    language = await studio.choose_for(request.match_info["language"], name)
    return web.json_response({"language": language, "voice": name, "note": RELOAD_NOTE})


async def delete_household_voice(request: web.Request) -> web.Response:
    """``DELETE /api/languages/{language}/voice``: no household voice for it any more."""
    cleared = await _studio(request).unchoose(request.match_info["language"])
    return web.json_response({"language": request.match_info["language"], "voice": None,
                              "cleared": cleared, "note": RELOAD_NOTE})


async def get_household(request: web.Request) -> web.Response:
    return web.json_response({"household": _studio(request).speech.catalog.household})


async def patch_voice(request: web.Request) -> web.Response:
    body = await json_body(request)
    studio = _studio(request)
    preset = await studio.update(request.match_info["name"], body.get("description"),
                                 body.get("languages"))
    return web.json_response({"voice": voice_json(preset, studio)})


async def delete_voice(request: web.Request) -> web.Response:
    await _studio(request).delete(request.match_info["name"])
    return web.json_response({"deleted": request.match_info["name"]})


async def export_voice(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    document = await _studio(request).export(name)
    return web.Response(text=json.dumps(document), content_type="application/json",
                        headers={"Content-Disposition":
                                 f'attachment; filename="{document["name"]}.omnivoice.json"'})


async def import_voice(request: web.Request) -> web.Response:
    studio = _studio(request)
    preset = await studio.import_voice(await json_body(request), request.query.get("name"))
    return web.json_response({"voice": voice_json(preset, studio), "note": RELOAD_NOTE},
                             status=201)


# ---- OpenAI-compatible speech ------------------------------------------------------------


async def openai_speech(request: web.Request) -> web.Response:
    """``POST /v1/audio/speech``: ``model`` (any), ``input``, ``voice``, ``response_format``
    (wav, pcm: 24 kHz 16-bit mono little-endian, flac), ``speed`` (0.25-4)."""
    body = await json_body(request)
    studio = _studio(request)
    model = body.get("model")
    if model is not None and not isinstance(model, str):
        raise bad_request("bad_model", "'model' must be text (any name; one model is served)")
    text = studio.check_text(body.get("input"))
    voice = body.get("voice")
    if voice is not None and not isinstance(voice, str):
        raise bad_request("bad_voice", "'voice' must be a voice name (GET /v1/audio/voices)")
    response_format = body.get("response_format", "wav")
    if response_format not in FORMATS:
        raise bad_request("unsupported_format", f"response_format {str(response_format)!r} is "
                          f"not served; use one of {', '.join(FORMATS)}")
    speed = body.get("speed", 1.0)
    if isinstance(speed, bool) or not isinstance(speed, int | float) or \
            not 0.25 <= float(speed) <= 4.0:
        raise bad_request("bad_speed", "'speed' must be a number from 0.25 to 4")
    audio, preset = await studio.speak(text, VoiceWish(name=voice or None), speed=float(speed))
    return web.Response(body=encode_audio(audio, studio.speech.sample_rate, response_format),
                        content_type=FORMATS[response_format],
                        headers={"X-Voice": preset.name})


async def openai_voices(request: web.Request) -> web.Response:
    catalog = _studio(request).speech.catalog
    return web.json_response({"voices": [
        {"id": p.name, "name": p.name, "description": p.description,
         "languages": p.advertised_languages()} for p in catalog]})


# ---- the page ---------------------------------------------------------------------------


async def index(request: web.Request) -> web.Response:
    """The page, with ``<base href>`` from the ingress path so every relative URL works."""
    from html import escape

    page: str = request.app[PAGE_KEY]
    base = request[BASE_PATH]
    page = page.replace("<!--BASE-->", f'<base href="{escape(base)}/">' if base else "")
    return web.Response(text=page, content_type="text/html")


PAGE_KEY: web.AppKey[str] = web.AppKey("page", str)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/", index)
    app.router.add_get("/api/info", get_info)
    app.router.add_get("/api/vocabulary", get_vocabulary)
    app.router.add_get("/api/languages", get_languages)
    app.router.add_get("/api/voices", get_voices)
    app.router.add_post("/api/takes", post_take)
    app.router.add_post("/api/clone", post_clone)
    app.router.add_post("/api/preview", post_preview)
    app.router.add_post("/api/voices", post_voice)
    app.router.add_post("/api/voices/import", import_voice)
    app.router.add_patch("/api/voices/{name}", patch_voice)
    app.router.add_delete("/api/voices/{name}", delete_voice)
    app.router.add_get("/api/voices/{name}/export", export_voice)
    app.router.add_get("/api/household", get_household)
    app.router.add_put("/api/languages/{language}/voice", put_household_voice)
    app.router.add_delete("/api/languages/{language}/voice", delete_household_voice)
    app.router.add_post("/v1/audio/speech", openai_speech)
    app.router.add_get("/v1/audio/voices", openai_voices)
