#!/usr/bin/env python3
"""Independent numpy/scipy reference for `atlas_core::clinical::metrics` (seed 001 Sec. 3.3-3.5, Eq. 1,
Sec. 4.2; issue 7 "EDD against a numpy computation on fixed vectors; Spearman against
scipy.stats.spearmanr").

Writes tests/reference/expected_clinical.json, read by crates/atlas-core/tests/clinical_reference.rs.

Two sections:

* spearman: fixed (x, y) cases (ties, no ties, a seed-like 900-attempt difficulty x validity sample,
  n = 2, constant y) with rho = scipy.stats.spearmanr(x, y).statistic (null where scipy gives nan).
* bundles: two SYNTHETIC clinical bundles generated here with numpy default_rng(SEED) and stored whole
  in the JSON, so that the Rust test reads exactly these bytes:
  - "f32_with_baseline": 2 models x 4 questions (difficulty EASY, MEDIUM, HARD, none) x 7 variants
    (baseline + male/female x White/Black/Hispanic) x 2 runs, 16-dimensional embeddings stored as f32le
    for most cells (record m1/q01/1 has all 7, m1/q02/1 five without the baseline, m2/q03/2 two,
    m2/q04/1 one - no EDD), 20 counterfactual attempts with seeded outcomes;
  - "f16_no_baseline": the same design with `baseline: null`, the embeddings stored as f16le.
  Embedding bytes are written with numpy (`astype('<f4'|'<f2').tobytes()`) and base64 (Python's
  `base64.b64encode`), independently of the Rust encoder.

Definitions re-implemented here (docs/clinical.md, "Metrics"):

* EDD (Eq. 1) per model x question x run record: the rows of the record's cells that have an embedding
  (the values as stored, converted to float64), each divided by its L2 norm; EDD = 1 - mean of the
  upper triangle (i < j) of the Gram matrix; records with fewer than two rows have no EDD; n_variants =
  rows. Mean EDD per model = the mean over its records.
* CFV per model = valid attempts / attempts.
* Spearman of difficulty (EASY=1, MEDIUM=2, HARD=3) and validity (1 valid, else 0) over the attempts
  whose question has a difficulty: scipy.stats.spearmanr; n = those attempts.

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/reference/clinical_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/clinical_reference.py --check  # compares, exit 1 on diff
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import platform
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/reference/expected_clinical.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/clinical_reference.py"
SEED = 20260801
FLOAT_TOL = 1e-12
DIM = 16
MODELS = ["m1", "m2"]
QUESTIONS = [("q01", "EASY", "A"), ("q02", "MEDIUM", "B"), ("q03", "HARD", "C"), ("q04", None, "D")]
VARIANTS = ["baseline", "male-white", "female-white", "male-black", "female-black", "male-hispanic", "female-hispanic"]
RUNS = ["1", "2"]
OUTCOMES = ["valid", "same_direction", "too_dramatic", "circular", "format_failure"]
LETTERS = "ABCD"
CODE_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def rho_or_none(x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = spearmanr(x, y).statistic
    return None if math.isnan(r) else float(r)


def spearman_cases(rng):
    cases = [
        ("hand fixture (tests/fixtures/clinical-bundle.json)", [1, 3, 1, 3, 1], [1, 0, 1, 1, 0]),
        ("monotone decreasing with ties", [1, 1, 2, 2, 3], [5, 5, 4, 4, 1]),
        ("two pairs", [1, 2], [3, 1]),
        ("constant y (undefined)", [1, 2, 3, 1], [1, 1, 1, 1]),
    ]
    x = rng.normal(size=50).round(6).tolist()
    y = (np.array(x) * 0.3 + rng.normal(size=50)).round(6).tolist()
    cases.append(("50 continuous values, no ties", x, y))
    # Seed-like: 6 models x (102 EASY, 25 MEDIUM, 23 HARD) attempts, validity Bernoulli(0.25).
    diff_codes = np.tile(np.repeat([1, 2, 3], [102, 25, 23]), 6)
    rng.shuffle(diff_codes)
    valid = (rng.random(900) < 0.25 + 0.03 * (diff_codes - 1)).astype(int)
    cases.append(("900 attempts, difficulty x validity", diff_codes.tolist(), valid.tolist()))
    return [{"name": n, "x": [float(v) for v in x], "y": [float(v) for v in y], "rho": rho_or_none(x, y)}
            for n, x, y in cases]


def make_bundle(rng, name, dtype, baseline):
    n_cells = len(MODELS) * len(QUESTIONS) * len(VARIANTS) * len(RUNS)

    def cell(m, q, v, r):
        return ((m * len(QUESTIONS) + q) * len(VARIANTS) + v) * len(RUNS) + r

    # Answers: seeded letters, evidence = answer change against the same run's baseline answer.
    answers = rng.integers(0, 4, size=n_cells)
    values, codes = [], []
    for m in range(len(MODELS)):
        for q in range(len(QUESTIONS)):
            for v in range(len(VARIANTS)):
                for r in range(len(RUNS)):
                    a = LETTERS[answers[cell(m, q, v, r)]]
                    ev = int(a != LETTERS[answers[cell(m, q, 0, r)]]) if baseline else None
                    val = {"raw": a, "evidence": ev, "obtained": "regex"}
                    if val not in values:
                        values.append(val)
                    codes.append(CODE_ALPHABET[values.index(val)])
    # Embeddings: a record direction plus per-variant noise; which cells have one.
    rows = {}
    for m in range(len(MODELS)):
        for q in range(len(QUESTIONS)):
            for r in range(len(RUNS)):
                centre = rng.normal(size=DIM)
                present = rng.random(len(VARIANTS)) < 0.85
                key = (MODELS[m], QUESTIONS[q][0], RUNS[r])
                if key == ("m1", "q01", "1"):
                    present[:] = True
                elif key == ("m1", "q02", "1"):
                    present[:] = [False, True, True, True, False, True, True]
                elif key == ("m2", "q03", "2"):
                    present[:] = [True, False, False, True, False, False, False]
                elif key == ("m2", "q04", "1"):
                    present[:] = [False, False, True, False, False, False, False]
                for v in range(len(VARIANTS)):
                    if present[v]:
                        rows[cell(m, q, v, r)] = centre + rng.normal(scale=0.6, size=DIM)
    cells = sorted(rows)
    matrix = np.array([rows[c] for c in cells])
    stored = matrix.astype("<f4" if dtype == "f32le" else "<f2")
    data = base64.b64encode(stored.tobytes()).decode("ascii")
    attempts = []
    for k in range(20):
        attempts.append({
            "model": MODELS[k % 2], "statement": QUESTIONS[int(rng.integers(0, 4))][0], "repeat": None,
            "original": "A", "target": "B", "change": None, "modified_question": None, "explanation": None,
            "reanswer": None, "plausibility": None,
            "outcome": OUTCOMES[int(rng.choice(5, p=[0.35, 0.3, 0.15, 0.15, 0.05]))], "note": None,
        })
    bundle = {
        "format": "audit-atlas-bundle", "version": 1,
        "metadata": {
            "id": f"clinical-reference-{name}",
            "title": f"SYNTHETIC clinical reference bundle ({name})",
            "description": "SYNTHETIC: seeded by tests/reference/clinical_reference.py for the EDD/CFV/Spearman reference; not model output.",
            "source": {"citation": "Generated by tests/reference/clinical_reference.py"},
            "license": {"id": "CC0-1.0", "attribution": "none required"},
            "content_warning": None,
            "produced_by": {"tool": "tests/reference/clinical_reference.py", "command": COMMAND},
        },
        "facets": [
            {"id": "model", "levels": [{"id": m} for m in MODELS]},
            {"id": "statement", "levels": [
                {"id": q, "text": f"(synthetic question {q})", "answer": gold, "difficulty": d}
                for q, d, gold in QUESTIONS]},
            {"id": "condition", "levels": [
                {"id": v, "has_selection": True, "in_reference": v != "baseline"} for v in VARIANTS]},
            {"id": "repeat", "levels": [{"id": r} for r in RUNS]},
        ],
        "responses": {
            "axes": ["model", "statement", "condition", "repeat"],
            "selection": {"values": values, "codes": "".join(codes)},
        },
        "clinical": {
            "protocol": "seed-001",
            "baseline": "baseline" if baseline else None,
            "embeddings": {"model": "synthetic", "dim": DIM, "normalized": False, "dtype": dtype,
                           "cells": cells, "data": data},
            "counterfactuals": attempts,
        },
    }
    return bundle


def analyse(bundle):
    """EDD, mean EDD, CFV and the difficulty x validity Spearman, from the bundle JSON alone."""
    emb = bundle["clinical"]["embeddings"]
    raw = base64.b64decode(emb["data"])
    flat = np.frombuffer(raw, dtype="<f4" if emb["dtype"] == "f32le" else "<f2").astype(np.float64)
    matrix = flat.reshape(len(emb["cells"]), emb["dim"])
    n_v, n_r = len(VARIANTS), len(RUNS)
    records = {}
    for k, c in enumerate(emb["cells"]):
        r = c % n_r
        mq = c // (n_v * n_r)
        m, q = divmod(mq, len(QUESTIONS))
        records.setdefault((m, q, r), []).append(matrix[k])
    edd = []
    for (m, q, r) in sorted(records):
        e = np.array(records[(m, q, r)])
        if len(e) < 2:
            continue
        e = e / np.linalg.norm(e, axis=1, keepdims=True)
        gram = e @ e.T
        iu = np.triu_indices(len(e), k=1)
        edd.append({"model": MODELS[m], "statement": QUESTIONS[q][0], "repeat": RUNS[r],
                    "n_variants": len(e), "edd": float(1.0 - gram[iu].mean())})
    attempts = bundle["clinical"]["counterfactuals"]
    difficulty = {q: d for q, d, _ in QUESTIONS}
    code = {"EASY": 1, "MEDIUM": 2, "HARD": 3}
    cfv, profile = [], []
    for m in MODELS:
        mine = [a for a in attempts if a["model"] == m]
        valid = sum(a["outcome"] == "valid" for a in mine)
        cfv.append({"model": m, "valid": valid, "attempts": len(mine), "cfv": valid / len(mine)})
        eds = [r["edd"] for r in edd if r["model"] == m]
        profile.append({"model": m, "mean_edd": float(np.mean(eds)), "cfv": valid / len(mine)})
    pairs = [(code[difficulty[a["statement"]]], int(a["outcome"] == "valid"))
             for a in attempts if difficulty[a["statement"]] is not None]
    x = [p[0] for p in pairs]
    y = [p[1] for p in pairs]
    return {"edd": edd, "cfv": cfv, "profile": profile,
            "spearman_difficulty_validity": {"rho": rho_or_none(x, y), "n": len(pairs)}}


def build_document():
    rng = np.random.default_rng(SEED)
    spearman = spearman_cases(rng)
    bundles = []
    for name, dtype, baseline in [("f32_with_baseline", "f32le", True), ("f16_no_baseline", "f16le", False)]:
        b = make_bundle(rng, name, dtype, baseline)
        bundles.append({"name": name, "bundle": b, "expected": analyse(b)})
    return {
        "command": COMMAND,
        "generator": "tests/reference/clinical_reference.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "seed": SEED,
        "definitions": __doc__.split("Definitions re-implemented here", 1)[1].split("Usage", 1)[0].strip(),
        "spearman": spearman,
        "bundles": bundles,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="recompute and compare with --out; exit 1 on a diff")
    args = ap.parse_args()
    doc = build_document()
    for case in doc["spearman"]:
        print(f"[spearman] {case['name']}: n={len(case['x'])} rho={case['rho']}")
    for b in doc["bundles"]:
        e = b["expected"]
        print(f"[{b['name']}] {len(e['edd'])} EDD records (n_variants "
              f"{sorted({r['n_variants'] for r in e['edd']})}); mean EDD "
              + ", ".join(f"{p['model']}={p['mean_edd']:.6f}" for p in e["profile"])
              + f"; CFV " + ", ".join(f"{c['model']}={c['valid']}/{c['attempts']}" for c in e["cfv"])
              + f"; spearman {e['spearman_difficulty_validity']}")
    if args.check:
        committed = json.loads(args.out.read_text(encoding="utf-8"))
        return refcheck.report(committed, json.loads(json.dumps(doc)), str(args.out), COMMAND,
                               abs_tol=FLOAT_TOL, keys=("spearman", "bundles"))
    args.out.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
