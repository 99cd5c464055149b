"""Loader for tests/fixtures/golden/rules.json (recorded from upstream by
tools/record_rule_goldens.py) and the digest helpers its entries use."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import numpy as np

RULES_PATH = Path(__file__).resolve().parent / "fixtures" / "golden" / "rules.json"


@cache
def rules() -> dict:
    return json.loads(RULES_PATH.read_text(encoding="utf-8"))


def audio_digest(audio: np.ndarray) -> dict:
    """Length and SHA-256 of audio as contiguous float32, as the recorder stores them."""
    flat = np.ascontiguousarray(np.asarray(audio, dtype=np.float32).reshape(-1))
    return {"n": int(flat.size), "sha256": hashlib.sha256(flat.tobytes()).hexdigest()}


def short_digest(value: object) -> str:
    """First 16 hex digits of the SHA-256 of a value's compact JSON form."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]
