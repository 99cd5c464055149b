"""A model folder whose embeddings and heads graphs take and give float16, as published.

The published root graphs went through the exporter's ``OnnxFloatToFloat16`` pass with its
default settings (``keep_io_types=False``): their weights, their float inputs and outputs
and every float tensor in between are float16. That pass is onnxconverter-common's
``convert_float_to_float16``; it is used here as it is (the same function, the same
defaults), so the fixture is made the way the published files were, not by an imitation.

Only onnx and onnxconverter-common are needed (no torch): the test suite builds this folder
from ``tests/fixtures/models/tiny`` in a temporary directory (a fraction of a second), and
nothing of it is committed.

    python -m tools.fp16io SRC_DIR DST_DIR
"""

from __future__ import annotations

import argparse
import shutil
import warnings
from pathlib import Path

EMBEDDINGS = "audio_embeddings_encoder.onnx"
HEADS = "audio_heads_decoder.onnx"


def convert_graph(src: Path, dst: Path) -> None:
    """``src`` through ``convert_float_to_float16`` with the pass's defaults into ``dst``
    (external data, when ``src`` has it, beside ``dst`` as ``<name>.data``)."""
    import onnx
    from onnxconverter_common import float16

    model = onnx.load(str(src), load_external_data=True)
    with warnings.catch_warnings():  # "truncated to 1e-07": the pass's clipping, as published
        warnings.simplefilter("ignore", UserWarning)
        converted = float16.convert_float_to_float16(model)
    dst.parent.mkdir(parents=True, exist_ok=True)
    data = dst.with_name(dst.name + ".data")
    if data.exists():
        data.unlink()
    if src.with_name(src.name + ".data").exists():
        onnx.save_model(converted, str(dst), save_as_external_data=True,
                        all_tensors_to_one_file=True, location=data.name, size_threshold=1024)
    else:
        onnx.save_model(converted, str(dst))
    onnx.checker.check_model(str(dst))


def make_fp16io_dir(src: Path, dst: Path) -> Path:
    """Copy the model folder ``src`` to ``dst`` (prepared backbones left out) with its
    embeddings and heads graphs converted to float16 like the published ones."""
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(
        "prepared", EMBEDDINGS + "*", HEADS + "*"))
    for name in (EMBEDDINGS, HEADS):
        convert_graph(src / name, dst / name)
    return dst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src", type=Path)
    parser.add_argument("dst", type=Path)
    args = parser.parse_args()
    make_fp16io_dir(args.src, args.dst)
    print(f"wrote {args.dst}")


if __name__ == "__main__":
    main()
