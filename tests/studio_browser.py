"""A real browser for the studio tests: Debian's chromium driven by Selenium, headless.

``apt-get install -y chromium chromium-driver`` provides ``/usr/bin/chromium`` and
``/usr/bin/chromedriver`` (``.ci/run`` installs them; nothing downloads a browser build).
Where they are missing the browser tests skip, unless ``OMNIVOICE_REQUIRE_BROWSER=1`` (set
by ``.ci/run``) makes that a failure. Every test fails on a JavaScript error in the page.

Also here: a small ingress-like proxy that serves the studio under
``/api/hassio_ingress/<token>/`` and adds ``X-Ingress-Path`` and the forwarded headers, as
Home Assistant's Supervisor does.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
WAIT_S = 120.0
INGRESS_PREFIX = "/api/hassio_ingress/Xk3-test_token"


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("OMNIVOICE_REQUIRE_BROWSER") == "1":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


class Browser:
    """One headless chromium; screenshots go to ``screens``."""

    def __init__(self, screens: Path, downloads: Path, width: int = 1100,
                 height: int = 1400, fake_microphone: bool = False) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", f"--window-size={width},{height}",
                         "--autoplay-policy=no-user-gesture-required", "--mute-audio"):
            options.add_argument(argument)
        if fake_microphone:  # a generated tone as the microphone, permission granted
            options.add_argument("--use-fake-ui-for-media-stream")
            options.add_argument("--use-fake-device-for-media-stream")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        options.add_experimental_option("prefs", {
            "download.default_directory": str(downloads),
            "download.prompt_for_download": False})
        self.driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
        self.driver.set_script_timeout(WAIT_S)
        self.screens = screens
        self.downloads = downloads
        self.errors: list[str] = []

    def open(self, url: str) -> None:
        self.driver.get(url)
        self.wait(lambda: len(self.select_options("language")) > 0, "the languages to load")

    def select_options(self, element_id: str) -> list[str]:
        return list(self.driver.execute_script(
            "return [...document.getElementById(arguments[0]).options].map(o => o.value)",
            element_id))

    def by_id(self, element_id: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.ID, element_id)

    def css(self, selector: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, selector))

    def wait(self, condition: Callable[[], Any], what: str, timeout: float = WAIT_S) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            self.collect_errors()
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; page says: "
                             f"{self.driver.find_element('tag name', 'main').text[:2000]}")

    def wait_status(self, element_id: str, text: str) -> str:
        return str(self.wait(lambda: text in self.by_id(element_id).text
                             and self.by_id(element_id).text, f"{element_id}: {text!r}"))

    def audio(self, selector: str) -> tuple[float, bytes]:
        """(duration, WAV bytes) of an ``<audio>`` once its metadata is loaded."""
        result = self.driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const audio = document.querySelector(arguments[0]);
            const finish = async () => {
              const bytes = new Uint8Array(await (await fetch(audio.src)).arrayBuffer());
              let text = "";
              for (let i = 0; i < bytes.length; i += 8192)
                text += String.fromCharCode(...bytes.subarray(i, i + 8192));
              done({duration: audio.duration, wav: btoa(text)});
            };
            if (audio.readyState >= 1 && isFinite(audio.duration)) finish();
            else audio.addEventListener("loadedmetadata", finish, {once: true});
        """, selector)
        return float(result["duration"]), base64.b64decode(result["wav"])

    def shot(self, name: str, width: int | None = None) -> Path:
        self.screens.mkdir(parents=True, exist_ok=True)
        if width is not None:
            size = self.driver.get_window_size()
            self.driver.set_window_size(width, size["height"])
        path = self.screens / f"{name}.png"
        self.driver.save_screenshot(str(path))
        return path

    def shot_of(self, selector: str, name: str) -> Path:
        """A screenshot of one element (small: for the README)."""
        self.screens.mkdir(parents=True, exist_ok=True)
        path = self.screens / f"{name}.png"
        self.css(selector)[0].screenshot(str(path))
        return path

    def collect_errors(self) -> None:
        for entry in self.driver.get_log("browser"):
            # Network entries are answers the test asked for (a refused upload: 415).
            if entry["level"] == "SEVERE" and entry.get("source") != "network":
                self.errors.append(entry["message"])

    def close(self) -> None:
        try:
            self.collect_errors()
        finally:
            self.driver.quit()


@pytest.fixture
def browser(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Browser]:
    """A headless chromium (``@pytest.mark.microphone``: with a fake microphone)."""
    if not (CHROMIUM.is_file() and CHROMEDRIVER.is_file()):
        _skip_or_fail("needs Debian's chromium and chromium-driver "
                      "(apt-get install -y chromium chromium-driver)")
    if shutil.which("chromedriver") is None and not CHROMEDRIVER.is_file():
        _skip_or_fail("chromedriver is not runnable")
    screens = Path(os.environ.get("OMNIVOICE_SCREENSHOTS") or tmp_path / "screens")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    chrome = Browser(screens, downloads,
                     fake_microphone=request.node.get_closest_marker("microphone") is not None)
    try:
        yield chrome
    finally:
        chrome.close()
    assert not chrome.errors, f"JavaScript errors in the page: {chrome.errors}"


class IngressProxy:
    """Serves ``http://127.0.0.1:<target>/`` under :data:`INGRESS_PREFIX` on its own port,
    adding ``X-Ingress-Path`` and ``X-Forwarded-*`` as Home Assistant's Supervisor does.
    Anything outside the prefix is 404, so an absolute URL in the page breaks the test."""

    def __init__(self, target_port: int, port: int) -> None:
        self.target_port = target_port
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(30)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{INGRESS_PREFIX}/"

    def _run(self) -> None:
        from aiohttp import ClientSession, web

        async def forward(request: web.Request) -> web.StreamResponse:
            tail = request.match_info["tail"]
            headers = {key: value for key, value in request.headers.items()
                       if key.lower() in ("content-type", "cookie", "origin", "accept",
                                          "sec-fetch-site", "authorization")}
            headers.update({"X-Ingress-Path": INGRESS_PREFIX, "X-Forwarded-Host": request.host,
                            "X-Forwarded-Proto": "http"})
            async with ClientSession() as session, session.request(
                    request.method, f"http://127.0.0.1:{self.target_port}/{tail}",
                    params=request.query, data=await request.read(), headers=headers,
                    allow_redirects=False) as answer:
                body = await answer.read()
                kept = {key: value for key, value in answer.headers.items()
                        if key.lower() in ("content-type", "set-cookie",
                                           "content-disposition", "content-security-policy")}
                return web.Response(status=answer.status, body=body, headers=kept)

        async def main() -> None:
            self._stop = asyncio.Event()
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_route("*", INGRESS_PREFIX + "/{tail:.*}", forward)
            runner = web.AppRunner(app)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", self.port).start()
            self._ready.set()
            await self._stop.wait()
            await runner.cleanup()

        self._loop.run_until_complete(main())
        self._loop.close()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)
