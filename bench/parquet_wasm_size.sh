#!/usr/bin/env bash
# What the Parquet reader adds to a wasm32 build (issue 16; a measurement, not a test step).
# bench/parquet-size/ is a probe cdylib (its own workspace, the app's release profile: opt-level z,
# LTO, one codegen unit, panic abort) that reaches the other log readers; with `--features parquet`
# it also reaches atlas_import::logs::parquet::read. Both are built for wasm32-unknown-unknown, run
# through wasm-opt -Oz (binaryen, as Trunk does for the app) and gzip -9; the differences are the
# reader's cost.
#
#   bench/parquet_wasm_size.sh      # needs wasm-opt on PATH (scripts/setup.sh installs binaryen)
set -euo pipefail
cd "$(dirname "$0")/parquet-size"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$(pwd)/../../target}/parquet-size"
cp ../../Cargo.lock .
out=$(mktemp -d)
trap 'rm -rf "$out" Cargo.lock' EXIT
for variant in without with; do
  flags=()
  [ "$variant" = with ] && flags=(--features parquet)
  cargo build -q --release --target wasm32-unknown-unknown "${flags[@]}"
  cp "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/pq_size.wasm" "$out/$variant.wasm"
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals "$out/$variant.wasm" -o "$out/$variant.opt.wasm"
  printf '%-8s raw %9d B  wasm-opt -Oz %9d B  + gzip -9 %9d B\n' "$variant" \
    "$(stat -c %s "$out/$variant.wasm")" "$(stat -c %s "$out/$variant.opt.wasm")" \
    "$(gzip -9 -c "$out/$variant.opt.wasm" | wc -c)"
done
