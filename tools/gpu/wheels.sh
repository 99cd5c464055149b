#!/usr/bin/env bash
# Build the GPU check's wheel kit here (PyPI reachable), for the GPU machine's Python 3.12.
#
#   bash tools/gpu/wheels.sh
#
# Downloads the wheels pinned in tools/gpu/kit.py (exact versions; their sha256 is
# checked there) into local/gpu-wheels/, keeps only the sm_90 kernels of onnxruntime-gpu's
# CUDA provider (tools/gpu/fatbin.py), and writes (local/ is git-ignored):
#   local/gpu-kit/call1/  py.tar.xz (upstream omnivoice + what the machine lacks),
#                         ort.tar.xz.part-1, SHA256SUMS     -> carried by device call 1
#   local/gpu-kit/call2/  ort.tar.xz.part-2, SHA256SUMS     -> carried by device call 2
# Each folder plus the working tree stays under the 64 MiB a call carries.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY="${PYTHON:-python3}"
WHEELS=local/gpu-wheels
mkdir -p "$WHEELS"
"$PY" -m tools.gpu.kit requirements | while read -r file req; do
  [ -f "$WHEELS/$file" ] && continue
  "$PY" -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d "$WHEELS" "$req"
done
# A kit whose onnxruntime parts exist only needs its small wheels repacked (seconds) after a
# new small pin; REBUILD=1 (or no parts yet) strips and packs onnxruntime-gpu again (minutes).
if [ "${REBUILD:-0}" != 1 ] && [ -f local/gpu-kit/call1/ort.tar.xz.part-1 ] \
    && [ -f local/gpu-kit/call2/ort.tar.xz.part-2 ]; then
  "$PY" -m tools.gpu.kit build-py "$WHEELS" local/gpu-kit
else
  "$PY" -m tools.gpu.kit build "$WHEELS" local/gpu-kit
fi
"$PY" -m tools.gpu.carry plan
