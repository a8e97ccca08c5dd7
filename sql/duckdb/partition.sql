-- Step 2 of 3 (DuckDB): one part of the long table -> its cells. Run once per part, after step 1,
-- with the view `atlas_part_responses` holding that part's rows (same columns as `responses`) and the
-- variable atlas_part_label (SET VARIABLE atlas_part_label = '...'; NULL for one pass over all rows).
-- A part holds whole cells: every response of a cell is in the same part (true for parts by a facet
-- column, e.g. one hive partition model=...); step 3 checks that parts do not interleave.
--
-- Each cell keeps its first response by src_order (min over a struct compares its fields in order),
-- as `atlas import` keeps the first row; the Selection goes through `selection_map`: a value not in
-- it is Abstain with obtained 'regex'; an empty or NULL Selection is raw '' / Abstain /
-- 'parser_failure'. Cells are indexed against the global levels of step 1, row-major over
-- model, condition, statement, template, repeat (last axis fastest).

CREATE OR REPLACE TEMP TABLE atlas_p_cells AS
WITH picked AS (
  SELECT model, condition, statement, template, "repeat",
         min({'o': src_order, 's': selection, 'r': rationale}) AS pick,
         count(*) AS n_rows
  FROM (SELECT CAST(model AS VARCHAR) AS model,
               CAST(condition AS VARCHAR) AS condition,
               CAST(statement AS VARCHAR) AS statement,
               CAST(template AS VARCHAR) AS template,
               CAST("repeat" AS VARCHAR) AS "repeat",
               CAST(selection AS VARCHAR) AS selection,
               CAST(rationale AS VARCHAR) AS rationale,
               src_order
        FROM atlas_part_responses
        WHERE coalesce(CAST(model AS VARCHAR), '') <> ''
          AND coalesce(CAST(condition AS VARCHAR), '') <> ''
          AND coalesce(CAST(statement AS VARCHAR), '') <> ''
          AND coalesce(CAST(template AS VARCHAR), '') <> ''
          AND coalesce(CAST("repeat" AS VARCHAR), '') <> '')
  GROUP BY model, condition, statement, template, "repeat"
), mapped AS (
  SELECT p.model, p.condition, p.statement, p.template, p."repeat", p.n_rows,
         p.pick.r AS rationale,
         CASE WHEN coalesce(p.pick.s, '') = '' THEN ''
              ELSE coalesce(m.raw_out, p.pick.s) END AS raw,
         CASE WHEN coalesce(p.pick.s, '') = '' THEN NULL
              WHEN m.raw IS NOT NULL THEN m.evidence END AS evidence,
         CASE WHEN coalesce(p.pick.s, '') = '' THEN 'parser_failure'
              WHEN m.raw IS NOT NULL THEN coalesce(m.obtained, 'regex')
              ELSE 'regex' END AS obtained
  FROM picked p
  LEFT JOIN selection_map m ON m.raw = p.pick.s
)
SELECT (SELECT count(*) FROM atlas_parts)::INTEGER AS part,
       ((((lm.idx * n.nc + lc.idx) * n.ns + ls.idx) * n.nt + lt.idx) * n.nr + lr.idx) AS cell,
       lm.idx AS model_idx, lc.idx AS condition_idx, ls.idx AS statement_idx,
       lt.idx AS template_idx, lr.idx AS repeat_idx,
       a.model, a.condition, a.statement, a.template, a."repeat",
       a.raw, a.evidence, a.obtained,
       CASE WHEN coalesce(a.rationale, '') <> '' THEN a.rationale END AS rationale,
       a.n_rows
FROM mapped a
CROSS JOIN atlas_shape n
JOIN atlas_levels lm ON lm.facet = 'model' AND lm.id = a.model
JOIN atlas_levels lc ON lc.facet = 'condition' AND lc.id = a.condition
JOIN atlas_levels ls ON ls.facet = 'statement' AND ls.id = a.statement
JOIN atlas_levels lt ON lt.facet = 'template' AND lt.id = a.template
JOIN atlas_levels lr ON lr.facet = 'repeat' AND lr.id = a."repeat";

INSERT INTO atlas_part_values
SELECT part,
       substr('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
              CAST(row_number() OVER (ORDER BY raw, evidence NULLS LAST, obtained) AS INTEGER), 1),
       raw, evidence, obtained
FROM (SELECT DISTINCT part, raw, evidence, obtained FROM atlas_p_cells);

INSERT INTO atlas_cells_raw
SELECT part, cell, model_idx, condition_idx, statement_idx, template_idx, repeat_idx,
       model, condition, statement, template, "repeat", raw, evidence, obtained, rationale,
       CASE WHEN rationale IS NOT NULL
            THEN count(rationale) OVER (PARTITION BY model_idx ORDER BY cell) - 1 END AS text_rank,
       n_rows
FROM atlas_p_cells;

-- The part's dense codes per model over the cell range it covers, in its own dictionary: each code
-- preceded by one '-' per empty cell since the previous response of that model.
INSERT INTO atlas_part_ranges
WITH coded AS (
  SELECT c.model_idx, c.cell, c.rationale, c.n_rows, v.local_code,
         c.cell - coalesce(lag(c.cell) OVER (PARTITION BY c.model_idx ORDER BY c.cell), c.cell - 1) - 1 AS gap
  FROM atlas_p_cells c
  JOIN atlas_part_values v
    ON v.part = c.part AND v.raw = c.raw AND v.obtained = c.obtained
   AND v.evidence IS NOT DISTINCT FROM c.evidence
)
SELECT (SELECT count(*) FROM atlas_parts)::INTEGER, model_idx, min(cell), max(cell), count(*),
       count(rationale), sum(n_rows - 1),
       string_agg(repeat('-', gap) || local_code, '' ORDER BY cell)
FROM coded
GROUP BY model_idx;

INSERT INTO atlas_parts
SELECT (SELECT count(*) FROM atlas_parts)::INTEGER, getvariable('atlas_part_label'),
       (SELECT coalesce(sum(n_rows), 0) FROM atlas_p_cells);

DROP TABLE atlas_p_cells;
