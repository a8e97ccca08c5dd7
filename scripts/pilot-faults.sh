#!/usr/bin/env bash
# The native fault test of pilot audits: `atlas pilot run` against the real local
# model (SmolLM2-135M-Instruct, scripts/llm.sh) through the fault-injecting proxy
# (tests/pilot/fault_proxy.mjs: ok,429,ok,500,stall,malformed,drop, repeating). Starts what is not
# running, runs `cargo test -p atlas-cli --test pilot_faults -- --ignored --nocapture`, and stops what
# it started. The test's counts (answered, failed by reason, retries per fault) are printed.
#
#   scripts/pilot-faults.sh            # server on a free port (or $PILOT_LLM_PORT) unless one is running
set -euo pipefail
cd "$(dirname "$0")/.."
PORT="${PILOT_LLM_PORT:-0}"   # 0: a free port
WORK=$(mktemp -d)
STARTED_LLM=0
PROXY_PID=""

cleanup() {
  [ -n "$PROXY_PID" ] && kill "$PROXY_PID" 2>/dev/null || true
  [ "$STARTED_LLM" = 1 ] && scripts/llm.sh stop || true
  rm -rf "$WORK"
}
trap cleanup EXIT

if scripts/llm.sh status | grep -q '^running'; then
  BASE=$(scripts/llm.sh status | sed -E 's/^running: (http[^ ]*).*/\1/')
  echo "[pilot-faults] using the running local model at $BASE"
else
  BASE=$(scripts/llm.sh start "$PORT")
  STARTED_LLM=1
fi
UPSTREAM=${BASE%/v1}

node tests/pilot/fault_proxy.mjs "$UPSTREAM" --port 0 >"$WORK/proxy.out" 2>&1 &
PROXY_PID=$!
for _ in $(seq 1 50); do
  PROXY=$(sed -nE 's/^fault proxy on (http:[^ ]*) .*/\1/p' "$WORK/proxy.out")
  [ -n "$PROXY" ] && break
  kill -0 "$PROXY_PID" 2>/dev/null || { cat "$WORK/proxy.out" >&2; exit 1; }
  sleep 0.1
done
[ -n "${PROXY:-}" ] || { echo "[pilot-faults] the proxy did not start" >&2; cat "$WORK/proxy.out" >&2; exit 1; }
echo "[pilot-faults] fault proxy $PROXY → $UPSTREAM"

PILOT_FAULT_BASE_URL="$PROXY/v1" cargo test -q -p atlas-cli --test pilot_faults -- --ignored --nocapture
