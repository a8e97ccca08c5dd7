"""Long table of responses (one row per response, e.g. Parquet hive-partitioned by model) -> the
bundle's per-cell tables (docs/bundle-format.md), with DuckDB, one part at a time.

The SQL is in sql/duckdb/ and runs in three steps on one DuckDB connection:

1. levels.sql    once: the facet levels in the importer's "natural" order, from the key columns of
                 every row (one scan of five columns);
2. partition.sql once per part (e.g. per value of the hive partition column): that part's cells,
                 each indexed against the global levels, its dense codes and its text ranks;
3. finish.sql    once: the Selection dictionary, the dense `codes` string, the text shards, the per
                 model x condition BER (seed 000_... §3.3) and the checks.

Parts keep the memory of step 2 to one part's cells: at 10^8 rows with texts one pass over all rows
spills tens of GB on a 6 GB memory limit (docs/scale.md), one model partition at a time does not.
A part must hold whole cells and cover a range of cells no other part reaches into: parts by model
or by condition (the first two axes) do; step 3 stops with an error naming the parts otherwise.
One pass (`partition_by=None`) is the same SQL with a single part.

INPUTS (created on the connection before `aggregate`):
  responses(model, condition, statement, template, repeat, selection, rationale, src_order)
    Every facet column is read as text (CAST ... AS VARCHAR). src_order orders the rows (the first
    response of a cell wins, as in `atlas import`); for Parquet, `responses_view` writes it (and
    renames columns to their roles).
  selection_map(raw, raw_out, evidence, obtained)
    The mapping's `selection.map`: a value read (raw) -> stored raw text (raw_out, NULL = as read),
    evidence 1 / 0 / NULL (Abstain), obtained ('regex', 'fallback', 'parser_failure', 'refusal').

OUTPUTS (on the connection): atlas_levels(facet, idx, id), atlas_values(code, raw, evidence,
obtained), atlas_cells (a view; one row per cell with a response: cell, the five indexes and ids,
raw, evidence, obtained, code, rationale, text_index, text_shard, n_rows), atlas_codes(cells, codes),
atlas_summary(model, condition, responses, evidence_1, evidence_0, abstain, ber),
atlas_checks(check_name, value).

`write_bundle` then writes the bundle the app opens (format v1, docs/bundle-format.md): bundle.json
with the levels, the Selection dictionary and the dense codes, and the Rationale texts in shard files
next to it (rationale-<model_idx>-<k>.json, the shards atlas_cells names), for designs of at most
50,000,000 cells (the format's limit; keep the first models of a larger one with `models`).

Command line (DuckDB from PyPI; writes cells.parquet, levels.parquet, values.parquet, codes.parquet,
summary.csv and checks.json into OUT, and with --metadata the bundle and its shards):

    python sql/long_to_cells.py 'long/**/*.parquet' OUT --partition-by model \
        --map agree=1 --map disagree=0 [--column condition=sys_prompt_type --column template= ...] \
        [--metadata meta.json] [--db OUT/atlas.duckdb] [--memory-limit 6GB] [--threads 2]

(meta.json: the bundle's `metadata` object, as in a mapping file: id, title, description, source,
license, content_warning.)

Errors: DuckDB's own (a missing column, an unreadable file), and step 3's InvalidInputException
"long_to_cells: parts interleave ..." or "... distinct Selection values; the format allows at most 62".
"""
import argparse
import json
import pathlib
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent / "duckdb"
# The format's limits (atlas_core::bundle::MAX_CELLS; the Selection code alphabet).
MAX_CELLS = 50_000_000
ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
FACETS = ["model", "condition", "statement", "template", "repeat"]
STEPS = {name: (HERE / f"{name}.sql").read_text() for name in ("levels", "partition", "finish")}


def quote(value):
    """A SQL string literal."""
    return "'" + str(value).replace("'", "''") + "'"


ROLES = ["model", "condition", "statement", "template", "repeat", "selection", "rationale"]


def responses_view(con, parquet_glob, columns=None):
    """Creates the view `responses` over (hive-partitioned) Parquet files; src_order is (file, row).

    columns: role -> column name for the roles named differently in the files (ROLES; by default
    each role's own name); an empty name gives that facet one level, "1", for every row (e.g. no
    template column). Raises ValueError naming each role whose column the files lack, with the
    columns they have; duckdb.Error when no file matches or one is not Parquet.
    """
    columns = columns or {}
    unknown = sorted(set(columns) - set(ROLES))
    if unknown:
        raise ValueError(f"long_to_cells: unknown role(s) {', '.join(unknown)}; the roles are {', '.join(ROLES)}")

    def pick(role):
        name = columns.get(role, role)
        if name == "":
            return f"'1' AS \"{role}\""
        return '"' + name.replace('"', '""') + f'" AS "{role}"'

    source = (f"read_parquet({quote(parquet_glob)}, hive_partitioning = true, "
              "hive_types_autocast = false, filename = true, file_row_number = true)")
    have = [r[0] for r in con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
            if r[0] not in ("filename", "file_row_number")]
    missing = [(role, columns.get(role, role)) for role in ROLES
               if columns.get(role, role) != "" and columns.get(role, role) not in have]
    if missing:
        raise ValueError(
            "long_to_cells: " + "; ".join(f"no column {name!r} for the {role}" for role, name in missing)
            + f" (name it with --column ROLE=NAME); the files' columns are: {', '.join(have)}")
    con.execute(f"""CREATE OR REPLACE VIEW responses AS
        SELECT {", ".join(pick(r) for r in ROLES)},
               {{'f': filename, 'r': file_row_number}} AS src_order
        FROM read_parquet({quote(parquet_glob)}, hive_partitioning = true,
                          hive_types_autocast = false, filename = true, file_row_number = true)""")


def aggregate(con, partition_by=None, log=None):
    """Runs the three steps over `responses` on the DuckDB connection `con`.

    partition_by: None (one pass over every row) or the name of a column of `responses` (one part
    per distinct value, in sorted order; a hive partition column lets DuckDB read only that
    partition's files). log: optional callable(str) told each part's label and wall time.
    Returns the list of part labels (None for one pass).
    """
    con.execute(STEPS["levels"])
    if partition_by is None:
        parts = [None]
    else:
        col = '"' + partition_by.replace('"', '""') + '"'
        parts = [r[0] for r in con.execute(f"SELECT DISTINCT CAST({col} AS VARCHAR) AS v FROM responses ORDER BY v")
                 .fetchall()]
    for label in parts:
        t0 = time.perf_counter()
        if label is None and partition_by is None:
            where = ""
        elif label is None:
            where = f" WHERE {col} IS NULL"
        else:
            where = f" WHERE CAST({col} AS VARCHAR) = {quote(label)}"
        con.execute(f"CREATE OR REPLACE TEMP VIEW atlas_part_responses AS SELECT * FROM responses{where}")
        con.execute(f"SET VARIABLE atlas_part_label = {'NULL' if label is None else quote(label)}")
        con.execute(STEPS["partition"])
        if log:
            log(f"part {label if label is not None else '(all rows)'}: {time.perf_counter() - t0:.1f} s")
    con.execute(STEPS["finish"])
    return parts


def write_bundle(con, out, metadata, texts=True, models=None, batch=100_000):
    """Writes OUT/bundle.json and, with `texts`, its Rationale shards OUT/rationale-<m>-<k>.json from
    the outputs of `aggregate` on `con`.

    metadata: the bundle's `metadata` object (dict). models: keep only the first `models` models
    (model is the first axis, so their cells are a prefix of the codes); None = all. Conditions are
    declared with a Selection readout; a statement's text is its id (the long table has none).
    Returns {"cells", "bundle_bytes", "shards", "texts"}. Raises ValueError when the kept cells
    exceed MAX_CELLS, naming how many models would fit.
    """
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    by = {f: [] for f in FACETS}
    for facet, level in con.execute("SELECT facet, id FROM atlas_levels ORDER BY facet, idx").fetchall():
        by[facet].append(level)
    n_cells, codes = con.execute("SELECT cells, codes FROM atlas_codes").fetchone()
    per_model = n_cells // max(1, len(by["model"]))
    keep = len(by["model"]) if models is None else max(0, min(models, len(by["model"])))
    cells = keep * per_model
    if cells > MAX_CELLS:
        raise ValueError(
            f"long_to_cells: {cells:,} cells in {keep} models exceed the bundle format's {MAX_CELLS:,}; "
            f"keep at most {MAX_CELLS // max(1, per_model)} models per bundle (models=...)")
    values = sorted(con.execute("SELECT code, raw, evidence, obtained FROM atlas_values").fetchall(),
                    key=lambda v: ALPHABET.index(v[0]))
    bundle_id = metadata["id"]
    if "produced_by" not in metadata:
        import duckdb

        parts = [r[0] for r in con.execute("SELECT label FROM atlas_parts ORDER BY part").fetchall()]
        metadata = {**metadata, "produced_by": {
            "tool": f"sql/long_to_cells.py (DuckDB {duckdb.__version__})",
            "notes": ("one pass over all rows" if parts == [None] else
                      f"{len(parts)} parts: {', '.join(str(p) for p in parts)}")
                     + (f"; the first {keep} of {len(by['model'])} models" if keep < len(by["model"]) else "")}}
    shards, n_texts = [], 0
    if texts:
        cursor = con.execute(
            "SELECT text_shard, cell, rationale FROM atlas_cells "
            "WHERE rationale IS NOT NULL AND model_idx < ? ORDER BY cell", [keep])
        current, got_cells, got_texts = None, [], []

        def flush():
            if current is None:
                return
            shard = {"format": "audit-atlas-text-shard", "version": 1, "bundle": bundle_id,
                     "field": "rationale", "cells": got_cells, "texts": got_texts}
            (out / current).write_text(json.dumps(shard, ensure_ascii=False), encoding="utf-8")
            shards.append({"path": current, "count": len(got_cells),
                           "first_cell": got_cells[0], "last_cell": got_cells[-1]})

        while rows := cursor.fetchmany(batch):
            for shard, cell, text in rows:
                if shard != current:
                    flush()
                    current, got_cells, got_texts = shard, [], []
                got_cells.append(cell)
                got_texts.append(text)
                n_texts += 1
        flush()

    def level(facet, v):
        extra = {"condition": {"has_selection": True}, "statement": {"text": v}}.get(facet, {})
        return {"id": v, **extra}

    bundle = {
        "format": "audit-atlas-bundle", "version": 1, "metadata": metadata,
        "facets": [{"id": f, "levels": [level(f, v) for v in (by[f][:keep] if f == "model" else by[f])]}
                   for f in FACETS],
        "responses": {"axes": FACETS,
                      "selection": {"values": [{"raw": r, "evidence": e, "obtained": o} for _, r, e, o in values],
                                    "codes": codes[:cells]}},
    }
    if shards:
        bundle["texts"] = {"rationale": {
            "description": "The long table's rationale column, the first response of each cell "
                           "(sql/long_to_cells.py).",
            "shards": shards}}
    (out / "bundle.json").write_text(json.dumps(bundle, ensure_ascii=False), encoding="utf-8")
    return {"cells": cells, "bundle_bytes": (out / "bundle.json").stat().st_size,
            "shards": len(shards), "texts": n_texts}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("parquet", help="glob of the long table's Parquet files, e.g. 'long/**/*.parquet'")
    ap.add_argument("out", type=pathlib.Path, help="folder for the outputs")
    ap.add_argument("--partition-by", metavar="ROLE",
                    help="run one part per value of this role (model or condition; a hive partition column lets DuckDB read one partition per part)")
    ap.add_argument("--column", action="append", default=[], metavar="ROLE=NAME",
                    help="the column holding a role (model, condition, statement, template, repeat, "
                         "selection, rationale) when it is named otherwise; ROLE= gives a facet one level")
    ap.add_argument("--map", action="append", default=[], metavar="VALUE=EVIDENCE[:RAW]",
                    help="a Selection value, its evidence (1, 0 or abstain) and optionally the raw text "
                         "stored for it (repeatable; write --map=-1=0:disagree for a value starting with -)")
    ap.add_argument("--metadata", type=pathlib.Path,
                    help="the bundle's metadata (JSON object); with it OUT/bundle.json and its shards are written")
    ap.add_argument("--db", help="DuckDB database file (default: in memory; spills to OUT/spill)")
    ap.add_argument("--memory-limit", default="6GB")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    import duckdb

    args.out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(args.db or ":memory:")
    con.execute(f"SET threads = {args.threads}; SET memory_limit = {quote(args.memory_limit)}; "
                f"SET temp_directory = {quote(args.out / 'spill')}; SET preserve_insertion_order = false")
    columns = {}
    for item in args.column:
        role, sep, name = item.partition("=")
        if not sep:
            sys.exit(f"--column {item!r}: expected ROLE=NAME")
        columns[role] = name
    try:
        responses_view(con, args.parquet, columns)
    except ValueError as e:
        sys.exit(f"{e} ({args.parquet})")
    except duckdb.Error as e:
        sys.exit(f"long_to_cells: {args.parquet}: {e}")
    con.execute("CREATE OR REPLACE TABLE selection_map "
                "(raw VARCHAR, raw_out VARCHAR, evidence INTEGER, obtained VARCHAR)")
    for item in args.map:
        value, sep, target = item.rpartition("=")
        ev, _, raw_out = target.partition(":")
        if not sep or ev not in ("1", "0", "abstain"):
            sys.exit(f"--map {item!r}: expected VALUE=1, VALUE=0 or VALUE=abstain, optionally :RAW (the raw text stored)")
        con.execute("INSERT INTO selection_map VALUES (?, ?, ?, 'regex')",
                    [value, raw_out or None, None if ev == "abstain" else int(ev)])
    try:
        aggregate(con, args.partition_by, log=lambda s: print(s, file=sys.stderr))
        write_outputs(con, args.out)
    except duckdb.Error as e:
        sys.exit(f"long_to_cells: {e}")
    facts = dict(con.execute("SELECT check_name, value FROM atlas_checks").fetchall())
    if args.metadata:
        try:
            facts["bundle"] = write_bundle(con, args.out, json.loads(args.metadata.read_text()))
        except ValueError as e:
            sys.exit(str(e))
    print(json.dumps(facts))


def write_outputs(con, out):
    """COPYs the outputs into the folder `out` (Parquet with zstd; summary as CSV)."""
    out = pathlib.Path(out)
    con.execute(f"COPY (SELECT * FROM atlas_cells) TO {quote(out / 'cells.parquet')} (FORMAT parquet, COMPRESSION zstd)")
    con.execute(f"COPY atlas_levels TO {quote(out / 'levels.parquet')} (FORMAT parquet)")
    con.execute(f"COPY atlas_values TO {quote(out / 'values.parquet')} (FORMAT parquet)")
    con.execute(f"COPY atlas_summary TO {quote(out / 'summary.csv')} (HEADER)")
    con.execute(f"COPY (SELECT codes FROM atlas_codes) TO {quote(out / 'codes.parquet')} (FORMAT parquet)")
    (out / "checks.json").write_text(json.dumps(dict(con.execute("SELECT check_name, value FROM atlas_checks").fetchall())))


if __name__ == "__main__":
    main()
