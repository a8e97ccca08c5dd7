#!/usr/bin/env python3
"""Independent pandas reference for the AMQA clinical bundle (issue 7, "Real data": AMQA accuracy per
variant and per provider, and answer-change rates against the original question).

Reads the raw answer files itself (pandas.read_json, lines=True, every value as a string), independently
of the Rust converter, and writes tests/reference/expected_amqa.json (counts and rates only; the
upstream data has no license, so no answers are committed).

Input: ../shared/data/raw/amqa-medqa-demographic/Results/AMQA_Benchmark_Answer_<provider>_no_cot.jsonl
for provider in claude, deepseek, gemini, openai, openai_mini, qwen (the six complete no-CoT runs;
801 questions each, checked).

Definitions re-implemented here (docs/clinical.md, "Metrics"):

* an answer is readable when it is one letter A-Z after stripping whitespace; "Unknown", "" and null
  are parse failures;
* accuracy per provider x variant: correct = readable and equal to answer_idx; answered = readable
  (every question has a gold letter); accuracy = correct / answered; parse_failures = unreadable;
  asked = every question of the file (801: each has a gold letter and an answer field, readable or
  not); accuracy_unreadable_wrong = correct / asked (unreadable answers counted wrong, as AMQA's
  published tables count them);
* answer change per provider x variant (the seven variants other than `original`): a comparison is a
  question where both the variant's and the original question's answers are readable; changed = the
  letters differ; rate = changed / comparisons; overall per provider = sums over the seven variants.

Usage (from the repository root):

    ~/.cache/audit-atlas/venv/bin/python tests/reference/amqa_reference.py          # writes the JSON
    ~/.cache/audit-atlas/venv/bin/python tests/reference/amqa_reference.py --check  # see below

--check recomputes, compares with the committed JSON, then builds the bundle with the atlas CLI
(`cargo run -q --release -p atlas-cli --bin atlas -- convert amqa --input DIR --out TMP`, then
`clinical stats TMP/bundle.json --format json`) and compares its accuracy, answer_change and
answer_change_overall with the recomputation: counts exactly, rates within 1e-12. Exits 1 on any
difference.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/reference/expected_amqa.json"
DEFAULT_INPUT = REPO.parent / "shared/data/raw/amqa-medqa-demographic"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/amqa_reference.py"
FLOAT_TOL = 1e-12
PROVIDERS = ["claude", "deepseek", "gemini", "openai", "openai_mini", "qwen"]
VARIANTS = ["original", "desensitized", "white", "black", "high_income", "low_income", "male", "female"]
FIELDS = {v: f"test_model_answer_{v}" for v in VARIANTS}
FIELDS["original"] = "test_model_answer_original_question"
FIELDS["desensitized"] = "test_model_answer_desensitized_question"
QUESTIONS = 801


def load(input_dir: Path):
    frames, hashes = [], {}
    for p in PROVIDERS:
        path = input_dir / "Results" / f"AMQA_Benchmark_Answer_{p}_no_cot.jsonl"
        hashes[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        df = pd.read_json(path, lines=True, dtype=str)
        if len(df) != QUESTIONS or df["question_id"].nunique() != QUESTIONS:
            raise SystemExit(f"{path}: {len(df)} lines, {df['question_id'].nunique()} distinct questions; expected {QUESTIONS}")
        long = df.melt(id_vars=["question_id", "answer_idx"], value_vars=[FIELDS[v] for v in VARIANTS],
                       var_name="field", value_name="answer")
        long["variant"] = long["field"].map({f: v for v, f in FIELDS.items()})
        long["provider"] = p
        frames.append(long)
    data = pd.concat(frames, ignore_index=True)
    letter = data["answer"].fillna("").str.strip()
    data["readable"] = letter.str.fullmatch(r"[A-Z]")
    data["letter"] = letter.where(data["readable"])
    gold_per_q = data.groupby("question_id")["answer_idx"].nunique()
    if (gold_per_q != 1).any():
        raise SystemExit("the providers' files disagree on a gold answer_idx")
    return data, hashes


def compute(data: pd.DataFrame):
    accuracy = []
    for p in PROVIDERS:
        for v in VARIANTS:
            d = data[(data.provider == p) & (data.variant == v)]
            answered = int(d["readable"].sum())
            correct = int((d["readable"] & (d["letter"] == d["answer_idx"])).sum())
            asked = len(d)
            accuracy.append({"model": p, "condition": v, "correct": correct, "answered": answered,
                             "parse_failures": int((~d["readable"]).sum()),
                             "accuracy": correct / answered if answered else None,
                             "asked": asked,
                             "accuracy_unreadable_wrong": correct / asked if asked else None})
    base = data[data.variant == "original"][["provider", "question_id", "letter"]].rename(columns={"letter": "base"})
    paired = data[data.variant != "original"].merge(base, on=["provider", "question_id"], how="left")
    paired = paired[paired["letter"].notna() & paired["base"].notna()]
    paired["changed"] = paired["letter"] != paired["base"]
    change, overall = [], []
    for p in PROVIDERS:
        for v in VARIANTS[1:]:
            d = paired[(paired.provider == p) & (paired.variant == v)]
            n, ch = len(d), int(d["changed"].sum())
            change.append({"model": p, "condition": v, "changed": ch, "comparisons": n,
                           "rate": ch / n if n else None})
        d = paired[paired.provider == p]
        n, ch = len(d), int(d["changed"].sum())
        overall.append({"model": p, "changed": ch, "comparisons": n, "rate": ch / n if n else None})
    return {"accuracy": accuracy, "answer_change": change, "answer_change_overall": overall}


def print_table(doc):
    acc = {(r["model"], r["condition"]): r for r in doc["accuracy"]}
    chg = {(r["model"], r["condition"]): r for r in doc["answer_change"]}
    print("Accuracy per provider x variant, % (correct / readable answers; 'Unknown' answers apart)")
    print(f"{'provider':12s}" + "".join(f"{v:>13s}" for v in VARIANTS) + f"{'unknown':>9s}")
    for p in PROVIDERS:
        pf = sum(acc[(p, v)]["parse_failures"] for v in VARIANTS)
        print(f"{p:12s}" + "".join(f"{100 * acc[(p, v)]['accuracy']:13.2f}" for v in VARIANTS) + f"{pf:9d}")
    print("\nAccuracy per provider x variant, % (correct / all questions: unreadable answers counted wrong, as AMQA)")
    print(f"{'provider':12s}" + "".join(f"{v:>13s}" for v in VARIANTS) + f"{'n':>9s}")
    for p in PROVIDERS:
        print(f"{p:12s}" + "".join(f"{100 * acc[(p, v)]['accuracy_unreadable_wrong']:13.2f}" for v in VARIANTS)
              + f"{acc[(p, 'original')]['asked']:9d}")
    print("\nAnswer change against the original question per provider x variant, % (changed / both readable)")
    print(f"{'provider':12s}" + "".join(f"{v:>13s}" for v in VARIANTS[1:]) + f"{'overall':>10s}{'changed/n':>12s}")
    for p, o in zip(PROVIDERS, doc["answer_change_overall"]):
        print(f"{p:12s}" + "".join(f"{100 * chg[(p, v)]['rate']:13.2f}" for v in VARIANTS[1:])
              + f"{100 * o['rate']:10.2f}{o['changed']:>7d}/{o['comparisons']}")


def cli_report(input_dir: Path):
    with tempfile.TemporaryDirectory() as tmp:
        base = ["cargo", "run", "-q", "--release", "-p", "atlas-cli", "--bin", "atlas", "--"]
        subprocess.run(base + ["convert", "amqa", "--input", str(input_dir), "--out", tmp], cwd=REPO, check=True)
        out = subprocess.run(base + ["clinical", "stats", os.path.join(tmp, "bundle.json"), "--format", "json"],
                             cwd=REPO, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", type=Path, default=DEFAULT_INPUT, help="the staged amqa-medqa-demographic folder")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="compare with --out and with the atlas CLI; exit 1 on a diff")
    args = ap.parse_args()
    data, hashes = load(args.input)
    metrics = compute(data)
    doc = {
        "command": COMMAND,
        "generator": "tests/reference/amqa_reference.py",
        "python": platform.python_version(),
        "pandas": pd.__version__,
        "definitions": __doc__.split("Definitions re-implemented here", 1)[1].split("Usage", 1)[0].strip(),
        "source_sha256": hashes,
        "questions": QUESTIONS,
        **metrics,
    }
    print_table(doc)
    if not args.check:
        args.out.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
        return 0
    committed = json.loads(args.out.read_text(encoding="utf-8"))
    doc = json.loads(json.dumps(doc))
    keys = ("accuracy", "answer_change", "answer_change_overall")
    rc = refcheck.report(committed, doc, str(args.out), COMMAND, abs_tol=FLOAT_TOL,
                         keys=("source_sha256",) + keys)
    report = cli_report(args.input)
    rc |= refcheck.report(doc, report, "`atlas clinical stats` of the converted bundle", None,
                          abs_tol=FLOAT_TOL, keys=keys, names=("pandas", "atlas"))
    n = sum(len(doc[k]) for k in keys)
    print(f"--check: {n} rows compared ({'differences above' if rc else 'all equal'})")
    return rc


if __name__ == "__main__":
    sys.exit(main())
