#!/usr/bin/env bash
# Reproduces the clinical demo bundle, static/bundles/clinical-demo-smollm2/:
# the clinical protocol of seed 001 (docs/clinical.md, "Pilot protocol") run by `atlas pilot clinical`
# against the real local model SmolLM2-135M-Instruct (scripts/llm.sh) on 20 MedQA US test questions
# (drawn with seed 42), the same model as the plausibility and stereotype judges (a model judging
# itself), with all-MiniLM-L6-v2 explanation embeddings. A PIPELINE DEMO from a 135M-parameter model,
# not clinical evidence.
#
#   scripts/make-clinical-demo.sh       # ~1 to 1.5 h on 2 shared cores (320 planned calls)
#
# The run state is kept in $CLINICAL_DEMO_WORK (default target/clinical-demo): interrupted, the script
# resumes where it stopped (same port: the base URL is part of the design). The model server is started
# on a free port (or $CLINICAL_LLM_PORT) unless one is running (then it is reused and left running); a
# server this script started is stopped at the end. Sampling at temperature 0.7 on llama.cpp is not
# bit-reproducible, so a re-run gives a bundle of the same design with other texts. The bundle step
# alone (no model calls) is:
#   atlas pilot clinical-bundle --state static/bundles/clinical-demo-smollm2/state \
#     --out DIR --info static/bundles/clinical-demo-smollm2/info.json --embed-dir ~/.cache/audit-atlas/minilm
set -euo pipefail
cd "$(dirname "$0")/.."
D=static/bundles/clinical-demo-smollm2
PORT="${CLINICAL_LLM_PORT:-0}"   # 0: a free port
WORK="${CLINICAL_DEMO_WORK:-target/clinical-demo}"
ATLAS="${CARGO_TARGET_DIR:-target}/release/atlas"
SHARED="${AUDIT_ATLAS_SHARED:-../shared}"
ITEMS="$SHARED/data/raw/amqa-medqa-demographic/medqa_us_test/phrases_no_exclude_test.jsonl"
MINILM="${AUDIT_ATLAS_CACHE:-$HOME/.cache/audit-atlas}/minilm"
STARTED_LLM=0
cleanup() { [ "$STARTED_LLM" = 1 ] && scripts/llm.sh stop || true; }
trap cleanup EXIT
mkdir -p "$WORK"

cargo build -q --release -p atlas-cli
if scripts/llm.sh status | grep -q '^running'; then
  BASE=$(scripts/llm.sh status | sed -E 's/^running: (http[^ ]*).*/\1/')
else
  BASE=$(scripts/llm.sh start "$PORT")
  STARTED_LLM=1
fi
echo "[clinical-demo] model at $BASE; work folder $WORK"

# The run (resumes from $WORK/state) and the bundle with embeddings.
time "$ATLAS" pilot clinical --items "$ITEMS" --n 20 --seed 42 \
  --provider openai --base-url "$BASE" --model SmolLM2-135M-Instruct \
  --max-tokens 256 --concurrency 2 --timeout-s 300 \
  --state "$WORK/state" --events "$WORK/events.jsonl" --progress-every-s 60 \
  --out "$WORK/out" --info "$D/info.json" --embed-dir "$MINILM"
"$ATLAS" pilot clinical-summary --state "$WORK/state"
"$ATLAS" validate "$WORK/out/bundle.json"
"$ATLAS" clinical stats "$WORK/out/bundle.json"
echo "[clinical-demo] to replace the committed demo: mkdir -p $D/state && cp $WORK/state/plan.json $WORK/state/run.json $D/state/ && cp $WORK/out/bundle.json $D/"
