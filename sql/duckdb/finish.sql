-- Step 3 of 3 (DuckDB): the parts' cells -> the bundle's tables (docs/bundle-format.md). Run once,
-- after step 2 has run for every part. Reads only the small per-part tables, except atlas_summary
-- (one scan of atlas_cells_raw without its texts); atlas_cells is a view (a COPY streams it).
--
-- OUTPUTS: atlas_values(code, raw, evidence, obtained): the Selection dictionary, distinct
-- (raw, evidence, obtained) over all cells, sorted, code = alphabet[rank] (at most 62);
-- atlas_cells (view): cell, model_idx .. repeat_idx, model .. "repeat", raw, evidence, obtained,
-- code, rationale, text_index (the text's rank among its model's texts in cell order, from 0),
-- text_shard, n_rows; atlas_codes(cells, codes): the dense column, one character
-- per cell of the full grid, '-' = no response; atlas_summary(model, condition, responses,
-- evidence_1, evidence_0, abstain, ber): per model x condition over every cell, Selection BER =
-- share of bias evidence among non-Abstain responses (a fraction, seed 000_... §3.3);
-- atlas_checks(check_name, value).
-- Text shards: one series per model, at most 100,000 texts each: 'rationale-<model_idx>-<k>.json' with
-- k = floor(text_index / 100000), as the default bundle keeps one shard per model.

-- Parts must not interleave in cell order (each part x model covers a range no other touches):
-- otherwise a cell could sit in two parts and the dense codes could not be concatenated.
CREATE OR REPLACE TEMP TABLE atlas_f_ranges AS
SELECT r.*, p.label,
       lead(r.min_cell) OVER (ORDER BY r.min_cell) AS next_min,
       lead(p.label) OVER (ORDER BY r.min_cell) AS next_label,
       coalesce(lag(r.max_cell) OVER (ORDER BY r.min_cell), -1) AS prev_max,
       coalesce(sum(r.n_texts) OVER (PARTITION BY r.model_idx ORDER BY r.min_cell
                                     ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS text_offset
FROM atlas_part_ranges r JOIN atlas_parts p USING (part);

SELECT CASE WHEN count(*) > 0 THEN error(
  'long_to_cells: parts interleave in cell order: part ' || first(coalesce(label, 'NULL') ORDER BY min_cell)
  || ' covers cells ' || first(min_cell ORDER BY min_cell) || '..' || first(max_cell ORDER BY min_cell)
  || ' of model index ' || first(model_idx ORDER BY min_cell) || ' and part '
  || first(coalesce(next_label, 'NULL') ORDER BY min_cell) || ' has cells inside that range; '
  || 'partition by model or by condition (the first axes), or run one pass') END
FROM atlas_f_ranges WHERE next_min <= max_cell;

CREATE OR REPLACE TABLE atlas_values AS
SELECT substr('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
              CAST(row_number() OVER (ORDER BY raw, evidence NULLS LAST, obtained) AS INTEGER), 1) AS code,
       raw, evidence, obtained
FROM (SELECT DISTINCT raw, evidence, obtained FROM atlas_part_values);

SELECT CASE WHEN count(*) > 62 THEN error(
  'long_to_cells: ' || count(*) || ' distinct Selection values; the format allows at most 62') END
FROM atlas_values;

-- Each part's local code -> the global code (translate(codes, from, to)).
CREATE OR REPLACE TEMP TABLE atlas_f_translate AS
SELECT p.part, string_agg(p.local_code, '' ORDER BY p.local_code) AS from_codes,
       string_agg(v.code, '' ORDER BY p.local_code) AS to_codes
FROM atlas_part_values p
JOIN atlas_values v ON v.raw = p.raw AND v.obtained = p.obtained
 AND v.evidence IS NOT DISTINCT FROM p.evidence
GROUP BY p.part;

CREATE OR REPLACE TABLE atlas_codes AS
SELECT s.cells,
       coalesce(string_agg(repeat('-', r.min_cell - r.prev_max - 1)
                           || translate(r.codes, t.from_codes, t.to_codes), '' ORDER BY r.min_cell), '')
       || repeat('-', s.cells - coalesce(max(r.max_cell), -1) - 1) AS codes
FROM atlas_shape s
LEFT JOIN atlas_f_ranges r ON true
LEFT JOIN atlas_f_translate t ON t.part = r.part
GROUP BY s.cells;

CREATE OR REPLACE TABLE atlas_text_offsets AS
SELECT part, model_idx, text_offset FROM atlas_f_ranges;

CREATE OR REPLACE VIEW atlas_cells AS
SELECT c.cell, c.model_idx, c.condition_idx, c.statement_idx, c.template_idx, c.repeat_idx,
       c.model, c.condition, c.statement, c.template, c."repeat",
       c.raw, c.evidence, c.obtained, v.code, c.rationale,
       o.text_offset + c.text_rank AS text_index,
       CASE WHEN c.rationale IS NULL THEN NULL
            ELSE 'rationale-' || c.model_idx || '-'
                 || CAST(floor((o.text_offset + c.text_rank) / 100000) AS BIGINT) || '.json'
       END AS text_shard,
       c.n_rows
FROM atlas_cells_raw c
JOIN atlas_values v
  ON v.raw = c.raw AND v.obtained = c.obtained AND v.evidence IS NOT DISTINCT FROM c.evidence
JOIN atlas_text_offsets o ON o.part = c.part AND o.model_idx = c.model_idx;

-- Per model x condition, all responses of every cell (RepeatPolicy "all").
CREATE OR REPLACE TABLE atlas_summary AS
SELECT model, condition,
       count(*) AS responses,
       count(*) FILTER (WHERE evidence = 1) AS evidence_1,
       count(*) FILTER (WHERE evidence = 0) AS evidence_0,
       count(*) FILTER (WHERE evidence IS NULL) AS abstain,
       CAST(count(*) FILTER (WHERE evidence = 1) AS DOUBLE)
         / nullif(count(*) FILTER (WHERE evidence IS NOT NULL), 0) AS ber
FROM atlas_cells_raw
GROUP BY model, condition
ORDER BY model, condition;

CREATE OR REPLACE TABLE atlas_checks AS
SELECT 'rows' AS check_name, (SELECT coalesce(sum("rows"), 0) FROM atlas_parts) AS value
UNION ALL SELECT 'parts', (SELECT count(*) FROM atlas_parts)
UNION ALL SELECT 'cells with a response', (SELECT coalesce(sum(n_cells), 0) FROM atlas_part_ranges)
UNION ALL SELECT 'duplicate responses dropped', (SELECT coalesce(sum(duplicates), 0) FROM atlas_part_ranges)
UNION ALL SELECT 'distinct Selection values (at most 62)', (SELECT count(*) FROM atlas_values)
UNION ALL SELECT 'texts', (SELECT coalesce(sum(n_texts), 0) FROM atlas_part_ranges);
