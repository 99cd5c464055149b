"""The studio as a person uses it, in a real browser, against a real server process.

Design, listen, another take, pick, save; then the real ``wyoming`` client: ``describe``
lists the voice and ``synthesize`` returns exactly the PCM of the picked take's preview;
a restart keeps it; export, delete, import give the same audio again; a clone by upload the
same way, and a bad upload shows its message; a voice made for pt-BR reads the Brazilian
way. Everything runs standalone and again under an
ingress-like base path (:class:`studio_browser.IngressProxy`). The servers run with
``--deterministic``, and the page's previews carry the name typed in, so a preview and a
later Wyoming request of the saved voice draw the same seed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import free_port
from studio_browser import Browser, IngressProxy
from studio_http import (
    StudioServer,
    StudioStarter,
    http_request,
    wav_pcm,
    wav_seconds,
    wyoming_pcm,
    wyoming_voices,
)

pytestmark = pytest.mark.slow


@dataclass
class Site:
    """A studio server and the URL the browser opens it at (directly or through ingress)."""

    server: StudioServer
    url: str
    mode: str
    starter: StudioStarter
    data_dir: Path
    proxy: IngressProxy | None = None

    def restart(self) -> None:
        extra = self.server.process.args[self.server.process.args.index("--web-uri") + 2:]
        self.server.process.stop()
        self.server = self.starter(self.data_dir, *extra, web_port=self.server.web_port)


@pytest.fixture(params=["standalone", "ingress"])
def site(request: pytest.FixtureRequest, studio_factory: StudioStarter,
         tmp_path: Path) -> Iterator[Site]:
    data_dir = tmp_path / "data"
    if request.param == "standalone":
        server = studio_factory(data_dir)
        yield Site(server, server.base + "/", "standalone", studio_factory, data_dir)
        return
    server = studio_factory(data_dir, "--web-ingress", "--web-ingress-proxy", "127.0.0.1")
    proxy = IngressProxy(server.web_port, free_port())
    try:
        yield Site(server, proxy.url, "ingress", studio_factory, data_dir, proxy)
    finally:
        proxy.close()


def select(browser: Browser, element_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(browser.by_id(element_id)).select_by_value(value)


def type_into(browser: Browser, element_id: str, text: str) -> None:
    element = browser.by_id(element_id)
    element.clear()
    element.send_keys(text)


def take_ids(browser: Browser) -> list[str]:
    return [card.get_attribute("data-take") for card in browser.css(".take")]


def take_audio(browser: Browser, take_id: str) -> tuple[float, bytes]:
    browser.wait(lambda: browser.driver.execute_script(
        "const a = document.querySelector(arguments[0]); return a && a.src.startsWith('blob:')",
        f'[data-take="{take_id}"] audio'), "the take's audio")
    return browser.audio(f'[data-take="{take_id}"] audio')


def wait_takes(browser: Browser, count: int) -> list[str]:
    browser.wait(lambda: len(take_ids(browser)) >= count, f"{count} take(s)")
    ids = take_ids(browser)
    take_audio(browser, ids[count - 1])
    return ids


def test_design_pick_keep_move(site: Site, browser: Browser) -> None:
    name = f"kitchen-anna-{site.mode}"
    browser.open(site.url)
    browser.shot(f"{site.mode}-1-design")
    sample = browser.by_id("sample").get_attribute("value")
    assert "lights" in sample  # prefilled with a Home Assistant reply
    select(browser, "design-gender", "female")
    select(browser, "design-age", "young adult")
    type_into(browser, "voice-name", name)  # previews then draw the saved voice's seed

    browser.by_id("listen").click()
    first = wait_takes(browser, 1)[0]
    duration, first_wav = take_audio(browser, first)
    assert duration > 0.5 and wav_seconds(first_wav) > 0.5
    browser.by_id("another").click()
    second = wait_takes(browser, 2)[1]
    _, second_wav = take_audio(browser, second)
    assert wav_pcm(first_wav) != wav_pcm(second_wav)  # another take is another person
    browser.shot(f"{site.mode}-2-takes")
    browser.shot_of("#takes-section", f"{site.mode}-takes-section")

    # Pick: the first take by click, then the second by keyboard (arrow in the radio group).
    from selenium.webdriver.common.keys import Keys

    first_radio = browser.css(f'[data-take="{first}"] input[type=radio]')[0]
    first_radio.click()
    assert "picked" in browser.css(f'[data-take="{first}"]')[0].get_attribute("class")
    first_radio.send_keys(Keys.ARROW_DOWN)
    browser.wait(lambda: "picked" in browser.css(f'[data-take="{second}"]')[0]
                 .get_attribute("class"), "the second take picked")

    type_into(browser, "voice-description", "Anna in the kitchen")
    browser.by_id("save").click()
    browser.wait_status("save-status", "saved")
    assert "reload the Wyoming integration" in browser.by_id("save-status").text
    browser.shot(f"{site.mode}-3-saved")

    picked_pcm = wav_pcm(second_wav)
    assert name in wyoming_voices(site.server)
    assert wyoming_pcm(site.server, sample, name) == picked_pcm

    site.restart()
    assert name in wyoming_voices(site.server)
    assert wyoming_pcm(site.server, sample, name) == picked_pcm

    # Export, delete (after the confirmation), import: the same person again.
    browser.open(site.url)
    row = f'[data-voice="{name}"]'
    browser.wait(lambda: browser.css(row), "the saved voice in the list")
    buttons = {b.text: b for b in browser.css(f"{row} button")}
    buttons["Export"].click()
    exported = site_download(browser, f"{name}.omnivoice.json")
    assert json.loads(exported.read_text())["kind"] == "designed"
    buttons["Delete"].click()
    browser.driver.switch_to.alert.accept()
    browser.wait_status("library-status", "deleted")
    assert name not in wyoming_voices(site.server)
    browser.by_id("import-file").send_keys(str(exported))
    browser.by_id("import").click()
    browser.wait_status("import-status", "imported")
    browser.shot(f"{site.mode}-4-library")
    assert wyoming_pcm(site.server, sample, name) == picked_pcm


def site_download(browser: Browser, file_name: str) -> Path:
    path = browser.downloads / file_name
    browser.wait(lambda: path.is_file() and not list(browser.downloads.glob("*.crdownload")),
                 f"the download {file_name}")
    return path


def test_clone_by_upload_and_a_bad_upload(site: Site, browser: Browser, tmp_path: Path) -> None:
    name = f"clone-ben-{site.mode}"
    words = "Hello there, this is how I sound when I read something to you."
    recording = tmp_path / "ben.wav"
    # A recording to clone: a voice of the server itself (the proxy address may ask directly).
    answer = http_request("127.0.0.1", site.server.web_port, "POST", "/v1/audio/speech",
                          json_body={"input": words, "voice": "en-male-young"})
    assert answer.status == 200
    recording.write_bytes(answer.body)

    browser.open(site.url)
    bad = tmp_path / "notes.wav"
    bad.write_text("these are not the droids you are looking for\n" * 20)
    browser.by_id("clone-file").send_keys(str(bad))
    browser.by_id("clone-listen").click()
    status = browser.wait_status("clone-status", "transcript")  # checked in the page first
    assert "speech recognizer" in status
    type_into(browser, "transcript", words)
    browser.by_id("clone-listen").click()
    status = browser.wait_status("clone-status", "WAV, FLAC or OGG")
    assert "error" in browser.by_id("clone-status").get_attribute("class")
    browser.shot(f"{site.mode}-5-bad-upload")

    browser.by_id("clone-file").send_keys(str(recording))
    type_into(browser, "voice-name", name)
    browser.by_id("clone-listen").click()
    take = wait_takes(browser, 1)[0]
    duration, preview = take_audio(browser, take)
    assert duration > 0.5
    browser.wait_status("clone-status", "Clone ready")
    browser.by_id("save").click()
    browser.wait_status("save-status", "saved")
    browser.shot(f"{site.mode}-6-clone-saved")
    assert name in wyoming_voices(site.server)
    sample = browser.by_id("sample").get_attribute("value")
    assert wyoming_pcm(site.server, sample, name) == wav_pcm(preview)


def test_phone_width_and_keyboard(studio: StudioServer, browser: Browser) -> None:
    """At 390 px every control is reachable by Tab and labelled; nothing overflows."""
    browser.driver.set_window_size(390, 1400)
    browser.open(studio.base + "/")
    overflow = browser.driver.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    unlabelled = browser.driver.execute_script("""
        return [...document.querySelectorAll('input, select, textarea')]
          .filter(e => !e.closest('[hidden]') && !e.closest('template') && e.type !== 'radio')
          .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))
          .map(e => e.id || e.name)""")
    assert unlabelled == []
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    focused = set()
    for _ in range(40):  # Tab through the page, as a keyboard user does
        ActionChains(browser.driver).send_keys(Keys.TAB).perform()
        focused.add(browser.driver.execute_script("return document.activeElement.id"))
    assert {"language", "design-gender", "sample", "listen", "clone-file", "transcript",
            "voice-name", "import-file"} <= focused
    browser.shot("phone-design", width=390)
    browser.shot_of("#design", "phone-design-section")


def test_a_page_elsewhere_cannot_post_to_the_studio(studio: StudioServer, browser: Browser,
                                                    tmp_path: Path) -> None:
    """Origin, from the browser: a page on another origin sends a voice file to import (a
    'simple' no-cors POST, no preflight); the studio refuses it. The studio's own page can."""
    import http.server
    import threading

    voice = studio.request("GET", "/api/voices/en-female-young/export").json()
    voice["name"] = "cross-site-voice"
    page = tmp_path / "attack.html"
    page.write_text("<!DOCTYPE html><p id=done></p><script>"
                    f"fetch('{studio.base}/api/voices/import', {{method: 'POST', mode: "
                    f"'no-cors', headers: {{'Content-Type': 'text/plain'}}, body: "
                    f"{json.dumps(json.dumps(voice))}}}).finally(() => "
                    "document.getElementById('done').textContent = 'sent');</script>")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)  # type: ignore[arg-type]

        def log_message(self, *args: object) -> None:
            pass

    attacker = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Quiet)
    threading.Thread(target=attacker.serve_forever, daemon=True).start()
    try:
        browser.driver.get(f"http://127.0.0.1:{attacker.server_address[1]}/attack.html")
        browser.wait(lambda: browser.by_id("done").text == "sent", "the cross-site post")
    finally:
        attacker.shutdown()
    names = {v["name"] for v in studio.request("GET", "/api/voices").json()["voices"]}
    assert "cross-site-voice" not in names
    assert "refused (bad_origin)" in studio.process.log  # it reached the server: refused there

    browser.open(studio.base + "/")
    status = browser.driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('api/voices/import', {method: 'POST', headers: {'Content-Type': "
        "'application/json'}, body: arguments[0]}).then(r => done(r.status));",
        json.dumps(voice))
    assert status == 201


@pytest.mark.microphone
def test_clone_from_the_microphone(studio: StudioServer, browser: Browser) -> None:
    """Recorded in the page (Chromium's fake microphone plays a tone), encoded to WAV in the
    page, cloned by the server: the take plays."""
    browser.open(studio.base + "/")  # loopback is a secure context: the microphone works
    assert browser.by_id("record").is_enabled()
    browser.by_id("record").click()
    browser.wait_status("clone-status", "Recording")
    deadline = time.monotonic() + 3.0  # record three seconds of the tone
    while time.monotonic() < deadline:
        time.sleep(0.1)
    browser.by_id("record").click()
    status = browser.wait_status("clone-status", "Recorded")
    assert float(status.split()[1]) >= 2.0  # "Recorded 3.0 s. ..."
    type_into(browser, "transcript", "This is a tone, not a voice.")
    browser.by_id("clone-listen").click()
    take = wait_takes(browser, 1)[0]
    duration, _ = take_audio(browser, take)
    assert duration > 0.5
    browser.wait_status("clone-status", "Clone ready")


def test_a_brazilian_voice_from_the_page(studio: StudioServer, browser: Browser) -> None:
    """Portuguese (Brazil) is a language of the page: its take previews "16" the Brazilian
    way ("dezesseis"), the voice is saved as pt-BR, and over Wyoming it reads the same."""
    name = "sala-bia"
    browser.open(studio.base + "/")
    browser.wait(lambda: browser.css('#language option[value="pt-BR"]'), "pt-BR offered")
    select(browser, "language", "pt-BR")
    assert "fazendo" in browser.by_id("sample").get_attribute("value")  # Brazilian sample
    type_into(browser, "sample", "Estão 16 graus.")
    select(browser, "design-gender", "female")
    type_into(browser, "voice-name", name)
    browser.by_id("listen").click()
    take = wait_takes(browser, 1)[0]
    _, preview = take_audio(browser, take)
    browser.by_id("save").click()
    browser.wait_status("save-status", "saved")
    voices = {v["name"]: v for v in studio.request("GET", "/api/voices").json()["voices"]}
    assert voices[name]["languages"] == ["pt-BR"]
    assert wyoming_pcm(studio, "Estão dezesseis graus.", name) == wav_pcm(preview)
    assert wyoming_pcm(studio, "Estão 16 graus.", name) == wav_pcm(preview)
