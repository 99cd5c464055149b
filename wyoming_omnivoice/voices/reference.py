"""What a cloned voice is made from: a recording and the exact words spoken in it.

One value type for every source of cloned voices (a voice folder, a ``reference_audio``
entry of a voices file, the synthesize CLI's ``--ref-audio``): :class:`CloneReference`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wyoming_omnivoice.engine import NO_TRANSCRIPT_HINT
from wyoming_omnivoice.user_files import TEXT_LIMIT, UserFileError, read_user_text


@dataclass(frozen=True)
class CloneReference:
    """A reference recording and its transcript, given inline (``transcript``) or as a
    UTF-8 file (``transcript_path``)."""

    audio_path: Path
    transcript: str | None = None
    transcript_path: Path | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "audio_path", Path(self.audio_path))
        if self.transcript_path is not None:
            object.__setattr__(self, "transcript_path", Path(self.transcript_path))

    def read_transcript(self) -> str:
        """The transcript, stripped; ValueError naming the file when it is missing or not
        a regular text file (read through :mod:`wyoming_omnivoice.user_files`: a FIFO here
        must not hang the start or the folder scan)."""
        text = self.transcript
        if text is None and self.transcript_path is not None:
            try:
                text = read_user_text(self.transcript_path, limit=TEXT_LIMIT)
            except FileNotFoundError:
                raise ValueError(
                    f"Transcript {self.transcript_path} for {self.audio_path} does not exist. "
                    f"Write the words spoken in the recording into it. {NO_TRANSCRIPT_HINT}"
                ) from None
            except UserFileError as err:
                raise ValueError(f"Transcript {err} {NO_TRANSCRIPT_HINT}") from None
            except (OSError, UnicodeDecodeError) as err:
                raise ValueError(
                    f"Transcript {self.transcript_path} is unreadable ({err}); save it as "
                    "UTF-8 text."
                ) from None
        if text is None or not text.strip():
            where = self.transcript_path or "the voice configuration"
            raise ValueError(
                f"Reference audio {self.audio_path} has no transcript (checked {where}). "
                f"{NO_TRANSCRIPT_HINT}"
            )
        return " ".join(text.split())
