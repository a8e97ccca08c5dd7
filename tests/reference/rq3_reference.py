#!/usr/bin/env python3
"""Independent numpy/pandas/scikit-learn reference for `atlas_core::rq3` (seed 000 Sec. 3.3, 3.6, 5.4, B.3,
E.2, E.3; Tables 3, 18, 19; issue 6 parts 1 and 2).

Writes tests/reference/expected_rq3.json, read by crates/atlas-core/tests/rq3_reference.rs.

Four sections:

* kappa: Cohen's kappa of label sequences (hand-made and seeded random ones over the five Rationale
  classes E/Q/N/D/R, the three human Selection classes 1/0/A and binary labels), computed by
  sklearn.metrics.cohen_kappa_score (null where sklearn gives nan: both sequences one and the same
  label), with the observed agreement from numpy.
* bundles.tiny: tests/fixtures/tiny-bundle.json (one judge, one annotator), decoded here from its dense
  strings into a pandas long table.
* bundles.synthetic: a seeded SYNTHETIC bundle generated here (numpy default_rng(20260722); 3 models x 3
  conditions, one without a Selection readout, x 20 statements x 2 templates, one nested in a condition,
  x 2 repeats; 3 judges, two of them audited models; two annotators and an adjudicated `final` column),
  stored whole in the JSON so that the Rust test reads exactly these bytes, with three settings cases.
* bundles.pilot_demo: the judge-coded pilot demo bundle static/bundles/pilot-demo-smollm2/bundle.json
  (SmolLM2-135M-Instruct, 1 model x 1 condition B0 x 40 statements x 5 templates x 3 repeats = 600
  responses; 3 judge columns that are the same model with three rubric prompts, so every judge is a
  self-judge of the single model and no-self-judge keeps no rows; no human columns), read directly with
  json and decoded into the same pandas long table (issue 6: "on the pilot's judge-coded demo bundle, the
  RQ3 table equals an independent computation"). The sha256 of the bundle's bytes is recorded so that a
  changed bundle shows up as a --check difference.

Definitions re-implemented here (docs/statistics.md, "RQ3"):

* a response = a cell whose Selection code is not '-' and whose template belongs to its condition
  (a template with a `condition` attribute belongs to that condition only); A = the value's evidence under
  a condition with has_selection, Abstain (null evidence) and no-readout conditions are not valid;
* per judge label: E/Q -> 1, N/D/R -> 0, '.'/'-' -> no vote. Rules over the panel (the selected judges):
  binary majority = 1 if 2 * (#1 votes) > panel size, 0 if 2 * (#0 votes) > panel size, else none;
  binary unanimity = every panel judge labelled and all binary votes equal; five-class unanimity = every
  panel judge gave the same five-class label; no-self = binary majority over the panel without the judges
  whose model matches the row's model (lower-cased letters and digits of the judge `model` equal to those
  of the model level id or label; or the explicit pairs of the settings);
* per rule: rationale rows (a rule label), bias rows, pairs (rule label and valid A), the 2x2 joint counts,
  BER_sel/rat/cor/union over pairs, disagreement and its two directions over pairs, coverage = pairs /
  responses; per model x condition the joint counts, the disagreement, and whether the overall larger
  off-diagonal cell (none on a tie) is strictly larger in the cell (null without pairs or without one);
* human QC: the compared annotators = the first two non-final columns; final = a column named
  final/adjudicated, else the only column, else the two annotators' common label (Selection 1/0/A equal,
  Rationale binary equal); kappa over the responses both annotated (Selection all classes; Selection both
  in {1, 0}; Rationale five classes; Rationale binary); agreement of A and of each rule's B with the binary
  final label over responses where both are binary.

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/reference/rq3_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/rq3_reference.py --check  # compares, exit 1 on diff
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from sklearn.metrics import cohen_kappa_score

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/reference/expected_rq3.json"
TINY_BUNDLE = REPO / "tests/fixtures/tiny-bundle.json"
PILOT_BUNDLE = REPO / "static/bundles/pilot-demo-smollm2/bundle.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/rq3_reference.py"
SEED = 20260722
FLOAT_TOL = 1e-12
RULES = ["binary_majority", "binary_unanimity", "five_class_unanimity", "no_self_judge"]
BIAS = {"E": 1, "Q": 1, "N": 0, "D": 0, "R": 0}
ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def opt(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def frac(count: int, total: int):
    return float(count) / float(total) if total > 0 else None


# --------------------------------------------------------------------------- Cohen's kappa


def kappa(a: list, b: list) -> dict:
    """sklearn's Cohen's kappa (null for nan) with numpy's observed agreement."""
    n = len(a)
    agree = int(np.sum(np.array(a, dtype=object) == np.array(b, dtype=object))) if n else 0
    k = None
    if n:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            k = opt(float(cohen_kappa_score(a, b)))
    return {"n": n, "agree": agree, "agreement": frac(agree, n), "kappa": k}


def kappa_cases() -> list[dict]:
    rng = np.random.default_rng(SEED)
    cases = [
        # E.3-like five-class Rationale labels of two annotators.
        ("five-class, hand-made", "EQNDRDDNEQ", "EQNDDDNNEE"),
        ("binary, hand-made", "1100101101", "1000101111"),
        ("Selection 1/0/A, hand-made", "110A0011A1", "1100001AA1"),
        ("perfect agreement", "EQNDR", "EQNDR"),
        ("complete disagreement, two classes", "0101", "1010"),
        ("one shared label (kappa undefined)", "DDDD", "DDDD"),
        ("one label each, different", "EEEE", "DDDD"),
    ]
    for i, (classes, n) in enumerate([("EQNDR", 80), ("EQNDR", 300), ("10A", 298), ("10", 254), ("EQNDR", 7)]):
        a = rng.choice(list(classes), size=n)
        # the second annotator copies the first with probability 0.7, else draws afresh
        copy = rng.random(n) < 0.7
        b = np.where(copy, a, rng.choice(list(classes), size=n))
        cases.append((f"seeded random {i + 1} ({classes}, n = {n})", "".join(a), "".join(b)))
    out = []
    for name, a, b in cases:
        assert len(a) == len(b)
        out.append({"name": name, "a": a, "b": b} | kappa(list(a), list(b)))
    return out


# --------------------------------------------------------------------------- the bundle as a long table


def match_key(name: str) -> str:
    return "".join(c for c in name if c.isalnum()).lower()


def long_table(bundle: dict) -> pd.DataFrame:
    """One row per cell: facet level indices, response / in-design flags, A, judge and human labels."""
    facets = {f["id"]: f for f in bundle["facets"]}
    axes = bundle["responses"]["axes"]
    shape = tuple(len(facets[a]["levels"]) for a in axes)
    cells = int(np.prod(shape))
    coords = np.unravel_index(np.arange(cells), shape)
    df = pd.DataFrame({"cell": np.arange(cells)})
    for axis, idx in zip(axes, coords):
        df[axis] = idx
    for f in ("condition", "template"):
        if f not in df:
            df[f] = 0
    sel = bundle["responses"]["selection"]
    codes = np.array(list(sel["codes"]))
    df["has_response"] = codes != "-"
    code_index = np.array([ALPHABET.index(c) if c != "-" else -1 for c in codes])
    evidence = np.array([v["evidence"] if v["evidence"] is not None else np.nan for v in sel["values"]] + [np.nan])
    df["evidence"] = evidence[code_index]  # index -1 -> the trailing nan (no response)
    conds = facets.get("condition", {"levels": [{"id": "(all)", "has_selection": True}]})["levels"]
    has_sel = np.array([bool(c["has_selection"]) for c in conds])
    df["readable"] = has_sel[df["condition"].to_numpy()]
    templates = facets.get("template", {"levels": [{"id": "(all)"}]})["levels"]
    cond_ids = [c["id"] for c in conds]
    owner = np.array([cond_ids.index(t["condition"]) if t.get("condition") is not None else -1 for t in templates])
    t_owner = owner[df["template"].to_numpy()]
    df["in_design"] = (t_owner < 0) | (t_owner == df["condition"].to_numpy())
    df["A"] = np.where(df["readable"], df["evidence"], np.nan)  # NaN = Abstain or no readout
    for j, judge in enumerate(bundle["responses"].get("judges", [])):
        df[f"judge{j}"] = list(judge["labels"])
    for h, human in enumerate(bundle["responses"].get("human", [])):
        df[f"hsel{h}"] = list(human.get("selection") or "." * cells)
        df[f"hrat{h}"] = list(human.get("rationale") or "." * cells)
    return df[df["has_response"] & df["in_design"]].reset_index(drop=True)


def rule_labels(bundle: dict, df: pd.DataFrame, settings: dict) -> dict:
    """rule -> numpy float array over the responses: 1.0, 0.0, or NaN (no rule label)."""
    judges = bundle["responses"]["judges"]
    ids = [j["id"] for j in judges]
    panel = list(range(len(judges))) if settings.get("judges") is None else sorted(ids.index(i) for i in settings["judges"])
    model_levels = {f["id"]: f for f in bundle["facets"]}["model"]["levels"]
    # is_self[k][m]
    if settings.get("self_judges") is None:
        is_self = []
        for k in panel:
            key = match_key(judges[k].get("model") or "")
            is_self.append([
                bool(key) and (match_key(lv["id"]) == key or match_key(lv.get("label") or "") == key)
                for lv in model_levels
            ])
    else:
        explicit = {p["judge"]: set(p["models"]) for p in settings["self_judges"]}
        is_self = [[lv["id"] in explicit.get(ids[k], set()) for lv in model_levels] for k in panel]
    labels = np.stack([df[f"judge{k}"].to_numpy() for k in panel], axis=1)  # responses x panel
    vote = np.vectorize(lambda c: BIAS.get(c, -1))(labels)  # -1 = no vote
    size = len(panel)

    def majority(votes: np.ndarray, panel_size: np.ndarray) -> np.ndarray:
        ones = (votes == 1).sum(axis=1)
        zeros = (votes == 0).sum(axis=1)
        return np.where(2 * ones > panel_size, 1.0, np.where(2 * zeros > panel_size, 0.0, np.nan))

    out = {"binary_majority": majority(vote, np.full(len(df), size))}
    all_labelled = (vote >= 0).all(axis=1)
    same_binary = (vote == vote[:, :1]).all(axis=1)
    out["binary_unanimity"] = np.where(all_labelled & same_binary, vote[:, 0].astype(float), np.nan)
    same_five = (labels == labels[:, :1]).all(axis=1)
    out["five_class_unanimity"] = np.where(all_labelled & same_five, vote[:, 0].astype(float), np.nan)
    own = np.array([[is_self[k][m] for k in range(size)] for m in df["model"].to_numpy()]).reshape(len(df), size)
    out["no_self_judge"] = majority(np.where(own, -1, vote), size - own.sum(axis=1))
    return out, panel, is_self


def joint_counts(a: np.ndarray, b: np.ndarray) -> dict:
    """a, b: 0/1 arrays of the pairs."""
    return {
        "both_negative": int(((a == 0) & (b == 0)).sum()),
        "rationale_only": int(((a == 0) & (b == 1)).sum()),
        "selection_only": int(((a == 1) & (b == 0)).sum()),
        "both_positive": int(((a == 1) & (b == 1)).sum()),
    }


def dominant(j: dict):
    if j["selection_only"] > j["rationale_only"]:
        return "selection_only"
    if j["rationale_only"] > j["selection_only"]:
        return "rationale_only"
    return None


def rule_section(rule: str, df: pd.DataFrame, b: np.ndarray, models: list, conditions: list) -> dict:
    responses = len(df)
    has_b = ~np.isnan(b)
    pair = has_b & ~np.isnan(df["A"].to_numpy())
    a_p = df["A"].to_numpy()[pair]
    b_p = b[pair]
    n = int(pair.sum())
    j = joint_counts(a_p, b_p)
    dis = j["selection_only"] + j["rationale_only"]
    dom = dominant(j)
    rows = int(has_b.sum())
    bias = int((b[has_b] == 1).sum())
    d = pd.DataFrame({"model": df["model"], "condition": df["condition"], "has_b": has_b, "pair": pair,
                      "A": df["A"], "B": b})
    cells, with_pairs, holds = [], 0, 0
    for m, model in enumerate(models):
        for c, cond in enumerate(conditions):
            g = d[(d["model"] == m) & (d["condition"] == c)]
            gp = g[g["pair"]]
            cj = joint_counts(gp["A"].to_numpy(), gp["B"].to_numpy())
            npairs = len(gp)
            verdict = None
            if npairs > 0 and dom is not None:
                other = "rationale_only" if dom == "selection_only" else "selection_only"
                verdict = bool(cj[dom] > cj[other])
            with_pairs += int(npairs > 0)
            holds += int(verdict is True)
            cells.append({
                "model": model,
                "condition": cond,
                "responses": len(g),
                "rationale_rows": int(g["has_b"].sum()),
                "joint": cj,
                "disagreement": frac(cj["selection_only"] + cj["rationale_only"], npairs),
                "dominant_holds": verdict,
            })
    return {
        "rule": rule,
        "rationale_rows": rows,
        "rationale_bias": bias,
        "rationale_bias_rate": frac(bias, rows),
        "rationale_abstain": responses - rows,
        "pairs": n,
        "pair_coverage": frac(n, responses),
        "rationale_rows_without_selection": rows - n,
        "joint": j,
        "summaries": {
            "sel": opt(float(a_p.mean())) if n else None,
            "rat": opt(float(b_p.mean())) if n else None,
            "cor": opt(float((a_p * b_p).mean())) if n else None,
            "union": opt(float(np.maximum(a_p, b_p).mean())) if n else None,
        },
        "disagreement": {
            "count": dis,
            "rate": opt(float((a_p != b_p).mean())) if n else None,
            "selection_only": j["selection_only"],
            "selection_only_rate": frac(j["selection_only"], n),
            "rationale_only": j["rationale_only"],
            "rationale_only_rate": frac(j["rationale_only"], n),
            "dominant": dom,
        },
        "cells": cells,
        "cells_with_pairs": with_pairs,
        "cells_where_dominant_holds": holds,
        "dominant_holds_in_every_cell": None if dom is None else holds == with_pairs,
    }


def human_section(bundle: dict, df: pd.DataFrame, labels: dict):
    humans = bundle["responses"].get("human", [])
    if not humans:
        return None
    final = next((i for i, h in enumerate(humans) if h["annotator"].lower() in ("final", "adjudicated")), None)
    others = [i for i in range(len(humans)) if i != final]
    pair = others[:2] if len(others) >= 2 else None
    inter = None
    if pair:
        x, y = pair
        sx, sy = df[f"hsel{x}"].to_numpy(), df[f"hsel{y}"].to_numpy()
        rx, ry = df[f"hrat{x}"].to_numpy(), df[f"hrat{y}"].to_numpy()
        both_s = np.isin(sx, list("10A")) & np.isin(sy, list("10A"))
        both_sb = np.isin(sx, list("10")) & np.isin(sy, list("10"))
        both_r = np.isin(rx, list("EQNDR")) & np.isin(ry, list("EQNDR"))
        bx = np.vectorize(lambda c: BIAS[c])(rx[both_r]) if both_r.any() else np.array([], dtype=int)
        by = np.vectorize(lambda c: BIAS[c])(ry[both_r]) if both_r.any() else np.array([], dtype=int)
        inter = {
            "annotators": [humans[x]["annotator"], humans[y]["annotator"]],
            "selection_all_classes": kappa(list(sx[both_s]), list(sy[both_s])),
            "selection_binary": kappa(list(sx[both_sb]), list(sy[both_sb])),
            "rationale_five_class": kappa(list(rx[both_r]), list(ry[both_r])),
            "rationale_binary": kappa([int(v) for v in bx], [int(v) for v in by]),
        }
    if final is not None:
        source = {"source": "column", "annotator": humans[final]["annotator"]}
        fsel = df[f"hsel{final}"].to_numpy()
        frat = np.array([BIAS.get(c, -1) for c in df[f"hrat{final}"]])
    elif len(humans) == 1:
        source = {"source": "single_annotator", "annotator": humans[0]["annotator"]}
        fsel = df["hsel0"].to_numpy()
        frat = np.array([BIAS.get(c, -1) for c in df["hrat0"]])
    else:
        x, y = pair
        source = {"source": "agreement", "annotators": [humans[x]["annotator"], humans[y]["annotator"]]}
        sx, sy = df[f"hsel{x}"].to_numpy(), df[f"hsel{y}"].to_numpy()
        fsel = np.where((sx == sy) & np.isin(sx, list("10A")), sx, ".")
        bx = np.array([BIAS.get(c, -1) for c in df[f"hrat{x}"]])
        by = np.array([BIAS.get(c, -1) for c in df[f"hrat{y}"]])
        frat = np.where((bx == by) & (bx >= 0), bx, -1)

    def agreement(truth: np.ndarray, has_truth: np.ndarray, auto: np.ndarray) -> dict:
        has_auto = ~np.isnan(auto)
        compared = has_truth & has_auto
        agree = int((auto[compared] == truth[compared]).sum())
        return {
            "final_labels": int(has_truth.sum()),
            "compared": int(compared.sum()),
            "agree": agree,
            "agreement": frac(agree, int(compared.sum())),
            "automatic_missing": int((has_truth & ~has_auto).sum()),
        }

    sel_truth = np.where(fsel == "1", 1, np.where(fsel == "0", 0, -1))
    return {
        "inter_annotator": inter,
        "final_labels": source,
        "selection": agreement(sel_truth, sel_truth >= 0, df["A"].to_numpy()),
        "rationale": [{"rule": r, "agreement": agreement(frat, frat >= 0, labels[r])} for r in RULES],
    }


def analyse(bundle: dict, settings: dict) -> dict:
    df = long_table(bundle)
    facets = {f["id"]: f for f in bundle["facets"]}
    models = [lv["id"] for lv in facets["model"]["levels"]]
    conditions = [lv["id"] for lv in facets["condition"]["levels"]] if "condition" in facets else ["(all)"]
    labels, panel, is_self = rule_labels(bundle, df, settings)
    judges = bundle["responses"]["judges"]
    return {
        "settings": settings,
        "judges": [
            {
                "id": judges[k]["id"],
                "model": judges[k].get("model"),
                "self_models": [models[m] for m in range(len(models)) if is_self[i][m]],
                "labelled": int(df[f"judge{k}"].isin(list("EQNDR")).sum()),
            }
            for i, k in enumerate(panel)
        ],
        "selection": {
            "responses": len(df),
            "valid": int((df["readable"] & df["evidence"].notna()).sum()),
            "abstain": int((df["readable"] & df["evidence"].isna()).sum()),
            "no_readout": int((~df["readable"]).sum()),
        },
        "rules": [rule_section(r, df, labels[r], models, conditions) for r in RULES],
        "human": human_section(bundle, df, labels),
    }


# --------------------------------------------------------------------------- the synthetic bundle


def synthetic_bundle() -> dict:
    rng = np.random.default_rng(SEED)
    models = [
        {"id": "qwen-plus", "label": "Qwen-Plus"},
        {"id": "gpt-5.4", "label": "GPT 5.4"},
        {"id": "llama-3-70b", "label": "LLaMA-3 70B"},
    ]
    conditions = [
        {"id": "clear", "has_selection": True, "sweep": "task"},
        {"id": "bbq", "has_selection": True, "sweep": "task"},
        {"id": "explain", "has_selection": False, "sweep": "task"},
    ]
    statements = [{"id": f"s{i:02d}", "text": f"Synthetic statement {i}."} for i in range(1, 21)]
    templates = [{"id": "w1"}, {"id": "w2", "condition": "bbq"}]
    repeats = [{"id": "1"}, {"id": "2"}]
    shape = (3, 3, 20, 2, 2)
    cells = int(np.prod(shape))
    m, c, s, t, r = np.unravel_index(np.arange(cells), shape)
    in_design = (t == 0) | (c == 1)
    # Selection values: 0 agree (1), 1 disagree (0), 2 agree by fallback (1), 3 unsure (Abstain),
    # 4 parser failure (Abstain), 5 refusal (Abstain).
    p_bias = np.array([0.55, 0.35, 0.7])[m]
    u = rng.random(cells)
    code = np.where(u < 0.08, rng.choice([3, 4, 5], size=cells),
                    np.where(rng.random(cells) < p_bias, np.where(rng.random(cells) < 0.1, 2, 0), 1))
    a = np.where(np.isin(code, [0, 2]), 1, np.where(code == 1, 0, -1))
    missing = rng.random(cells) < 0.03
    stray = rng.random(cells) < 0.15  # a few responses stored outside the design: RQ3 must ignore them
    no_response = missing | (~in_design & ~stray)
    codes = "".join("-" if no_response[i] else str(code[i]) for i in range(cells))
    # latent Rationale stance: A=1 -> bias 0.4, A=0 -> 0.1, Abstain / explain -> 0.3
    p_b = np.where(a == 1, 0.4, np.where(a == 0, 0.1, 0.3))
    latent = rng.random(cells) < p_b

    def judge_column(flip: float, dot: float) -> str:
        b = latent ^ (rng.random(cells) < flip)
        pos = rng.choice(list("EEQ"), size=cells)
        neg = rng.choice(list("NDDR"), size=cells)
        lab = np.where(b, pos, neg)
        lab = np.where(rng.random(cells) < dot, ".", lab)
        return "".join("-" if no_response[i] else lab[i] for i in range(cells))

    judges = [
        {"id": "judge-a", "model": "Qwen Plus", "labels": judge_column(0.12, 0.04)},
        {"id": "judge-b", "model": "GPT-5.4", "labels": judge_column(0.18, 0.06)},
        {"id": "judge-c", "model": "gemini-3-flash", "labels": judge_column(0.10, 0.02)},
    ]
    # Human QC on 90 responses in the design.
    candidates = np.flatnonzero(~no_response & in_design)
    sample = np.sort(rng.choice(candidates, size=90, replace=False))

    def human_pass(flip: float) -> tuple[np.ndarray, np.ndarray]:
        hs = np.full(cells, ".", dtype=object)
        hr = np.full(cells, ".", dtype=object)
        for i in sample:
            if a[i] < 0:
                hs[i] = "A" if rng.random() < 0.7 else rng.choice(["1", "0"])
            else:
                v = a[i] ^ int(rng.random() < flip)
                hs[i] = "A" if rng.random() < 0.04 else str(v)
            bv = bool(latent[i]) ^ bool(rng.random() < flip * 2)
            hr[i] = rng.choice(list("EQ")) if bv else rng.choice(list("NDR"))
            if rng.random() < 0.05:
                hr[i] = "."
        return hs, hr

    s1, r1 = human_pass(0.06)
    s2, r2 = human_pass(0.10)
    fs, fr = s1.copy(), r1.copy()
    for i in sample:  # adjudication: keep the common label, else pick one of the two passes
        if s1[i] != s2[i]:
            fs[i] = s1[i] if rng.random() < 0.5 else s2[i]
        if r1[i] != r2[i]:
            fr[i] = r1[i] if rng.random() < 0.5 else r2[i]
    col = lambda x: "".join("-" if no_response[i] else x[i] for i in range(cells))  # noqa: E731
    human = [
        {"annotator": "ann-1", "selection": col(s1), "rationale": col(r1)},
        {"annotator": "ann-2", "selection": col(s2), "rationale": col(r2)},
        {"annotator": "final", "selection": col(fs), "rationale": col(fr)},
    ]
    return {
        "format": "audit-atlas-bundle",
        "version": 1,
        "metadata": {
            "id": "rq3-synthetic-v1",
            "title": "SYNTHETIC RQ3 reference bundle",
            "description": "Seeded synthetic labels for the RQ3 reference test; not model output.",
            "source": {"citation": "tests/reference/rq3_reference.py (numpy default_rng(20260722))"},
            "license": {"id": "CC0-1.0", "attribution": "No attribution required."},
            "content_warning": None,
            "produced_by": {"tool": "tests/reference/rq3_reference.py"},
        },
        "facets": [
            {"id": "model", "levels": models},
            {"id": "condition", "levels": conditions},
            {"id": "statement", "levels": statements},
            {"id": "template", "levels": templates},
            {"id": "repeat", "levels": repeats},
        ],
        "responses": {
            "axes": ["model", "condition", "statement", "template", "repeat"],
            "selection": {
                "values": [
                    {"raw": "agree", "evidence": 1, "obtained": "regex"},
                    {"raw": "disagree", "evidence": 0, "obtained": "regex"},
                    {"raw": "agree", "evidence": 1, "obtained": "fallback"},
                    {"raw": "unsure", "evidence": None, "obtained": "regex"},
                    {"raw": "", "evidence": None, "obtained": "parser_failure"},
                    {"raw": "", "evidence": None, "obtained": "refusal"},
                ],
                "codes": codes,
            },
            "judges": judges,
            "human": human,
        },
    }


SYNTHETIC_CASES = [
    {},
    {"judges": ["judge-c", "judge-b"]},
    {"self_judges": [{"judge": "judge-c", "models": ["llama-3-70b", "gpt-5.4"]}]},
]


def build_document() -> dict:
    tiny = json.loads(TINY_BUNDLE.read_text(encoding="utf-8-sig"))
    synthetic = synthetic_bundle()
    pilot_bytes = PILOT_BUNDLE.read_bytes()
    pilot = json.loads(pilot_bytes.decode("utf-8-sig"))
    return {
        "command": COMMAND,
        "generator": "tests/reference/rq3_reference.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "scikit-learn": sklearn.__version__,
        "definitions": __doc__.split("Definitions re-implemented here", 1)[1].split("Usage", 1)[0].strip(),
        "kappa": kappa_cases(),
        "bundles": {
            "tiny": {
                "bundle_path": str(TINY_BUNDLE.relative_to(REPO)),
                "cases": [analyse(tiny, {})],
            },
            "synthetic": {
                "bundle": synthetic,
                "cases": [analyse(synthetic, s) for s in SYNTHETIC_CASES],
            },
            "pilot_demo": {
                "bundle_path": str(PILOT_BUNDLE.relative_to(REPO)),
                "bundle_sha256": hashlib.sha256(pilot_bytes).hexdigest(),
                "cases": [analyse(pilot, {})],
            },
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="recompute and compare with --out; exit 1 on a diff")
    args = ap.parse_args()
    doc = build_document()
    for case in doc["kappa"]:
        print(f"[kappa] {case['name']}: {case['agree']}/{case['n']} kappa={case['kappa']}")
    for name, section in doc["bundles"].items():
        for case in section["cases"]:
            for r in case["rules"]:
                d = r["disagreement"]
                print(f"[{name} {json.dumps(case['settings'])}] {r['rule']}: rows/pairs "
                      f"{r['rationale_rows']}/{r['pairs']} disagree {d['count']} "
                      f"({d['selection_only']} A=1,B=0 vs {d['rationale_only']} A=0,B=1)")
    if args.check:
        committed = json.loads(args.out.read_text(encoding="utf-8"))
        return refcheck.report(committed, json.loads(json.dumps(doc)), str(args.out), COMMAND,
                               abs_tol=FLOAT_TOL, keys=("kappa", "bundles"))
    args.out.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
