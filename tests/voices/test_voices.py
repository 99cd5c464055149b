"""Voice presets: the built-in set, user files, validation messages and Info building."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from wyoming_omnivoice.engine.prompt.instruct import normalize_instruct
from wyoming_omnivoice.voices.catalog import VoiceCatalog
from wyoming_omnivoice.voices.config import (
    VoiceConfigError,
    build_catalog,
    load_builtin_voices,
    load_voices_file,
    parse_voices_document,
)
from wyoming_omnivoice.wyoming_protocol.info import build_info

REPO_CONFIG = Path(__file__).resolve().parents[2] / "config" / "voices.yaml"


def parse(entries: list[dict], source: str = "test.yaml", base_dir: Path | None = None):
    return parse_voices_document({"voices": entries}, source=source, base_dir=base_dir)


def test_builtin_presets_cover_the_required_set() -> None:
    presets = load_builtin_voices()
    assert len(presets) >= 12
    instructs = [normalize_instruct(p.instruct, "") or "" for p in presets]
    joined = " | ".join(instructs)
    for word in ("male", "female", "young adult", "middle-aged", "elderly", "child",
                 "british accent", "american accent", "australian accent", "indian accent",
                 "whisper"):
        assert word in joined, word
    assert any("话" in (p.instruct or "") for p in presets)  # Chinese dialect voices
    assert sum("话" in (p.instruct or "") for p in presets) >= 2
    assert all(p.uses_anchor for p in presets)  # anchored by default
    assert all(p.description and p.languages for p in presets)
    assert len({p.name for p in presets}) == len(presets)


def test_builtin_file_is_the_repository_config() -> None:
    document = yaml.safe_load(REPO_CONFIG.read_text(encoding="utf-8"))
    assert [e["name"] for e in document["voices"]] == [p.name for p in load_builtin_voices()]


def test_user_file_adds_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "voices:\n"
        "  - name: en-female-young\n    instruct: female, elderly\n    languages: [en]\n"
        "    anchor: false\n"
        "  - name: bob\n    description: Bob\n    instruct: male\n    languages: English, German\n"
        "    speed: 1.2\n    normalize_text: false\n",
        encoding="utf-8",
    )
    catalog = build_catalog(path)
    written = [p.name for p in load_builtin_voices() if not p.per_language]
    assert catalog.names[: len(written) + 1] == [*written, "bob"]  # then per-language voices
    assert "de-female" in catalog and "female" not in catalog
    replaced = catalog.get("en-female-young")
    assert replaced is not None and replaced.instruct == "female, elderly"
    assert not replaced.uses_anchor and replaced.source == str(path)
    bob = catalog.get("bob")
    assert bob is not None
    assert bob.languages == ("en", "de") and bob.speed == 1.2 and bob.normalize_text is False


def test_bare_list_document_is_accepted() -> None:
    presets = parse_voices_document([{"name": "a", "instruct": "male", "languages": ["en"]}],
                                    source="x.yaml")
    assert [p.name for p in presets] == ["a"]


@pytest.mark.parametrize(
    ("entry", "needles"),
    [
        ({"name": "x", "instruct": "femal, britsh accent", "languages": ["en"]},
         ["test.yaml", "#1", "'x'", "female", "british accent", "young adult"]),
        ({"name": "x", "instruct": "male, british accent, 四川话", "languages": ["en"]},
         ["test.yaml", "'x'"]),
        ({"name": "x", "instruct": "male", "languages": ["englsh"]},
         ["test.yaml", "'x'", "englsh", "en (English)"]),
        ({"name": "x", "instruct": "male", "languages": []}, ["at least one language"]),
        ({"name": "x", "instruct": "male"}, ["'languages' is required"]),
        ({"name": "x", "instruct": "male", "languages": ["en"], "speed": 9},
         ["'speed' 9.0 is out of range"]),
        ({"name": "x", "instruct": "male", "languages": ["en"], "speed": "fast"},
         ["'speed' must be a number"]),
        ({"name": "x", "instruct": "male", "languages": ["en"], "anchor": "yes"},
         ["'anchor' must be true or false"]),
        ({"name": "x", "instrukt": "male", "languages": ["en"]},
         ["unknown key(s) instrukt", "allowed keys", "instruct"]),
        ({"name": "../../etc/passwd", "instruct": "male", "languages": ["en"]},
         ["'name' must be"]),
        ({"name": "has space", "instruct": "male", "languages": ["en"]}, ["'name' must be"]),
        ({"instruct": "male", "languages": ["en"]}, ["'name' must be"]),
        ({"name": "x", "languages": ["en"], "reference_text": "hi"},
         ["reference_text needs reference_audio"]),
        ("just a string", ["must be a mapping"]),
        # a YAML escape writes what no text holds: that voice's problem, not describe's
        ({"name": "x", "instruct": "male", "languages": ["en"], "description": "Ann \ud800"},
         ["'description'", "lone surrogate U+D800"]),
        ({"name": "x", "instruct": "male, \udc00", "languages": ["en"]},
         ["'instruct'", "lone surrogate U+DC00"]),
    ],
)
def test_bad_entries_name_file_entry_and_fix(entry, needles: list[str]) -> None:
    with pytest.raises(VoiceConfigError) as info:
        parse([entry])
    message = str(info.value)
    assert "test.yaml" in message
    for needle in needles:
        assert needle in message


def test_duplicate_names_in_one_file() -> None:
    entry = {"name": "x", "instruct": "male", "languages": ["en"]}
    with pytest.raises(VoiceConfigError, match="used twice"):
        parse([entry, entry])


def test_unknown_top_level_key() -> None:
    with pytest.raises(VoiceConfigError, match="unknown top-level key"):
        parse_voices_document({"voice": []}, source="t.yaml")


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("voices: [\n  - name: x", encoding="utf-8")
    with pytest.raises(VoiceConfigError, match=r"broken\.yaml"):
        load_voices_file(path)


def test_cloned_preset(tmp_path: Path) -> None:
    (tmp_path / "me.wav").write_bytes(b"RIFF")
    (tmp_path / "me.txt").write_text("Hello, this is me.\n", encoding="utf-8")
    presets = parse(
        [
            {"name": "me", "reference_audio": "me.wav", "reference_text": "Hello, this is me.",
             "language": "en"},
            {"name": "me2", "reference_audio": str(tmp_path / "me.wav"),
             "reference_text_file": "me.txt", "languages": ["en"], "instruct": "whisper"},
        ],
        base_dir=tmp_path,
    )
    me, me2 = presets
    assert me.is_cloned and not me.uses_anchor
    assert me.clone is not None and me.clone.audio_path == (tmp_path / "me.wav").resolve()
    assert me2.clone is not None and me2.clone.transcript == "Hello, this is me."
    assert me2.instruct == "whisper"


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"name": "c", "reference_audio": "missing.wav", "reference_text": "hi",
          "languages": ["en"]}, "does not exist"),
        ({"name": "c", "reference_audio": "me.wav", "languages": ["en"]}, "reference_text"),
        ({"name": "c", "reference_audio": "me.wav", "reference_text": "hi",
          "languages": ["en"], "anchor": True}, "cannot be used with reference_audio"),
    ],
)
def test_bad_cloned_presets(tmp_path: Path, entry: dict, needle: str) -> None:
    (tmp_path / "me.wav").write_bytes(b"RIFF")
    with pytest.raises(VoiceConfigError, match=needle):
        parse([entry], base_dir=tmp_path)


def test_languages_and_lookup() -> None:
    presets = parse([
        {"name": "en", "instruct": "female", "languages": ["en"]},
        {"name": "bi", "instruct": "male", "languages": ["en", "zh"]},
        {"name": "yue", "instruct": "male", "languages": ["Cantonese"]},
    ])
    catalog = VoiceCatalog(presets)
    bi = catalog.get("bi")
    assert bi is not None
    assert bi.language_for("Hello there") == "en"
    assert bi.language_for("你好") == "zh"
    yue = catalog.get("yue")
    assert yue is not None and yue.languages == ("yue",)
    assert yue.advertised_languages() == ["yue", "zh-HK"]  # zh-HK: as Home Assistant knows it
    assert catalog.find_for_language("zh").name == "bi"
    assert catalog.find_for_language("en_US").name == "en"
    assert catalog.find_for_language("fr") is None


def test_info_lists_voices_in_order_with_attribution() -> None:
    catalog = VoiceCatalog(load_builtin_voices())
    info = build_info(catalog, streaming=True)
    assert len(info.tts) == 1
    program = info.tts[0]
    assert program.installed and program.supports_synthesize_streaming
    assert [v.name for v in program.voices] == catalog.names
    assert all(v.installed and v.attribution.name and v.attribution.url for v in program.voices)
    languages = {code for v in program.voices for code in v.languages}
    assert {"en", "zh"} <= languages
    unhealthy = build_info(catalog, streaming=False, healthy=False).tts[0]
    assert not unhealthy.installed and not unhealthy.supports_synthesize_streaming


def test_a_voices_file_with_a_lone_surrogate_skips_that_voice_only(tmp_path: Path) -> None:
    """Written as a YAML escape, as an operator's editor or a script could; the other voices
    are served and ``info`` is built (describe answers everyone)."""
    path = tmp_path / "voices.yaml"
    path.write_text('voices:\n'
                    '  - {name: bad, instruct: male, languages: [en], description: "A \\ud800"}\n'
                    '  - {name: good, instruct: female, languages: [en], description: "B\\x07c"}\n',
                    encoding="utf-8")
    problems: list = []
    presets = load_voices_file(path, problems)
    assert [p.name for p in presets] == ["good"]
    assert presets[0].description == "B c"  # a control character: a space
    assert len(problems) == 1 and "U+D800" in str(problems[0])
    event = build_info(VoiceCatalog(presets), streaming=True).event()
    # as the wyoming library writes it: UTF-8 JSON, which no lone surrogate survives
    json.dumps(event.to_dict(), ensure_ascii=False).encode("utf-8")
