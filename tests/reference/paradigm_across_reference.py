#!/usr/bin/env python3
"""Independent pandas/numpy/scipy reference for the across-paradigm analysis (`atlas paradigms across`,
crates/atlas-core/src/across.rs; seed 000 = BiAxisBias §5.2, C.2, Table 11, the procedures of Table 10).

Writes tests/reference/expected_paradigm_across.json, read by crates/atlas-core/tests/across.rs. Nothing
of the Rust code is used: each bundle's JSON is decoded here into a long pandas table (one row per
answered cell: model, procedure, proposition, template, repeat, bias evidence), and

* unit value = mean bias evidence of the valid (non-Abstain) Selections of model x procedure x
  proposition x template (all responses); a proposition's value under a procedure = the mean of its
  template unit values (a paradigm bundle plans each proposition under one template, its A/B order);
  score = mean over propositions with a value (fraction);
* ranks: scipy.stats.rankdata(score, method="average") among the models with a score (lower is better:
  neither bundle declares a direction);
* pairs a < b (alphabetically, ignoring case); delta = 100 (score_a - score_b) in pp per procedure;
  reverses = some delta < 0 and some > 0; within a tie zone eps (1, 2 pp) some delta < -eps and some
  > eps (1e-9 pp slack);
* paired statement-cluster bootstrap: propositions drawn with replacement (numpy default_rng, REPS
  replicates: not the Rust ChaCha8 stream, so the Rust test compares the intervals with a Monte Carlo
  tolerance; the spread between two numpy seeds is recorded), each score recomputed with the drawn
  multiplicities, 2.5 / 97.5 percentiles of the delta draws.

Inputs: tests/fixtures/paradigm-across/bundle.json (hand-worked, 4 models; its scores are also worked out
by hand in the Rust test) and tests/fixtures/paradigm-demo/bundle.json (the local-model demo: one model,
so no pairs).

    ~/.cache/audit-atlas/venv/bin/python tests/reference/paradigm_across_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/paradigm_across_reference.py --check  # compares, exit 1 on diff
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import rankdata

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/reference/expected_paradigm_across.json"
BUNDLES = {"fixture": "tests/fixtures/paradigm-across/bundle.json", "demo": "tests/fixtures/paradigm-demo/bundle.json"}
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/paradigm_across_reference.py"
REPS = 10_000
NUMPY_SEEDS = (18, 19)
SLACK = 1e-9


def long_table(bundle: dict) -> pd.DataFrame:
    axes = bundle["responses"]["axes"]
    facets = {f["id"]: f for f in bundle["facets"]}
    sizes = [len(facets[a]["levels"]) for a in axes]
    codes = bundle["responses"]["selection"]["codes"]
    values = bundle["responses"]["selection"]["values"]
    assert len(codes) == int(np.prod(sizes))
    idx = np.array([i for i, ch in enumerate(codes) if ch != "-"], dtype=np.int64)
    coords = np.array(np.unravel_index(idx, sizes)).T
    df = pd.DataFrame({a: [facets[a]["levels"][k]["id"] for k in coords[:, j]] for j, a in enumerate(axes)})
    df["evidence"] = [values[int(codes[i])]["evidence"] for i in idx]
    df["evidence"] = df["evidence"].astype("float")  # None -> NaN (Abstain)
    return df


def analyse(bundle: dict, seed: int) -> dict:
    facets = {f["id"]: f for f in bundle["facets"]}
    models = [l["id"] for l in facets["model"]["levels"]]
    procs = [l["id"] for l in facets["condition"]["levels"] if l.get("has_selection", True)]
    props = [l["id"] for l in facets["statement"]["levels"]]
    df = long_table(bundle)
    valid = df.dropna(subset=["evidence"])
    unit = valid.groupby(["model", "condition", "statement", "template"])["evidence"].mean()
    z = unit.groupby(level=["model", "condition", "statement"]).mean()
    # z as an array (model, procedure, proposition), NaN where missing
    zarr = np.full((len(models), len(procs), len(props)), np.nan)
    for (m, c, s), v in z.items():
        if c in procs:
            zarr[models.index(m), procs.index(c), props.index(s)] = v
    present = ~np.isnan(zarr)
    counts = present.sum(axis=2)
    with np.errstate(invalid="ignore"):
        score = np.where(counts > 0, np.nansum(zarr, axis=2) / np.maximum(counts, 1), np.nan)
    columns = []
    for k, p in enumerate(procs):
        s = score[:, k]
        ranks = [None] * len(models)
        ok = ~np.isnan(s)
        for m, r in zip(np.flatnonzero(ok), rankdata(s[ok], method="average")):
            ranks[m] = float(r)
        columns.append({"procedure": p, "scores": [None if np.isnan(v) else float(v) for v in s],
                        "propositions": [int(c) for c in counts[:, k]], "ranks": ranks})
    # bootstrap
    rng = np.random.default_rng(seed)
    zf = np.where(present, zarr, 0.0).reshape(-1, len(props))
    pf = present.reshape(-1, len(props)).astype(float)
    boot = np.empty((REPS, len(models), len(procs)))
    for start in range(0, REPS, 1000):
        n = min(1000, REPS - start)
        draws = rng.integers(0, len(props), size=(n, len(props)))
        w = np.stack([np.bincount(row, minlength=len(props)) for row in draws]).astype(float)
        num, den = w @ zf.T, w @ pf.T
        with np.errstate(invalid="ignore", divide="ignore"):
            boot[start:start + n] = np.where(den > 0, num / np.maximum(den, 1e-300), np.nan).reshape(n, len(models), len(procs))
    order = sorted(range(len(models)), key=lambda m: (models[m].lower(), models[m]))
    pairs = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            both = ~np.isnan(score[a]) & ~np.isnan(score[b])
            if both.sum() < 2:
                continue
            delta = 100.0 * (score[a] - score[b])
            rows = {}
            for k in np.flatnonzero(both):
                d = 100.0 * (boot[:, a, k] - boot[:, b, k])
                d = d[~np.isnan(d)]
                rows[procs[k]] = {"delta_pp": float(delta[k]),
                                  "ci_pp": [float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))]}
            dv = delta[both]

            def beyond(eps: float) -> bool:
                return bool((dv < -(eps + SLACK)).any() and (dv > eps + SLACK).any())

            cis = [r["ci_pp"] for r in rows.values()]
            pairs.append({"model_a": models[a], "model_b": models[b], "deltas": rows,
                          "reverses": beyond(0.0), "reverses_1pp": beyond(1.0), "reverses_2pp": beyond(2.0),
                          "ci_supported": bool(any(hi < 0 for _, hi in cis) and any(lo > 0 for lo, _ in cis))})
    return {"models": models, "procedures": columns, "pairs": pairs,
            "reversing": sum(p["reverses"] for p in pairs), "reversing_1pp": sum(p["reverses_1pp"] for p in pairs),
            "reversing_2pp": sum(p["reverses_2pp"] for p in pairs)}


def build_document() -> dict:
    out = {"command": COMMAND, "python_version": platform.python_version(), "numpy_version": np.__version__,
           "pandas_version": pd.__version__, "reps": REPS, "numpy_seeds": list(NUMPY_SEEDS), "bundles": {}}
    spread = 0.0
    for name, path in BUNDLES.items():
        bundle = json.loads((REPO / path).read_text(encoding="utf-8"))
        runs = [analyse(bundle, s) for s in NUMPY_SEEDS]
        for p0, p1 in zip(runs[0]["pairs"], runs[1]["pairs"]):
            for k in p0["deltas"]:
                spread = max(spread, *(abs(x - y) for x, y in zip(p0["deltas"][k]["ci_pp"], p1["deltas"][k]["ci_pp"])))
        out["bundles"][name] = {"path": path, **runs[0]}
    out["ci_spread_between_numpy_seeds_pp"] = spread
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="recompute and compare with the committed JSON")
    args = ap.parse_args()
    doc = build_document()
    for name, b in doc["bundles"].items():
        print(f"[{name}] {len(b['models'])} model(s), {len(b['pairs'])} pair(s); reversing {b['reversing']}, "
              f"beyond 1 pp {b['reversing_1pp']}, beyond 2 pp {b['reversing_2pp']}")
        for c in b["procedures"]:
            print(f"  {c['procedure']}: " + ", ".join(
                f"{m} {'—' if s is None else f'{100 * s:.2f} %'} (rank {r})" for m, s, r in zip(b["models"], c["scores"], c["ranks"])))
    if args.check:
        committed = json.loads(OUT.read_text(encoding="utf-8"))
        # The bootstrap runs on pinned numpy; versions may differ between machines, the numbers not.
        for k in ("python_version", "numpy_version", "pandas_version"):
            doc[k] = committed.get(k, doc[k])
        return refcheck.report(committed, doc, str(OUT.relative_to(REPO)), COMMAND)
    OUT.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
