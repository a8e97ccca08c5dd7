"""Independent reading of the committed Parquet fixtures (tests/fixtures/parquet/) with pyarrow.

Writes (no argument) or checks (--check) tests/fixtures/parquet/expected.json: per file, what
pyarrow's footer reader says (rows, row groups, columns, each column's codecs, the writer) and the
counts that the mapping tests/fixtures/parquet/long.mapping.json implies, computed here by hand from
pyarrow's reading of the data -- never from the Rust reader or its output:

* levels: distinct values of model, sys_prompt_type, statement, sample;
* cells = the product of the level counts (the dense matrix), responses = rows (no two rows share a
  (model, sys_prompt_type, statement, sample) cell: checked), records = rows;
* evidence_1 = rows with agreeability_num 1, evidence_0 = rows with -1, abstain = rows with 0;
* texts = rows whose output is a non-empty string.

A file with a codec outside uncompressed/SNAPPY/GZIP/ZSTD is listed with "readable": false: the Rust
reader must refuse it naming the codec. Used by the test command (`--check`, under a second) and by
crates/atlas-import/tests/logs_parquet.rs, which compares the Rust reader's counts with this file.
"""
import json
import pathlib
import sys

import pyarrow
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIR = ROOT / "tests/fixtures/parquet"
EXPECTED = DIR / "expected.json"
READABLE = {"UNCOMPRESSED", "SNAPPY", "GZIP", "ZSTD"}


def footer(path):
    f = pq.ParquetFile(path)
    md = f.metadata
    codecs = {}
    for rg in range(md.num_row_groups):
        g = md.row_group(rg)
        for c in range(g.num_columns):
            col = g.column(c)
            codecs.setdefault(col.path_in_schema, set()).add(col.compression)
    return {
        "rows": md.num_rows,
        "row_groups": md.num_row_groups,
        "row_group_rows": [md.row_group(i).num_rows for i in range(md.num_row_groups)],
        "columns": f.schema_arrow.names,
        "codecs": {k: sorted(v) for k, v in sorted(codecs.items())},
        "created_by": md.created_by,
    }


def counts(path):
    t = pq.read_table(path)
    keys = ["model", "sys_prompt_type", "statement", "sample"]
    levels = {k: len(pc.unique(t[k])) for k in keys}
    cells = 1
    for n in levels.values():
        cells *= n
    distinct = len(t.group_by(keys).aggregate([]))
    assert distinct == t.num_rows, f"{path.name}: two rows share a cell"
    a = t["agreeability_num"]
    out = t["output"]
    nonempty = pc.sum(pc.greater(pc.utf8_length(pc.fill_null(out, "")), 0)).as_py() or 0
    return {
        "records": t.num_rows,
        "cells": cells,
        "responses": t.num_rows,
        "evidence_1": pc.sum(pc.equal(a, 1)).as_py() or 0,
        "evidence_0": pc.sum(pc.equal(a, -1)).as_py() or 0,
        "abstain": pc.sum(pc.equal(a, 0)).as_py() or 0,
        "texts": nonempty,
        "levels": {
            "model": levels["model"],
            "condition": levels["sys_prompt_type"],
            "statement": levels["statement"],
            "repeat": levels["sample"],
        },
    }


def build():
    files = {}
    for path in sorted(DIR.glob("*.parquet")):
        entry = footer(path)
        all_codecs = {c for cs in entry["codecs"].values() for c in cs}
        entry["readable"] = all_codecs <= READABLE
        if entry["readable"]:
            entry.update(counts(path))
        files[path.name] = entry
    return {
        "generated_by": "tests/import/parquet_reference.py (pyarrow)",
        "pyarrow_version": pyarrow.__version__,
        "mapping": "tests/fixtures/parquet/long.mapping.json",
        "files": files,
    }


def main():
    now = build()
    if "--check" in sys.argv:
        committed = json.loads(EXPECTED.read_text())
        bad = []
        for name in sorted(set(committed["files"]) | set(now["files"])):
            if committed["files"].get(name) != now["files"].get(name):
                bad.append(name)
        if bad:
            print(f"parquet_reference: MISMATCH with {EXPECTED} for {', '.join(bad)}")
            sys.exit(1)
        print(f"parquet_reference: {len(now['files'])} files match {EXPECTED.relative_to(ROOT)} (pyarrow {pyarrow.__version__})")
        return
    print(json.dumps(now, indent=1, sort_keys=True))


main()
