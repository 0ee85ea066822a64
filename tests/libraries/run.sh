#!/usr/bin/env bash
# Run the Neo4j libraries' own integration suites against Arbor and Neo4j 5.26 (see README.md).
#   tests/libraries/run.sh --setup                 create/refresh the pinned venvs ($LIB_VENV/<lib>)
#   tests/libraries/run.sh --src /work/libsrc ...  run (all other flags go to run.py; --help lists them)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ "${1:-}" == "--setup" ]]; then
  while IFS= read -r line; do
    case "$line" in \#*|"") continue ;; esac
    lib="${line%%:*}"; reqs="${line#*: }"
    venv="${LIB_VENV:-/tmp}/libvenv-$lib"; [[ -n "${LIB_VENV:-}" ]] && venv="$LIB_VENV/$lib"
    echo "== $lib -> $venv"
    [[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
    # shellcheck disable=SC2086
    "$venv/bin/pip" install -q $reqs
  done < "$here/requirements.txt"
  exit 0
fi
exec python3 "$here/run.py" "$@"
