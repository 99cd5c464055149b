#!/usr/bin/env bash
# The GPU check: fails unless the engine really runs on CUDA, then measures the new path
# first and prints every GPU figure next to its target, the first run's figure and the peers'.
#
# Here, once (PyPI reachable): bash tools/gpu/wheels.sh   -> local/gpu-kit/call1, call2
# Then `python -m tools.gpu.carry plan --time-left S` (S: status's budget_left_s) prints the
# exact device calls. With this project's tree and the kit over one call's 64 MiB, two:
#   run(command="PRECISIONS=fp16-fused,fp16,fp32 bash tools/gpu/check.sh stash",
#       carry=["local/gpu-kit/call1"], timeout_s=330)
#   run(command="PRECISIONS=fp16-fused,fp16,fp32 TIME_LEFT=<budget_left_s> bash tools/gpu/check.sh all",
#       carry=["local/gpu-kit/call2"], timeout_s=<min(600, budget_left_s - 30)>)
# the second AT ONCE after the first (a machine idle ~30 s is given back), TIME_LEFT read
# from status just before it.
#
# stash: puts kit part 1 and the small wheels in /tmp there, then builds the real-size
#   random model and prepares the precisions asked (CPU work: no kit part 2 needed).
# all  : the sections, each under its own time limit and the whole under DEADLINE seconds
#   (from TIME_LEFT when given: what is left minus the summary and the call's return; a
#   section that would start too late is skipped; the summary always runs). The new path
#   first: kit | probe | model and prepare (done by stash; checked) | figures of the first
#   precision (fused first: gates, capture, forwards, first audio, RTF, batches, memory) |
#   devstep (memory by stage, mixed batch by phase, the host step loop against the device
#   loop, deterministic and noisy) | continuous batching at 1, 4 and 16 clients (servers
#   with --canonical-anchors never) | figures of the other precisions (fp16, then fp32) |
#   agreement with fp32 (no TF32) | server end to end | (upstream, UPSTREAM=1) | summary.
#   Everything printed goes to $OUT/check.log as it comes; figures to $OUT/figures.json,
#   $OUT/server.json, $OUT/concurrency.json after each section.
# dry-run [MODEL_DIR]: the same flow here on the CPU with a small model and small counts;
#   it must end "GPU CHECK FAIL" (no CUDA here).
#
# Knobs (environment): PRECISIONS (auto), SERVER_PRECISION (first fused one present, else
# fp16), STEPS 32, REPEATS 10, REQUESTS 10, AGREE_STEPS 8, CLIENTS 8, SCHED_CLIENTS 1,4,16,
# TIME_LEFT (device seconds left: sets DEADLINE), DEADLINE 410, MODEL_BUILD export|numpy
# (export: tools/gpu/model.py, the first run's weights and graph structure, ~105 s with the
# vocoder apart; numpy: benchmarks.random_model, ~35 s, but a hand-built graph whose node
# placement is not the published graph's), UPSTREAM 0|1 (the torch twin and upstream eager
# side by side, +~60 s), LAYERS 28 (numpy only).
set -uo pipefail
cd "$(dirname "$0")/../.."
MODE="${1:-}"
PY="${PYTHON:-python3}"
OUT="${OUT:-$PWD/local/gpu-out}"
WORK="${GPU_WORK:-/tmp/ov-gpu}"
STORE="$WORK/kit"
KIT="${GPU_KIT:-local/gpu-kit}"
MODEL="${GPU_MODEL_DIR:-$WORK/model}"
DEVICE="${DEVICE:-cuda}" STEPS="${STEPS:-32}" REPEATS="${REPEATS:-10}"
REQUESTS="${REQUESTS:-10}" AGREE_STEPS="${AGREE_STEPS:-8}" CLIENTS="${CLIENTS:-8}"
SCHED_CLIENTS="${SCHED_CLIENTS:-1,4,16}"
DEADLINE="${DEADLINE:-410}" MODEL_BUILD="${MODEL_BUILD:-export}" UPSTREAM="${UPSTREAM:-0}"
#: Seconds kept from TIME_LEFT: the summary (up to 60 s past DEADLINE) and the call's return.
RESERVE=90
if [ -n "${TIME_LEFT:-}" ]; then
  DEADLINE=$(( TIME_LEFT - RESERVE ))
  [ "$DEADLINE" -gt 540 ] && DEADLINE=540  # one command runs at most 600 s
fi
LAYERS="${LAYERS:-28}" MODEL_ARGS="${MODEL_ARGS:-}" ROUNDS="${ROUNDS:-10}"
mkdir -p "$OUT" "$WORK"
START=$(date +%s)

elapsed() { echo $(( $(date +%s) - START )); }
log() { echo "[$(elapsed)s] $*"; }
step() {  # step SECONDS NAME COMMAND...: time-limited (and cut to the deadline); its status
  local limit=$1 name=$2 left; shift 2
  left=$(( DEADLINE - $(elapsed) ))
  if [ "$left" -lt 15 ]; then log "== $name: SKIPPED, out of time (deadline ${DEADLINE}s)"; return 124; fi
  [ "$left" -lt "$limit" ] && limit=$left
  log "== $name (limit ${limit}s)"
  local t0; t0=$(date +%s)
  PYTHONUNBUFFERED=1 timeout -k 5 "$limit" "$@" 2>&1 | grep --line-buffered -v -E \
    "^\s*$|Warning: .*deprecat|TracerWarning|UserWarning|SyntaxWarning|re\.match\(|warn\(\"Couldn"
  local rc=${PIPESTATUS[0]}
  log "-- $name: exit $rc$([ "$rc" = 124 ] && echo ' (TIME LIMIT)') after $(( $(date +%s) - t0 ))s"
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

probe() {  # no torch import here: seconds, not the first run's 25 s
  log "python $("$PY" -V 2>&1 | cut -d' ' -f2) at $(command -v "$PY"), cpus $(nproc), /tmp free $(df -h /tmp | awk 'NR==2 {print $4}')"
  nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv,noheader 2>&1 || true
  "$PY" - <<'PYEOF' 2>&1
import importlib
for mod in ("numpy", "onnx", "onnxruntime", "tokenizers", "wyoming", "soundfile", "num2words"):
    try:
        m = importlib.import_module(mod)
        extra = f" {m.get_available_providers()} from {m.__file__}" if mod == "onnxruntime" else ""
        print(f"  {mod} {getattr(m, '__version__', '?')}{extra}")
    except Exception as err:
        print(f"  {mod}: MISSING ({type(err).__name__}: {err})")
PYEOF
  git log -1 --format='  project at %h %s' 2>/dev/null || true
}

build_model() {  # the real-size random model (seeded); the vocoder built in parallel
  [ -f "$MODEL/.complete" ] && { log "model already in $MODEL"; return 0; }
  rm -rf "$MODEL"  # a build cut short leaves files that look whole
  local tpy="${TORCH_PY:-$PY}" voc="$WORK/vocoder" built=""
  rm -rf "$voc"
  ( "$tpy" -c "import torch, transformers" 2>/dev/null || exit 9
    timeout 200 "$tpy" -m tools.gpu.model --vocoder-only --preset real --out "$voc" \
      >"$WORK/vocoder.log" 2>&1 ) &
  local vpid=$!
  if [ "$MODEL_BUILD" = export ] && "$tpy" -c "import torch" 2>/dev/null; then
    local twin=--no-upstream
    [ "$UPSTREAM" = 1 ] && twin=""
    step 200 "model: torch export of the language-model graphs, as the published (-m tools.gpu.model)" \
      "$tpy" -m tools.gpu.model --preset real --out "$MODEL" --no-vocoder $twin && built=export
  fi
  if [ -z "$built" ]; then
    [ "$MODEL_BUILD" = export ] && log "torch export not done: numpy graphs instead (their node placement is not the published graph's)"
    rm -rf "$MODEL"
    step 150 "model: numpy language-model graphs, $LAYERS layers (-m benchmarks.random_model)" \
      "$PY" -m benchmarks.random_model --out "$MODEL" --layers "$LAYERS" $MODEL_ARGS || return 1
    built=numpy
  fi
  wait "$vpid"; local vrc=$?
  grep -v -E "Warning|^\s*$|warn\(" "$WORK/vocoder.log" 2>/dev/null | tail -3
  mkdir -p "$MODEL/audio_tokenizer"
  if [ "$vrc" = 0 ] && [ -f "$voc/higgs_decoder.onnx" ]; then
    cp "$voc/higgs_decoder.onnx" "$MODEL/audio_tokenizer/higgs_decoder.onnx"
    log "model: $built language-model graphs + the real-size vocoder (torch export, seed 7)"
  else
    [ -f "$MODEL/audio_tokenizer/higgs_decoder.onnx" ] || cp \
      tests/fixtures/models/tiny/audio_tokenizer/higgs_decoder.onnx "$MODEL/audio_tokenizer/"
    log "model: $built graphs; real-size vocoder not built (exit $vrc): the TINY vocoder (its time is not the real one's)"
  fi
  touch "$MODEL/.complete"
}

ordered_precisions() {  # fused ones first (the headline), then fp16, then the rest
  local all
  if [ "${PRECISIONS:-auto}" = auto ]; then
    all=$("$PY" -c "from tools.gpu.engine import detect_precisions as d; print(' '.join(d('$DEVICE', report=False)))")
  else
    all=${PRECISIONS//,/ }
  fi
  local p out=""
  for p in $all; do [[ $p == *fused* ]] && out="$out $p"; done
  for p in $all; do [ "$p" = fp16 ] && out="$out $p"; done
  for p in $all; do [[ $p != *fused* ]] && [ "$p" != fp16 ] && out="$out $p"; done
  echo $out
}

prepare_model() {  # the model and its precisions (CPU work: stash does it in call 1)
  build_model || { log "no model: nothing to measure"; return 1; }
  step "${PREPARE_LIMIT:-150}" "prepare every precision on the CPU (in parallel)" \
    "$PY" -m tools.gpu.prepare "$MODEL" --variants "${PRECISIONS:-auto}" --jobs 4
  return 0
}

figures() {  # figures PRECISION
  step "${FIGURES_LIMIT:-100}" "figures: $1 on $DEVICE" "$PY" -m tools.gpu.figures "$MODEL" \
    --device "$DEVICE" --precisions "$1" --json "$OUT/figures.json" --repeats "$REPEATS" \
    --requests "$REQUESTS" --steps "$STEPS"
}

sections() {  # everything after the kit: the same here (dry run) and there
  probe
  "$PY" -c "from tools.gpu.engine import detect_precisions; detect_precisions('$DEVICE')"
  prepare_model || { summary; return 1; }
  local precs; precs=$(ordered_precisions)
  log "precisions, in order: $precs"
  local first="${precs%% *}" rest="${precs#* }" sp="${SERVER_PRECISION:-}" p
  [ "$rest" = "$precs" ] && rest=""
  if [ -z "$sp" ]; then
    for p in $precs; do [[ $p == *fused* ]] && { sp=$p; break; }; done
    sp=${sp:-fp16}
  fi
  # The new path first: the headline precision, the step loop, continuous batching.
  [ -n "$first" ] && figures "$first"
  step "${DEVSTEP_LIMIT:-90}" "devstep: memory by stage, mixed batch by phase, host loop vs device loop (-m benchmarks.devstep_gpu)" \
    "$PY" -m benchmarks.devstep_gpu --model-dir "$MODEL" --device "$DEVICE" --precision "$sp" \
    --requests "${DEVSTEP_REQUESTS:-20}" --steps "$STEPS,$(( STEPS / 2 ))" --repeats 2
  step "${SCHED_LIMIT:-120}" "continuous batching, $SCHED_CLIENTS clients (-m tools.gpu.sched)" \
    "$PY" -m tools.gpu.sched "$MODEL" --device "$DEVICE" --steps "$STEPS" --clients "$SCHED_CLIENTS" \
    --json "$OUT/concurrency.json" --precision "$sp"
  for p in $rest; do figures "$p"; done
  step 90 "agreement with fp32 (deterministic, $AGREE_STEPS steps, no TF32)" "$PY" -m tools.gpu.figures \
    "$MODEL" --device "$DEVICE" --agreement --precisions "$(echo $precs | tr ' ' ,)" \
    --agree-steps "$AGREE_STEPS" --json "$OUT/figures.json"
  step "${SERVER_LIMIT:-100}" "server end to end: $sp, $CLIENTS clients (-m benchmarks.server_gpu)" \
    "$PY" -m benchmarks.server_gpu --model-dir "$MODEL" --device "$DEVICE" --precision "$sp" \
    --num-steps "$STEPS" --rounds "$ROUNDS" --clients "$CLIENTS" --json "$OUT/server.json" \
    --log "$OUT/server.log" --server-arg=--canonical-anchors --server-arg=never
  local up=()
  if [ "$UPSTREAM" = 1 ] && [ -d "$MODEL/upstream" ]; then
    step 100 "upstream PyTorch eager on the same weights" "${TORCH_PY:-$PY}" -m tools.gpu.upstream \
      "$MODEL" --device "$DEVICE" --repeats "$REPEATS" --steps "$STEPS" --json "$OUT/upstream.json" \
      && up=(--upstream "$OUT/upstream.json")
  else
    log "upstream PyTorch: not run (UPSTREAM=1 runs it); the first run's figures are used"
  fi
  summary "${up[@]}"
}

summary() {  # always runs, past the deadline too
  DEADLINE=$(( DEADLINE + 60 )) step 60 "summary" "$PY" -m tools.gpu.summary "$OUT" "$@"
}

stash() {  # call 1: part 1 and the small wheels into $WORK, then the model, prepared
  log "== stash: kit part 1 and the small wheels into $WORK"
  "$PY" -m tools.gpu.kit stash "$KIT/call1" "$STORE" || return 1
  "$PY" -m tools.gpu.kit unpack-py "$KIT/call1" "$WORK/py" || return 1
  if [ "${STASH_ONLY:-0}" != 1 ]; then
    local DEADLINE="${STASH_DEADLINE:-300}" PYTHONPATH="$WORK/py:$PWD:${PYTHONPATH:-}"
    export PYTHONPATH  # the machine's own (CPU) onnxruntime prepares
    prepare_model || log "model or preparation not done: check.sh all does it again"
  fi
  log "stashed: now at once run check.sh all carrying $KIT/call2 (TIME_LEFT from status)"
}

all() {
  log "== GPU check, all sections (deadline ${DEADLINE}s)"
  if [ -d "$KIT/call1" ]; then STASH_ONLY=1 stash || return 1; fi
  if [ ! -d "$WORK/py" ] || [ ! -f "$STORE/ort.tar.xz.part-1" ]; then
    log "FAIL: kit part 1 is not on this machine (not carried, and the stash call's work is"
    log "gone: the machine went cold). Rerun check.sh stash, then check.sh all AT ONCE."
    return 3
  fi
  [ -d "$KIT/call2" ] && { "$PY" -m tools.gpu.kit stash "$KIT/call2" "$STORE" || return 1; }
  log "deadline ${DEADLINE}s$([ -n "${TIME_LEFT:-}" ] && echo " (from TIME_LEFT=${TIME_LEFT}s)")"
  rm -rf "$WORK/ort"
  step 90 "kit: join and check the onnxruntime-gpu parts" "$PY" -m tools.gpu.kit join "$STORE" \
    "$WORK/ort" || { log "FAIL: no onnxruntime-gpu (rerun check.sh stash, then all)"; return 3; }
  export PYTHONPATH="$WORK/ort:$WORK/py:$PWD:${PYTHONPATH:-}"
  cuda_libs
  sections
}

dry_run() {  # here, on the CPU: the kit's carry path, then the whole flow with small counts
  WORK="${GPU_WORK:-/tmp/ov-gpu-dry}"; STORE="$WORK/kit"
  MODEL="${2:-$WORK/model}"; DEVICE=cpu; STEPS=4; REPEATS=2; REQUESTS=4; AGREE_STEPS=2
  CLIENTS=2; ROUNDS=2; LAYERS="${LAYERS_DRY:-2}"; FIGURES_LIMIT=200; MODEL_BUILD=numpy
  SCHED_CLIENTS="${SCHED_CLIENTS_DRY:-1,2}"; SCHED_LIMIT=200
  MODEL_ARGS="--hidden 256 --inter 768 --heads 4 --kv-heads 2 --head-dim 64 --text-vocab 4096"
  SERVER_PRECISION="${SERVER_PRECISION:-fp32}"; DEADLINE="${DEADLINE_DRY:-900}"
  SERVER_LIMIT=200
  rm -rf "$WORK" "$OUT"/*.json; mkdir -p "$WORK"
  if [ -d "$KIT/call1" ] && [ -d "$KIT/call2" ]; then
    "$PY" -m tools.gpu.kit stash "$KIT/call1" "$STORE" && "$PY" -m tools.gpu.kit stash \
      "$KIT/call2" "$STORE" && "$PY" -m tools.gpu.kit join "$STORE" "$WORK/ort" || return 1
    log "joined kit: $(du -sh "$WORK/ort" | cut -f1) (cp312: not imported here)"
    "$PY" -m tools.gpu.kit unpack-py "$KIT/call1" "$WORK/py" || return 1
  else
    log "no kit here (tools/gpu/wheels.sh makes it): kit steps skipped"
  fi
  export PYTHONPATH="$PWD:${PYTHONPATH:-}"  # the small wheels are cp312: the venv has them
  sections
}

case "$MODE" in
  stash) stash 2>&1 | tee "$OUT/check.log" ;;
  all) all 2>&1 | tee "$OUT/check.log" ;;
  dry-run) dry_run "$@" 2>&1 | tee "$OUT/check.log" ;;
  *) echo "usage: $0 stash|all|dry-run [MODEL_DIR]" >&2; exit 2 ;;
esac
rc=${PIPESTATUS[0]}
log "exit $rc ($(elapsed) s)"
exit "$rc"
