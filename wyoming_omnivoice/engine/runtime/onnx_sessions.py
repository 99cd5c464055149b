"""onnxruntime sessions: provider choice, I/O contract checks and dtype casting.

Every graph is wrapped in a :class:`Graph` that finds its inputs and outputs by name, reads
their element types from the session and casts float16 <-> float32 at the boundary, so both
the published fp16 graphs and fp32 exports work with the same calling code.
"""

from __future__ import annotations

import ctypes
import gc
import logging
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wyoming_omnivoice.engine.runtime.interrupt import armed
from wyoming_omnivoice.engine.store.external_data import linked_external_data
from wyoming_omnivoice.engine.store.model_files import ModelError

_LOGGER = logging.getLogger(__name__)

CUDA_PROVIDER = "CUDAExecutionProvider"
CPU_PROVIDER = "CPUExecutionProvider"
DEVICES = ("auto", "cuda", "cpu")

_ORT_TO_NUMPY = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(double)": np.float64,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(bool)": np.bool_,
}


def import_onnxruntime() -> Any:
    """Import onnxruntime with an install hint when it is missing."""
    try:
        import onnxruntime
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ModelError(
            "onnxruntime is not installed. Install wyoming-omnivoice with the [gpu] extra on a "
            "CUDA host or the [cpu] extra elsewhere, e.g. pip install 'wyoming-omnivoice[cpu]'."
        ) from err
    return onnxruntime


@dataclass(frozen=True)
class ProviderChoice:
    """The execution providers handed to onnxruntime, and the device they mean."""

    device: str  # "cuda" or "cpu"
    providers: tuple[Any, ...]

    def with_cuda_options(self, **options: str) -> ProviderChoice:
        """The same choice with extra CUDA provider options (no change on CPU)."""
        return ProviderChoice(self.device, tuple(
            (CUDA_PROVIDER, {**p[1], **options}) if provider_name(p) == CUDA_PROVIDER else p
            for p in self.providers
        ))


def cuda_provider_options(*, allow_tf32: bool = False) -> dict[str, str]:
    """CUDA provider options. TF32 is off unless allowed: onnxruntime enables it by default,
    and TF32 matrix products keep 10 mantissa bits, so "fp32" would not be exact."""
    return {
        # Heuristic search avoids cuDNN's slow exhaustive benchmarking at session start.
        "cudnn_conv_algo_search": "HEURISTIC",
        # Each session's arena grows by what a run asks, not to the next power of two.
        "arena_extend_strategy": "kSameAsRequested",
        # Conv workspaces (vocoder, reference encoders) capped at cuDNN's 32 MiB default
        # instead of as much as the fastest algorithm wants (onnxruntime's default since
        # 1.14 is the maximum): kept by the arena for the life of the session.
        "cudnn_conv_use_max_workspace": "0",
        "use_tf32": "1" if allow_tf32 else "0",
    }


def choose_providers(device: str, *, allow_tf32: bool = False) -> ProviderChoice:
    """Map the user's ``device`` to onnxruntime providers (CUDA is verified per session).

    ``allow_tf32`` lets the CUDA provider multiply fp32 matrices in TF32 (faster on
    Ampere and later, not exact)."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    ort = import_onnxruntime()
    available = ort.get_available_providers()
    if device == "cpu":
        return ProviderChoice("cpu", (CPU_PROVIDER,))
    if CUDA_PROVIDER in available:
        _preload_cuda_libraries(ort)
    if CUDA_PROVIDER not in available:
        if device == "cuda":
            raise ModelError(
                "device 'cuda' was requested but this onnxruntime has no CUDA provider "
                f"(available: {', '.join(available)}). On an NVIDIA host, swap onnxruntime for "
                "onnxruntime-gpu (in a clone: pip uninstall -y onnxruntime && pip install -e "
                "'.[gpu]') and make sure the CUDA 13 and cuDNN 9 libraries are found, or use "
                "--device cpu."
            )
        return ProviderChoice("cpu", (CPU_PROVIDER,))
    return ProviderChoice(
        "cuda", ((CUDA_PROVIDER, cuda_provider_options(allow_tf32=allow_tf32)), CPU_PROVIDER))


def _preload_cuda_libraries(ort: Any) -> None:
    """Load the CUDA/cuDNN libraries of the nvidia-* pip packages (onnxruntime-gpu[cuda]).

    Without this a pip-only install (no system CUDA) cannot find them.
    """
    preload = getattr(ort, "preload_dlls", None)
    if preload is None:
        return
    try:
        preload()
    except Exception as err:  # the system libraries may still be found
        _LOGGER.debug("onnxruntime.preload_dlls() failed: %s", err)


#: How long an idle intra-op thread spins before it sleeps (onnxruntime >= 1.27).
SPIN_US = 200


def session_options(*, threads: int | None = None) -> Any:
    ort = import_onnxruntime()
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # Worker threads spin briefly between operators (woken threads cost a few percent of a
    # forward), but only briefly: sessions run one after another in the decode loop, and
    # threads still spinning for one session steal the cores of the next (with unbounded
    # spinning a 135 ms forward took ~200 ms). 200 us: 3-4 % faster decodes than no spinning.
    options.add_session_config_entry("session.intra_op.allow_spinning", "1")
    options.add_session_config_entry("session.intra_op.spin_duration_us", str(SPIN_US))
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    # Every request has its own sequence length. A memory pattern is planned and kept per
    # input shape, so with free-form text they pile up for the life of the server.
    options.enable_mem_pattern = False
    if threads:
        options.intra_op_num_threads = threads
    options.log_severity_level = 3
    return options


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: Any  # numpy dtype class
    shape: tuple[Any, ...]


class Graph:
    """One onnxruntime session with name-based I/O and dtype casting at the boundary."""

    def __init__(
        self,
        path: Path,
        providers: ProviderChoice,
        *,
        model_bytes: bytes | None = None,
        label: str | None = None,
        threads: int | None = None,
        cuda_graph: bool = False,
        disabled_optimizers: Sequence[str] = (),
        external_data_dir: Path | None = None,
        record_placement: bool = False,
        prepack: bool = True,
    ) -> None:
        """``model_bytes`` replaces the file's graph (``path`` still names it in errors);
        ``external_data_dir`` is where such a graph's external weights lie. ``prepack``
        False keeps onnxruntime from copying the weights into its packed layouts: they stay
        in its read-only memory map of the weights file (for a one-off run, such as a
        probe; slower runs)."""
        ort = import_onnxruntime()
        self.path = path
        self.label = label or path.name
        # Weights behind symbolic links (a Hugging Face cache snapshot): read from where
        # the links lead, the user's folder unchanged.
        redirected = linked_external_data(
            path, model_bytes, external_data_dir if external_data_dir is not None
            else path.parent)
        if redirected is not None:
            model_bytes, external_data_dir = redirected
        source: Any = model_bytes if model_bytes is not None else str(path)
        provider_list = list(providers.providers)
        #: Run options of plain (non-bound) runs: with CUDA graphs on, they must not capture.
        self.run_options: Any = None
        if cuda_graph and providers.device == "cuda":
            provider_list = list(providers.with_cuda_options(enable_cuda_graph="1").providers)
            self.run_options = ort.RunOptions()
            self.run_options.add_run_config_entry("gpu_graph_id", "-1")
        self.cuda_graph = self.run_options is not None
        extra: dict[str, Any] = {}
        if disabled_optimizers:
            extra["disabled_optimizers"] = list(disabled_optimizers)
        options = session_options(threads=threads)
        if record_placement:
            options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
        if not prepack:
            options.add_session_config_entry("session.disable_prepacking", "1")
        if providers.device == "cuda":
            # Weights straight from the device allocator, outside the arena: the arena then
            # holds working memory only (what shrinkage can give back), never weights.
            options.add_session_config_entry(
                "session.use_device_allocator_for_initializers", "1")
        if external_data_dir is not None:
            options.add_session_config_entry(
                "session.model_external_initializers_file_folder_path", str(external_data_dir))
        try:
            self.session = ort.InferenceSession(
                source, sess_options=options, providers=provider_list, **extra,
            )
        except Exception as err:
            if self.cuda_graph:
                raise CudaGraphUnavailable(
                    f"onnxruntime cannot capture CUDA graphs of {self.label}: {err}") from err
            raise ModelError(
                f"Could not load {path}: {err}. The file may be truncated or not an ONNX graph; "
                "delete it and let the server download it again."
            ) from err
        active = self.session.get_providers()
        self.device = "cuda" if active and active[0] == CUDA_PROVIDER else "cpu"
        if self.run_options is None and self.device == "cpu":
            self.run_options = shrinking_run_options()
        #: Run options of the CPU runs a background step makes (:mod:`.interrupt`).
        self._interruptible: Any = None
        self.inputs = {i.name: _spec(i) for i in self.session.get_inputs()}
        self.outputs = {o.name: _spec(o) for o in self.session.get_outputs()}

    def require(self, inputs: Sequence[str], outputs: Sequence[str], *, exact: bool) -> None:
        """Raise ModelError unless the graph has these inputs/outputs (``exact``: no others)."""
        missing_in = [n for n in inputs if n not in self.inputs]
        missing_out = [n for n in outputs if n not in self.outputs]
        extra_in = sorted(set(self.inputs) - set(inputs)) if exact else []
        if missing_in or missing_out or extra_in:
            problems = []
            if missing_in:
                problems.append(f"missing inputs {missing_in}")
            if missing_out:
                problems.append(f"missing outputs {missing_out}")
            if extra_in:
                problems.append(f"unexpected inputs {extra_in}")
            raise ModelError(
                f"{self.path} does not have the expected interface ({'; '.join(problems)}). "
                f"It has inputs {sorted(self.inputs)} and outputs {sorted(self.outputs)}; "
                f"expected inputs {list(inputs)} and outputs {list(outputs)}."
            )

    def cast_inputs(self, feeds: Mapping[str, Any]) -> dict[str, Any]:
        cast: dict[str, Any] = {}
        for name, value in feeds.items():
            want = self.inputs[name].dtype
            if isinstance(value, np.ndarray) and value.dtype != want:
                value = value.astype(want)
            cast[name] = value
        return cast

    def run(self, feeds: Mapping[str, Any], outputs: Sequence[str]) -> list[np.ndarray]:
        """Run with numpy feeds; float outputs come back as float32.

        Inside a background step on the CPU (:func:`.interrupt.arm`) the run stops when a
        request arrives, raising :class:`.interrupt.Interrupted`."""
        interrupt = armed() if self.device == "cpu" else None
        if interrupt is None:
            results = self.session.run(list(outputs), self.cast_inputs(feeds), self.run_options)
        else:
            if self._interruptible is None:
                self._interruptible = shrinking_run_options()
            with interrupt.running(self._interruptible) as options:
                results = self.session.run(list(outputs), self.cast_inputs(feeds), options)
        return [
            r.astype(np.float32) if r.dtype == np.float16 else r for r in results
        ]


def shrinking_run_options() -> Any:
    """CPU runs that hand their arena's unused chunks back when they end: a batch of 8
    (warm-up, anchors, a busy moment) otherwise leaves its working memory reserved for the
    life of the server (0.97 -> 0.78 GB resident after a batch of 8 at the real size, with
    :func:`return_freed_memory`; a one-sentence reply measured no slower)."""
    options = import_onnxruntime().RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    return options


def return_freed_memory() -> None:
    """Hand freed heap back to the system: glibc keeps it otherwise (after preparing a
    backbone, after a large batch)."""
    gc.collect()
    with suppress(OSError, AttributeError):  # not glibc (musl, macOS): nothing to do
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def provider_name(provider: Any) -> str:
    return str(provider[0]) if isinstance(provider, tuple) else str(provider)


class CudaGraphUnavailable(ModelError):
    """onnxruntime refused to create a session with CUDA graph capture."""


def node_placement(session: Any) -> list[tuple[str, str, str]]:
    """``(provider, op_type, node name)`` of every node of a session made with
    ``session.record_ep_graph_assignment_info`` (see :func:`session_options`)."""
    placed: list[tuple[str, str, str]] = []
    for subgraph in session.get_provider_graph_assignment_info():
        placed.extend((subgraph.ep_name, node.op_type, node.name)
                      for node in subgraph.get_nodes())
    return placed


def _spec(node: Any) -> TensorSpec:
    dtype = _ORT_TO_NUMPY.get(node.type)
    if dtype is None:
        dtype = np.float32
    return TensorSpec(node.name, dtype, tuple(node.shape))
