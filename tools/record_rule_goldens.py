"""Record upstream OmniVoice's rule outputs into tests/fixtures/golden/rules.json.

Dev script (needs torch, pydub and the upstream ``omnivoice`` package in the dev venv; the
test suite only reads the JSON). It runs upstream's own functions on many inputs:

- ``_resolve_language`` on every id and name of the table plus odd cases;
- ``_resolve_instruct`` on every instruct word in both languages, combinations, case and
  separator variants and error cases;
- ``RuleDurationEstimator`` weights for every code point (run-length encoded) and
  ``_estimate_target_tokens`` on many texts, references and speeds;
- ``_combine_text``, ``_tokenize_with_nonverbal_tags`` (with a recording tokenizer),
  ``chunk_text_punctuation`` and ``add_punctuation`` on fixed and seeded random texts;
- ``_get_time_steps``, and the per-step unmask counts of ``_generate_iterative`` observed
  while upstream's decode loop runs (``fixtures_lib/unmask_observer.py``) for every length
  from 1 to 1000 frames at 32, 16, 12 and 8 steps (plus digests of a few more configs);
- ``remove_silence`` (pydub), ``_post_process_audio``, ``fade_and_pad_audio``,
  ``cross_fade_chunks`` and ``trim_long_audio`` on synthetic signals. Signals are stored as
  recipes (``tests/rule_signals.py`` builds them) and outputs as length + SHA-256.

    python tools/record_rule_goldens.py              # write the goldens
    python tools/record_rule_goldens.py --fuzz 400   # also compare our remove_silence with
                                                     # pydub on 400 random signals (not stored)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import random
import re
import sys
import tempfile
import types
import warnings
from pathlib import Path

import _upstream
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "golden" / "rules.json"
sys.path.insert(0, str(ROOT / "tests"))

_upstream.ensure_torchaudio()
warnings.filterwarnings("ignore", category=RuntimeWarning, module="pydub")

import torch  # noqa: E402
from fixtures_lib.unmask_observer import UnmaskObserver  # noqa: E402
from omnivoice.models import omnivoice as ov  # noqa: E402
from omnivoice.utils import audio as ov_audio  # noqa: E402
from omnivoice.utils import lang_map, voice_design  # noqa: E402
from omnivoice.utils import text as ov_text  # noqa: E402
from omnivoice.utils.duration import RuleDurationEstimator  # noqa: E402
from rule_signals import CHUNK_SETS, SIGNALS, build_signal  # noqa: E402

CJK = re.compile("[\u4e00-\u9fff]")
logging.getLogger("omnivoice").setLevel(logging.ERROR)


def short_digest(value: object) -> str:
    """First 16 hex digits of the SHA-256 of a value's compact JSON form."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def audio_digest(audio: np.ndarray) -> dict:
    flat = np.ascontiguousarray(np.asarray(audio, dtype=np.float32).reshape(-1))
    return {"n": int(flat.size), "sha256": hashlib.sha256(flat.tobytes()).hexdigest()}


# ---------------------------------------------------------------------------- languages


def record_languages() -> dict:
    names = {lid: None for lid in lang_map.LANG_IDS}
    for key, lid in lang_map.LANG_NAME_TO_ID.items():
        names[lid] = lang_map.lang_display_name(key)
    inputs: list[str | None] = [None, "none", "None", "NONE", "nOnE", "", " ", "Auto", "auto"]
    inputs += ["EN", "En", "ZH", "en-US", "en_US", "zh-CN", "english ", " English", "xx"]
    inputs += ["Eng", "Englsh", "cantonese", "CANTONESE", "Min Nan Chinese", "Yue", "YUE"]
    inputs += ["Mandarin", "Chinese (Mandarin)", "Fe'fe'", "FE'FE'", "dũya", "DŨYA", "ömie"]
    for key, lid in sorted(lang_map.LANG_NAME_TO_ID.items()):
        inputs += [lid, lid.upper(), key, key.upper(), key.title(), lang_map.lang_display_name(key)]
    seen: set = set()
    cases = []
    for value in inputs:
        if value in seen:
            continue
        seen.add(value)
        cases.append([value, ov._resolve_language(value)])
    return {"names": dict(sorted(names.items())), "resolve": cases}


# ---------------------------------------------------------------------------- instruct

_UNKNOWN_LINE = re.compile(
    r"^  '(.*)' -> '(.*)' \((?:unsupported; did you mean '(.*)'\?|unsupported)\)$"
)


def classify_instruct_error(message: str) -> dict:
    if message.startswith("Unsupported instruct items"):
        items = []
        for line in message.splitlines():
            match = _UNKNOWN_LINE.match(line)
            if match:
                items.append([match.group(1), match.group(2), match.group(3)])
        return {"error": "unknown", "items": items}
    if message.startswith("Cannot mix"):
        return {"error": "mix"}
    if message.startswith("Conflicting instruct items"):
        detail = message.split(": ", 1)[1].split(". Each category", 1)[0]
        return {"error": "conflict", "detail": detail}
    raise AssertionError(message)


def run_instruct(instruct: str | None, text: str) -> dict:
    use_zh = bool(text and voice_design._ZH_RE.search(text))
    try:
        return {"output": ov._resolve_instruct(instruct, use_zh=use_zh)}
    except ValueError as error:
        return classify_instruct_error(str(error))


def record_instruct() -> dict:
    rng = random.Random(1234)
    words = sorted(voice_design._INSTRUCT_ALL_VALID)
    texts = ["", "Hello there.", "mixed 中文 text"]
    instructs: list[str | None] = [None, "", "   ", ",", "，", " , ，", "female,  whisper,"]
    instructs += ["Female, Young Adult, High Pitch, British Accent", "male，四川话", "女，青年"]
    instructs += ["female, low pitch", "MALE", "Male , Elderly", "male,female", "男，女"]
    instructs += ["male, 女", "british accent, 四川话", "四川话, american accent"]
    instructs += ["whisper, 耳语", "child，teenager", "very low pitch, low pitch"]
    instructs += ["femal", "young-adult", "hgh pitch", "british", "sichuan", "男性", "xyz"]
    instructs += ["male, femal, whisperr", "Female;Whisper", "female whisper", "男 ， 老年"]
    instructs += ["FEMALE,,,ELDERLY", "  high pitch ,whisper  ", "Indian Accent, male"]
    instructs += ["河南话，女，老年，极低音调，耳语", "male, child, very high pitch, whisper"]
    for word in words:
        instructs += [word, word.upper(), word.title(), f" {word} ,", f"{word}，"]
    for _ in range(400):
        picked = rng.sample(words, rng.randint(1, 5))
        picked = [w.upper() if rng.random() < 0.2 else w for w in picked]
        separator = rng.choice([", ", ",", "，", " ， ", " ,"])
        instructs.append(separator.join(picked))
    for _ in range(60):
        word = list(rng.choice(words))
        position = rng.randrange(len(word))
        operation = rng.choice(["drop", "swap", "add"])
        if operation == "drop":
            del word[position]
        elif operation == "swap" and position + 1 < len(word):
            word[position], word[position + 1] = word[position + 1], word[position]
        else:
            word.insert(position, rng.choice("aeiouxz"))
        instructs.append("".join(word))
    cases = []
    for instruct in instructs:
        for text in texts:
            cases.append({"instruct": instruct, "text": text, **run_instruct(instruct, text)})
    return {
        "valid_en": sorted(voice_design._INSTRUCT_VALID_EN),
        "valid_zh": sorted(voice_design._INSTRUCT_VALID_ZH),
        "en_to_zh": dict(sorted(voice_design._INSTRUCT_EN_TO_ZH.items())),
        "cases": cases,
    }


# ---------------------------------------------------------------------------- duration


def record_duration() -> dict:
    estimator = RuleDurationEstimator()
    runs: list[list[float | int]] = []
    previous = None
    for code in range(0x110000):
        weight = estimator._get_char_weight(chr(code))
        if weight != previous:
            runs.append([code, weight])
            previous = weight
    holder = types.SimpleNamespace(duration_estimator=estimator)
    texts = [
        "", "hello world", "你好，世界！这是一个测试。",
        "This is a slightly longer sentence to estimate duration for.",
        "a", ".", " ", "123", "नमस्ते दुनिया", "مَرْحَبًا بِالْعَالَم", "Chào thế giới",
        "Hello 🌍! This is fun 🎉", "こんにちは世界", "안녕하세요", "Привет, мир!",
        "ሰላም ልዑል", "สวัสดีชาวโลก", "[laughter] that is funny [sigh]",
        "Numbers 1, 22 and 333.", "A" * 400, "你" * 300, "\u0640\u0640", "\U00020001\U0002A6D6",
        "tab\tand\nnewline", "𐐀𐐁", "\ufeff", "ｆｕｌｌｗｉｄｔｈ",
    ]
    rng = random.Random(99)
    alphabet = "abcdefghij ABC,.!?你好世界こんにちは안녕1234éüñ\u0301\u0640"
    for _ in range(150):
        texts.append("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120))))
    refs: list[tuple[str | None, int | None]] = [
        (None, None), ("", 30), ("Nice to meet you.", 25), ("Hello, world.", 38),
        ("这是参考音频。", 60), ("short", 3), ("A much longer reference transcript here.", 150),
        ("...", 10), (None, 40), ("\u0301", 20), ("ok", 0),
    ]
    speeds = [1.0, 1.5, 0.8, 2.0, 0.5, 1.1, 0.0, -1.0, 3.7]
    cases = []
    for index, text in enumerate(texts):
        for ref_index, (ref_text, ref_frames) in enumerate(refs):
            for speed in speeds:
                if (index + ref_index) % 3 and speed not in (1.0, 1.5):
                    continue
                frames = ov.OmniVoice._estimate_target_tokens(
                    holder, text, ref_text, ref_frames, speed
                )
                cases.append([index, ref_index, speed, frames])
    return {
        "weight_runs": runs,
        "texts": texts,
        "refs": [list(ref) for ref in refs],
        "cases": cases,
    }


# ---------------------------------------------------------------------------- text


class RecordingTokenizer:
    """Stands in for the text tokenizer: records the strings upstream tokenizes."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, text: str, **kwargs: object) -> types.SimpleNamespace:
        self.calls.append(text)
        ids = [1] if text else []
        if kwargs.get("return_tensors") == "pt":
            return types.SimpleNamespace(input_ids=torch.tensor([ids], dtype=torch.long))
        return types.SimpleNamespace(input_ids=ids)


def nonverbal_pieces(text: str) -> list[str]:
    tokenizer = RecordingTokenizer()
    ov._tokenize_with_nonverbal_tags(text, tokenizer)
    return [call for call in tokenizer.calls if call]


def random_texts(seed: int, count: int, max_len: int) -> list[str]:
    rng = random.Random(seed)
    atoms = [
        *"abc xyz ABC  \t\n\r.,;:!?。，；：！？\"'“”‘’）]》>」】([（你好世界",
        "Mr.", "Dr.", "e.g.", "No.", "vs.", "etc.", "i.e.", " St. ", "U.S.", "...", "…",
        "[laughter]", "[sigh]", "[question-en]", "[surprise-wa]", "[dissatisfaction-hnn]",
        "[laugh]", "[B EY1 S]", "ZHE2", "\u3000", "\xa0", "Hello world. ", "你好。",
    ]
    texts = []
    for _ in range(count):
        texts.append("".join(rng.choice(atoms) for _ in range(rng.randint(0, max_len))))
    return texts


def record_text() -> dict:
    fixed = [
        "", " ", "Hello  world.\nHow are\tyou?", "你好 世界（测试） abc", "a.\nB", "\r\n\r\n",
        "Hi [laughter] there", "[laughter][sigh]", "[LAUGHTER] no", "x[question-ah]y",
        "Mr. Smith went to Washington. He said hi! Did he? Yes.", "e.g. this, or that; ok: done",
        "他说：“你好。”然后走了。", "Wait...what?! Really.", "“Quoted.” Next one.", "a. b. c. d.",
        "No. 5 is here. St. Louis is there.", "End with abbreviation Dr.", "中文句子，没有结尾",
        "ends with quote'", "ends with …", "ends with ……", "ends with 、", "Trailing space.  ",
    ]
    combine_pairs = [(t, None) for t in fixed] + [(t, "Ref text here.") for t in fixed[:8]]
    combine_pairs += [("text", ""), ("  text  ", "  ref  "), ("中文", "参考 文本"), ("b", "a\n")]
    randoms = random_texts(7, 250, 40)
    combine_pairs += [(t, None) for t in randoms[:120]]
    combine_pairs += [(a, b) for a, b in zip(randoms[120:180], randoms[180:240], strict=True)]
    combine = [[t, r, ov._combine_text(t, ref_text=r)] for t, r in combine_pairs]
    nonverbal = [[t, nonverbal_pieces(t)] for t in fixed + randoms]
    chunk_texts = fixed + random_texts(11, 200, 80)
    chunk_texts.append(" ".join(fixed) * 4)
    chunks = []
    for index, text in enumerate(chunk_texts):
        for chunk_len in (1, 2, 5, 10, 25, 60, 150, 1000):
            for min_len in (3, None, 1, 8):
                if min_len not in (3, None) and (index + chunk_len) % 4:
                    continue
                result = ov_text.chunk_text_punctuation(text, chunk_len, min_chunk_len=min_len)
                # full chunks for the hand-written texts, a digest for the random ones
                stored = result if index < len(fixed) else short_digest(result)
                chunks.append([index, chunk_len, min_len, stored])
    punct_texts = fixed + randoms + [p + "x" for p in sorted(ov_text.END_PUNCTUATION)]
    punct_texts += ["abc" + p for p in sorted(ov_text.END_PUNCTUATION)] + ["中" + p for p in "…."]
    punctuation = [[t, ov_text.add_punctuation(t)] for t in punct_texts]
    return {
        "combine": combine,
        "nonverbal": nonverbal,
        "chunk_texts": chunk_texts,
        "chunk": chunks,
        "add_punctuation": punctuation,
        "abbreviations": sorted(ov_text.ABBREVIATIONS),
        "end_punctuation": sorted(ov_text.END_PUNCTUATION),
    }


# ---------------------------------------------------------------------------- schedule

#: (num_step, t_shift) whose per-step unmask counts are stored in full for every length.
SCHEDULE_FULL = ((32, 0.1), (16, 0.1), (12, 0.1), (8, 0.1))
#: Further configs stored as one digest each: the parity goldens' 12/0.3 and 8/0.5, more.
SCHEDULE_DIGESTS = ((12, 0.3), (8, 0.5), (16, 0.3), (24, 0.1))
SCHEDULE_MAX_FRAMES = 1000
SCHEDULE_BATCH = 50


def schedule_probe():
    """An upstream ``OmniVoice`` whose decode loop runs for any length in milliseconds.

    The per-step counts depend only on the lengths, ``num_step`` and ``t_shift``: the loop
    unmasks the ``k`` best-scored masked cells whatever the logits say. So the model is
    minimal (audio vocabulary 2 with MASK 1, a 1-layer width-8 backbone) and its forward is
    replaced at run time by all-zero logits of the shape upstream reads; everything else,
    prompt layout, schedule, the step loop and its top-k unmasking, is upstream's own code.
    The fixture-model goldens (tools/build_fixtures.py, tools/record_long_text_goldens.py)
    observe the same counts on the real tiny model.
    """
    torch.manual_seed(0)
    llm = {"model_type": "qwen3", "vocab_size": 8, "hidden_size": 8, "intermediate_size": 8,
           "num_hidden_layers": 1, "num_attention_heads": 1, "num_key_value_heads": 1,
           "head_dim": 8}
    config = ov.OmniVoiceConfig(audio_vocab_size=2, audio_mask_id=1, llm_config=llm)
    model = ov.OmniVoice(config).float().eval()
    model.text_tokenizer = RecordingTokenizer()

    def zero_logits(input_ids, audio_mask, attention_mask=None, **_kwargs):
        rows, codebooks, length = input_ids.shape
        return ov.OmniVoiceModelOutput(logits=torch.zeros(rows, codebooks, length, 2))

    model.forward = zero_logits
    return model


def observe_counts(model, num_step: int, t_shift: float) -> list[list[int]]:
    """Upstream's per-step unmask counts for 1..SCHEDULE_MAX_FRAMES frames, as observed."""
    gen_config = ov.OmniVoiceGenerationConfig(
        num_step=num_step, t_shift=t_shift, position_temperature=0.0, class_temperature=0.0
    )
    counts: list[list[int]] = []
    with UnmaskObserver(model) as seen, torch.inference_mode():
        for first in range(1, SCHEDULE_MAX_FRAMES + 1, SCHEDULE_BATCH):
            lengths = list(range(first, min(first + SCHEDULE_BATCH, SCHEDULE_MAX_FRAMES + 1)))
            size = len(lengths)
            none = [None] * size
            task = ov.GenerationTask(size, ["x"] * size, lengths, none, none, none, none, none)
            model._generate_iterative(task, gen_config)
    for run in seen.runs:
        if run.forwards != num_step:
            raise AssertionError(f"{run.forwards} forwards for num_step {num_step}")
        for frames, item in zip(run.target_lens, run.counts, strict=True):
            if sum(item) != 8 * frames:
                raise AssertionError(f"T={frames}: counts {item} do not unmask every cell")
            counts.append(item)
    if [len(c) for c in counts] != [num_step] * SCHEDULE_MAX_FRAMES:
        raise AssertionError("observed counts are incomplete")
    return counts


def record_schedule() -> dict:
    timesteps = []
    for num_step in [*range(1, 41), 48, 50, 64, 96, 100, 128, 250]:
        for t_shift in (0.1, 0.5, 1.0, 0.3):
            steps = ov._get_time_steps(0.0, 1.0, num_step, t_shift).tolist()
            timesteps.append([num_step, t_shift, steps])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # thousands of tiny ops: thread hand-offs cost more than they save
    try:
        model = schedule_probe()
        full = []
        for num_step, t_shift in SCHEDULE_FULL:
            counts = observe_counts(model, num_step, t_shift)
            full.append({"num_step": num_step, "t_shift": t_shift,
                         "counts": [",".join(map(str, item)) for item in counts]})
        digests = []
        for num_step, t_shift in SCHEDULE_DIGESTS:
            counts = observe_counts(model, num_step, t_shift)
            joined = ";".join(",".join(map(str, item)) for item in counts)
            digests.append([num_step, t_shift, hashlib.sha256(joined.encode()).hexdigest()])
    finally:
        torch.set_num_threads(threads)
    return {
        "timesteps": timesteps,
        "max_frames": SCHEDULE_MAX_FRAMES,
        "observed_counts": full,
        "observed_count_digests": digests,
    }


# ---------------------------------------------------------------------------- post-processing


def record_postprocess() -> dict:
    holder = types.SimpleNamespace(sampling_rate=24000)
    remove_params = [(500, 100, 100), (200, 100, 200), (300, 100, 300), (0, 100, 100)]
    remove = []
    post = []
    fades = []
    for name in SIGNALS:
        audio = build_signal(name)
        for mid, lead, trail in remove_params:
            out = ov_audio.remove_silence(audio[None, :], 24000, mid, lead, trail)
            remove.append([name, mid, lead, trail, audio_digest(out)])
        for ref_rms in (None, 0.05, 0.2):
            for postprocess_output in (True, False):
                config = types.SimpleNamespace(
                    postprocess_output=postprocess_output, pad_duration=0.1, fade_duration=0.1
                )
                try:
                    out = ov.OmniVoice._post_process_audio(
                        holder, audio[None, :], ref_rms=ref_rms, gen_config=config
                    )
                    result = audio_digest(out)
                except ValueError:
                    result = {"error": "upstream raised ValueError"}
                post.append([name, ref_rms, postprocess_output, result])
        fades.append([name, audio_digest(ov_audio.fade_and_pad_audio(audio[None, :]))])
    crossfades = []
    for chunk_set in CHUNK_SETS:
        chunks = [build_signal(name)[None, :] for name in chunk_set]
        merged = ov_audio.cross_fade_chunks(chunks, 24000)
        crossfades.append([chunk_set, audio_digest(merged)])
    trims = []
    for name in SIGNALS:
        audio = build_signal(name)
        if audio.size > 20 * 24000:
            trims.append([name, audio_digest(ov_audio.trim_long_audio(audio[None, :], 24000))])
    return {
        "remove_silence": remove,
        "post_process": post,
        "fade_and_pad": fades,
        "cross_fade": crossfades,
        "trim_long_audio": trims,
    }


def fuzz_remove_silence(trials: int) -> int:
    """Compare our numpy ``remove_silence`` with upstream's pydub one on random signals.

    Signals mix exact zeros, noise near the -50 dBFS threshold, loud noise and isolated
    clicks, at random lengths, with random silence parameters and sample rates.
    """
    sys.path.insert(0, str(ROOT))
    from wyoming_omnivoice.engine.audio.postprocess import remove_silence

    rng = np.random.default_rng(12345)
    threshold = 10 ** (-50 / 20)
    mismatches = 0
    for trial in range(trials):
        parts = []
        for _ in range(int(rng.integers(1, 9))):
            n = int(rng.integers(0, 30000))
            kind = int(rng.integers(0, 4))
            if kind == 0:
                part = np.zeros(n, np.float32)
            elif kind == 1:
                part = rng.standard_normal(n) * threshold * rng.uniform(0.8, 1.2)
            elif kind == 2:
                part = rng.standard_normal(n) * rng.uniform(0.01, 0.9)
            else:
                part = np.zeros(n, np.float32)
                if n:
                    part[rng.integers(0, n, size=int(rng.integers(0, 5)))] = rng.uniform(-1, 1)
            parts.append(np.asarray(part, dtype=np.float32))
        audio = np.concatenate(parts)
        settings = [(24000, 500, 100, 100), (24000, 200, 100, 200), (16000, 300, 100, 300)]
        random_sr = int(rng.choice([22050, 24000, 44100]))
        settings.append((random_sr, *map(int, rng.integers(0, 700, 3))))
        for sr, mid, lead, trail in settings:
            want = ov_audio.remove_silence(audio[None, :], sr, mid, lead, trail)[0]
            got = remove_silence(audio, sr, mid, lead, trail)
            if want.shape != got.shape or not np.array_equal(want, got):
                mismatches += 1
                print(f"mismatch: trial {trial}, sr {sr}, silences {mid}/{lead}/{trail}")
    print(f"fuzz: {trials} signals x {len(settings)} settings, {mismatches} mismatches")
    return mismatches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzz", type=int, default=0, help="random signals to compare")
    args = parser.parse_args()
    if args.fuzz and fuzz_remove_silence(args.fuzz):
        sys.exit(1)
    golden = {
        "meta": {
            "source": "upstream omnivoice functions, recorded by tools/record_rule_goldens.py",
            "numpy": np.__version__,
            "torch": torch.__version__,
        },
        "languages": record_languages(),
        "instruct": record_instruct(),
        "duration": record_duration(),
        "text": record_text(),
        "schedule": record_schedule(),
        "postprocess": record_postprocess(),
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=OUT.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(golden, handle, ensure_ascii=False, separators=(",", ":"))
        handle.write("\n")
    os.replace(tmp, OUT)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
