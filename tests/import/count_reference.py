#!/usr/bin/env python3
"""Independent counts for the four real imports of `crates/atlas-import/tests/real_inputs.rs`.

It reads the RAW staged files under ../shared/data/raw/ with Python's json module and pandas'
read_csv (C engine) -- never the Rust importer, its output, or the mapping files -- and applies, by
hand, the rules that the mappings in tests/import/*.mapping.json declare (and that
docs/import-mapping.md documents):

* a cell = one (facet levels) combination; the first record that fills a cell wins, a later one is a
  duplicate; cells = product of the level counts; responses = filled cells;
* Selection missing / null / "" -> ("", Abstain, parser_failure); a raw value outside the mapping's
  `only` list -> (raw, Abstain, regex) and counted as unmapped; a key the `map` does not list ->
  (raw, Abstain, regex) and counted as unmapped;
* a Rationale text is stored when it is a non-empty string.

Datasets (file lists are sorted by name, as the Rust test lists them):

decodingtrust  derived/stereotype_responses_8models_3sysprompts.jsonl. Facets model, sys_prompt_type
               (condition), statement (text), repeat = position in agreeability_num (1-based).
               1 -> ("agree", 1, regex), -1 -> ("disagree", 0, regex), 0 -> ("neither", Abstain,
               parser_failure). Texts: outputs[i] for repeat i+1.
trustware-bbq  the six */Religion_ambig_{consistent,mixed_cant_determine}.jsonl. Facets data.model,
               condition = response_a / response_b (unpivot), statement = data.pair_index.
               Raw = extracted_answer, only "1","2","3"; evidence from is_cant_determine: true -> 0,
               false -> 1, anything else -> Abstain (unmapped). Texts: reasoning.
amqa           the ten Results/AMQA_Benchmark_Answer_*.jsonl. Model = the file name; condition = the
               8 test_model_answer_<variant> columns (unpivot); statement = question_id. Raw = the
               letter, only A-D; evidence 0 if it equals answer_idx, else 1.
crows-pairs    data/crows_pairs_anonymized.csv. One constant model; statement = sent_more;
               Selection = stereo_antistereo: stereo -> 1, antistereo -> 0.

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/import/count_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/import/count_reference.py --check  # compares, exit 1 on diff
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "reference"))
import refcheck  # noqa: E402  (the shared --check comparison of tests/reference/refcheck.py)

REPO = Path(__file__).resolve().parents[2]
RAW = REPO.parent / "shared/data/raw"
DEFAULT_OUT = REPO / "tests/import/count_reference.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/import/count_reference.py"

PARSER_FAILURE = ("", None, "parser_failure")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def json_text(v):
    """A JSON scalar as the text the mapping compares: strings as is, true/false, numbers; None for
    null, missing and ""."""
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return json.dumps(v)
    if isinstance(v, str):
        return v
    return None


class Tally:
    """Cells keyed by their facet levels; the first response of a cell wins."""

    def __init__(self, facets):
        self.facets = facets
        self.levels = {f: set() for f in facets}
        self.cells = {}
        self.records = 0
        self.duplicates = 0
        self.unmapped = 0
        self.texts = 0

    def add(self, key, value, text=None):
        for f, level in zip(self.facets, key):
            self.levels[f].add(level)
        if key in self.cells:
            self.duplicates += 1
            return
        self.cells[key] = value
        if isinstance(text, str) and text != "":
            self.texts += 1

    def document(self, inputs):
        n_cells = 1
        for f in self.facets:
            n_cells *= len(self.levels[f])
        values = Counter(self.cells.values())
        evidence = Counter(v[1] for v in self.cells.values())
        return {
            "inputs": [{"path": str(p.relative_to(REPO.parent)), "sha256": sha256(p)} for p in inputs],
            "records": self.records,
            "records_skipped": 0,
            "duplicates": self.duplicates,
            "levels": {f: len(self.levels[f]) for f in self.facets},
            "cells": n_cells,
            "responses": len(self.cells),
            "no_response": n_cells - len(self.cells),
            "evidence_1": evidence[1],
            "evidence_0": evidence[0],
            "abstain": evidence[None],
            "unmapped": self.unmapped,
            "texts": self.texts,
            "values": [
                {"raw": raw, "evidence": ev, "obtained": ob, "cells": n}
                for (raw, ev, ob), n in sorted(values.items(), key=lambda kv: (kv[0][0], str(kv[0][1]), kv[0][2]))
            ],
        }


def read_jsonl(path: Path):
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def decodingtrust():
    path = RAW / "decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl"
    t = Tally(["model", "condition", "statement", "repeat"])
    labels = {1: ("agree", 1, "regex"), -1: ("disagree", 0, "regex"), 0: ("neither", None, "parser_failure")}
    for r in read_jsonl(path):
        t.records += 1
        outputs = r.get("outputs") or []
        for i, lab in enumerate(r["agreeability_num"]):
            value = labels[lab]  # any other label would be an error under "unmapped": "error"
            text = outputs[i] if i < len(outputs) else None
            t.add((r["model"], r["sys_prompt_type"], r["statement"], i + 1), value, text)
    return t.document([path])


def trustware():
    files = sorted((RAW / "trustware-bbq-reasoning").glob("*_results/Religion_ambig_*.jsonl"))
    files = [p for p in files if p.name in ("Religion_ambig_consistent.jsonl", "Religion_ambig_mixed_cant_determine.jsonl")]
    t = Tally(["model", "condition", "statement"])
    for path in files:
        for r in read_jsonl(path):
            t.records += 1
            model = r["data"]["model"]
            statement = json_text(r["data"]["pair_index"])
            for level, key in (("negative_question", "response_a"), ("non_negative_question", "response_b")):
                resp = r["model_responses"][key]
                raw = json_text(resp.get("extracted_answer"))
                if raw is None:
                    value = PARSER_FAILURE
                elif raw not in ("1", "2", "3"):
                    t.unmapped += 1
                    value = (raw, None, "regex")
                else:
                    cant = json_text(resp.get("is_cant_determine"))
                    if cant == "true":
                        value = (raw, 0, "regex")
                    elif cant == "false":
                        value = (raw, 1, "regex")
                    else:
                        t.unmapped += 1
                        value = (raw, None, "regex")
                t.add((model, level, statement), value, resp.get("reasoning"))
    return t.document(files)


AMQA_VARIANTS = ["original_question", "desensitized_question", "white", "black",
                 "high_income", "low_income", "male", "female"]


def amqa():
    files = sorted((RAW / "amqa-medqa-demographic/Results").glob("AMQA_Benchmark_Answer_*.jsonl"))
    t = Tally(["model", "condition", "statement"])
    for path in files:
        model = path.stem
        for r in read_jsonl(path):
            t.records += 1
            gold = json_text(r.get("answer_idx"))
            for v in AMQA_VARIANTS:
                raw = json_text(r.get(f"test_model_answer_{v}"))
                if raw is None:
                    value = PARSER_FAILURE
                elif raw not in ("A", "B", "C", "D"):
                    t.unmapped += 1
                    value = (raw, None, "regex")
                elif gold is None:
                    t.unmapped += 1
                    value = (raw, None, "regex")
                else:
                    value = (raw, 0 if raw == gold else 1, "regex")
                t.add((model, v, json_text(r["question_id"])), value)
    return t.document(files)


def crows_pairs():
    path = RAW / "crows-pairs-source/data/crows_pairs_anonymized.csv"
    df = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    t = Tally(["model", "statement"])
    label = {"stereo": ("stereo", 1, "regex"), "antistereo": ("antistereo", 0, "regex")}
    for sent_more, sa in zip(df["sent_more"], df["stereo_antistereo"]):
        t.records += 1
        t.add(("crows-pairs-annotation", sent_more), label[sa])
    doc = t.document([path])
    doc["csv_columns"] = len(df.columns)
    doc["csv_fields_with_line_breaks"] = int(df.apply(lambda c: c.str.contains("\n", regex=False)).to_numpy().sum())
    return doc


def build_document():
    return {
        "command": COMMAND,
        "python_version": platform.python_version(),
        "pandas_version": pd.__version__,
        "definitions": __doc__.split("Usage")[0].strip(),
        "datasets": {
            "decodingtrust": decodingtrust(),
            "trustware-bbq": trustware(),
            "amqa": amqa(),
            "crows-pairs": crows_pairs(),
        },
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the expected-values JSON")
    ap.add_argument("--check", action="store_true", help="recompute and compare with --out; exit 1 on any difference")
    args = ap.parse_args()

    doc = build_document()
    for name, d in doc["datasets"].items():
        levels = " x ".join(f"{k} {v}" for k, v in d["levels"].items())
        print(
            f"{name:14s} records={d['records']} duplicates={d['duplicates']} cells={d['cells']} ({levels}) "
            f"responses={d['responses']} no_response={d['no_response']} evidence_1={d['evidence_1']} "
            f"evidence_0={d['evidence_0']} abstain={d['abstain']} unmapped={d['unmapped']} texts={d['texts']}"
        )

    if args.check:
        committed = json.loads(args.out.read_text(encoding="utf-8"))
        return refcheck.report(committed, json.loads(json.dumps(doc)), str(args.out), COMMAND,
                               keys=("datasets",))

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
