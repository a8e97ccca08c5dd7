#!/usr/bin/env bash
# SPIKE, not the shipped build (issue 15's size target): the app with six views loaded on demand through
# Leptos' `#[lazy]` and wasm-split, measured, and optionally put into a copy of a Trunk dist/ for trying
# in Chromium. A measurement, not a test step; docs/benchmarks.md ("A code split, tried") says what it
# showed and what landing it would take.
#
# In a scratch worktree of HEAD it applies bench/split_spike.patch (src/lazy_views.rs: Import, Pilot,
# Compare, Plan, Cases and Clinical as `#[lazy]` functions under `--cfg atlas_split`, each mounted the
# first time its view is shown), then
#   cargo build --release --target wasm32-unknown-unknown -p audit-atlas
#       with RUSTFLAGS="-C link-args=--emit-relocs --cfg atlas_split"   (wasm-split needs the relocations)
#   wasm-split-cli MAIN.wasm OUT --out-name audit-atlas --target web   (wasm_split_cli_support 0.2.4)
#   wasm-bindgen --target web --keep-lld-exports OUT/audit-atlas.wasm  (without --keep-lld-exports the
#       chunks cannot link: wasm-bindgen drops the `__indirect_function_table` export they import)
#   wasm-opt -Oz (Trunk's flags) on the main module and on every chunk
# and prints the sizes (raw and gzip -9) of the main module, the six view modules and the shared chunks.
#
#   cargo install --locked wasm_split_cli_support --version 0.2.4 --features build-binary   # once, ~5 min
#   bench/split_spike.sh [TRUNK_DIST OUT_DIST]
#
# With TRUNK_DIST (a `trunk build --release` dist/ of the same commit) it writes OUT_DIST: that dist with
# the app's JS glue and wasm replaced by the split build, the chunks and `__wasm_split.js` beside them,
# and the `integrity` attributes dropped (the files differ from what Trunk hashed). The e2e scripts take
# it as their argument (e.g. `node tests/e2e/shell.mjs OUT_DIST`).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
for tool in wasm-split-cli wasm-bindgen wasm-opt; do
  command -v "$tool" >/dev/null || { echo "split_spike: $tool is not on PATH (see the header)" >&2; exit 1; }
done
scratch=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
git -C "$root" worktree add -q --detach "$scratch/tree" HEAD
git -C "$scratch/tree" apply "$root/bench/split_spike.patch"
# Its own target folder: the RUSTFLAGS differ from every other build (SPLIT_TARGET_DIR overrides it).
export CARGO_TARGET_DIR="${SPLIT_TARGET_DIR:-$root/target/split-spike}"
(cd "$scratch/tree" && RUSTFLAGS="-C link-args=--emit-relocs --cfg atlas_split" \
  cargo build -q --release --target wasm32-unknown-unknown -p audit-atlas 2>/dev/null) \
  || { echo "split_spike: the build failed (rerun it in $scratch/tree to see why)" >&2; exit 1; }
out=$scratch/out bg=$scratch/bg opt=$scratch/opt
mkdir -p "$out" "$bg" "$opt"
wasm-split-cli "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/audit-atlas.wasm" "$out" --out-name audit-atlas --target web
wasm-bindgen --target web --keep-lld-exports --out-dir "$bg" "$out/audit-atlas.wasm"
flags=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals --enable-reference-types)
wasm-opt -Oz "${flags[@]}" -o "$opt/audit-atlas_bg.wasm" "$bg/audit-atlas_bg.wasm"
for f in "$out"/split_*.wasm "$out"/chunk_*.wasm; do
  wasm-opt -Oz "${flags[@]}" -o "$opt/$(basename "$f")" "$f" 2>/dev/null
done
size() { printf '%-22s %10s %10s\n' "$1" "$(( ($2 + 500) / 1000 ))" "$(( ($3 + 500) / 1000 ))"; }
printf '%-22s %10s %10s\n' module 'raw kB' 'gzip -9 kB'
size main "$(stat -c %s "$opt/audit-atlas_bg.wasm")" "$(gzip -9 -c "$opt/audit-atlas_bg.wasm" | wc -c)"
for f in "$opt"/split_*.wasm; do
  name=$(basename "$f" .wasm); name=${name#split_}; name=${name%_*}
  size "$name" "$(stat -c %s "$f")" "$(gzip -9 -c "$f" | wc -c)"
done
chunks=("$opt"/chunk_*.wasm)
size "${#chunks[@]} shared chunks" "$(cat "${chunks[@]}" | wc -c)" "$(for f in "${chunks[@]}"; do gzip -9 -c "$f" | wc -c; done | paste -sd+ | bc)"
if [ $# -ge 2 ]; then
  src=$1 dst=$2
  rm -rf "$dst"; cp -r "$src" "$dst"
  js=$(cd "$dst" && ls audit-atlas-*.js); wasm=$(cd "$dst" && ls audit-atlas-*_bg.wasm)
  cp "$bg/audit-atlas.js" "$dst/$js"
  cp "$opt/audit-atlas_bg.wasm" "$dst/$wasm"
  sed "s#\"./audit-atlas.js\"#\"./$js\"#" "$out/__wasm_split.js" > "$dst/__wasm_split.js"
  cp "$opt"/split_*.wasm "$opt"/chunk_*.wasm "$dst/"
  sed -i -E 's/ integrity="[^"]*"//g' "$dst/index.html"
  echo "split_spike: wrote $dst ($js, $wasm, ${#chunks[@]} shared chunks)"
fi
