#!/usr/bin/env python3
"""The fixture matrix: model files in every form we know of, against every backbone variant.

Rows are model folders: the tiny fixture as exported (``fp32-io``), the same with its
embeddings and heads graphs converted to float16 as the published ones were (``fp16-io``,
``tools/fp16io.py``), and the tiny backbone as other export routes write it (``legacy``:
the TorchScript exporter; ``dynamo-plain``: dynamo without onnxscript's optimizer;
``tests/fixtures/models/export_routes/``, from ``tools/export_routes.py``). Columns are the
backbone variants. Each cell: prepared or not (and why not), the patterns the preparation
found (rotary tables, RMSNorm chains fused, int8 MatMul weights, any pattern missing), and
agreement with the exact decode of ``fp32-io``: the relative difference of the backbone's
hidden states on a padded two-row input, and the share of cells of a one-step decode (three
prompts) whose codes equal the exact decode's.

    python -m benchmarks.export_matrix [--routes DIR]   # DIR: more route folders
"""

from __future__ import annotations

import argparse
import logging
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np

REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "tests" / "fixtures" / "models" / "tiny"
ROUTES = REPO / "tests" / "fixtures" / "models" / "export_routes"
VARIANTS = ("published", "fp32", "int8", "fp16", "fp32-fused", "fp16-fused")
TEXTS = ("Turn on the kitchen lights, please.", "Good night.",
         "The temperature outside is mild today.")
BACKBONE = "llm_backbone_fp32.onnx"


def model_folders(work: Path, extra: Path | None) -> dict[str, Path]:
    import sys

    sys.path.insert(0, str(REPO))
    from tools.fp16io import make_fp16io_dir

    folders = {"fp32-io": work / "fp32-io"}
    shutil.copytree(TINY, folders["fp32-io"], ignore=shutil.ignore_patterns("prepared"))
    folders["fp16-io"] = make_fp16io_dir(TINY, work / "fp16-io")
    sources = sorted(ROUTES.iterdir()) + (sorted(extra.iterdir()) if extra else [])
    for source in sources:
        folder = work / source.name
        if folder.exists():
            continue
        shutil.copytree(TINY, folder, ignore=shutil.ignore_patterns("prepared", BACKBONE + "*"))
        for path in source.glob(BACKBONE + "*"):
            shutil.copy(path, folder / path.name)
        folders[source.name] = folder
    return folders


def hidden_states(engine) -> np.ndarray:
    from wyoming_omnivoice.engine.forward.row_check import padded_pair

    embeds, mask, _ = padded_pair(engine.hidden_size)
    return engine.decoder.run_backbone(SimpleNamespace(mask=mask), embeds)


def first_step(engine) -> list[np.ndarray]:
    from wyoming_omnivoice import DecodeOptions

    options = DecodeOptions(num_step=1, position_temperature=0.0)
    return [engine.generate_codes(text, seed=1, options=options) for text in TEXTS]


def cell(folder: Path, variant: str, reference: tuple[np.ndarray, list[np.ndarray]]
         ) -> dict[str, str]:
    from wyoming_omnivoice import Engine
    from wyoming_omnivoice.engine.offline.prepare import prepare_backbone
    from wyoming_omnivoice.engine.store.prepared_store import NotPreparable

    patterns = "-"
    if variant != "published":
        try:
            info = prepare_backbone(folder, variant).info
        except NotPreparable as err:
            why = str(err).split(": ", 1)[-1]
            return {"prepared": "no", "patterns": why[:70], "hidden": "", "codes": ""}
        found = [f"rot {info['rotary_tables']}", f"norm {info['rms_norms_fused']}"]
        if "int8_matmuls" in info:
            found.append(f"mm {info['int8_matmuls']}")
        found += [f"NO {name}" for name in info.get("patterns_missing", {})]
        patterns = ", ".join(found)
    engine = Engine.load(folder, device="cpu", precision=variant)
    hidden, codes = reference
    got = hidden_states(engine)
    relative = float(np.linalg.norm(got - hidden) / np.linalg.norm(hidden))
    steps = first_step(engine)
    agree = np.mean([float((a == b).mean()) for a, b in zip(steps, codes, strict=True)])
    rows = "" if engine.row_check.ok else " (one row per forward)"
    return {"prepared": "yes" + rows, "patterns": patterns, "hidden": f"{relative:.1e}",
            "codes": f"{agree:.3f}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--routes", type=Path, help="more folders, each with a backbone "
                        "exported another way (tools/export_routes.py --out DIR)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    from wyoming_omnivoice import Engine

    with tempfile.TemporaryDirectory() as tmp:
        folders = model_folders(Path(tmp), args.routes)
        exact = Engine.load(folders["fp32-io"], device="cpu", precision="published")
        reference = (hidden_states(exact), first_step(exact))
        print("| model files | variant | prepared | patterns found | hidden vs fp32 | "
              "step-1 codes = fp32 |")
        print("|---|---|---|---|---|---|")
        for name, folder in folders.items():
            for variant in VARIANTS:
                result = cell(folder, variant, reference)
                print(f"| {name} | {variant} | {result['prepared']} | {result['patterns']} "
                      f"| {result['hidden']} | {result['codes']} |", flush=True)


if __name__ == "__main__":
    main()
