#!/usr/bin/env bash
# Reproduces the pilot demo bundle, static/bundles/pilot-demo-smollm2/: the real local
# model SmolLM2-135M-Instruct (scripts/llm.sh) × 40 statements of the default bundle (5 per category,
# fixed seed) × the five Table 7 wordings × 3 repeats at temperature 0.7, judge-coded by three rubric
# prompts run on the same model. A PIPELINE DEMO from a 135M-parameter model, not evidence about any
# production model.
#
#   scripts/make-pilot-demo.sh          # ~10 min of audited calls + ~15 min of judge calls on 2 cores
#
# The run state is kept in $PILOT_DEMO_WORK (default target/pilot-demo): interrupted, the script resumes
# where it stopped. The model's base URL is the running server's (scripts/llm.sh start, a free port
# or $PILOT_LLM_PORT); the committed design.json was made with http://127.0.0.1:8766/v1. Sampling at temperature 0.7
# on llama.cpp is not bit-reproducible across machines and thread timings, so a re-run gives a bundle of
# the same design with other texts.
set -euo pipefail
cd "$(dirname "$0")/.."
D=static/bundles/pilot-demo-smollm2
PORT="${PILOT_LLM_PORT:-0}"   # 0: a free port
WORK="${PILOT_DEMO_WORK:-target/pilot-demo}"
ATLAS="${CARGO_TARGET_DIR:-target}/release/atlas"
mkdir -p "$WORK"

cargo build -q --release -p atlas-cli
BASE=$(scripts/llm.sh start "$PORT")
echo "[pilot-demo] model at $BASE; work folder $WORK"

# 1. The design: the base (model, repeats, temperature, judges, cap) + 40 statements sampled by category
#    from the default bundle + the Table 7 wordings + the baseline condition B0.
sed "s#http://127.0.0.1:8766/v1#$BASE#g" "$D/design-base.json" >"$WORK/design-base.json"
"$ATLAS" pilot design --base "$WORK/design-base.json" \
  --statements-from static/bundles/decodingtrust-stereotype/bundle.json --per-category 5 \
  -o "$WORK/design.json"
# 2. The plan: 600 audited calls + up to 1,800 judge calls, under the design's cap of 2,500.
"$ATLAS" pilot plan --design "$WORK/design.json" -o "$WORK/plan.json"
# 3. The run (resumes from $WORK/run.json), then the judge calls.
time "$ATLAS" pilot run --plan "$WORK/plan.json" --state "$WORK/run.json" --concurrency 2 --timeout-s 120 \
  --events "$WORK/events.jsonl" --progress-every-s 60
# 4. The bundle, labelled as a pipeline demo (info.json), and its counts.
"$ATLAS" pilot bundle --plan "$WORK/plan.json" --state "$WORK/run.json" --info "$D/info.json" -o "$WORK/bundle.json"
"$ATLAS" pilot summary --plan "$WORK/plan.json" --state "$WORK/run.json"
"$ATLAS" validate "$WORK/bundle.json"
echo "[pilot-demo] to replace the committed demo: cp $WORK/design.json $WORK/bundle.json $D/"
