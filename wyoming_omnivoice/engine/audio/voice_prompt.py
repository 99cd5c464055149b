"""`VoicePrompt`, a reusable clone prompt (reference codes, transcript, RMS), and its file
format: a ``.npz`` written atomically with no pickles, with extra string fields (a cache key)
beside it. Made by :mod:`.reference`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.engine.constants import CODEBOOK_SIZE, NUM_CODEBOOKS

#: Version of the on-disk `VoicePrompt` format written by `VoicePrompt.save`.
PROMPT_FORMAT_VERSION = 1


@dataclass(frozen=True, eq=False)
class VoicePrompt:
    """A reusable clone prompt: reference codes, their transcript and the reference RMS.

    ``codes`` is int64 ``[8, T_ref]`` with values in 0..1023; ``text`` is the transcript
    (punctuation added); ``rms`` is the RMS of the reference before any boost, which sets
    the output loudness (omnivoice.md B.5.2).
    """

    codes: np.ndarray
    text: str
    rms: float

    def __post_init__(self) -> None:
        codes = np.asarray(self.codes)
        if codes.ndim != 2 or codes.shape[0] != NUM_CODEBOOKS or codes.shape[1] < 1:
            raise ValueError(
                f"Voice prompt codes must have shape [{NUM_CODEBOOKS}, T>=1], got {codes.shape}"
            )
        if not np.issubdtype(codes.dtype, np.integer):
            raise ValueError(f"Voice prompt codes must be integers, got {codes.dtype}")
        if codes.min() < 0 or codes.max() >= CODEBOOK_SIZE:
            raise ValueError(f"Voice prompt codes must lie in 0..{CODEBOOK_SIZE - 1}")
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError("Voice prompt transcript is empty")
        rms = float(self.rms)
        if not np.isfinite(rms) or rms < 0:
            raise ValueError(f"Voice prompt RMS must be a finite number >= 0, got {self.rms}")
        codes = codes.astype(np.int64, copy=True)
        codes.setflags(write=False)
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "rms", rms)

    @property
    def num_frames(self) -> int:
        return int(self.codes.shape[1])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VoicePrompt):
            return NotImplemented
        return (
            self.text == other.text
            and self.rms == other.rms
            and np.array_equal(self.codes, other.codes)
        )

    __hash__ = None  # type: ignore[assignment]

    def save(self, path: str | Path, **extra: str) -> None:
        """Write the prompt atomically to ``path`` (a ``.npz`` file, no pickles).

        ``extra`` string fields (e.g. a cache key) are stored alongside and returned by
        `read_prompt_extras`.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {
            "format_version": np.array(PROMPT_FORMAT_VERSION, dtype=np.int64),
            "codes": self.codes,
            "text": np.array(self.text, dtype=np.str_),
            "rms": np.array(self.rms, dtype=np.float64),
        }
        for key, value in extra.items():
            arrays[f"extra_{key}"] = np.array(str(value), dtype=np.str_)
        with atomic_write(path) as handle:
            np.savez(handle, **arrays)  # type: ignore[arg-type]

    @classmethod
    def load(cls, path: str | Path) -> VoicePrompt:
        """Read a prompt written by `save`; raises ValueError naming the file if it is bad."""
        prompt, _extras = _load_with_extras(Path(path))
        return prompt


def read_prompt_extras(path: str | Path) -> tuple[VoicePrompt, dict[str, str]]:
    """Read a saved prompt and the extra string fields stored with it."""
    return _load_with_extras(Path(path))


def _load_with_extras(path: Path) -> tuple[VoicePrompt, dict[str, str]]:
    try:
        with np.load(path, allow_pickle=False) as data:
            version = int(data["format_version"])
            if version != PROMPT_FORMAT_VERSION:
                raise ValueError(f"unsupported format version {version}")
            prompt = VoicePrompt(
                codes=np.array(data["codes"]),
                text=str(data["text"]),
                rms=float(data["rms"]),
            )
            extras = {
                key.removeprefix("extra_"): str(data[key])
                for key in data.files
                if key.startswith("extra_")
            }
    except FileNotFoundError:
        raise
    except Exception as exc:  # zip, npy, key or validation errors: the file is unusable
        raise ValueError(f"Voice prompt file {path} is unreadable or corrupt: {exc}") from exc
    return prompt, extras
