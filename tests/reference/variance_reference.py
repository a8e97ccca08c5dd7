"""Independent numpy reference for the descriptive variance components (eta squared, seed 000 C.3,
Table 12) of the DecodingTrust stereotype data over the condition x template grid, read from the RAW
derived JSONL (not the bundle).

    ~/.cache/audit-atlas/venv/bin/python tests/reference/variance_reference.py          # writes expected_variance.json
    ~/.cache/audit-atlas/venv/bin/python tests/reference/variance_reference.py --check  # recompute and compare

Rows = valid responses (label != 0), y = 1 for agree; every repeat counted. SS_F = sum_l n_l (mean_l -
mean)^2; SS_FG = sum_lm n_lm (mean_lm - mean)^2 - SS_F - SS_G; eta^2 = SS / SS_total. Complete grid: only
model x statement units with at least one valid response in each of the 9 condition x template cells.
This builds the full long table of rows with numpy (no shortcut through cell sums) and computes the sums
of squares from it directly.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import refcheck  # noqa: E402  (the shared --check comparison)
from reference_stats import DEFAULT_DATA, load_labels  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "tests/reference/expected_variance.json"
COMMAND = "~/.cache/audit-atlas/venv/bin/python tests/reference/variance_reference.py"


def eta(y: np.ndarray, cond: np.ndarray, tmpl: np.ndarray) -> dict:
    mean = y.mean()
    ss_total = ((y - mean) ** 2).sum()

    def between(key: np.ndarray) -> float:
        total = 0.0
        for k in np.unique(key):
            sel = y[key == k]
            total += len(sel) * (sel.mean() - mean) ** 2
        return total

    ss_c = between(cond)
    ss_t = between(tmpl)
    ss_ct = between(cond * 10 + tmpl) - ss_c - ss_t
    return {
        "condition": ss_c / ss_total,
        "template": ss_t / ss_total,
        "condition x template": ss_ct / ss_total,
        "rows": int(len(y)),
    }


def compute():
    models, labels = load_labels(DEFAULT_DATA)  # (8, 3, 16, 24, 3, 25)
    m, c, tp, g, t, r = np.indices(labels.shape)
    valid = labels != 0
    y = (labels[valid] == 1).astype(float)
    cond, tmpl = c[valid], t[valid]
    all_rows = eta(y, cond, tmpl)
    # units = model x statement (topic, group); complete = a valid response in all 9 cells
    per_cell = valid.any(axis=5)  # (8, 3, 16, 24, 3)
    complete_unit = per_cell.all(axis=(1, 4))  # (8, 16, 24)
    keep = valid & complete_unit[:, None, :, :, None, None]
    comp = eta((labels[keep] == 1).astype(float), c[keep], t[keep])
    return {
        "command": COMMAND,
        "python_version": platform.python_version(),
        "numpy_version": np.__version__,
        "factors": ["condition", "template"],
        "units_by": ["model", "statement"],
        "all_rows": all_rows,
        "complete_grid": comp,
        "units_complete": int(complete_unit.sum()),
        "units_seen": int(per_cell.any(axis=(1, 4)).sum()),
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    doc = compute()
    if args.check:
        return refcheck.report(json.loads(OUT.read_text()), json.loads(json.dumps(doc)), str(OUT), COMMAND)
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    print(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
