-- Step 1 of 3 (DuckDB): the facet levels of the whole long table, from its five key columns alone.
-- Run once, before the partitions (sql/long_to_cells.py runs the three steps; read its docstring
-- for the inputs). Reads only model, condition, statement, template, "repeat" of the view
-- `responses` (Parquet column projection: one scan of the key columns, seconds at 10^8 rows).
--
-- OUTPUTS: atlas_levels(facet, idx, id) in the importer's "natural" order: integer ids (those Rust's
-- i128 parse accepts: an optional sign and digits) by value first, then the other ids by bytes.
-- atlas_shape(nm, nc, ns, nt, nr, cells): level counts and the size of the full grid.
-- Empty tables that step 2 fills: atlas_cells_raw, atlas_part_ranges, atlas_part_values, atlas_parts.
-- Rows with an empty facet value are left out (the importer skips them).

CREATE OR REPLACE TABLE atlas_levels AS
WITH ids AS (
  SELECT list(DISTINCT CAST(model AS VARCHAR)) AS model,
         list(DISTINCT CAST(condition AS VARCHAR)) AS condition,
         list(DISTINCT CAST(statement AS VARCHAR)) AS statement,
         list(DISTINCT CAST(template AS VARCHAR)) AS template,
         list(DISTINCT CAST("repeat" AS VARCHAR)) AS "repeat"
  FROM responses
  WHERE coalesce(CAST(model AS VARCHAR), '') <> ''
    AND coalesce(CAST(condition AS VARCHAR), '') <> ''
    AND coalesce(CAST(statement AS VARCHAR), '') <> ''
    AND coalesce(CAST(template AS VARCHAR), '') <> ''
    AND coalesce(CAST("repeat" AS VARCHAR), '') <> ''
), flat AS (
  SELECT 'model' AS facet, unnest(model) AS id FROM ids
  UNION ALL SELECT 'condition', unnest(condition) FROM ids
  UNION ALL SELECT 'statement', unnest(statement) FROM ids
  UNION ALL SELECT 'template', unnest(template) FROM ids
  UNION ALL SELECT 'repeat', unnest("repeat") FROM ids
), keyed AS (
  SELECT facet, id,
         CASE WHEN regexp_full_match(id, '[+-]?[0-9]+') THEN TRY_CAST(id AS HUGEINT) END AS num
  FROM flat
)
SELECT facet,
       row_number() OVER (PARTITION BY facet ORDER BY num IS NULL, num, id) - 1 AS idx,
       id
FROM keyed;

CREATE OR REPLACE TABLE atlas_shape AS
SELECT nm, nc, ns, nt, nr, nm * nc * ns * nt * nr AS cells
FROM (SELECT count(*) FILTER (WHERE facet = 'model') AS nm,
             count(*) FILTER (WHERE facet = 'condition') AS nc,
             count(*) FILTER (WHERE facet = 'statement') AS ns,
             count(*) FILTER (WHERE facet = 'template') AS nt,
             count(*) FILTER (WHERE facet = 'repeat') AS nr
      FROM atlas_levels);

-- One row per cell with a response (the first response by src_order), without its code.
-- part: which pass wrote it; text_rank: its text's rank among its model's texts in that part.
CREATE OR REPLACE TABLE atlas_cells_raw (
  part INTEGER, cell BIGINT, model_idx BIGINT, condition_idx BIGINT, statement_idx BIGINT,
  template_idx BIGINT, repeat_idx BIGINT, model VARCHAR, condition VARCHAR, statement VARCHAR,
  template VARCHAR, "repeat" VARCHAR, raw VARCHAR, evidence INTEGER, obtained VARCHAR,
  rationale VARCHAR, text_rank BIGINT, n_rows BIGINT);
-- Per part and model: the cell range it covers, its cells, texts, rows beyond the first, and its
-- dense codes over [min_cell, max_cell] ('-' = no response) in the part's own dictionary.
CREATE OR REPLACE TABLE atlas_part_ranges (
  part INTEGER, model_idx BIGINT, min_cell BIGINT, max_cell BIGINT, n_cells BIGINT,
  n_texts BIGINT, duplicates BIGINT, codes VARCHAR);
-- Per part: its dictionary of Selection values (local_code = alphabet[rank]).
CREATE OR REPLACE TABLE atlas_part_values (
  part INTEGER, local_code VARCHAR, raw VARCHAR, evidence INTEGER, obtained VARCHAR);
-- Per part: its label (the partition value, or NULL for one pass) and rows read.
CREATE OR REPLACE TABLE atlas_parts (part INTEGER, label VARCHAR, "rows" BIGINT);
