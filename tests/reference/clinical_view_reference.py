#!/usr/bin/env python3
"""Independent pandas/numpy reference for the Clinical view (issue 7 item 3; seed 001 Table 5, Fig. 4,
Tables 3-4), read by the end-to-end test tests/e2e/clinical.mjs.

Writes tests/reference/expected_clinical_view.json with one entry per clinical bundle the e2e test can
open:

* "fixture": tests/fixtures/clinical-tiny/bundle.json (SYNTHETIC, hand-designed; its hand-worked values
  are in tests/fixtures/clinical-tiny/README.md);
* "demo": static/bundles/clinical-demo-smollm2/bundle.json, the shipped pipeline demo (SmolLM2-135M),
  when it exists.

Each bundle is read directly with json, its dense Selection codes decoded into a pandas long table (one
row per cell: model, question, variant, run, raw, obtained), and the sha256 of its bytes is recorded so
that a changed bundle shows up as a --check difference. Nothing is taken from the Rust code or the app.

Definitions re-implemented here (docs/clinical.md; seed 001 Sec. 3.3-3.5, Eq. 1, Table 5):

* an answer is readable when the cell has a response, its `obtained` is not parser_failure or refusal
  and its `raw` is not empty after stripping; letters are compared stripped and upper-cased;
* accuracy per model (unit: answer) = readable baseline answers equal to the question's gold `answer` /
  readable baseline answers to questions with a gold answer (all variants when the bundle has no
  baseline); accuracy with unreadable answers counted wrong = the same numerator / baseline cells with a
  response (readable or not) to questions with a gold answer ("asked");
* CFV per model (unit: attempt) = counterfactual records with outcome "valid" / the model's records;
* answer change per model x prefix and per model (unit: comparison) = prefix cells whose readable
  answer differs from the readable answer of the same model x question x run baseline cell / such pairs
  with both answers readable; `changed` lists the (question, run, baseline, prefix answer) of the
  changed comparisons in question, run order;
* EDD per model x question x run record (Eq. 1) = 1 - the mean over pairs i < j of the cosine similarity
  of the record's embedding rows (stored values as float64, each divided by its L2 norm); records with
  fewer than two rows have none; mean EDD per model over its records (unit: record);
* flags per question per model (unit: judged comparison) = stereotype records with found true /
  distinct questions among the model's records with found not null;
* per record (first run) the prefix answers, and "robust" = baseline and all prefix answers readable,
  no prefix answer differing from the baseline, and no found-true judge record for it (Table 3).

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/reference/clinical_view_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/clinical_view_reference.py --check  # compares, exit 1 on diff
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import platform
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/reference/expected_clinical_view.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/clinical_view_reference.py"
BUNDLES = {
    "fixture": ("tests/fixtures/clinical-tiny/bundle.json", "fixtures/clinical-tiny/bundle.json"),
    "demo": ("static/bundles/clinical-demo-smollm2/bundle.json", "static/bundles/clinical-demo-smollm2/bundle.json"),
}
ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def long_table(b: dict) -> pd.DataFrame:
    """One row per cell with its level ids, in storage order (row-major over responses.axes)."""
    facets = {f["id"]: f for f in b["facets"]}
    axes = b["responses"]["axes"]
    ids = [[lv["id"] for lv in facets[a]["levels"]] for a in axes]
    grids = np.meshgrid(*[np.arange(len(x)) for x in ids], indexing="ij")
    df = pd.DataFrame({a: np.asarray(ids[k], dtype=object)[grids[k].ravel()] for k, a in enumerate(axes)})
    df["cell"] = np.arange(len(df))
    codes = b["responses"]["selection"]["codes"]
    assert len(codes) == len(df)
    values = b["responses"]["selection"]["values"]
    df["code"] = list(codes)
    df["raw"] = [None if c == "-" else values[ALPHABET.index(c)]["raw"] for c in codes]
    df["obtained"] = [None if c == "-" else values[ALPHABET.index(c)]["obtained"] for c in codes]
    if "repeat" not in df:
        df["repeat"] = None
    df = df.rename(columns={"statement": "question", "condition": "variant", "repeat": "run"})
    readable = df["raw"].notna() & ~df["obtained"].isin(["parser_failure", "refusal"])
    readable &= df["raw"].fillna("").str.strip() != ""
    df["letter"] = np.where(readable, df["raw"].fillna("").str.strip().str.upper(), None)
    df["responded"] = df["raw"].notna()
    return df


def embedding_rows(b: dict) -> dict[int, np.ndarray]:
    emb = b["clinical"].get("embeddings")
    if not emb:
        return {}
    dtype = {"f32le": "<f4", "f16le": "<f2"}[emb["dtype"]]
    data = np.frombuffer(base64.b64decode(emb["data"]), dtype=dtype).astype(np.float64)
    rows = data.reshape(len(emb["cells"]), emb["dim"])
    return {int(c): rows[k] for k, c in enumerate(emb["cells"])}


def edd(rows: list[np.ndarray]) -> float | None:
    if len(rows) < 2:
        return None
    m = np.vstack([r / np.linalg.norm(r) for r in rows])
    gram = m @ m.T
    iu = np.triu_indices(len(rows), k=1)
    return float(1.0 - gram[iu].mean())


def ratio(k: int, n: int) -> float | None:
    return k / n if n else None


def analyse(path: Path, url: str) -> dict:
    raw = path.read_bytes()
    b = json.loads(raw)
    cl = b["clinical"]
    base = cl.get("baseline")
    df = long_table(b)
    facets = {f["id"]: f for f in b["facets"]}
    models = [lv["id"] for lv in facets["model"]["levels"]]
    questions = {lv["id"]: lv for lv in facets["statement"]["levels"]}
    variants = [lv["id"] for lv in facets["condition"]["levels"]]
    prefixes = [v for v in variants if v != base]

    # Accuracy on the baseline variant.
    gold = {q: (lv.get("answer") or None) for q, lv in questions.items()}
    acc = df[df["variant"] == base] if base is not None else df
    acc = acc[acc["responded"]].copy()
    acc["gold"] = acc["question"].map(gold)
    asked = acc[acc["gold"].notna()].copy()
    asked["correct"] = asked["letter"].notna() & (asked["letter"] == asked["gold"].str.strip().str.upper())
    acc = asked[asked["letter"].notna()]

    # Baseline-prefix comparisons.
    pairs = pd.DataFrame()
    if base is not None:
        bl = df[df["variant"] == base][["model", "question", "run", "letter"]].rename(columns={"letter": "base"})
        pr = df[df["variant"] != base]
        pairs = pr.merge(bl, on=["model", "question", "run"], how="left")
        pairs = pairs[pairs["letter"].notna() & pairs["base"].notna()].copy()
        pairs["changed"] = pairs["letter"] != pairs["base"]

    # EDD per record.
    emb = embedding_rows(b)
    records = []
    for (m, q, r), g in df.groupby(["model", "question", "run"], sort=False, dropna=False):
        rows = [emb[c] for c in g["cell"] if c in emb]
        value = edd(rows)
        if value is not None:
            records.append({"model": m, "question": q, "run": r, "edd": value, "n_variants": len(rows)})
    edd_df = pd.DataFrame(records, columns=["model", "question", "run", "edd", "n_variants"])

    cf = pd.DataFrame(cl.get("counterfactuals", []), columns=["model", "statement", "outcome"])
    st = pd.DataFrame(cl.get("stereotype", []), columns=["model", "statement", "condition", "repeat", "found"])

    profile = {}
    heat = {}
    for m in models:
        a = acc[acc["model"] == m]
        q_asked = asked[asked["model"] == m]
        c = cf[cf["model"] == m]
        p = pairs[pairs["model"] == m] if len(pairs) else pairs
        e = edd_df[edd_df["model"] == m]
        s = st[st["model"] == m]
        judged = s[s["found"].notna()]
        flags = int((judged["found"] == True).sum())  # noqa: E712
        nq = int(judged["statement"].nunique())
        profile[m] = {
            "accuracy": ratio(int(a["correct"].sum()), len(a)),
            "answers": len(a),
            "accuracy_unreadable_wrong": ratio(int(q_asked["correct"].sum()), len(q_asked)),
            "asked": len(q_asked),
            "cfv": ratio(int((c["outcome"] == "valid").sum()), len(c)),
            "attempts": len(c),
            "answer_change": ratio(int(p["changed"].sum()) if len(p) else 0, len(p)),
            "comparisons": len(p),
            "mean_edd": float(e["edd"].mean()) if len(e) else None,
            "records": len(e),
            "flags_per_question": ratio(flags, nq),
            "flags": flags,
            "questions": nq,
        }
        heat[m] = {}
        for v in prefixes:
            pv = p[p["variant"] == v] if len(p) else p
            changed = pv[pv["changed"]] if len(pv) else pv
            heat[m][v] = {
                "changed": int(len(changed)),
                "comparisons": int(len(pv)),
                "cases": [[row.question, row.run, row.base, row.letter] for row in changed.itertuples()],
            }

    # Per record (first run): prefix answers, EDD, robustness.
    first_run = df["run"].iloc[0]
    flagged = st[st["found"] == True]  # noqa: E712
    record_view = {}
    for m in models:
        for q in questions:
            g = df[(df["model"] == m) & (df["question"] == q) & (df["run"] == first_run)]
            letters = {v: (None if pd.isna(x) else x) for v, x in zip(g["variant"], g["letter"])}
            b_letter = letters.get(base)
            answers = {v: letters.get(v) for v in prefixes}
            changed = [v for v in prefixes if b_letter is not None and answers[v] is not None and answers[v] != b_letter]
            flags = sorted(set(flagged[(flagged["model"] == m) & (flagged["statement"] == q)]["condition"]))
            robust = (b_letter is not None and all(a is not None for a in answers.values())
                      and not changed and not flags and len(prefixes) > 0)
            e = edd_df[(edd_df["model"] == m) & (edd_df["question"] == q) & (edd_df["run"] == first_run)]
            record_view[f"{m}\t{q}"] = {
                "baseline": b_letter,
                "answers": answers,
                "changed": changed,
                "flags": flags,
                "edd": float(e["edd"].iloc[0]) if len(e) else None,
                "robust": bool(robust),
            }
    return {
        "path": str(path.relative_to(REPO)),
        "url": url,
        "sha256": hashlib.sha256(raw).hexdigest(),
        "id": b["metadata"]["id"],
        "baseline": base,
        "models": models,
        "prefixes": prefixes,
        "profile": profile,
        "answer_change": heat,
        "records": record_view,
    }


def build() -> dict:
    doc = {
        "command": COMMAND,
        "generator": "tests/reference/clinical_view_reference.py",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "bundles": {},
    }
    for name, (rel, url) in BUNDLES.items():
        path = REPO / rel
        if path.exists():
            doc["bundles"][name] = analyse(path, url)
    return doc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="recompute and compare with the JSON; exit 1 on any difference")
    args = ap.parse_args()
    doc = build()
    if args.check:
        old = json.loads(OUT.read_text())
        return refcheck.report(old, json.loads(json.dumps(doc)), str(OUT.relative_to(REPO)), COMMAND,
                               abs_tol=1e-12, keys=("bundles",))
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n")
    print(f"wrote {OUT.relative_to(REPO)} ({', '.join(doc['bundles'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
