"""How this server makes voice anchors: canonical (the same person on every replica) when it
can, else in its serving mode, said in one line.

- ``--canonical-anchors never``: serving-precision anchors, marked (a canonical file in the
  data dir is still preferred when there is one).
- The serving backbone is fp32 (the CUDA default, or ``--precision fp32``): the serving
  engine makes the canonical anchors itself, at 32 steps.
- Otherwise a second engine with the fp32 backbone makes them. On a CPU its weights stay in
  onnxruntime's read-only memory map (``prepack=False``): measured at the real size, about
  0.1-0.3 GB of anonymous memory on top of the serving engine, and file-backed pages of the
  1.76 GB weights file that the kernel can drop, at no loss of speed against packed weights
  and with the same codes (docs/voices.md, "The same person on every node"). It is only
  loaded when an anchor must be made, so where there is no room for it
  (:func:`canonical_need` against
  :func:`wyoming_omnivoice.model.memory_room.memory_room`) the server says so once and
  makes serving anchors.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from wyoming_omnivoice.anchors.maker import AnchorMaker, serving_maker
from wyoming_omnivoice.model.memory_room import GB, MemoryRoom, memory_room

if TYPE_CHECKING:
    from wyoming_omnivoice import DecodeOptions, Engine

_LOGGER = logging.getLogger(__name__)

CANONICAL_CHOICES = ("auto", "never")
#: Anonymous memory of the mapped fp32 anchor engine per byte of the fp32 backbone file
#: (0.27 GB for a whole process holding only it at the real size, 1.76 GB of weights).
MAPPED_ANON_SHARE = 0.15
#: The weights file read through the map, which must stay resident: inside a limit that
#: cannot hold it the kernel drops and re-reads its pages on every step (measured at the
#: real size inside 1 GB: 100 s for an anchor instead of 20 s); plus a tenth for the other
#: file pages the second engine reads (embedding rows, heads).
MAPPED_RESIDENT_SHARE = 1.1


def _backbone_bytes(model_dir: Path) -> int:
    from wyoming_omnivoice.engine import BACKBONE

    path = model_dir / BACKBONE
    return sum(candidate.stat().st_size for candidate in
               (path, path.with_name(path.name + ".data")) if candidate.is_file())


def canonical_need(model_dir: Path) -> int:
    """Bytes the fp32 anchor engine adds to a CPU server: its anonymous memory and the
    weights it reads through the memory map."""
    size = _backbone_bytes(model_dir)
    return int(size * (MAPPED_ANON_SHARE + MAPPED_RESIDENT_SHARE))


def _own_anonymous() -> int:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def anchor_maker(choice: str, engine: Engine, options: DecodeOptions, model_dir: Path,
                 data_dir: Path, *, allow_tf32: bool = False,
                 room: MemoryRoom | None = None) -> AnchorMaker:
    """The anchor maker of a server: ``choice`` is ``--canonical-anchors``.

    On a CPU a batch of anchors costs about its anchors' time added up, and a request that
    arrives meanwhile waits for the whole batch: every maker there builds one at a time."""
    device = engine.device
    one_at_a_time = 1 if device == "cpu" else None
    if choice == "never":
        return serving_maker(engine, options, allow_tf32=allow_tf32,
                             fallback="--canonical-anchors never", max_batch=one_at_a_time)
    if engine.precision in ("fp32", "published") and not allow_tf32:
        return serving_maker(engine, options, max_batch=one_at_a_time)

    def load() -> Engine:
        from wyoming_omnivoice import Engine

        return Engine.load(model_dir, device=device, precision="fp32", cache_dir=data_dir,
                           prepack=device == "cuda")

    if device == "cpu":
        room = room if room is not None else memory_room()
        if room is not None:
            need = canonical_need(model_dir)
            left = room.available - _own_anonymous()
            if need > left:
                return serving_maker(
                    engine, options, max_batch=one_at_a_time, fallback=(
                        f"no room for the fp32 backbone of canonical anchors (it needs about "
                        f"{need / GB:.1f} GB more, this process has {max(0, left) / GB:.2f} "
                        f"GB left: {room.source})"))
    return serving_maker(engine, options, load_canonical=load, allow_tf32=allow_tf32,
                         max_batch=one_at_a_time)
