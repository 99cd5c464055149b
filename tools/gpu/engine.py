"""Engine helpers of the GPU check: loading with the options this engine has, session
providers, node placement of the backbone, bound forwards with CUDA graphs, GPU memory."""

from __future__ import annotations

import inspect
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice import Engine
from wyoming_omnivoice.engine.offline import prepare as prepare_module
from wyoming_omnivoice.engine.runtime import graph_set as graphs_module
from wyoming_omnivoice.engine.runtime import onnx_sessions as sessions
from wyoming_omnivoice.engine.runtime import precision as precision_module

#: Graph ids of the check's own captures, far from the engine's bucket ids.
GRAPH_ID_BASE = 9000
#: Backbone precisions the check looks for, reference first (issue 30: the fused ones come
#: from another branch; any other GPU variant the engine names is measured too).
EXPECTED_PRECISIONS = ("fp32", "fp16", "fp16-fused", "fp32-fused")
#: Prepared variants that do not run on a GPU, and the prefix of those that run only there.
CPU_ONLY = ("int8",)
GPU_ONLY_PREFIX = "fp16"


def detect_precisions(device: str = "cuda", report: bool = True) -> list[str]:
    """The backbone precisions this engine version prepares, for ``device``: those of
    ``wyoming_omnivoice.engine.runtime.precision.VARIANTS`` (or, without that list, the expected
    names ``check_precision`` accepts). The expected ones it lacks are printed "not present"."""
    variants = getattr(precision_module, "VARIANTS", None)
    if variants is None:
        variants = []
        for name in EXPECTED_PRECISIONS:
            try:
                precision_module.check_precision(name)
                variants.append(name)
            except ValueError:
                pass
    found = [p for p in EXPECTED_PRECISIONS if p in variants]
    found += [p for p in variants if p not in found and p not in CPU_ONLY]
    if device != "cuda":  # the CPU provider has no fp16 matrix products
        found = [p for p in found if not p.startswith(GPU_ONLY_PREFIX)]
    if report:
        for name in EXPECTED_PRECISIONS:
            if name not in found:
                print(f"precision {name}: not present in this engine", flush=True)
    return found


def available_providers() -> list[str]:
    import onnxruntime as ort

    return list(ort.get_available_providers())


def load_engine(model_dir: Path, device: str, precision: str, *,
                cuda_graph: bool | None = None, allow_tf32: bool = False) -> Engine:
    """``Engine.load`` with the options this engine version has; an option it lacks raises
    (so the check reports it) unless it is the default."""
    accepted = inspect.signature(Engine.load).parameters
    kwargs: dict[str, Any] = {"precision": precision}
    if cuda_graph is not None:
        kwargs["cuda_graph"] = cuda_graph
    if allow_tf32:
        kwargs["allow_tf32"] = True
    missing = [k for k in kwargs if k not in accepted]
    if missing:
        raise RuntimeError(f"Engine.load has no option {missing} in this version")
    return Engine.load(model_dir, device=device, **kwargs)


def engine_sessions(engine: Engine) -> dict[str, Any]:
    """The onnxruntime sessions of an engine, by label."""
    found: dict[str, Any] = {}
    for name, value in vars(engine.graphs).items():
        if hasattr(value, "session"):
            found[name] = value.session
        if isinstance(value, dict):
            for key, graph in value.items():
                graph = getattr(graph, "graph", graph)  # a step session's Graph
                if hasattr(graph, "session"):
                    found[f"{name}{key}"] = graph.session
    found["decoder.backbone"] = engine.decoder.backbone.session
    return found


def session_providers(engine: Engine) -> dict[str, list[str]]:
    return {label: list(s.get_providers()) for label, s in engine_sessions(engine).items()}


def backbone_source(engine: Engine) -> tuple[Path, dict[str, Any]]:
    """The file and session source the engine's backbone was made from (as load_backbone)."""
    precision = getattr(engine, "precision", "published")
    if precision in getattr(precision_module, "VARIANTS", ()):
        prepared = prepare_module.prepare_backbone(engine.paths, precision)
        return prepared.path, {"model_bytes": prepared.model_bytes(),
                               "external_data_dir": prepared.weights_dir}
    path = engine.paths.backbone
    rewritten = graphs_module._backbone_without_nan_guards(path)
    if rewritten is None:
        return path, {}
    return path, {"model_bytes": rewritten, "external_data_dir": path.parent}


def backbone_placement(engine: Engine) -> list[tuple[str, str, str]] | str:
    """Node placement of a session made like the engine's backbone, without capture."""
    try:
        path, source = backbone_source(engine)
        graph = sessions.Graph(path, engine.graphs.providers, record_placement=True,
                               **source)
        return sessions.node_placement(graph.session)
    except Exception as err:
        return f"placement unavailable: {type(err).__name__}: {err}"


class BoundForward:
    """One backbone forward shape bound to device buffers, replayed as a CUDA graph when the
    session was made with ``enable_cuda_graph`` (the engine's backbone with CUDA graphs)."""

    def __init__(self, graph: Any, length: int, hidden: int, rows: int = 1) -> None:
        import onnxruntime as ort

        self.graph = graph
        device = "cuda" if graph.device == "cuda" else "cpu"
        spec = graph.inputs["inputs_embeds"]
        rng = np.random.default_rng(length)
        embeds = rng.standard_normal((rows, length, hidden)).astype(spec.dtype)
        mask = np.ones((rows, 1, length, length), dtype=bool)
        self.feeds = {"inputs_embeds": embeds, "attention_mask": mask}
        self.inputs = {k: ort.OrtValue.ortvalue_from_numpy(v, device, 0)
                       for k, v in self.feeds.items()}
        out_dtype = graph.outputs["hidden_states"].dtype
        self.output = ort.OrtValue.ortvalue_from_shape_and_type(
            [rows, length, hidden], out_dtype, device, 0)
        self.binding = graph.session.io_binding()
        for name, value in self.inputs.items():
            self.binding.bind_ortvalue_input(name, value)
        self.binding.bind_ortvalue_output("hidden_states", self.output)
        self.options = ort.RunOptions()
        self.captured = bool(getattr(graph, "cuda_graph", False))
        if self.captured:
            self.options.add_run_config_entry("gpu_graph_id", str(GRAPH_ID_BASE + length))

    def run(self) -> float:
        start = time.perf_counter()
        self.graph.session.run_with_iobinding(self.binding, self.options)
        self.binding.synchronize_outputs()
        return time.perf_counter() - start

    def result(self) -> np.ndarray:
        return np.asarray(self.output.numpy(), dtype=np.float32)

    def plain(self) -> np.ndarray:
        """The same forward without binding or capture (reference for the replay)."""
        (out,) = self.graph.run(self.feeds, ["hidden_states"])
        return np.asarray(out, dtype=np.float32)


def time_forward(graph: Any, length: int, hidden: int, repeats: int) -> dict[str, Any]:
    """Median ms of bound forwards at ``length``; with CUDA graphs, whether capture worked
    and the replay equals a plain run."""
    figures: dict[str, Any] = {"length": length, "cuda_graph": False}
    try:
        bound = BoundForward(graph, length, hidden)
        for _ in range(3):  # onnxruntime captures after its warm-up runs
            bound.run()
        times = [bound.run() for _ in range(repeats)]
        figures["ms"] = 1000 * statistics.median(times)
        if bound.captured:
            ref = bound.plain()
            err = float(np.abs(bound.result() - ref).max() / max(np.abs(ref).max(), 1e-30))
            figures.update(cuda_graph=True, replay_rel_err=err, replay_ok=err < 1e-3)
    except Exception as err:
        figures.update(ms=float("nan"), error=f"{type(err).__name__}: {err}")
    return figures


def gpu_used_mib() -> float:
    """Memory in use on GPU 0 (whole device: the check is the only user there), NaN without
    nvidia-smi."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i",
             "0"], capture_output=True, text=True, timeout=10, check=True).stdout
        return float(out.split()[0])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return float("nan")
