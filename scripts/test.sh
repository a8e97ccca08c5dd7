#!/usr/bin/env bash
# Runs every Audit Atlas test: formatting, clippy (native and wasm32), native unit and reference tests,
# the independent numpy reference and the JSON Schema checks, the converter's byte-for-byte
# reproduction, the wasm tests in headless Chromium, and the end-to-end test of the release build.
# Installs what is missing first (scripts/setup.sh --test). Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CACHE="${AUDIT_ATLAS_CACHE:-$HOME/.cache/audit-atlas}"
scripts/setup.sh --test
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$CACHE/node/node_modules/.bin:$PATH"
export NODE_PATH="$CACHE/node/node_modules"
# One build per profile and target, no edits in between: incremental caches would only take disk
# (about 8 GB on a clean run). A developer's own CARGO_INCREMENTAL wins.
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
PY="$CACHE/venv/bin/python"
SHARED="${AUDIT_ATLAS_SHARED:-$ROOT/../shared}"

echo "disk at the start: $(df -h . | awk 'NR==2 {print $4}') free"
passed=0
step() {
  local name=$1; shift
  echo
  echo "=== $name"
  local t0=$SECONDS
  "$@"
  passed=$((passed + 1))
  echo "=== $name: ok ($((SECONDS - t0)) s)"
}

reproduce_default_bundle() {
  local out
  out=$(mktemp -d)
  cargo run -q --release -p atlas-cli --bin atlas -- convert decodingtrust \
    --input "$SHARED/data/raw/decodingtrust-stereotype" --out "$out"
  diff -r "$out" static/bundles/decodingtrust-stereotype
  echo "the converter reproduces static/bundles/decodingtrust-stereotype byte for byte"
  rm -rf "$out"
}

sql_cells_check() {
  cargo build -q --release -p atlas-cli --bin atlas
  "$PY" tests/import/sql_cells_check.py --atlas "${CARGO_TARGET_DIR:-target}/release/atlas"
}

step "cargo fmt --check" cargo fmt --all -- --check
step "clippy (native)" cargo clippy --workspace --all-targets -- -D warnings
step "clippy (wasm32)" cargo clippy --target wasm32-unknown-unknown -p audit-atlas -p atlas-core -p atlas-charts -p atlas-worker -p atlas-parquet-worker -p atlas-import -p atlas-pilot --features audit-atlas/split --all-targets -- -D warnings
step "rustdoc: the crates' docs have no broken links" env RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib -p atlas-core -p atlas-charts -p atlas-worker -p atlas-parquet-worker -p atlas-import -p atlas-pilot -p atlas-embed
step "native tests" cargo test -p atlas-core -p atlas-charts -p atlas-cli -p atlas-worker -p atlas-parquet-worker -p atlas-import -p atlas-pilot -p atlas-embed
step "pilot against the real local model through the fault proxy" scripts/pilot-faults.sh
step "numpy reference is current" "$PY" tests/reference/reference_stats.py --check
step "scipy/numpy rank and resampling reference is current" "$PY" tests/reference/rank_reference.py --check
step "numpy/scipy RQ1 reference is current" "$PY" tests/reference/rq1_reference.py --check
step "numpy variance-components reference is current" "$PY" tests/reference/variance_reference.py --check
step "numpy RQ2 equal-budget reference is current" "$PY" tests/reference/rq2_reference.py --check
step "vectorised numpy RQ2 planner reference (bench/rq2_numpy_vec.py) is current" "$PY" bench/rq2_numpy_vec.py --check
step "numpy/scipy re-weighting reference is current" "$PY" tests/reference/reweight_reference.py --check
step "statsmodels/scipy/numpy model-comparison reference (McNemar, BH, Holm, paired bootstrap, rank bands) is current" "$PY" tests/reference/compare_reference.py --check
step "pandas/scikit-learn RQ3 reference is current" "$PY" tests/reference/rq3_reference.py --check
step "numpy Overview headline reference is current" "$PY" tests/reference/headline_reference.py --check
step "pandas Clinical-view reference is current" "$PY" tests/reference/clinical_view_reference.py --check
step "numpy/scipy clinical metrics reference (EDD, CFV, Spearman) is current" "$PY" tests/reference/clinical_reference.py --check
step "AMQA clinical bundle: accuracy and answer change against pandas" "$PY" tests/reference/amqa_reference.py --check --input "$SHARED/data/raw/amqa-medqa-demographic"
step "all-MiniLM-L6-v2 reference and Q-Pain EDD (numpy) are current" "$PY" tests/reference/minilm_reference.py --check
step "pandas import counts reference is current" "$PY" tests/import/count_reference.py --check
step "numpy task-paradigm likelihood reference (mean token log-probs of the logged local-model responses, SS/LMS/ICAT/CrowS preference, counterbalanced order) is current" "$PY" tests/reference/paradigm_reference.py --check
step "the demo's logged teacher-forced log-probabilities equal llama_cpp computed directly in Python (160 texts, the local model)" "$CACHE/llm-venv/bin/python" tests/reference/paradigm_llama_direct.py --check
step "pandas/numpy across-paradigm reference (scores, ranks, reversals with 1/2-pp tie zones, bootstrap intervals on the hand-worked fixture and the demo) is current" "$PY" tests/reference/paradigm_across_reference.py --check
step "pandas clarification-probe reference (Table 24: eligibility, exclusions, changed and contradiction per procedure and arm, recomputed from the committed local-model probe demo) is current" "$PY" tests/reference/probe_reference.py --check
step "pandas lm-eval log reference is current" "$PY" tests/import/logs_reference.py --check
step "pyarrow reading of the Parquet fixtures is current" "$PY" tests/import/parquet_reference.py --check
step "JSON Schema checks" "$PY" tests/schema/check_schema.py
step "converter reproduces the default bundle" reproduce_default_bundle
step "DuckDB: sql/long_to_cells.py (one pass, parts by model, parts by condition) on hive-partitioned Parquet equals atlas import of the same CSV, cell for cell; interleaving parts refused" \
  sql_cells_check
step "wasm tests in headless Chromium" cargo test --target wasm32-unknown-unknown -p audit-atlas
step "release build (trunk)" trunk build --release
step "the app's first wasm is at most 1.5 MB raw and 500 kB gzip -9; every on-demand view module is in dist/ and named by its loader" tests/size/app_wasm.sh dist
step "end to end in Chromium" node tests/e2e/e2e.mjs
step "end to end: number fields typed key by key in Chromium, against atlas reweight" node tests/e2e/typing.mjs
step "end to end: import of real inputs in Chromium" node tests/e2e/import.mjs
step "end to end: CrowS-Pairs and TrustWare BBQ through the form-based column mapper in Chromium" node tests/e2e/import_form.mjs
step "end to end: tool logs (Inspect .eval by Blob.slice, promptfoo, lm-eval; truncated .eval, Parquet in its on-demand worker; several logs dropped at once) in the Import view in Chromium" node tests/e2e/import_logs.mjs
step "end to end: the SQL path's bundle (sql/long_to_cells.py on the Parquet fixture, texts in shards) opened in Chromium against DuckDB's BERs and the shard texts" env PY="$PY" node tests/e2e/sql_bundle.mjs
step "end to end: the likelihood section (stereotyped candidate preferred) equals atlas likelihood and the numpy paradigm reference" node tests/e2e/likelihood.mjs
step "end to end: the across-paradigm panel (Table 11 with the procedures as conditions) equals atlas paradigms across and the numpy reference; panels (c), (d) across procedures" node tests/e2e/paradigms.mjs
step "end to end: dist/ under a sub-path and offline once loaded" node tests/e2e/offline.mjs
step "end to end: the loading shell of index.html and the default bundle fetched in parallel with the wasm" node tests/e2e/first_paint.mjs
step "end to end: the loading shell's early ranking (computed in the analysis worker) equals atlas overview, and the app takes that worker over" node tests/e2e/early_overview.mjs
step "end to end: loads cannot race (a later open wins; a failed ?bundle= leads back to the default)" node tests/e2e/loads.mjs
step "end to end: the app shell in Chromium (navigation by click and keyboard, a URL per view, back/forward, bundle picker, window drop target)" node tests/e2e/shell.mjs
step "end to end: the views downloaded on demand (which modules a fresh page fetches, a slow module's placeholder and focus, a failed download's Retry)" node tests/e2e/on_demand.mjs
step "end to end: RQ3 and the case inspector in Chromium" node tests/e2e/inspector.mjs
step "end to end: the Clinical view in Chromium" node tests/e2e/clinical.mjs
step "end to end: accessibility in Chromium (44-px targets, WCAG AA contrast in both themes, focus rings, glossary popovers, theme switch, print)" node tests/e2e/a11y.mjs
step "end to end: the Overview headline in Chromium equals atlas overview --json" node tests/e2e/overview.mjs
step "end to end: the Compare view in Chromium equals atlas compare --json (pair picked by select and key, exports, a weight, the URL, 390 px)" node tests/e2e/compare.mjs
step "end to end: the Plan view in Chromium (slider by keyboard, typed budget) equals atlas plan-audit --json; 1, 2 and 4 planner workers equal the CLI; the drawn curve, the pair target, back/forward, URL restore; use this design" node tests/e2e/plan.mjs
step "end to end: sortable tables, display units and the main chart panel at 1280×800 and 390×844" node tests/e2e/tables.mjs
step "end to end: charts follow the theme, fit a 390-px phone with text ≥ 11 px, one-decimal chart tables, atlas panels after their results" node tests/e2e/charts.mjs
step "end to end: a clinical pilot in Chromium against a scripted provider, then atlas clinical embed" node tests/e2e/clinical_pilot.mjs
step "end to end: pilot failures in Chromium (dead port, blocked port, denied preflight, long Retry-After)" node tests/e2e/pilot_failures.mjs
step "end to end: pilot against the real local model in Chromium" node tests/e2e/pilot.mjs
step "end to end: a task-paradigm pilot against the real local model in Chromium (reload, resume, likelihood step via scripts/llm-echo.sh, open; its across-paradigm panel equals atlas paradigms across)" node tests/e2e/pilot_paradigm.mjs
step "end to end: judge coding of a loaded bundle (Chromium and CLI) against the real local model" node tests/e2e/judge.mjs

echo
echo "disk: target/ holds $(du -sh target 2>/dev/null | cut -f1); $(df -h . | awk 'NR==2 {print $4}') free"
echo "steps: $passed passed, 0 failed"
