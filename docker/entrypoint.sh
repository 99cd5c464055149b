#!/usr/bin/env bash
# Container entrypoint: serve on every interface of the container, keep the model and
# caches in /data, and pass any extra arguments (`docker run IMAGE --voice ...`) through.
# `exec` makes the server PID 1's direct replacement so it receives SIGTERM.
set -euo pipefail

PYTHON="${WYOMING_OMNIVOICE_PYTHON:-python}"

exec "${PYTHON}" -m wyoming_omnivoice \
    --uri "${WYOMING_OMNIVOICE_URI:-tcp://0.0.0.0:10200}" \
    --data-dir "${WYOMING_OMNIVOICE_DATA_DIR:-/data}" \
    "$@"
