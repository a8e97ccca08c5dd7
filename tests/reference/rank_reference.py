#!/usr/bin/env python3
"""Reference values for `atlas_core::rank` and `atlas_core::resample`, from scipy/numpy and an
independent pure-Python implementation of the documented draw algorithms.

Writes tests/reference/expected_rank.json, read by crates/atlas-core/tests/rank_reference.rs and
crates/atlas-core/tests/resample_reference.rs. Sections:

* ``kendall_tau_b``: ``scipy.stats.kendalltau(x, y, variant="b").statistic`` on vectors with and without
  ties (null where scipy gives nan: a constant vector, fewer than 2 items). The three ``seed_8_models_*``
  cases are 8-model score vectors CONSTRUCTED here (the seed publishes no per-template scores) so that,
  against the pooled ranking, they reproduce the summary values seed 000 Sec. 5.1 / C.1 reports: tau_b
  0.982 (one tie), 0.929 (one adjacent swap, 3.6% inversions) and 0.714 (14.3% inversions, maximum
  displacement 2). Their ``inversions`` and ``max_displacement`` are computed here from signs of pair
  differences and ``scipy.stats.rankdata``.
* ``average_ranks``: ``scipy.stats.rankdata(method="average")`` of the present scores (null = missing,
  no rank).
* ``percentile``: ``numpy.percentile(v, q)`` (default method "linear") for q in
  {0, 2.5, 25, 50, 97.5, 100} (and a few more), on vectors of length 1, 2, odd and even lengths.
* ``draw_stream``: the draws of ``DrawStream`` for seed 20260722 recomputed in pure Python from the
  algorithm specifications, not from the Rust code: ChaCha8 (Bernstein 2008; the block function is
  checked below against the ChaCha20 test vector of RFC 8439 Sec. 2.3.2), keyed as rand_core's
  ``SeedableRng::seed_from_u64`` (PCG32 expansion of the u64 into the 32-byte key), 64-bit block counter
  in state words 12-13 and stream id in words 14-15, output read as consecutive little-endian u32
  words; Lemire's multiply-and-reject for ``index(n)``; the front-to-back partial Fisher-Yates for
  ``sample_without_replacement``; and the unit bootstrap of the mean (sequential sum in draw order / n)
  with ``numpy.percentile`` of the replicate means at 2.5 and 97.5.

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/reference/rank_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/rank_reference.py --check  # exit 1 on a diff

Requires numpy and scipy (versions pinned in tests/requirements.txt, recorded in the JSON).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
import warnings
from itertools import combinations
from pathlib import Path

import numpy as np
import scipy
from scipy.stats import kendalltau, rankdata

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO / "tests/reference/expected_rank.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/rank_reference.py"
MASK32 = 0xFFFFFFFF
MASK64 = 0xFFFFFFFFFFFFFFFF


# --------------------------------------------------------------------------- rank statistics


def tau_b(x, y):
    if len(x) == 0:
        return None  # scipy returns nan for empty input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns "too small" for length 1; nan is the answer
        t = float(kendalltau(x, y, variant="b").statistic)
    return None if math.isnan(t) else t


def inversions(a, b):
    """Unordered pairs ordered strictly oppositely; a pair tied in either vector is not inverted."""
    inv = 0
    pairs = 0
    for i, j in combinations(range(len(a)), 2):
        pairs += 1
        if np.sign(a[i] - a[j]) * np.sign(b[i] - b[j]) < 0:
            inv += 1
    return inv, pairs


# Pooled (five-wording) ranking of seed 000 Sec. 5.1, lowest BER first. The scores are illustrative
# fractions; only their order matters for tau_b, inversions and displacement.
SEED_MODELS = [
    "GPT-OSS 20B", "Qwen Plus", "GPT-5.4", "Claude Sonnet 4.6",
    "Gemini 3 Flash", "DeepSeek V3", "LLaMA-3 70B", "Doubao Seed 2 Lite",
]
SEED_POOLED = [0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45]


def scores_from_ranks(ranks):
    """Scores in model order whose ranking is `ranks` (rank r -> 0.05 + 0.05 r; equal ranks tie)."""
    return [round(0.05 + 0.05 * r, 2) for r in ranks]


TAU_CASES = [
    ("no ties, identical order", [1, 2, 3, 4, 5], [1, 2, 3, 4, 5]),
    ("no ties, reversed order (negative correlation)", [1, 2, 3, 4, 5], [5, 4, 3, 2, 1]),
    ("no ties, mixed order", [0.31, 0.12, 0.77, 0.45, 0.05, 0.66, 0.29, 0.9, 0.52, 0.18],
     [0.2, 0.1, 0.9, 0.3, 0.15, 0.5, 0.4, 0.8, 0.7, 0.05]),
    ("negative correlation with ties", [1, 2, 3, 4, 5, 6], [6, 6, 4, 3, 3, 1]),
    ("ties in x only", [1, 1, 2, 3, 3, 3, 4], [0.5, 0.1, 0.2, 0.9, 0.4, 0.7, 0.8]),
    ("ties in both, with joint ties (scipy docstring example)", [12, 2, 1, 12, 2], [1, 4, 7, 1, 0]),
    ("ties in both, rates", [0.25, 0.5, 0.25, 0.75, 0.5, 1.0, 0.0, 0.5],
     [0.3, 0.3, 0.1, 0.6, 0.6, 0.9, 0.1, 0.2]),
    ("length 2, concordant", [0.1, 0.2], [3.0, 4.0]),
    ("length 2, discordant", [0.1, 0.2], [4.0, 3.0]),
    ("length 2, tied in x (nan)", [0.1, 0.1], [3.0, 4.0]),
    ("all tied in x (nan)", [0.5, 0.5, 0.5, 0.5], [1, 2, 3, 4]),
    ("all tied in y (nan)", [1, 2, 3, 4], [0, 0, 0, 0]),
    ("both all tied (nan)", [2, 2, 2], [7, 7, 7]),
    ("length 1 (nan)", [0.3], [0.4]),
    ("empty (nan)", [], []),
    ("negative values and large magnitudes", [-1e6, -2.5, 0.0, 3.25, 1e9, -7.0],
     [2.0, -1.0, 0.0, 0.0, 5.0, -3.0]),
    ("seed_8_models_one_tie", SEED_POOLED, scores_from_ranks([1, 2, 3, 4, 5, 6, 7, 7])),
    ("seed_8_models_one_swap", SEED_POOLED, scores_from_ranks([1, 2, 4, 3, 5, 6, 7, 8])),
    ("seed_8_models_template_5", SEED_POOLED, scores_from_ranks([1, 3, 4, 2, 6, 7, 5, 8])),
]


def random_tau_cases():
    rng = np.random.default_rng(20260722)
    out = []
    for n, decimals in [(30, 1), (50, 2), (40, 6)]:
        x = [round(float(v), decimals) for v in rng.random(n)]
        y = [round(float(v), decimals) for v in (np.array(x) * 0.5 + rng.random(n) * 0.5)]
        out.append((f"random n={n}, rounded to {decimals} decimals", x, y))
    return out


def tau_section():
    cases = []
    for name, x, y in TAU_CASES + random_tau_cases():
        case = {"name": name, "x": [float(v) for v in x], "y": [float(v) for v in y], "tau_b": tau_b(x, y)}
        if name.startswith("seed_8_models"):
            inv, pairs = inversions(x, y)
            ra, rb = rankdata(x, method="average"), rankdata(y, method="average")
            case.update(
                models=SEED_MODELS,
                inverted=inv,
                pairs=pairs,
                max_displacement=float(np.max(np.abs(ra - rb))),
            )
        cases.append(case)
    return cases


RANK_CASES = [
    ("distinct", [0.3, 0.1, 0.2, 0.5]),
    ("two ties", [0.5, 0.2, 0.5, 0.2]),
    ("three-way tie and a pair", [0.4, 0.4, 0.1, 0.4, 0.9, 0.9]),
    ("with missing scores", [0.3, None, 0.1, 0.3, None, 0.0]),
    ("all tied", [0.25, 0.25, 0.25]),
    ("single", [0.7]),
    ("all missing", [None, None]),
]


def rank_section():
    out = []
    for name, scores in RANK_CASES:
        present = [s for s in scores if s is not None]
        ranks = iter(rankdata(present, method="average").tolist() if present else [])
        out.append({
            "name": name,
            "scores": scores,
            "ranks": [None if s is None else float(next(ranks)) for s in scores],
        })
    return out


PERCENTILE_QS = [0.0, 2.5, 25.0, 50.0, 97.5, 100.0, 12.345, 66.6, 99.9]


def percentile_section():
    rng = np.random.default_rng(7)
    vectors = [
        ("length 1", [0.3]),
        ("length 2", [1.0, -1.0]),
        ("odd length 5, unsorted, duplicate", [3.0, 1.0, 4.0, 1.0, 5.0]),
        ("even length 6", [0.1, 0.7, 0.2, 0.9, 0.4, 0.6]),
        ("odd length 7, negative and positive", [-2.5, 10.0, 0.0, 3.3, -7.1, 8.8, 1.0]),
        ("length 10, all equal", [0.42] * 10),
        ("length 20 random", [float(v) for v in rng.normal(size=20)]),
        ("length 1001 random", [float(v) for v in rng.random(1001)]),
        ("length 2000 random pp differences", [float(v) for v in rng.normal(4.25, 1.7, size=2000)]),
    ]
    out = []
    for name, v in vectors:
        out.append({
            "name": name,
            "values": v,
            "q": PERCENTILE_QS,
            "percentile": [float(np.percentile(np.array(v), q)) for q in PERCENTILE_QS],
        })
    return out


# --------------------------------------------------------------------------- portable draw stream


def rotl(v, c):
    return ((v << c) & MASK32) | (v >> (32 - c))


def chacha_block(state, double_rounds):
    """One ChaCha block (Bernstein 2008): `double_rounds` column+diagonal rounds, then add the input."""
    x = list(state)

    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & MASK32
        x[d] = rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & MASK32
        x[b] = rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & MASK32
        x[d] = rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & MASK32
        x[b] = rotl(x[b] ^ x[c], 7)

    for _ in range(double_rounds):
        qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15)
        qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14)
    return [(a + b) & MASK32 for a, b in zip(x, state)]


CONSTANTS = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]


def check_chacha_block():
    """RFC 8439 Sec. 2.3.2 test vector (ChaCha20, 32-bit counter 1, 96-bit nonce)."""
    key = bytes(range(32))
    nonce = bytes.fromhex("000000090000004a00000000")
    state = CONSTANTS + [int.from_bytes(key[i:i + 4], "little") for i in range(0, 32, 4)]
    state += [1] + [int.from_bytes(nonce[i:i + 4], "little") for i in range(0, 12, 4)]
    out = chacha_block(state, 10)
    # RFC 8439 Sec. 2.3.2 "Serialized Block".
    expected = bytes.fromhex(
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
        "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
    )
    out = b"".join(w.to_bytes(4, "little") for w in out)
    if out != expected:
        raise SystemExit("ChaCha block function does not match RFC 8439 Sec. 2.3.2")


def pcg32_seed_bytes(seed):
    """rand_core 0.9 `SeedableRng::seed_from_u64`: 8 PCG32 outputs, little-endian, as the 32-byte key."""
    mul, inc = 6364136223846793005, 11634580027462260723
    state = seed & MASK64
    out = b""
    for _ in range(8):
        state = (state * mul + inc) & MASK64
        xorshifted = (((state >> 18) ^ state) >> 27) & MASK32
        rot = state >> 59
        out += ((xorshifted >> rot) | (xorshifted << ((32 - rot) % 32)) & MASK32).to_bytes(4, "little")
    return out


class Stream:
    """ChaCha8 keystream words for key = pcg32_seed_bytes(seed), 64-bit counter from 0, 64-bit stream."""

    def __init__(self, seed, stream=0):
        key = pcg32_seed_bytes(seed)
        self.key = [int.from_bytes(key[i:i + 4], "little") for i in range(0, 32, 4)]
        self.stream = stream
        self.counter = 0
        self.buf = []

    def next_u32(self):
        if not self.buf:
            state = CONSTANTS + self.key + [
                self.counter & MASK32, self.counter >> 32, self.stream & MASK32, self.stream >> 32,
            ]
            self.buf = chacha_block(state, 4)  # ChaCha8 = 4 double rounds
            self.counter += 1
        return self.buf.pop(0)

    def index(self, n):
        """Lemire's multiply-and-reject, uniform in 0..n."""
        m = self.next_u32() * n
        if (m & MASK32) < n:
            threshold = ((1 << 32) - n) % n
            while (m & MASK32) < threshold:
                m = self.next_u32() * n
        return m >> 32

    def sample_without_replacement(self, n, k):
        """First k positions of a front-to-back Fisher-Yates shuffle of 0..n, in draw order."""
        slots = list(range(n))
        out = []
        for i in range(k):
            j = i + self.index(n - i)
            slots[i], slots[j] = slots[j], slots[i]
            out.append(slots[i])
        return out


BOOTSTRAP_VALUES = [0.125, -3.5, 2.0, 7.25, 0.1, 0.2, 0.3, 1e-3, 42.0, -0.75, 5.5, 3.0]
SEED = 20260722


def draw_stream_section():
    check_chacha_block()
    s = Stream(SEED)
    first_words = [s.next_u32() for _ in range(8)]
    s = Stream(SEED)
    index_1000 = [s.index(1000) for _ in range(10)]
    s = Stream(SEED)
    sample = s.sample_without_replacement(1000, 50)
    stream2 = Stream(SEED, 2)
    stream2_words = [stream2.next_u32() for _ in range(4)]

    s = Stream(SEED)
    n = len(BOOTSTRAP_VALUES)
    reps = 2000
    means = []
    for _ in range(reps):
        total = 0.0
        for _ in range(n):
            total += BOOTSTRAP_VALUES[s.index(n)]  # sequential sum in draw order
        means.append(total / n)
    lo, hi = np.percentile(np.array(means), [2.5, 97.5])
    return {
        "seed": SEED,
        "next_u32_first8": first_words,
        "index_1000_first10": index_1000,
        "sample_without_replacement_1000_50": sample,
        "stream_2_next_u32_first4": stream2_words,
        "bootstrap_mean": {
            "values": BOOTSTRAP_VALUES,
            "reps": reps,
            "first_means": means[:5],
            "last_mean": means[-1],
            "percentile_interval_95": [float(lo), float(hi)],
        },
    }


def compute():
    return {
        "command": COMMAND,
        "generator": "tests/reference/rank_reference.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "kendall_tau_b": tau_section(),
        "average_ranks": rank_section(),
        "percentile": percentile_section(),
        "draw_stream": draw_stream_section(),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing")
    args = parser.parse_args()
    result = compute()
    text = json.dumps(result, indent=1) + "\n"
    if args.check:
        return refcheck.report(json.loads(args.out.read_text()), json.loads(text), str(args.out), COMMAND)
    args.out.write_text(text)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
