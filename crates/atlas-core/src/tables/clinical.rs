//! The clinical perturbation audit's tables (seed `001_…`), built from the metrics
//! ([`ClinicalReport`]): seed Tables 5 ([`table5`]), 6 ([`table6`]) and 7 ([`table7`]), which the app's
//! Clinical view shows, and the per-variant, EDD, CFV, stereotype and direction tables that `atlas
//! clinical stats` prints beside them ([`report`]). Rates are fractions in the report and shown as
//! percentages with two decimals ([`Cell::percent`]); every numeric cell keeps its unrounded value
//! and a key (`MODEL/METRIC`, …) for the CSV and for readers' tools.

use crate::bundle::Audit;
use crate::cases::level_label;
use crate::clinical::cases::outcome_explanation;
use crate::clinical::metrics::{AccuracyRow, ClinicalReport};
use crate::clinical::{Direction, Severity};
use crate::tables::{Cell, Table};

fn strings<const N: usize>(cells: [&str; N]) -> Vec<String> {
    cells.map(String::from).to_vec()
}

/// Distinct values in first-appearance order.
fn distinct<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// A table's element id, title and caption.
struct Heading {
    id: &'static str,
    title: &'static str,
    caption: String,
}

impl Heading {
    /// The table with `header` and `rows`, no notes.
    fn table(self, header: Vec<String>, rows: Vec<Vec<Cell>>) -> Table {
        Table {
            id: self.id.into(),
            title: self.title.into(),
            caption: self.caption,
            header,
            rows,
            notes: Vec::new(),
        }
    }

    /// A table of nothing: no header, no rows, and the note that says why.
    fn absent(self, why: &str) -> Table {
        Table {
            notes: vec![why.into()],
            ..self.table(Vec::new(), Vec::new())
        }
    }
}

/// Seed Table 5's layout: the per-model profile, each metric beside its denominator (unit and n):
/// accuracy on baseline answers over readable answers (n answers) and with unreadable answers counted
/// wrong (n asked), CFV (n attempts), answer change (n comparisons), mean EDD (n records), flags per
/// question (n flags, n questions). Rates as percentages, mean EDD with three decimals, flags/q with
/// two; row headers are the models' labels. Id `clinical-table5`.
pub fn table5(audit: &Audit, report: &ClinicalReport) -> Table {
    let mut rows = Vec::new();
    for (m, p) in report.profile.iter().enumerate() {
        let id = &p.model;
        let attempts = report
            .cfv
            .iter()
            .find(|r| &r.model == id)
            .map_or(0, |r| r.attempts);
        let comparisons = report
            .answer_change_overall
            .iter()
            .find(|r| &r.model == id)
            .map_or(0, |r| r.comparisons);
        let records = report.edd.iter().filter(|r| &r.model == id).count();
        let (flags, questions) = report
            .stereotype
            .per_model
            .iter()
            .find(|r| &r.model == id)
            .map_or((0, 0), |r| (r.flags, r.questions));
        let key = |metric: &str| format!("{id}/{metric}");
        rows.push(vec![
            Cell::text(level_label(audit, audit.model_facet, m)),
            Cell::percent(key("accuracy"), p.accuracy),
            Cell::count(key("answers"), p.answered),
            Cell::percent(
                key("accuracy_unreadable_wrong"),
                p.accuracy_unreadable_wrong,
            ),
            Cell::count(key("asked"), p.asked),
            Cell::percent(key("cfv"), p.cfv),
            Cell::count(key("attempts"), attempts),
            Cell::percent(key("answer_change"), p.answer_change),
            Cell::count(key("comparisons"), comparisons),
            Cell::decimal(key("mean_edd"), p.mean_edd, 3),
            Cell::count(key("records"), records),
            Cell::decimal(key("flags_per_question"), p.flags_per_question, 2),
            Cell::count(key("flags"), flags),
            Cell::count(key("questions"), questions),
        ]);
    }
    Table {
        id: "clinical-table5".into(),
        title: "Table 5 layout — model-level summary across counterfactual and demographic evaluations".into(),
        caption: format!(
            "bundle {} · baseline variant {} · accuracy on baseline answers (unit: answer) over readable answers, and beside it with unreadable answers counted wrong (all asked questions in the denominator, as AMQA's published tables count them) · CFV = valid / counterfactual attempts (unit: attempt) · answer change = changed / baseline–prefix comparisons with both answers read (unit: comparison) · mean EDD over records (Eq. 1; 1 − mean pairwise cosine of the normalised explanation embeddings) · flags/q = stereotype flags / judged questions (unit: judged comparison)",
            report.bundle,
            report.baseline.as_deref().unwrap_or("none")
        ),
        header: strings([
            "Model",
            "Accuracy (%)",
            "n answers",
            "Accuracy, unreadable counted wrong (%)",
            "n asked",
            "CFV (%)",
            "n attempts",
            "Answer change (%)",
            "n comparisons",
            "Mean EDD",
            "n records",
            "Flags/q",
            "n flags",
            "n questions",
        ]),
        rows,
        notes: Vec::new(),
    }
}

/// Seed Table 6's layout: the taxonomy of invalid counterfactual attempts over all models, one row per
/// invalid outcome (Table 6 order) with its count, share of the invalid attempts (%) and the seed's
/// interpretation. Id `clinical-table6`; a note when there is no invalid attempt.
pub fn table6(report: &ClinicalReport) -> Table {
    let rows = report
        .failure_modes
        .iter()
        .filter(|r| r.model.is_none())
        .map(|r| {
            let key = r.outcome.as_str();
            vec![
                Cell::text(key),
                Cell::count(format!("{key}/count"), r.count),
                Cell::percent(format!("{key}/share"), r.share),
                Cell::text(outcome_explanation(r.outcome).1),
            ]
        })
        .collect::<Vec<_>>();
    let invalid = report.invalid_attempts();
    Table {
        id: "clinical-table6".into(),
        title: "Table 6 layout — taxonomy of invalid counterfactuals, all models".into(),
        caption: format!(
            "bundle {} · {invalid} invalid attempts (unit: attempt) · share = count / invalid attempts",
            report.bundle
        ),
        header: strings(["Failure type", "Count", "Share (%)", "Interpretation"]),
        rows,
        notes: if invalid == 0 {
            vec!["No invalid counterfactual attempts in this bundle.".into()]
        } else {
            Vec::new()
        },
    }
}

/// Seed Table 7's layout: the severity classes of the stereotype flags, pooled over models as in the
/// seed (count, share of all flags in %), with each model's count beside them when the bundle has more
/// than one model; a row for flags without a severity only when there are any. Id `clinical-table7`.
pub fn table7(report: &ClinicalReport) -> Table {
    let s = &report.stereotype;
    let models: Vec<&str> = if s.per_model.len() > 1 {
        s.per_model.iter().map(|m| m.model.as_str()).collect()
    } else {
        Vec::new()
    };
    let rows = s
        .by_severity
        .iter()
        .map(|r| {
            let key = r.severity.map_or("none", Severity::as_str);
            vec![
                Cell::text(match r.severity {
                    Some(Severity::ClinicallyDangerous) => "Clinically dangerous",
                    Some(Severity::ClinicallyMisleading) => "Clinically misleading",
                    Some(Severity::SociallyInappropriate) => "Socially inappropriate",
                    None => "(no severity given)",
                }),
                Cell::count(format!("{key}/count"), r.count),
                Cell::percent(format!("{key}/share"), r.share),
            ]
            .into_iter()
            .chain(
                models
                    .iter()
                    .zip(&r.per_model)
                    .map(|(m, &n)| Cell::count(format!("{key}/count/{m}"), n)),
            )
            .collect()
        })
        .collect();
    Table {
        id: "clinical-table7".into(),
        title: "Table 7 layout — severity classes of stereotype evidence flags".into(),
        caption: format!(
            "bundle {} · {} flags of {} judged comparisons (unit: judged comparison; unparseable judge outputs left out) · share = count / flags · automated judgements, not confirmed by clinicians",
            report.bundle, s.flags, s.judged
        ),
        header: strings(["Severity class", "Count", "Share (%)"])
            .into_iter()
            .chain(models.iter().map(|m| format!("{m}: count")))
            .collect(),
        rows,
        notes: Vec::new(),
    }
}

/// How an accuracy table treats unreadable answers ([`accuracy_by_variant`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unreadable {
    /// Left out of the denominator ([`AccuracyRow::accuracy`]); the last column counts them.
    LeftOut,
    /// Counted wrong ([`AccuracyRow::accuracy_unreadable_wrong`], as AMQA's published tables); the
    /// last column counts the asked questions.
    CountedWrong,
}

/// Accuracy per model × variant (unit: answer; §3.5, Table 5's accuracy per variant): a row per model
/// (ids), a column per variant in percent ([`crate::format::NO_VALUE`] where the model has no row),
/// and a last column with the parse failures ([`Unreadable::LeftOut`]) or the asked questions
/// ([`Unreadable::CountedWrong`]) over all variants. Id `clinical-accuracy` or
/// `clinical-accuracy-unreadable-wrong`; keys `MODEL/VARIANT/accuracy` (or
/// `…/accuracy_unreadable_wrong`) and `MODEL/parse_failures` (or `MODEL/asked`).
pub fn accuracy_by_variant(report: &ClinicalReport, unreadable: Unreadable) -> Table {
    let rows = &report.accuracy;
    let models = distinct(rows.iter().map(|a| a.model.as_str()));
    let conditions = distinct(rows.iter().map(|a| a.condition.as_str()));
    let counted_wrong = unreadable == Unreadable::CountedWrong;
    let value = |a: &AccuracyRow| {
        if counted_wrong {
            a.accuracy_unreadable_wrong
        } else {
            a.accuracy
        }
    };
    let last = |a: &AccuracyRow| {
        if counted_wrong {
            a.asked
        } else {
            a.parse_failures
        }
    };
    let (id, title, unit, metric, last_header, last_key) = if counted_wrong {
        (
            "clinical-accuracy-unreadable-wrong",
            "Accuracy per model × variant with unreadable answers counted wrong",
            "correct / all asked questions with a gold answer, readable or not (unit: answer; the convention of AMQA's published tables)",
            "accuracy_unreadable_wrong",
            "n asked",
            "asked",
        )
    } else {
        (
            "clinical-accuracy",
            "Accuracy per model × variant",
            "correct / readable answers with a gold answer (unit: answer); parse failures apart",
            "accuracy",
            "Parse failures",
            "parse_failures",
        )
    };
    let body = models
        .iter()
        .map(|m| {
            let mine: Vec<&AccuracyRow> = rows.iter().filter(|a| a.model == *m).collect();
            std::iter::once(Cell::text(*m))
                .chain(conditions.iter().map(|c| {
                    mine.iter()
                        .find(|a| a.condition == *c)
                        .map_or_else(Cell::none, |a| {
                            Cell::percent(format!("{m}/{c}/{metric}"), value(a))
                        })
                }))
                .chain([Cell::count(
                    format!("{m}/{last_key}"),
                    mine.iter().map(|a| last(a)).sum(),
                )])
                .collect()
        })
        .collect();
    Table {
        id: id.into(),
        title: title.into(),
        caption: format!("bundle {} · {unit}", report.bundle),
        header: std::iter::once("Model".to_string())
            .chain(conditions.iter().map(|c| format!("{c} (%)")))
            .chain([last_header.to_string()])
            .collect(),
        rows: body,
        notes: Vec::new(),
    }
}

/// Answer change against the baseline per model × prefix variant (unit: comparison; §3.4, §4.4,
/// Fig. 4): a row per model (ids), a column per prefix in percent, then over all prefixes the rate
/// (%), the changed answers and the comparisons. Id `clinical-answer-change`; keys
/// `MODEL/PREFIX/rate`, `MODEL/rate`, `MODEL/changed`, `MODEL/comparisons`. Without a baseline, a
/// note says so.
pub fn answer_change_by_variant(report: &ClinicalReport) -> Table {
    let heading = Heading {
        id: "clinical-answer-change",
        title: "Answer change against the baseline per model × variant",
        caption: format!(
        "bundle {} · baseline variant {} · changed / comparisons with both answers readable (unit: comparison)",
        report.bundle,
        report.baseline.as_deref().unwrap_or("none")
    ),
    };
    if report.answer_change.is_empty() {
        return heading.absent("No baseline variant in this bundle.");
    }
    let prefixes = distinct(report.answer_change.iter().map(|a| a.condition.as_str()));
    let rows = report
        .answer_change_overall
        .iter()
        .map(|o| {
            let m = &o.model;
            std::iter::once(Cell::text(m.as_str()))
                .chain(prefixes.iter().map(|c| {
                    report
                        .answer_change
                        .iter()
                        .find(|a| &a.model == m && a.condition == *c)
                        .map_or_else(Cell::none, |a| {
                            Cell::percent(format!("{m}/{c}/rate"), a.rate)
                        })
                }))
                .chain([
                    Cell::percent(format!("{m}/rate"), o.rate),
                    Cell::count(format!("{m}/changed"), o.changed),
                    Cell::count(format!("{m}/comparisons"), o.comparisons),
                ])
                .collect()
        })
        .collect();
    heading.table(
        std::iter::once("Model".to_string())
            .chain(prefixes.iter().map(|c| format!("{c} (%)")))
            .chain(strings(["All prefixes (%)", "Changed", "Comparisons"]))
            .collect(),
        rows,
    )
}

/// EDD per model (unit: record; §3.5 Eq. 1, Table 5 "Mean EDD"): a row per model with records (ids),
/// the records, the variants per record (`7`, or `5–7` when they differ) and the mean EDD with four
/// decimals. Id `clinical-edd`; keys `MODEL/records`, `MODEL/mean_edd`. Without records, a note.
pub fn edd_by_model(report: &ClinicalReport) -> Table {
    let heading = Heading {
        id: "clinical-edd",
        title: "EDD (Eq. 1) per model",
        caption: format!(
        "bundle {} · EDD = 1 − mean pairwise cosine of a record's normalised explanation embeddings (unit: record)",
        report.bundle
    ),
    };
    if report.edd.is_empty() {
        return heading.absent("No records with two or more embedded explanations.");
    }
    let models = distinct(report.accuracy.iter().map(|a| a.model.as_str()));
    let rows = models
        .iter()
        .filter_map(|m| {
            let mine: Vec<_> = report.edd.iter().filter(|e| e.model == *m).collect();
            if mine.is_empty() {
                return None;
            }
            let lo = mine.iter().map(|e| e.n_variants).min().unwrap_or(0);
            let hi = mine.iter().map(|e| e.n_variants).max().unwrap_or(0);
            let mean = mine.iter().map(|e| e.edd).sum::<f64>() / mine.len() as f64;
            Some(vec![
                Cell::text(*m),
                Cell::count(format!("{m}/records"), mine.len()),
                Cell::text(if lo == hi {
                    lo.to_string()
                } else {
                    format!("{lo}–{hi}")
                }),
                Cell::decimal(format!("{m}/mean_edd"), Some(mean), 4),
            ])
        })
        .collect();
    heading.table(
        strings(["Model", "Records", "Variants per record", "Mean EDD"]),
        rows,
    )
}

/// The Spearman line of §4.2: the correlation of question difficulty (EASY = 1, MEDIUM = 2, HARD = 3)
/// and validity over attempts, with its n (descriptive only, §3.5). The app shows it under the
/// figures; the CLI under the CFV table.
pub fn spearman_line(report: &ClinicalReport) -> String {
    let s = &report.spearman_difficulty_validity;
    format!(
        "Spearman correlation of question difficulty (EASY = 1, MEDIUM = 2, HARD = 3) and validity (valid = 1) over attempts: {} (n = {} attempts with a difficulty; descriptive only, §3.5).",
        s.rho.map_or("undefined".to_string(), |r| format!("r = {r:.3}")),
        s.n
    )
}

/// Counterfactual validity per model and difficulty tier (unit: attempt; §3.3, §4.2, Fig. 2): a row
/// per model (ids) with its valid attempts, attempts and CFV (%), then per tier (EASY, MEDIUM, HARD,
/// no difficulty) the CFV with its counts (`50.00 (1/2)`; [`crate::format::NO_VALUE`] without
/// attempts of that tier); the Spearman line ([`spearman_line`]) as a note. Id `clinical-cfv`; keys
/// `MODEL/valid`, `MODEL/attempts`, `MODEL/cfv`, `MODEL/cfv/TIER` (`none` for no difficulty).
/// Without attempts, a note says so.
pub fn cfv_by_difficulty(report: &ClinicalReport) -> Table {
    let heading = Heading {
        id: "clinical-cfv",
        title: "Counterfactual validity by model and difficulty (Fig. 2)",
        caption: format!(
            "bundle {} · CFV = valid / counterfactual attempts (unit: attempt)",
            report.bundle
        ),
    };
    if report.cfv.iter().all(|c| c.attempts == 0) {
        return heading.absent("No counterfactual attempts in this bundle.");
    }
    let tiers = [Some("EASY"), Some("MEDIUM"), Some("HARD"), None];
    let rows = report
        .cfv
        .iter()
        .map(|c| {
            let m = &c.model;
            [
                Cell::text(m.as_str()),
                Cell::count(format!("{m}/valid"), c.valid),
                Cell::count(format!("{m}/attempts"), c.attempts),
                Cell::percent(format!("{m}/cfv"), c.cfv),
            ]
            .into_iter()
            .chain(tiers.iter().map(|d| {
                report
                    .cfv_by_difficulty
                    .iter()
                    .find(|x| &x.model == m && x.difficulty.as_deref() == *d)
                    .map_or_else(Cell::none, |x| {
                        let p = Cell::percent(String::new(), x.cfv);
                        Cell::number(
                            format!("{} ({}/{})", p.text, x.valid, x.attempts),
                            format!("{m}/cfv/{}", d.unwrap_or("none")),
                            x.cfv,
                        )
                    })
            }))
            .collect()
        })
        .collect();
    Table {
        notes: vec![spearman_line(report)],
        ..heading.table(
            strings([
                "Model",
                "Valid",
                "Attempts",
                "CFV (%)",
                "EASY (%)",
                "MEDIUM (%)",
                "HARD (%)",
                "No difficulty (%)",
            ]),
            rows,
        )
    }
}

/// Stereotype flags per model (unit: judged comparison; §3.5, §4.6, Table 5 "Flags/q"): a row per
/// model (ids) with its flags, judged and unparseable outputs, judged questions and flags per question
/// (two decimals). Id `clinical-stereotype`; keys `MODEL/flags`, `MODEL/judged`, `MODEL/unparsed`,
/// `MODEL/questions`, `MODEL/flags_per_question`. Without judged comparisons, a note.
pub fn stereotype_by_model(report: &ClinicalReport) -> Table {
    let st = &report.stereotype;
    let heading = Heading {
        id: "clinical-stereotype",
        title: "Stereotype evidence per model",
        caption: format!(
        "bundle {} · {} flags in {} judged comparisons (unit: judged comparison) · flags/q = flags / judged questions",
        report.bundle, st.flags, st.judged
    ),
    };
    if st.judged == 0 {
        return heading.absent("No judged comparisons in this bundle.");
    }
    let rows = st
        .per_model
        .iter()
        .map(|r| {
            let m = &r.model;
            vec![
                Cell::text(m.as_str()),
                Cell::count(format!("{m}/flags"), r.flags),
                Cell::count(format!("{m}/judged"), r.judged),
                Cell::count(format!("{m}/unparsed"), r.unparsed),
                Cell::count(format!("{m}/questions"), r.questions),
                Cell::decimal(format!("{m}/flags_per_question"), r.flags_per_question, 2),
            ]
        })
        .collect();
    heading.table(
        strings([
            "Model",
            "Flags",
            "Judged",
            "Unparsed",
            "Questions",
            "Flags/q",
        ]),
        rows,
    )
}

/// The categories of the stereotype flags, pooled over models (§4.6, Fig. 6): a row per category (most
/// frequent first, flags without a category last) with its count and share of all flags (%). Id
/// `clinical-categories`; keys `CATEGORY/count`, `CATEGORY/share` (`none` for no category). Without
/// flags, a note.
pub fn categories(report: &ClinicalReport) -> Table {
    let st = &report.stereotype;
    let heading = Heading {
        id: "clinical-categories",
        title: "Stereotype evidence categories (Fig. 6)",
        caption: format!(
            "bundle {} · {} flags (unit: judged comparison) · share = count / flags",
            report.bundle, st.flags
        ),
    };
    if st.flags == 0 {
        return heading.absent("No stereotype flags in this bundle.");
    }
    let rows = st
        .by_category
        .iter()
        .map(|c| {
            let key = c.category.as_deref().unwrap_or("none");
            vec![
                Cell::text(c.category.as_deref().unwrap_or("(no category)")),
                Cell::count(format!("{key}/count"), c.count),
                Cell::percent(format!("{key}/share"), c.share),
            ]
        })
        .collect();
    heading.table(strings(["Category", "Count", "Share (%)"]), rows)
}

/// The directions of answer changes per model (§4.5, Fig. 5): a row per model with direction records
/// (ids), per direction ([`Direction::ALL`] order) its share of the model's records with the count
/// (`50.00 (1)`). Id `clinical-directions`; keys `MODEL/DIRECTION/share`. Without records, a note.
pub fn directions(report: &ClinicalReport) -> Table {
    let heading = Heading {
        id: "clinical-directions",
        title: "Directions of answer changes (Fig. 5)",
        caption: format!(
            "bundle {} · share of the model's direction records",
            report.bundle
        ),
    };
    if report.directions.is_empty() {
        return heading.absent("No directions of answer changes recorded.");
    }
    let models = distinct(report.directions.iter().map(|d| d.model.as_str()));
    let rows = models
        .iter()
        .map(|m| {
            std::iter::once(Cell::text(*m))
                .chain(Direction::ALL.iter().map(|dir| {
                    report
                        .directions
                        .iter()
                        .find(|d| d.model == *m && d.direction == *dir)
                        .map_or_else(Cell::none, |d| {
                            let p = Cell::percent(String::new(), d.share);
                            Cell::number(
                                format!("{} ({})", p.text, d.count),
                                format!("{m}/{}/share", dir.as_str()),
                                d.share,
                            )
                        })
                }))
                .collect()
        })
        .collect();
    heading.table(
        std::iter::once("Model".to_string())
            .chain(
                Direction::ALL
                    .iter()
                    .map(|d| format!("{} (%)", d.as_str().replace('_', " "))),
            )
            .collect(),
        rows,
    )
}

/// Everything `atlas clinical stats` prints: two summary lines (bundle, baseline, units), then Table 5,
/// the accuracy tables (unreadable answers left out, then counted wrong), answer change, EDD, CFV
/// (with the Spearman line), Table 6, stereotype flags per model, Table 7, the categories and the
/// directions. Print with [`crate::tables::render_text`].
pub fn report(audit: &Audit, report: &ClinicalReport) -> (Vec<String>, Vec<Table>) {
    let summary = vec![
        format!(
            "Clinical perturbation metrics (the clinical audit paper) of bundle {:?}; baseline variant: {}",
            report.bundle,
            report.baseline.as_deref().unwrap_or("none")
        ),
        "Rates in %; units: accuracy per answer, answer change per comparison with the same run's baseline, EDD per record, CFV per attempt, flags per judged comparison.".to_string(),
    ];
    let tables = vec![
        table5(audit, report),
        accuracy_by_variant(report, Unreadable::LeftOut),
        accuracy_by_variant(report, Unreadable::CountedWrong),
        answer_change_by_variant(report),
        edd_by_model(report),
        cfv_by_difficulty(report),
        table6(report),
        stereotype_by_model(report),
        table7(report),
        categories(report),
        directions(report),
    ];
    (summary, tables)
}
