#!/usr/bin/env bash
# The teacher-forced echo scorer for `atlas paradigms score` (scripts/llm-echo.py over llama_cpp, in
# the venv of scripts/llm.sh): llama-cpp-python's own server echoes prompt log-probabilities shifted
# by one token, which `atlas paradigms score` refuses (docs/paradigms.md).
#
#   scripts/llm-echo.sh start [PORT]   # starts it on 127.0.0.1 (a free port without PORT), waits until it
#                                      # scores, prints the base URL
#   scripts/llm-echo.sh stop
#   scripts/llm-echo.sh status
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${AUDIT_ATLAS_CACHE:-$HOME/.cache/audit-atlas}"
VENV="$CACHE/llm-venv"
DIR="$CACHE/llm"
PIDFILE="$DIR/echo-server.pid"
LOG="$DIR/echo-server.log"
say() { echo "[llm-echo] $*" >&2; }
running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  local port="${1:-0}"
  [ -x "$VENV/bin/python" ] || scripts/llm.sh install
  if running; then echo "http://127.0.0.1:$(cat "$DIR/echo-server.port")/v1"; return; fi
  if [ "$port" = 0 ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
  fi
  say "starting on 127.0.0.1:$port (log: $LOG)"
  nohup "$VENV/bin/python" scripts/llm-echo.py --port "$port" --threads "${LLM_ECHO_THREADS:-1}" >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  echo "$port" >"$DIR/echo-server.port"
  for _ in $(seq 1 120); do
    if running && curl -fsS -m 30 "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
         -d '{"prompt":"Hi there","max_tokens":1,"echo":true,"logprobs":1}' >/dev/null 2>&1; then
      echo "http://127.0.0.1:$port/v1"
      return
    fi
    if ! running; then say "it exited; its log:"; tail -20 "$LOG" >&2; rm -f "$PIDFILE"; exit 1; fi
    sleep 1
  done
  say "it did not answer within 120 s"; tail -20 "$LOG" >&2; stop; exit 1
}

stop() {
  if running; then kill "$(cat "$PIDFILE")" && say "stopped"; fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  start) start "${2:-0}" ;;
  stop) stop ;;
  status) if running; then echo "running: http://127.0.0.1:$(cat "$DIR/echo-server.port")/v1 (pid $(cat "$PIDFILE"))"; else echo "not running"; fi ;;
  *) echo "usage: scripts/llm-echo.sh start [PORT]|stop|status" >&2; exit 2 ;;
esac
