"""One phase of bench/scale_bench.sh (run as its own process, so that its peak memory is its own).

    python bench/scale_phase.py gen|count|scan|aggregate|bundle DIR ROWS

Prints one JSON line: phase, wall_s, peak_rss_mib (ru_maxrss of this process), and phase facts.
"""
import json
import pathlib
import resource
import sys
import time

import duckdb

ROOT = pathlib.Path(__file__).resolve().parents[1]
phase, d, rows = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
MODELS, CONDITIONS, TEMPLATES, REPEATS = 8, 3, 3, 25
STATEMENTS = rows // (MODELS * CONDITIONS * TEMPLATES * REPEATS)
N = MODELS * CONDITIONS * TEMPLATES * REPEATS * STATEMENTS
MEM = "6GB"  # the machine has 24 GB shared by several engineers; DuckDB spills past this.


def connect():
    con = duckdb.connect()
    con.execute(f"SET threads = 2; SET memory_limit = '{MEM}'; SET temp_directory = '{d / 'spill'}'; "
                "SET preserve_insertion_order = false")
    return con


LONG = f"read_parquet('{d / 'long'}/**/*.parquet', hive_partitioning = true, hive_types_autocast = false"
t0 = time.perf_counter()
facts = {}
if phase == "gen":
    # Row i -> (model, condition, template, statement, repeat) in mixed radix; Selection and Rationale
    # from a hash of i (deterministic; SYNTHETIC, not model output).
    con = connect()
    con.execute(f"""COPY (
      SELECT 'model-' || (i // {CONDITIONS * TEMPLATES * STATEMENTS * REPEATS}) AS model,
             ['benign', 'untargeted', 'targeted'][1 + (i // {TEMPLATES * STATEMENTS * REPEATS}) % {CONDITIONS}] AS condition,
             's' || ((i // {REPEATS}) % {STATEMENTS}) AS statement,
             'w' || (1 + (i // {STATEMENTS * REPEATS}) % {TEMPLATES}) AS template,
             CAST(1 + i % {REPEATS} AS INTEGER) AS "repeat",
             ['agree', 'disagree', 'disagree', 'unsure', ''][CAST(1 + hash(i) % 5 AS BIGINT)] AS selection,
             'Synthetic rationale ' || CAST(hash(i) % 1000003 AS BIGINT) AS rationale
      FROM range({N}) t(i)
    ) TO '{d / 'long'}' (FORMAT parquet, PARTITION_BY (model), COMPRESSION zstd, ROW_GROUP_SIZE 1000000)""")
    facts = {"rows": N, "statements": STATEMENTS,
             "parquet_bytes": sum(p.stat().st_size for p in (d / "long").rglob("*.parquet"))}
elif phase == "count":
    con = connect()
    facts = {"count": con.execute(f"SELECT count(*) FROM {LONG})").fetchone()[0]}
elif phase == "scan":
    # A plain scan reading every column the aggregation reads.
    con = connect()
    r = con.execute(f"""SELECT count(*), count(DISTINCT model), count(statement), count(selection),
                        sum(length(rationale)), max("repeat"), max(condition), max(template) FROM {LONG})""").fetchone()
    facts = {"rows": r[0], "rationale_chars": int(r[4])}
elif phase == "aggregate":
    con = connect()
    con.execute(f"""CREATE VIEW responses AS
        SELECT model, condition, statement, template, "repeat", selection, rationale,
               {{'f': filename, 'r': file_row_number}} AS src_order
        FROM {LONG}, filename = true, file_row_number = true)""")
    con.execute("""CREATE TABLE selection_map AS SELECT * FROM (VALUES
        ('agree', NULL, 1, 'regex'), ('disagree', NULL, 0, 'regex')) t(raw, raw_out, evidence, obtained)""")
    con.execute((ROOT / "sql/long_to_cells.duckdb.sql").read_text())
    con.execute(f"COPY atlas_cells TO '{d / 'cells.parquet'}' (FORMAT parquet, COMPRESSION zstd)")
    con.execute(f"COPY atlas_levels TO '{d / 'levels.parquet'}' (FORMAT parquet)")
    con.execute(f"COPY atlas_values TO '{d / 'values.parquet'}' (FORMAT parquet)")
    con.execute(f"COPY (SELECT * FROM atlas_summary) TO '{d / 'summary.csv'}' (HEADER)")
    con.execute(f"COPY (SELECT codes FROM atlas_codes) TO '{d / 'codes.parquet'}' (FORMAT parquet)")
    facts = dict(con.execute("SELECT check_name, value FROM atlas_checks").fetchall())
elif phase == "bundle":
    # The app's bundle of the first MAX models whose cells fit the format's 50,000,000-cell limit
    # (model is the first axis, so their cells are a prefix of `codes`); Selection only (the
    # texts stay in atlas_cells / shard files).
    con = connect()
    levels = con.execute(f"SELECT facet, idx, id FROM read_parquet('{d / 'levels.parquet'}') ORDER BY facet, idx").fetchall()
    values = con.execute(f"SELECT code, raw, evidence, obtained FROM read_parquet('{d / 'values.parquet'}') ORDER BY code").fetchall()
    codes = con.execute(f"SELECT codes FROM read_parquet('{d / 'codes.parquet'}')").fetchone()[0]
    by = {}
    for f, i, v in levels:
        by.setdefault(f, []).append(v)
    per_model = len(codes) // len(by["model"])
    keep = max(1, min(len(by["model"]), 50_000_000 // per_model))
    def level(facet, v):
        # What the format requires beyond the id (docs/bundle-format.md): a condition says it has a
        # Selection readout; a statement has a text (here its id, as `atlas import` does).
        extra = {"condition": {"has_selection": True}, "statement": {"text": v}}.get(facet, {})
        return {"id": v, **extra}

    alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    vals = sorted(values, key=lambda v: alphabet.index(v[0]))
    bundle = {
        "format": "audit-atlas-bundle", "version": 1,
        "metadata": {"id": "scale-bench", "title": f"SYNTHETIC scale benchmark ({keep} of {len(by['model'])} models)",
                     "description": "SYNTHETIC responses generated by bench/scale_bench.sh (not model output).",
                     "source": {"citation": "bench/scale_bench.sh"},
                     "license": {"id": "CC0-1.0", "attribution": "none"}, "content_warning": None,
                     "produced_by": {"tool": "sql/long_to_cells.duckdb.sql"}},
        "facets": [{"id": f, "levels": [level(f, v) for v in (by[f][:keep] if f == "model" else by[f])]}
                   for f in ["model", "condition", "statement", "template", "repeat"]],
        "responses": {"axes": ["model", "condition", "statement", "template", "repeat"],
                      "selection": {"values": [{"raw": r, "evidence": e, "obtained": o} for _, r, e, o in vals],
                                    "codes": codes[: keep * per_model]}},
    }
    (d / "bundle.json").write_text(json.dumps(bundle))
    facts = {"models_in_bundle": keep, "cells": keep * per_model, "bundle_bytes": (d / "bundle.json").stat().st_size}
wall = time.perf_counter() - t0
print(json.dumps({"phase": phase, "wall_s": round(wall, 2),
                  "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), **facts}))
