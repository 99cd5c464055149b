"""The studio's JSON API and the OpenAI-compatible endpoints over plain HTTP, against a real
server process, checked against what the real ``wyoming`` client gets."""

from __future__ import annotations

import io

import pytest
import soundfile
from studio_http import StudioServer, wav_pcm, wyoming_pcm, wyoming_voices

pytestmark = pytest.mark.slow

TEXT = "The garage door is closed."


def speech(studio: StudioServer, **body: object) -> bytes:
    answer = studio.request("POST", "/v1/audio/speech",
                            json_body={"model": "tts-1", "input": TEXT, **body})
    assert answer.status == 200, answer.body[:300]
    return answer.body


def test_openai_speech_gives_the_wyoming_audio_in_each_format(studio: StudioServer) -> None:
    pcm = wyoming_pcm(studio, TEXT, "en-female-young")
    wav = speech(studio, voice="en-female-young")
    assert wav_pcm(wav) == pcm
    assert speech(studio, voice="en-female-young", response_format="pcm") == pcm
    flac, rate = soundfile.read(io.BytesIO(speech(studio, voice="en-female-young",
                                                  response_format="flac")), dtype="int16")
    assert rate == 24000 and flac.astype("<i2").tobytes() == pcm
    unsupported = studio.request("POST", "/v1/audio/speech", json_body={
        "input": TEXT, "voice": "en-female-young", "response_format": "mp3"})
    assert unsupported.status == 400 and unsupported.code == "unsupported_format"
    slower = speech(studio, voice="en-female-young", speed=0.5, response_format="pcm")
    assert len(slower) > len(pcm)
    # An unknown name (OpenAI's "alloy") speaks with the best voice, as over Wyoming.
    answer = studio.request("POST", "/v1/audio/speech", json_body={"input": TEXT,
                                                                   "voice": "alloy"})
    assert answer.status == 200 and answer.headers["x-voice"] == "en-female-young"


def test_voices_and_languages_are_the_catalogue(studio: StudioServer) -> None:
    listed = {v["id"] for v in studio.request("GET", "/v1/audio/voices").json()["voices"]}
    assert listed == set(wyoming_voices(studio))
    languages = studio.request("GET", "/api/languages").json()["languages"]
    assert languages[0]["id"] == "en" and languages[0]["name"] == "English"
    german = next(row for row in languages if row["id"] == "de")
    assert german["name"] == "German" and "Wohnzimmer" in german["sample"]
    vocabulary = studio.request("GET", "/api/vocabulary").json()
    categories = {c["name"]: c for c in vocabulary["categories"]}
    assert categories["accent"]["language"] == "en" and categories["dialect"]["language"] == "zh"
    assert {"value": "whisper", "label": "Whisper"} in categories["style"]["options"]
    mixed = studio.request("POST", "/api/takes", json_body={
        "design": {"accent": "british accent", "dialect": "四川话"}, "language": "zh"})
    assert mixed.status == 400 and mixed.code == "bad_design"


def test_save_edit_delete_and_move(studio: StudioServer) -> None:
    take = studio.request("POST", "/api/takes", json_body={
        "design": {"gender": "male", "pitch": "low pitch"}, "language": "en",
        "another": True}).json()["take"]
    assert take["seed"] != 20260417
    preview = studio.request("POST", "/api/preview", json_body={
        "take": take["id"], "text": TEXT, "name": "api-bob"}).body
    saved = studio.request("POST", "/api/voices", json_body={
        "take": take["id"], "name": "api-bob", "description": "Bob", "languages": ["de", "en"]})
    assert saved.status == 201
    voice = saved.json()["voice"]
    assert voice["languages"] == ["en", "de"]  # the take's language stays the main one
    assert voice["pinned"] and voice["editable"]
    assert wyoming_pcm(studio, TEXT, "api-bob") == wav_pcm(preview)
    again = studio.request("POST", "/api/voices", json_body={"take": take["id"],
                                                             "name": "api-bob"})
    assert again.status == 409 and again.code == "name_taken"

    edited = studio.request("PATCH", "/api/voices/api-bob",
                            json_body={"description": "Bob, garage", "languages": ["en"]})
    assert edited.status == 200 and edited.json()["voice"]["description"] == "Bob, garage"
    assert wyoming_pcm(studio, TEXT, "api-bob") == wav_pcm(preview)  # same sound
    builtin = studio.request("DELETE", "/api/voices/en-female-young")
    assert builtin.status == 403 and builtin.code == "not_editable"

    exported = studio.request("GET", "/api/voices/api-bob/export")
    assert "attachment" in exported.headers["content-disposition"]
    assert studio.request("DELETE", "/api/voices/api-bob").status == 200
    assert "api-bob" not in wyoming_voices(studio)
    imported = studio.request("POST", "/api/voices/import", body=exported.body,
                              headers={"Content-Type": "application/json"})
    assert imported.status == 201
    assert wyoming_pcm(studio, TEXT, "api-bob") == wav_pcm(preview)


def test_a_builtin_voice_moves_as_the_same_person(studio: StudioServer) -> None:
    """Exported and imported under a new name, a built-in designed voice is pinned to its
    anchor: the copy has the built-in's anchor codes exactly. (Its anchor was not preloaded:
    the export builds it.)"""
    exported = studio.request("GET", "/api/voices/en-male-young/export")
    assert exported.status == 200, exported.body[:300]
    document = exported.json()
    imported = studio.request("POST", "/api/voices/import?name=copy-of-en-male-young",
                              json_body=document)
    assert imported.status == 201 and imported.json()["voice"]["pinned"]
    copy = studio.request("GET", "/api/voices/copy-of-en-male-young/export").json()
    assert copy["designed"]["anchor"] == document["designed"]["anchor"]
    assert copy["designed"]["instruct"] == document["designed"]["instruct"]


SIXTEEN = "Estão 16 graus."
#: How each table reads SIXTEEN (the request builder's normalisation; --deterministic seeds
#: from the text read, so the same voice reading the same words gives the same audio).
READINGS = {"pt-BR": "Estão dezesseis graus.", "pt": "Estão dezasseis graus."}


def reading(studio: StudioServer, voice: str) -> str:
    """Which table a voice reads "16" with, heard over Wyoming."""
    heard = {table: wyoming_pcm(studio, words, voice) for table, words in READINGS.items()}
    assert heard["pt-BR"] != heard["pt"]
    spoken = wyoming_pcm(studio, SIXTEEN, voice)
    found = [table for table, pcm in heard.items() if pcm == spoken]
    assert len(found) == 1, f"{voice} read {SIXTEEN!r} neither way"
    return found[0]


def tone(seconds: float = 2.0, rate: int = 16000) -> bytes:
    import numpy as np

    t = np.arange(int(seconds * rate)) / rate
    buffer = io.BytesIO()
    soundfile.write(buffer, 0.3 * np.sin(2 * np.pi * 220 * t), rate, format="WAV",
                    subtype="PCM_16")
    return buffer.getvalue()


def test_a_brazilian_voice_keeps_its_readings(studio: StudioServer) -> None:
    """A take made for pt-BR reads Brazilian in its preview, once saved, after an edit, in
    its exported and imported copy; a cloned one too; a file without the variant (version 1
    as it was) still imports, the plain Portuguese way; the built-in pt-BR-female moves as
    a Brazilian voice."""
    from studio_http import multipart

    rows = {row["id"]: row for row in studio.request("GET", "/api/languages").json()["languages"]}
    assert rows["pt-BR"]["tags"] == ["pt-BR"] and rows["pt-BR"]["name"] == "Portuguese (Brazil)"
    take = studio.request("POST", "/api/takes", json_body={
        "design": {"gender": "female"}, "language": "pt-BR"}).json()["take"]
    assert take["language"] == "pt-BR"
    previews = {text: studio.request("POST", "/api/preview", json_body={
        "take": take["id"], "text": text, "name": "br-ana"}).body
        for text in (SIXTEEN, READINGS["pt-BR"])}
    assert previews[SIXTEEN] == previews[READINGS["pt-BR"]]
    saved = studio.request("POST", "/api/voices", json_body={"take": take["id"],
                                                             "name": "br-ana"})
    assert saved.status == 201, saved.body[:300]
    voice = saved.json()["voice"]
    assert (voice["languages"], voice["variant"]) == (["pt-BR"], "pt-BR")
    assert reading(studio, "br-ana") == "pt-BR"
    offered = {v["id"]: v["languages"] for v in
               studio.request("GET", "/v1/audio/voices").json()["voices"]}
    assert offered["br-ana"] == ["pt-BR"]

    edited = studio.request("PATCH", "/api/voices/br-ana", json_body={"description": "Ana"})
    assert edited.json()["voice"]["languages"] == ["pt-BR"]
    edited = studio.request("PATCH", "/api/voices/br-ana",
                            json_body={"languages": ["pt-BR", "en"]})
    assert edited.json()["voice"]["languages"] == ["pt-BR", "en"]
    assert reading(studio, "br-ana") == "pt-BR"

    document = studio.request("GET", "/api/voices/br-ana/export").json()
    assert (document["version"], document["languages"], document["variant"]) == (
        1, ["pt", "en"], "pt-BR")
    copy = studio.request("POST", "/api/voices/import?name=br-ana-copy", json_body=document)
    assert copy.status == 201 and copy.json()["voice"]["languages"] == ["pt-BR", "en"]
    assert reading(studio, "br-ana-copy") == "pt-BR"
    older = {key: value for key, value in document.items() if key != "variant"}
    old = studio.request("POST", "/api/voices/import?name=br-ana-old", json_body=older)
    assert old.status == 201 and old.json()["voice"]["languages"] == ["pt", "en"]
    assert reading(studio, "br-ana-old") == "pt"

    builtin = studio.request("GET", "/api/voices/pt-BR-female/export").json()
    assert builtin["variant"] == "pt-BR"
    moved = studio.request("POST", "/api/voices/import?name=br-female-copy", json_body=builtin)
    assert moved.status == 201 and moved.json()["voice"]["languages"] == ["pt-BR"]
    assert reading(studio, "br-female-copy") == "pt-BR"

    body, content_type = multipart({"transcript": "Olá, tudo bem com você?",
                                    "language": "pt-BR"}, "audio", "bia.wav", tone())
    cloned = studio.request("POST", "/api/clone", body=body,
                            headers={"Content-Type": content_type})
    assert cloned.status == 201 and cloned.json()["take"]["language"] == "pt-BR"
    kept = studio.request("POST", "/api/voices", json_body={
        "take": cloned.json()["take"]["id"], "name": "br-bia", "languages": ["pt-BR"]})
    assert kept.status == 201 and kept.json()["voice"]["languages"] == ["pt-BR"]
    assert reading(studio, "br-bia") == "pt-BR"
