"""Old import paths of modules that moved in 0.2, kept working for one release.

``import wyoming_omnivoice.server.voices`` (say) still works: it warns once with a
``DeprecationWarning`` that names the new path, and gives the module at the new path (the
same module object, so state and ``isinstance`` checks are shared). The finder is installed
by ``wyoming_omnivoice/__init__.py``; drop it and this table in the release after next.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType

#: Old module path -> new module path.
MOVED: dict[str, str] = {
    "wyoming_omnivoice.server.voices": "wyoming_omnivoice.voices.catalog",
    "wyoming_omnivoice.server.voice_config": "wyoming_omnivoice.voices.config",
    "wyoming_omnivoice.server.voice_templates": "wyoming_omnivoice.voices.templates",
    "wyoming_omnivoice.server.ha_languages": "wyoming_omnivoice.voices.ha_languages",
    "wyoming_omnivoice.server.anchors": "wyoming_omnivoice.anchors.cache",
    "wyoming_omnivoice.server.anchor_texts": "wyoming_omnivoice.anchors.texts",
    "wyoming_omnivoice.server.lazy_anchors": "wyoming_omnivoice.anchors.lazy",
    "wyoming_omnivoice.server.cloned_voices": "wyoming_omnivoice.voices.cloned",
    "wyoming_omnivoice.server.voice_assets": "wyoming_omnivoice.voices.assets",
    "wyoming_omnivoice.server.voice_watch": "wyoming_omnivoice.voices.watch",
    "wyoming_omnivoice.server.voice_listing": "wyoming_omnivoice.voices.listing",
    "wyoming_omnivoice.server.manifest": "wyoming_omnivoice.model.manifest",
    "wyoming_omnivoice.server.download": "wyoming_omnivoice.model.download",
    "wyoming_omnivoice.server.verification": "wyoming_omnivoice.model.verification",
    "wyoming_omnivoice.server.hub_access": "wyoming_omnivoice.model.hub_access",
    "wyoming_omnivoice.server.download_help": "wyoming_omnivoice.model.download_help",
    "wyoming_omnivoice.server.file_hash": "wyoming_omnivoice.model.file_hash",
    "wyoming_omnivoice.server.data_dir": "wyoming_omnivoice.model.data_dir",
    "wyoming_omnivoice.server.worker": "wyoming_omnivoice.speech.worker",
    "wyoming_omnivoice.server.request_builder": "wyoming_omnivoice.speech.request_builder",
    "wyoming_omnivoice.server.request_language": "wyoming_omnivoice.speech.request_language",
    "wyoming_omnivoice.server.text_language_id": "wyoming_omnivoice.speech.text_language_id",
    "wyoming_omnivoice.server.determinism": "wyoming_omnivoice.speech.determinism",
    "wyoming_omnivoice.server.warmup": "wyoming_omnivoice.speech.warmup",
    "wyoming_omnivoice.engine.prepare": "wyoming_omnivoice.engine.offline.prepare",
    "wyoming_omnivoice.engine.rotary_table": "wyoming_omnivoice.engine.offline.rotary_table",
    "wyoming_omnivoice.engine.norm_fusion": "wyoming_omnivoice.engine.offline.norm_fusion",
    "wyoming_omnivoice.engine.fp16_calibrate": "wyoming_omnivoice.engine.offline.fp16_calibrate",
    "wyoming_omnivoice.engine.fp16_ranges": "wyoming_omnivoice.engine.offline.fp16_ranges",
    "wyoming_omnivoice.engine.calibration_prompts":
        "wyoming_omnivoice.engine.offline.calibration_prompts",
    "wyoming_omnivoice.engine.graph_rewrite": "wyoming_omnivoice.engine.offline.graph_rewrite",
}


class _MovedModuleLoader(importlib.abc.Loader):
    def __init__(self, new: str) -> None:
        self._new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self._new}; the old path goes in the next "
                      "release", DeprecationWarning, stacklevel=3)
        return importlib.import_module(self._new)

    def exec_module(self, module: ModuleType) -> None:
        # The new module is already executed; re-register it under both names.
        return None


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Resolves the old paths in :data:`MOVED` to the modules at their new paths."""

    def find_spec(self, fullname: str, path: object = None, target: object = None
                  ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedModuleLoader(new))


def install() -> None:
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
