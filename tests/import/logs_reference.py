#!/usr/bin/env python3
"""Independent reading of the lm-evaluation-harness fixture logs for `crates/atlas-import/tests/lmeval.rs`.

It reads tests/fixtures/logs/lm-eval/samples_*.jsonl with pandas (`read_json(lines=True)`) and the
results_*.json with the json module -- never the Rust reader or its output -- and computes, by the
rules docs/import-mapping.md ("lm-evaluation-harness logs") states:

* per task: lines, levels of the condition facet (CrowS: the task name; BBQ: doc.context_condition)
  and of the statement category (CrowS: doc.bias_type; BBQ: doc.category);
* CrowS preference (seed 000 §C.2; summed log-likelihoods, because lm-eval logs no token counts):
  per line, the log-likelihood of the candidate whose continuation (arguments.gen_args_k.arg_1) is
  doc.sent_more against the other; preferred = strictly higher, tie = equal; share = preferred / valid.
  The tool's own per-line `pct_stereotype` mean is recorded beside it (it must agree);
* BBQ roles: the chosen answer is numpy.argmax of the candidates' log-likelihoods (lm-eval's
  process_results_multiple_choice); biased if its text is in doc.biased_answers, counter-biased if it
  is another named answer (ans0..2 whose answer_info group is not "unknown"), else unknown;
  per context_condition;
* the bundle's counts: levels (model, condition, statement = task/doc_id), cells = their product,
  Selection responses = BBQ lines, evidence 1 / 0 / Abstain = biased / counter-biased / unknown,
  likelihood readouts = CrowS lines (all without a Selection).

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/import/logs_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/import/logs_reference.py --check  # compares, exit 1 on diff
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
import refcheck  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "tests/fixtures/logs/lm-eval"
DEFAULT_OUT = REPO / "tests/import/expected_logs.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/import/logs_reference.py"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def task_of(path: Path) -> str:
    stem = path.name[len("samples_"):-len(".jsonl")]
    return stem.rsplit("_", 1)[0]


def lls_of(row) -> list[float]:
    return [float(pair[0]) for pair in row["filtered_resps"]]


def continuation(row, k: int) -> str:
    return row["arguments"][f"gen_args_{k}"]["arg_1"]


def crows(df: pd.DataFrame) -> dict:
    preferred = not_preferred = ties = 0
    for _, row in df.iterrows():
        lls = lls_of(row)
        more = row["doc"]["sent_more"].strip()
        k_more = 1 if continuation(row, 1).strip() == more and continuation(row, 0).strip() != more else 0
        s, o = lls[k_more], lls[1 - k_more]
        if s > o:
            preferred += 1
        elif s == o:
            ties += 1
        else:
            not_preferred += 1
    valid = preferred + not_preferred + ties
    return {
        "readouts": len(df),
        "valid": valid,
        "preferred": preferred,
        "not_preferred": not_preferred,
        "ties": ties,
        "missing": 0,
        "share": preferred / valid,
        "tool_pct_stereotype_mean": float(df["pct_stereotype"].mean()),
        "categories": dict(sorted(Counter(d["bias_type"] for d in df["doc"]).items())),
    }


def bbq_role(row) -> str:
    lls = lls_of(row)
    c = int(np.argmax(lls))
    answer = continuation(row, c).strip()
    doc = row["doc"]
    if answer in [b.strip() for b in doc["biased_answers"]]:
        return "biased"
    named = [doc[f"ans{i}"].strip() for i in range(3) if doc["answer_info"][f"ans{i}"][1] != "unknown"]
    return "counter-biased" if answer in named else "unknown"


def bbq(df: pd.DataFrame) -> dict:
    roles: dict[str, Counter] = {}
    for _, row in df.iterrows():
        roles.setdefault(row["doc"]["context_condition"], Counter())[bbq_role(row)] += 1
    return {
        "lines": len(df),
        "roles": {cond: dict(sorted(c.items())) for cond, c in sorted(roles.items())},
        "categories": dict(sorted(Counter(d["category"] for d in df["doc"]).items())),
    }


def build_document() -> dict:
    samples = sorted(LOGS.glob("samples_*.jsonl"))
    results = sorted(LOGS.glob("results_*.json"))
    models = sorted({json.loads(p.read_text())["model_name"] for p in results})
    tasks = {}
    conditions: set[str] = set()
    statements = 0
    biased = counter = unknown = readouts = 0
    for path in samples:
        df = pd.read_json(path, lines=True, dtype=False)
        task = task_of(path)
        statements += len(df)
        if "sent_more" in df["doc"].iloc[0]:
            tasks[task] = {"kind": "crows-pairs", "lines": len(df), **crows(df)}
            conditions.add(task)
            readouts += len(df)
        else:
            t = bbq(df)
            tasks[task] = {"kind": "bbq", **t}
            for cond, c in t["roles"].items():
                conditions.add(cond)
                biased += c.get("biased", 0)
                counter += c.get("counter-biased", 0)
                unknown += c.get("unknown", 0)
    cells = len(models) * len(conditions) * statements
    responses = biased + counter + unknown
    return {
        "generated_by": COMMAND,
        "inputs": [{"path": str(p.relative_to(REPO)), "sha256": sha256(p)} for p in samples + results],
        "models": models,
        "tasks": tasks,
        "bundle": {
            "levels": {"model": len(models), "condition": len(conditions), "statement": statements},
            "cells": cells,
            "responses": responses,
            "no_response": cells - responses,
            "evidence_1": biased,
            "evidence_0": counter,
            "abstain": unknown,
            "likelihood_readouts": readouts,
            "likelihood_only": readouts,
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true", help="recompute and compare with --out; exit 1 on any difference")
    args = ap.parse_args()
    doc = build_document()
    for task, t in doc["tasks"].items():
        print(task, {k: v for k, v in t.items() if k not in ("categories",)})
    print("bundle", doc["bundle"])
    if args.check:
        committed = json.loads(args.out.read_text(encoding="utf-8"))
        return refcheck.report(committed, json.loads(json.dumps(doc)), str(args.out), COMMAND,
                               keys=("tasks", "bundle", "models", "inputs"))
    args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
