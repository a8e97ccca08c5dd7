"""Independent numpy/scipy reference for the RQ1 analyses (seed 000 §5.1, §5.2, C.1, C.2, Tables 8, 9, 11)
on the DecodingTrust stereotype data, read from the RAW derived JSONL (not from the Audit Atlas bundle).

    ~/.cache/audit-atlas/venv/bin/python tests/reference/rq1_reference.py          # writes expected_rq1.json
    ~/.cache/audit-atlas/venv/bin/python tests/reference/rq1_reference.py --check  # recompute and compare

Definitions (docs/statistics.md, crates/atlas-core/src/rq1.rs):
- unit = model x condition x statement (statement = topic x target group); wordings = the 3 templates of
  the topic, each read at repeat 0; identical-call control = repeats 0..k of wording 0 (k = 3).
- changed = the unit's valid Selections are not all equal; a comparison uses units whose compared
  Selections are all valid (label != 0).
- rank stability uses the all_responses unit value z (fraction of valid repeats with label 1); the score of
  wording j = mean over conditions of the mean over statements of z at template j; pooled = Eq. 4.
- reversals: condition score = mean over templates of mean over statements of z; delta = 100 (a - b) for
  model a < b alphabetically ignoring case.
The deterministic numbers are exact; the bootstrap intervals use numpy's own generator (different draws
from the Rust ChaCha8 stream), so the Rust test compares them with a Monte Carlo tolerance.
"""
from __future__ import annotations

import argparse
import itertools
import json
import platform
import sys
from pathlib import Path

import numpy as np
import scipy
from scipy.stats import kendalltau

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)
from reference_stats import CONDITIONS, DEFAULT_DATA, average_ranks, load_labels, nanmean_or_nan  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/reference/expected_rq1.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/rq1_reference.py"
K = 3
UNIT_REPS = 20_000
CLUSTER_REPS = 10_000
NUMPY_SEEDS = (1, 2)


def changed(a: np.ndarray) -> np.ndarray:
    """a[..., k] boolean: True where not all equal along the last axis."""
    return a.any(axis=-1) & ~a.all(axis=-1)


def percentile_ci(draws: np.ndarray) -> list[float]:
    return [float(np.percentile(draws, 2.5)), float(np.percentile(draws, 97.5))]


def wording(labels: np.ndarray, rng_seed: int):
    w = labels[..., :, 0]  # (8, 3, 16, 24, 3 wordings) at repeat 0
    valid_all = (w != 0).all(axis=-1)
    a = w == 1
    units = int(valid_all.sum())
    changed_any = int((valid_all & changed(a)).sum())
    calls = labels[..., 0, :K]  # wording 0, repeats 0..K
    matched = valid_all & (calls != 0).all(axis=-1)
    c = calls == 1
    n = a.shape[-1]
    subsets = list(itertools.combinations(range(n), K))
    sub_changed = np.stack([changed(a[..., list(s)]) for s in subsets], axis=-1)  # (..., n_subsets)
    ctrl_changed = changed(c)
    m_units = int(matched.sum())
    subset_counts = [int((matched & sub_changed[..., i]).sum()) for i in range(len(subsets))]
    control_changed = int((matched & ctrl_changed).sum())
    d = 100.0 * (sub_changed.mean(axis=-1) - ctrl_changed.astype(float))  # per unit, pp
    d_units = d[matched]
    # statement clusters: (topic, group) -> flatten over model and condition
    stmt_sum = np.where(matched, d, 0.0).sum(axis=(0, 1)).reshape(-1)  # (384,)
    stmt_cnt = matched.sum(axis=(0, 1)).reshape(-1).astype(float)
    rng = np.random.default_rng(rng_seed)
    unit_means = np.empty(UNIT_REPS)
    for start in range(0, UNIT_REPS, 500):
        idx = rng.integers(0, m_units, size=(500, m_units))
        unit_means[start : start + 500] = d_units[idx].mean(axis=1)
    s = len(stmt_sum)
    cl = np.empty(CLUSTER_REPS)
    for start in range(0, CLUSTER_REPS, 500):
        idx = rng.integers(0, s, size=(500, s))
        cl[start : start + 500] = stmt_sum[idx].sum(axis=1) / stmt_cnt[idx].sum(axis=1)
    pair_w = {f"{i}-{j}": float((matched & (a[..., i] != a[..., j])).sum() / m_units) for i, j in itertools.combinations(range(n), 2)}
    pair_c = {f"{i}-{j}": float((matched & (c[..., i] != c[..., j])).sum() / m_units) for i, j in itertools.combinations(range(K), 2)}
    return {
        "units": units,
        "changed_any": changed_any,
        "matched_units": m_units,
        "subsets": [{"wordings": list(sub), "changed": cnt} for sub, cnt in zip(subsets, subset_counts)],
        "control_changed": control_changed,
        "difference_pp": float(100.0 * (np.mean(subset_counts) / m_units - control_changed / m_units)),
        "unit_bootstrap_ci_pp": percentile_ci(unit_means),
        "statement_bootstrap_ci_pp": percentile_ci(cl),
        "wording_pairs": pair_w,
        "repeat_pairs": pair_c,
    }


def unit_values(labels: np.ndarray) -> np.ndarray:
    """z[m, c, t, s] under all_responses (NaN = no valid label)."""
    b = (labels == 1).sum(axis=-1).astype(float)
    v = (labels != 0).sum(axis=-1).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(v > 0, b / np.maximum(v, 1), np.nan)  # (8, 3, 16, 24, 3)
    return z.reshape(8, 3, 16 * 24, 3).transpose(0, 1, 3, 2)


def rank_stability(models, z):
    pooled = nanmean_or_nan(nanmean_or_nan(nanmean_or_nan(z, axis=3), axis=2), axis=1)
    pooled_ranks = average_ranks(pooled)
    out = {"pooled": dict(zip(models, map(float, pooled))), "wordings": []}
    per = []
    for j in range(z.shape[2]):
        score = nanmean_or_nan(nanmean_or_nan(z[:, :, j, :], axis=2), axis=1)
        ranks = average_ranks(score)
        tau = kendalltau(score, pooled, variant="b").statistic
        inv = sum(
            1
            for i, k in itertools.combinations(range(len(models)), 2)
            if (score[i] - score[k]) * (pooled[i] - pooled[k]) < 0
        )
        out["wordings"].append(
            {
                "scores": dict(zip(models, map(float, score))),
                "ranks": dict(zip(models, map(float, ranks))),
                "tau_b": float(tau),
                "inversions": inv,
                "pairs": 28,
                "max_displacement": float(np.max(np.abs(ranks - pooled_ranks))),
            }
        )
        per.append(score)
    per = np.array(per)
    out["score_range_pp"] = dict(zip(models, map(float, 100.0 * (per.max(axis=0) - per.min(axis=0)))))
    return out


def reversals(models, z, rng_seed):
    cond_score = nanmean_or_nan(nanmean_or_nan(z, axis=3), axis=2)  # (8, 3)
    order = sorted(range(len(models)), key=lambda m: (models[m].lower(), models[m]))
    # bootstrap: statement multiplicities, weighted means per (m, c, t), then mean over t
    flat = z.reshape(-1, z.shape[3])  # (8*3*3, 384)
    valid = ~np.isnan(flat)
    zf = np.where(valid, flat, 0.0)
    rng = np.random.default_rng(rng_seed)
    s = z.shape[3]
    boot = np.empty((CLUSTER_REPS, 8, 3))
    for start in range(0, CLUSTER_REPS, 500):
        idx = rng.integers(0, s, size=(500, s))
        w = np.stack([np.bincount(row, minlength=s) for row in idx]).astype(float)  # (500, 384)
        num = w @ zf.T
        den = w @ valid.T.astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            per_t = np.where(den > 0, num / np.maximum(den, 1e-300), np.nan).reshape(500, 8, 3, 3)
        boot[start : start + 500] = nanmean_or_nan(per_t, axis=3)
    rows = []
    pairs = 0
    for i, a in enumerate(order):
        for b in order[i + 1 :]:
            pairs += 1
            delta = 100.0 * (cond_score[a] - cond_score[b])
            if not (delta.min() < 0 < delta.max()):
                continue
            draws = 100.0 * (boot[:, a, :] - boot[:, b, :])
            cis = [percentile_ci(draws[:, c]) for c in range(3)]
            neg, pos = int(np.argmin(delta)), int(np.argmax(delta))
            rows.append(
                {
                    "model_a": models[a],
                    "model_b": models[b],
                    "deltas_pp": dict(zip(CONDITIONS, map(float, delta))),
                    "cis_pp": dict(zip(CONDITIONS, cis)),
                    "negative": CONDITIONS[neg],
                    "positive": CONDITIONS[pos],
                    "survives_1pp": bool(delta.min() < -1 - 1e-9 and delta.max() > 1 + 1e-9),
                    "survives_2pp": bool(delta.min() < -2 - 1e-9 and delta.max() > 2 + 1e-9),
                }
            )
    return {"pairs": pairs, "reversals": rows}


def compute():
    models, labels = load_labels(DEFAULT_DATA)
    runs = [wording(labels, seed) for seed in NUMPY_SEEDS]
    z = unit_values(labels)
    rev_runs = [reversals(models, z, seed) for seed in NUMPY_SEEDS]
    # Monte Carlo spread between two numpy seeds, to justify the tolerance of the Rust test.
    spread = 0.0
    for key in ("unit_bootstrap_ci_pp", "statement_bootstrap_ci_pp"):
        spread = max(spread, *(abs(x - y) for x, y in zip(runs[0][key], runs[1][key])))
    for r0, r1 in zip(rev_runs[0]["reversals"], rev_runs[1]["reversals"]):
        for c in CONDITIONS:
            spread = max(spread, *(abs(x - y) for x, y in zip(r0["cis_pp"][c], r1["cis_pp"][c])))
    return {
        "command": COMMAND,
        "python_version": platform.python_version(),
        "numpy_version": np.__version__,
        "scipy_version": scipy.__version__,
        "numpy_seeds": list(NUMPY_SEEDS),
        "unit_reps": UNIT_REPS,
        "cluster_reps": CLUSTER_REPS,
        "k": K,
        "ci_spread_between_numpy_seeds_pp": spread,
        "wording_sensitivity": runs[0],
        "rank_stability": rank_stability(models, z),
        "reversals": rev_runs[0],
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    doc = compute()
    if args.check:
        # Through JSON, so that the recomputation has the committed file's types (tuples as lists).
        return refcheck.report(json.loads(OUT.read_text()), json.loads(json.dumps(doc)), str(OUT), COMMAND)
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT}; CI spread between numpy seeds {doc['ci_spread_between_numpy_seeds_pp']:.4f} pp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
