//! The across-paradigm report ([`crate::across::AcrossReport`], seed `000_…` §5.2, C.2, Table 11) as
//! tables: one layout that `atlas paradigms across` prints as text and the app's Analyses view shows
//! (the "Does the task format reorder models?" panel), so both show the same numbers with the same
//! rounding.
//!
//! - `across-scores`: per model, the score (a fraction shown as a percentage with one decimal) and
//!   rank under each procedure, and the score range across procedures (percentage points);
//! - `across-propositions`: per model and procedure, the propositions with a valid unit value — the
//!   score's denominator; the propositions without one (no valid Selection: Abstain, unreadable or
//!   not answered) are the exclusions, counted in the table's note;
//! - `across-pairs` (Table 11 layout): per unordered model pair, `δ` (pp) and its 95 % paired
//!   statement-cluster bootstrap interval under every procedure, and whether the order reverses
//!   (strictly, beyond the 1-pp and the 2-pp tie zone, interval-supported).
//!
//! Keys: `score/{model}/{procedure}` and `rank/{model}/{procedure}` (fractions, ranks),
//! `range_pp/{model}`, `propositions/{model}/{procedure}`, `delta_pp/{a}–{b}/{procedure}`.
//!
//! ```
//! use atlas_core::across::{across_procedures, AcrossOptions};
//! use atlas_core::tables::{paradigms, render_text};
//! use atlas_core::Audit;
//! let text = std::fs::read_to_string(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/fixtures/paradigm-across/bundle.json"
//! ))
//! .unwrap();
//! let audit = Audit::from_json(&text).unwrap();
//! let r = across_procedures(&audit, AcrossOptions { draws: 50, ..AcrossOptions::default() }).unwrap();
//! let (summary, tables) = paradigms::across(&audit, &r);
//! assert_eq!(tables.len(), 3);
//! assert_eq!(tables[2].rows.len(), 6); // 4 models, 6 pairs
//! assert!(render_text(&summary, &tables).contains("Table 11 layout"));
//! ```

use super::{Cell, Table};
use crate::across::{AcrossReport, ProcedureColumn, TIE_ZONES_PP};
use crate::bundle::Audit;
use crate::format::NO_VALUE;

/// A fraction as a percentage with one decimal (`57.6 %`), or `—`.
fn percent(x: Option<f64>) -> String {
    x.map_or_else(|| NO_VALUE.to_string(), |v| format!("{:.1} %", 100.0 * v))
}

/// A rank as written in the tables (`1`, `2.5`), or `—`.
fn rank(x: Option<f64>) -> String {
    x.map_or_else(|| NO_VALUE.to_string(), |v| format!("{v}"))
}

fn yes_no(v: bool) -> &'static str {
    if v {
        "yes"
    } else {
        "no"
    }
}

/// Summary lines and the three tables of an across-paradigm report (module docs). `audit` gives the
/// models' labels (the tables show the label and keep the id in their keys).
pub fn across(audit: &Audit, r: &AcrossReport) -> (Vec<String>, Vec<Table>) {
    let caption = format!(
        "bundle {} · repeat policy {} · {} · paired statement-cluster bootstrap {} draws, random seed {}",
        r.bundle,
        r.options.policy.key(),
        r.direction.direction.rule(),
        r.options.draws,
        r.options.seed
    );
    let label = |id: &str| -> String {
        audit
            .levels(audit.model_facet)
            .iter()
            .find(|l| l.id == id)
            .and_then(|l| l.attributes.get("label"))
            .and_then(|v| v.as_str())
            .map_or_else(|| id.to_string(), str::to_string)
    };
    let procedure_header =
        |c: &crate::across::ProcedureColumn| c.label.clone().unwrap_or_else(|| c.procedure.clone());
    let strict = r.pairs.iter().filter(|p| p.reverses).count();
    let supported = r.pairs.iter().filter(|p| p.ci_supported).count();
    let mut summary = vec![format!(
        "Across task paradigms (the BiAxisBias paper §5.2, C.2, Table 11): {} models under {} procedures; score = share of valid Selections choosing the stereotyped candidate, one value per proposition.",
        r.models.len(),
        r.procedures.len()
    )];
    if r.pairs.is_empty() {
        summary.push(r.note.clone());
    } else {
        summary.push(format!(
            "{strict} of {} model pairs reverse their order under at least one procedure; {} beyond the {}-pp tie zone, {} beyond the {}-pp tie zone; {supported} interval-supported.",
            r.pairs.len(),
            r.reversing_1pp,
            TIE_ZONES_PP[0],
            r.reversing_2pp,
            TIE_ZONES_PP[1],
        ));
    }

    // One row per model: its label, then one cell per procedure.
    let per_model = |cell: &dyn Fn(usize, &str, &ProcedureColumn) -> Cell| -> Vec<Vec<Cell>> {
        r.models
            .iter()
            .enumerate()
            .map(|(m, id)| {
                std::iter::once(Cell::text(label(id)))
                    .chain(r.procedures.iter().map(|c| cell(m, id, c)))
                    .collect()
            })
            .collect()
    };
    let model_header = || -> Vec<String> {
        std::iter::once("Model".to_string())
            .chain(r.procedures.iter().map(procedure_header))
            .collect()
    };

    let mut header = model_header();
    header.push("Range (pp)".into());
    let mut rows = per_model(&|m, id, c| {
        let s = c.scores.get(m).copied().flatten();
        let k = c.ranks.get(m).copied().flatten();
        Cell::number(
            format!("{} (#{})", percent(s), rank(k)),
            format!("score/{id}/{}", c.procedure),
            s,
        )
    });
    for ((m, id), row) in r.models.iter().enumerate().zip(&mut rows) {
        let range = r.score_range_pp.get(m).copied().flatten();
        row.push(Cell::number(
            range.map_or_else(|| NO_VALUE.to_string(), |v| format!("{v:.1}")),
            format!("range_pp/{id}"),
            range,
        ));
    }
    let scores = Table {
        id: "across-scores".into(),
        title: "Score and rank per procedure (the BiAxisBias paper §5.2; procedures of Table 10)"
            .into(),
        caption: caption.clone(),
        header,
        rows,
        notes: vec![format!(
            "Each cell: score (#rank among the models, {}). Range: highest minus lowest score across procedures, percentage points.",
            r.direction.direction.rank_one()
        )],
    };

    let total = audit.statements.len();
    let excluded: usize = r
        .procedures
        .iter()
        .flat_map(|c| c.propositions.iter().map(|&n| total.saturating_sub(n)))
        .sum();
    let propositions = Table {
        id: "across-propositions".into(),
        title: "Propositions with a valid Selection per procedure (each score's denominator)".into(),
        caption: caption.clone(),
        header: model_header(),
        rows: per_model(&|m, id, c| {
            let n = c.propositions.get(m).copied().unwrap_or(0);
            Cell::count(format!("propositions/{id}/{}", c.procedure), n)
        }),
        notes: vec![format!(
            "Of {total} propositions; {excluded} model × procedure × proposition units are excluded (no valid Selection among the responses: Abstain, unreadable or not answered)."
        )],
    };

    let mut header = vec!["Model pair".to_string()];
    header.extend(
        r.procedures
            .iter()
            .map(|c| format!("{} δ (pp) [95% CI]", procedure_header(c))),
    );
    header.extend(
        [
            "Reverses",
            "Beyond 1 pp",
            "Beyond 2 pp",
            "Interval-supported",
        ]
        .map(String::from),
    );
    let pairs = Table {
        id: "across-pairs".into(),
        title: format!(
            "Table 11 layout — model pairs across procedures: {strict} of {} reverse",
            r.pairs.len()
        ),
        caption,
        header,
        rows: r
            .pairs
            .iter()
            .map(|p| {
                let pair = format!("{}–{}", p.model_a, p.model_b);
                let mut row = vec![Cell::text(format!(
                    "{} – {}",
                    label(&p.model_a),
                    label(&p.model_b)
                ))];
                for c in &r.procedures {
                    let d = p.deltas.iter().find(|d| d.condition_id == c.procedure);
                    row.push(match d {
                        Some(d) => Cell::number(
                            format!(
                                "{:+.2} {}",
                                d.delta_pp,
                                d.ci_pp.map_or_else(String::new, |(lo, hi)| format!(
                                    "[{lo:+.2}, {hi:+.2}]"
                                ))
                            )
                            .trim_end()
                            .to_string(),
                            format!("delta_pp/{pair}/{}", c.procedure),
                            Some(d.delta_pp),
                        ),
                        None => Cell::number(
                            NO_VALUE,
                            format!("delta_pp/{pair}/{}", c.procedure),
                            None,
                        ),
                    });
                }
                row.extend(
                    [p.reverses, p.reverses_1pp, p.reverses_2pp, p.ci_supported]
                        .map(|v| Cell::text(yes_no(v))),
                );
                row
            })
            .collect(),
        notes: vec![format!(
            "δ per procedure, percentage points: {}; ranking: {}. A pair reverses when one procedure has δ < 0 and another δ > 0; beyond the ε-pp tie zone when one δ < −ε and another δ > +ε; interval-supported when one procedure's interval lies wholly below 0 and another's wholly above.",
            r.direction.direction.delta_text(),
            r.direction.describe()
        )],
    };
    (summary, vec![scores, propositions, pairs])
}
