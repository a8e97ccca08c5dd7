#!/usr/bin/env bash
# Re-weighting benchmark (issue 4): the recompute after a weight change (validate the weights, then
# scores, ranks, Kendall τ-b, inversions and inverted pairs against the equal-weight ranking) on the
# SYNTHETIC full-scale bundle (`atlas synth --seed 20260722`, nested and crossed layouts), over 1,000
# random weight vectors, natively; prints the median and p99 times against one 60 Hz frame (16.7 ms),
# the one-off costs and the statement-cluster bootstrap time. A benchmark, not a test.
#
#   bench/reweight_bench.sh                  # defaults: 1,000 vectors, 2,000 bootstrap replicates
#   VECTORS=10000 BOOTSTRAP=200 bench/reweight_bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
VECTORS=${VECTORS:-1000}
BOOTSTRAP=${BOOTSTRAP:-2000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/atlas-reweight-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cargo build -q --release -p atlas-cli --bin atlas
CLI=${CARGO_TARGET_DIR:-target}/release/atlas
"$CLI" synth --seed 20260722 --out "$tmp/synthetic-nested.json" >/dev/null
"$CLI" synth --seed 20260722 --layout crossed --out "$tmp/synthetic-crossed.json" >/dev/null
cargo run -q --release -p atlas-core --example reweight_bench -- \
  "$tmp/synthetic-nested.json" "$tmp/synthetic-crossed.json" --vectors "$VECTORS" --bootstrap "$BOOTSTRAP"
