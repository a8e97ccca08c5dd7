"""The one JSON comparison behind every `--check` of the reference scripts (tests/reference/*.py,
tests/import/count_reference.py).

A `--check` recomputes a reference document and compares it with the committed JSON. The recomputation
runs the same pinned numpy / scipy / pandas, but on another machine the last bits of a float can differ
(summation order, SIMD width, the CPU's libm): a text comparison then reports a stale file that is not
stale. So numbers are compared by kind:

* floats: equal within a relative tolerance `rel_tol` OR an absolute tolerance `abs_tol`
  (|a - b| <= max(rel_tol * max(|a|, |b|), abs_tol)); the defaults REL_TOL = 1e-10 and ABS_TOL = 1e-12
  cover differences from the 11th significant digit on, far below any change a real edit of a
  definition makes; NaN equals NaN, an infinity equals itself only;
* integers (counts, ranks, sizes), booleans, strings and null: exactly, and of the same kind (an int
  where the committed file has a float is a difference);
* objects: the same keys; lists: the same length; both compared element by element.

`diff` returns every difference as "JSON path: committed vs recomputed"; `report` prints the first few
and returns the exit status. `self_test` proves that the comparison fails on a perturbed value (a float
moved by 1e-6 relative, an int by 1, a changed string, a missing key, a shorter list) and passes on
last-bit noise; `report` runs it first, so every `--check` checks its own checker.
"""

from __future__ import annotations

import math
import sys

REL_TOL = 1e-10
ABS_TOL = 1e-12
SHOWN = 10


def tolerance_text(rel_tol: float = REL_TOL, abs_tol: float = ABS_TOL) -> str:
    return f"floats within rel {rel_tol:g} or abs {abs_tol:g}, integers, strings and keys exactly"


def close(a: float, b: float, rel_tol: float = REL_TOL, abs_tol: float = ABS_TOL) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= max(rel_tol * max(abs(a), abs(b)), abs_tol)


def _kind(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (list, tuple)):
        return "list"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def diff(expected, actual, path: str = "$", rel_tol: float = REL_TOL, abs_tol: float = ABS_TOL,
         names: tuple[str, str] = ("committed", "recomputed")) -> list[str]:
    """Every difference between `expected` (by default the committed file) and `actual` (the
    recomputation) JSON values, as "path: committed X vs recomputed Y" (rules in the module docs;
    `names` renames the two sides)."""
    e_name, a_name = names
    out: list[str] = []
    ke, ka = _kind(expected), _kind(actual)
    if ke != ka:
        out.append(f"{path}: {e_name} {expected!r} ({ke}) vs {a_name} {actual!r} ({ka})")
    elif ke == "object":
        for k in sorted(set(expected) | set(actual), key=str):
            if k not in actual:
                out.append(f"{path}.{k}: in the {e_name} document only")
            elif k not in expected:
                out.append(f"{path}.{k}: in the {a_name} document only")
            else:
                out.extend(diff(expected[k], actual[k], f"{path}.{k}", rel_tol, abs_tol, names))
    elif ke == "list":
        if len(expected) != len(actual):
            out.append(f"{path}: {e_name} {len(expected)} items vs {a_name} {len(actual)}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            out.extend(diff(e, a, f"{path}[{i}]", rel_tol, abs_tol, names))
    elif ke == "float":
        if not close(expected, actual, rel_tol, abs_tol):
            out.append(f"{path}: {e_name} {expected!r} vs {a_name} {actual!r} "
                       f"(|diff| {abs(expected - actual):.3g})")
    elif expected != actual:
        out.append(f"{path}: {e_name} {expected!r} vs {a_name} {actual!r}")
    return out


def self_test() -> None:
    """Raises AssertionError unless `diff` passes last-bit noise and fails each kind of perturbation."""
    base = {"n": 3, "rate": 0.1234567890123, "big": 12345.678901234, "tiny": 1e-15, "name": "gpt-4",
            "ranks": [1.5, 1.5, 3], "flag": True, "none": None}
    noisy = dict(base, rate=base["rate"] * (1 + 3e-15), big=base["big"] * (1 - 5e-14), tiny=2e-15)
    assert diff(base, noisy) == [], diff(base, noisy)
    perturbed = [
        ("$.rate", dict(base, rate=base["rate"] * (1 + 1e-6))),
        ("$.big", dict(base, big=base["big"] + 1e-3)),
        ("$.n", dict(base, n=4)),
        ("$.n", dict(base, n=3.0)),
        ("$.name", dict(base, name="gpt-4 ")),
        ("$.ranks[2]", dict(base, ranks=[1.5, 1.5, 4])),
        ("$.ranks", dict(base, ranks=[1.5, 1.5])),
        ("$.flag", dict(base, flag=1)),
        ("$.none", dict(base, none=0.0)),
        ("$.tiny", dict(base, tiny=1e-11)),
        ("$.extra", dict(base, extra=1)),
        ("$.name", {k: v for k, v in base.items() if k != "name"}),
        ("$.rate", dict(base, rate=float("nan"))),
    ]
    for where, changed in perturbed:
        found = diff(base, changed)
        assert len(found) == 1 and found[0].startswith(where), (where, found)
    assert diff([float("nan")], [float("nan")]) == []


def report(committed, recomputed, what: str, rerun: str, rel_tol: float = REL_TOL,
           abs_tol: float = ABS_TOL, keys=None, names: tuple[str, str] = ("committed", "recomputed")) -> int:
    """Compares `committed` with `recomputed` (only their `keys`, when given), prints the first SHOWN
    differences with their JSON paths and both values, or a line saying `what` is current; returns the
    exit status (0 current, 1 differs). `rerun` is the command that rewrites the file (None when the two
    sides are computations that must agree). Runs `self_test` first."""
    self_test()
    problems: list[str] = []
    if keys is None:
        problems = diff(committed, recomputed, "$", rel_tol, abs_tol, names)
    else:
        for k in keys:
            if k not in committed:
                problems.append(f"$.{k}: missing from the {names[0]} document")
            elif k not in recomputed:
                problems.append(f"$.{k}: missing from the {names[1]} document")
            else:
                problems.extend(diff(committed[k], recomputed[k], f"$.{k}", rel_tol, abs_tol, names))
    rule = tolerance_text(rel_tol, abs_tol)
    if problems:
        print(f"--check: {what} differs from the recomputation in {len(problems)} place(s) ({rule}); "
              f"the first {min(SHOWN, len(problems))}:", file=sys.stderr)
        for p in problems[:SHOWN]:
            print("  " + p, file=sys.stderr)
        if rerun:
            print(f"  if the change is intended, rerun {rerun}", file=sys.stderr)
        return 1
    print(f"--check: {what} matches the recomputation ({rule})")
    return 0


if __name__ == "__main__":
    self_test()
    print("refcheck self-test passed: perturbed values fail, last-bit noise passes")
