"""The household's voice per language, as a household sets it in the studio: "use for
German" makes a saved voice the one Home Assistant lists first for German (the ``info``
event, and its sorted list) and the one that speaks a request naming no voice in German;
kept across a restart, and undone the same way. Over HTTP, Wyoming and in a real browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from studio_browser import Browser
from studio_http import StudioServer, StudioStarter, wyoming_info, wyoming_pcm
from wyoming.tts import SynthesizeVoice

from wyoming_omnivoice.voices.catalog import HOUSEHOLD_MARK

pytestmark = pytest.mark.slow

TEXT = "Das Licht in der Küche ist an."
GERMAN = SynthesizeVoice(language="de")


def save_voice(server: StudioServer, name: str, language: str) -> None:
    take = server.request("POST", "/api/takes", json_body={
        "design": {"gender": "female", "age": "elderly"}, "language": language}).json()["take"]
    saved = server.request("POST", "/api/voices", json_body={
        "take": take["id"], "name": name, "description": "Oma", "languages": [language]})
    assert saved.status == 201, saved.body


def first_for(server: StudioServer, tag: str) -> tuple[str, str]:
    """The voice Home Assistant lists first for ``tag``: its voices sorted by description."""
    voices = [v for v in wyoming_info(server).tts[0].voices if tag in v.languages]
    first = min(voices, key=lambda v: v.description or v.name)
    return first.name, first.description or ""


def first_listed(server: StudioServer, tag: str = "de") -> str:
    """The first voice of the ``info`` event that lists ``tag``: without a household voice
    (and a default voice of another language), the one a request in it gets."""
    return next(v.name for v in wyoming_info(server).tts[0].voices if tag in v.languages)


def test_use_for_german_over_http_and_wyoming_kept_and_undone(
        studio_factory: StudioStarter, tmp_path: Path) -> None:
    server = studio_factory(tmp_path / "data")
    save_voice(server, "oma", "de")
    before = first_for(server, "de")
    assert before[0] != "oma"
    named = wyoming_pcm(server, TEXT, "oma")
    assert wyoming_pcm(server, TEXT, GERMAN) != named

    chosen = server.request("PUT", "/api/languages/German/voice", json_body={"voice": "oma"})
    assert chosen.status == 200 and chosen.json()["language"] == "de"
    assert chosen.json()["note"].startswith("Saved.")
    info = wyoming_info(server).tts[0].voices
    assert info[0].name == "oma" and info[0].description == HOUSEHOLD_MARK + "Oma"
    assert "de" in info[0].languages and "de-DE" in info[0].languages
    assert first_for(server, "de-AT") == ("oma", HOUSEHOLD_MARK + "Oma")
    assert wyoming_pcm(server, TEXT, GERMAN) == named  # no voice named, German: oma
    assert wyoming_pcm(server, TEXT, SynthesizeVoice(language="de-CH")) == named
    voices = {v["name"]: v for v in server.request("GET", "/api/voices").json()["voices"]}
    assert voices["oma"]["household_for"] == ["de"]
    assert server.request("GET", "/api/household").json() == {"household": {"de": "oma"}}

    refused = server.request("PUT", "/api/languages/fr/voice", json_body={"voice": "oma"})
    assert refused.status == 400 and refused.code == "bad_language"
    assert "does not speak 'fr'" in refused.json()["error"]["message"]
    missing = server.request("PUT", "/api/languages/de/voice", json_body={"voice": "nobody"})
    assert missing.status == 404 and missing.code == "no_such_voice"

    undone = server.request("DELETE", "/api/languages/de/voice")
    assert undone.status == 200 and undone.json()["cleared"] is True
    assert first_for(server, "de") == before
    assert wyoming_pcm(server, TEXT, GERMAN) == wyoming_pcm(server, TEXT, first_listed(server))

    server.request("PUT", "/api/languages/de/voice", json_body={"voice": "oma"})
    server.process.stop()  # a restart keeps it
    server = studio_factory(tmp_path / "data", web_port=server.web_port)
    assert first_for(server, "de") == ("oma", HOUSEHOLD_MARK + "Oma")
    assert wyoming_pcm(server, TEXT, GERMAN) == named
    assert server.request("DELETE", "/api/languages/de/voice").json()["cleared"] is True
    assert not first_for(server, "de")[1].startswith(HOUSEHOLD_MARK)
    # Without a household voice: the first voice listed for German (after a restart the
    # saved voices come before the per-language ones), as before.
    assert wyoming_pcm(server, TEXT, GERMAN) == wyoming_pcm(server, TEXT, first_listed(server))
    server.process.stop()  # and so it stays
    server = studio_factory(tmp_path / "data", web_port=server.web_port)
    assert not first_for(server, "de")[1].startswith(HOUSEHOLD_MARK)
    assert server.request("GET", "/api/household").json() == {"household": {}}


def test_use_for_in_the_page(studio_factory: StudioStarter, browser: Browser,
                             tmp_path: Path) -> None:
    server = studio_factory(tmp_path / "data")
    save_voice(server, "oma", "de")
    browser.open(server.base + "/")
    row = 'li[data-voice="oma"]'
    use = browser.wait(lambda: browser.css(f'{row} button[data-use="de"]'), "Use for German")
    assert use[0].text == "Use for German"
    use[0].click()
    browser.wait_status("library-status", "oma is now the household's voice for German")
    badge = browser.wait(lambda: browser.css(f"{row} .badge"), "the household badge")
    assert badge[0].text == "Household voice for German"
    browser.shot("studio-household")
    assert first_for(server, "de") == ("oma", HOUSEHOLD_MARK + "Oma")
    undo = browser.css(f'{row} button[data-household="de"]')
    assert undo and undo[0].text == "Stop using for German"
    undo[0].click()
    browser.wait_status("library-status", "No household voice for German any more")
    browser.wait(lambda: not browser.css(f"{row} .badge"), "the badge to go")
    assert first_for(server, "de")[0] != "oma"
