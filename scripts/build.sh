#!/usr/bin/env bash
# Builds the release app into dist/ (static files for any static file server).
# Installs missing build tools first (scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:${AUDIT_ATLAS_CACHE:-$HOME/.cache/audit-atlas}/node/node_modules/.bin:$PATH"
exec trunk build --release "$@"
