#!/usr/bin/env bash
# Download the wheels the GPU check needs and split them into parts a device call can carry.
#
#   bash benchmarks/gpu_wheels.sh [PYTHON_VERSION]     # default 3.11 (see gpu_check.sh probe)
#
# Writes local/gpu-wheels/wheels.tar.part-aa, -ab, ... (45 MiB each by default, PART_SIZE=..; local/ is git-ignored)
# and local/gpu-wheels/SHA256SUMS. onnxruntime-gpu alone is ~255 MB, more than one call
# carries (64 MiB), so gpu_check.sh reassembles the parts on the device machine, checks the
# sums and installs offline. Carry one part per call (carry=["local/gpu-wheels/wheels.tar.part-aa",
# "local/gpu-wheels/SHA256SUMS"], then -ab, ...): parts already there are kept between calls.
set -euo pipefail
cd "$(dirname "$0")/.."
PYVER="${1:-3.11}"
PLATFORM="${GPU_WHEELS_PLATFORM:-manylinux_2_28_x86_64}"
PIP="${PIP:-/work/devenv/bin/pip}"
OUT=local/gpu-wheels
DL="$OUT/download-$PYVER"
PACKAGES=(onnxruntime-gpu onnx numpy tokenizers)
mkdir -p "$DL"
for platform in "$PLATFORM" manylinux2014_x86_64 manylinux_2_17_x86_64 linux_x86_64; do
  "$PIP" download --dest "$DL" --only-binary=:all: --python-version "$PYVER" \
    --implementation cp --platform "$platform" --platform manylinux_2_27_x86_64 \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    "${PACKAGES[@]}" && break
done
rm -f "$OUT"/wheels.tar.part-*
tar -C "$DL" -cf - . | split -b "${PART_SIZE:-45m}" - "$OUT/wheels.tar.part-"
(cd "$OUT" && sha256sum wheels.tar.part-* > SHA256SUMS)
echo "python $PYVER wheels:"; ls -la "$DL"
echo "parts:"; ls -la "$OUT"/wheels.tar.part-* "$OUT/SHA256SUMS"
