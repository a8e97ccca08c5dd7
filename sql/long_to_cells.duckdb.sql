-- Long table of responses (one row per response, Parquet, e.g. hive-partitioned by model) -> the
-- bundle's per-cell table (docs/bundle-format.md): facet levels in the importer's "natural" order,
-- each cell's index in the dense layout, its Selection (raw, evidence, obtained) and one-character
-- code, the dense `codes` string, which text shard holds its Rationale, and per model x condition
-- counts and the Selection BER (seed 000_... §3.3; a fraction, Abstain left out).
--
-- DuckDB dialect (tested by tests/import/sql_cells_check.py against `atlas import` of the same data
-- as CSV; the Spark SQL version is sql/long_to_cells.spark.sql). Out-of-core: DuckDB spills to disk
-- when the data does not fit in memory (SET temp_directory / memory_limit).
--
-- INPUTS: two views the caller creates first.
--   responses(model, condition, statement, template, repeat, selection, rationale, src_order)
--     Every facet column is read as text (CAST ... AS VARCHAR); rename your columns in the view.
--     src_order orders the rows (the first response of a cell wins, as in `atlas import`); for Parquet:
--       CREATE VIEW responses AS
--       SELECT model, condition, statement, template, "repeat", selection, rationale,
--              {'f': filename, 'r': file_row_number} AS src_order
--       FROM read_parquet('long/**/*.parquet', hive_partitioning = true,
--                         hive_types_autocast = false, filename = true, file_row_number = true);
--     (hive_types_autocast = false keeps a partition value such as model=07 the text '07'.)
--   selection_map(raw, raw_out, evidence, obtained)
--     The mapping's `selection.map`: a value read (raw) -> stored raw text (raw_out, NULL = as read),
--     evidence 1 / 0 / NULL (Abstain) and obtained ('regex', 'fallback', 'parser_failure', 'refusal').
--     A value not in it is Abstain with obtained 'regex' (the mapping's default "unmapped": "abstain");
--     an empty or NULL Selection is raw '' / Abstain / 'parser_failure', as in `atlas import`.
--
-- OUTPUTS (tables): atlas_levels(facet, idx, id), atlas_values(code, raw, evidence, obtained),
--   atlas_cells(cell, model_idx, condition_idx, statement_idx, template_idx, repeat_idx, model,
--   condition, statement, template, "repeat", raw, evidence, obtained, code, rationale, text_shard,
--   n_rows), atlas_codes(cells, codes), atlas_summary(model, condition, responses, evidence_1,
--   evidence_0, abstain, ber), atlas_checks(check_name, value).
--
-- Axes: model, condition, statement, template, repeat (the order `atlas import` uses), row-major,
-- last axis fastest. Level order "natural": integers (by value) first, then other ids by bytes.
-- Rows with an empty facet value are left out (the importer skips them). Text shards: one series per
-- model, at most 100,000 texts each ('rationale-<model_idx>-<part>.json'), as the default bundle
-- keeps one shard per model.

CREATE OR REPLACE TABLE atlas_rows AS
SELECT CAST(model AS VARCHAR) AS model,
       CAST(condition AS VARCHAR) AS condition,
       CAST(statement AS VARCHAR) AS statement,
       CAST(template AS VARCHAR) AS template,
       CAST("repeat" AS VARCHAR) AS "repeat",
       CAST(selection AS VARCHAR) AS selection,
       CAST(rationale AS VARCHAR) AS rationale,
       src_order
FROM responses
WHERE coalesce(CAST(model AS VARCHAR), '') <> ''
  AND coalesce(CAST(condition AS VARCHAR), '') <> ''
  AND coalesce(CAST(statement AS VARCHAR), '') <> ''
  AND coalesce(CAST(template AS VARCHAR), '') <> ''
  AND coalesce(CAST("repeat" AS VARCHAR), '') <> '';

-- One response per cell: the first by src_order (min over a struct compares its fields in order).
CREATE OR REPLACE TABLE atlas_picked AS
SELECT model, condition, statement, template, "repeat",
       min({'o': src_order, 's': selection, 'r': rationale}) AS pick,
       count(*) AS n_rows
FROM atlas_rows
GROUP BY model, condition, statement, template, "repeat";

CREATE OR REPLACE TABLE atlas_levels AS
WITH ids AS (
  SELECT DISTINCT 'model' AS facet, model AS id FROM atlas_picked
  UNION SELECT DISTINCT 'condition', condition FROM atlas_picked
  UNION SELECT DISTINCT 'statement', statement FROM atlas_picked
  UNION SELECT DISTINCT 'template', template FROM atlas_picked
  UNION SELECT DISTINCT 'repeat', "repeat" FROM atlas_picked
), keyed AS (
  -- An integer id is one that Rust's i128 parse accepts: an optional sign and digits only.
  SELECT facet, id,
         CASE WHEN regexp_full_match(id, '[+-]?[0-9]+') THEN TRY_CAST(id AS HUGEINT) END AS num
  FROM ids
)
SELECT facet,
       row_number() OVER (PARTITION BY facet ORDER BY num IS NULL, num, id) - 1 AS idx,
       id
FROM keyed;

CREATE OR REPLACE TABLE atlas_mapped AS
SELECT p.model, p.condition, p.statement, p.template, p."repeat", p.n_rows,
       p.pick.r AS rationale,
       CASE WHEN coalesce(p.pick.s, '') = '' THEN ''
            ELSE coalesce(m.raw_out, p.pick.s) END AS raw,
       CASE WHEN coalesce(p.pick.s, '') = '' THEN NULL
            WHEN m.raw IS NOT NULL THEN m.evidence END AS evidence,
       CASE WHEN coalesce(p.pick.s, '') = '' THEN 'parser_failure'
            WHEN m.raw IS NOT NULL THEN coalesce(m.obtained, 'regex')
            ELSE 'regex' END AS obtained
FROM atlas_picked p
LEFT JOIN selection_map m ON m.raw = p.pick.s;

-- The Selection dictionary: distinct (raw, evidence, obtained), sorted; code = alphabet[idx].
CREATE OR REPLACE TABLE atlas_values AS
SELECT substr('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
              CAST(row_number() OVER (ORDER BY raw, evidence NULLS LAST, obtained) AS INTEGER), 1) AS code,
       raw, evidence, obtained
FROM (SELECT DISTINCT raw, evidence, obtained FROM atlas_mapped);

CREATE OR REPLACE TABLE atlas_cells AS
WITH n AS (
  SELECT max(CASE WHEN facet = 'condition' THEN idx END) + 1 AS nc,
         max(CASE WHEN facet = 'statement' THEN idx END) + 1 AS ns,
         max(CASE WHEN facet = 'template' THEN idx END) + 1 AS nt,
         max(CASE WHEN facet = 'repeat' THEN idx END) + 1 AS nr
  FROM atlas_levels
), indexed AS (
  SELECT a.*, lm.idx AS model_idx, lc.idx AS condition_idx, ls.idx AS statement_idx,
         lt.idx AS template_idx, lr.idx AS repeat_idx,
         ((((lm.idx * n.nc + lc.idx) * n.ns + ls.idx) * n.nt + lt.idx) * n.nr + lr.idx) AS cell
  FROM atlas_mapped a
  CROSS JOIN n
  JOIN atlas_levels lm ON lm.facet = 'model' AND lm.id = a.model
  JOIN atlas_levels lc ON lc.facet = 'condition' AND lc.id = a.condition
  JOIN atlas_levels ls ON ls.facet = 'statement' AND ls.id = a.statement
  JOIN atlas_levels lt ON lt.facet = 'template' AND lt.id = a.template
  JOIN atlas_levels lr ON lr.facet = 'repeat' AND lr.id = a."repeat"
), texts AS (
  SELECT cell,
         row_number() OVER (PARTITION BY model_idx ORDER BY cell) - 1 AS text_rank
  FROM indexed
  WHERE coalesce(rationale, '') <> ''
)
SELECT i.cell, i.model_idx, i.condition_idx, i.statement_idx, i.template_idx, i.repeat_idx,
       i.model, i.condition, i.statement, i.template, i."repeat",
       i.raw, i.evidence, i.obtained, v.code,
       CASE WHEN t.cell IS NULL THEN NULL ELSE i.rationale END AS rationale,
       CASE WHEN t.cell IS NULL THEN NULL
            ELSE 'rationale-' || i.model_idx || '-' || CAST(floor(t.text_rank / 100000) AS BIGINT) || '.json'
       END AS text_shard,
       i.n_rows
FROM indexed i
JOIN atlas_values v
  ON v.raw = i.raw AND v.obtained = i.obtained AND v.evidence IS NOT DISTINCT FROM i.evidence
LEFT JOIN texts t ON t.cell = i.cell;

-- The dense column: one character per cell of the full grid, '-' = no response.
CREATE OR REPLACE TABLE atlas_codes AS
WITH n AS (SELECT facet, count(*) AS k FROM atlas_levels GROUP BY facet),
total AS (SELECT CAST(round(exp(sum(ln(k)))) AS BIGINT) AS cells FROM n)
SELECT total.cells,
       string_agg(coalesce(c.code, '-'), '' ORDER BY g.cell) AS codes
FROM total
CROSS JOIN range(total.cells) g(cell)
LEFT JOIN atlas_cells c ON c.cell = g.cell
GROUP BY total.cells;

-- Per model x condition, all responses of every cell (RepeatPolicy "all"): Selection BER = share of
-- bias evidence among non-Abstain responses (a fraction, seed 000_... §3.3).
CREATE OR REPLACE TABLE atlas_summary AS
SELECT model, condition,
       count(*) AS responses,
       count(*) FILTER (WHERE evidence = 1) AS evidence_1,
       count(*) FILTER (WHERE evidence = 0) AS evidence_0,
       count(*) FILTER (WHERE evidence IS NULL) AS abstain,
       CAST(count(*) FILTER (WHERE evidence = 1) AS DOUBLE)
         / nullif(count(*) FILTER (WHERE evidence IS NOT NULL), 0) AS ber
FROM atlas_cells
GROUP BY model, condition
ORDER BY model, condition;

CREATE OR REPLACE TABLE atlas_checks AS
SELECT 'rows' AS check_name, (SELECT count(*) FROM atlas_rows) AS value
UNION ALL SELECT 'cells with a response', (SELECT count(*) FROM atlas_cells)
UNION ALL SELECT 'duplicate responses dropped', (SELECT coalesce(sum(n_rows - 1), 0) FROM atlas_cells)
UNION ALL SELECT 'distinct Selection values (at most 62)', (SELECT count(*) FROM atlas_values)
UNION ALL SELECT 'texts', (SELECT count(*) FROM atlas_cells WHERE rationale IS NOT NULL);
