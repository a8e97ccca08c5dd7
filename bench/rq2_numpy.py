#!/usr/bin/env python3
"""numpy RQ2 on an Audit Atlas BUNDLE, for the RQ2 benchmark (bench/rq2_bench.sh).

Reads the bundle JSON (not the raw DecodingTrust file), decodes the dense Selection `codes` with numpy
(np.frombuffer -> byte lookup table -> evidence 1 / 0 / Abstain / no response), reshapes them by the axes'
sizes, computes the all_responses unit values z[m, c, t, s] over the reference conditions and their
templates T_c (a template with a `condition` attribute belongs to that condition only; without one it is
crossed with every condition, as in `Rq2Matrix::new`), the Eq. 4 reference, and then runs every design
(concentrated, SRS, stratified, balanced, coverage K' = 1..K) vectorised over draws with numpy's own
generator, using the design and metric functions of tests/reference/rq2_reference.py (imported; they take
arrays). Its draws are NOT the Rust DrawStream's: compare numbers statistically, times directly.

    ~/.cache/audit-atlas/venv/bin/python bench/rq2_numpy.py BUNDLE [--draws 10000] [--budget 200]
        [--seed 20260722] [--repeat 3] [--json OUT]

Prints one line per timed repetition ("numpy_seconds N.NNN") and, with --json, the medians and the
headline MAE of every design (to eyeball against `atlas analyze-rq2`).
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
sys.path.insert(0, str(REPO / "tests/reference"))
import rq2_reference as ref  # noqa: E402

ALPHABET = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
ABSTAIN, NONE = -1, -2
BOOTSTRAP = 2000


def load_bundle(path: Path):
    """models, reference-condition unit values z (M, K, T, S), statement categories."""
    doc = json.loads(path.read_bytes())
    facets = {f["id"]: f for f in doc["facets"]}
    axes = doc["responses"]["axes"]
    sel = doc["responses"]["selection"]
    # code byte -> evidence (1, 0), ABSTAIN (evidence null) or NONE ('-')
    lut = np.full(256, NONE, dtype=np.int8)
    for k, v in enumerate(sel["values"]):
        lut[ALPHABET[k]] = ABSTAIN if v["evidence"] is None else int(v["evidence"])
    codes = lut[np.frombuffer(sel["codes"].encode("ascii"), dtype=np.uint8)]
    shape = [len(facets[a]["levels"]) for a in axes]
    want = ["model", "condition", "template", "statement"]
    rest = [a for a in axes if a not in want]  # repeat (and any other facet): pooled
    order = [axes.index(a) for a in want + rest]
    ev = codes.reshape(shape).transpose(order)
    ev = ev.reshape(ev.shape[:4] + (-1,))
    pos = (ev == 1).sum(-1).astype(np.float64)
    valid = pos + (ev == 0).sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        z_all = np.where(valid > 0, pos / np.maximum(valid, 1), np.nan)  # (M, C, Tall, S)
    conds = facets["condition"]["levels"]
    temps = facets["template"]["levels"]
    k_ref = [c for c, lv in enumerate(conds) if lv.get("in_reference", True)]
    t_of = []
    for c in k_ref:
        cid = conds[c]["id"]
        t_of.append([t for t, lv in enumerate(temps) if lv.get("condition") in (None, cid)])
    sizes = {len(t) for t in t_of}
    if len(sizes) != 1:
        sys.exit(f"unequal |T_c| {sorted(sizes)}: this vectorised benchmark needs the same count per condition")
    tidx = np.array(t_of)  # (K, T)
    z = z_all[:, np.array(k_ref)[:, None], tidx, :]  # (M, K, T, S)
    cats = [lv.get("category") for lv in facets["statement"]["levels"]]
    models = [lv["id"] for lv in facets["model"]["levels"]]
    return models, z, cats


def make_audit(z: np.ndarray, cats: list) -> ref.Audit:
    """rq2_reference.Audit with the bundle's own strata (categories in byte order, then uncategorised)."""
    a = ref.Audit.__new__(ref.Audit)
    a.z = z
    a.M, a.K, a.T, a.S = z.shape
    named = sorted({c for c in cats if c is not None}, key=lambda c: c.encode("utf-8"))
    arr = np.array([c if c is not None else "\0none" for c in cats], dtype=object)
    a.categories = named + (["\0none"] if any(c is None for c in cats) else [])
    a.members = [np.flatnonzero(arr == c) for c in a.categories]
    a.sizes = np.array([len(m) for m in a.members])
    a.reference = ref.nanmean(ref.nanmean(ref.nanmean(z, 3), 2), 1)  # Eq. 4, equal weights
    return a


def summarize(main, rep, reference):
    """rq2_reference.summarize without its scipy cross-check (verification, not analysis)."""
    refs = np.broadcast_to(reference, main.shape)
    mae, rmse, mae_m, _, n_m = ref.error_metrics(main, refs)
    tau, rate = ref.pair_stats(main, refs)
    rmad, *_ = ref.error_metrics(main, rep)
    rtau, rrate = ref.pair_stats(main, rep)
    return {
        "mae_pp": mae, "rmse_pp": rmse, "tau_b": ref.metric(tau), "inversion_rate": ref.metric(rate),
        "repeat_mad_pp": rmad, "repeat_tau_b": ref.metric(rtau), "repeat_inversion_rate": ref.metric(rrate),
        "per_model_mae_pp": [float(x) for x in mae_m],
        "_contrib": _mae_contributions(main, refs), "_rate": rate,
    }


def _mae_contributions(a, b):
    e = 100.0 * (a - b)
    ok = ~np.isnan(e)
    n_m = ok.sum(0)
    act = n_m > 0
    w = np.where(act, a.shape[0] / np.maximum(n_m, 1), 0.0) / act.sum()
    return (np.where(ok, np.abs(e), 0.0) * w).sum(1)


def run_all(audit: ref.Audit, draws: int, budget: int, seed: int):
    ref.CHUNK = 1000
    designs = ["concentrated", "srs", "stratified", "balanced"] + [f"coverage_{k}" for k in range(1, audit.K + 1)]
    out = {}
    for d in designs:
        # SRS draws keys over all K*T*S cells: smaller chunks keep memory bounded.
        ref.CHUNK = max(1, min(1000, 20_000_000 // (audit.K * audit.T * audit.S))) if d == "srs" else 1000
        main = audit.run(d, seed, draws, budget, 0)
        rep = audit.run(d, seed, draws, budget, 1)
        out[d] = summarize(main, rep, audit.reference)
    # D.2 contrasts: 2,000 bootstrap means of paired draw-level differences, 4 of them.
    rng = np.random.default_rng(np.random.SeedSequence([seed, 1]))
    contrasts = {}
    for other in ("concentrated", "srs"):
        for key in ("_contrib", "_rate"):
            diff = np.nan_to_num(out["stratified"][key]) - np.nan_to_num(out[other][key])
            idx = rng.integers(draws, size=(BOOTSTRAP, draws))
            boots = diff[idx].mean(1)
            contrasts[f"stratified-{other}{key}"] = [float(x) for x in np.percentile(boots, [2.5, 97.5])]
    return out, contrasts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--budget", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20260722)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    times, load_times = [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        models, z, cats = load_bundle(args.bundle)
        audit = make_audit(z, cats)
        t1 = time.perf_counter()
        results, _ = run_all(audit, args.draws, args.budget, args.seed)
        t2 = time.perf_counter()
        times.append(t2 - t0)
        load_times.append(t1 - t0)
        print(f"numpy_seconds {t2 - t0:.3f} (load+decode {t1 - t0:.3f})", flush=True)
    summary = {
        "numpy_version": np.__version__,
        "shape_MKTS": list(z.shape),
        "draws": args.draws, "budget": args.budget, "seed": args.seed,
        "seconds": times, "median_seconds": statistics.median(times),
        "load_seconds_median": statistics.median(load_times),
        "reference": dict(zip(models, map(float, audit.reference))),
        "mae_pp": {d: r["mae_pp"]["mean"] for d, r in results.items()},
        "inversion_rate": {d: r["inversion_rate"]["mean"] for d, r in results.items()},
    }
    print(f"numpy_median_seconds {summary['median_seconds']:.3f}")
    for d in ("concentrated", "srs", "stratified", "balanced"):
        print(f"  {d:13s} MAE {summary['mae_pp'][d]:7.3f} pp  inversions {100 * summary['inversion_rate'][d]:5.2f}%")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
