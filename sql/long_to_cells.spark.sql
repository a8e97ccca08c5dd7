-- Spark SQL version of the DuckDB SQL run by sql/long_to_cells.py (same inputs, outputs and rules;
-- read that file's docstring and sql/duckdb/*.sql), in one pass: Spark partitions and spills the
-- grouping itself across its executors, so it needs no parts. Temporary views, so nothing is written until the caller saves the outputs, e.g.
--   spark.table("atlas_cells").write.parquet("cells/")
-- Checked by `tests/import/sql_cells_check.py --engine spark` (pyspark local mode; not a test step).
--
-- INPUTS (temporary views):
--   responses(model, condition, statement, template, `repeat`, selection, rationale, src_order)
--     e.g. spark.conf.set("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
--          df = spark.read.parquet("long/")          # hive partitions model=... come back as columns
--          df.selectExpr("*", "named_struct('f', input_file_name(), 'r', monotonically_increasing_id()) AS src_order")
--            .createOrReplaceTempView("responses")
--     (monotonically_increasing_id is increasing within a file split: the first row of a cell is the
--     first of its file, as with DuckDB's file_row_number.)
--   selection_map(raw, raw_out, evidence, obtained)
--
-- Run the statements one by one and materialise each view before the next (the check does
-- spark.table(v).localCheckpoint().createOrReplaceTempView(v); a pipeline would write each table):
-- Spark 4.3's optimizer rejects the whole chain at once (PLAN_VALIDATION_FAILED_RULE_IN_BATCH in
-- PushdownPredicatesAndPruneColumnsForCTEDef).

CREATE OR REPLACE TEMPORARY VIEW atlas_rows AS
SELECT CAST(model AS STRING) AS model,
       CAST(condition AS STRING) AS condition,
       CAST(statement AS STRING) AS statement,
       CAST(template AS STRING) AS template,
       CAST(`repeat` AS STRING) AS `repeat`,
       CAST(selection AS STRING) AS selection,
       CAST(rationale AS STRING) AS rationale,
       src_order
FROM responses
WHERE coalesce(CAST(model AS STRING), '') <> ''
  AND coalesce(CAST(condition AS STRING), '') <> ''
  AND coalesce(CAST(statement AS STRING), '') <> ''
  AND coalesce(CAST(template AS STRING), '') <> ''
  AND coalesce(CAST(`repeat` AS STRING), '') <> '';

CREATE OR REPLACE TEMPORARY VIEW atlas_picked AS
SELECT model, condition, statement, template, `repeat`,
       min(named_struct('o', src_order, 's', selection, 'r', rationale)) AS pick,
       count(*) AS n_rows
FROM atlas_rows
GROUP BY model, condition, statement, template, `repeat`;

CREATE OR REPLACE TEMPORARY VIEW atlas_levels AS
WITH ids AS (
  SELECT DISTINCT 'model' AS facet, model AS id FROM atlas_picked
  UNION SELECT DISTINCT 'condition', condition FROM atlas_picked
  UNION SELECT DISTINCT 'statement', statement FROM atlas_picked
  UNION SELECT DISTINCT 'template', template FROM atlas_picked
  UNION SELECT DISTINCT 'repeat', `repeat` FROM atlas_picked
), keyed AS (
  SELECT facet, id,
         CASE WHEN id RLIKE '^[+-]?[0-9]+$' AND length(regexp_replace(id, '^[+-]?0*', '')) <= 38
              THEN CAST(id AS DECIMAL(38, 0)) END AS num
  FROM ids
)
SELECT facet,
       row_number() OVER (PARTITION BY facet ORDER BY num IS NULL, num, id) - 1 AS idx,
       id
FROM keyed;

CREATE OR REPLACE TEMPORARY VIEW atlas_mapped AS
SELECT p.model, p.condition, p.statement, p.template, p.`repeat`, p.n_rows,
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

CREATE OR REPLACE TEMPORARY VIEW atlas_values AS
SELECT substr('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
              CAST(row_number() OVER (ORDER BY raw, evidence NULLS LAST, obtained) AS INT), 1) AS code,
       raw, evidence, obtained
FROM (SELECT DISTINCT raw, evidence, obtained FROM atlas_mapped) d;

CREATE OR REPLACE TEMPORARY VIEW atlas_cells AS
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
  JOIN atlas_levels lr ON lr.facet = 'repeat' AND lr.id = a.`repeat`
), texts AS (
  SELECT cell,
         row_number() OVER (PARTITION BY model_idx ORDER BY cell) - 1 AS text_rank
  FROM indexed
  WHERE coalesce(rationale, '') <> ''
)
SELECT i.cell, i.model_idx, i.condition_idx, i.statement_idx, i.template_idx, i.repeat_idx,
       i.model, i.condition, i.statement, i.template, i.`repeat`,
       i.raw, i.evidence, i.obtained, v.code,
       CASE WHEN t.cell IS NULL THEN NULL ELSE i.rationale END AS rationale,
       t.text_rank AS text_index,
       CASE WHEN t.cell IS NULL THEN NULL
            ELSE concat('rationale-', CAST(i.model_idx AS STRING), '-',
                        CAST(CAST(floor(t.text_rank / 100000) AS BIGINT) AS STRING), '.json')
       END AS text_shard,
       i.n_rows
FROM indexed i
JOIN atlas_values v
  ON v.raw = i.raw AND v.obtained = i.obtained AND v.evidence <=> i.evidence
LEFT JOIN texts t ON t.cell = i.cell;

CREATE OR REPLACE TEMPORARY VIEW atlas_codes AS
WITH n AS (SELECT facet, count(*) AS k FROM atlas_levels GROUP BY facet),
total AS (SELECT CAST(round(exp(sum(ln(k)))) AS BIGINT) AS cells FROM n),
grid AS (SELECT explode(sequence(CAST(0 AS BIGINT), cells - 1)) AS cell FROM total)
SELECT (SELECT cells FROM total) AS cells,
       concat_ws('', transform(array_sort(collect_list(named_struct('cell', g.cell, 'code', coalesce(c.code, '-')))),
                               x -> x.code)) AS codes
FROM grid g
LEFT JOIN atlas_cells c ON c.cell = g.cell;

CREATE OR REPLACE TEMPORARY VIEW atlas_summary AS
SELECT model, condition,
       count(*) AS responses,
       count(*) FILTER (WHERE evidence = 1) AS evidence_1,
       count(*) FILTER (WHERE evidence = 0) AS evidence_0,
       count(*) FILTER (WHERE evidence IS NULL) AS abstain,
       CAST(count(*) FILTER (WHERE evidence = 1) AS DOUBLE)
         / nullif(count(*) FILTER (WHERE evidence IS NOT NULL), 0) AS ber
FROM atlas_cells
GROUP BY model, condition;

CREATE OR REPLACE TEMPORARY VIEW atlas_checks AS
SELECT 'rows' AS check_name, (SELECT count(*) FROM atlas_rows) AS value
UNION ALL SELECT 'cells with a response', (SELECT count(*) FROM atlas_cells)
UNION ALL SELECT 'duplicate responses dropped', (SELECT coalesce(sum(n_rows - 1), 0) FROM atlas_cells)
UNION ALL SELECT 'distinct Selection values (at most 62)', (SELECT count(*) FROM atlas_values)
UNION ALL SELECT 'texts', (SELECT count(*) FROM atlas_cells WHERE rationale IS NOT NULL);
