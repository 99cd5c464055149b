"""Engine flags of the server: precision and steps default per device, TF32 opt-in."""

from __future__ import annotations

import pytest
from conftest import describe, synthesize

from wyoming_omnivoice.app.config import num_steps_problem, parse_config
from wyoming_omnivoice.app.flags import build_parser
from wyoming_omnivoice.engine.runtime.precision import (
    default_num_steps,
    default_precision,
    resolve_precision,
)


def test_defaults_per_device() -> None:
    config = parse_config([])
    assert config.precision == "auto" and config.num_steps is None and not config.allow_tf32
    assert resolve_precision(config.precision, "cpu") == "int8"
    assert resolve_precision(config.precision, "cuda") == "fp32"
    assert config.num_steps_on("cpu") == 16
    assert config.num_steps_on("cuda") == 32
    assert (default_precision("cpu"), default_num_steps("cpu")) == ("int8", 16)
    assert (default_precision("cuda"), default_num_steps("cuda")) == ("fp32", 32)


def test_the_exact_mode_is_kept_on_every_device() -> None:
    config = parse_config(["--precision", "fp32", "--num-steps", "32", "--allow-tf32"])
    for device in ("cpu", "cuda"):
        assert resolve_precision(config.precision, device) == "fp32"
        assert config.num_steps_on(device) == 32
    assert config.allow_tf32 is True


@pytest.mark.parametrize("steps, ok", [(0, False), (1, True), (128, True), (129, False)])
def test_num_steps_range(steps: int, ok: bool) -> None:
    assert (num_steps_problem(parse_config(["--num-steps", str(steps)]).num_steps) is None) is ok


def test_unknown_precision_is_refused() -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--precision", "int4"])
    with pytest.raises(ValueError, match="precision"):
        resolve_precision("int4", "cpu")


@pytest.mark.slow
async def test_a_cpu_server_runs_the_cpu_defaults(server_factory) -> None:
    server = server_factory()
    assert (await describe(server.uri)).tts
    assert "backbone int8" in server.log
    assert "Diffusion steps: 16 (the CPU default" in server.log


@pytest.mark.slow
async def test_the_exact_mode_on_a_cpu_server(server_factory) -> None:
    server = server_factory("--precision", "fp32", "--num-steps", "32")
    assert (await describe(server.uri)).tts
    assert "backbone fp32" in server.log
    assert "Diffusion steps: 32 (--num-steps)" in server.log


@pytest.mark.slow
async def test_a_server_with_the_prefix_cache_speaks(server_factory) -> None:
    server = server_factory("--prefix-cache", "4")
    events = await synthesize(server.uri, "The living room lights are now turned on.")
    assert [e.type for e in events][-1] == "audio-stop"
    assert sum(len(e.payload or b"") for e in events if e.type == "audio-chunk") > 0
    assert "Prefix cache: the int8 backbone's" in server.log


@pytest.mark.slow
async def test_a_published_backbone_refuses_the_prefix_cache(server_factory) -> None:
    server = server_factory("--precision", "published", "--prefix-cache", "2", wait=False)
    assert server.wait_exit() == 2
    assert "--precision int8 or fp32" in server.log
