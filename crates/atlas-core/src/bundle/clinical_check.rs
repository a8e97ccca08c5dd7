//! The check of a bundle's `clinical` object against the rest of the bundle (`docs/clinical.md`):
//! every `model`, `statement`, `condition` and `repeat` id of its records resolves to a level of the
//! bundle's facets, cell lists are increasing and in range, statement attributes (`answer`,
//! `difficulty`) are well formed, and the embeddings decode. Run by [`crate::Audit`] when a bundle is
//! read; the `clinical` types themselves are in [`crate::clinical::format`], which knows nothing of
//! the bundle file.

use std::collections::HashMap;

use serde_json::Value;

use super::{facet_ids, BundleFile};
use crate::clinical::format::{check_increasing, difficulty_code, invalid, EmbeddingMatrix};
use crate::error::BundleError;

/// Level-id lookup of one facet for [`check`].
struct Ids<'a> {
    facet: &'a str,
    map: Option<HashMap<&'a str, usize>>,
}

impl<'a> Ids<'a> {
    fn new(file: &'a BundleFile, facet: &'a str) -> Self {
        let map = file.facets.iter().find(|f| f.id == facet).map(|f| {
            f.levels
                .iter()
                .enumerate()
                .map(|(j, l)| (l.id.as_str(), j))
                .collect()
        });
        Ids { facet, map }
    }

    fn check(&self, id: &str, field: &str) -> Result<(), BundleError> {
        match &self.map {
            None => Err(invalid(
                field,
                &format!(
                    "{id:?} names a level of the {:?} facet, which the bundle does not declare",
                    self.facet
                ),
            )),
            Some(map) if map.contains_key(id) => Ok(()),
            Some(_) => Err(invalid(
                field,
                &format!("{id:?} is not a level of the {:?} facet", self.facet),
            )),
        }
    }

    fn check_opt(&self, id: Option<&str>, field: &str) -> Result<(), BundleError> {
        id.map_or(Ok(()), |id| self.check(id, field))
    }
}

/// The clinical attributes of `statement` levels (`docs/clinical.md`, "Facets"): `answer` and `step` a
/// string or null, `difficulty` `"EASY"`, `"MEDIUM"`, `"HARD"` or null, `options` an
/// object of strings or null.
fn check_statement_attributes(file: &BundleFile) -> Result<(), BundleError> {
    let Some((f, facet)) = file
        .facets
        .iter()
        .enumerate()
        .find(|(_, f)| f.id == facet_ids::STATEMENT)
    else {
        return Ok(());
    };
    for (j, level) in facet.levels.iter().enumerate() {
        let at = format!("facets[{f}].levels[{j}]");
        for key in ["answer", "step", "source_id"] {
            match level.attributes.get(key) {
                None | Some(Value::Null) | Some(Value::String(_)) => {}
                Some(other) => {
                    return Err(invalid(
                        &format!("{at}.{key}"),
                        &format!("expected a string or null, found {other}"),
                    ))
                }
            }
        }
        match level.attributes.get("difficulty") {
            None | Some(Value::Null) => {}
            Some(Value::String(d)) if difficulty_code(d).is_some() => {}
            Some(other) => {
                return Err(invalid(
                    &format!("{at}.difficulty"),
                    &format!("expected \"EASY\", \"MEDIUM\", \"HARD\" or null, found {other}"),
                ))
            }
        }
        match level.attributes.get("options") {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                if let Some((letter, v)) = map.iter().find(|(_, v)| !v.is_string()) {
                    return Err(invalid(
                        &format!("{at}.options.{letter}"),
                        &format!("expected the option text (a string), found {v}"),
                    ));
                }
            }
            Some(other) => {
                return Err(invalid(
                    &format!("{at}.options"),
                    &format!("expected an object letter → option text, found {other}"),
                ))
            }
        }
    }
    Ok(())
}

/// Validates the bundle's `clinical` object against its facets and response matrix of `cells` cells,
/// and decodes the embeddings.
///
/// Checks: every `model`, `statement`, `condition` and `repeat` names a level of that facet (a `repeat`
/// may be null); `baseline` names a `condition` level; embeddings have `dim` > 0, strictly increasing
/// cells below `cells`, `data` of exactly `cells.len() × dim × bytes` bytes, finite values and no zero
/// row; plausibility scores are 1–5.
///
/// # Errors
/// [`BundleError::Invalid`] or [`BundleError::IndexOutOfRange`] naming the array, the record index and
/// the key, e.g. `clinical.counterfactuals[3].statement`.
pub fn check(file: &BundleFile, cells: usize) -> Result<Option<EmbeddingMatrix>, BundleError> {
    let Some(clinical) = &file.clinical else {
        return Ok(None);
    };
    let models = Ids::new(file, facet_ids::MODEL);
    let statements = Ids::new(file, facet_ids::STATEMENT);
    let conditions = Ids::new(file, facet_ids::CONDITION);
    let repeats = Ids::new(file, facet_ids::REPEAT);
    if let Some(b) = &clinical.baseline {
        conditions.check(b, "clinical.baseline")?;
    }
    check_statement_attributes(file)?;
    for (k, r) in clinical.prefix_conflicts.iter().enumerate() {
        let at = format!("clinical.prefix_conflicts[{k}]");
        statements.check(&r.statement, &format!("{at}.statement"))?;
        conditions.check(&r.condition, &format!("{at}.condition"))?;
    }
    for (k, r) in clinical.counterfactuals.iter().enumerate() {
        let at = format!("clinical.counterfactuals[{k}]");
        models.check(&r.model, &format!("{at}.model"))?;
        statements.check(&r.statement, &format!("{at}.statement"))?;
        repeats.check_opt(r.repeat.as_deref(), &format!("{at}.repeat"))?;
        if let Some(p) = &r.plausibility {
            if !(1..=5).contains(&p.score) {
                return Err(invalid(
                    &format!("{at}.plausibility.score"),
                    &format!("is {}; the plausibility score is 1–5 (§3.5)", p.score),
                ));
            }
        }
    }
    for (k, r) in clinical.stereotype.iter().enumerate() {
        let at = format!("clinical.stereotype[{k}]");
        models.check(&r.model, &format!("{at}.model"))?;
        statements.check(&r.statement, &format!("{at}.statement"))?;
        conditions.check(&r.condition, &format!("{at}.condition"))?;
        repeats.check_opt(r.repeat.as_deref(), &format!("{at}.repeat"))?;
    }
    for (k, r) in clinical.directions.iter().enumerate() {
        let at = format!("clinical.directions[{k}]");
        models.check(&r.model, &format!("{at}.model"))?;
        statements.check(&r.statement, &format!("{at}.statement"))?;
        conditions.check(&r.condition, &format!("{at}.condition"))?;
        repeats.check_opt(r.repeat.as_deref(), &format!("{at}.repeat"))?;
    }
    let Some(emb) = &clinical.embeddings else {
        return Ok(None);
    };
    if emb.dim == 0 {
        return Err(invalid("clinical.embeddings.dim", "must be > 0"));
    }
    check_increasing(&emb.cells, "clinical.embeddings.cells", Some(cells as u64))?;
    let rows = emb.decode_flat()?;
    for (k, row) in rows.chunks(emb.dim).enumerate() {
        let mut norm2 = 0f64;
        for (j, x) in row.iter().enumerate() {
            if !x.is_finite() {
                return Err(invalid(
                    "clinical.embeddings.data",
                    &format!(
                        "row {k} (cell {}), value {j} is {x}, not a finite number",
                        emb.cells[k]
                    ),
                ));
            }
            norm2 += f64::from(*x) * f64::from(*x);
        }
        if norm2 == 0.0 {
            return Err(invalid(
                "clinical.embeddings.data",
                &format!(
                    "row {k} (cell {}) is all zeros and cannot be normalised (Eq. 1)",
                    emb.cells[k]
                ),
            ));
        }
    }
    Ok(Some(EmbeddingMatrix {
        dim: emb.dim,
        cells: emb.cells.iter().map(|&c| c as usize).collect(),
        rows,
    }))
}
