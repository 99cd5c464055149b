"""The studio page during a first start, in a real browser: it says what the server does
(the download with its progress bar), then opens the studio by itself once ready."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from first_start import start_first_start
from studio_browser import Browser

pytestmark = pytest.mark.slow

#: Slow enough that the page, opened a second or two in, sees the download.
RATE = 400_000


def test_the_page_shows_the_first_start_then_the_studio(tmp_path: Path,
                                                         browser: Browser) -> None:
    first = start_first_start(tmp_path, rate=RATE)
    try:
        deadline = time.monotonic() + 60
        while first.get("/health") is None and time.monotonic() < deadline:
            assert first.server.alive, first.server.log
            time.sleep(0.1)
        browser.driver.get(f"http://127.0.0.1:{first.web_port}/")
        browser.wait(lambda: browser.by_id("starting").is_displayed(), "the start-up panel")
        assert not browser.by_id("design").is_displayed()  # the studio waits for ready
        browser.wait(lambda: browser.by_id("starting-message").text == "Downloading the model",
                     "the download on the page")
        # Under it, each file's download with its number and its bar.
        work = browser.wait(
            lambda: (text := browser.by_id("starting-work").text).startswith(
                "Downloading ") and "(file " in text and text, "a file's download on the page")
        assert " of " in work
        bars = browser.css("#starting-work progress")
        assert bars and bars[0].get_attribute("max") == "100"
        browser.shot("first-start-downloading")
        browser.wait(lambda: len(browser.select_options("language")) > 0,
                     "the studio once the server is ready")
        assert not browser.by_id("starting").is_displayed()
        assert browser.by_id("design").is_displayed()
        assert "Ready" in first.server.log
    finally:
        first.stop()
