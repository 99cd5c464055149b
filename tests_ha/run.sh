#!/usr/bin/env bash
# Real Home Assistant against the real server: builds Home Assistant's own virtual
# environment (Python 3.13, the pinned versions of requirements.txt + constraints.txt) when
# it is missing or out of date, then runs tests_ha/ with its own pytest configuration.
#
# Usage: tests_ha/run.sh [pytest arguments]   (from anywhere; paths relative to tests_ha/,
#        e.g. tests_ha/run.sh test_audio.py -k mp3)
#   HA_VENV=DIR                   Home Assistant's venv (default: tests_ha/.venv)
#   PYTHON_HA=python3.13          the interpreter for it (default: python3.13, else pyenv's 3.13)
#   WYOMING_OMNIVOICE_PYTHON=...  the python that runs the server (default: <repo>/.venv/bin/python,
#                                 a venv with pip install -e ".[cpu]")
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "${HERE}")"
cd "${ROOT}"
HA_VENV="${HA_VENV:-${HERE}/.venv}"
export WYOMING_OMNIVOICE_PYTHON="${WYOMING_OMNIVOICE_PYTHON:-${ROOT}/.venv/bin/python}"

is_python_313() {
    "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' > /dev/null 2>&1
}

find_python_313() {
    local candidate version
    for candidate in "${PYTHON_HA:-}" python3.13; do
        [ -n "${candidate}" ] || continue
        if is_python_313 "${candidate}"; then
            command -v "${candidate}"
            return 0
        fi
    done
    if command -v pyenv > /dev/null 2>&1; then
        version="$(pyenv versions --bare | grep -E '^3\.13(\.[0-9]+)?$' | sort -V | tail -n 1 || true)"
        if [ -n "${version}" ]; then
            candidate="$(PYENV_VERSION="${version}" pyenv which python3.13)"
            if is_python_313 "${candidate}"; then
                echo "${candidate}"
                return 0
            fi
        fi
    fi
    return 1
}

# The venv is rebuilt when the pins change (their hash is kept in the venv).
pins_hash="$(cat "${HERE}/requirements.txt" "${HERE}/constraints.txt" | sha256sum | cut -d' ' -f1)"
stamp="${HA_VENV}/.tests_ha-pins"
if [ ! -x "${HA_VENV}/bin/python" ] || [ "$(cat "${stamp}" 2> /dev/null)" != "${pins_hash}" ]; then
    python_313="$(find_python_313)" || {
        echo "tests_ha: needs Python 3.13 for Home Assistant 2026.2 (set PYTHON_HA=...)" >&2
        exit 1
    }
    echo "tests_ha: building Home Assistant's venv in ${HA_VENV} with $("${python_313}" --version)"
    started=${SECONDS}
    rm -rf "${HA_VENV}"
    "${python_313}" -m venv "${HA_VENV}"
    export PIP_DISABLE_PIP_VERSION_CHECK=1
    # Home Assistant 2026.2 declares Requires-Python >=3.13.2; it runs on 3.13.0, whose
    # only gate is in Home Assistant's __main__, which the test fixture does not run.
    "${HA_VENV}/bin/pip" install --quiet --ignore-requires-python \
        -r "${HERE}/requirements.txt" -c "${HERE}/constraints.txt"
    echo "${pins_hash}" > "${stamp}"
    echo "tests_ha: venv built in $((SECONDS - started)) s"
fi

[ -x "${WYOMING_OMNIVOICE_PYTHON}" ] || {
    echo "tests_ha: no server python at ${WYOMING_OMNIVOICE_PYTHON}: set WYOMING_OMNIVOICE_PYTHON" \
         "to the python of a venv with pip install -e \".[cpu]\"" >&2
    exit 1
}
# Python 3.13.0's argparse warns about pytest's positional arguments (fixed in 3.13.1).
export PYTHONWARNINGS="${PYTHONWARNINGS:+${PYTHONWARNINGS},}ignore:Do not expect file_or_dir:UserWarning"
# Run from tests_ha/ (paths in the arguments are relative to it); none: all of tests_ha/.
cd "${HERE}"
exec "${HA_VENV}/bin/python" -m pytest -c pytest.ini "$@"
