"""Pick up cloned-voice folders added to ``<data-dir>/voices/`` while the server runs.

Home Assistant asks for ``describe`` regularly (every 30 s in recent versions). Each
``describe`` calls :meth:`FolderVoiceWatcher.poll`, which never blocks the event loop: at most
one scan runs at a time, in a background thread, and not more often than ``min_interval_s``.
The scan lists the folders and loads the new voices' prompts (from the cache, or encoded on
the inference worker's thread: the scan thread never touches the engine itself) and hands
the finished voices back to the event loop, which adds them to the catalog; they are
advertised from the next ``describe`` on. A folder that fails is logged once (one error
line naming the file and the fix) and tried again only after its files change; the same
holds for folders that failed at start-up (:meth:`FolderVoiceWatcher.remember_failed`).
Voices already known are never replaced or removed while the server runs (a restart does).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wyoming_omnivoice import VoicePrompt

from wyoming_omnivoice.errors import one_line
from wyoming_omnivoice.voices.catalog import VoicePreset
from wyoming_omnivoice.voices.cloned import ClonedVoiceSpec

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True)
class NewVoice:
    preset: VoicePreset
    prompt: VoicePrompt


class FolderVoiceWatcher:
    """Scans ``voices_dir`` for cloned voices that are not in the catalog yet."""

    def __init__(
        self,
        voices_dir: Path,
        discover: Callable[[dict[Path, str]], list[ClonedVoiceSpec]],
        to_preset: Callable[[ClonedVoiceSpec], VoicePreset],
        load_prompt: Callable[[VoicePreset], VoicePrompt],
        on_found: Callable[[list[NewVoice]], None],
        *,
        min_interval_s: float = 5.0,
    ) -> None:
        self.voices_dir = voices_dir
        self._discover = discover
        self._to_preset = to_preset
        self._load_prompt = load_prompt
        self._on_found = on_found
        self.min_interval_s = min_interval_s
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="voice-watch")
        self._scan_running = False
        self._last_scan = float("-inf")
        self._failed: dict[str, float] = {}  # folder name -> its signature when it failed
        self.scans = 0

    def remember_failed(self, names: set[str]) -> None:
        """Voices already reported (at start-up): not tried again until their files change."""
        for name in names:
            self._failed[name] = _folder_signature(self.voices_dir / name)

    def poll(self, known_names: set[str]) -> None:
        """Start a background scan unless one is running or one ran very recently."""
        now = time.monotonic()
        if self._scan_running or now - self._last_scan < self.min_interval_s:
            return
        if not self.voices_dir.is_dir():
            self._last_scan = now
            return
        self._scan_running = True
        self._last_scan = now
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, self._scan, frozenset(known_names))
        future.add_done_callback(self._finished)

    def _finished(self, future: asyncio.Future[list[NewVoice]]) -> None:
        self._scan_running = False
        self.scans += 1
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            _LOGGER.error("Scanning %s for new voices failed: %s", self.voices_dir, error)
            return
        found = future.result()
        if found:
            self._on_found(found)

    def _scan(self, known: frozenset[str]) -> list[NewVoice]:
        found: list[NewVoice] = []
        problems: dict[Path, str] = {}
        specs = self._discover(problems)
        for folder, message in sorted(problems.items()):
            self._report(folder.name, message)
        for spec in specs:
            name = spec.name
            if name in known or self._already_failed(name):
                continue
            try:
                preset = self._to_preset(spec)
                prompt = self._load_prompt(preset)
            except Exception as err:  # a bad folder must not stop the others
                self._report(name, str(err))
                continue
            self._failed.pop(name, None)
            _LOGGER.info("New cloned voice %r picked up from %s", name, self.voices_dir / name)
            found.append(NewVoice(preset, prompt))
        return found

    def _already_failed(self, name: str) -> bool:
        return self._failed.get(name) == _folder_signature(self.voices_dir / name)

    def _report(self, name: str, message: str) -> None:
        """One error line per failure, not one per scan."""
        if self._already_failed(name):
            return
        self._failed[name] = _folder_signature(self.voices_dir / name)
        _LOGGER.error("Voice folder %s skipped: %s", self.voices_dir / name, one_line(message))

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _folder_signature(folder: Path) -> float:
    """Latest modification time in a voice folder (changes when a file is fixed)."""
    try:
        return max([folder.stat().st_mtime] + [p.stat().st_mtime for p in folder.iterdir()])
    except OSError:
        return 0.0
