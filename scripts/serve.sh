#!/usr/bin/env bash
# Serves Audit Atlas with its default bundle at http://127.0.0.1:8080 (release build).
# Installs missing build tools first (scripts/setup.sh). Extra arguments go to `trunk serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:${AUDIT_ATLAS_CACHE:-$HOME/.cache/audit-atlas}/node/node_modules/.bin:$PATH"
exec trunk serve --release "$@"
