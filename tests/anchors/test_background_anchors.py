"""Ready sooner: a first start is ready once the default voice's anchor exists; the other
preloaded voices' anchors are built in the background with the progress line, and a
request for one of them waits for that one anchor, not for all of them."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from conftest import ServerProcess, synthesize, types_of

pytestmark = pytest.mark.slow

LAST = "en-whisper"  # the last English preset: the background reaches it last


def wait_for(server: ServerProcess, pattern: str) -> re.Match[str]:
    deadline = time.monotonic() + 300
    while (found := re.search(pattern, server.log)) is None:
        assert server.alive and time.monotonic() < deadline, server.log
        time.sleep(0.1)
    return found


async def test_ready_before_the_other_anchors_and_a_request_builds_only_its_own(
        server_factory, tmp_path: Path) -> None:
    # One anchor per batch: 14 background batches, so the request below comes long
    # before the background reaches the last voice.
    server = server_factory("--max-batch-size", "1", data_dir=tmp_path / "data")
    ready = server.log
    assert "Generating the anchor for voice 'en-female-young'" in ready
    assert "Voice anchors: building 14 in the background" in ready
    assert not re.search(r"Voice anchors: 14 of 14 built", ready)
    events = await synthesize(server.uri, "Just this voice, please.", voice=LAST)
    assert types_of(events)[-1] == "audio-stop"
    log = server.log
    own = log.index(f"Building the anchor of voice {LAST!r} on its first use")
    finished = wait_for(server, r"Voice anchors: 14 of 14 built").start()
    assert own < finished  # built for the request, before the background was done
    # Every anchor once: the background skipped the voice the request built.
    assert server.log.count(f"Generating the anchor for voice {LAST!r}") == 1
    assert len(list((tmp_path / "data" / "anchors").glob("*.npz"))) == 15
    progress = re.findall(r"Voice anchors: (\d+) of 14 built", server.log)
    assert progress[-1] == "14" and len(progress) >= 2
