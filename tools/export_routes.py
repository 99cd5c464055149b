"""The tiny backbone exported by other routes than the fixtures' own, for
``benchmarks/export_matrix.py`` (dev virtualenv: torch, transformers, upstream omnivoice).

The fixtures come from ``torch.onnx.export(dynamo=True, optimize=True)`` of one torch
version. The published backbone's torch version and flags are not known, so the engine's
preparation must not depend on how that one route names and orders nodes. Routes:

* ``dynamo``: the fixtures' own route (the same call as ``fixtures_lib/onnx_export.py``),
  with this virtualenv's torch;
* ``dynamo-plain``: dynamo without onnxscript's graph optimizer (``optimize=False``);
* ``legacy``: the TorchScript exporter (``dynamo=False``), which names nodes after the
  module path (``/llm/layers.0/self_attn/...``), folds constants differently and writes
  ``MatMul`` weights as transposed initializers.

    .devenv/bin/python -m tools.export_routes --out bench-out/routes [--routes legacy,...]

Each route writes a full model folder (``OUT/<route>/``): the tiny fixture's files with the
backbone replaced by that route's export of the same seeded weights; the seeded model is
the one ``tools/build_fixtures.py`` builds, so the published-layout files stay the same.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ROUTES = ("dynamo", "dynamo-plain", "legacy")
BACKBONE = "llm_backbone_fp32.onnx"


def export_backbone(module, hidden: int, path: Path, route: str) -> None:
    import onnx
    import torch

    embeds = torch.randn(2, 9, hidden)
    mask = torch.ones(2, 1, 9, 9, dtype=torch.bool)
    names = dict(input_names=["inputs_embeds", "attention_mask"],
                 output_names=["hidden_states"])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with torch.no_grad():
        if route == "legacy":
            torch.onnx.export(
                module, (embeds, mask), str(tmp), dynamo=False, opset_version=18,
                dynamic_axes={"inputs_embeds": {0: "batch", 1: "seq"},
                              "attention_mask": {0: "batch", 2: "seq", 3: "seq"}},
                do_constant_folding=True, **names)
            proto = onnx.load(str(tmp))
            tmp.unlink()
        else:
            batch = torch.export.Dim("batch", min=1, max=1 << 16)
            seq = torch.export.Dim("seq", min=1, max=1 << 16)
            program = torch.onnx.export(
                module, (embeds, mask), dynamo=True, opset_version=18,
                dynamic_shapes=({0: batch, 1: seq}, {0: batch, 2: seq, 3: seq}),
                optimize=route == "dynamo", verbose=False, **names)
            proto = program.model_proto
    for node in proto.graph.node:  # stack traces and doc strings: most of a tiny graph's size
        del node.metadata_props[:]
        node.doc_string = ""
    del proto.graph.value_info[:]
    proto.doc_string = ""
    data = path.with_name(path.name + ".data")
    if data.exists():
        data.unlink()
    onnx.save_model(proto, str(path), save_as_external_data=True,
                    all_tensors_to_one_file=True, location=data.name, size_threshold=1024)
    onnx.checker.check_model(str(path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--routes", default=",".join(ROUTES))
    parser.add_argument("--fixture", type=Path, default=REPO / "tests/fixtures/models/tiny")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "tools"))
    import torch
    from fixtures_lib.omnivoice_graphs import make_export_modules
    from fixtures_lib.torch_models import build_torch_models

    built = build_torch_models("tiny", seed=0)
    module = make_export_modules(built.model)["backbone"]
    hidden = built.model.config.llm_config.hidden_size
    for route in args.routes.split(","):
        if route not in ROUTES:
            parser.error(f"unknown route {route!r} (routes: {', '.join(ROUTES)})")
        folder = args.out / route
        if folder.exists():
            shutil.rmtree(folder)
        shutil.copytree(args.fixture, folder, ignore=shutil.ignore_patterns(
            "prepared", BACKBONE + "*"))
        export_backbone(module, hidden, folder / BACKBONE, route)
        print(f"{route}: {folder} (torch {torch.__version__})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
