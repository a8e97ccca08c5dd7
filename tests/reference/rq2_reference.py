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

Partial drops and excluded draws, counted exactly on the Rust draws ("exclusions" in the JSON). A
draw of a design that averages condition means (stratified, balanced, coverage K' >= 2) can lose a
sampled condition for a model: the condition has no valid unit for that model among the draw's
statements of that condition, so it leaves the draw's condition average, while the model keeps a score
from the other conditions (a partial drop). A model with no valid unit in the whole draw has no score
(an excluded draw). These counts are integers that depend on the exact draws, so this section does NOT
use numpy's generator: it replays the Rust draws from their documented word consumption
(crates/atlas-core/src/rq2.rs, Rq2Matrix::draw; docs/statistics.md "Random streams") on a ChaCha8
keystream computed here with numpy (vectorised over block counters, checked against the pure-Python
block function of tests/reference/rank_reference.py, itself checked against RFC 8439), Lemire's
multiply-and-reject for index(n) and the front-to-back partial Fisher-Yates for swor(n, k). Only the
level order of the default bundle (models, conditions, statements with their topic and target group,
templates) is read from static/bundles/decodingtrust-stereotype/bundle.json, to number the statements
as the Rust matrix does; the unit values come from the raw file. Counted for budgets 180 and 200,
10,000 draws per design (the CLI's default), seed 20260722, every repeat policy, audit and repeat
draws, per design that averages condition means (stratified, balanced, coverage_2, coverage_3; the
others average a single mean and cannot have one) and model: partial_drop_draws (draws with a score and >= 1 sampled condition
dropped), dropped_conditions (conditions dropped over those draws), excluded_draws (no score), and the
same for the repeat draws. crates/atlas-core/tests/rq2_reference.rs compares them with the crate's
report exactly.

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/reference/rq2_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/rq2_reference.py --check  # recompute, compare

The venv needs numpy and scipy (scipy.stats.kendalltau cross-checks the vectorised tau-b).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)

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

# Exclusion counts on the Rust draws (see the module docs).
DEFAULT_BUNDLE = REPO / "static/bundles/decodingtrust-stereotype/bundle.json"
EXCLUSION_BUDGETS = (180, 200)
EXCLUSION_DRAWS = 10_000
POLICIES = ("all_responses", "first_repeat", "unit_majority")
# Rust stream ids (Design::audit_stream; the repeat stream is + 1) of the designs that average condition
# means, the only ones that can have a partial drop (concentrated, SRS and coverage_1 average one mean;
# the Rust test requires 0 there).
RUST_STREAMS = {"stratified": 48, "balanced": 64, "coverage_2": 16 * 18, "coverage_3": 16 * 19}

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


# --------------------------------------------------------------------------- exclusions on the Rust draws

MASK32 = 0xFFFFFFFF


def chacha8_words(key: list[int], stream: int, first_block: int, blocks: int, counter=None) -> np.ndarray:
    """Keystream words of ChaCha8 blocks first_block .. first_block + blocks - 1 (64-bit counter in
    state words 12-13, stream id in 14-15), little-endian u32 words in block order, vectorised over
    the blocks. With `counter` (a uint64 array of block numbers), those blocks instead."""
    from rank_reference import CONSTANTS

    if counter is None:
        counter = np.arange(first_block, first_block + blocks, dtype=np.uint64)
    blocks = len(counter)
    state = [np.full(blocks, c, dtype=np.uint32) for c in CONSTANTS + key]
    state += [
        (counter & np.uint64(MASK32)).astype(np.uint32),
        (counter >> np.uint64(32)).astype(np.uint32),
        np.full(blocks, stream & MASK32, dtype=np.uint32),
        np.full(blocks, stream >> 32, dtype=np.uint32),
    ]
    x = [w.copy() for w in state]

    def rotl(v, c):
        return (v << np.uint32(c)) | (v >> np.uint32(32 - c))

    def qr(a, b, c, d):
        x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 16)
        x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 12)
        x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 8)
        x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 7)

    with np.errstate(over="ignore"):
        for _ in range(4):  # ChaCha8 = 4 double rounds
            qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15)
            qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14)
        out = np.stack([a + b for a, b in zip(x, state)], axis=1)  # (blocks, 16)
    return out.reshape(-1)


class RustStream:
    """DrawStream::with_stream(seed, stream): the words of chacha8_words in order, with index(n)
    (Lemire's multiply-and-reject) and swor(n, k) (front-to-back partial Fisher-Yates, emitted in draw
    order), as documented in crates/atlas-core/src/resample.rs."""

    CHUNK = 1 << 14  # blocks per refill

    def __init__(self, seed: int, stream: int, draw: int | None = None, chunk: int | None = None):
        """draw = i: DrawStream::for_draw(seed, stream, i), the per-draw layout of the RQ2 audit and
        repeat draws: keystream word i * 2**32, i.e. block i * 2**28 (16 words a block)."""
        from rank_reference import pcg32_seed_bytes

        raw = pcg32_seed_bytes(seed)
        self.key = [int.from_bytes(raw[i:i + 4], "little") for i in range(0, 32, 4)]
        self.stream = stream
        self.blocks = 0 if draw is None else draw << 28
        self.chunk = chunk or self.CHUNK
        self.words = np.zeros(0, dtype=np.uint64)
        self.pos = 0

    def take(self, k: int) -> np.ndarray:
        while self.pos + k > len(self.words):
            more = chacha8_words(self.key, self.stream, self.blocks, self.chunk).astype(np.uint64)
            self.blocks += self.chunk
            self.words = np.concatenate([self.words[self.pos:], more])
            self.pos = 0
        w = self.words[self.pos:self.pos + k]
        self.pos += k
        return w

    def index(self, n: int) -> int:
        m = int(self.take(1)[0]) * n
        if (m & MASK32) < n:
            threshold = ((1 << 32) - n) % n
            while (m & MASK32) < threshold:
                m = int(self.take(1)[0]) * n
        return m >> 32

    def bounded(self, ns: np.ndarray) -> list[int]:
        """index(ns[0]), index(ns[1]), ... in order; vectorised, exact on a (rare) rejection."""
        w = self.take(len(ns))
        m = w * ns
        lo = m & np.uint64(MASK32)
        if (lo < ns).any():  # a possible rejection: redo from the first such word, one by one
            first = int(np.argmax(lo < ns))
            self.pos -= len(ns) - first
            head = (m[:first] >> np.uint64(32)).astype(np.int64).tolist()
            return head + [self.index(int(n)) for n in ns[first:]]
        return (m >> np.uint64(32)).astype(np.int64).tolist()

    def swor(self, n: int, k: int) -> list[int]:
        if k == 0:
            return []
        r = self.bounded(np.arange(n, n - k, -1, dtype=np.uint64))
        displaced, out = {}, []
        for i, ri in enumerate(r):
            j = i + ri
            vi, vj = displaced.get(i, i), displaced.get(j, j)
            displaced[j] = vi
            out.append(vj)
        return out


def check_rust_stream():
    """The vectorised keystream, index and swor equal rank_reference.py's pure-Python Stream."""
    from rank_reference import Stream, check_chacha_block

    check_chacha_block()
    for stream in (0, 48, 65):
        a, b = RustStream(SEED, stream), Stream(SEED, stream)
        got = [int(v) for v in a.take(40)] + [a.index(384) for _ in range(30)] + a.swor(3456, 50)
        want = [b.next_u32() for _ in range(40)] + [b.index(384) for _ in range(30)]
        want += b.sample_without_replacement(3456, 50)
        assert got == want, f"stream {stream}: the vectorised ChaCha8 draws differ from rank_reference.Stream"


def bundle_order():
    """Level order of the default bundle: models, conditions, statements (as raw (topic, group)
    positions), templates (as raw template_idx), statement categories."""
    b = json.loads(DEFAULT_BUNDLE.read_text(encoding="utf-8"))
    f = {x["id"]: x for x in b["facets"]}
    models = [lv["id"] for lv in f["model"]["levels"]]
    conditions = [lv["id"] for lv in f["condition"]["levels"]]
    assert all(lv.get("in_reference", lv["has_selection"]) for lv in f["condition"]["levels"])
    assert all("condition" not in lv for lv in f["template"]["levels"]), "crossed templates expected"
    templates = [int(lv["label"].removeprefix("wording ")) - 1 for lv in f["template"]["levels"]]
    stm = f["statement"]["levels"]
    for lv in stm:
        assert CATEGORY[lv["target_group"]] == lv["category"], lv["id"]
    return models, conditions, templates, [(lv["topic"], lv["target_group"]) for lv in stm]


class RustMatrix:
    """The observable matrix in the Rust numbering, as valid[m, k, t, s] (a valid Selection)."""

    def __init__(self, valid: np.ndarray, categories: list[list[int]]):
        self.valid = valid  # (P*M, K, T, S) bool
        _, self.K, self.T, self.S = valid.shape
        self.categories = categories  # statement indices per stratum, strata in byte order

    def groups(self, design: str, b: int, st: RustStream):
        """One draw: a list of (k, t, statements) groups, consuming the words as Rq2Matrix::draw."""
        K, T, S = self.K, self.T, self.S
        if design == "concentrated":
            k = st.index(K)
            t = st.index(T)
            return [(k, t, st.swor(S, b))]
        if design == "srs":
            cells = st.swor(K * T * S, b)
            return [(c // (T * S), (c // S) % T, [c % S]) for c in cells]  # one group, split by cell
        if design == "stratified":
            q, r = divmod(b, K)
            n_k = [q] * K
            for k in st.swor(K, r):
                n_k[k] += 1
            out = []
            for k, n in enumerate(n_k):
                t = st.index(T)
                j = st.index(S)
                stm, cum = [], 0
                for members in self.categories:
                    before = (n * cum + j) // S
                    cum += len(members)
                    n_g = (n * cum + j) // S - before
                    stm += [members[p] for p in st.swor(len(members), n_g)]
                out.append((k, t, stm))
            return out
        if design == "balanced":
            out = []
            for k in range(K):
                t = st.index(T)
                out.append((k, t, [m[st.index(len(m))] for m in self.categories]))
            return out
        if design.startswith("coverage_"):
            kk = int(design.split("_")[1])
            chosen = st.swor(K, kk)
            q, r = divmod(b, kk)
            n_p = [q] * kk
            for p in st.swor(kk, r):
                n_p[p] += 1
            out = []
            for k, n in zip(chosen, n_p):
                t = st.index(T)
                out.append((k, t, st.swor(S, n)))
            return out
        raise ValueError(design)

    def count(self, design: str, b: int, seed: int, draws: int, stream: int) -> np.ndarray:
        """(P*M, 3) over the draws: partial-drop draws, conditions dropped in them, excluded draws."""
        out = np.zeros((self.valid.shape[0], 3), dtype=np.int64)
        # Per-draw layout (crates/atlas-core/src/resample.rs, DrawStream::for_draw): draw i reads from
        # keystream word i * 2**32 (block i * 2**28) of the stream. The first 32 blocks (512 words,
        # enough for a draw of B = 200) of every draw in one vectorised call; a draw that needs more
        # computes them itself.
        first = 32
        proto = RustStream(seed, stream)
        counter = ((np.arange(draws, dtype=np.uint64) << np.uint64(28))[:, None]
                   + np.arange(first, dtype=np.uint64)[None, :]).reshape(-1)
        words = chacha8_words(proto.key, stream, 0, 0, counter=counter).astype(np.uint64)
        words = words.reshape(draws, first * 16)
        for i in range(draws):
            st = copy.copy(proto)  # the key, without re-deriving it per draw
            st.words, st.pos, st.blocks, st.chunk = words[i], 0, (i << 28) + first, 32
            groups = self.groups(design, b, st)
            if design == "srs":  # a single mean over cells of any condition
                has = np.zeros(self.valid.shape[0], dtype=bool)
                for k, t, stm in groups:
                    has |= self.valid[:, k, t, stm[0]]
                lost = (~has).astype(np.int64)
                n_groups = 1
            else:
                lost = sum((~self.valid[:, k, t, stm].any(axis=1)).astype(np.int64) for k, t, stm in groups)
                n_groups = len(groups)
            scored = lost < n_groups
            partial = scored & (lost > 0)
            out[:, 0] += partial
            out[:, 1] += np.where(partial, lost, 0)
            out[:, 2] += ~scored
        return out


def exclusions_section(data: Path, seed: int):
    """Exclusion counts on the Rust draws (module docs), keyed budget -> policy -> design -> model."""
    check_rust_stream()
    models, conditions, templates, statements = bundle_order()
    raw_models, groups, labels = load(data)
    topics = sorted({t for t, _ in statements})
    s_order = [topics.index(t) * 24 + groups.index(g) for t, g in statements]
    m_order = [raw_models.index(m) for m in models]
    c_order = [CONDITIONS.index(c) for c in conditions]
    valid = []
    for policy in POLICIES:
        z = unit_values(labels, policy)  # (M raw, C raw, T raw, S raw)
        z = z[m_order][:, c_order][:, :, templates][:, :, :, s_order]
        valid.append(~np.isnan(z))
    valid = np.concatenate(valid, axis=0)  # (P*M, K, T, S)
    cats = sorted({CATEGORY[g] for _, g in statements}, key=lambda c: c.encode("utf-8"))
    members = [[s for s, (_, g) in enumerate(statements) if CATEGORY[g] == c] for c in cats]
    matrix = RustMatrix(valid, members)
    M = len(models)
    out = {}
    for b in EXCLUSION_BUDGETS:
        per_policy = {p: {} for p in POLICIES}
        for design, stream in RUST_STREAMS.items():
            t0 = time.time()
            main = matrix.count(design, b, seed, EXCLUSION_DRAWS, stream)
            rep = matrix.count(design, b, seed, EXCLUSION_DRAWS, stream + 1)
            for pi, policy in enumerate(POLICIES):
                per_policy[policy][design] = {
                    models[m]: {
                        "partial_drop_draws": int(main[pi * M + m, 0]),
                        "dropped_conditions": int(main[pi * M + m, 1]),
                        "excluded_draws": int(main[pi * M + m, 2]),
                        "partial_drop_repeat_draws": int(rep[pi * M + m, 0]),
                        "dropped_repeat_conditions": int(rep[pi * M + m, 1]),
                        "excluded_repeat_draws": int(rep[pi * M + m, 2]),
                    }
                    for m in range(M)
                }
            total = main[:, 0].reshape(len(POLICIES), M).sum(axis=1).tolist()
            print(f"  exclusions B={b} {design:13s} partial-drop model-draws per policy {total} "
                  f"({time.time() - t0:.1f} s)")
        out[str(b)] = per_policy
    return {
        "draws": EXCLUSION_DRAWS,
        "seed": seed,
        "budgets": list(EXCLUSION_BUDGETS),
        "rust_streams": RUST_STREAMS,
        "bundle_order_from": str(DEFAULT_BUNDLE.relative_to(REPO)),
        "counts": out,
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
        "exclusions": exclusions_section(data, seed),
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
        keys = ("settings", "source_sha256", "categories", "models", "reference", "designs", "exclusions")
        return refcheck.report(committed, json.loads(json.dumps(doc)), str(args.out), COMMAND,
                               rel_tol=FLOAT_TOL, abs_tol=FLOAT_TOL, keys=keys)
    args.out.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
