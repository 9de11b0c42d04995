#!/usr/bin/env bash
# The two commands of the README:
#   bash run.sh        set everything up, then open the workbench on the bundled sample_logs/
#   bash run.sh test   set everything up, then run the whole test suite
# Idempotent: a second run only re-checks. Needs a Debian-like machine with python3.11 and apt.
set -euo pipefail
cd "$(dirname "$0")"

log() { printf '[run.sh] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

ensure_chromium() {   # Debian's Chromium for the browser tests (never a downloaded browser)
  if ! command -v chromium >/dev/null 2>&1; then
    log "installing Debian's chromium"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
}

ensure_venv() {
  local py=${PYTHON:-python3.11}
  command -v "$py" >/dev/null 2>&1 || py=python3
  if ! command -v uv >/dev/null 2>&1 && ! [ -x .venv/bin/uv ]; then
    log "installing uv"
    "$py" -m pip install --quiet --disable-pip-version-check "uv==0.13.8"
  fi
  local uv; uv=$(command -v uv || echo .venv/bin/uv)
  [ -x .venv/bin/python ] || "$uv" venv --quiet --python "$py" .venv
  log "installing workbench and its dependencies into .venv"
  # --compile-bytecode: a kernel imports pandas, plotly and ipywidgets from bytecode even
  # where Python may not write it (PYTHONDONTWRITEBYTECODE); saves ~1 s of CPU per kernel
  "$uv" pip install --quiet --compile-bytecode --python .venv/bin/python -e ".[dev]"
  .venv/bin/python -m compileall -q workbench
}

case "${1:-lab}" in
  test)
    ensure_venv
    ensure_chromium
    exec .venv/bin/python -m pytest -q -p no:cacheprovider tests "${@:2}"
    ;;
  lab)
    ensure_venv
    exec .venv/bin/workbench lab "${@:2}"
    ;;
  *)
    echo "usage: bash run.sh [test|lab]" >&2; exit 2 ;;
esac
