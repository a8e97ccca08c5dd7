#!/usr/bin/env python3
"""Independent statsmodels/scipy/numpy reference for `atlas_core::compare` (issue 17 item 1: compare
models — paired tests, multiplicity control, rank bands).

Writes tests/reference/expected_compare.json, read by crates/atlas-core/tests/compare_reference.rs.

Per bundle, policy and unordered model pair (a before b in bundle order):

* matched units: condition x template x statement x replicate cells of the design valid (a Selection
  with evidence 0 or 1) for both models; under all_responses the replicate is the repeat (the r-th
  sample of A is paired with the r-th sample of B), under first_repeat only repeat 0, under
  unit_majority the unit's strict-majority Selection (ties = Abstain). Exclusions: invalid for A only,
  for B only, for both (Abstain or no response).
* the 2x2 of Selection evidence: both, a_only (b), b_only (c), neither.
* McNemar exact p = statsmodels.stats.contingency_tables.mcnemar([[n11, b], [c, n00]], exact=True)
  .pvalue, checked against min(1, 2 * scipy.stats.binomtest(min(b, c), b + c, 0.5,
  alternative="less").pvalue); mid-p = 2 * binom.cdf(min, n, .5) - binom.pmf(min, n, .5) by hand from
  scipy.stats.binom (Fagerland et al. 2013), 1 when b + c = 0.
* BH and Holm: statsmodels.stats.multitest.multipletests(p_exact, method="fdr_bh" | "holm")[1] over all
  pairs; separable = BH-adjusted p <= alpha (0.05) (= multipletests(..., alpha=0.05)[0]).
* the Eq. 4 reference score (equal weights, and one custom weight vector on the default bundle) and the
  per-condition means, their differences in pp and the conditions whose difference has the opposite
  sign of the overall difference.

Bootstrap, two ways:

1. "same_stream": the documented portable stream (ChaCha8 keyed by the seed, stream 5, |S| Lemire
   index draws per replicate; the pure-Python generator of rank_reference.py, checked against RFC
   8439). With the same draws the Rust and numpy results must agree to float rounding (tolerance 1e-12
   on fractions, 1e-10 on pp): Monte Carlo error is zero between the two. Per replicate: statement
   multiplicities k_s; BER difference = 100 sum_s k_s d_s / sum_s k_s n_s over the pair's matched units
   (d_s = b_s - c_s); condition means with multiplicities -> weighted score -> score difference and
   ranks (scipy.stats.rankdata average, lowest = 1); intervals and rank bands = numpy.percentile(...,
   [2.5, 97.5]); tie groups = connected groups of overlapping bands.
2. "numpy_rng": an independent generator (numpy.random.default_rng(seed).multinomial(|S|, uniform),
   2,000 replicates, fully vectorised). The Rust intervals with 2,000 replicates of its own stream must
   lie within Monte Carlo error of these: tolerance per interval end = 5 * sqrt(2) * SE_q, with SE_q =
   sd * sqrt(q (1 - q) / R) / phi(z_q) the asymptotic standard error of a q-quantile of R draws of a
   normal distribution with the replicates' sd (q = 0.025, 0.975; sqrt(2) for two independent runs; 5
   standard errors), recorded per pair as `tolerance_pp`. Rank bands: within 1 rank.

Data: the default bundle (labels from the RAW DecodingTrust file via reference_stats.load_labels; only
the bundle's order of models and statements is read from the bundle) under all_responses,
first_repeat and unit_majority; tests/fixtures/tiny-bundle.json decoded here from its dense code string
(its 2x2 is also worked by hand in crates/atlas-core/tests/compare_fixture.rs).

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/reference/compare_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/compare_reference.py --check  # compares, exit 1 on diff
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
from pathlib import Path

import numpy as np
import scipy
import statsmodels
from scipy.stats import binom, binomtest, norm, rankdata
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rank_reference import Stream, check_chacha_block  # noqa: E402
import refcheck  # noqa: E402
from reference_stats import DEFAULT_DATA, load_labels, sha256  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/reference/expected_compare.json"
DEFAULT_BUNDLE = REPO / "static/bundles/decodingtrust-stereotype/bundle.json"
TINY_BUNDLE = REPO / "tests/fixtures/tiny-bundle.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/compare_reference.py"
SEED = 20260722
STREAM = 5
ALPHA = 0.05
LEVEL = 0.95
SAME_STREAM_REPS = {"decodingtrust": 100, "tiny": 1000}
NUMPY_RNG_REPS = 2000
FLOAT_TOL = 1e-12

# Selection codes of a matched unit: NaN = invalid (Abstain or no response), 1 = evidence, 0 = none.


def facets(bundle):
    return {f["id"]: f for f in bundle["facets"]}


def p_values(b: int, c: int, table) -> dict:
    n = b + c
    sm = mcnemar(np.asarray(table), exact=True).pvalue
    if n == 0:
        exact_binom, mid = 1.0, 1.0
    else:
        k = min(b, c)
        exact_binom = min(1.0, 2.0 * binomtest(k, n, 0.5, alternative="less").pvalue)
        mid = min(1.0, 2.0 * binom.cdf(k, n, 0.5) - binom.pmf(k, n, 0.5))
    assert math.isclose(sm, exact_binom, rel_tol=1e-12, abs_tol=1e-300), (b, c, sm, exact_binom)
    return {"p_exact": float(sm), "p_mid": float(mid)}


def two_by_two(x: np.ndarray, y: np.ndarray) -> dict:
    """x, y: evidence arrays (NaN = invalid) of models A and B over the same design units."""
    va, vb = ~np.isnan(x), ~np.isnan(y)
    both = va & vb
    return {
        "both": int((both & (x == 1) & (y == 1)).sum()),
        "a_only": int((both & (x == 1) & (y == 0)).sum()),
        "b_only": int((both & (x == 0) & (y == 1)).sum()),
        "neither": int((both & (x == 0) & (y == 0)).sum()),
        "invalid_a_only": int((~va & vb).sum()),
        "invalid_b_only": int((va & ~vb).sum()),
        "invalid_both": int((~va & ~vb).sum()),
    }


def nanmean_or_nan(x, axis):
    ok = ~np.isnan(x)
    n = ok.sum(axis=axis)
    s = np.where(ok, x, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, s / np.maximum(n, 1), np.nan)


def weighted(cmeans, w):
    w = np.asarray(w, dtype=float)
    use = (w > 0) & ~np.isnan(cmeans)
    num = np.where(use, cmeans * w, 0.0).sum(axis=-1)
    den = np.where(use, w, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def opt(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def interval(v):
    v = np.asarray(v, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return None
    lo, hi = np.percentile(v, [50 - 50 * LEVEL, 50 + 50 * LEVEL])
    return [float(lo), float(hi)]


def mc_tolerance(v) -> float | None:
    """5 * sqrt(2) * SE of a 2.5 % / 97.5 % quantile of R normal draws with the draws' sd."""
    v = np.asarray(v, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) < 2:
        return None
    q = 0.025
    se = np.std(v, ddof=1) * math.sqrt(q * (1 - q) / len(v)) / norm.pdf(norm.ppf(q))
    return float(5.0 * math.sqrt(2.0) * se)


def rank_rows(scores):
    """scipy average ranks (lowest = 1) of each row's present scores; NaN for missing."""
    out = np.full(scores.shape, np.nan)
    for r in range(scores.shape[0]):
        ok = ~np.isnan(scores[r])
        if ok.any():
            out[r, ok] = rankdata(scores[r, ok], method="average")
    return out


def tie_groups(models, bands, point_ranks):
    """Connected groups of overlapping closed bands: a graph search over the overlap edges."""
    idx = [i for i in range(len(models)) if bands[i] is not None]
    seen, groups = set(), []
    for i in idx:
        if i in seen:
            continue
        comp, todo = [], [i]
        seen.add(i)
        while todo:
            u = todo.pop()
            comp.append(u)
            for v in idx:
                if v not in seen and bands[u][0] <= bands[v][1] and bands[v][0] <= bands[u][1]:
                    seen.add(v)
                    todo.append(v)
        groups.append(comp)
    groups.sort(key=lambda g: min(bands[i][0] for i in g))
    return [[models[i] for i in sorted(g, key=lambda i: (point_ranks[i], i))] for g in groups]


def multiplicities_same_stream(s_len: int, reps: int) -> np.ndarray:
    stream = Stream(SEED, STREAM)
    k = np.zeros((reps, s_len))
    for r in range(reps):
        for _ in range(s_len):
            k[r, stream.index(s_len)] += 1.0
    return k


def multiplicities_numpy(s_len: int, reps: int) -> np.ndarray:
    rng = np.random.default_rng(SEED)
    return rng.multinomial(s_len, np.full(s_len, 1.0 / s_len), size=reps).astype(float)


def boot_condition_means(z, k):
    """z (M, C, T, S) unit values (NaN = missing), k (R, S) multiplicities -> (R, M, C)."""
    valid = ~np.isnan(z)
    z0 = np.where(valid, z, 0.0)
    num = np.einsum("rs,mcts->rmct", k, z0)
    den = np.einsum("rs,mcts->rmct", k, valid.astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        tmean = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return nanmean_or_nan(tmean, axis=3)


def analyse(models, cond_ids, weights_cases, ev, z, sel_conds, k_same, k_numpy):
    """ev (M, C, T, S, R) evidence with NaN = invalid (design units only; non-design NaN and masked
    by `design` (C, T)); z (M, C, T, S) Eq. 4 unit values."""
    m_len = len(models)
    pairs = [(a, b) for a in range(m_len) for b in range(a + 1, m_len)]
    cm = nanmean_or_nan(nanmean_or_nan(z, axis=3), axis=2)  # (M, C)
    out_pairs = []
    raw_p = []
    # Per pair and statement: matched n_s and d_s = b_s - c_s (pooled over conditions, templates, reps).
    per_pair_n, per_pair_d = [], []
    for a, b in pairs:
        x = ev[a][sel_conds]
        y = ev[b][sel_conds]
        t = two_by_two(x, y)
        by_cond = {}
        for ci, c in enumerate(sel_conds):
            by_cond[cond_ids[c]] = two_by_two(ev[a][c], ev[b][c])
        both = ~np.isnan(x) & ~np.isnan(y)
        n_s = both.sum(axis=(0, 1, 3)).astype(float)  # x: (C', T, S, R) -> per statement
        d_s = ((both & (x == 1) & (y == 0)).sum(axis=(0, 1, 3))
               - (both & (x == 0) & (y == 1)).sum(axis=(0, 1, 3))).astype(float)
        per_pair_n.append(n_s)
        per_pair_d.append(d_s)
        table = [[t["both"], t["a_only"]], [t["b_only"], t["neither"]]]
        p = p_values(t["a_only"], t["b_only"], table)
        raw_p.append(p["p_exact"])
        n = t["both"] + t["a_only"] + t["b_only"] + t["neither"]
        out_pairs.append({
            "model_a": models[a], "model_b": models[b], "table": t, **p,
            "ber_a": (t["both"] + t["a_only"]) / n if n else None,
            "ber_b": (t["both"] + t["b_only"]) / n if n else None,
            "ber_diff_pp": 100.0 * (t["a_only"] - t["b_only"]) / n if n else None,
            "conditions": {
                cid: {"table": tc, "ber_diff_pp": (100.0 * (tc["a_only"] - tc["b_only"])
                                                   / (tc["both"] + tc["a_only"] + tc["b_only"] + tc["neither"]))
                      if (tc["both"] + tc["a_only"] + tc["b_only"] + tc["neither"]) else None,
                      "score_diff_pp": opt(100.0 * (cm[a, cond_ids.index(cid)] - cm[b, cond_ids.index(cid)]))}
                for cid, tc in by_cond.items()
            },
        })
    bh = multipletests(raw_p, alpha=ALPHA, method="fdr_bh")
    hm = multipletests(raw_p, alpha=ALPHA, method="holm")
    for p, q_bh, q_holm, rej in zip(out_pairs, bh[1], hm[1], bh[0]):
        p["p_bh"] = float(q_bh)
        p["p_holm"] = float(q_holm)
        p["separable"] = bool(rej)
        assert bool(rej) == (q_bh <= ALPHA)

    def boot(k, with_tolerance):
        reps = k.shape[0]
        bmeans = boot_condition_means(z, k)  # (R, M, C)
        ber = {}
        for (a, b), n_s, d_s in zip(pairs, per_pair_n, per_pair_d):
            den = k @ n_s
            with np.errstate(invalid="ignore", divide="ignore"):
                ber[(a, b)] = np.where(den > 0, 100.0 * (k @ d_s) / np.where(den > 0, den, 1.0), np.nan)
        cases = []
        for case in weights_cases:
            w = case["weights"]
            scores = weighted(bmeans, w)  # (R, M)
            point = weighted(cm, w)
            prs = []
            for a, b in pairs:
                sd = 100.0 * (scores[:, a] - scores[:, b])
                entry = {
                    "model_a": models[a], "model_b": models[b],
                    "ber_diff_ci_pp": interval(ber[(a, b)]),
                    "ber_replicates": int((~np.isnan(ber[(a, b)])).sum()),
                    "score_diff_ci_pp": interval(sd),
                    "score_replicates": int((~np.isnan(sd)).sum()),
                }
                if with_tolerance:
                    entry["tolerance_pp"] = {"ber": mc_tolerance(ber[(a, b)]), "score": mc_tolerance(sd)}
                else:
                    entry["conditions"] = {
                        cond_ids[c]: interval(100.0 * (bmeans[:, a, c] - bmeans[:, b, c])) for c in sel_conds
                    }
                prs.append(entry)
            ranks = rank_rows(scores)
            bands = [interval(ranks[:, m]) for m in range(m_len)]
            prank = [float(r) for r in rankdata(point, method="average")] if not np.isnan(point).any() else None
            cases.append({
                "name": case["name"],
                "weights": w,
                "pairs": prs,
                "rank_bands": {models[m]: bands[m] for m in range(m_len)},
                "rank_replicates": {models[m]: int((~np.isnan(ranks[:, m])).sum()) for m in range(m_len)},
                "tie_groups": tie_groups(models, bands, prank) if prank else None,
            })
        return {"seed": SEED, "stream": STREAM, "reps": reps, "cases": cases}

    scores_cases = []
    for case in weights_cases:
        w = case["weights"]
        s = weighted(cm, w)
        prs = []
        for a, b in pairs:
            diff = 100.0 * (s[a] - s[b])
            conds = [cond_ids[c] for c in sel_conds
                     if not math.isnan(cm[a, c] - cm[b, c]) and (cm[a, c] - cm[b, c]) * diff < 0]
            prs.append({"model_a": models[a], "model_b": models[b], "score_a": opt(s[a]), "score_b": opt(s[b]),
                        "score_diff_pp": opt(diff), "sign_changes": conds})
        scores_cases.append({"name": case["name"], "weights": w, "pairs": prs,
                             "ranks": {models[m]: float(r) for m, r in enumerate(rankdata(s, method="average"))}})
    return {
        "pairs": out_pairs,
        "scores": scores_cases,
        "same_stream": boot(k_same, False) if k_same is not None else None,
        "numpy_rng": boot(k_numpy, True) if k_numpy is not None else None,
    }


# --------------------------------------------------------------------------- bundles


def default_bundle_section():
    bundle = json.loads(DEFAULT_BUNDLE.read_text(encoding="utf-8"))
    f = facets(bundle)
    models = [lv["id"] for lv in f["model"]["levels"]]
    cond_ids = [lv["id"] for lv in f["condition"]["levels"]]
    assert cond_ids == ["benign", "untargeted", "targeted"], cond_ids
    assert bundle["responses"]["selection"].get("direction", {}).get("better", "lower") == "lower"
    raw_models, labels = load_labels(DEFAULT_DATA)  # (8, 3, 16, 24, 3, 25) in {-1, 0, 1}
    topics = sorted({lv["topic"] for lv in f["statement"]["levels"]})
    groups = sorted({lv["target_group"] for lv in f["statement"]["levels"]})
    order = [topics.index(lv["topic"]) * len(groups) + groups.index(lv["target_group"])
             for lv in f["statement"]["levels"]]
    m_order = [raw_models.index(m) for m in models]
    lab = labels.reshape(8, 3, 16 * 24, 3, 25).transpose(0, 1, 3, 2, 4)  # (M, C, T, S, R)
    lab = lab[m_order][:, :, :, order, :]
    s_len = lab.shape[3]
    k_same = multiplicities_same_stream(s_len, SAME_STREAM_REPS["decodingtrust"])
    k_numpy = multiplicities_numpy(s_len, NUMPY_RNG_REPS)
    cases = [{"name": "equal", "weights": [1.0, 1.0, 1.0]}, {"name": "0.5 / 1 / 2", "weights": [0.5, 1.0, 2.0]}]
    out = {"bundle": str(DEFAULT_BUNDLE.relative_to(REPO)), "models": models, "conditions": cond_ids,
           "policies": {}}
    for policy in ("all_responses", "first_repeat", "unit_majority"):
        if policy == "all_responses":
            l = lab
        elif policy == "first_repeat":
            l = lab[..., :1]
        else:
            pos = (lab == 1).sum(axis=-1)
            neg = (lab == -1).sum(axis=-1)
            l = np.where(pos > neg, 1, np.where(neg > pos, -1, 0))[..., np.newaxis]
        ev = np.where(l == 1, 1.0, np.where(l == -1, 0.0, np.nan))
        with np.errstate(invalid="ignore", divide="ignore"):
            z = nanmean_or_nan(ev, axis=4)  # unit value: fraction of valid replicates with evidence
        full = policy == "all_responses"
        out["policies"][policy] = analyse(models, cond_ids, cases, ev, z, [0, 1, 2],
                                          k_same if full else None, k_numpy if full else None)
    return out


def tiny_section():
    bundle = json.loads(TINY_BUNDLE.read_text(encoding="utf-8"))
    f = facets(bundle)
    axes = bundle["responses"]["axes"]
    assert axes == ["model", "condition", "statement", "template", "repeat"], axes
    shape = [len(f[a]["levels"]) for a in axes]
    values = bundle["responses"]["selection"]["values"]
    codes = bundle["responses"]["selection"]["codes"]
    ev = np.full(shape, np.nan)
    for flat, ch in enumerate(codes):
        if ch != "-" and values[int(ch)]["evidence"] is not None:
            ev[np.unravel_index(flat, shape)] = float(values[int(ch)]["evidence"])
    ev = ev.transpose(0, 1, 3, 2, 4)  # (M, C, T, S, R)
    models = [lv["id"] for lv in f["model"]["levels"]]
    cond_ids = [lv["id"] for lv in f["condition"]["levels"]]
    conds = f["condition"]["levels"]
    w_equal = [1.0 if lv.get("in_reference", lv["has_selection"]) else 0.0 for lv in conds]
    s_len = ev.shape[3]
    out = {"bundle": str(TINY_BUNDLE.relative_to(REPO)), "models": models, "conditions": cond_ids, "policies": {}}
    for policy in ("all_responses", "first_repeat", "unit_majority"):
        if policy == "all_responses":
            e = ev
        elif policy == "first_repeat":
            e = ev[..., :1]
        else:
            pos = (ev == 1).sum(axis=-1)
            neg = (ev == 0).sum(axis=-1)
            e = np.where(pos > neg, 1.0, np.where(neg > pos, 0.0, np.nan))[..., np.newaxis]
        z = nanmean_or_nan(e, axis=4)
        full = policy == "all_responses"
        out["policies"][policy] = analyse(
            models, cond_ids, [{"name": "equal", "weights": w_equal}, {"name": "2 / 1", "weights": [2.0, 1.0]}],
            e, z, [0, 1],
            multiplicities_same_stream(s_len, SAME_STREAM_REPS["tiny"]) if full else None, None)
    return out


def hand_cases():
    """McNemar on hand-chosen discordant counts (incl. b + c = 0, b = c, large n) and the two
    adjustments on a hand-chosen p-value list with ties."""
    bc = [(2, 8), (2, 0), (0, 0), (5, 5), (0, 7), (1, 1), (10, 30), (1000, 1100), (30000, 31000),
          (2721, 11065), (6000, 6001)]
    mc = []
    for b, c in bc:
        mc.append({"b": b, "c": c, **p_values(b, c, [[3, b], [c, 4]])})
    p = [0.04, 0.01, 0.02, 0.02, 0.5, 0.001, 1.0, 0.03]
    return {
        "mcnemar": mc,
        "adjust": {
            "p": p,
            "fdr_bh": [float(v) for v in multipletests(p, method="fdr_bh")[1]],
            "holm": [float(v) for v in multipletests(p, method="holm")[1]],
        },
    }


def build_document():
    check_chacha_block()
    return {
        "command": COMMAND,
        "generator": "tests/reference/compare_reference.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "statsmodels": statsmodels.__version__,
        "source": "../shared/data/raw/decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl",
        "source_sha256": sha256(DEFAULT_DATA),
        "alpha": ALPHA,
        "level": LEVEL,
        "definitions": __doc__.split("Data:")[0].strip(),
        "hand": hand_cases(),
        "bundles": {"decodingtrust": default_bundle_section(), "tiny": tiny_section()},
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="recompute and compare with --out; exit 1 on a diff")
    args = ap.parse_args()
    doc = build_document()
    for name, section in doc["bundles"].items():
        for policy, p in section["policies"].items():
            sep = sum(x["separable"] for x in p["pairs"])
            print(f"[{name} {policy}] separable at FDR {ALPHA}: {sep} of {len(p['pairs'])} pairs")
    if args.check:
        committed = json.loads(args.out.read_text(encoding="utf-8"))
        return refcheck.report(committed, json.loads(json.dumps(doc)), str(args.out), COMMAND,
                               abs_tol=FLOAT_TOL, keys=("hand", "bundles", "source_sha256"))
    args.out.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
