"""Each security rule of the web server, tried against a real server process by plain HTTP.

Every test attempts to get past one rule and checks both the refusal (its status and error
code) and, where the attempt would change something, that nothing changed.
"""

from __future__ import annotations

import io
import json
import socket
import wave
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from studio_http import StudioServer, StudioStarter, http_request, multipart

pytestmark = pytest.mark.slow

DESIGN = {"design": {"gender": "female"}, "language": "en"}


def tone_wav(seconds: float, rate: int = 16000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    samples = (0.3 * np.sin(2 * np.pi * 220 * t) * 32767).astype("<i2")
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(rate)
        writer.writeframes(samples.tobytes())
    return buffer.getvalue()


def voice_names(studio: StudioServer) -> set[str]:
    return {voice["name"] for voice in studio.request("GET", "/api/voices").json()["voices"]}


# ---- loopback and Host ---------------------------------------------------------------


def test_loopback_studio_refuses_foreign_host_names(studio: StudioServer) -> None:
    """DNS rebinding: a page at evil.example resolving to 127.0.0.1 sends Host: evil...."""
    answer = studio.request("GET", "/api/voices", host="evil.example")
    assert answer.status == 403 and answer.code == "host_not_allowed"
    assert studio.request("GET", "/api/voices", host="localhost").status == 200


def test_binding_beyond_loopback_needs_a_token(tmp_path: Path) -> None:
    starter = StudioStarter(tmp_path)
    server = starter(tmp_path / "data", web_host="0.0.0.0", wait=False)
    try:
        assert server.process.wait_exit() == 2
        assert "--web-token" in server.process.log
        assert "Model loaded" not in server.process.log  # refused before the model loads
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", server.web_port),
                                                               timeout=2):
            pass
    finally:
        starter.stop_all()


# ---- the token -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def token_studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StudioServer]:
    folder = tmp_path_factory.mktemp("token-studio")
    starter = StudioStarter(folder)
    server = starter(folder / "data", "--web-token", "correct-horse-battery-staple",
                     web_host="0.0.0.0")
    yield server
    starter.stop_all()


def test_token_is_required_beyond_loopback(token_studio: StudioServer) -> None:
    assert token_studio.request("GET", "/api/voices").code == "unauthorized"
    wrong = token_studio.request("GET", "/api/voices",
                                 headers={"Authorization": "Bearer correct-horse-battery-stapl"})
    assert wrong.status == 401
    forged = token_studio.request("GET", "/api/voices",
                                  headers={"Cookie": "omnivoice_session=correct-horse-battery-"
                                                     "staple"})
    assert forged.status == 401
    right = token_studio.request("GET", "/api/voices",
                                 headers={"Authorization": "Bearer correct-horse-battery-staple"})
    assert right.status == 200
    speech = token_studio.request("POST", "/v1/audio/speech",
                                  json_body={"input": "Hello.", "voice": "en-female-young"})
    assert speech.status == 401
    # The page shell is public (it holds no data) and shows the login.
    assert token_studio.request("GET", "/").status == 200


def test_login_sets_a_session_cookie_that_is_not_the_token(token_studio: StudioServer) -> None:
    bad = token_studio.request("POST", "/api/login", json_body={"token": "guess"})
    assert bad.status == 401 and "set-cookie" not in bad.headers
    good = token_studio.request("POST", "/api/login",
                                json_body={"token": "correct-horse-battery-staple"})
    cookie = good.headers["set-cookie"].split(";")[0]
    assert "correct-horse" not in cookie and "HttpOnly" in good.headers["set-cookie"]
    assert token_studio.request("GET", "/api/voices", headers={"Cookie": cookie}).status == 200


# ---- Origin --------------------------------------------------------------------------


def test_state_changes_from_another_origin_are_refused(studio: StudioServer) -> None:
    before = voice_names(studio)
    for headers in ({"Origin": "http://192.168.1.50:8080"}, {"Origin": "null"},
                    {"Sec-Fetch-Site": "cross-site"}):
        answer = studio.request("POST", "/api/takes", json_body=DESIGN, headers=headers)
        assert answer.status == 403, headers
        assert answer.code in ("bad_origin", "cross_site")
    deleted = studio.request("DELETE", "/api/voices/en-female-young",
                             headers={"Origin": "http://evil.example"})
    assert deleted.status == 403 and voice_names(studio) == before
    same = studio.request("POST", "/api/takes", json_body=DESIGN,
                          headers={"Origin": studio.base})
    assert same.status == 201


# ---- names never leave the data dir ---------------------------------------------------


@pytest.mark.parametrize("name", ["../escape", "..", "a/b", "/etc/passwd", "x" * 65, ".hidden",
                                  "voices/../../x"])
def test_voice_names_cannot_make_paths(studio: StudioServer, name: str) -> None:
    take = studio.request("POST", "/api/takes", json_body=DESIGN).json()["take"]
    answer = studio.request("POST", "/api/voices", json_body={"take": take["id"], "name": name})
    assert answer.status == 400 and answer.code == "bad_name"
    data_dir = Path(studio.process.args[studio.process.args.index("--data-dir") + 1])
    assert not (data_dir.parent / "escape").exists()
    assert not list(data_dir.parent.glob("**/escape*"))


def test_import_with_a_path_name_is_refused(studio: StudioServer) -> None:
    export = studio.request("GET", "/api/voices/en-female-young/export").json()
    export["name"] = "../../outside"
    answer = studio.request("POST", "/api/voices/import", json_body=export)
    assert answer.status == 400 and answer.code == "bad_voice_file"
    assert "Invalid voice name" in answer.json()["error"]["message"]
    renamed = studio.request("POST", "/api/voices/import?name=..%2Foutside",
                             json_body=studio.request("GET", "/api/voices/en-female-young/"
                                                      "export").json())
    assert renamed.status == 400 and renamed.code == "bad_name"


# ---- uploads and limits ---------------------------------------------------------------


def clone(studio: StudioServer, data: bytes, name: str = "voice.wav",
          transcript: str = "Hello there, this is a test.") -> tuple[int, str | None]:
    body, content_type = multipart({"transcript": transcript, "language": "en"}, "audio", name,
                                   data)
    answer = studio.request("POST", "/api/clone", body=body,
                            headers={"Content-Type": content_type})
    return answer.status, answer.code


def test_uploads_are_sniffed_by_content_not_by_name(studio: StudioServer) -> None:
    assert clone(studio, b"#!/bin/sh\nrm -rf /\n" * 10, "voice.wav") == (415,
                                                                         "unsupported_recording")
    assert clone(studio, b"RIFF\x00\x00\x00\x00WAVEjunkjunkjunk", "voice.wav") == (
        400, "unreadable_recording")
    assert clone(studio, tone_wav(2.0), "voice.mp3")[0] == 201  # the name does not matter


def test_upload_limits_are_named(studio: StudioServer) -> None:
    assert clone(studio, tone_wav(61.0, rate=8000)) == (413, "recording_too_long")
    big = b"RIFF" + b"\x00" * 4 + b"WAVE" + b"\x00" * (16 * 1024 * 1024)
    assert clone(studio, big) == (413, "upload_too_large")
    huge = studio.request("POST", "/api/voices/import", body=b"{" + b" " * (25 * 1024 * 1024),
                          headers={"Content-Type": "application/json"})
    assert huge.status == 413 and huge.code == "body_too_large"
    assert "limit" in huge.json()["error"]["message"]


def test_transcript_is_required(studio: StudioServer) -> None:
    assert clone(studio, tone_wav(2.0), transcript="  ") == (400, "transcript_required")


def test_text_length_limit_is_named(studio: StudioServer) -> None:
    answer = studio.request("POST", "/v1/audio/speech",
                            json_body={"input": "a" * 5001, "voice": "en-female-young"})
    assert answer.status == 400 and answer.code == "text_too_long"
    assert "--max-text-length" in answer.json()["error"]["message"]


def test_bad_requests_get_json_errors_and_the_server_goes_on(studio: StudioServer) -> None:
    cases = [("POST", "/api/takes", b"not json"), ("POST", "/api/takes", b"[1, 2]"),
             ("POST", "/api/preview", json.dumps({"take": "nope", "text": "x"}).encode()),
             ("GET", "/api/no-such-thing", None), ("PUT", "/api/voices", b"{}"),
             ("POST", "/api/voices/import", json.dumps({"format": "x"}).encode())]
    for method, path, body in cases:
        answer = studio.request(method, path, body=body,
                                headers={"Content-Type": "application/json"})
        assert 400 <= answer.status < 500, (path, answer.status)
        assert answer.code, (path, answer.body[:200])
    info = studio.request("GET", "/api/info")
    assert info.status == 200
    assert json.loads(info.body)["model_notes"] == []  # the tiny model runs as intended


def test_answers_carry_security_headers(studio: StudioServer) -> None:
    page = studio.request("GET", "/")
    assert "frame-ancestors 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert "cdn" not in page.body.decode().lower()


# ---- ingress -------------------------------------------------------------------------


def test_ingress_accepts_only_the_ingress_proxy(tmp_path: Path) -> None:
    starter = StudioStarter(tmp_path)
    try:
        server = starter(tmp_path / "data", "--web-ingress", web_host="0.0.0.0")
        answer = server.request("GET", "/api/voices",
                                headers={"X-Ingress-Path": "/api/hassio_ingress/abc"})
        assert answer.status == 403 and answer.code == "not_ingress"
    finally:
        starter.stop_all()


def test_ingress_path_must_be_a_plain_path(tmp_path: Path) -> None:
    starter = StudioStarter(tmp_path)
    try:
        server = starter(tmp_path / "data", "--web-ingress", "--web-ingress-proxy", "127.0.0.1")
        evil = server.request("GET", "/", headers={"X-Ingress-Path": '/x"><script>alert(1)'})
        assert evil.status == 400 and evil.code == "bad_ingress_path"
        page = http_request("127.0.0.1", server.web_port, "GET", "/",
                            headers={"X-Ingress-Path": "/api/hassio_ingress/Tok-3n_x"})
        assert b'<base href="/api/hassio_ingress/Tok-3n_x/">' in page.body
    finally:
        starter.stop_all()
