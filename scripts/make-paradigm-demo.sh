#!/usr/bin/env bash
# Reproduces the task-paradigm demo, tests/fixtures/paradigm-demo/: the real local model
# SmolLM2-135M-Instruct (scripts/llm.sh) × 40 propositions (tests/fixtures/paradigm-propositions.json:
# 20 CrowS-Pairs + 20 BBQ, `atlas propositions … --limit 20 --seed 20260716`) × the five procedures of
# seed 000 Table 10 × 3 repeats at temperature 0.7, then the likelihood scores of the StereoSet- and
# CrowS-style candidates. A PIPELINE DEMO from a 135M-parameter model, not evidence about any
# production model.
#
#   scripts/make-paradigm-demo.sh            # 600 audited calls + 160 scoring calls
#   scripts/make-paradigm-demo.sh --rescore  # only the 160 scoring calls, onto the committed bundle's
#                                            # Selections (tests/fixtures/paradigm-demo/bundle.json)
#
# The Selections come from llama-cpp-python's server (scripts/llm.sh); the likelihood scores from the
# teacher-forced echo shim over llama_cpp (scripts/llm-echo.sh), because that server's echoed prompt
# log-probabilities are shifted by one token and `atlas paradigms score` refuses them
# (docs/paradigms.md).
#
# The run state is kept in $PARADIGM_DEMO_WORK (default target/paradigm-demo): interrupted, the script
# resumes where it stopped. Sampling at temperature 0.7 is not bit-reproducible across machines; the
# scoring (teacher-forced log-probabilities) is deterministic for one build of llama.cpp.
set -euo pipefail
cd "$(dirname "$0")/.."
D=tests/fixtures/paradigm-demo
PORT="${PILOT_LLM_PORT:-0}"
WORK="${PARADIGM_DEMO_WORK:-target/paradigm-demo}"
mkdir -p "$WORK"
if [ -z "${ATLAS:-}" ]; then   # ATLAS=path/to/atlas uses that binary instead of a release build
  ATLAS="${CARGO_TARGET_DIR:-target}/release/atlas"
  cargo build -q --release -p atlas-cli
fi
if [ "${1:-}" = --rescore ]; then
  cp "$D/bundle.json" "$WORK/selection.json"
else
  BASE=$(scripts/llm.sh start "$PORT")
  echo "[paradigm-demo] model at $BASE; work folder $WORK"
  sed "s#http://127.0.0.1:8766/v1#$BASE#g" "$D/design-base.json" >"$WORK/design.json"
  "$ATLAS" paradigms plan --design "$WORK/design.json" --propositions tests/fixtures/paradigm-propositions.json \
    -o "$WORK/plan.json"
  time "$ATLAS" pilot run --plan "$WORK/plan.json" --state "$WORK/run.json" --concurrency 2 --timeout-s 120 \
    --events "$WORK/events.jsonl" --progress-every-s 60
  "$ATLAS" pilot bundle --plan "$WORK/plan.json" --state "$WORK/run.json" --info "$D/info.json" -o "$WORK/selection.json"
  "$ATLAS" pilot summary --plan "$WORK/plan.json" --state "$WORK/run.json"
fi
SCORER=$(scripts/llm-echo.sh start)
echo "[paradigm-demo] teacher-forced scorer at $SCORER"
sed "s#http://127.0.0.1:8766/v1#$SCORER#g" "$D/design-base.json" >"$WORK/design-score.json"
"$ATLAS" paradigms plan --design "$WORK/design-score.json" --propositions tests/fixtures/paradigm-propositions.json \
  -o "$WORK/plan-score.json"
time "$ATLAS" paradigms score --plan "$WORK/plan-score.json" --log "$WORK/scoring-log.jsonl" \
  --bundle "$WORK/selection.json" -o "$WORK/bundle.json" --json "$WORK/likelihood.json"
scripts/llm-echo.sh stop
"$ATLAS" validate "$WORK/bundle.json"
echo "[paradigm-demo] to replace the committed demo: cp $WORK/bundle.json $WORK/likelihood.json $D/ && cp $WORK/scoring-log.jsonl tests/fixtures/paradigm-scoring-log.jsonl"
