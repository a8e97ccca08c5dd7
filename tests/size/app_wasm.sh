#!/usr/bin/env bash
# The size target of issue 15 (item 6) on a built dist/: the app's first wasm — what a page downloads
# before it can show anything — is at most 1,500,000 bytes raw and 500,000 bytes gzipped (GNU gzip -9
# and zlib at level 6, what web servers send); and every
# module of the views downloaded on demand (src/on_demand.rs) that index.html lists is in dist/ and is
# named by the split loader.
#
#   tests/size/app_wasm.sh [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
set -euo pipefail
dist=${1:-dist}
html="$dist/index.html"
fail() { echo "FAIL $*"; exit 1; }
main=$(grep -o "module_or_path: '[^']*_bg\.wasm'" "$html" | sed "s/.*'\.\/\([^']*\)'/\1/") || true
[ -n "$main" ] && [ -f "$dist/$main" ] || fail "index.html names no app wasm that is in $dist (found '$main')"
raw=$(stat -c %s "$dist/$main")
gz=$(gzip -9 -c "$dist/$main" | wc -c)
# What a web server sends: zlib's gzip at level 6 (nginx, Apache and Node default to zlib; its output is a
# little larger than GNU gzip -9's).
served=$(python3 -c 'import gzip, sys; print(len(gzip.compress(open(sys.argv[1], "rb").read(), 6)))' "$dist/$main")
echo "first wasm $main: $raw bytes raw, $gz bytes gzip -9, $served bytes zlib level 6 (targets 1,500,000 raw and 500,000 gzipped)"
[ "$raw" -le 1500000 ] || fail "the first wasm is $raw bytes raw, over 1,500,000"
[ "$gz" -le 500000 ] || fail "the first wasm is $gz bytes gzip -9, over 500,000"
[ "$served" -le 500000 ] || fail "the first wasm is $served bytes gzipped by zlib at level 6, over 500,000"
listed=$(sed -n 's/.*<meta name="atlas-modules" content="\([^"]*\)".*/\1/p' "$html")
[ -n "$listed" ] || fail "index.html lists no on-demand modules (<meta name=\"atlas-modules\">): the build is not split"
loader=${listed%% *}
[ -f "$dist/$loader" ] || fail "the split loader $loader is not in $dist"
views=0 total=0 total_gz=0
for m in ${listed#* }; do
  [ -f "$dist/$m" ] || fail "the on-demand module $m is not in $dist"
  grep -qF "\"./$m\"" "$dist/$loader" || fail "the split loader does not name $m"
  case $m in split_view_*) views=$((views + 1)) ;; esac
  total=$((total + $(stat -c %s "$dist/$m")))
  total_gz=$((total_gz + $(gzip -9 -c "$dist/$m" | wc -c)))
done
[ "$views" -ge 9 ] || fail "expected the 9 on-demand views (Scores, Compare, Analyses, Plan, Rationale, Cases, Clinical, Import, Pilot), found $views"
grep -q " split_explain_bundle-" <<<" $listed" || fail "the module that explains a bundle the parser refused (split_explain_bundle) is not listed"
echo "ok: $views view modules and $(( $(wc -w <<<"${listed#* }") - views )) other modules (the refused-bundle explainer, shared chunks), $total bytes raw, $total_gz bytes gzip -9 in all"
