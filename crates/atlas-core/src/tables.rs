//! The RQ1 and RQ2 reports as tables (seed `000_…` Tables 8, 9, 11 and 13, 14, 15): one layout that the
//! CLI prints as text (`atlas analyze-rq1`, `analyze-rq2`) and the app shows in the page, so both show
//! the same numbers with the same rounding. Every table's caption names the
//! bundle, seed, draws, budget, repeat policy and reference weights behind it; numeric cells carry
//! their full-precision value and a key so that tests (and readers' tools) can read them back.
//!
//! CSV: [`table_csv`] writes any table with its unrounded values; [`reweight_csv`] is the re-weighting
//! table, written identically by the app's export and by `atlas reweight --format csv`.
//!
//! The clinical audit's tables (seed `001_…` Tables 5–7 and the CLI's other clinical tables) are in
//! [`clinical`].

use crate::rq1::Rq1Report;
use crate::rq2::{DesignResult, Metric, Rq2Report};
use serde::{Deserialize, Serialize};

use crate::bundle::Audit;
use crate::format::NO_VALUE;

pub mod clinical;
pub mod paradigms;

/// One table cell: the text shown, and for a number its unrounded value and a stable key
/// (e.g. `srs/mae_pp`, `stratified/mae_pp/gpt-4-0314`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// The text shown (a number rounded for display; `—` for no value).
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Stable key of a numeric cell, e.g. `srs/mae_pp`; `None` for a text cell.
    pub key: Option<String>,
    /// The unrounded value as Rust's shortest round-trip decimal (`f64::to_string`). A string, not a
    /// JSON number: serde_json's default float parser may be off by one ulp on the way back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl Cell {
    /// A text-only cell.
    pub fn text(text: impl Into<String>) -> Self {
        Cell {
            text: text.into(),
            key: None,
            value: None,
        }
    }

    /// A number shown as `text`, with its key and unrounded value.
    pub fn number(text: impl Into<String>, key: impl Into<String>, value: Option<f64>) -> Self {
        Cell {
            text: text.into(),
            key: Some(key.into()),
            value: value.map(|v| v.to_string()),
        }
    }
}

impl Cell {
    /// A count: its decimal text, and the count as its value.
    pub fn count(key: impl Into<String>, n: usize) -> Self {
        Cell::number(n.to_string(), key, Some(n as f64))
    }

    /// A fraction in `[0, 1]` shown as percentage points with two decimals (`1/3` → `33.33`, the
    /// column header says `(%)`; [`crate::format::points`]), [`NO_VALUE`] for `None`; its value is the
    /// unrounded fraction.
    pub fn percent(key: impl Into<String>, fraction: Option<f64>) -> Self {
        Cell::number(crate::format::points(fraction, 2), key, fraction)
    }

    /// A number shown with `decimals` decimals ([`crate::format::number`]), [`NO_VALUE`] for `None`;
    /// its value is unrounded.
    pub fn decimal(key: impl Into<String>, value: Option<f64>, decimals: usize) -> Self {
        Cell::number(crate::format::number(value, decimals), key, value)
    }

    /// A cell without a value ([`NO_VALUE`]; no key).
    pub fn none() -> Self {
        Cell::text(NO_VALUE)
    }
}

/// How a table cell sorts when a reader sorts its column (the app's table component, issue 15
/// item 5): a missing value ([`NO_VALUE`] or empty) always sorts last; otherwise a number (the
/// cell's unrounded value, else the number its text starts with: `12.34 ⚠ …` → 12.34, `+1.20` →
/// 1.2, `28,162` → 28162, `3 of 10` → 3) and the text itself.
#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    /// The number the cell sorts by in a numeric column; `None` for text.
    pub number: Option<f64>,
    /// The text the cell sorts by in a text column.
    pub text: String,
    /// No value: sorts after every value, whichever the direction.
    pub missing: bool,
}

impl SortKey {
    /// The key of a cell showing `text` with unrounded value `value` (a numeric cell's value, or
    /// `None`: then the number the text starts with, if any).
    pub fn new(text: &str, value: Option<f64>) -> Self {
        let trimmed = text.trim();
        let missing = trimmed.is_empty() || trimmed == NO_VALUE;
        SortKey {
            number: if missing {
                None
            } else {
                value
                    .filter(|v| v.is_finite())
                    .or_else(|| leading_number(trimmed))
            },
            text: trimmed.to_string(),
            missing,
        }
    }

    /// A number (`None` or a non-finite value: missing); its text is the number's own.
    pub fn number(value: Option<f64>) -> Self {
        match value.filter(|v| v.is_finite()) {
            Some(v) => SortKey {
                number: Some(v),
                text: v.to_string(),
                missing: false,
            },
            None => SortKey::missing(),
        }
    }

    /// A text (an empty text or [`NO_VALUE`]: missing). Texts never sort as numbers, even when they
    /// start with a digit.
    pub fn text(text: &str) -> Self {
        SortKey {
            number: None,
            ..SortKey::new(text, None)
        }
    }

    /// No value.
    pub fn missing() -> Self {
        SortKey {
            number: None,
            text: String::new(),
            missing: true,
        }
    }
}

/// The number a cell's text starts with, read as written (`12.34 ⚠ Abstain` → 12.34, `+1.20` →
/// 1.2, `−0.5` (minus sign) → −0.5, `28,162` → 28162), or `None` when it does not start with one.
fn leading_number(text: &str) -> Option<f64> {
    let mut out = String::new();
    for (i, ch) in text.chars().enumerate() {
        match ch {
            '0'..='9' | '.' => out.push(ch),
            ',' if !out.is_empty() => {}
            '+' if i == 0 => {}
            '-' | '−' if i == 0 => out.push('-'),
            _ => break,
        }
    }
    out.parse::<f64>().ok().filter(|v| v.is_finite())
}

impl Cell {
    /// How this cell sorts ([`SortKey::new`] of its text and value).
    pub fn sort_key(&self) -> SortKey {
        SortKey::new(
            &self.text,
            self.value.as_deref().and_then(|v| v.parse::<f64>().ok()),
        )
    }
}

/// Whether a column of `keys` sorts as numbers: every key with a value has a number, and at least
/// one has. A column of text, or of numbers mixed with text, sorts as text.
pub fn is_numeric_column<'a>(keys: impl IntoIterator<Item = &'a SortKey>) -> bool {
    let mut any = false;
    for k in keys {
        if k.missing {
            continue;
        }
        if k.number.is_none() {
            return false;
        }
        any = true;
    }
    any
}

/// The order of `keys` (one per row) when a reader sorts by their column: as numbers when
/// `numeric` (ascending, or descending with `descending`), else by `text_order` (the app passes the
/// browser's locale collation); ties keep the rows' order (a stable sort); missing values last in
/// both directions. Returns row indices; sorting moves rows, never changes a value.
pub fn sort_order(
    keys: &[SortKey],
    numeric: bool,
    descending: bool,
    text_order: impl Fn(&str, &str) -> std::cmp::Ordering,
) -> Vec<usize> {
    use std::cmp::Ordering;
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| {
        let (ka, kb) = (&keys[a], &keys[b]);
        let missing = |k: &SortKey| k.missing || (numeric && k.number.is_none());
        match (missing(ka), missing(kb)) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Greater,
            (false, true) => return Ordering::Less,
            (false, false) => {}
        }
        let o = if numeric {
            ka.number
                .unwrap_or(0.0)
                .partial_cmp(&kb.number.unwrap_or(0.0))
                .unwrap_or(Ordering::Equal)
        } else {
            text_order(&ka.text, &kb.text)
        };
        if descending {
            o.reverse()
        } else {
            o
        }
    });
    order
}

/// A text order for [`sort_order`] without a browser: case-insensitive, then by code points.
pub fn plain_text_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.to_lowercase()
        .cmp(&b.to_lowercase())
        .then_with(|| a.cmp(b))
}

/// A table: the first cell of each row is the row header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Element id in the page, e.g. `rq2-table13`.
    pub id: String,
    /// Title naming the seed table whose layout it follows, e.g. `Table 9 layout — …`.
    pub title: String,
    /// Provenance: bundle, seed, draws, budget, repeat policy, weights.
    pub caption: String,
    /// Column headers (the first is the row-header column's).
    pub header: Vec<String>,
    /// Rows of cells, each as long as `header`.
    pub rows: Vec<Vec<Cell>>,
    /// Lines printed under the table (intervals, contrasts, exclusions).
    pub notes: Vec<String>,
}

impl Table {
    /// A table of text cells only (no keys, no values; e.g. a chart's table alternative): `header`,
    /// then `rows` whose first cell is the row header; `caption` as given, no id, title or notes.
    pub fn from_texts(caption: String, header: Vec<String>, rows: Vec<Vec<String>>) -> Self {
        Table {
            id: String::new(),
            title: String::new(),
            caption,
            header,
            rows: rows
                .into_iter()
                .map(|r| r.into_iter().map(Cell::text).collect())
                .collect(),
            notes: Vec::new(),
        }
    }

    /// The table as CSV ([`table_csv`]): unrounded values, RFC 4180 quoting.
    pub fn to_csv(&self) -> String {
        table_csv(self)
    }

    /// The table as plain text, as the CLI prints it: title, caption, then columns padded to their
    /// widest cell (first column left-aligned, the others right-aligned), then the notes. A table
    /// without header and rows prints its title, caption and notes only.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&self.title);
        out.push('\n');
        out.push_str(&self.caption);
        out.push('\n');
        let header =
            (!self.header.is_empty()).then(|| self.header.iter().map(String::as_str).collect());
        let rows: Vec<Vec<&str>> = header
            .into_iter()
            .chain(
                self.rows
                    .iter()
                    .map(|r| r.iter().map(|c| c.text.as_str()).collect()),
            )
            .collect();
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|k| {
                rows.iter()
                    .filter_map(|r| r.get(k))
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for row in &rows {
            let mut line = String::from(" ");
            for (k, cell) in row.iter().enumerate() {
                let pad = widths[k].saturating_sub(cell.chars().count());
                line.push_str("  ");
                if k == 0 {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(pad));
                } else {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(cell);
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        for note in &self.notes {
            out.push_str("  ");
            out.push_str(note);
            out.push('\n');
        }
        out
    }
}

fn pct(x: f64) -> String {
    format!("{:.2}", 100.0 * x)
}

fn ci(x: Option<(f64, f64)>) -> String {
    x.map_or("—".into(), |(lo, hi)| format!("[{lo:+.2}, {hi:+.2}]"))
}

fn mark(yes: bool) -> &'static str {
    if yes {
        "✓"
    } else {
        "·"
    }
}

/// RQ1: summary lines and Tables 8, 9 (models, then wordings) and 11, as `atlas analyze-rq1` prints
/// them.
pub fn rq1(audit: &Audit, r: &Rq1Report) -> (Vec<String>, Vec<Table>) {
    let o = &r.options;
    let w = &r.wording_sensitivity;
    let caption = format!(
        "bundle {} · seed {} · unit bootstrap {} resamples · statement-cluster bootstrap {} draws · repeat policy {} · reference weights: equal (Eq. 4) · wordings read at repeat 0; control = the first {} samples of wording {}",
        r.bundle,
        o.seed,
        o.unit_bootstrap_reps,
        o.cluster_bootstrap_reps,
        o.policy.key(),
        w.k,
        o.control_wording + 1
    );
    let summary = vec![format!(
        "Wording sensitivity (the BiAxisBias paper §5.1, C.1): {} of {} model × condition × statement units ({}%) change their Selection at least once across {} wordings.",
        w.changed_any,
        w.units,
        pct(w.changed_any_rate),
        w.wordings
    )];

    let mut table8 = Table {
        id: "rq1-table8".into(),
        title: String::new(),
        caption: caption.clone(),
        header: ["Subset", "Changed", "%"].map(String::from).to_vec(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    match &w.matched {
        None => {
            table8.title = "Table 8 layout — matched comparison".into();
            table8.notes.push(format!(
                "matched comparison: not possible (fewer than {} repeats)",
                w.k
            ));
        }
        Some(m) => {
            table8.title = format!(
                "Table 8 layout — matched {}-wording subsets vs {} identical calls on {} units",
                w.k, w.k, m.units
            );
            for s in &m.subsets {
                let name: Vec<String> = s.wordings.iter().map(|j| format!("W{}", j + 1)).collect();
                let name = name.join("/");
                table8.rows.push(vec![
                    Cell::text(name.clone()),
                    Cell::number(
                        s.changed.to_string(),
                        format!("{name}/changed"),
                        Some(s.changed as f64),
                    ),
                    Cell::number(pct(s.rate), format!("{name}/rate"), Some(s.rate)),
                ]);
            }
            table8.notes = vec![
                format!(
                    "subset mean {}% (range {}–{}%), identical calls {} = {}%; paired difference {:+.2} pp",
                    pct(m.subset_rates.mean),
                    pct(m.subset_rates.min),
                    pct(m.subset_rates.max),
                    m.control_changed,
                    pct(m.control_rate),
                    m.difference_pp
                ),
                format!(
                    "95% intervals: unit bootstrap ({} resamples) {} pp; statement-cluster bootstrap ({} draws) {} pp",
                    o.unit_bootstrap_reps,
                    ci(m.unit_bootstrap_ci_pp),
                    o.cluster_bootstrap_reps,
                    ci(m.statement_bootstrap_ci_pp)
                ),
                format!(
                    "pairwise disagreement: wordings {}% ({}–{}%), identical calls {}% ({}–{}%)",
                    pct(m.wording_pair_rates.mean),
                    pct(m.wording_pair_rates.min),
                    pct(m.wording_pair_rates.max),
                    pct(m.repeat_pair_rates.mean),
                    pct(m.repeat_pair_rates.min),
                    pct(m.repeat_pair_rates.max)
                ),
            ];
        }
    }

    let s = &r.rank_stability;
    let models = audit.model_ids();
    let threshold = crate::abstain::AbstainThreshold::default();
    let pooled_flag = |m: usize| {
        s.pooled_abstain
            .get(m)
            .map_or_else(String::new, |a| a.flag_text(threshold))
    };
    let mut table9_notes = vec![format!(
        "Ranks: {}; {}.",
        s.direction.describe(),
        s.direction.direction.rank_one()
    )];
    table9_notes.extend(models.iter().enumerate().filter_map(|(m, id)| {
        let flag = pooled_flag(m);
        (!flag.is_empty()).then(|| format!("{id}: pooled score {flag}"))
    }));
    if table9_notes.len() > 1 {
        table9_notes.push(crate::abstain::caption_short(threshold));
    }
    let table9 = Table {
        id: "rq1-table9".into(),
        title:
            "Table 9 layout — model-level sensitivity across wordings (the BiAxisBias paper §5.1)"
                .into(),
        caption: caption.clone(),
        header: ["Model", "pooled (%)", "range (pp)", "rank range"]
            .map(String::from)
            .to_vec(),
        rows: models
            .iter()
            .enumerate()
            .map(|(m, id)| {
                vec![
                    Cell::text(*id),
                    Cell::number(
                        s.pooled[m].map_or("—".into(), |v| {
                            let flagged = s
                                .pooled_abstain
                                .get(m)
                                .is_some_and(|a| a.is_flagged(threshold));
                            format!("{}{}", pct(v), if flagged { " ⚠" } else { "" })
                        }),
                        format!("{id}/pooled"),
                        s.pooled[m],
                    ),
                    Cell::number(
                        s.score_range_pp[m].map_or("—".into(), |x| format!("{x:.2}")),
                        format!("{id}/range_pp"),
                        s.score_range_pp[m],
                    ),
                    Cell::text(s.rank_range[m].map_or("—".into(), |(lo, hi)| format!("{lo}–{hi}"))),
                ]
            })
            .collect(),
        notes: table9_notes,
    };
    let wordings = Table {
        id: "rq1-table9-wordings".into(),
        title: "Table 9 layout (cont.) — each wording against the pooled ranking".into(),
        caption: caption.clone(),
        header: ["Wording", "τ-b", "inversions", "max displ."]
            .map(String::from)
            .to_vec(),
        rows: (0..s.scores.len())
            .map(|j| {
                let name = format!("W{}", j + 1);
                vec![
                    Cell::text(name.clone()),
                    Cell::number(
                        s.tau_b[j].map_or("—".into(), |t| format!("{t:.3}")),
                        format!("{name}/tau_b"),
                        s.tau_b[j],
                    ),
                    Cell::number(
                        s.inversions[j]
                            .map_or("—".into(), |i| format!("{}/{}", i.inverted, i.pairs)),
                        format!("{name}/inverted"),
                        s.inversions[j].map(|i| i.inverted as f64),
                    ),
                    Cell::number(
                        s.max_displacement[j].map_or("—".into(), |d| format!("{d}")),
                        format!("{name}/max_displacement"),
                        s.max_displacement[j],
                    ),
                ]
            })
            .collect(),
        notes: Vec::new(),
    };

    let v = &r.reversals;
    let table11 = Table {
        id: "rq1-table11".into(),
        title: format!(
            "Table 11 layout — reversals across conditions (the BiAxisBias paper §5.2): {} of {} model pairs reverse; statement-cluster bootstrap {} draws",
            v.reversals.len(),
            v.pairs,
            v.draws
        ),
        caption,
        header: [
            "Model pair",
            "most negative δ (pp) [95% CI]",
            "most positive δ (pp) [95% CI]",
            "ε = 1 pp",
            "ε = 2 pp",
            "CI",
        ]
        .map(String::from)
        .to_vec(),
        rows: v
            .reversals
            .iter()
            .map(|rev| {
                let pair = format!("{}–{}", rev.model_a, rev.model_b);
                vec![
                    Cell::text(pair.clone()),
                    Cell::number(
                        format!(
                            "{} {:+.2} {}",
                            rev.negative.condition_id,
                            rev.negative.delta_pp,
                            ci(rev.negative.ci_pp)
                        ),
                        format!("{pair}/negative"),
                        Some(rev.negative.delta_pp),
                    ),
                    Cell::number(
                        format!(
                            "{} {:+.2} {}",
                            rev.positive.condition_id,
                            rev.positive.delta_pp,
                            ci(rev.positive.ci_pp)
                        ),
                        format!("{pair}/positive"),
                        Some(rev.positive.delta_pp),
                    ),
                    Cell::text(mark(rev.survives_1pp)),
                    Cell::text(mark(rev.survives_2pp)),
                    Cell::text(mark(rev.ci_supported)),
                ]
            })
            .collect(),
        notes: vec![
            format!("{} under a condition; ranking: {}. ✓ = the reversal survives the 1-pp / 2-pp tie zone, or two conditions' intervals lie on opposite sides of zero.", v.direction.direction.delta_text(), v.direction.describe()),
        ],
    };
    let mut tables = vec![table8, table9, wordings, table11];
    if let Some(var) = &r.variance {
        let eta = |x: Option<f64>| x.map_or("—".to_string(), |v| format!("{v:.4}"));
        tables.push(Table {
            id: "rq1-table12".into(),
            title: format!(
                "Table 12 — descriptive variance components (η²) over {}",
                var.factors.join(" × ")
            ),
            caption: format!(
                "bundle {} · all valid responses ({} rows); complete grid: {} of {} {} units ({} rows)",
                r.bundle,
                var.rows,
                var.units_complete,
                var.units_seen,
                var.units_by.join(" × "),
                var.rows_complete
            ),
            header: ["Effect", "valid-row η²", "complete-grid η²"]
                .map(String::from)
                .to_vec(),
            rows: var
                .components
                .iter()
                .map(|c| {
                    let name = c.effect.join(" × ");
                    vec![
                        Cell::text(name.clone()),
                        Cell::number(eta(c.eta_squared), format!("{name}/eta2"), c.eta_squared),
                        Cell::number(
                            eta(c.eta_squared_complete),
                            format!("{name}/eta2_complete"),
                            c.eta_squared_complete,
                        ),
                    ]
                })
                .collect(),
            notes: vec![
                "η² = SS_effect / SS_total over valid responses (y = bias evidence); descriptive effect sizes, not an ANOVA (the BiAxisBias paper §C.3).".into(),
            ],
        });
    }
    (summary, tables)
}

/// Plain-text rendering of summary lines and tables (what `atlas analyze-rq1` / `analyze-rq2`
/// print): each table's title and caption, then columns padded to their widest cell (first column
/// left-aligned, the others right-aligned), then its notes.
pub fn render_text(summary: &[String], tables: &[Table]) -> String {
    let mut out = String::new();
    for line in summary {
        out.push_str(line);
        out.push('\n');
    }
    for t in tables {
        out.push('\n');
        out.push_str(&t.to_text());
    }
    out
}

fn pp(m: &Metric, decimals: usize) -> String {
    match (m.mean, m.range) {
        (Some(v), Some([lo, hi])) => format!("{v:.decimals$} [{lo:.decimals$}, {hi:.decimals$}]"),
        (Some(v), None) => format!("{v:.decimals$}"),
        _ => "—".to_string(),
    }
}

fn percent(m: &Metric) -> String {
    match (m.mean, m.range) {
        (Some(v), Some([lo, hi])) => {
            format!("{:.1}% [{:.1}, {:.1}]", 100.0 * v, 100.0 * lo, 100.0 * hi)
        }
        (Some(v), None) => format!("{:.1}%", 100.0 * v),
        _ => "—".to_string(),
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("—".to_string(), |v| format!("{v:.decimals$}"))
}

/// The reference weights of an RQ2 report as text: `equal (Eq. 4)` or `condition=weight, …`.
pub fn weights_text(r: &Rq2Report) -> String {
    match &r.weights {
        None => "equal (Eq. 4)".to_string(),
        Some(w) => w
            .iter()
            .map(|w| format!("{}={}", w.condition, w.weight))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// RQ2: summary lines and Tables 13, 14 and 15, as `atlas analyze-rq2` prints them.
pub fn rq2(r: &Rq2Report) -> (Vec<String>, Vec<Table>) {
    let level = 100.0 * r.level;
    let caption = format!(
        "bundle {} · seed {} · {} draws per design · budget {} responses per model · repeat policy {} · reference weights: {}",
        r.bundle,
        r.seed,
        r.draws,
        r.budget,
        r.policy.key(),
        weights_text(r)
    );
    let summary = vec![
        format!(
            "Observable matrix: {} reference conditions ({}), templates per condition {}, {} statements in {} categories, {} cells.",
            r.conditions.len(),
            r.conditions.join(", "),
            r.templates_per_condition
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join("/"),
            r.statements,
            r.categories.len(),
            r.observable_cells
        ),
        format!(
            "Ranges: {:.1}–{:.1} percentiles across draws (not confidence intervals over models); one draw is shared by all models.",
            (100.0 - level) / 2.0,
            (100.0 + level) / 2.0
        ),
        format!(
            "Ranking metrics (τ-b, inversions) compare rankings in the bundle's direction: {}.",
            r.direction.describe()
        ),
    ];

    type Row = (
        &'static str,
        &'static str,
        fn(&DesignResult) -> (String, &Metric),
    );
    let metrics: [Row; 7] = [
        ("Score MAE (pp)", "mae_pp", |d| {
            (pp(&d.summary.mae_pp, 2), &d.summary.mae_pp)
        }),
        ("Score RMSE (pp)", "rmse_pp", |d| {
            (pp(&d.summary.rmse_pp, 2), &d.summary.rmse_pp)
        }),
        ("Kendall τb vs. ref.", "tau_b", |d| {
            (pp(&d.summary.tau_b, 3), &d.summary.tau_b)
        }),
        ("Ref.-relative inversions", "inversion_rate", |d| {
            (
                percent(&d.summary.inversion_rate),
                &d.summary.inversion_rate,
            )
        }),
        ("Repeat score diff. (pp)", "repeat_mad_pp", |d| {
            (pp(&d.summary.repeat_mad_pp, 2), &d.summary.repeat_mad_pp)
        }),
        ("Repeat Kendall τb", "repeat_tau_b", |d| {
            (pp(&d.summary.repeat_tau_b, 3), &d.summary.repeat_tau_b)
        }),
        ("Repeat inversions", "repeat_inversion_rate", |d| {
            (
                percent(&d.summary.repeat_inversion_rate),
                &d.summary.repeat_inversion_rate,
            )
        }),
    ];
    let mut header = vec!["Metric".to_string()];
    header.extend(r.designs.iter().map(|d| d.label.clone()));
    let mut rows: Vec<Vec<Cell>> = metrics
        .iter()
        .map(|(name, key, f)| {
            let mut row = vec![Cell::text(*name)];
            row.extend(r.designs.iter().map(|d| {
                let (text, m) = f(d);
                Cell::number(text, format!("{}/{key}", d.design), m.mean)
            }));
            row
        })
        .collect();
    rows.push(exclusion_row(
        "Model-draws without a score",
        "excluded_draws",
        &r.designs,
        |d| Some(unscored(d)),
    ));
    rows.push(exclusion_row(
        "Model-draws with a condition dropped",
        "partial_drop_draws",
        &r.designs,
        partial,
    ));
    let mut notes = vec![format!(
        "Contrasts (Monte Carlo {level:.0}% interval, {} bootstrap replicates of draw-level differences):",
        r.bootstrap_reps
    )];
    for c in &r.contrasts {
        let what = if c.metric == "mae_pp" {
            "score MAE"
        } else {
            "ref.-relative inversions"
        };
        let interval = c.interval.map_or("—".to_string(), |[lo, hi]| {
            format!("[{lo:+.2}, {hi:+.2}]")
        });
        let est = c.estimate.map_or("—".to_string(), |e| format!("{e:+.2}"));
        notes.push(format!("{}, {what}: {est} pp {interval}", c.label));
    }
    notes.push(format!(
        "Exclusions (audit draws, summed over the {} models): a model-draw without a score leaves that model's errors and pairs; a model-draw with a condition dropped (a partial drop) keeps a score averaged over the other sampled conditions; — = the design averages a single mean, so nothing can be dropped.",
        r.models.len()
    ));
    let table13 = Table {
        id: "rq2-table13".into(),
        title: "Table 13 — equal-budget audit results (lower is better for error and inversion metrics)".into(),
        caption: caption.clone(),
        header,
        rows,
        notes,
    };

    let table14 = Table {
        id: "rq2-table14".into(),
        title: format!(
            "Table 14 — fixed-{}-response condition-coverage curve (one template per sampled condition, statements balanced across conditions)",
            r.budget
        ),
        caption: caption.clone(),
        header: [
            "Conditions K",
            "MAE (pp)",
            "Ref. inv.",
            "Repeat MAD (pp)",
            "Kendall τb",
            "Model-draws with a condition dropped",
        ]
        .map(String::from)
        .to_vec(),
        rows: r
            .coverage
            .iter()
            .map(|d| {
                let k = d.conditions.unwrap_or(0);
                let s = &d.summary;
                vec![
                    Cell::text(k.to_string()),
                    Cell::number(opt(s.mae_pp.mean, 2), format!("{k}/mae_pp"), s.mae_pp.mean),
                    Cell::number(
                        s.inversion_rate
                            .mean
                            .map_or("—".to_string(), |v| format!("{:.1}%", 100.0 * v)),
                        format!("{k}/inversion_rate"),
                        s.inversion_rate.mean,
                    ),
                    Cell::number(
                        opt(s.repeat_mad_pp.mean, 2),
                        format!("{k}/repeat_mad_pp"),
                        s.repeat_mad_pp.mean,
                    ),
                    Cell::number(opt(s.tau_b.mean, 3), format!("{k}/tau_b"), s.tau_b.mean),
                    count_cell(format!("{k}/partial_drop_draws"), partial(d)),
                ]
            })
            .collect(),
        notes: vec![partial_drop_note(r, &r.coverage)],
    };

    let mut header = vec!["Model".to_string(), "Reference score".to_string()];
    header.extend(r.designs.iter().map(|d| format!("{} MAE", d.label)));
    header.push(format!(
        "Excluded draws ({})",
        r.designs
            .iter()
            .map(|d| d.design)
            .collect::<Vec<_>>()
            .join("/")
    ));
    let averaging: Vec<&DesignResult> = r
        .designs
        .iter()
        .filter(|d| d.averages_conditions())
        .collect();
    header.push(format!(
        "Draws with a condition dropped ({})",
        averaging
            .iter()
            .map(|d| d.design)
            .collect::<Vec<_>>()
            .join("/")
    ));
    let rows = r
        .models
        .iter()
        .enumerate()
        .map(|(m, id)| {
            let mut row = vec![
                Cell::text(id.clone()),
                Cell::number(
                    opt(r.reference[m], 3),
                    format!("reference/{id}"),
                    r.reference[m],
                ),
            ];
            row.extend(r.designs.iter().map(|d| {
                let mae = d.summary.per_model[m].mae_pp;
                Cell::number(opt(mae, 2), format!("{}/mae_pp/{id}", d.design), mae)
            }));
            row.push(Cell::text(
                r.designs
                    .iter()
                    .map(|d| d.summary.per_model[m].excluded_draws.to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
            ));
            row.push(Cell::text(
                averaging
                    .iter()
                    .map(|d| d.summary.per_model[m].partial_drop_draws.to_string())
                    .collect::<Vec<_>>()
                    .join("/"),
            ));
            row
        })
        .collect();
    let excluded: usize = r
        .designs
        .iter()
        .chain(&r.coverage)
        .flat_map(|d| &d.summary.per_model)
        .map(|m| m.excluded_draws + m.excluded_repeat_draws)
        .sum();
    let table15 = Table {
        id: "rq2-table15".into(),
        title: "Table 15 — per-model mean absolute error (pp) under the designs".into(),
        caption,
        header,
        rows,
        notes: vec![
            format!(
                "A draw in which a model has no valid Selection in any sampled cell gives it no score; such draws are left out of that model's errors and of its pairs' inversions ({excluded} model-draws over all designs, audit and repeat draws)."
            ),
            partial_drop_note(r, &r.designs),
        ],
    };
    (summary, vec![table13, table14, table15])
}

/// Model-draws without a score among the audit draws of `d`, summed over models.
fn unscored(d: &DesignResult) -> usize {
    d.summary.per_model.iter().map(|m| m.excluded_draws).sum()
}

/// Model-draws with a partial drop among the audit draws of `d`, summed over models; `None` when the
/// design averages a single mean ([`DesignResult::averages_conditions`]).
fn partial(d: &DesignResult) -> Option<usize> {
    d.averages_conditions().then(|| {
        d.summary
            .per_model
            .iter()
            .map(|m| m.partial_drop_draws)
            .sum()
    })
}

/// A count cell: the number, or "—" (no value) when it does not apply.
fn count_cell(key: String, v: Option<usize>) -> Cell {
    Cell::number(
        v.map_or("—".to_string(), |v| v.to_string()),
        key,
        v.map(|v| v as f64),
    )
}

fn exclusion_row(
    name: &str,
    key: &str,
    designs: &[DesignResult],
    f: fn(&DesignResult) -> Option<usize>,
) -> Vec<Cell> {
    let mut row = vec![Cell::text(name)];
    row.extend(
        designs
            .iter()
            .map(|d| count_cell(format!("{}/{key}", d.design), f(d))),
    );
    row
}

/// The note on partial drops of Tables 14 and 15: per model and design with any (audit draws, the
/// conditions dropped in brackets, repeat draws after them), or that there were none.
fn partial_drop_note(r: &Rq2Report, designs: &[DesignResult]) -> String {
    let averaging: Vec<&DesignResult> =
        designs.iter().filter(|d| d.averages_conditions()).collect();
    let mut parts = Vec::new();
    for (m, model) in r.models.iter().enumerate() {
        let cells: Vec<String> = averaging
            .iter()
            .filter_map(|d| {
                let p = d.summary.per_model.get(m)?;
                (p.partial_drop_draws + p.partial_drop_repeat_draws > 0).then(|| {
                    format!(
                        "{}, {} draws ({} conditions dropped; {} repeat draws)",
                        d.label,
                        p.partial_drop_draws,
                        p.dropped_conditions,
                        p.partial_drop_repeat_draws
                    )
                })
            })
            .collect();
        if !cells.is_empty() {
            parts.push(format!("{model}: {}", cells.join("; ")));
        }
    }
    let names = averaging
        .iter()
        .map(|d| d.label.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let rule = "Partial drops: a sampled condition in which a model has no valid Selection leaves that draw's condition average, and the model keeps a score from the other sampled conditions";
    if averaging.is_empty() {
        format!("{rule}; none of these designs averages condition means, so none can occur.")
    } else if parts.is_empty() {
        format!(
            "{rule}. None occurred in {names} ({} draws each, audit and repeat).",
            r.draws
        )
    } else {
        format!(
            "{rule}. Draws with a condition dropped, of {} audit draws per design: {}. None in the other models or designs.",
            r.draws,
            parts.join(" · ")
        )
    }
}

/// The exclusions of RQ2 design results in a few words, for the atlas chart captions: over the audit
/// draws of `designs` and all models, the model-draws without a score and those with a condition
/// dropped (partial drops), e.g. `"0 unscored, 12 partial-drop model-draws"`.
pub fn rq2_exclusions_phrase(designs: &[DesignResult]) -> String {
    let x: usize = designs.iter().map(unscored).sum();
    let p: usize = designs.iter().filter_map(partial).sum();
    format!("{x} unscored, {p} partial-drop model-draws")
}

// --------------------------------------------------------------------------- CSV

/// One CSV field: quoted (with `"` doubled) when it holds a comma, a quote or a line break (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One CSV line (fields joined by commas, `\n` at the end).
fn csv_line<S: AsRef<str>>(fields: &[S]) -> String {
    let mut line = fields
        .iter()
        .map(|f| csv_field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    line.push('\n');
    line
}

/// A number as CSV: Rust's shortest round-trip decimal (`f64::to_string`, never an exponent), empty
/// for `None` or a non-finite value.
pub fn csv_number(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or_else(String::new, |x| x.to_string())
}

/// A [`Table`] as CSV: the header, then per row the row header's text and, for every other cell, its
/// unrounded value when it has one, else its text.
pub fn table_csv(t: &Table) -> String {
    let mut out = csv_line(&t.header);
    for row in &t.rows {
        let fields: Vec<&str> = row
            .iter()
            .enumerate()
            .map(|(i, c)| match (&c.value, i) {
                (Some(v), i) if i > 0 => v.as_str(),
                _ => c.text.as_str(),
            })
            .collect();
        out.push_str(&csv_line(&fields));
    }
    out
}

/// Columns of the re-weighting CSV ([`reweight_csv`]): the app's export and `atlas reweight --format
/// csv` write exactly these.
pub const REWEIGHT_CSV_COLUMNS: [&str; 23] = [
    "bundle",
    "policy",
    "weights",
    "model",
    "score",
    "equal_weight_score",
    "delta_pp",
    "rank",
    "equal_weight_rank",
    "ci95_low",
    "ci95_high",
    "ci_replicates",
    "bootstrap_seed",
    "bootstrap_reps",
    "tau_b",
    "inverted_pairs",
    "pairs_compared",
    "inverted_with",
    "ranking",
    "abstain_share",
    "abstain_threshold",
    "high_abstain",
    "high_abstain_cells",
];

/// Statement-cluster bootstrap intervals for the re-weighting CSV: the run's seed and replicates and
/// each model's 95% interval ([`crate::reweight::ReweightBootstrap::intervals`]).
#[derive(Debug, Clone, Copy)]
pub struct ReweightIntervals<'a> {
    /// Seed of the bootstrap.
    pub seed: u64,
    /// Replicates.
    pub reps: usize,
    /// One per model of the basis, bundle order.
    pub intervals: &'a [Option<crate::reweight::ScoreInterval>],
}

/// The re-weighting table as CSV, one row per model of `models` (indices into
/// [`crate::reweight::ReweightBasis::models`], in the order given): bundle id, repeat policy, the
/// weights ([`crate::reweight::ConditionWeights::describe`]), the model id, its weighted score and
/// equal-weight (Eq. 4) score as fractions, Δ in pp, its rank and equal-weight rank (among all models of
/// the bundle), the 95% statement-cluster interval (fractions; empty without `intervals`), the
/// bootstrap's replicates, seed and size, and the table-wide τ-b, inverted pairs and pairs compared
/// against the equal-weight ranking, and the models whose order with this one is inverted (ids joined
/// by `;`); then the ranking direction ([`crate::direction::ScoreDirection::describe`]), the pooled
/// Abstain share of the cells the score averages, the Abstain threshold, whether the score is flagged
/// (`true` / `false`) and its flagged cells as `condition=share` joined by `;` ([`crate::abstain`]).
/// Numbers are written with [`csv_number`] (full precision), so the same inputs give the same bytes
/// natively and in wasm.
pub fn reweight_csv(
    bundle: &str,
    basis: &crate::reweight::ReweightBasis,
    weights: &crate::reweight::ConditionWeights,
    r: &crate::reweight::Reweighted,
    intervals: Option<ReweightIntervals<'_>>,
    models: &[usize],
) -> String {
    let ids = basis.models();
    let equal = basis.equal_scores();
    let equal_ranks = basis.equal_ranks();
    let policy = basis.policy().key();
    let description = weights.describe(basis);
    let tau_b = csv_number(r.tau_b);
    let ranking = basis.direction().describe();
    let threshold = basis.abstain_threshold();
    let mut out = csv_line(&REWEIGHT_CSV_COLUMNS);
    for &m in models {
        let Some(id) = ids.get(m) else { continue };
        let interval = intervals.and_then(|i| i.intervals.get(m).copied().flatten());
        let inverted_with = r
            .inverted_pairs
            .iter()
            .filter_map(|&(a, b)| match (a == m, b == m) {
                (true, _) => ids.get(b),
                (_, true) => ids.get(a),
                _ => None,
            })
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(";");
        let fields = [
            bundle.to_string(),
            policy.to_string(),
            description.clone(),
            id.clone(),
            csv_number(r.scores.get(m).copied().flatten()),
            csv_number(equal.get(m).copied().flatten()),
            csv_number(r.delta_pp.get(m).copied().flatten()),
            csv_number(r.ranks.get(m).copied().flatten()),
            csv_number(equal_ranks.get(m).copied().flatten()),
            csv_number(interval.map(|i| i.lo)),
            csv_number(interval.map(|i| i.hi)),
            interval.map_or_else(String::new, |i| i.replicates.to_string()),
            intervals.map_or_else(String::new, |i| i.seed.to_string()),
            intervals.map_or_else(String::new, |i| i.reps.to_string()),
            tau_b.clone(),
            r.inversions.inverted.to_string(),
            r.inversions.pairs.to_string(),
            inverted_with,
            ranking.clone(),
            csv_number(r.abstain.get(m).and_then(|a| a.share)),
            csv_number(Some(threshold.value())),
            r.abstain
                .get(m)
                .is_some_and(|a| a.is_flagged(threshold))
                .to_string(),
            r.abstain
                .get(m)
                .map_or_else(String::new, |a| a.flagged_csv(threshold)),
        ];
        out.push_str(&csv_line(&fields));
    }
    out
}

/// The re-weighting of `weights` as JSON, the same document in the app's JSON export (`reweighting`)
/// and in `atlas reweight --format json`: bundle, repeat policy, the weights (preset, description and
/// one value per condition id), the conditions, and per model (ids in bundle order) the weighted and
/// equal-weight scores (fractions), Δ (pp), ranks, τ-b, inversions, the inverted pairs (model ids),
/// the maximum rank displacement, the ranking direction, the Abstain threshold with per model the
/// Abstain shares of the cells its score averages and whether it is flagged, and, with `intervals`,
/// the bootstrap (seed, replicates, stream, level 0.95, one interval or `null` per model).
pub fn reweight_json(
    bundle: &str,
    basis: &crate::reweight::ReweightBasis,
    weights: &crate::reweight::ConditionWeights,
    r: &crate::reweight::Reweighted,
    intervals: Option<ReweightIntervals<'_>>,
) -> serde_json::Value {
    let ids = basis.models();
    let values: serde_json::Map<String, serde_json::Value> = basis
        .conditions()
        .iter()
        .zip(weights.as_slice())
        .map(|(c, w)| (c.id.clone(), serde_json::json!(w)))
        .collect();
    let pairs: Vec<[&str; 2]> = r
        .inverted_pairs
        .iter()
        .filter_map(|&(a, b)| Some([ids.get(a)?.as_str(), ids.get(b)?.as_str()]))
        .collect();
    serde_json::json!({
        "bundle": bundle,
        "policy": basis.policy().key(),
        "weights": {
            "preset": weights.preset(),
            "description": weights.describe(basis),
            "values": values,
        },
        "conditions": basis.conditions(),
        "models": ids,
        "scores": r.scores,
        "equal_weight_scores": basis.equal_scores(),
        "delta_pp": r.delta_pp,
        "ranks": r.ranks,
        "equal_weight_ranks": basis.equal_ranks(),
        "direction": basis.direction(),
        "abstain_threshold": basis.abstain_threshold(),
        "abstain": r.abstain,
        "high_abstain": r.abstain.iter().map(|a| a.is_flagged(basis.abstain_threshold())).collect::<Vec<_>>(),
        "tau_b": r.tau_b,
        "inversions": r.inversions,
        "inverted_pairs": pairs,
        "max_displacement": r.max_displacement,
        "bootstrap": intervals.map(|i| serde_json::json!({
            "method": "statement-cluster bootstrap, percentile interval",
            "seed": i.seed,
            "reps": i.reps,
            "stream": crate::reweight::BOOTSTRAP_STREAM,
            "level": 0.95,
            "intervals": i.intervals,
        })),
    })
}

#[cfg(test)]
mod csv_tests {
    use super::*;

    #[test]
    fn csv_fields_with_commas_quotes_or_line_breaks_are_quoted() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a, b"), "\"a, b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv_number(Some(0.1 + 0.2)), "0.30000000000000004");
        assert_eq!(csv_number(Some(1e-7)), "0.0000001");
        assert_eq!(csv_number(Some(f64::NAN)), "");
        assert_eq!(csv_number(None), "");
    }

    #[test]
    fn a_table_as_csv_uses_the_unrounded_values() {
        let t = Table {
            id: "t".into(),
            title: "T".into(),
            caption: String::new(),
            header: vec!["Model".into(), "Score, %".into()],
            rows: vec![vec![
                Cell::text("m1"),
                Cell::number("12.35", "k", Some(12.345_678)),
            ]],
            notes: Vec::new(),
        };
        assert_eq!(table_csv(&t), "Model,\"Score, %\"\nm1,12.345678\n");
    }

    #[test]
    fn a_table_of_texts_writes_each_text_as_its_csv_field() {
        let t = Table::from_texts(
            "caption".into(),
            vec!["model".into(), "rank: a, b".into()],
            vec![
                vec!["m \"1\"".into(), "2".into()],
                vec!["m2".into(), String::new()],
            ],
        );
        assert_eq!(t.rows[0][1], Cell::text("2"));
        assert_eq!(t.to_csv(), "model,\"rank: a, b\"\n\"m \"\"1\"\"\",2\nm2,\n");
    }
}
