#!/usr/bin/env bash
# The 10^6-input no-panic run of the importer's readers (CSV, TSV, JSONL, JSON array), the bundle
# parser (atlas_core::Audit::from_bytes) and the mapping parser: crates/atlas-import/tests/fuzz.rs.
# It prints the input count, the time and the failures (0 allowed). ATLAS_FUZZ_INPUTS and
# ATLAS_FUZZ_SEED override the count (default 1,000,000) and the seed (default 20260801).
set -euo pipefail
cd "$(dirname "$0")/.."
exec cargo test --release -p atlas-import --test fuzz -- --ignored --nocapture
