#!/usr/bin/env bash
# GPU check (issue 11, item 5): fails unless the engine really runs on CUDA, then prints
# every GPU figure next to its target. Run it first thing whenever a GPU machine is lent.
#
# Here, once (PyPI reachable): bash tools/gpu/wheels.sh   -> local/gpu-kit/call1, call2
# Then two device calls, the second AT ONCE after the first (the machine stays warm ~30 s
# after a call; part 1, the model and call 1's figures live in /tmp there):
#   run(command="bash tools/gpu/check.sh call1", carry=["local/gpu-kit/call1"], timeout_s=480)
#   run(command="bash tools/gpu/check.sh call2", carry=["local/gpu-kit/call2"], timeout_s=480)
# call1 (~5 min): stashes part 1 + small wheels, probes the machine, builds the real-size
#   random model with tools/gpu/model.py (tools/build_fixtures.py's seeded weights, only
#   the graphs the check runs; torch, transformers and onnxscript are there; 2.9 GB of
#   weights cannot travel), prepares the backbone variants on the CPU, and runs upstream
#   PyTorch on the GPU (upstream.py).
# call2 (~4 min): joins the onnxruntime-gpu parts (sha256 per part and whole), then
#   figures.py on CUDA: gates (device, node placement), capture per bucket, forwards,
#   first audio, RTF, memory over 200 requests, agreements, upstream side by side.
# If call2 finds no part 1 (the machine went cold), it says so: rerun call1, then call2.
# Everything printed is also in $OUT (gpu_report.txt, figures.json, upstream.json, call1.log).
#
#   bash tools/gpu/check.sh dry-run [MODEL_DIR]   # here, on CPU: same flow, small counts;
#                                                      # must end "GPU CHECK FAIL" (no CUDA)
set -uo pipefail
cd "$(dirname "$0")/../.."
MODE="${1:-}"
PY="${PYTHON:-python3}"
OUT="${OUT:-$PWD/local/gpu-out}"
WORK="${GPU_WORK:-/tmp/ov-gpu}"
STORE="$WORK/kit"
KIT="${GPU_KIT:-local/gpu-kit}"
MODEL="${GPU_MODEL_DIR:-$WORK/real}"
mkdir -p "$OUT" "$WORK"
START=$(date +%s)

log() { echo "[$(( $(date +%s) - START ))s] $*"; }
step() {  # step SECONDS NAME COMMAND...: with a time limit; returns the command's status
  local limit=$1 name=$2; shift 2
  log "== $name (limit ${limit}s)"
  PYTHONUNBUFFERED=1 timeout "$limit" "$@" 2>&1 | grep --line-buffered -v -E \
    "^\s*$|Warning: .*deprecat|TracerWarning|UserWarning"
  local rc=${PIPESTATUS[0]}
  log "-- $name: exit $rc"
  return "$rc"
}

cuda_libs() {  # the CUDA 13 / cuDNN libraries of the pip nvidia-* packages (torch's)
  local dirs
  dirs=$("$PY" - <<'PYEOF' 2>/dev/null
import glob, os, site, sys
roots = set(site.getsitepackages() + [site.getusersitepackages()] + sys.path)
found = sorted({os.path.dirname(p) for r in roots
                for p in glob.glob(f"{r}/nvidia/**/lib*.so*", recursive=True)})
print(":".join(found))
PYEOF
)
  [ -n "$dirs" ] && export LD_LIBRARY_PATH="$dirs:${LD_LIBRARY_PATH:-}"
}

probe() {
  log "python $("$PY" -V 2>&1 | cut -d' ' -f2) at $(command -v "$PY")"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 || true
  "$PY" - <<'PYEOF' 2>&1
import importlib
for mod in ("numpy", "onnx", "onnxruntime", "onnxscript", "tokenizers", "torch",
            "transformers", "omnivoice", "soundfile", "num2words"):
    try:
        m = importlib.import_module(mod)
        extra = ""
        if mod == "onnxruntime":
            extra = f" {m.get_available_providers()} from {m.__file__}"
        if mod == "torch":
            extra = f" cuda {m.version.cuda} available {m.cuda.is_available()}"
        print(f"  {mod} {getattr(m, '__version__', '?')}{extra}")
    except Exception as err:
        print(f"  {mod}: MISSING ({type(err).__name__}: {err})")
PYEOF
  log "cpus $(nproc), /tmp free $(df -h /tmp | awk 'NR==2 {print $4}')"
}

build_model() {  # the real-size random model, with the torch twin for upstream
  [ -f "$MODEL/llm_backbone_fp32.onnx" ] && { log "model already in $MODEL"; return 0; }
  step "${BUILD_LIMIT:-300}" "build ${PRESET:-real}-size random model (-m tools.gpu.model)" \
    "${TORCH_PY:-$PY}" -m tools.gpu.model --preset "${PRESET:-real}" --out "$MODEL" \
    && return 0
  log "tools/gpu/model.py failed: numpy-only model instead (no upstream side by side)"
  rm -rf "$MODEL"
  step 200 "build random model (-m benchmarks.random_model)" \
    "$PY" -m benchmarks.random_model --out "$MODEL" --layers 28
}

prepare() {  # the backbone variants, made once on the CPU provider (saves GPU minutes)
  step "${PREPARE_LIMIT:-240}" "prepare backbone variants" \
    "$PY" -m tools.gpu.prepare "$MODEL"
}

call1() {
  log "== call 1: kit part 1, model, upstream"
  "$PY" -m tools.gpu.kit stash "$KIT/call1" "$STORE" || return 1
  "$PY" -m tools.gpu.kit unpack-py "$KIT/call1" "$WORK/py" || return 1
  export PYTHONPATH="$WORK/py:$PWD:${PYTHONPATH:-}"
  probe
  build_model || return 1
  prepare
  if [ -d "$MODEL/upstream" ]; then
    step "${UPSTREAM_LIMIT:-240}" "upstream PyTorch on the same weights" \
      "$PY" -m tools.gpu.upstream "$MODEL" --device "${DEVICE:-cuda}" \
      --repeats "${REPEATS:-20}" --steps "${STEPS:-32}" --json "$STORE/upstream.json"
    cp "$STORE/upstream.json" "$OUT/" 2>/dev/null
  fi
  touch "$WORK/call1.done"
  log "call 1 done: now call 2 at once (carry local/gpu-kit/call2)"
}

call2() {
  log "== call 2: onnxruntime-gpu, figures"
  if [ ! -f "$WORK/call1.done" ] || [ ! -f "$MODEL/llm_backbone_fp32.onnx" ]; then
    log "FAIL: call 1's work is not on this machine (it went cold between the calls)."
    log "Rerun call1, then call2 immediately after it."
    return 3
  fi
  "$PY" -m tools.gpu.kit stash "$KIT/call2" "$STORE" || return 1
  rm -rf "$WORK/ort"
  "$PY" -m tools.gpu.kit join "$STORE" "$WORK/ort" || return 1
  export PYTHONPATH="$WORK/ort:$WORK/py:$PWD:${PYTHONPATH:-}"
  cuda_libs
  probe
  step "${FIGURES_LIMIT:-420}" "figures" "$PY" -m tools.gpu.figures "$MODEL" \
    --device "${DEVICE:-cuda}" --upstream "$STORE/upstream.json" --json "$OUT/figures.json" \
    --repeats "${REPEATS:-20}" --requests "${REQUESTS:-200}" --steps "${STEPS:-32}" \
    ${FIGURE_ARGS:-}
}

dry_run() {  # here, on CPU: the kit's carry path, then the whole flow with small counts
  export GPU_WORK="${GPU_WORK:-/tmp/ov-gpu-dry}" DEVICE=cpu REPEATS=3 REQUESTS=10 STEPS=8
  WORK="$GPU_WORK"; STORE="$WORK/kit"; MODEL="${2:-${GPU_MODEL_DIR:-/work/bench-out/gpu/mid-kit}}"
  PRESET="${PRESET:-mid}"; TORCH_PY="${DEV_PYTHON:-/work/devenv/bin/python}"
  rm -rf "$WORK"; mkdir -p "$WORK"
  [ -d "$KIT/call1" ] || { log "no kit: run tools/gpu/wheels.sh first"; return 1; }
  "$PY" -m tools.gpu.kit stash "$KIT/call1" "$STORE" || return 1
  "$PY" -m tools.gpu.kit stash "$KIT/call2" "$STORE" || return 1
  "$PY" -m tools.gpu.kit join "$STORE" "$WORK/ort" || return 1
  log "joined kit: $(du -sh "$WORK/ort" | cut -f1), CUDA provider $(stat -c %s \
    "$WORK/ort/onnxruntime/capi/libonnxruntime_providers_cuda.so") bytes (cp312: not \
imported here)"
  "$PY" -m tools.gpu.kit unpack-py "$KIT/call1" "$WORK/py" || return 1
  # the small wheels are for Python 3.12 there; here the venvs have them
  probe
  build_model || return 1
  prepare
  if [ -n "${DRY_UPSTREAM_JSON:-}" ]; then  # figures of an earlier dry run (slow on CPU)
    cp "$DRY_UPSTREAM_JSON" "$STORE/upstream.json" && log "upstream figures from $DRY_UPSTREAM_JSON"
  elif [ -d "$MODEL/upstream" ]; then
    step 900 "upstream PyTorch on the same weights (cpu)" env PYTHONPATH="$PWD" \
      "$TORCH_PY" -m tools.gpu.upstream "$MODEL" --device cpu --threads 1 --repeats 2 \
      --steps "$STEPS" --json "$STORE/upstream.json"
  fi
  touch "$WORK/call1.done"
  step 900 "figures (cpu)" "$PY" -m tools.gpu.figures "$MODEL" --device cpu \
    --upstream "$STORE/upstream.json" --json "$OUT/figures.json" --repeats "$REPEATS" \
    --requests "$REQUESTS" --steps "$STEPS" --agree-steps 4
}

case "$MODE" in
  call1) call1 2>&1 | tee "$OUT/call1.log" ;;
  call2) call2 2>&1 | tee "$OUT/gpu_report.txt" ;;
  dry-run) dry_run "$@" 2>&1 | tee "$OUT/gpu_report.txt" ;;
  *) echo "usage: $0 call1|call2|dry-run [MODEL_DIR]" >&2; exit 2 ;;
esac
rc=${PIPESTATUS[0]}
log "exit $rc"
exit "$rc"
