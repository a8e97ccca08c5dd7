#!/usr/bin/env python3
"""Independent numpy reference for the RQ2 equal-budget audits (seed 000 Sec. 3.5, 5.3, D.1, D.2;
Tables 13-15) on the DecodingTrust stereotype data.

It reads the RAW derived file staged from DecodingTrust
(../shared/data/raw/decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl),
NOT the Audit Atlas bundle, builds the label array the way tests/reference/reference_stats.py does
(labels[model, condition, topic, group, template_idx, repeat] in {-1, 0, 1}; 0 = Abstain = missing),
and re-implements every design with numpy's own random generator (PCG64 via SeedSequence), so its
draws are NOT those of the Rust DrawStream: the Rust test compares the two statistically (within 3
combined Monte Carlo standard errors).

Definitions (docs/statistics.md, "RQ2 equal-budget audits"):

* unit value z[m, c, t, s] = #1 / #valid over the unit's 25 repeats (all_responses), NaN if no valid
  label; statements s = (topic, target_group), 384 of them; conditions = the 3 system prompts (all in
  the reference), templates = template_idx 0..2 (crossed with every condition);
* reference = Eq. 4: mean over conditions of mean over templates of mean over statements of z, NaN
  left out at each level;
* statement category = Audit Atlas's grouping of the 24 target groups (CATEGORY below, the same table
  as the converter's; DecodingTrust has no category column); strata in byte order of their names;
* concentrated: one condition uniformly, one template uniformly, B statements without replacement;
* SRS: B distinct (condition, template, statement) cells without replacement out of 3 x 3 x 384;
* stratified: every condition, one template each; r = B mod K random conditions get ceil(B/K)
  statements, the others floor(B/K); within a condition with n statements, category g (sizes N_g,
  cumulative C_g) gets floor((n*C_g + j)/S) - floor((n*C_{g-1} + j)/S) statements, j uniform in 0..S
  (systematic proportional rounding), uniformly without replacement within the category;
* balanced: every condition, one template each, one statement uniformly per category;
* coverage K': K' conditions without replacement, one template each, B statements split
  floor/ceil(B/K') (extra ones to random conditions), uniformly without replacement per condition;
* a draw's score: mean over sampled conditions of the mean over the condition's valid sampled units
  (concentrated and SRS: plain mean of the valid sampled units); a model without any valid unit has no
  score in that draw (NaN) and is left out of that draw's errors, tau-b and pairs;
* metrics: per model MAE_m / RMSE_m in pp over its scored draws, then mean over models; per draw
  tau-b (scipy's variant b) and inversion rate vs the reference over the models scored in the draw,
  averaged over the draws where defined; repeat metrics against an independent second draw
  (repeat MAD per model, then over models); Monte Carlo SEs as in the Rust module docs
  (draw-level contributions v_i = (1/M') sum_m (N/n_m)|e_mi| for MAE, the delta-method linearisation
  for RMSE, sd/sqrt(n) for the per-draw means).

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/reference/rq2_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/rq2_reference.py --check  # recompute, compare

The venv needs numpy and scipy (scipy.stats.kendalltau cross-checks the vectorised tau-b).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reference_stats import diff  # noqa: E402  (shared JSON comparison of the --check modes)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = (
    REPO.parent
    / "shared/data/raw/decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl"
)
DEFAULT_OUT = REPO / "tests/reference/expected_rq2.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/rq2_reference.py"

CONDITIONS = ["benign", "untargeted", "targeted"]
N_TEMPLATES = 3
N_REPEATS = 25
DRAWS = 20_000
BUDGET = 200
SEED = 20260722
LEVEL = 0.95
CHUNK = 1000
FLOAT_TOL = 1e-9  # --check: same numpy gives identical numbers; the slack covers summation order
MISSING = 99

# Audit Atlas's grouping of DecodingTrust's 24 target groups (crates/atlas-cli/src/decodingtrust.rs).
CATEGORY = {
    "Homosexuals": "sexual orientation",
    "Muslims": "religion",
    "Black people": "race/ethnicity",
    "Physically disabled people": "disability",
    "Asians": "race/ethnicity",
    "Women": "gender",
    "Old people": "age",
    "Jews": "religion",
    "Poor people": "socioeconomic status",
    "Immigrants": "nationality",
    "Mexicans": "nationality",
    "Latin Americans": "nationality",
    "Men": "gender",
    "Christians": "religion",
    "White people": "race/ethnicity",
    "Able-bodied people": "disability",
    "Canadians": "nationality",
    "Young people": "age",
    "Rich people": "socioeconomic status",
    "Europeans": "nationality",
    "Atheists": "religion",
    "Americans": "nationality",
    "Caucasians": "race/ethnicity",
    "Buddhists": "religion",
}

# Design codes for numpy's SeedSequence([seed, code, role]); role 0 = audit draws, 1 = repeat draws.
DESIGN_CODES = {"concentrated": 1, "srs": 2, "stratified": 3, "balanced": 4}


def load(path: Path):
    """models, groups, labels[model, condition, topic, group, template_idx, repeat] in {-1, 0, 1}."""
    rows = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            r = json.loads(line)
            rows.append(
                (
                    r["model"].split("/", 1)[1],
                    r["sys_prompt_type"],
                    r["stereotype_topic"],
                    r["target_group"],
                    int(r["template_idx"]),
                    r["agreeability_num"],
                )
            )
    models = sorted({r[0] for r in rows})
    topics = sorted({r[2] for r in rows})
    groups = sorted({r[3] for r in rows})
    assert len(models) == 8 and len(topics) == 16 and len(groups) == 24
    assert set(groups) == set(CATEGORY), set(groups) ^ set(CATEGORY)
    mi = {m: i for i, m in enumerate(models)}
    ci = {c: i for i, c in enumerate(CONDITIONS)}
    ti = {t: i for i, t in enumerate(topics)}
    gi = {g: i for i, g in enumerate(groups)}
    labels = np.full((8, 3, 16, 24, N_TEMPLATES, N_REPEATS), MISSING, dtype=np.int8)
    for model, cond, topic, group, tidx, agree in rows:
        cell = labels[mi[model], ci[cond], ti[topic], gi[group], tidx]
        assert (cell == MISSING).all() and len(agree) == N_REPEATS
        cell[:] = agree
    assert (labels != MISSING).all(), "the design is incomplete"
    return models, groups, labels


def unit_values(labels: np.ndarray, policy: str) -> np.ndarray:
    """z[m, c, t, s] (s = topic * 24 + group), NaN = missing."""
    if policy == "first_repeat":
        labels = labels[..., :1]
    pos = (labels == 1).sum(axis=-1).astype(np.float64)
    neg = (labels == -1).sum(axis=-1).astype(np.float64)
    if policy == "unit_majority":
        z = np.where(pos > neg, 1.0, np.where(neg > pos, 0.0, np.nan))
    else:
        valid = pos + neg
        with np.errstate(invalid="ignore", divide="ignore"):
            z = np.where(valid > 0, pos / np.maximum(valid, 1), np.nan)
    # (m, c, topic, group, t) -> (m, c, t, s)
    return z.reshape(8, 3, 16 * 24, N_TEMPLATES).transpose(0, 1, 3, 2).copy()


def nanmean(x: np.ndarray, axis: int) -> np.ndarray:
    ok = ~np.isnan(x)
    n = ok.sum(axis=axis)
    s = np.where(ok, x, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, s / np.maximum(n, 1), np.nan)


def masked_mean(vals: np.ndarray, sel: np.ndarray, axis: int) -> np.ndarray:
    """Mean over `axis` of the non-NaN values where sel is True; NaN where none."""
    ok = sel & ~np.isnan(vals)
    n = ok.sum(axis=axis)
    s = np.where(ok, vals, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, s / np.maximum(n, 1), np.nan)


def random_subset(rng, n: int, size: int, k: int) -> np.ndarray:
    """(n, k) uniformly random k-subsets of range(size) (random order): the k smallest of iid keys."""
    if k == 0:
        return np.zeros((n, 0), dtype=np.int64)
    keys = rng.random((n, size))
    if k == size:
        return np.argsort(keys, axis=1)
    return np.argpartition(keys, k - 1, axis=1)[:, :k]


class Audit:
    def __init__(self, z: np.ndarray, groups: list[str]):
        self.z = z  # (M, K, T, S)
        self.M, self.K, self.T, self.S = z.shape
        cat_of_group = [CATEGORY[g] for g in groups]
        cat_of_statement = np.array([cat_of_group[s % 24] for s in range(self.S)])
        self.categories = sorted(set(cat_of_statement), key=lambda c: c.encode("utf-8"))
        self.members = [np.flatnonzero(cat_of_statement == c) for c in self.categories]
        self.sizes = np.array([len(m) for m in self.members])
        self.reference = nanmean(nanmean(nanmean(z, 3), 2), 1)  # Eq. 4

    def budget(self, design: str, b: int) -> int:
        return self.K * len(self.categories) if design == "balanced" else b

    def draw(self, design: str, rng, n: int, b: int) -> np.ndarray:
        """(n, M) draw scores."""
        z, K, T, S, M = self.z, self.K, self.T, self.S, self.M
        if design == "concentrated":
            k = rng.integers(K, size=n)
            t = rng.integers(T, size=n)
            stm = random_subset(rng, n, S, b)
            vals = z[:, k[:, None], t[:, None], stm]  # (M, n, b)
            return nanmean(vals, 2).T
        if design == "srs":
            flat = z.reshape(M, K * T * S)
            cells = random_subset(rng, n, K * T * S, b)
            return nanmean(flat[:, cells], 2).T
        if design == "stratified":
            q, r = divmod(b, K)
            n_k = np.full((n, K), q)
            extra = random_subset(rng, n, K, r)
            np.put_along_axis(n_k, extra, q + 1, axis=1)
            t = rng.integers(T, size=(n, K))
            j = rng.integers(S, size=(n, K))
            cum = np.concatenate([[0], np.cumsum(self.sizes)])
            n_g = (n_k[..., None] * cum[1:] + j[..., None]) // S - (
                n_k[..., None] * cum[:-1] + j[..., None]
            ) // S  # (n, K, G)
            assert (n_g.sum(-1) == n_k).all()
            keys = rng.random((n, K, S))
            sel = np.zeros((n, K, S), dtype=bool)
            for g, members in enumerate(self.members):
                rank = np.argsort(np.argsort(keys[..., members], axis=-1), axis=-1)
                sel[..., members] = rank < n_g[..., g : g + 1]
            vals = z[:, np.arange(K)[None, :], t, :]  # (M, n, K, S)
            return nanmean(masked_mean(vals, sel[None], 3), 2).T
        if design == "balanced":
            t = rng.integers(T, size=(n, K))
            stm = np.stack(
                [m[rng.integers(len(m), size=(n, K))] for m in self.members], axis=-1
            )  # (n, K, G)
            vals = z[:, np.arange(K)[None, :, None], t[..., None], stm]  # (M, n, K, G)
            return nanmean(nanmean(vals, 3), 2).T
        if design.startswith("coverage_"):
            kk = int(design.split("_")[1])
            conds = random_subset(rng, n, K, kk)  # (n, kk)
            q, r = divmod(b, kk)
            n_p = np.full((n, kk), q)
            np.put_along_axis(n_p, random_subset(rng, n, kk, r), q + 1, axis=1)
            t = rng.integers(T, size=(n, kk))
            keys = rng.random((n, kk, S))
            rank = np.argsort(np.argsort(keys, axis=-1), axis=-1)
            sel = rank < n_p[..., None]
            vals = z[:, conds, t, :]  # (M, n, kk, S)
            return nanmean(masked_mean(vals, sel[None], 3), 2).T
        raise ValueError(design)

    def run(self, design: str, seed: int, draws: int, b: int, role: int) -> np.ndarray:
        code = DESIGN_CODES.get(design) or 100 + int(design.split("_")[1])
        rng = np.random.default_rng(np.random.SeedSequence([seed, code, role]))
        out = [self.draw(design, rng, min(CHUNK, draws - i), b) for i in range(0, draws, CHUNK)]
        return np.concatenate(out, axis=0)


def pair_stats(x: np.ndarray, y: np.ndarray):
    """Per row of x, y (N, M), over the models present in both: tau-b (scipy variant b, NaN where
    undefined) and inversion rate (NaN without a compared pair)."""
    M = x.shape[1]
    i, j = np.triu_indices(M, k=1)
    ok = ~np.isnan(x) & ~np.isnan(y)
    pair_ok = ok[:, i] & ok[:, j]
    with np.errstate(invalid="ignore"):
        dx = np.sign(x[:, i] - x[:, j])
        dy = np.sign(y[:, i] - y[:, j])
    dx = np.where(pair_ok, dx, 0)
    dy = np.where(pair_ok, dy, 0)
    prod = dx * dy
    con = ((prod > 0) & pair_ok).sum(1)
    dis = ((prod < 0) & pair_ok).sum(1)
    tx = ((dx == 0) & (dy != 0) & pair_ok).sum(1)
    ty = ((dy == 0) & (dx != 0) & pair_ok).sum(1)
    pairs = pair_ok.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        denom = np.sqrt((con + dis + tx).astype(float) * (con + dis + ty).astype(float))
        tau = np.where(denom > 0, (con - dis) / np.where(denom > 0, denom, 1), np.nan)
        rate = np.where(pairs > 0, dis / np.maximum(pairs, 1), np.nan)
    return np.clip(tau, -1, 1), rate


def se(v: np.ndarray):
    v = np.asarray(v, dtype=float)
    return float(np.std(v, ddof=1) / np.sqrt(len(v))) if len(v) >= 2 else None


def metric(values: np.ndarray, mean=None, contributions=None):
    v = values[~np.isnan(values)]
    lo, hi = np.percentile(v, [100 * (1 - LEVEL) / 2, 100 * (1 + LEVEL) / 2]) if len(v) else (None, None)
    return {
        "mean": float(np.mean(v)) if mean is None else float(mean),
        "mc_se": se(v) if contributions is None else se(contributions),
        "range": [float(lo), float(hi)],
        "draws": int(len(v)),
    }


def error_metrics(a: np.ndarray, b: np.ndarray):
    """MAE and RMSE (pp) of a vs b (N, M), per model then over models, with SEs and draw ranges."""
    N = a.shape[0]
    e = 100.0 * (a - b)
    ok = ~np.isnan(e)
    n_m = ok.sum(0)
    act = n_m > 0
    ae = np.where(ok, np.abs(e), 0.0)
    se2 = np.where(ok, e * e, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mae_m = np.where(act, ae.sum(0) / np.maximum(n_m, 1), np.nan)
        rmse_m = np.where(act, np.sqrt(se2.sum(0) / np.maximum(n_m, 1)), np.nan)
    w = np.where(act, N / np.maximum(n_m, 1), 0.0) / act.sum()
    v = (ae * w).sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        dpsi = np.where(rmse_m > 0, (se2 - rmse_m**2) / (2 * np.where(rmse_m > 0, rmse_m, 1)), 0.0)
    psi = (np.where(ok, dpsi, 0.0) * w).sum(1)
    k = ok.sum(1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mae_draw = np.where(k > 0, ae.sum(1) / np.maximum(k, 1), np.nan)
        rmse_draw = np.where(k > 0, np.sqrt(se2.sum(1) / np.maximum(k, 1)), np.nan)
    mae = metric(mae_draw, mean=np.nanmean(mae_m), contributions=v)
    rmse = metric(rmse_draw, mean=np.nanmean(rmse_m), contributions=psi)
    per_model_se = [
        se(np.abs(e[ok[:, m], m])) if n_m[m] >= 2 else None for m in range(e.shape[1])
    ]
    return mae, rmse, mae_m, per_model_se, n_m


def summarize(main: np.ndarray, rep: np.ndarray, ref: np.ndarray, models: list[str]):
    N = main.shape[0]
    refs = np.broadcast_to(ref, main.shape)
    mae, rmse, mae_m, mae_m_se, n_m = error_metrics(main, refs)
    tau, rate = pair_stats(main, refs)
    rmad, _, rmad_m, _, _ = error_metrics(main, rep)
    rtau, rrate = pair_stats(main, rep)
    # scipy cross-check of the vectorised tau-b on the first 300 draws
    from scipy.stats import kendalltau

    for d in range(min(300, N)):
        ok = ~np.isnan(main[d]) & ~np.isnan(rep[d])
        want = kendalltau(main[d][ok], rep[d][ok], variant="b").statistic
        got = rtau[d]
        assert (np.isnan(want) and np.isnan(got)) or abs(want - got) < 1e-12, (d, want, got)
    return {
        "mae_pp": mae,
        "rmse_pp": rmse,
        "tau_b": metric(tau),
        "inversion_rate": metric(rate),
        "repeat_mad_pp": rmad,
        "repeat_tau_b": metric(rtau),
        "repeat_inversion_rate": metric(rrate),
        "per_model": {
            models[m]: {
                "mae_pp": None if np.isnan(mae_m[m]) else float(mae_m[m]),
                "mae_mc_se": mae_m_se[m],
                "repeat_mad_pp": None if np.isnan(rmad_m[m]) else float(rmad_m[m]),
                "excluded_draws": int(N - n_m[m]),
            }
            for m in range(len(models))
        },
    }


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build_document(data: Path, draws: int, budget: int, seed: int, policy: str):
    import scipy

    models, groups, labels = load(data)
    audit = Audit(unit_values(labels, policy), groups)
    designs = ["concentrated", "srs", "stratified", "balanced"] + [
        f"coverage_{k}" for k in range(1, audit.K + 1)
    ]
    results = {}
    for d in designs:
        t0 = time.time()
        main = audit.run(d, seed, draws, budget, 0)
        rep = audit.run(d, seed, draws, budget, 1)
        results[d] = {"budget": audit.budget(d, budget), **summarize(main, rep, audit.reference, models)}
        r = results[d]
        print(
            f"  {d:13s} MAE {r['mae_pp']['mean']:7.3f} ±{r['mae_pp']['mc_se']:.3f}  "
            f"RMSE {r['rmse_pp']['mean']:7.3f}  tau {r['tau_b']['mean']:.4f}  "
            f"inv {100 * r['inversion_rate']['mean']:5.2f}%  rep MAD {r['repeat_mad_pp']['mean']:7.3f}  "
            f"({time.time() - t0:.1f} s)"
        )
    return {
        "command": COMMAND
        + ("" if (draws, budget, seed, policy) == (DRAWS, BUDGET, SEED, "all_responses") else
           f" --draws {draws} --budget {budget} --seed {seed} --policy {policy}"),
        "numpy_version": np.__version__,
        "scipy_version": scipy.__version__,
        "python_version": platform.python_version(),
        "source": "../shared/data/raw/decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl",
        "source_sha256": sha256(data),
        "settings": {"draws": draws, "budget": budget, "seed": seed, "policy": policy, "level": LEVEL},
        "rng": "numpy Generator(PCG64) from SeedSequence([seed, design code, role]); design codes "
        "concentrated 1, srs 2, stratified 3, balanced 4, coverage_K 100+K; role 0 audit draws, 1 repeat "
        "draws. Independent of the Rust DrawStream: compare statistically.",
        "categories": {c: int(n) for c, n in zip(audit.categories, audit.sizes)},
        "models": models,
        "reference": {m: float(v) for m, v in zip(models, audit.reference)},
        "designs": results,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--draws", type=int, default=DRAWS)
    ap.add_argument("--budget", type=int, default=BUDGET)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--policy", default="all_responses", choices=["all_responses", "first_repeat", "unit_majority"])
    ap.add_argument("--check", action="store_true", help="recompute and compare with --out; exit 1 on any difference")
    args = ap.parse_args()

    t0 = time.time()
    doc = build_document(args.data, args.draws, args.budget, args.seed, args.policy)
    print(f"computed in {time.time() - t0:.1f} s")
    if args.check:
        committed = json.loads(args.out.read_text(encoding="utf-8"))
        problems = []
        for key in ("settings", "source_sha256", "categories", "models", "reference", "designs"):
            problems.extend(diff(committed.get(key), doc[key], f"$.{key}", FLOAT_TOL))
        if problems:
            print(f"--check: {len(problems)} difference(s) from {args.out}:", file=sys.stderr)
            for p in problems[:50]:
                print("  " + p, file=sys.stderr)
            return 1
        print(f"--check: {args.out} matches the recomputation (floats at {FLOAT_TOL:g})")
        return 0
    args.out.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
