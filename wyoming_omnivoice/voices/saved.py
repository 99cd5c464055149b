"""Voices saved by the voice studio, in the formats the catalogue already reads.

There is one catalogue (:func:`.voices.gather.gather_voices`); the studio only writes
into the places it reads:

- a **cloned** voice is a voice folder ``<data-dir>/voices/<name>/`` (``reference.wav`` /
  ``.flac`` / ``.ogg``, ``reference.txt``, ``voice.yaml``), as a person would make it by
  hand (:mod:`.cloned`). It is written in a hidden temp folder and renamed into place, so
  the folder watcher never sees half a voice;
- a **designed** voice is an entry of the voices file ``<data-dir>/studio/voices.yaml``
  (read like ``--voices-file``) whose ``anchor_file`` is the picked take's anchor
  (``<data-dir>/studio/anchors/<name>.npz``, :mod:`.pinned`). Both are written atomically.

Both write a voice's languages with its regional variant's tag (``languages: [pt-BR]``,
:mod:`.language_list`), so a Brazilian voice still reads the Brazilian way once read back.

Names are checked with :func:`.names.check_voice_name` before they reach a path (one path
component: never outside the data dir). Methods block (file I/O): call them off the event
loop; a lock keeps two saves from interleaving.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wyoming_omnivoice.anchors.cache import Anchor
from wyoming_omnivoice.anchors.pinned import save_pinned_anchor
from wyoming_omnivoice.atomic import atomic_write
from wyoming_omnivoice.voices import cloned
from wyoming_omnivoice.voices.catalog import VoicePreset
from wyoming_omnivoice.voices.config import VoiceConfigError, parse_preset
from wyoming_omnivoice.voices.language_list import VoiceLanguages
from wyoming_omnivoice.voices.names import check_voice_name

STUDIO_DIR = "studio"
STUDIO_VOICES = "voices.yaml"
STUDIO_ANCHORS = "anchors"
HEADER = ("# Voices saved by the wyoming-omnivoice voice studio (read like --voices-file).\n"
          "# Edit them in the studio; a hand edit is read at the next start.\n")


def studio_voices_file(data_dir: Path) -> Path:
    return Path(data_dir) / STUDIO_DIR / STUDIO_VOICES


@dataclass(frozen=True)
class Recording:
    """An uploaded or recorded reference: its bytes as sent and their type (wav/flac/ogg)."""

    data: bytes
    kind: str

    @property
    def file_name(self) -> str:
        return f"reference.{self.kind}"


class SavedVoiceError(ValueError):
    """A save, edit or delete that cannot be done; ``code`` names the reason."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class SavedVoices:
    """Reads and writes the studio's voices under ``data_dir``."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.voices_file = studio_voices_file(self.data_dir)
        self.anchors_dir = self.voices_file.parent / STUDIO_ANCHORS
        self.voices_dir = cloned.voices_dir(self.data_dir)
        self._lock = threading.Lock()

    # ---- what is stored ------------------------------------------------------------

    def _entries(self) -> list[dict[str, Any]]:
        if not self.voices_file.is_file():
            return []
        document = yaml.safe_load(self.voices_file.read_text(encoding="utf-8")) or {}
        entries = document.get("voices", []) if isinstance(document, dict) else []
        return [entry for entry in entries if isinstance(entry, dict)]

    def _write_entries(self, entries: list[dict[str, Any]]) -> None:
        text = HEADER + yaml.safe_dump({"voices": entries}, allow_unicode=True, sort_keys=False)
        with atomic_write(self.voices_file, "w", encoding="utf-8") as handle:
            handle.write(text)

    def kind_of(self, name: str) -> str | None:
        """``designed`` or ``cloned`` when the studio can edit the voice, else None."""
        check_voice_name(name)
        if any(entry.get("name") == name for entry in self._entries()):
            return "designed"
        if (self.voices_dir / name).is_dir():
            return "cloned"
        return None

    def _taken(self, name: str) -> None:
        if self.kind_of(name) is not None:
            raise SavedVoiceError("name_taken", f"A voice named {name!r} is already saved; "
                                  "pick another name or delete that voice first")

    # ---- designed voices -----------------------------------------------------------

    def save_designed(self, name: str, description: str, languages: VoiceLanguages,
                      instruct: str | None, speed: float | None, anchor: Anchor,
                      made_with: str = "") -> VoicePreset:
        check_voice_name(name)
        with self._lock:
            self._taken(name)
            anchor_path = self.anchors_dir / f"{name}.npz"
            save_pinned_anchor(anchor_path, anchor, made_with)
            entry: dict[str, Any] = {"name": name, "description": description,
                                     "languages": languages.written()}
            if instruct:
                entry["instruct"] = instruct
            if speed is not None:
                entry["speed"] = float(speed)
            entry["anchor_file"] = f"{STUDIO_ANCHORS}/{name}.npz"
            preset = self._preset(entry)
            self._write_entries([*self._entries(), entry])
            return preset

    def _preset(self, entry: dict[str, Any]) -> VoicePreset:
        """The entry read exactly as the catalogue reads it (the same validation)."""
        try:
            return parse_preset(entry, source=str(self.voices_file), index=0,
                                base_dir=self.voices_file.parent)
        except VoiceConfigError as err:
            raise SavedVoiceError("invalid_voice", str(err)) from None

    # ---- cloned voices -------------------------------------------------------------

    def save_cloned(self, name: str, description: str, languages: VoiceLanguages,
                    recording: Recording, transcript: str) -> VoicePreset:
        from wyoming_omnivoice.voices.assets import preset_from_spec

        check_voice_name(name)
        with self._lock:
            self._taken(name)
            self.voices_dir.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=self.voices_dir))
            try:
                (staging / recording.file_name).write_bytes(recording.data)
                (staging / cloned.TRANSCRIPT_NAME).write_text(transcript + "\n",
                                                              encoding="utf-8")
                self._write_meta(staging, description, languages)
                final = self.voices_dir / name
                os.rename(staging, final)  # atomic; fails if the folder appeared meanwhile
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
            return preset_from_spec(cloned.read_voice_folder(final,
                                                             voices_root=self.voices_dir))

    @staticmethod
    def _write_meta(folder: Path, description: str, languages: VoiceLanguages) -> None:
        meta = {"description": description, "languages": languages.written()}
        with atomic_write(folder / cloned.META_NAME, "w", encoding="utf-8") as handle:
            handle.write(yaml.safe_dump(meta, allow_unicode=True, sort_keys=False))

    def recording_of(self, name: str) -> Recording | None:
        """A cloned voice's reference as stored (for export)."""
        folder = self.voices_dir / check_voice_name(name)
        for file_name in cloned.AUDIO_NAMES:
            path = folder / file_name
            if path.is_file():
                return Recording(path.read_bytes(), path.suffix.lstrip("."))
        return None

    # ---- edit and delete -----------------------------------------------------------

    def update(self, name: str, description: str, languages: VoiceLanguages) -> VoicePreset:
        """New description and languages (with their regional variant); the voice's sound
        is unchanged."""
        from wyoming_omnivoice.voices.assets import preset_from_spec

        with self._lock:
            kind = self.kind_of(name)
            if kind == "designed":
                entries = self._entries()
                for entry in entries:
                    if entry.get("name") == name:
                        entry["description"] = description
                        entry.pop("language", None)
                        entry["languages"] = languages.written()
                        preset = self._preset(entry)
                self._write_entries(entries)
                return preset
            if kind == "cloned":
                folder = self.voices_dir / name
                self._write_meta(folder, description, languages)
                return preset_from_spec(cloned.read_voice_folder(folder,
                                                                 voices_root=self.voices_dir))
        raise SavedVoiceError("not_editable", f"Voice {name!r} is not one of the saved voices "
                              "(built-in and --voices-file voices are edited in their file)")

    def delete(self, name: str) -> None:
        with self._lock:
            kind = self.kind_of(name)
            if kind == "designed":
                self._write_entries([e for e in self._entries() if e.get("name") != name])
                (self.anchors_dir / f"{name}.npz").unlink(missing_ok=True)
                return
            if kind == "cloned":
                # Renamed away first (atomic), so no scan sees a half-deleted folder.
                trash = Path(tempfile.mkdtemp(prefix=f".deleted-{name}.", dir=self.voices_dir))
                os.rename(self.voices_dir / name, trash / name)
                shutil.rmtree(trash, ignore_errors=True)
                return
        raise SavedVoiceError("not_editable", f"Voice {name!r} is not one of the saved voices "
                              "(built-in and --voices-file voices are edited in their file)")
