#!/usr/bin/env bash
# RQ2 benchmark: the same RQ2 (10,000 draws, budget 200, seed 20260722, every design incl. the coverage
# curve, 8 models) on the SYNTHETIC full-scale bundle (`atlas synth --seed 20260722 --layout crossed`),
# run three ways on this machine in this run:
#   native   target/release/atlas analyze-rq2 BUNDLE --draws 10000 --budget 200 --seed 20260722 --format json
#   browser  the release app in headless Chromium (?bundle=), RQ2 panel, Run → result (bench/rq2_browser.mjs)
#   numpy    an independent numpy implementation reading the bundle (bench/rq2_numpy.py)
# Each timed REPEAT times (default 3); prints the medians and the ratios numpy/browser and numpy/native.
# A benchmark, not a test: the exit status says only whether everything ran.
#
#   bench/rq2_bench.sh                         # defaults
#   DRAWS=1000 REPEAT=1 bench/rq2_bench.sh     # quick look
#   LAYOUT=nested bench/rq2_bench.sh           # the 13.6 MB nested layout instead
#
#   bench/rq2_bench.sh headline                # issue 17 §3: the headline RQ2 on the DEFAULT bundle
# The headline mode runs concentrated, SRS and stratified (B = 200, 10,000 audit draws each, 8 models, the
# shipped DecodingTrust bundle) as
#   native     target/release/atlas plan-audit BUNDLE --design concentrated,srs,stratified --budget 200
#              --draws 10000 --json   (RQ2's audit draws and metrics, identical to analyze-rq2's)
#   numpy-vec  bench/rq2_numpy_vec.py: vectorised numpy, the same three designs and metrics, with the
#              native numbers side by side (z-scores of the differences)
#   browser    the release app in headless Chromium (bench/plan_browser.mjs): the same three estimates
#              through the Plan view's hook, timed from the request to the result in the page (the
#              wasm compute; no process start), checked equal to the native JSON; and the planner's
#              per-estimate time (2,000 draws, median over 21 slider positions)
# and, labelled apart because they do more work (every design incl. the coverage curve, the repeat
# draws and the contrast bootstrap): native analyze-rq2 and the old per-design loop numpy
# (bench/rq2_numpy.py). Wall and CPU seconds (user + sys; on a shared machine the wall time includes
# waiting for a core), median of REPEAT.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ${1:-} == headline ]]; then
  DRAWS=${DRAWS:-10000}
  BUDGET=${BUDGET:-200}
  SEED=${SEED:-20260722}
  REPEAT=${REPEAT:-3}
  PY=${PYTHON:-$HOME/.cache/audit-atlas/venv/bin/python}
  CLI=target/release/atlas
  bundle=static/bundles/decodingtrust-stereotype/bundle.json
  [[ -x $CLI ]] || { echo "missing $CLI: run cargo build --release -p atlas-cli" >&2; exit 2; }
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/atlas-rq2-headline.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
  timed() { # label, command...: appends "wall cpu" to $tmp/$label
    local label=$1; shift
    /usr/bin/time -f '%e %U %S' -o "$tmp/t" "$@" >"$tmp/$label.out"
    awk '{printf "%s %.3f\n", $1, $2 + $3}' "$tmp/t" >>"$tmp/$label"
    echo "  $label: wall/cpu seconds $(tail -1 "$tmp/$label")"
  }
  echo "headline RQ2: $bundle, concentrated/srs/stratified, budget $BUDGET, $DRAWS draws, seed $SEED, $REPEAT repetitions"
  for ((i = 0; i < REPEAT; i++)); do
    timed native "$CLI" plan-audit "$bundle" --design concentrated,srs,stratified --budget "$BUDGET" \
      --draws "$DRAWS" --seed "$SEED" --json
    timed numpy-vec "$PY" bench/rq2_numpy_vec.py "$bundle" --draws "$DRAWS" --budget "$BUDGET" --seed "$SEED" \
      --repeat 1 --compare "$tmp/native.out"
    sed -n 's/.*draws+metrics \([0-9.]*\).*/\1/p' "$tmp/numpy-vec.out" | head -1 >>"$tmp/numpy-vec-compute"
    timed native-full-rq2 "$CLI" analyze-rq2 "$bundle" --draws "$DRAWS" --budget "$BUDGET" --seed "$SEED" --format json
    timed numpy-loop-full-rq2 "$PY" bench/rq2_numpy.py "$bundle" --draws "$DRAWS" --budget "$BUDGET" --seed "$SEED" --repeat 1
  done
  export NODE_PATH=${NODE_PATH:-$HOME/.cache/audit-atlas/node/node_modules}
  browser_ok=0
  if [[ -f dist/index.html ]]; then
    node bench/plan_browser.mjs --draws "$DRAWS" --budget "$BUDGET" --repeat "$REPEAT" --compare "$tmp/native.out" \
      | tee "$tmp/browser.txt" | sed 's/^/  browser: /' && browser_ok=1
  else
    echo "  browser: skipped (no dist/: run scripts/build.sh)"
  fi
  sed 's/^/  /' "$tmp/numpy-vec.out"
  col() { awk -v c="$2" '{print $c}' "$tmp/$1" | median; }
  nw=$(col native 1); nc=$(col native 2); vw=$(col numpy-vec 1); vc=$(col numpy-vec 2)
  echo
  printf '| %-20s | %9s | %9s |\n' run "wall s" "cpu s"
  printf '| %-20s | %9s | %9s |\n' --- ---: ---:
  for r in native numpy-vec native-full-rq2 numpy-loop-full-rq2; do
    printf '| %-20s | %9.3f | %9.3f |\n' "$r" "$(col $r 1)" "$(col $r 2)"
  done
  printf 'numpy-vec / native (same work): wall %.2f×, cpu %.2f×\n' "$(echo "$vw / $nw" | bc -l)" "$(echo "$vc / $nc" | bc -l)"
  if ((browser_ok)); then
    bw=$(awk '/^browser_seconds/ {print $2}' "$tmp/browser.txt" | median)
    printf '| %-20s | %9.3f | %9s |\n' "browser (compute)" "$bw" "—"
    vd=$(median <"$tmp/numpy-vec-compute")
    printf '| %-20s | %9.3f | %9s |\n' "numpy-vec (compute)" "$vd" "—"
    printf 'compute only (draws + metrics, no process start or bundle read): numpy-vec / browser %.2f× (target ≥ 5×)\n' \
      "$(echo "$vd / $bw" | bc -l)"
    printf 'whole process vs browser compute: numpy-vec wall / browser %.2f×; browser / native wall %.2f×\n' \
      "$(echo "$vw / $bw" | bc -l)" "$(echo "$bw / $nw" | bc -l)"
    bp=$(awk '/^browser_pool_seconds/ {print $2}' "$tmp/browser.txt" | median)
    if [[ -n $bp ]]; then
      printf '| %-20s | %9.3f | %9s |\n' "browser pool (compute)" "$bp" "—"
      printf 'compute only: numpy-vec / browser planner pool %.2f× (target ≥ 5×)\n' "$(echo "$vd / $bp" | bc -l)"
    fi
    grep '^estimate_ms ' "$tmp/browser.txt" | sed 's/^/planner per estimate in the browser: /'
  fi
  exit 0
fi
DRAWS=${DRAWS:-10000}
BUDGET=${BUDGET:-200}
SEED=${SEED:-20260722}
REPEAT=${REPEAT:-3}
LAYOUT=${LAYOUT:-crossed}
PY=${PYTHON:-$HOME/.cache/audit-atlas/venv/bin/python}
export NODE_PATH=${NODE_PATH:-$HOME/.cache/audit-atlas/node/node_modules}
CLI=target/release/atlas

missing=()
[[ -f dist/index.html ]] || missing+=("dist/ (the release app): run scripts/build.sh")
[[ -x $CLI ]] || missing+=("$CLI: run cargo build --release -p atlas-cli")
[[ -x $PY ]] || missing+=("$PY (numpy venv): run scripts/setup.sh")
[[ -d $NODE_PATH/playwright-core ]] || missing+=("playwright-core in $NODE_PATH: run scripts/setup.sh")
if ((${#missing[@]})); then
  printf 'missing: %s\n' "${missing[@]}" >&2
  exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/atlas-rq2-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bundle=$tmp/synthetic-$LAYOUT.json
layout_args=()
[[ $LAYOUT == crossed ]] && layout_args=(--layout crossed)
"$CLI" synth --seed 20260722 --out "$bundle" "${layout_args[@]}" >/dev/null
echo "bundle: $bundle ($(stat -c %s "$bundle") bytes, layout $LAYOUT); draws $DRAWS, budget $BUDGET, seed $SEED, $REPEAT repetitions"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
now() { date +%s.%N; }

echo "native..."
native=()
for ((i = 0; i < REPEAT; i++)); do
  t0=$(now)
  "$CLI" analyze-rq2 "$bundle" --draws "$DRAWS" --budget "$BUDGET" --seed "$SEED" --format json >"$tmp/native.json"
  t1=$(now)
  native+=("$(echo "$t1 - $t0" | bc -l)")
  echo "  native_seconds ${native[-1]}"
done

echo "browser (headless Chromium, analysis Web Worker)..."
node bench/rq2_browser.mjs "$bundle" --draws "$DRAWS" --budget "$BUDGET" --seed "$SEED" --repeat "$REPEAT" \
  --compare "$tmp/native.json" | tee "$tmp/browser.txt" | sed 's/^/  /'
mapfile -t browser < <(awk '/^browser_seconds/ {print $2}' "$tmp/browser.txt")

echo "numpy..."
"$PY" bench/rq2_numpy.py "$bundle" --draws "$DRAWS" --budget "$BUDGET" --seed "$SEED" --repeat "$REPEAT" \
  | tee "$tmp/numpy.txt" | sed 's/^/  /'
mapfile -t numpy < <(awk '/^numpy_seconds/ {print $2}' "$tmp/numpy.txt")

n=$(printf '%s\n' "${native[@]}" | median)
b=$(printf '%s\n' "${browser[@]}" | median)
p=$(printf '%s\n' "${numpy[@]}" | median)
echo
echo "RQ2, $DRAWS draws, budget $BUDGET, seed $SEED, all designs + coverage, synthetic $LAYOUT bundle (median of $REPEAT, seconds)"
printf '| %-8s | %9s | %s |\n' run seconds "numpy / this"
printf '| %-8s | %9s | %s |\n' --- ---: ---:
for row in "native $n" "browser $b" "numpy $p"; do
  set -- $row
  printf '| %-8s | %9.2f | %.2f× |\n' "$1" "$2" "$(echo "$p / $2" | bc -l)"
done
printf 'numpy/browser = %.2f× (target ≥ 3×), numpy/native = %.2f×, browser/native = %.2f×\n' \
  "$(echo "$p / $b" | bc -l)" "$(echo "$p / $n" | bc -l)" "$(echo "$b / $n" | bc -l)"
