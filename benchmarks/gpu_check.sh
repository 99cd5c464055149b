#!/usr/bin/env bash
# GPU check for a lent CUDA machine (only the working tree travels there, 64 MiB a call,
# no internet). Prepare here first: bash benchmarks/gpu_wheels.sh <python version there>.
#
#   bash benchmarks/gpu_check.sh probe      # python, GPU, what is installed (seconds)
#   bash benchmarks/gpu_check.sh run        # install, build, correctness, benchmarks
#   bash benchmarks/gpu_check.sh dry-run    # the same flow on CPU with a 2-layer model
#
# Device calls (each carries at most 64 MiB; parts already there are kept between calls):
#   1. run(command="bash benchmarks/gpu_check.sh probe")
#   2..8. only when probe says onnxruntime has no CUDA provider: one part per call, back to
#      back (a machine idle for about 30 s is handed back and the parts with it),
#      run(command="bash benchmarks/gpu_check.sh stage",
#          carry=["local/gpu-wheels/wheels.tar.part-aa", "local/gpu-wheels/SHA256SUMS"]), ...
#   9. run(command="bash benchmarks/gpu_check.sh run", timeout_s=600); a rerun on the still
#      warm machine reuses the model and fp16 graph under /tmp and takes about 5 minutes.
# `run` writes $OUT/gpu_report.txt (everything printed) and $OUT/*.json, and keeps to
# about 8 minutes: each step has its own time limit and a failed step does not stop the rest.
set -uo pipefail
cd "$(dirname "$0")/.."
MODE="${1:-run}"
OUT="${OUT:-$PWD/local/gpu-out}"
mkdir -p "$OUT"
REPORT="$OUT/gpu_report.txt"
PY="${PYTHON:-python3}"
WHEELS=local/gpu-wheels
SITE=/tmp/ov-gpu-site
MODEL="${GPU_MODEL_DIR:-/tmp/ov-real-random}"
START=$(date +%s)

log() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$REPORT"; }
step() {  # step SECONDS NAME COMMAND...: run with a limit, keep going on failure
  local limit=$1 name=$2; shift 2
  log "== $name (limit ${limit}s)"
  PYTHONUNBUFFERED=1 timeout "$limit" "$@" 2>&1 | grep --line-buffered -v -E "^\s*$|Warning: .*deprecat" | tee -a "$REPORT"
  local rc=${PIPESTATUS[0]}
  log "-- $name: exit $rc"
}

cuda_libs() {  # CUDA/cuDNN libraries from pip nvidia-* packages (e.g. installed with torch)
  local dirs
  dirs=$("$PY" - <<'PYEOF' 2>/dev/null
import glob, site, sys
roots = site.getsitepackages() + [site.getusersitepackages()] + sys.path
found = sorted({d for r in roots for d in glob.glob(f"{r}/nvidia/*/lib")})
print(":".join(found))
PYEOF
)
  [ -n "$dirs" ] && export LD_LIBRARY_PATH="$dirs:${LD_LIBRARY_PATH:-}"
}

has_cuda_ort() {
  "$PY" -c "import onnxruntime as o, sys; sys.exit(0 if 'CUDAExecutionProvider' in o.get_available_providers() else 1)" 2>/dev/null
}

install_wheels() {
  if has_cuda_ort && "$PY" -c "import onnx, numpy, tokenizers" 2>/dev/null; then
    log "onnxruntime with CUDA, onnx, numpy and tokenizers already present"; return 0
  fi
  ls "$WHEELS"/wheels.tar.part-* >/dev/null 2>&1 || { log "no wheel parts under $WHEELS"; return 1; }
  (cd "$WHEELS" && sha256sum -c SHA256SUMS) 2>&1 | tee -a "$REPORT" || { log "wheel parts incomplete"; return 1; }
  rm -rf /tmp/ov-wheels && mkdir -p /tmp/ov-wheels
  cat "$WHEELS"/wheels.tar.part-* | tar -xf - -C /tmp/ov-wheels
  if "$PY" -m pip --version >/dev/null 2>&1; then
    "$PY" -m pip install --quiet --no-index --find-links /tmp/ov-wheels --target "$SITE" \
      onnxruntime-gpu onnx numpy tokenizers 2>&1 | tail -3 | tee -a "$REPORT"
  else  # no pip: wheels are zip files; unpacking them is an install without metadata scripts
    mkdir -p "$SITE"
    for whl in /tmp/ov-wheels/*.whl; do "$PY" -m zipfile -e "$whl" "$SITE"; done
  fi
  export PYTHONPATH="$SITE:${PYTHONPATH:-}"
  rm -rf /tmp/ov-wheels
}

probe() {
  log "python: $("$PY" -V 2>&1) at $(command -v "$PY")"
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | tee -a "$REPORT"
  for mod in onnxruntime onnx numpy tokenizers torch; do
    "$PY" -c "import $mod; print('$mod', getattr($mod, '__version__', '?'))" 2>/dev/null \
      | tee -a "$REPORT" || log "$mod: missing"
  done
  cuda_libs
  "$PY" -c "import onnxruntime as o; print('providers', o.get_available_providers())" 2>&1 | tee -a "$REPORT"
  log "wheel parts here: $(ls "$WHEELS"/wheels.tar.part-* 2>/dev/null | wc -l)"
  df -h /tmp | tail -1 | tee -a "$REPORT"; nproc | tee -a "$REPORT"
}

case "$MODE" in
  probe) probe ;;
  stage) log "parts here: $(ls "$WHEELS"/wheels.tar.part-* 2>/dev/null | xargs -n1 basename | tr '\n' ' ')" ;;
  run|dry-run)
    : > "$REPORT"
    probe
    if [ "$MODE" = run ]; then
      DEVICE=cuda; LAYERS=28; VOCAB=151676; STEPS=32; LENGTHS=64,96,128,256,512; BATCHES=1,4,8
      SOAK=50
      export PYTHONPATH="$SITE:${PYTHONPATH:-}"
      install_wheels
      cuda_libs
      has_cuda_ort || log "WARNING: onnxruntime still has no CUDA provider; CUDA steps will fail"
    else
      DEVICE=cpu; LAYERS=2; VOCAB=4096; STEPS=8; LENGTHS=64,128; BATCHES=1,4; SOAK=5
      MODEL="${GPU_MODEL_DIR:-/tmp/ov-dry-random}"
    fi
    [ -f "$MODEL/llm_backbone_fp32.onnx" ] || \
      step 120 "build random model ($LAYERS layers)" "$PY" benchmarks/random_model.py \
        --out "$MODEL" --layers "$LAYERS" --text-vocab "$VOCAB"
    [ -f "$MODEL/llm_backbone_fp16.onnx" ] || \
      step 100 "fp16 conversion" "$PY" -m wyoming_omnivoice.convert --fp16 "$MODEL" --no-verify
    step 120 "correctness: $DEVICE fp32/fp16 vs CPU fp32" "$PY" benchmarks/gpu_correctness.py \
      "$MODEL" --device "$DEVICE" --steps 16 --json "$OUT/correctness.json"
    BENCH=("$PY" benchmarks/bench_engine.py --model-dir "$MODEL" --device "$DEVICE"
           --no-upstream --steps "$STEPS" --repeats 3 --lengths "$LENGTHS"
           --batches "$BATCHES" --concurrency 1,4,8)
    step 90 "bench fp32" "${BENCH[@]}" --precision fp32 --sections backbone,utterance \
      --json "$OUT/bench_fp32.json"
    step 100 "bench fp16" "${BENCH[@]}" --precision fp16 --soak "$SOAK" --json "$OUT/bench_fp16.json"
    if [ "$DEVICE" = cuda ]; then
      step 80 "bench fp16 + CUDA graphs" "${BENCH[@]}" --precision fp16 --cuda-graph \
        --sections backbone,first_audio,throughput --soak "$SOAK" --json "$OUT/bench_fp16_graph.json"
      step 50 "bench fp16, steps 16" "${BENCH[@]}" --precision fp16 --steps 16 \
        --sections first_audio,throughput --json "$OUT/bench_fp16_16.json"
    fi
    log "done; report in $REPORT"
    ;;
  *) echo "usage: $0 probe|stage|run|dry-run" >&2; exit 2 ;;
esac
