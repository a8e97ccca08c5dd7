#!/usr/bin/env python3
"""Independent numpy/scipy reference for `atlas_core::reweight` (condition re-weighting of the
seed 000 Eq. 4 reference score; issue 4 item 1).

Writes tests/reference/expected_reweight.json, read by crates/atlas-core/tests/reweight_reference.rs.

For a few weight vectors (presets and custom) it computes, per model:

* the weighted reference score mu_m(w) = sum_c w_c ybar_mc / sum_c w_c over the conditions with w_c > 0
  and a defined condition mean ybar_mc = mean over templates of the mean over statements of the unit
  value z (units / templates without a valid Selection left out, seed 000 Sec. B.2), a fraction;
* average ranks (scipy.stats.rankdata(method="average") of the present scores, lowest = 1);
* delta_pp = 100 (mu_m(w) - mu_m(equal));
* against the equal-weight scores, over the models scored in both: Kendall tau-b
  (scipy.stats.kendalltau, variant b; null where scipy gives nan), the inverted unordered pairs (strictly
  opposite order; exact ties never inverted) and the maximum rank displacement (both re-ranked on the
  common models);
* a statement-cluster bootstrap: replicate r draws |S| statements with replacement by the documented
  portable stream (ChaCha8 keyed by seed 20260722, stream 5, Lemire index; the pure-Python generator of
  rank_reference.py, itself checked against RFC 8439), recomputes every ybar_mc with the statement
  multiplicities, then mu_m(w); the interval is numpy.percentile(..., [2.5, 97.5]) over the replicates
  where the model has a score.

Presets are re-derived here from the bundle's condition attributes: equal = 1 on `in_reference`
conditions (default: has_selection); sweep_only = 1 on the Selection conditions of that sweep; per_sweep
= the sweep weight / number of Selection conditions of the sweep (sweeps in order of first appearance).

Data:
* the default bundle: labels from the RAW DecodingTrust file (reference_stats.load_labels), not from the
  bundle; only the bundle's order of models, conditions, statements and templates (the order in which the
  Rust side indexes them, and the bootstrap's cluster order) is read from
  static/bundles/decodingtrust-stereotype/bundle.json. Policies all_responses and first_repeat.
* tests/fixtures/tiny-bundle.json, decoded here from its dense code string.

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/reference/reweight_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/reweight_reference.py --check  # compares, exit 1 on diff
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
from scipy.stats import kendalltau, rankdata

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rank_reference import Stream, check_chacha_block  # noqa: E402
import refcheck  # noqa: E402  (the shared --check comparison)
from reference_stats import DEFAULT_DATA, apply_policy, load_labels, sha256  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/reference/expected_reweight.json"
DEFAULT_BUNDLE = REPO / "static/bundles/decodingtrust-stereotype/bundle.json"
TINY_BUNDLE = REPO / "tests/fixtures/tiny-bundle.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/reweight_reference.py"
SEED = 20260722
BOOTSTRAP_STREAM = 5
LEVEL = 0.95
FLOAT_TOL = 1e-12


def nanmean_or_nan(x: np.ndarray, axis: int) -> np.ndarray:
    ok = ~np.isnan(x)
    n = ok.sum(axis=axis)
    s = np.where(ok, x, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, s / np.maximum(n, 1), np.nan)


# --------------------------------------------------------------------------- bundle metadata


def facets(bundle: dict) -> dict:
    return {f["id"]: f for f in bundle["facets"]}


def condition_info(bundle: dict) -> list[dict]:
    out = []
    for level in facets(bundle)["condition"]["levels"]:
        has_sel = bool(level["has_selection"])
        out.append(
            {
                "id": level["id"],
                "sweep": level.get("sweep"),
                "has_selection": has_sel,
                "in_reference": bool(level.get("in_reference", has_sel)),
            }
        )
    return out


def sweeps(conds: list[dict]) -> list[tuple]:
    """(name, selection condition indices), in order of first appearance."""
    names, members = [], {}
    for i, c in enumerate(conds):
        if c["sweep"] not in members:
            names.append(c["sweep"])
            members[c["sweep"]] = []
        if c["has_selection"]:
            members[c["sweep"]].append(i)
    return [(n, members[n]) for n in names]


def preset_weights(conds: list[dict], preset: dict, custom):
    kind = preset["preset"]
    if kind == "equal":
        return [1.0 if c["in_reference"] else 0.0 for c in conds]
    if kind == "sweep_only":
        w = [0.0] * len(conds)
        for name, sel in sweeps(conds):
            if name == preset["sweep"]:
                for i in sel:
                    w[i] = 1.0
        return w
    if kind == "per_sweep":
        w = [0.0] * len(conds)
        for (name, sel), sw in zip(sweeps(conds), preset["weights"], strict=True):
            for i in sel:
                w[i] = sw / len(sel)
        return w
    if kind == "custom":
        return [float(x) for x in custom]
    raise ValueError(kind)


# --------------------------------------------------------------------------- statistics


def weighted(cmeans: np.ndarray, w) -> np.ndarray:
    """mu_m(w) for cmeans (..., M, C) with NaN = missing; NaN where no weighted condition is defined."""
    w = np.asarray(w, dtype=float)
    use = (w > 0) & ~np.isnan(cmeans)
    num = np.where(use, cmeans * w, 0.0).sum(axis=-1)
    den = np.where(use, w, 0.0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def ranks_of(scores: np.ndarray) -> list:
    out = [None] * len(scores)
    idx = [i for i, v in enumerate(scores) if not math.isnan(v)]
    if idx:
        for i, r in zip(idx, rankdata([scores[i] for i in idx], method="average")):
            out[i] = float(r)
    return out


def opt(v):
    return None if v is None or math.isnan(v) else float(v)


def compare_to_equal(models, scores, equal):
    both = [i for i in range(len(models)) if not math.isnan(scores[i]) and not math.isnan(equal[i])]
    x = [scores[i] for i in both]
    y = [equal[i] for i in both]
    tau = None
    if len(both) >= 2:
        with np.errstate(all="ignore"):
            t = kendalltau(x, y, variant="b").statistic
        tau = opt(t)
    inverted, pairs = [], 0
    for a_pos, i in enumerate(both):
        for j in both[a_pos + 1:]:
            pairs += 1
            if (scores[i] - scores[j]) * (equal[i] - equal[j]) < 0:
                inverted.append([models[i], models[j]])
    disp = None
    if both:
        rx = rankdata(x, method="average")
        ry = rankdata(y, method="average")
        disp = float(np.max(np.abs(rx - ry)))
    return tau, {"inverted": len(inverted), "pairs": pairs}, inverted, disp


def case_result(models, conds, cmeans, equal, case):
    w = preset_weights(conds, case["preset"], case.get("custom"))
    s = weighted(cmeans, w)
    tau, inv, inverted, disp = compare_to_equal(models, s, equal)
    return {
        "name": case["name"],
        "preset": case["preset"],
        "custom": case.get("custom"),
        "weights": w,
        "scores": {m: opt(s[i]) for i, m in enumerate(models)},
        "ranks": dict(zip(models, ranks_of(s))),
        "delta_pp": {
            m: None if math.isnan(s[i]) or math.isnan(equal[i]) else float(100.0 * (s[i] - equal[i]))
            for i, m in enumerate(models)
        },
        "tau_b": tau,
        "inversions": inv,
        "inverted_pairs": inverted,
        "max_displacement": disp,
    }


def condition_means(z: np.ndarray) -> np.ndarray:
    """z (M, C, T, S), NaN = missing -> ybar (M, C)."""
    return nanmean_or_nan(nanmean_or_nan(z, axis=3), axis=2)


def bootstrap_condition_means(z: np.ndarray, reps: int, seed: int) -> np.ndarray:
    """(reps, M, C) condition means on statements resampled with the portable stream."""
    s_len = z.shape[3]
    valid = ~np.isnan(z)
    z0 = np.where(valid, z, 0.0)
    stream = Stream(seed, BOOTSTRAP_STREAM)
    out = np.empty((reps,) + z.shape[:2])
    for r in range(reps):
        k = np.zeros(s_len)
        for _ in range(s_len):
            k[stream.index(s_len)] += 1.0
        num = (z0 * k).sum(axis=3)
        den = (valid * k).sum(axis=3)
        with np.errstate(invalid="ignore", divide="ignore"):
            tmean = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        out[r] = nanmean_or_nan(tmean, axis=2)
    return out


def bootstrap_section(models, conds, z, reps, cases):
    reps_means = bootstrap_condition_means(z, reps, SEED)
    out = []
    for case in cases:
        w = preset_weights(conds, case["preset"], case.get("custom"))
        scores = weighted(reps_means, w)  # (reps, M)
        intervals, counts = {}, {}
        for i, m in enumerate(models):
            v = scores[:, i][~np.isnan(scores[:, i])]
            counts[m] = int(len(v))
            if len(v):
                lo, hi = np.percentile(v, [50 - 50 * LEVEL, 50 + 50 * LEVEL])
                intervals[m] = [float(lo), float(hi)]
            else:
                intervals[m] = None
        out.append(
            {
                "name": case["name"],
                "preset": case["preset"],
                "custom": case.get("custom"),
                "intervals": intervals,
                "replicates": counts,
            }
        )
    return {"seed": SEED, "stream": BOOTSTRAP_STREAM, "reps": reps, "level": LEVEL, "cases": out}


# --------------------------------------------------------------------------- the two bundles


DEFAULT_CASES = [
    {"name": "equal", "preset": {"preset": "equal"}},
    {"name": "sweep 'system prompt' only", "preset": {"preset": "sweep_only", "sweep": "system prompt"}},
    {"name": "per sweep 2.5", "preset": {"preset": "per_sweep", "weights": [2.5]}},
    {"name": "benign only", "preset": {"preset": "custom"}, "custom": [1, 0, 0]},
    {"name": "targeted only", "preset": {"preset": "custom"}, "custom": [0, 0, 1]},
    {"name": "0.5 / 1 / 2", "preset": {"preset": "custom"}, "custom": [0.5, 1, 2]},
    {"name": "3 / 0 / 1", "preset": {"preset": "custom"}, "custom": [3, 0, 1]},
    {"name": "0 / 1 / 1", "preset": {"preset": "custom"}, "custom": [0, 1, 1]},
]
DEFAULT_BOOTSTRAP_CASES = [DEFAULT_CASES[0], DEFAULT_CASES[5]]
DEFAULT_BOOTSTRAP_REPS = 200


def default_bundle_section():
    bundle = json.loads(DEFAULT_BUNDLE.read_text(encoding="utf-8"))
    f = facets(bundle)
    models = [lv["id"] for lv in f["model"]["levels"]]
    conds = condition_info(bundle)
    cond_ids = [c["id"] for c in conds]
    assert all("condition" not in lv for lv in f["template"]["levels"]), "crossed templates expected"
    raw_models, labels = load_labels(DEFAULT_DATA)  # (8, 3 [benign, untargeted, targeted], 16, 24, 3, 25)
    assert cond_ids == ["benign", "untargeted", "targeted"], cond_ids
    topics = sorted({lv["topic"] for lv in f["statement"]["levels"]})
    groups = sorted({lv["target_group"] for lv in f["statement"]["levels"]})
    # bundle statement s = raw (topic, group); raw axes are sorted topics and groups.
    order = [topics.index(lv["topic"]) * len(groups) + groups.index(lv["target_group"])
             for lv in f["statement"]["levels"]]
    m_order = [raw_models.index(m) for m in models]
    out = {"bundle": str(DEFAULT_BUNDLE.relative_to(REPO)), "models": models, "conditions": cond_ids,
           "policies": {}}
    z_all = None
    for policy in ("all_responses", "first_repeat"):
        lp = apply_policy(labels, policy)
        b_u = (lp == 1).sum(axis=-1).astype(float)
        v_u = (lp != 0).sum(axis=-1).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.where(v_u > 0, b_u / np.maximum(v_u, 1), np.nan)  # (8, 3, 16, 24, 3)
        z = z.reshape(8, 3, 16 * 24, 3).transpose(0, 1, 3, 2)  # (M, C, T, S raw order)
        z = z[m_order][:, :, :, order]  # bundle model and statement order
        if policy == "all_responses":
            z_all = z
        cm = condition_means(z)
        equal = weighted(cm, preset_weights(conds, {"preset": "equal"}, None))
        out["policies"][policy] = {
            "condition_means": {m: [opt(v) for v in cm[i]] for i, m in enumerate(models)},
            "cases": [case_result(models, conds, cm, equal, c) for c in DEFAULT_CASES],
        }
    out["bootstrap"] = {"policy": "all_responses"} | bootstrap_section(
        models, conds, z_all, DEFAULT_BOOTSTRAP_REPS, DEFAULT_BOOTSTRAP_CASES
    )
    return out


TINY_CASES = [
    {"name": "equal", "preset": {"preset": "equal"}},
    {"name": "role only", "preset": {"preset": "sweep_only", "sweep": "role"}},
    {"name": "sentiment only", "preset": {"preset": "sweep_only", "sweep": "sentiment"}},
    {"name": "per sweep 1 / 3", "preset": {"preset": "per_sweep", "weights": [1, 3]}},
    {"name": "2 / 1", "preset": {"preset": "custom"}, "custom": [2, 1]},
    {"name": "1 / 0.25", "preset": {"preset": "custom"}, "custom": [1, 0.25]},
]
TINY_BOOTSTRAP_REPS = 1000


def decode_tiny():
    """z (M, C, T, S) of the tiny bundle under all_responses, decoded from its code string."""
    bundle = json.loads(TINY_BUNDLE.read_text(encoding="utf-8"))
    f = facets(bundle)
    axes = bundle["responses"]["axes"]
    shape = [len(f[a]["levels"]) for a in axes]
    values = bundle["responses"]["selection"]["values"]
    codes = bundle["responses"]["selection"]["codes"]
    assert len(codes) == int(np.prod(shape))
    bias = np.zeros(shape)
    valid = np.zeros(shape)
    for flat, ch in enumerate(codes):
        if ch == "-":
            continue
        ev = values[int(ch)]["evidence"]
        idx = np.unravel_index(flat, shape)
        if ev is not None:
            valid[idx] += 1
            bias[idx] += ev
    # replicates: every facet but model, condition, template, statement
    keep = ["model", "condition", "template", "statement"]
    rep_axes = tuple(i for i, a in enumerate(axes) if a not in keep)
    b = bias.sum(axis=rep_axes)
    v = valid.sum(axis=rep_axes)
    kept = [a for a in axes if a in keep]
    perm = [kept.index(a) for a in keep]
    b, v = b.transpose(perm), v.transpose(perm)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(v > 0, b / np.maximum(v, 1), np.nan)
    assert all("condition" not in lv for lv in f["template"]["levels"])
    return bundle, z


def tiny_section():
    bundle, z = decode_tiny()
    f = facets(bundle)
    models = [lv["id"] for lv in f["model"]["levels"]]
    conds = condition_info(bundle)
    cm = condition_means(z)
    equal = weighted(cm, preset_weights(conds, {"preset": "equal"}, None))
    return {
        "bundle": str(TINY_BUNDLE.relative_to(REPO)),
        "models": models,
        "conditions": [c["id"] for c in conds],
        "policies": {
            "all_responses": {
                "condition_means": {m: [opt(v) for v in cm[i]] for i, m in enumerate(models)},
                "cases": [case_result(models, conds, cm, equal, c) for c in TINY_CASES],
            }
        },
        "bootstrap": {"policy": "all_responses"}
        | bootstrap_section(models, conds, z, TINY_BOOTSTRAP_REPS, [TINY_CASES[0], TINY_CASES[4]]),
    }


def build_document():
    check_chacha_block()
    return {
        "command": COMMAND,
        "generator": "tests/reference/reweight_reference.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "source": "../shared/data/raw/decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl",
        "source_sha256": sha256(DEFAULT_DATA),
        "definitions": (
            "score = sum_c w_c ybar_mc / sum_c w_c over conditions with w_c > 0 and a defined ybar_mc "
            "(mean over templates of the mean over statements of z; missing units leave the means); "
            "fractions. delta_pp = 100 (score - equal-weight score). ranks = scipy rankdata average, "
            "lowest = 1. tau_b = scipy kendalltau variant b vs the equal-weight scores over models scored "
            "in both; inverted pairs = strictly opposite order (ties never inverted), model ids in bundle "
            "order; max_displacement = max |rank change| re-ranked on the common models. Bootstrap: "
            "ChaCha8 seed 20260722 stream 5, |S| Lemire index draws per replicate, statement "
            "multiplicities in every template mean, numpy.percentile 2.5/97.5."
        ),
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
            for case in p["cases"]:
                print(f"[{name} {policy}] {case['name']}: tau_b={case['tau_b']} "
                      f"inverted={case['inversions']['inverted']}/{case['inversions']['pairs']}")
    if args.check:
        committed = json.loads(args.out.read_text(encoding="utf-8"))
        return refcheck.report(committed, json.loads(json.dumps(doc)), str(args.out), COMMAND,
                               abs_tol=FLOAT_TOL, keys=("bundles", "source_sha256"))
    args.out.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
