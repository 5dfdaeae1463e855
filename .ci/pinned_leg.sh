#!/usr/bin/env bash
# One CI leg on pinned releases: a virtualenv with `.[test]` and the pins,
# cached between runs outside the checkout (CI runs from fresh clones), with
# this checkout reinstalled into it every run; then pytest on the given paths.
#
#   .ci/pinned_leg.sh NAME PIN... -- PYTEST_ARG...
#
# The cache key is the pins, the Python and the dependencies setup.cfg
# declares (not its other sections: a new test marker builds nothing), so a
# changed dependency builds a new environment. A venv is used only once
# complete (.complete marker).
set -euo pipefail
cd "$(dirname "$0")/.."

name=$1
shift
pins=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    pins+=("$1")
    shift
done
[ "${1:-}" = "--" ] || { echo "usage: $0 NAME PIN... -- PYTEST_ARG..." >&2; exit 2; }
shift

cache="${TRINITY_CI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trinity-dbapi/ci-venvs}"
dependencies() {
    python - <<'PY'
import configparser

config = configparser.ConfigParser()
config.read("setup.cfg")
for option in ("python_requires", "install_requires"):
    print(option, config["options"][option])
for extra, requirements in config["options.extras_require"].items():
    print(extra, requirements)
PY
}
key=$( { printf '%s\n' "${pins[@]}"; python --version; dependencies; } | sha256sum | cut -c1-16)
venv="$cache/$name-$key"
started=$SECONDS
if [ ! -e "$venv/.complete" ]; then
    echo "CI leg $name: building $venv (${pins[*]})"
    rm -rf "$venv"
    mkdir -p "$cache"
    python -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet ".[test]" "${pins[@]}"
    touch "$venv/.complete"
fi
"$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall .
"$venv/bin/python" -m pip check
"$venv/bin/python" - "${pins[@]}" <<'PY'
import sys
from importlib.metadata import version

for pin in sys.argv[1:]:
    name, _, wanted = pin.partition("==")
    got = version(name)
    assert got == wanted, f"{name} {got} installed, {wanted} pinned"
    print(f"CI leg: {name} {got}")
PY
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
echo "CI leg $name took $((SECONDS - started)) s"
