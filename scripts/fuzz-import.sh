#!/usr/bin/env bash
# The 10^6-input no-panic runs: first the importer's readers (CSV, TSV, JSONL, JSON array, and the Inspect
# AI .eval, promptfoo, lm-eval and Parquet log readers), the bundle parser (atlas_core::Audit::from_bytes) and the mapping
# parser (crates/atlas-import/tests/fuzz.rs; 10^6 inputs; before the Parquet target 125,000 per input kind, in 188 s release on the
# shared 2 cores, 2026-12-02, linear in the count; with it 90,909 per kind in 293 s; the Parquet inputs that
# panicked inside arrow-rs 60 decoders are checked before decoding now: docs/import-mapping.md, "Parquet long tables"),
# 2026-12-06, after the CSV reader moved onto csv-core: 0 failures in 160.8 s (the first run found a byte-order mark that csv-core
# dropped or kept depending on the chunk borders, fixed in src/csv.rs); then the pilot's provider-response, Selection/Rationale, judge-label and run-state parsers
# (crates/atlas-pilot/tests/fuzz.rs). Each prints its input count, time and failures (0 allowed).
# ATLAS_FUZZ_DUMP=DIR writes each failing input to DIR (to replay it). ATLAS_FUZZ_INPUTS and ATLAS_FUZZ_SEED override the count (default 1,000,000) and the seed (default
# 20260801) of both.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --release -p atlas-import --test fuzz -- --ignored --nocapture
exec cargo test --release -p atlas-pilot --test fuzz -- --ignored --nocapture
