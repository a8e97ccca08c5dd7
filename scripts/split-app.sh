#!/usr/bin/env bash
# Trunk's post_build hook (Trunk.toml): cuts the app's wasm into the first module and the modules of the
# views loaded on demand (src/on_demand.rs; issue 15, item 6), and puts them into Trunk's staging folder
# in place of the unsplit app Trunk wrote.
#
# Trunk has built the app with its `split` feature (index.html: data-cargo-features="split"), so the
# cargo output keeps its relocations (build.rs: --emit-relocs) and its on-demand views are split points.
# Trunk 0.21 cannot split a wasm itself (trunk-rs/trunk#1022), so this hook takes the cargo output and
#   wasm-split-cli  APP.wasm → the main module, one module per view (split_*.wasm), shared chunks
#                   (chunk_*.wasm) and their loader __wasm_split.js (wasm_split_cli_support 0.2.4,
#                   installed by scripts/setup.sh)
#   wasm-bindgen --target web --keep-lld-exports  on the main module (without --keep-lld-exports the
#                   view modules cannot link: they import the main module's `__indirect_function_table`)
#   wasm-opt -Oz  on every module (release; Trunk's own wasm-opt is off for the app)
# then names every file by its content (like Trunk's hashed names: a new build never reuses a name),
# rewrites the references (index.html's preload links and loader, the glue's import of the loader, the
# loader's imports of the glue and of each module) and the integrity hashes of index.html's links, and
# lists the view modules in index.html (<meta name="atlas-modules">) for the service worker (web/sw.js)
# to store ahead. Trunk's unsplit app files are removed.
#
# Environment (set by Trunk): TRUNK_STAGING_DIR, TRUNK_PROFILE. Fails, and so fails the Trunk build,
# when a tool is missing or a step fails; a glue without the split loader (the feature off) is left as is.
set -euo pipefail
stage=${TRUNK_STAGING_DIR:?"split-app.sh is Trunk's post_build hook (Trunk.toml); run trunk build"}
profile=${TRUNK_PROFILE:-release}
root=$(cd "$(dirname "$0")/.." && pwd)
say() { echo "[split-app] $*"; }
fail() { echo "[split-app] error: $*" >&2; exit 1; }

shopt -s nullglob
wasms=("$stage"/audit-atlas-*_bg.wasm)
[ "${#wasms[@]}" = 1 ] || fail "expected one audit-atlas-*_bg.wasm from Trunk in $stage, found ${#wasms[@]}"
trunk_wasm=$(basename "${wasms[0]}")
trunk_js=${trunk_wasm%_bg.wasm}.js
[ -f "$stage/$trunk_js" ] || fail "Trunk's glue $trunk_js is missing in $stage"
if ! grep -q '__wasm_split' "$stage/$trunk_js"; then
  say "the app was built without its split feature: left as one wasm"
  exit 0
fi
for tool in wasm-split-cli wasm-bindgen wasm-opt; do
  command -v "$tool" >/dev/null || fail "$tool is not on PATH (scripts/setup.sh installs it)"
done

target_dir=$(cargo metadata --format-version 1 --no-deps --manifest-path "$root/Cargo.toml" |
  sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
# The app's cargo profile: index.html's data-cargo-profile-release (`app-release`) in release builds.
cargo_profile=$profile
[ "$profile" = release ] && cargo_profile=app-release
raw="$target_dir/wasm32-unknown-unknown/$cargo_profile/audit-atlas.wasm"
[ -f "$raw" ] || fail "the cargo output $raw is missing"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/split" "$work/bg" "$work/out"
wasm-split-cli "$raw" "$work/split" --out-name audit-atlas --target web >/dev/null
[ -f "$work/split/__wasm_split.js" ] || fail "wasm-split-cli wrote no __wasm_split.js"
wasm-bindgen --target web --keep-lld-exports --no-typescript --out-dir "$work/bg" "$work/split/audit-atlas.wasm"

optimise() { # IN OUT
  if [ "$profile" = release ]; then
    wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals --enable-reference-types -o "$2" "$1"
  else
    cp "$1" "$2"
  fi
}
hash16() { cat "$@" | sha256sum | cut -c1-16; }
sri() { echo "sha384-$(openssl dgst -sha384 -binary "$1" | base64 -w0)"; }

# Replaces the quoted file name "./OLD" by "./NEW" in FILE (names hold only [A-Za-z0-9_.-]).
rename_ref() { # FILE OLD NEW
  grep -qF "\"./$2\"" "$1" || fail "$(basename "$1") does not name ./$2"
  sed -i "s|\"\./${2//./\\.}\"|\"./$3\"|g" "$1"
}

# The view modules and shared chunks: optimised, named by their own content, renamed in the loader.
loader="$work/loader.js" glue="$work/glue.js"
cp "$work/split/__wasm_split.js" "$loader"
cp "$work/bg/audit-atlas.js" "$glue"
mkdir -p "$work/opt"
export -f optimise
export profile
# wasm-opt on every module, as many at once as there are cores (about 170 modules).
for f in "$work/bg/audit-atlas_bg.wasm" "$work/split"/split_*.wasm "$work/split"/chunk_*.wasm; do
  printf '%s\0%s\0' "$f" "$work/opt/$(basename "$f")"
done | xargs -0 -n 2 -P "$(nproc)" bash -c 'optimise "$0" "$1"' || fail "wasm-opt failed"
modules=()
for f in "$work/split"/split_*.wasm "$work/split"/chunk_*.wasm; do
  stem=$(basename "$f" .wasm)
  named="$stem-$(hash16 "$work/opt/$stem.wasm").wasm"
  mv "$work/opt/$stem.wasm" "$work/out/$named"
  rename_ref "$loader" "$stem.wasm" "$named"
  modules+=("$named")
done
mv "$work/opt/audit-atlas_bg.wasm" "$work/out/main_bg.wasm"

# The main module, its glue and the loader share one name, from the content of all three.
h=$(hash16 "$work/out/main_bg.wasm" "$loader" "$glue")
app="audit-atlas-$h"
split_js="__wasm_split-$h.js"
# The glue's `import … from "./__wasm_split.js"` lines name the file; the same string as a key of its
# imports object names the wasm's import module and stays.
grep -q '^import .* from "\./__wasm_split\.js"' "$glue" || fail "the glue does not import ./__wasm_split.js"
sed -i "s|^\(import .* from \)\"\./__wasm_split\.js\"|\1\"./$split_js\"|" "$glue"
rename_ref "$loader" audit-atlas.js "$app.js"
mv "$glue" "$work/out/$app.js"
mv "$loader" "$work/out/$split_js"
mv "$work/out/main_bg.wasm" "$work/out/${app}_bg.wasm"

# index.html: Trunk's names → ours, integrity of the two preloaded files, the module list.
html="$stage/index.html"
grep -q "$trunk_js" "$html" || fail "index.html does not name $trunk_js"
old_js_sri=$(sri "$stage/$trunk_js") old_wasm_sri=$(sri "$stage/$trunk_wasm")
new_js_sri=$(sri "$work/out/$app.js") new_wasm_sri=$(sri "$work/out/${app}_bg.wasm")
sed -i \
  -e "s#${trunk_js}#${app}.js#g" -e "s#${trunk_wasm}#${app}_bg.wasm#g" \
  -e "s#${old_js_sri}#${new_js_sri}#g" -e "s#${old_wasm_sri}#${new_wasm_sri}#g" \
  "$html"
grep -q "$new_js_sri" "$html" || say "note: index.html had no integrity hash for the glue (left without)"
meta="<meta name=\"atlas-modules\" content=\"${split_js} ${modules[*]}\">"
sed -i "s#</head>#${meta}</head>#" "$html"
grep -q 'name="atlas-modules"' "$html" || fail "could not add the module list to index.html"

rm -f "$stage/$trunk_js" "$stage/$trunk_wasm"
cp "$work/out"/* "$stage/"

kb() { echo $(( ($1 + 500) / 1000 )); }
main_raw=$(stat -c %s "$stage/${app}_bg.wasm")
main_gz=$(gzip -9 -c "$stage/${app}_bg.wasm" | wc -c)
say "first module ${app}_bg.wasm: $(kb "$main_raw") kB raw, $(kb "$main_gz") kB gzip -9; ${#modules[@]} on-demand modules and chunks"
