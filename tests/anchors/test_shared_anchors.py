"""The same person on every node, with real server processes: an int8 replica and an fp32
replica (other steps) of one data dir speak with one canonical anchor, made once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import synthesize, types_of

pytestmark = pytest.mark.slow

DEFAULT = "en-female-young"


def kinds(folder: Path) -> list[str]:
    found = []
    for path in sorted(folder.glob("*.npz")):
        with np.load(path, allow_pickle=False) as data:
            found.append(str(data["kind"]))
    return found


async def test_an_int8_and_an_fp32_replica_share_the_canonical_anchor(
        server_factory, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    small = server_factory("--precision", "int8", "--preload-languages", "none",
                           data_dir=shared)
    assert "loading the fp32 backbone for canonical anchors" in small.log
    assert f"Generating the anchor for voice {DEFAULT!r}" in small.log
    assert "the fp32 engine of canonical anchors is released" in small.log
    assert kinds(shared / "anchors") == ["canonical"]
    made = {path.name: path.read_bytes() for path in (shared / "anchors").glob("*.npz")}
    big = server_factory("--precision", "fp32", "--num-steps", "8", "--preload-languages",
                         "none", data_dir=shared)
    assert "Generating the anchor" not in big.log  # loaded, not made again
    assert "canonical anchors" not in big.log  # no second engine on an fp32 server
    assert {path.name: path.read_bytes()
            for path in (shared / "anchors").glob("*.npz")} == made
    for server in (small, big):
        events = await synthesize(server.uri, "The lights are on.", voice=DEFAULT)
        assert types_of(events)[-1] == "audio-stop"
