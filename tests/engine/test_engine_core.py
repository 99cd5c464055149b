"""Engine behaviour on the tiny fixture model: loading, contracts, decode invariants."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import FIXTURES
from onnx import TensorProto, helper

from wyoming_omnivoice import DecodeOptions, Engine, ModelError, SynthesisRequest

FIXTURES = FIXTURES / "models"
TINY = FIXTURES / "tiny"
DETERMINISTIC = DecodeOptions(position_temperature=0.0, class_temperature=0.0)


@pytest.fixture(scope="module")
def engine(tiny_model: Path) -> Engine:
    """Upstream's canvases (no minimum; ``test_min_canvas.py`` covers the default's)."""
    return Engine.load(tiny_model, device="cpu", min_canvas_frames=0)


def copy_model(tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(TINY, target)
    return target


def test_engine_reports_device_and_rate(engine: Engine) -> None:
    assert engine.device == "cpu"
    assert engine.sample_rate == 24000
    assert len(engine.fingerprint) == 16


def test_causal_backbone_is_refused(tmp_path: Path) -> None:
    model = copy_model(tmp_path)
    for path in (FIXTURES / "causal_backbone").iterdir():
        shutil.copy(path, model / path.name)
    with pytest.raises(ModelError, match="causal"):
        Engine.load(model, device="cpu")


def test_missing_graph_names_the_file(tmp_path: Path) -> None:
    model = copy_model(tmp_path)
    (model / "audio_heads_decoder.onnx").unlink()
    with pytest.raises(ModelError, match=r"audio_heads_decoder\.onnx"):
        Engine.load(model, device="cpu")


def test_llm_decoder_in_place_of_backbone_gets_a_hint(tmp_path: Path) -> None:
    model = copy_model(tmp_path)
    (model / "llm_backbone_fp32.onnx").rename(model / "llm_decoder.onnx")
    with pytest.raises(ModelError, match="causal decoder"):
        Engine.load(model, device="cpu")


def test_truncated_graph_is_reported(tmp_path: Path) -> None:
    model = copy_model(tmp_path)
    heads = model / "audio_tokenizer" / "higgs_decoder.onnx"
    heads.write_bytes(heads.read_bytes()[:1000])
    with pytest.raises(ModelError, match=r"higgs_decoder\.onnx"):
        Engine.load(model, device="cpu")


def test_backbone_with_wrong_inputs_is_refused(tmp_path: Path) -> None:
    model = copy_model(tmp_path)
    node = helper.make_node("Identity", ["inputs_embeds"], ["hidden_states"])
    graph = helper.make_graph(
        [node], "wrong",
        [helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, ["B", "S", 64]),
         helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["B", "S"])],
        [helper.make_tensor_value_info("hidden_states", TensorProto.FLOAT, ["B", "S", 64])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(model / "llm_backbone_fp32.onnx"))
    with pytest.raises(ModelError, match="attention_mask"):
        Engine.load(model, device="cpu")


def test_unknown_device_is_rejected() -> None:
    with pytest.raises(ValueError, match="device"):
        Engine.load(TINY, device="tpu")


def test_codes_are_valid_and_complete(engine: Engine) -> None:
    codes = engine.generate_codes("hello world", language="en", options=DETERMINISTIC)
    assert codes.shape == (8, 35)  # upstream's duration estimate for "hello world"
    assert codes.dtype == np.int64
    assert codes.min() >= 0 and codes.max() < 1024


def test_fixed_frame_count(engine: Engine) -> None:
    codes = engine.generate_codes("hello world", num_frames=12, options=DETERMINISTIC)
    assert codes.shape == (8, 12)


def test_seeded_default_mode_is_deterministic_per_seed(engine: Engine) -> None:
    text = "The kitchen lights are now on."
    first = engine.generate_codes(text, seed=7)
    again = engine.generate_codes(text, seed=7)
    other = engine.generate_codes(text, seed=8)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    assert first.min() >= 0 and first.max() < 1024


def test_class_sampling_gives_valid_seeded_codes(engine: Engine) -> None:
    options = DecodeOptions(class_temperature=1.0)
    first = engine.generate_codes("hello there", options=options, seed=3)
    again = engine.generate_codes("hello there", options=options, seed=3)
    np.testing.assert_array_equal(first, again)
    assert first.min() >= 0 and first.max() < 1024
    greedy = engine.generate_codes("hello there", options=DecodeOptions(), seed=3)
    assert not np.array_equal(first, greedy)


BATCH_REQUESTS = [
    SynthesisRequest(text="hello world", language="en"),
    SynthesisRequest(text="Turn on the kitchen lights, please.", instruct="female, low pitch"),
    SynthesisRequest(text="你好，世界！", language="zh"),
    SynthesisRequest(text="short", num_frames=5),
]


def seeded(requests: list[SynthesisRequest], seed: int) -> list[SynthesisRequest]:
    """Request ``i`` seeded with ``seed + i``."""
    return [replace(request, seed=seed + i) for i, request in enumerate(requests)]


def as_kwargs(request: SynthesisRequest) -> dict[str, object]:
    """The keyword arguments of ``generate_codes`` that ``request`` sets."""
    return {k: v for k, v in request.__dict__.items() if v is not None and k != "ref_rms"}


@pytest.mark.slow
@pytest.mark.parametrize("options", [DETERMINISTIC, DecodeOptions()], ids=["greedy", "gumbel"])
def test_batch_equals_singles(engine: Engine, options: DecodeOptions) -> None:
    batch = engine.generate_codes_batch(seeded(BATCH_REQUESTS, 11), options=options)
    for index, request in enumerate(BATCH_REQUESTS):
        single = engine.generate_codes(**as_kwargs(request), options=options, seed=11 + index)
        np.testing.assert_array_equal(batch[index], single)


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["rows", "split"])
def test_every_layout_equals_packed_layout(layout: str, tiny_model: Path) -> None:
    packed_engine = Engine.load(tiny_model, device="cpu", layout="packed")
    other = Engine.load(tiny_model, device="cpu", layout=layout)
    for request in BATCH_REQUESTS:
        packed = packed_engine.generate_codes(**as_kwargs(request), options=DETERMINISTIC)
        got = other.generate_codes(**as_kwargs(request), options=DETERMINISTIC)
        np.testing.assert_array_equal(packed, got)
    for options in (DETERMINISTIC, DecodeOptions()):
        batch_other = other.generate_codes_batch(seeded(BATCH_REQUESTS, 3), options=options)
        batch_packed = packed_engine.generate_codes_batch(seeded(BATCH_REQUESTS, 3),
                                                          options=options)
        assert other.last_stats.layout == layout
        for a, b in zip(batch_other, batch_packed, strict=True):
            np.testing.assert_array_equal(a, b)


def test_fp16_io_graphs_agree_closely(fp16io_model: Path) -> None:
    """Embeddings and heads graphs that take and give float16 (like the published root
    graphs) give the same argmax tokens for nearly every cell of a forward pass. Whole
    decodes of a random tiny model then diverge (one flipped early token changes the rest),
    so the per-forward agreement is the measure; the full decode must still be complete and
    valid."""
    fp16 = Engine.load(fp16io_model, device="cpu")
    assert fp16.graphs.embeddings.outputs["inputs_embeds"].dtype == np.float16
    fp32 = Engine.load(TINY, device="cpu")
    one_forward = DecodeOptions(num_step=1, position_temperature=0.0)
    agreements = []
    for text in ("Hello world, the temperature outside is mild today.",
                 "Turn on the kitchen lights, please.", "你好，世界！"):
        a = fp16.generate_codes(text, options=one_forward)
        b = fp32.generate_codes(text, options=one_forward)
        assert a.shape == b.shape
        agreements.append((a == b).mean())
        full = fp16.generate_codes(text, options=DETERMINISTIC)
        assert full.shape == a.shape and full.min() >= 0 and full.max() < 1024
    assert min(agreements) > 0.98


def test_bad_requests_raise_value_errors(engine: Engine) -> None:
    with pytest.raises(ValueError, match="Unsupported instruct"):
        engine.generate_codes("hi", instruct="femail")
    with pytest.raises(ValueError, match="ref_codes"):
        engine.generate_codes("hi", ref_codes=np.zeros((7, 4), dtype=np.int64), ref_text="a")
    with pytest.raises(ValueError, match=r"0\.\.1023"):
        engine.generate_codes("hi", ref_codes=np.full((8, 4), 1024), ref_text="a")
    with pytest.raises(ValueError, match="transcript"):
        engine.generate_codes("hi", ref_codes=np.zeros((8, 4), dtype=np.int64))
    with pytest.raises(ValueError, match="num_frames"):
        engine.generate_codes("hi", num_frames=0)
    with pytest.raises(ValueError, match="speed"):
        engine.generate_codes("hi", speed=-1.0)
    with pytest.raises(TypeError, match="SynthesisRequest"):
        engine.generate_codes_batch([{"text": "hi"}])  # type: ignore[list-item]


def test_vocoder_refuses_mask_cells(engine: Engine) -> None:
    codes = np.zeros((8, 4), dtype=np.int64)
    codes[3, 2] = 1024
    with pytest.raises(ValueError, match="MASK"):
        engine.decode_audio(codes)


def test_vocoder_length_is_960_samples_per_frame(engine: Engine) -> None:
    codes = engine.generate_codes("hello world", options=DETERMINISTIC)
    audio = engine.decode_audio(codes)
    assert audio.dtype == np.float32
    assert audio.shape == (960 * codes.shape[1],)


def test_synthesize_post_processes_like_upstream(engine: Engine) -> None:
    audio = engine.synthesize("hello world", options=DETERMINISTIC)
    assert audio.dtype == np.float32 and audio.ndim == 1
    # 100 ms of zero padding on both sides, peak-normalised to 0.5 when not cloning.
    assert not np.any(audio[:2400]) and not np.any(audio[-2400:])
    assert 0.0 < np.abs(audio).max() <= 0.5 + 1e-6


def test_reference_rms_scales_output(engine: Engine) -> None:
    ref = engine.generate_codes("reference voice here.", seed=1)
    quiet = engine.synthesize("hello world", ref_codes=ref, ref_text="reference voice here.",
                              ref_rms=0.02, options=DETERMINISTIC)
    loud = engine.synthesize("hello world", ref_codes=ref, ref_text="reference voice here.",
                             ref_rms=0.2, options=DETERMINISTIC)
    assert np.abs(quiet).max() < np.abs(loud).max()


def test_synthesize_batch_matches_single_synthesis(engine: Engine) -> None:
    requests = [SynthesisRequest(text="hello world", seed=1),
                SynthesisRequest(text="Good morning, everyone.", instruct="male", seed=2)]
    batch = engine.synthesize_batch(requests)
    for request, audio in zip(requests, batch, strict=True):
        single = engine.synthesize(request.text, instruct=request.instruct, seed=request.seed)
        np.testing.assert_array_equal(audio, single)


def test_long_text_is_chunked_with_chunk_zero_as_reference(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    sentence = "This sentence is long enough to be spoken for a few seconds at least. "
    text = sentence * 12  # well over 30 s estimated
    with caplog.at_level("DEBUG", logger="wyoming_omnivoice.engine.core"):
        audio = engine.synthesize(text, options=DecodeOptions(num_step=4), seed=5)
    assert any("split into" in r.getMessage() for r in caplog.records)
    assert audio.dtype == np.float32
    # Each chunk is decoded separately and joined with 100 ms silent gaps.
    assert len(audio) / engine.sample_rate > 20
