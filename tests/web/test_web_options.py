"""--web-uri, --web-token, --web-ingress: off by default, loopback unless told, and no
listening beyond loopback without a token (or ingress)."""

from __future__ import annotations

import asyncio

import pytest

from wyoming_omnivoice.app.config import parse_config
from wyoming_omnivoice.errors import StartupError
from wyoming_omnivoice.web.audio_files import decode_upload, sniff_audio
from wyoming_omnivoice.web.errors import ApiError
from wyoming_omnivoice.web.options import TOKEN_ENV, WebLimits, WebOptions, web_options

TOKEN = "a-token-of-twenty-chars"


def options(*argv: str) -> WebOptions | None:
    return web_options(parse_config(list(argv)))


def test_off_by_default() -> None:
    assert options() is None


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "127.0.0.5"])
def test_loopback_needs_no_token(host: str) -> None:
    web = options("--web-uri", f"http://{host}:8099")
    assert web is not None and web.loopback and web.token is None


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "[::]", "studio.lan"])
def test_beyond_loopback_needs_a_token(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(StartupError, match="--web-token"):
        options("--web-uri", f"http://{host}:8099")
    assert options("--web-uri", f"http://{host}:8099", "--web-token", TOKEN) is not None
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    web = options("--web-uri", f"http://{host}:8099")
    assert web is not None and web.token == TOKEN


def test_ingress_needs_no_token_but_accepts_only_the_proxy() -> None:
    web = options("--web-uri", "http://0.0.0.0:8099", "--web-ingress")
    assert web is not None and web.ingress and web.ingress_proxy == "172.30.32.2"


@pytest.mark.parametrize("argv, message", [
    (["--web-uri", "https://127.0.0.1:8099"], "http://HOST:PORT"),
    (["--web-uri", "http://127.0.0.1"], "needs a host and a port"),
    (["--web-uri", "http://127.0.0.1:8099/studio"], "only the address"),
    (["--web-uri", "http://0.0.0.0:8099", "--web-token", "short"], "at least 16"),
    (["--web-token", TOKEN], "need --web-uri"),
    (["--web-ingress"], "need --web-uri"),
    (["--web-uri", "http://0.0.0.0:1", "--web-ingress", "--web-ingress-proxy", "supervisor"],
     "IP address"),
])
def test_bad_flags_are_named(argv: list[str], message: str) -> None:
    with pytest.raises(StartupError, match=message):
        options(*argv)


def test_sniffing_reads_content() -> None:
    assert sniff_audio(b"RIFF\x24\x00\x00\x00WAVEfmt ") == "wav"
    assert sniff_audio(b"fLaC\x00\x00") == "flac"
    assert sniff_audio(b"OggS\x00\x02") == "ogg"
    assert sniff_audio(b"ID3\x03mp3 data") is None
    assert sniff_audio(b"RIFF\x24\x00\x00\x00AVI LIST") is None


def test_decoding_has_a_time_limit() -> None:
    """A decode that outlasts the limit is refused with its name (the limit here is 0 s)."""
    import io
    import wave

    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as writer:
        writer.setnchannels(1)
        writer.setsampwidth(2)
        writer.setframerate(16000)
        writer.writeframes(b"\x10\x00" * 16000 * 30)
    with pytest.raises(ApiError) as caught:
        asyncio.run(decode_upload(buffer.getvalue(), WebLimits(decode_timeout_s=0.0)))
    assert caught.value.code == "decode_timeout" and "time limit" in caught.value.message
    kind, samples, rate = asyncio.run(decode_upload(buffer.getvalue(), WebLimits()))
    assert (kind, rate, samples.shape) == ("wav", 16000, (16000 * 30,))
