"""Scoring graphs kept on disk: a restart loads them without importing onnx, a changed
heads file gets its own, a damaged one is built again; the decode is unchanged. (And the
other module the decoder imports at a restart keeps onnx out too: the prefix cache.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import TINY_MODEL

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.engine.graphs.scoring_cache import SCORING_DIR

OPTIONS = DecodeOptions(num_step=4)
RESTART = ("import sys\nfrom wyoming_omnivoice import Engine\n"
           "Engine.load(sys.argv[1], device='cpu', precision='int8')\n"
           "print('onnx' in sys.modules)\n")


@pytest.fixture
def model(tmp_path: Path) -> Path:
    target = tmp_path / "tiny"
    shutil.copytree(TINY_MODEL, target, ignore=shutil.ignore_patterns("prepared"))
    return target


def kept(model: Path) -> list[Path]:
    return sorted((model / "prepared" / SCORING_DIR).glob("*.onnx"))


def test_a_restart_loads_the_kept_graph_without_onnx(model: Path) -> None:
    first = Engine.load(model, device="cpu", precision="int8")
    audio = first.synthesize("The lights are on.", options=OPTIONS, seed=2)
    (graph,) = kept(model)
    assert graph.name.startswith("greedy-guided-")
    imported = subprocess.run([sys.executable, "-c", RESTART, str(model)], check=True,
                              capture_output=True, text=True).stdout.split()[-1]
    assert imported == "False"
    again = Engine.load(model, device="cpu", precision="int8")
    np.testing.assert_array_equal(again.synthesize("The lights are on.", options=OPTIONS,
                                                   seed=2), audio)
    assert kept(model) == [graph]  # loaded, not written again


def test_variants_are_kept_each_under_its_name(model: Path) -> None:
    engine = Engine.load(model, device="cpu", precision="int8")
    engine.synthesize("Hello.", options=DecodeOptions(num_step=2, guidance_scale=0.0,
                                                      class_temperature=1.0), seed=1)
    names = [path.name.rsplit("-", 1)[0] for path in kept(model)]
    assert names == ["greedy-guided", "topk-unguided"]


def test_a_changed_heads_file_replaces_its_graph(model: Path) -> None:
    Engine.load(model, device="cpu", precision="int8")
    (old,) = kept(model)
    heads = model / "audio_heads_decoder.onnx"
    stat = heads.stat()
    os.utime(heads, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    Engine.load(model, device="cpu", precision="int8")
    (new,) = kept(model)
    assert new != old and not old.exists()


def test_a_damaged_kept_graph_is_built_again(model: Path,
                                             caplog: pytest.LogCaptureFixture) -> None:
    Engine.load(model, device="cpu", precision="int8")
    (graph,) = kept(model)
    graph.write_bytes(graph.read_bytes()[:1000])
    engine = Engine.load(model, device="cpu", precision="int8")
    assert "does not load" in caplog.text
    assert graph.stat().st_size > 1000
    assert engine.synthesize("Hello.", options=OPTIONS, seed=1).size > 0


def test_the_prefix_cache_names_its_inputs_as_its_rewrite_does() -> None:
    """engine/forward/prefix_cache.py keeps its own copy of the names (so that importing it does
    not import onnx): the same as the rewrite's."""
    from wyoming_omnivoice.engine.forward import prefix_cache
    from wyoming_omnivoice.engine.graphs import prefix_cache_graph
    for name in ("POSITION_IDS", "PAST_KEY", "PAST_VALUE", "PRESENT_KEY", "PRESENT_VALUE"):
        assert getattr(prefix_cache, name) == getattr(prefix_cache_graph, name), name
