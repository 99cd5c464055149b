"""Voice anchors: the cache, canonical anchors shared by replicas whatever their precision
and steps, the serving-precision fallback (its log line and marking), the version-1 cache,
and anchors made ahead of time (``convert --anchors``). Real tiny engines throughout."""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path

import numpy as np
import pytest
from conftest import TINY_MODEL

from wyoming_omnivoice import DecodeOptions, Engine
from wyoming_omnivoice.anchors.cache import (
    ANCHOR_SEED,
    CANONICAL,
    AnchorCache,
    AnchorMode,
    anchor_text_for,
)
from wyoming_omnivoice.anchors.maker import serving_maker
from wyoming_omnivoice.anchors.plan import anchor_maker
from wyoming_omnivoice.model.memory_room import MemoryRoom
from wyoming_omnivoice.speech.request_builder import make_request_factory
from wyoming_omnivoice.voices.assets import VoiceAssets, anchor_cache, prepare_voices
from wyoming_omnivoice.voices.catalog import VoiceCatalog, VoicePreset
from wyoming_omnivoice.voices.config import parse_voices_document

INT8 = DecodeOptions(num_step=16)  # the CPU defaults
FP32 = DecodeOptions(num_step=8)  # an fp32 replica serving at other steps
ROOMY = MemoryRoom(1 << 40, "a test host with room")
NO_ROOM = MemoryRoom(1, "a test memory limit of 0.00 GB")


def voice(name: str = "v", instruct: str = "female, british accent") -> VoicePreset:
    (preset,) = parse_voices_document(
        {"voices": [{"name": name, "instruct": instruct, "languages": ["en"]}]}, source="t")
    return preset


@pytest.fixture(scope="module")
def int8_engine() -> Engine:
    return Engine.load(TINY_MODEL, device="cpu", precision="int8")


@pytest.fixture(scope="module")
def fp32_engine() -> Engine:
    return Engine.load(TINY_MODEL, device="cpu", precision="fp32")


def replica(engine: Engine, options: DecodeOptions, data_dir: Path, preset: VoicePreset,
            room: MemoryRoom = ROOMY, choice: str = "auto") -> VoiceAssets:
    """What a server's start-up does for one designed voice (its default)."""
    maker = anchor_maker(choice, engine, options, TINY_MODEL, data_dir, room=room)
    _served, assets = prepare_voices(engine, VoiceCatalog([preset]), preset.name, data_dir,
                                     options, batch_size=8, maker=maker)
    return assets


def ref_codes(assets: VoiceAssets, preset: VoicePreset) -> np.ndarray:
    request = make_request_factory(assets, True)(preset, "The kitchen lights are on.")
    assert request.ref_codes is not None
    return np.asarray(request.ref_codes)


def stored_kind(path: Path) -> str:
    with np.load(path, allow_pickle=False) as data:
        return str(data["kind"])


# --------------------------------------------------------------------------- the cache


def test_the_canonical_key_names_no_serving_precision_or_steps(tmp_path: Path) -> None:
    preset = voice()
    int8 = AnchorCache(tmp_path, "model", AnchorMode.serving("int8", 16, 2.0))
    fp32 = AnchorCache(tmp_path, "model", AnchorMode.serving("fp32", 8, 2.0))
    assert int8.key(preset) == fp32.key(preset)
    assert int8.path_for(preset) == fp32.path_for(preset)
    # Serving anchors are keyed with how they were decoded, apart from canonical ones.
    assert int8.key(preset, "serving") != fp32.key(preset, "serving")
    assert int8.key(preset, "serving") != int8.key(preset)
    # The voice's content and the model still decide the key.
    assert int8.key(voice(instruct="male")) != int8.key(preset)
    assert AnchorCache(tmp_path, "other", int8.serving).key(preset) != int8.key(preset)


def test_anchor_cache_round_trip(fp32_engine: Engine, tmp_path: Path) -> None:
    preset = voice("evil..name")
    maker = serving_maker(fp32_engine, FP32)
    cache = anchor_cache(fp32_engine, tmp_path, maker, FP32)
    anchor = cache.get_or_create(preset, maker.codes_on(fp32_engine))
    assert anchor.kind == "canonical" and anchor.made_with == CANONICAL.label
    assert anchor.codes.shape[0] == 8 and anchor.codes.dtype == np.int64
    assert anchor.text == anchor_text_for(preset)
    files = list((tmp_path / "anchors").iterdir())
    assert [f.name for f in files] == [cache.path_for(preset).name]
    assert "evil" not in files[0].name and stored_kind(files[0]) == "canonical"
    # Canonical means 32 steps whatever the server serves with.
    alone = fp32_engine.generate_codes(anchor.text, language="en", instruct=preset.instruct,
                                       options=DecodeOptions(num_step=32), seed=ANCHOR_SEED)
    np.testing.assert_array_equal(alone, anchor.codes)
    loaded = cache.load(preset)
    assert loaded is not None and loaded.kind == "canonical"
    np.testing.assert_array_equal(loaded.codes, anchor.codes)
    assert not [f for f in (tmp_path / "anchors").iterdir() if f.suffix == ".tmp"]


def test_corrupt_or_mismatched_anchor_is_rebuilt(fp32_engine: Engine, tmp_path: Path) -> None:
    preset = voice()
    maker = serving_maker(fp32_engine, FP32)
    cache = anchor_cache(fp32_engine, tmp_path, maker, FP32)
    anchor = cache.get_or_create(preset, maker.codes_on(fp32_engine))
    path = cache.path_for(preset)
    path.write_bytes(path.read_bytes()[:20])  # truncated
    assert cache.load(preset) is None
    rebuilt = cache.get_or_create(preset, maker.codes_on(fp32_engine))
    np.testing.assert_array_equal(rebuilt.codes, anchor.codes)
    # A file with the right name but other content (e.g. copied over) is not trusted.
    np.savez(path, codes=np.zeros((3, 2), dtype=np.int64), text=np.array("x"),
             key=np.array(cache.key(preset)))
    assert cache.load(preset) is None


def test_anchors_made_in_batches_equal_single_ones(fp32_engine: Engine, tmp_path: Path) -> None:
    presets = parse_voices_document(
        {"voices": [
            {"name": "a", "instruct": "female, british accent", "languages": ["en"]},
            {"name": "b", "instruct": "male, elderly", "languages": ["en"], "speed": 0.9},
            {"name": "c", "instruct": "女, 四川话", "languages": ["zh"]},
        ]},
        source="t.yaml",
    )
    maker = serving_maker(fp32_engine, FP32)
    make = maker.codes_on(fp32_engine)
    batched = anchor_cache(fp32_engine, tmp_path / "batched", maker, FP32).ensure_all(
        presets, make, batch_size=2)
    single = anchor_cache(fp32_engine, tmp_path / "single", maker, FP32)
    for preset in presets:
        alone = single.get_or_create(preset, make)
        np.testing.assert_array_equal(batched[preset.name].codes, alone.codes)
    again = anchor_cache(fp32_engine, tmp_path / "batched", maker, FP32).ensure_all(presets,
                                                                                    make)
    assert sorted(again) == ["a", "b", "c"]


def test_voices_of_the_same_content_share_one_anchor_built_once(
        fp32_engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """pt-female and pt-BR-female differ only in how their text is read."""
    from wyoming_omnivoice.voices.config import build_catalog

    catalog = build_catalog()
    presets = [p for p in (catalog.get("pt-female"), catalog.get("pt-BR-female"))
               if p is not None]
    assert len(presets) == 2
    maker = serving_maker(fp32_engine, FP32)
    with caplog.at_level(logging.INFO, logger="wyoming_omnivoice.anchors.cache"):
        anchors = anchor_cache(fp32_engine, tmp_path, maker, FP32).ensure_all(
            presets, maker.codes_on(fp32_engine))
    assert sorted(anchors) == ["pt-BR-female", "pt-female"]
    np.testing.assert_array_equal(anchors["pt-female"].codes, anchors["pt-BR-female"].codes)
    generated = [r.getMessage() for r in caplog.records if "Generating" in r.getMessage()]
    assert generated == ["Generating the anchor for voice 'pt-female'"]


# --------------------------------------------------------------------------- replicas


def test_int8_and_fp32_replicas_of_one_data_dir_speak_with_the_same_anchor(
        int8_engine: Engine, fp32_engine: Engine, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    preset = voice()
    shared = tmp_path / "shared"
    first = replica(int8_engine, INT8, shared, preset)  # an int8 CPU replica with room
    anchor = first.anchors["v"]
    assert anchor.kind == "canonical"
    (path,) = (shared / "anchors").glob("*.npz")
    assert stored_kind(path) == "canonical"
    with caplog.at_level(logging.INFO):
        second = replica(fp32_engine, FP32, shared, preset)  # fp32 at 8 steps: loads it
    assert "Generating the anchor" not in caplog.text
    np.testing.assert_array_equal(second.anchors["v"].codes, anchor.codes)
    np.testing.assert_array_equal(ref_codes(first, preset), ref_codes(second, preset))
    # The mode decides the anchor, not the replica: an fp32 replica alone makes the same one.
    alone = replica(fp32_engine, FP32, tmp_path / "alone", preset)
    np.testing.assert_array_equal(alone.anchors["v"].codes, anchor.codes)
    assert list((shared / "anchors").glob("*.npz")) == [path]


def test_an_exported_voice_file_carries_the_anchor_to_another_replica(
        int8_engine: Engine, fp32_engine: Engine, tmp_path: Path) -> None:
    from wyoming_omnivoice.anchors.pinned import load_pinned_anchor, save_pinned_anchor
    from wyoming_omnivoice.voices.transfer import export_voice, parse_voice_file

    preset = voice()
    made = replica(int8_engine, INT8, tmp_path / "a", preset).anchors["v"]
    document = json.loads(json.dumps(export_voice(preset, made, None)))
    imported = parse_voice_file(document, max_audio_bytes=1 << 20)
    assert imported.anchor is not None
    save_pinned_anchor(tmp_path / "b" / "v.npz", imported.anchor)
    np.testing.assert_array_equal(load_pinned_anchor(tmp_path / "b" / "v.npz").codes,
                                  made.codes)


# --------------------------------------------------------------------------- fallback


def test_without_room_the_anchor_is_a_marked_serving_one_until_a_canonical_one_arrives(
        int8_engine: Engine, fp32_engine: Engine, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    preset = voice()
    shared = tmp_path / "shared"
    with caplog.at_level(logging.INFO):
        small = replica(int8_engine, INT8, shared, preset, room=NO_ROOM)
    anchor = small.anchors["v"]
    assert anchor.kind == "serving" and anchor.made_with == "int8, 16 steps"
    (line,) = [r.getMessage() for r in caplog.records if "serving-precision" in r.getMessage()]
    assert r"no room for the fp32 backbone" in line and "a test memory limit" in line
    assert "int8, 16 steps" in line and "--anchors" in line
    (path,) = (shared / "anchors").glob("*.npz")
    assert stored_kind(path) == "serving"
    cache = anchor_cache(int8_engine, shared, serving_maker(int8_engine, INT8), INT8)
    assert path == cache.path_for(preset, "serving") != cache.path_for(preset)
    # A restart without room keeps it (the same person), never taking it for canonical.
    again = replica(int8_engine, INT8, shared, preset, room=NO_ROOM)
    assert again.anchors["v"].kind == "serving"
    np.testing.assert_array_equal(again.anchors["v"].codes, anchor.codes)
    # An fp32 replica of the same data dir makes the canonical one; the running small
    # replica adopts it, and its next start loads it.
    big = replica(fp32_engine, FP32, shared, preset)
    assert big.anchors["v"].kind == "canonical"
    assert small.builder is not None
    assert small.builder.adopt_canonical([preset], force=True) == 1
    assert small.anchors["v"].kind == "canonical"
    np.testing.assert_array_equal(ref_codes(small, preset), ref_codes(big, preset))
    restarted = replica(int8_engine, INT8, shared, preset, room=NO_ROOM)
    np.testing.assert_array_equal(restarted.anchors["v"].codes, big.anchors["v"].codes)


def test_never_makes_serving_anchors_and_says_why(int8_engine: Engine, tmp_path: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assets = replica(int8_engine, INT8, tmp_path, voice(), choice="never")
    assert assets.anchors["v"].kind == "serving"
    assert "--canonical-anchors never" in caplog.text


def test_an_fp32_server_makes_canonical_anchors_itself(fp32_engine: Engine,
                                                       tmp_path: Path) -> None:
    maker = anchor_maker("auto", fp32_engine, FP32, TINY_MODEL, tmp_path, room=NO_ROOM)
    assert maker.mode == CANONICAL  # no second engine, so no memory question
    assert maker.max_batch == 1  # on a CPU a request never waits behind a batch of anchors


def test_a_cpu_server_makes_canonical_anchors_one_at_a_time(int8_engine: Engine,
                                                           tmp_path: Path) -> None:
    """A canonical decode costs several serving ones: the background goes one anchor at a
    time so a request never waits behind a long batch."""
    maker = anchor_maker("auto", int8_engine, INT8, TINY_MODEL, tmp_path, room=ROOMY)
    assert maker.mode == CANONICAL and maker.max_batch == 1


@pytest.mark.parametrize(("choice", "room"), [("never", ROOMY), ("auto", NO_ROOM)])
def test_a_cpu_server_makes_serving_anchors_one_at_a_time(int8_engine: Engine, tmp_path: Path,
                                                          choice: str, room: MemoryRoom) -> None:
    """At int8 too: a batch of 8 anchors kept a request that arrived meanwhile waiting for
    all eight (139 s seen under load)."""
    maker = anchor_maker(choice, int8_engine, INT8, TINY_MODEL, tmp_path, room=room)
    assert maker.mode != CANONICAL and maker.max_batch == 1


# --------------------------------------------------------------------------- version 1


def write_version_1(directory: Path, engine: Engine, preset: VoicePreset, num_step: int
                    ) -> tuple[Path, np.ndarray]:
    """An anchor file as the version-1 cache wrote it (keyed with the serving steps)."""
    material = {"version": 1, "voice": preset.content_key(), "text": anchor_text_for(preset),
                "seed": ANCHOR_SEED, "model": engine.fingerprint,
                "settings": {"num_step": num_step, "guidance_scale": 2.0}}
    key = hashlib.sha256(json.dumps(material, sort_keys=True, ensure_ascii=False)
                         .encode("utf-8")).hexdigest()
    codes = np.random.default_rng(1).integers(0, 1024, size=(8, 30), dtype=np.int64)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{key[:40]}.npz"
    np.savez(path, codes=codes, text=np.array(anchor_text_for(preset)), key=np.array(key))
    return path, codes


@pytest.mark.parametrize(("precision", "steps", "kind"),
                         [("int8", 16, "serving"), ("fp32", 32, "canonical")])
def test_a_version_1_cache_is_moved_to_the_new_keys_with_a_log_line(
        precision: str, steps: int, kind: str, int8_engine: Engine, fp32_engine: Engine,
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    engine = int8_engine if precision == "int8" else fp32_engine
    options = DecodeOptions(num_step=steps)
    preset = voice()
    old, codes = write_version_1(tmp_path / "anchors", engine, preset, steps)
    with caplog.at_level(logging.INFO):
        assets = replica(engine, options, tmp_path, preset)
    anchor = assets.anchors["v"]
    assert anchor.kind == kind
    np.testing.assert_array_equal(anchor.codes, codes)  # the person heard before
    assert "Generating the anchor" not in caplog.text
    assert "moving the anchor cache of an older version" in caplog.text
    assert not old.exists()
    (moved,) = (tmp_path / "anchors").glob("*.npz")
    assert stored_kind(moved) == kind


# --------------------------------------------------------------------------- ahead of time


def test_convert_makes_canonical_anchors_that_a_small_replica_loads(
        int8_engine: Engine, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from wyoming_omnivoice.convert import main

    voices_file = tmp_path / "voices.yaml"
    voices_file.write_text("voices:\n  - name: v\n    instruct: female, british accent\n"
                           "    languages: [en]\n")
    made = tmp_path / "big-machine"
    assert main([str(TINY_MODEL), "--anchors", "v", "--data-dir", str(made),
                 "--voices-file", str(voices_file)]) == 0
    small = tmp_path / "small-host"
    (small / "anchors").mkdir(parents=True)
    for path in (made / "anchors").glob("*.npz"):  # the operator copies the folder
        (small / "anchors" / path.name).write_bytes(path.read_bytes())
    with caplog.at_level(logging.INFO):
        assets = replica(int8_engine, INT8, small, voice(), room=NO_ROOM)
    assert assets.anchors["v"].kind == "canonical"
    assert "Generating the anchor" not in caplog.text
    assert "serving-precision" not in caplog.text


def test_convert_refuses_an_unknown_language(tmp_path: Path) -> None:
    from wyoming_omnivoice.convert import main

    with pytest.raises(SystemExit, match=r"--anchors nonsense-xx"):
        main([str(TINY_MODEL), "--anchors", "nonsense-xx", "--data-dir", str(tmp_path)])
