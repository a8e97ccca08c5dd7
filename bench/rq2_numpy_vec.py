#!/usr/bin/env python3
"""Vectorised numpy RQ2 (issue 17 §3): the best a numpy user would write for the headline RQ2 designs.

Concentrated, SRS and stratified audits (seed 000 §3.5, D.1) on an Audit Atlas bundle (default: the
shipped DecodingTrust bundle, 8 models), with the bundle as the finite reference (Eq. 4, equal weights,
all_responses). No Python loop per draw: a chunk of draws is drawn at once —

* sampling without replacement by `argpartition` of uniform random keys (B distinct statements of a
  template, B distinct cells of the observable matrix);
* one fancy-indexing gather per cell for all models from a cells x models matrix `zc` (each cell's 8
  model values adjacent), then `nanmean` over the sampled cells (a missing unit, Abstain, leaves);
* stratified: `K` conditions, one template each; `B = qK + r` with `r` conditions (uniform, by random
  keys) getting `q + 1`; within a condition, statements stratified by category with systematic
  proportional rounding (offset `j` uniform in `0..|S|`), uniform without replacement within a category
  (the rank of a random key within its category < `n_g`); condition means weigh equally —

and the metrics of `atlas_core::rq2` over the draws, vectorised over draws and the 28 model pairs: score
MAE (mean over models of the mean |score - reference| in pp) with its Monte Carlo SE, the 95th percentile
of the draw-level MAE, RMSE, tau-b against the reference ranking, the reference-relative inversion rate.
The draws are numpy's (PCG64), not the Rust DrawStream's: compare numbers statistically, times directly.

    PY=~/.cache/audit-atlas/venv/bin/python
    $PY bench/rq2_numpy_vec.py [BUNDLE] [--draws 10000] [--budget 200] [--seed 20260722] [--repeat 3]
        [--compare PLAN.json]     # side by side with `atlas plan-audit --json` (same designs/budget)
    $PY bench/rq2_numpy_vec.py --check   # recompute the planner reference, compare with the JSON
    $PY bench/rq2_numpy_vec.py --write   # rewrite tests/reference/expected_plan_numpy_vec.json

`--check` / `--write`: the default bundle, the three designs at budgets 20, 50, 100, 200 and 384, 10,000
draws each, seed 20260722; per point the MAE mean and SE, the p95 of the draw MAE with a bootstrap SE
(200 resamples of the draws), tau-b and the inversion rate with SEs; and per design the smallest of those
budgets whose p95 is at most 2 pp (and at every larger one). `crates/atlas-core/tests/plan_reference.rs`
compares the planner with it within Monte Carlo error.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests/reference"))
from rq2_numpy import load_bundle  # noqa: E402  (bundle JSON -> all_responses unit values, numpy only)

DEFAULT_BUNDLE = REPO / "static/bundles/decodingtrust-stereotype/bundle.json"
EXPECTED = REPO / "tests/reference/expected_plan_numpy_vec.json"
DESIGNS = ("concentrated", "srs", "stratified")
CHECK_BUDGETS = (20, 50, 100, 200, 384)
CHECK_DRAWS = 10_000
CHECK_TARGET_MAE = 2.0
SEED = 20260722
CHUNK_CELLS = 2_000_000  # random keys per chunk (fastest here: the arrays stay in cache)


class Matrix:
    """The observable matrix as cells x models, the reference, the strata (categories in byte order)."""

    def __init__(self, z: np.ndarray, cats: list, direction: str):
        self.M, self.K, self.T, self.S = z.shape
        self.zc = np.ascontiguousarray(z.transpose(1, 2, 3, 0).reshape(-1, self.M))  # (K*T*S, M)
        self.cells = self.zc.shape[0]
        # One gather per cell for all models: the models' values (missing = 0) then their valid flags, so
        # a sum over the sampled cells gives sums and counts at once (faster than nanmean, same means).
        valid = ~np.isnan(self.zc)
        self.packed = np.concatenate([np.where(valid, self.zc, 0.0), valid.astype(np.float64)], axis=1)
        with np.errstate(invalid="ignore"):
            t_mean = np.nanmean(z, axis=3)  # (M, K, T) template means
            c_mean = np.nanmean(t_mean, axis=2)
            self.reference = np.nanmean(c_mean, axis=1)  # Eq. 4, equal weights
        named = sorted({c for c in cats if c is not None}, key=lambda c: c.encode("utf-8"))
        groups = [[s for s, c in enumerate(cats) if c == g] for g in named]
        if any(c is None for c in cats):
            groups.append([s for s, c in enumerate(cats) if c is None])
        self.perm = np.array([s for g in groups for s in g])  # statements, category by category
        self.sizes = np.array([len(g) for g in groups])
        self.cum = np.concatenate([[0], np.cumsum(self.sizes)])
        self.cat_idx = np.repeat(np.arange(len(self.sizes)), self.sizes)  # category of each sorted position
        self.cat_of_perm = self.cat_idx.astype(np.float64)
        self.rank_in_cat = np.arange(self.S) - self.cum[self.cat_idx]
        self.direction = direction

    def mean_of(self, cells: np.ndarray, axis: int) -> np.ndarray:
        """Per model, the mean over `axis` of the valid unit values of `cells` (NaN: none valid)."""
        g = self.packed[cells].sum(axis=axis)
        sums, n = g[..., : self.M], g[..., self.M :]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, sums / np.maximum(n, 1), np.nan)

    def keys(self, scores: np.ndarray) -> np.ndarray:
        if self.direction == "higher":
            return -scores
        return scores

    # ---- designs: each returns scores (D, M), NaN = no valid unit in the draw -----------------------
    def concentrated(self, rng, d: int, b: int) -> np.ndarray:
        k = rng.integers(self.K, size=d)
        t = rng.integers(self.T, size=d)
        if b == self.S:
            stmts = np.broadcast_to(np.arange(self.S), (d, self.S))
        else:
            stmts = np.argpartition(rng.random((d, self.S)), b - 1, axis=1)[:, :b]
        cells = ((k * self.T + t) * self.S)[:, None] + stmts
        return self.mean_of(cells, 1)

    def srs(self, rng, d: int, b: int) -> np.ndarray:
        if b == self.cells:
            cells = np.broadcast_to(np.arange(self.cells), (d, self.cells))
        else:
            cells = np.argpartition(rng.random((d, self.cells)), b - 1, axis=1)[:, :b]
        return self.mean_of(cells, 1)

    def stratified(self, rng, d: int, b: int) -> np.ndarray:
        K, S = self.K, self.S
        q, r = divmod(b, K)
        extra = np.argpartition(rng.random((d, K)), r - 1, axis=1)[:, :r] if r else np.empty((d, 0), int)
        n = np.full((d, K), q)
        np.put_along_axis(n, extra, q + 1, axis=1)
        t = rng.integers(self.T, size=(d, K))
        j = rng.integers(S, size=(d, K))
        cut = (n[..., None] * self.cum + j[..., None]) // S  # (d, K, G+1)
        n_g = np.diff(cut, axis=-1)  # statements per category, sum = n
        # Uniform without replacement within each category, all at once: sort category + key, so
        # category g fills sorted positions cum[g]..cum[g+1] in random order; take its first n_g.
        order = np.argsort(self.cat_of_perm + rng.random((d, K, S)), axis=-1)
        take = self.rank_in_cat < np.take(n_g, self.cat_idx, axis=-1)  # (d, K, S) over positions
        width = q + 1 if r else q
        pos = np.argsort(~take, axis=-1, kind="stable")[..., :width]  # the chosen positions first
        chosen = np.take_along_axis(take, pos, axis=-1)  # False: padding of a q-statement condition
        stmt = self.perm[np.take_along_axis(order, pos, axis=-1)]
        cells = ((np.arange(K)[None, :] * self.T + t) * S)[..., None] + stmt  # (d, K, width)
        g = self.packed[cells] * chosen[..., None]  # (d, K, width, 2M)
        g = g.sum(axis=2)
        sums, n = g[..., : self.M], g[..., self.M :]
        with np.errstate(invalid="ignore", divide="ignore"):
            cond = np.where(n > 0, sums / np.maximum(n, 1), np.nan)  # (d, K, M)
            return np.nanmean(cond, axis=1)  # a condition without a valid unit leaves

    def run(self, design: str, seed: int, draws: int, budget: int) -> np.ndarray:
        rng = np.random.default_rng(np.random.SeedSequence([seed, DESIGNS.index(design)]))
        per_draw = {"concentrated": self.S, "srs": self.cells, "stratified": self.K * self.S}[design]
        chunk = max(1, min(draws, CHUNK_CELLS // per_draw))
        fn = getattr(self, design)
        out = []
        with np.errstate(invalid="ignore"):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices: no score, counted
                for start in range(0, draws, chunk):
                    out.append(fn(rng, min(chunk, draws - start), budget))
        return np.concatenate(out)


def summarize(mx: Matrix, scores: np.ndarray) -> dict:
    """Metrics of `atlas_core::rq2::summarize_draws` (main draws) on scores (D, M)."""
    D, M = scores.shape
    err = 100.0 * (scores - mx.reference[None, :])
    ok = ~np.isnan(err)
    abs_e = np.where(ok, np.abs(err), 0.0)
    n_m = ok.sum(0)
    mae_m = abs_e.sum(0) / np.maximum(n_m, 1)
    rmse_m = np.sqrt(np.where(ok, err**2, 0.0).sum(0) / np.maximum(n_m, 1))
    act = n_m > 0
    n_d = ok.sum(1)
    draw_mae = abs_e.sum(1)[n_d > 0] / n_d[n_d > 0]
    w = np.where(act, D / np.maximum(n_m, 1), 0.0) / act.sum()
    contrib = (abs_e * w).sum(1)  # mean(contrib) = MAE exactly (the Rust MC-SE construction)
    i, j = np.triu_indices(M, 1)
    keys = mx.keys(scores)
    rkeys = mx.keys(mx.reference)
    sx = np.sign(keys[:, i] - keys[:, j])  # NaN where a model has no score
    sy = np.sign(rkeys[i] - rkeys[j])
    both = ~np.isnan(sx)
    pairs = both.sum(1)
    sx0 = np.where(both, sx, 0.0)
    conc = (sx0 * sy).sum(1)
    tie_x = (both & (sx0 == 0)).sum(1)
    tie_y = (both & (sy == 0)).sum(1)
    den = np.sqrt((pairs - tie_x) * (pairs - tie_y).astype(float))
    tau = conc[den > 0] / den[den > 0]
    inv = ((sx0 * sy) == -1).sum(1)
    rate = inv[pairs > 0] / pairs[pairs > 0]

    def se(v):
        return float(np.std(v, ddof=1) / np.sqrt(len(v)))

    return {
        "mae_pp": float(mae_m[act].mean()), "mae_mc_se": se(contrib),
        "mae_pp_p95": float(np.percentile(draw_mae, 95)),
        "rmse_pp": float(rmse_m[act].mean()),
        "tau_b": float(tau.mean()), "tau_b_mc_se": se(tau),
        "inversion_rate": float(rate.mean()), "inversion_mc_se": se(rate),
        "excluded_draws": [int(x) for x in D - n_m],
        "_draw_mae": draw_mae,
    }


def p95_bootstrap_se(draw_mae: np.ndarray, seed: int, reps: int = 200) -> float:
    rng = np.random.default_rng(np.random.SeedSequence([seed, 99]))
    boots = [np.percentile(draw_mae[rng.integers(len(draw_mae), size=len(draw_mae))], 95) for _ in range(reps)]
    return float(np.std(boots, ddof=1))


def load(path: Path) -> tuple[list, Matrix, dict]:
    models, z, cats = load_bundle(path)
    doc = json.loads(path.read_bytes())
    direction = ((doc["responses"]["selection"].get("direction") or {}).get("better")) or "lower"
    if direction not in ("lower", "higher"):
        sys.exit(f"direction {direction!r}: this benchmark handles lower/higher only")
    return models, Matrix(z, cats, direction), doc["metadata"]["id"]


def build_document() -> dict:
    models, mx, bundle = load(DEFAULT_BUNDLE)
    doc = {
        "generator": "bench/rq2_numpy_vec.py --write",
        "numpy_version": np.__version__,
        "bundle": bundle, "models": models, "seed": SEED, "draws": CHECK_DRAWS,
        "budgets": list(CHECK_BUDGETS), "target_mae_pp": CHECK_TARGET_MAE,
        "reference": [float(x) for x in mx.reference],
        "designs": {},
    }
    for design in DESIGNS:
        points = []
        for b in CHECK_BUDGETS:
            s = summarize(mx, mx.run(design, SEED + b, CHECK_DRAWS, b))
            s["mae_pp_p95_se"] = p95_bootstrap_se(s.pop("_draw_mae"), SEED + b)
            points.append({"budget": b, **s})
        met = [p["mae_pp_p95"] <= CHECK_TARGET_MAE for p in points]
        smallest = None
        for p, m in zip(reversed(points), reversed(met)):
            if not m:
                break
            smallest = p["budget"]
        doc["designs"][design] = {"points": points, "smallest_budget_mae_2pp": smallest}
    return doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", type=Path, nargs="?", default=DEFAULT_BUNDLE)
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--compare", type=Path, help="`atlas plan-audit --json` output at the same budget")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    if args.check or args.write:
        import refcheck

        doc = build_document()
        if args.write:
            EXPECTED.write_text(json.dumps(doc, indent=1) + "\n")
            print(f"wrote {EXPECTED.relative_to(REPO)}")
            return 0
        committed = json.loads(EXPECTED.read_text())
        return refcheck.report(committed, doc, str(EXPECTED.relative_to(REPO)),
                               "bench/rq2_numpy_vec.py --write")
    times = []
    for _ in range(args.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        models, mx, bundle = load(args.bundle)
        t1 = time.perf_counter()
        results = {d: summarize(mx, mx.run(d, args.seed, args.draws, args.budget)) for d in DESIGNS}
        t2, c2 = time.perf_counter(), time.process_time()
        times.append(t2 - t0)
        # CPU seconds too: on a shared machine the wall time includes waiting for a core.
        print(f"numpy_vec_seconds {t2 - t0:.3f} (load+decode {t1 - t0:.3f}, draws+metrics {t2 - t1:.3f}; "
              f"cpu {c2 - c0:.3f})", flush=True)
    print(f"numpy_vec_median_seconds {statistics.median(times):.3f} (numpy {np.__version__}, bundle {bundle}, "
          f"{len(models)} models, {args.draws} draws x {len(DESIGNS)} designs, budget {args.budget})")
    native = None
    if args.compare:
        plan = json.loads(args.compare.read_text())
        native = {d["design"]: d["estimates"][0] for d in plan["designs"]}
    for d, r in results.items():
        line = (f"  numpy  {d:13s} MAE {r['mae_pp']:7.3f} ± {r['mae_mc_se']:.3f} pp  p95 {r['mae_pp_p95']:7.3f}  "
                f"tau-b {r['tau_b']:.4f} ± {r['tau_b_mc_se']:.4f}  inversions {100 * r['inversion_rate']:6.3f} "
                f"± {100 * r['inversion_mc_se']:.3f} %")
        print(line)
        if native and d in native:
            e = native[d]

            def z(a, sa, b, sb):
                return (a - b) / np.hypot(sa, sb)

            zm = z(r["mae_pp"], r["mae_mc_se"], e["mae_pp"]["mean"], e["mae_pp"]["mc_se"])
            zt = z(r["tau_b"], r["tau_b_mc_se"], e["tau_b"]["mean"], e["tau_b"]["mc_se"])
            zi = z(r["inversion_rate"], r["inversion_mc_se"], e["inversion_rate"]["mean"], e["inversion_rate"]["mc_se"])
            print(f"  core   {d:13s} MAE {e['mae_pp']['mean']:7.3f} ± {e['mae_pp']['mc_se']:.3f} pp  p95 "
                  f"{e['mae_pp_p95']:7.3f}  tau-b {e['tau_b']['mean']:.4f} ± {e['tau_b']['mc_se']:.4f}  inversions "
                  f"{100 * e['inversion_rate']['mean']:6.3f} ± {100 * e['inversion_rate']['mc_se']:.3f} %")
            print(f"         {'':13s} z (numpy − core)/combined SE: MAE {zm:+.2f}, tau-b {zt:+.2f}, "
                  f"inversions {zi:+.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
