#!/usr/bin/env python3
"""Where the GPU memory of one engine goes, stage by stage (the GPU check calls this).

    python -m benchmarks.gpu_memory --model-dir /tmp/ov-gpu/model --precision fp16
    python -m benchmarks.gpu_memory --model-dir tests/fixtures/models/tiny --device cpu

Method: this process's device memory (NVML's per-process figure from ``nvidia-ml-py``
when importable, else ``nvidia-smi --query-compute-apps``, else the whole device's
``memory.used``; on the CPU the resident set) read after each stage, the difference to
the stage before printed beside it:

1. ``context``: the CUDA context and the provider's handles (a one-node session);
2. each graph's session alone (embeddings with the text table, backbone, vocoder,
   scoring with the audio heads), loaded one at a time, then all released;
3. the engine (``Engine.load``), then its warm-up one length bucket at a time (each
   bucket's CUDA graph capture and buffers; ``--rows`` more row counts), the vocoder's
   probe included;
4. ``--requests`` requests (mixed short replies, single and in batches of 8), read at
   the half and at the end: flat when the second half adds nothing.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import shutil
import subprocess
import time
from typing import Any

import numpy as np

from wyoming_omnivoice import DecodeOptions, Engine, SynthesisRequest
from wyoming_omnivoice.engine.runtime.onnx_sessions import Graph, choose_providers
from wyoming_omnivoice.engine.store.model_files import ModelPaths

TEXTS = ("The living room lights are now turned on.", "Turn on the heating in the bedroom.",
         "The front door is locked.", "It will rain tomorrow afternoon.",
         "Timer set for ten minutes.", "The garage door is closed.",
         "Good night, all lights are off.", "The kitchen is twenty one degrees.")


def _nvml_mib() -> float | None:
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        for proc in pynvml.nvmlDeviceGetComputeRunningProcesses(handle):
            if proc.pid == os.getpid() and proc.usedGpuMemory is not None:
                return float(proc.usedGpuMemory) / 2**20
        return 0.0
    except Exception:  # NVML present but not usable here (container pid namespace)
        return None


def _smi_mib() -> tuple[float, str] | None:
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                              "--format=csv,noheader,nounits"], capture_output=True,
                             text=True, timeout=10, check=True).stdout
        for line in out.splitlines():
            pid, used = (part.strip() for part in line.split(","))
            if int(pid) == os.getpid():
                return float(used), "nvidia-smi process"
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used",
                              "--format=csv,noheader,nounits", "-i", "0"],
                             capture_output=True, text=True, timeout=10, check=True).stdout
        return float(out.split()[0]), "nvidia-smi device total"
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def used_mib(device: str) -> tuple[float, str]:
    """(MiB, what was read)."""
    if device == "cuda":
        found = _nvml_mib()
        if found is not None:
            return found, "NVML process"
        smi = _smi_mib()
        if smi is not None:
            return smi
        return float("nan"), "no NVML, no nvidia-smi"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return rss, "peak RSS (CPU)"


class Ledger:
    """Readings after each stage, printed as they come."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.last, source = used_mib(device)
        self.rows: list[tuple[str, float, float]] = []
        print(f"memory source: {source}; start {self.last:.0f} MiB", flush=True)

    def mark(self, stage: str) -> float:
        now, _ = used_mib(self.device)
        delta = now - self.last
        self.rows.append((stage, now, delta))
        print(f"  {stage:<44} {now:9.0f} MiB  {delta:+8.0f}", flush=True)
        self.last = now
        return now


def _context_session(providers: Any) -> Any:
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "ctx",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=list(providers.providers))
    session.run(None, {"x": np.zeros(1, np.float32)})
    return session


def memory_stages(model_dir: str, device_name: str, precision: str, requests: int,
                  rows: list[int], steps: int) -> Engine:
    """Print the stages (see the module doc); returns the engine, warmed and used."""
    started = time.perf_counter()
    providers = choose_providers(device_name)
    device = providers.device
    ledger = Ledger(device)
    keep: list[Any] = [_context_session(providers)]
    ledger.mark("context (CUDA context, provider handles)")
    paths = ModelPaths.from_dir(model_dir)
    print("sessions alone (published files; the engine's backbone is the prepared one):")
    for label, path in (("embeddings (text table)", paths.embeddings),
                        ("vocoder", paths.vocoder), ("heads graph", paths.heads),
                        ("backbone (published fp32)", paths.backbone)):
        keep.append(Graph(path, providers, label=label))
        ledger.mark(f"+ {label}")
    del keep[1:]
    gc.collect()
    ledger.mark("sessions released")
    engine = Engine.load(model_dir, device=device_name, precision=precision)
    ledger.mark(f"engine loaded ({engine.precision}, CUDA graphs "
                f"{getattr(engine.decoder.backbone, 'cuda_graph', False)})")
    prompt = engine.prompts.build("Warm up.", num_target=8, language=None, instruct=None)
    buckets = engine.decoder.buckets or ()
    for count in (1, *rows):
        for bucket in buckets[:5]:
            if engine.decoder.warm_up(prompt, (bucket,), rows=count):
                ledger.mark(f"warm-up rows {count} bucket {bucket}")
    calls = engine.vocoder_runner.warm_up(max(rows, default=1))
    ledger.mark(f"vocoder warm-up ({calls} calls, bucketed {engine.vocoder_runner.active})")
    options = DecodeOptions(num_step=steps)
    half = requests // 2
    for index in range(requests):
        if index % 4 == 3:
            engine.synthesize_batch([SynthesisRequest(text=TEXTS[(index + i) % len(TEXTS)],
                                                      seed=index + i) for i in range(8)],
                                    options=options)
        else:
            engine.synthesize(TEXTS[index % len(TEXTS)], options=options, seed=index)
        if index + 1 in (half, requests):
            ledger.mark(f"after {index + 1} requests (every 4th a batch of 8)")
    runner = engine.decoder.runner
    if runner is not None:
        print(f"CUDA graphs held ({len(runner.captured)}, rows x length, at most "
              f"{runner.capture_positions} positions each): {sorted(runner.captured)}")
    grew = ledger.rows[-1][2]
    print(f"flat over the second half: {'yes' if grew <= 64 else 'NO'} ({grew:+.0f} MiB); "
          f"context + engine now {ledger.last:.0f} MiB (target 2560); "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    return engine


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--precision", default="fp16")
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--rows", default="8", help="row counts warmed besides 1")
    parser.add_argument("--steps", type=int, default=16)
    args = parser.parse_args()
    memory_stages(args.model_dir, args.device, args.precision, args.requests,
                  [int(r) for r in args.rows.split(",") if r], args.steps)


if __name__ == "__main__":
    main()
