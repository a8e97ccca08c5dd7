#!/usr/bin/env bash
# What a code split could take out of the app's first wasm (issue 15's size target; a measurement, not
# a test step). In a scratch worktree of HEAD, `src/app.rs` is edited so that groups of views are
# replaced by a placeholder paragraph; link-time dead-code elimination then drops their code, which is
# what a view loaded on demand would take out of the first wasm. Five probes, each removing more:
#
#   full      the app as built (the baseline; equals what `trunk build --release` ships)
#   on-demand without Import, Pilot (judge, clinical pilot), Compare, Plan, Cases, Clinical
#   +analyses also without Analyses (RQ1/RQ2, across paradigms) and Selection vs Rationale
#   overview  also without Scores & re-weighting: the shell, the picker, the loader and the Overview
#   shell     also without the Overview (top bar, navigation, picker, loader, glossary only)
#
# Each is `cargo build --release --target wasm32-unknown-unknown -p audit-atlas` (the app's release
# profile), `wasm-bindgen --target web` and `wasm-opt -Oz` with Trunk's feature flags, then gzip -9.
#
#   bench/split_size_probe.sh       # needs wasm-bindgen and wasm-opt on PATH (scripts/setup.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$scratch/tree" >/dev/null 2>&1 || true; rm -rf "$scratch"' EXIT
git -C "$root" worktree add -q --detach "$scratch/tree" HEAD
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}/split-size"

edit() { # $1: probe name; cumulative edits of src/app.rs, failing loudly if a view is not found
  python3 - "$scratch/tree/src/app.rs" "$1" <<'EOF'
import sys
path, probe = sys.argv[1], sys.argv[2]
s = open(path).read()
P = '<p>"probe"</p>'
def cut(pat):
    global s
    if pat not in s:
        sys.exit(f"split_size_probe: {pat!r} not found in src/app.rs; update the probe")
    s = s.replace(pat, P)
groups = {
    'on-demand': ['<crate::views::import::ImportPanel/>', '<crate::pilot::panel::PilotPanel/>',
                  '<crate::views::compare::CompareView/>', '<crate::views::plan::PlanView loaded=l_plan/>',
                  '<crate::views::inspector::Inspector loaded/>',
                  'view! { <crate::views::clinical::ClinicalView loaded=loaded.clone()/> }'],
    '+analyses': ['<crate::views::rq3::Rq3Panel loaded=l_rationale/>',
                  '<crate::views::atlas::EvidenceAtlas group=AtlasGroup::Rationale/>'],
    'overview': ['<PolicyPanel/>', '<BerTableView loaded=l_scores.clone() summary/>',
                 '<BerChart loaded=l_scores summary/>', '<crate::views::explorer::Reweighting/>',
                 '<crate::views::atlas::EvidenceAtlas group=AtlasGroup::Weights/>',
                 '<crate::views::likelihood::LikelihoodPanel loaded=l_likelihood/>'],
    'shell': ['view! { <BundleView loaded/> }'],
}
for pat in groups.get(probe, []):
    if pat.startswith('view! {'):
        if pat not in s:
            sys.exit(f"split_size_probe: {pat!r} not found in src/app.rs; update the probe")
        s = s.replace(pat, 'view! { ' + P + ' }')
    else:
        cut(pat)
if probe == '+analyses':
    a = s.find('            <Analyses\n')
    if a < 0:
        sys.exit("split_size_probe: <Analyses …/> not found in src/app.rs; update the probe")
    b = s.index('/>\n', s.index('across_atlas=', a)) + 3
    s = s[:a] + '            ' + P + '\n' + s[b:]
open(path, 'w').write(s)
EOF
}

printf '%-10s %12s %12s\n' probe 'raw kB' 'gzip -9 kB'
for probe in full on-demand +analyses overview shell; do
  edit "$probe"
  touch "$scratch/tree/src/app.rs"
  (cd "$scratch/tree" && cargo build -q --release --target wasm32-unknown-unknown -p audit-atlas 2>/dev/null) \
    || { echo "split_size_probe: the $probe build failed" >&2; exit 1; }
  rm -rf "$scratch/out" && mkdir "$scratch/out"
  wasm-bindgen --target web --out-dir "$scratch/out" "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/audit-atlas.wasm"
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    --enable-mutable-globals --enable-reference-types "$scratch/out/audit-atlas_bg.wasm" -o "$scratch/out/opt.wasm"
  raw=$(stat -c %s "$scratch/out/opt.wasm"); gz=$(gzip -9 -c "$scratch/out/opt.wasm" | wc -c)
  printf '%-10s %12s %12s\n' "$probe" "$(( (raw + 500) / 1000 ))" "$(( (gz + 500) / 1000 ))"
done
