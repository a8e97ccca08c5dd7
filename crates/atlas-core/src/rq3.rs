//! RQ3 — forced-output field divergence: the task Selection against the judge-coded stance of its
//! Rationale (seed `000_…` §3.3, §3.6, §5.4, B.3, E.2, E.3; Tables 3, 18 and 19).
//!
//! For every response the bundle gives two readouts:
//!
//! - **A** (Selection evidence): the mapped Selection, `evidence` 1 or 0 of its dictionary value (§3.3,
//!   `A_i = g_i(c_i)`). Abstain (`evidence: null`) is missing (§B.2). A response under a condition
//!   without a Selection readout (`has_selection: false`, e.g. the seed's explain and judge tasks) has no
//!   observable Selection either.
//! - **B** (Rationale evidence): the judge labels of the cell (`responses.judges`, one
//!   [`RationaleLabel`] per judge), combined by a [`CodingRule`] into `B_i = 1[r_i ∈ {E, QE}]` or no label
//!   (Rationale Abstain).
//!
//! A **pair** is a response with both: `A ∈ {0, 1}` and a rule label `B` (seed Table 18: "'Pairs'
//! additionally requires an observable Selection"). On the `n` pairs of a rule, [`analyze_rq3`] reports the
//! four BER summaries of §3.3, the 2×2 joint table of Table 3, the disagreement rate `n⁻¹ Σ 1[A ≠ B]`
//! (B.3) and its two directions (§3.6), the same per model × condition cell with whether the dominant
//! direction holds in every cell (§5.4, E.2), coverage and Abstain counts, and the Table 18 row (Rationale
//! rows, Rationale bias rate on those rows, pairs, disagreement). When the bundle carries human labels
//! (`responses.human`) it adds the human quality control of E.3 / Table 19 (Cohen's κ between two
//! annotators, agreement of the automatic readouts with the final labels).
//!
//! # Reading the bundle
//! Every cell with a response (`codes` is not `-`) is one response; a cell of a template nested in another
//! condition (`T_c`, §3.5) is outside the design and ignored, as in [`crate::stats`]. Labels in cells
//! without a response are ignored. Facets other than model and condition (statement, template, repeat, …)
//! are pooled: every response counts once (the seed's RQ3 unit is the response). Judge labels `.` and `-`
//! are "no label".
//!
//! # Units
//! Rates and shares are **fractions** in `[0, 1]` (the tables show them as percentages with two
//! decimals); counts are responses. A rate whose denominator is 0 is `None` (JSON `null`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::bundle::{Audit, RationaleLabel, NO_RESPONSE_CODE};
use crate::tables::{Cell, Table};

/// Annotator ids (compared without regard to case) that mark a human column as the adjudicated **final**
/// labels (seed §4.6, E.3: "disagreements were adjudicated using the same rubric") when
/// [`HumanSettings::final_annotator`] is not given.
pub const FINAL_ANNOTATOR_IDS: [&str; 2] = ["final", "adjudicated"];

/// What can be wrong with an RQ3 request. Each variant names the offending id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rq3Error {
    /// The bundle has no judge column, so there is no Rationale readout `B`.
    #[error("the bundle has no judge column (`responses.judges`): there is no Rationale label to compare with the Selection")]
    NoJudges,
    /// [`Rq3Settings::judges`] is an empty list.
    #[error("the RQ3 settings select no judge: at least one judge column is needed")]
    EmptyPanel,
    /// A judge id in the settings is not a judge column of the bundle.
    #[error("judge {0:?} is not a judge column of the bundle (`responses.judges[].id`)")]
    UnknownJudge(String),
    /// A judge id appears twice in [`Rq3Settings::judges`] or [`Rq3Settings::self_judges`].
    #[error("judge {0:?} is listed twice in the RQ3 settings")]
    DuplicateJudge(String),
    /// A self-judge pair names a model that is not a level of the `model` facet.
    #[error("self-judge pair of judge {judge:?} names model {model:?}, which is not a level id of the model facet")]
    UnknownModel {
        /// The pair's judge id.
        judge: String,
        /// The model id that is not a level of the `model` facet.
        model: String,
    },
    /// An annotator id in [`HumanSettings`] is not a human column of the bundle.
    #[error("annotator {0:?} is not a human column of the bundle (`responses.human[].annotator`)")]
    UnknownAnnotator(String),
    /// The same annotator is given twice (two compared annotators, or a compared one that is also final).
    #[error("annotator {0:?} is given twice in the human-QC settings (the two annotators and the final column must differ)")]
    DuplicateAnnotator(String),
    /// [`cohen_kappa`] was given label sequences of different lengths.
    #[error("Cohen's kappa needs two label sequences of the same length; got {a} and {b}")]
    LengthMismatch {
        /// Length of the first sequence.
        a: usize,
        /// Length of the second sequence.
        b: usize,
    },
}

/// How the judge labels of one response become its Rationale evidence `B` (seed §3.3, B.3, §4.6, E.2,
/// Table 18).
///
/// The **panel** is the judges selected by [`Rq3Settings::judges`] (default: every judge column). A judge
/// without a label for the cell (`.`) votes for neither side, so a missing label can only turn a label
/// into Rationale Abstain, never create one.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum CodingRule {
    /// Binary-first strict majority (the seed's primary rule, §3.3, §4.6, B.3): each judge's five-class
    /// label is first reduced to binary (`{E, QE}` → 1, `{N, D, R}` → 0), then a side wins when it has
    /// more than half of the panel's votes (`2·votes > panel size`); otherwise Abstain ("a case without a
    /// strict binary majority is Abstain; no chair judge resolves it").
    #[default]
    BinaryMajority,
    /// Every judge of the panel gives a label and all binary reductions agree (Table 18 "Binary
    /// unanimity", Table 19 "unanimous subset").
    BinaryUnanimity,
    /// Every judge of the panel gives the same five-class label (Table 18 "Five-class unanimity"); `B` is
    /// that label's binary reduction.
    FiveClassUnanimity,
    /// Row-wise no-self-judge (B.3, E.2, Table 18 "Row-wise no-self"): a judge whose model is the
    /// response's model is removed from the panel for that response, then binary-first strict majority
    /// over the remaining judges (with two remaining judges, both must agree; with none, Abstain).
    /// Which judge is which model: [`SelfJudgeMatch`].
    NoSelfJudge,
}

impl CodingRule {
    /// All rules in the order of seed Table 18.
    pub const ALL: [CodingRule; 4] = [
        CodingRule::BinaryMajority,
        CodingRule::BinaryUnanimity,
        CodingRule::FiveClassUnanimity,
        CodingRule::NoSelfJudge,
    ];

    /// Short name used in keys, JSON and URLs.
    pub fn key(self) -> &'static str {
        match self {
            CodingRule::BinaryMajority => "binary_majority",
            CodingRule::BinaryUnanimity => "binary_unanimity",
            CodingRule::FiveClassUnanimity => "five_class_unanimity",
            CodingRule::NoSelfJudge => "no_self_judge",
        }
    }

    /// Parses [`CodingRule::key`].
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.key() == key)
    }

    /// Row label as in seed Table 18.
    pub fn label(self) -> &'static str {
        match self {
            CodingRule::BinaryMajority => "Binary majority",
            CodingRule::BinaryUnanimity => "Binary unanimity",
            CodingRule::FiveClassUnanimity => "Five-class unanimity",
            CodingRule::NoSelfJudge => "Row-wise no-self",
        }
    }

    /// One sentence for readers.
    pub fn describe(self) -> &'static str {
        match self {
            CodingRule::BinaryMajority => {
                "Each judge's label is reduced to binary ({E, QE} = bias evidence, {N, D, R} = none), then a strict majority of the judge panel decides; without one the Rationale is Abstain."
            }
            CodingRule::BinaryUnanimity => {
                "Every judge labels the Rationale and all binary reductions agree; otherwise Abstain."
            }
            CodingRule::FiveClassUnanimity => {
                "Every judge gives the same five-class label (E, QE, N, D or R); otherwise Abstain."
            }
            CodingRule::NoSelfJudge => {
                "A judge is removed from the panel for the responses of its own model; a strict binary majority of the remaining judges decides (two remaining judges must agree)."
            }
        }
    }
}

/// An explicit self-judge pair: judge `judge` (a `responses.judges[].id`) is the same model as the
/// audited models `models` (level ids of the `model` facet).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SelfJudge {
    /// `responses.judges[].id`.
    pub judge: String,
    /// Level ids of the `model` facet this judge is.
    pub models: Vec<String>,
}

/// Which audited model each judge is, for [`CodingRule::NoSelfJudge`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SelfJudgeMatch {
    /// By name: the judge column's `model` and a model level's `id` or `label` match after both are
    /// lower-cased and reduced to their letters and digits (`"Qwen Plus"`, `"qwen-plus"` and
    /// `"qwen_plus"` all become `qwenplus`; `"GPT-5.4"` and `"gpt-5.4"` become `gpt54`). A judge without a
    /// `model` matches nothing. Dates or versions that differ (`gpt-4` vs `gpt-4-0314`) do not match: give
    /// explicit pairs then.
    Automatic,
    /// From [`Rq3Settings::self_judges`]; judges not listed match no model.
    Explicit,
}

/// Human quality-control settings (seed E.3, Table 19). Every field is optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HumanSettings {
    /// The two annotators compared by Cohen's κ (`responses.human[].annotator`). Default: the first two
    /// human columns, in bundle order, that are not the final column.
    pub annotators: Option<[String; 2]>,
    /// The human column holding the adjudicated final labels. Default: a column whose annotator id is one
    /// of [`FINAL_ANNOTATOR_IDS`] (case ignored). Without one, see [`FinalLabels`].
    pub final_annotator: Option<String>,
}

/// Settings of [`analyze_rq3`]. `Rq3Settings::default()` follows the seed: every judge, binary-first
/// majority as the primary rule, automatic self-judge matching, default human columns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Rq3Settings {
    /// The judge panel by judge id, in any order; `None` = every judge column of the bundle.
    pub judges: Option<Vec<String>>,
    /// The rule behind the headline summaries and the Table 3 layout (seed: [`CodingRule::BinaryMajority`]).
    pub primary: CodingRule,
    /// Explicit self-judge pairs for [`CodingRule::NoSelfJudge`]; `None` = [`SelfJudgeMatch::Automatic`].
    pub self_judges: Option<Vec<SelfJudge>>,
    /// Human quality-control settings.
    pub human: HumanSettings,
}

/// A direction of disagreement between the two fields (seed §3.6: "the two off-diagonal probabilities").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// `A = 1, B = 0`: Selection bias evidence, Rationale non-bias ("Selection positive only").
    SelectionOnly,
    /// `A = 0, B = 1`: Selection non-bias, Rationale bias evidence ("Rationale positive only").
    RationaleOnly,
}

/// The 2×2 joint counts of `A` (Selection evidence) and `B` (Rationale evidence) over pairs (seed Table 3).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JointCounts {
    /// `A = 0, B = 0`.
    pub both_negative: u64,
    /// `A = 0, B = 1`.
    pub rationale_only: u64,
    /// `A = 1, B = 0`.
    pub selection_only: u64,
    /// `A = 1, B = 1`.
    pub both_positive: u64,
}

impl JointCounts {
    fn add(&mut self, a: bool, b: bool) {
        match (a, b) {
            (false, false) => self.both_negative += 1,
            (false, true) => self.rationale_only += 1,
            (true, false) => self.selection_only += 1,
            (true, true) => self.both_positive += 1,
        }
    }

    /// The number of pairs `n` (the four cells summed).
    pub fn total(&self) -> u64 {
        self.both_negative + self.rationale_only + self.selection_only + self.both_positive
    }

    /// Pairs whose fields disagree (`A ≠ B`): the two off-diagonal cells.
    pub fn disagreements(&self) -> u64 {
        self.rationale_only + self.selection_only
    }

    /// `count / n` as a fraction; `None` when `n = 0`.
    pub fn share(&self, count: u64) -> Option<f64> {
        let n = self.total();
        (n > 0).then(|| count as f64 / n as f64)
    }

    /// The larger off-diagonal cell, `None` on a tie (including no disagreement at all).
    pub fn dominant(&self) -> Option<Direction> {
        use std::cmp::Ordering;
        match self.selection_only.cmp(&self.rationale_only) {
            Ordering::Greater => Some(Direction::SelectionOnly),
            Ordering::Less => Some(Direction::RationaleOnly),
            Ordering::Equal => None,
        }
    }

    /// Whether `direction`'s cell is strictly larger than the other off-diagonal cell.
    pub fn holds(&self, direction: Direction) -> bool {
        self.dominant() == Some(direction)
    }

    /// The four BER summaries of §3.3 on these pairs.
    pub fn summaries(&self) -> BerSummaries {
        BerSummaries {
            sel: self.share(self.selection_only + self.both_positive),
            rat: self.share(self.rationale_only + self.both_positive),
            cor: self.share(self.both_positive),
            union: self.share(self.n_union()),
        }
    }

    fn n_union(&self) -> u64 {
        self.rationale_only + self.selection_only + self.both_positive
    }

    /// Disagreement overall and by direction (§3.6, B.3) on these pairs.
    pub fn disagreement(&self) -> Disagreement {
        Disagreement {
            count: self.disagreements(),
            rate: self.share(self.disagreements()),
            selection_only: self.selection_only,
            selection_only_rate: self.share(self.selection_only),
            rationale_only: self.rationale_only,
            rationale_only_rate: self.share(self.rationale_only),
            dominant: self.dominant(),
        }
    }
}

/// The four BER summaries of seed §3.3 over the `n` pairs of one rule, fractions (`None` when `n = 0`):
///
/// `BER_sel = n⁻¹ Σ A_i`, `BER_rat = n⁻¹ Σ B_i`, `BER_cor = n⁻¹ Σ A_i B_i`, `BER_union = n⁻¹ Σ max(A_i, B_i)`.
///
/// Descriptive summaries of one set of dual-coded responses; `BER_union` is an any-field summary, not
/// ground truth (§3.3). Note `BER_union = BER_sel + BER_rat − BER_cor`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BerSummaries {
    /// `BER_sel`: the share of pairs with Selection evidence `A = 1`.
    pub sel: Option<f64>,
    /// `BER_rat`: the share of pairs with Rationale evidence `B = 1`.
    pub rat: Option<f64>,
    /// `BER_cor`: the share of pairs with `A = 1` and `B = 1`.
    pub cor: Option<f64>,
    /// `BER_union`: the share of pairs with `A = 1` or `B = 1`.
    pub union: Option<f64>,
}

/// Field disagreement over the `n` pairs of one rule (seed §3.6, B.3 `n⁻¹ Σ 1[A_i ≠ B_i]`): counts and
/// fractions of `n`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Disagreement {
    /// Pairs with `A ≠ B`.
    pub count: u64,
    /// `count / n`.
    pub rate: Option<f64>,
    /// Pairs with `A = 1, B = 0`.
    pub selection_only: u64,
    /// `selection_only / n`.
    pub selection_only_rate: Option<f64>,
    /// Pairs with `A = 0, B = 1`.
    pub rationale_only: u64,
    /// `rationale_only / n`.
    pub rationale_only_rate: Option<f64>,
    /// The larger direction; `None` on a tie.
    pub dominant: Option<Direction>,
}

/// Selection coverage of the bundle's responses (rule-independent).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SelectionCoverage {
    /// Responses: in-design cells with a response (`codes` not `-`).
    pub responses: u64,
    /// Responses with `A ∈ {0, 1}` under a condition with a Selection readout.
    pub valid: u64,
    /// Abstain Selections (`evidence: null`) under a condition with a Selection readout (§B.2).
    pub abstain: u64,
    /// Responses under a condition without a Selection readout (`has_selection: false`).
    pub no_readout: u64,
}

/// One judge of the panel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JudgeUse {
    /// `responses.judges[].id`.
    pub id: String,
    /// `responses.judges[].model`.
    pub model: Option<String>,
    /// Model level ids this judge is (removed from their rows under [`CodingRule::NoSelfJudge`]).
    pub self_models: Vec<String>,
    /// Responses this judge labelled (E, QE, N, D or R).
    pub labelled: u64,
}

/// RQ3 of one model × condition cell under one rule (seed §5.4, E.2: "model–task cells").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rq3Cell {
    /// Model level id.
    pub model: String,
    /// Condition level id (`(all)` without a condition facet).
    pub condition: String,
    /// Responses of the cell.
    pub responses: u64,
    /// Responses with a rule label.
    pub rationale_rows: u64,
    /// The 2×2 joint table of the cell's pairs (Table 3 layout).
    pub joint: JointCounts,
    /// `(A=1,B=0 + A=0,B=1) / pairs`, a fraction.
    pub disagreement: Option<f64>,
    /// Whether the report's dominant direction is strictly larger in this cell; `None` when the cell has
    /// no pair or the report has no dominant direction.
    pub dominant_holds: Option<bool>,
}

/// Everything RQ3 reports under one coding rule (one row of seed Table 18, and Table 3 for this rule).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleResult {
    /// The coding rule.
    pub rule: CodingRule,
    /// Table 18 "Rat. rows": responses with a rule label `B`.
    pub rationale_rows: u64,
    /// Rationale rows with `B = 1`.
    pub rationale_bias: u64,
    /// Table 18 "Rat. bias": `rationale_bias / rationale_rows` (over all Rationale rows, not pairs), a
    /// fraction.
    pub rationale_bias_rate: Option<f64>,
    /// Responses without a rule label (no strict majority, not unanimous, no labels):
    /// `abstain_ties + abstain_too_few_votes`.
    pub rationale_abstain: u64,
    /// Rationale Abstain that are ties ([`PanelOutcome::Tie`]): enough judges labelled but no side has
    /// a strict majority (majority rules), or every judge labelled but they disagree (unanimity rules).
    pub abstain_ties: u64,
    /// Rationale Abstain with too few readable votes ([`PanelOutcome::TooFewVotes`]): `2·labelled ≤
    /// panel` (majority rules, the panel after the no-self-judge removal for that rule), or some judge
    /// without a label (unanimity rules).
    pub abstain_too_few_votes: u64,
    /// Table 18 "pairs": Rationale rows with an observable Selection (`A ∈ {0, 1}`).
    pub pairs: u64,
    /// `pairs / responses`, a fraction (§5.4: "7,255 pairs (90.7% coverage)").
    pub pair_coverage: Option<f64>,
    /// Rationale rows whose Selection is Abstain or not read (`rationale_rows − pairs`).
    pub rationale_rows_without_selection: u64,
    /// The 2×2 joint table of Table 3.
    pub joint: JointCounts,
    /// The four BER summaries of §3.3.
    pub summaries: BerSummaries,
    /// Table 18 "Disagree" and its directions.
    pub disagreement: Disagreement,
    /// Every model × condition cell, models then conditions in bundle order.
    pub cells: Vec<Rq3Cell>,
    /// Cells with at least one pair.
    pub cells_with_pairs: usize,
    /// Cells with pairs where the dominant direction is strictly larger.
    pub cells_where_dominant_holds: usize,
    /// Whether the dominant direction holds in every cell with pairs (§5.4: "the dominant direction holds
    /// in all 32 model–task cells"); `None` without a dominant direction overall.
    pub dominant_holds_in_every_cell: Option<bool>,
}

/// Observed agreement and Cohen's κ of two label sequences.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Kappa {
    /// Items compared.
    pub n: u64,
    /// Items with equal labels.
    pub agree: u64,
    /// `agree / n`, a fraction.
    pub agreement: Option<f64>,
    /// Cohen's κ; `None` for `n = 0` or when both sequences use one and the same single label (chance
    /// agreement 1: κ is 0/0; sklearn returns nan).
    pub kappa: Option<f64>,
}

/// Agreement of an automatic binary readout with the final human labels (seed Table 19 rows).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReadoutAgreement {
    /// Responses with a binary final label.
    pub final_labels: u64,
    /// Of those, responses where the automatic readout is binary too ("total" of Table 19).
    pub compared: u64,
    /// Of those, equal labels ("correct").
    pub agree: u64,
    /// `agree / compared`, a fraction.
    pub agreement: Option<f64>,
    /// Responses with a binary final label whose automatic readout is missing (Selection Abstain or no
    /// readout; Rationale Abstain under the rule).
    pub automatic_missing: u64,
}

/// Where the final labels of the human quality control come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum FinalLabels {
    /// An adjudicated column (named in [`HumanSettings::final_annotator`] or by [`FINAL_ANNOTATOR_IDS`]),
    /// as in the seed (§4.6: disagreements adjudicated after the two passes were locked).
    Column {
        /// The final column's annotator id.
        annotator: String,
    },
    /// The bundle has one human column and no final column: its labels are the only human reading and are
    /// taken as final (a single pass; no adjudication happened).
    SingleAnnotator {
        /// The one human column's annotator id.
        annotator: String,
    },
    /// Two annotators and no final column: the final label is the two annotators' common label where they
    /// agree (Selection: the same `1`/`0`/`A`; Rationale: the same binary reduction); responses where they
    /// disagree have no final label (not adjudicated).
    Agreement {
        /// The two annotator ids.
        annotators: [String; 2],
    },
}

/// Inter-annotator agreement of two annotators (seed E.3) over the responses both labelled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InterAnnotator {
    /// The two annotator ids.
    pub annotators: [String; 2],
    /// Selection, all classes `1`/`0`/`A` (the format's Selection classes; the seed's "five-class
    /// Selection labels" had more).
    pub selection_all_classes: Kappa,
    /// Selection after the binary collapse: responses both labelled `1` or `0` (Abstain excluded).
    pub selection_binary: Kappa,
    /// Rationale, five classes E/QE/N/D/R.
    pub rationale_five_class: Kappa,
    /// Rationale after the binary collapse `{E, QE}` → 1, `{N, D, R}` → 0.
    pub rationale_binary: Kappa,
}

/// Human quality control (seed E.3, Table 19).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HumanQc {
    /// Cohen's κ of the two annotators; `None` with fewer than two annotator columns.
    pub inter_annotator: Option<InterAnnotator>,
    /// Where the final labels come from.
    pub final_labels: FinalLabels,
    /// Table 19 "Selection, binary": the automatic `A` against the final Selection label.
    pub selection: ReadoutAgreement,
    /// Per coding rule (in [`CodingRule::ALL`] order): `B` against the binary reduction of the final
    /// Rationale label. Binary majority is Table 19's "binary panel", binary unanimity its "unanimous
    /// subset".
    pub rationale: Vec<RuleAgreement>,
}

/// Agreement of one coding rule's Rationale readout with the final labels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RuleAgreement {
    /// The coding rule.
    pub rule: CodingRule,
    /// `B` against the binary reduction of the final Rationale label.
    pub agreement: ReadoutAgreement,
}

/// The RQ3 report of one bundle (the CLI's JSON; the app's tables are built from it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rq3Report {
    /// `metadata.id` of the bundle.
    pub bundle: String,
    /// The settings the report was computed with.
    pub settings: Rq3Settings,
    /// The judge panel, in bundle order.
    pub judges: Vec<JudgeUse>,
    /// How judges were matched to models.
    pub self_judge_match: SelfJudgeMatch,
    /// Selection coverage of the bundle's responses (rule-independent).
    pub selection: SelectionCoverage,
    /// One result per rule, in [`CodingRule::ALL`] order (Table 18 rows).
    pub rules: Vec<RuleResult>,
    /// Human QC, when the bundle has a human column.
    pub human: Option<HumanQc>,
}

impl Rq3Report {
    /// The judges as a caption names them: `ID (MODEL)` or `ID`, comma-separated, in column order.
    pub fn judge_names(&self) -> String {
        self.judges
            .iter()
            .map(|j| match &j.model {
                Some(m) => format!("{} ({m})", j.id),
                None => j.id.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl Rq3Report {
    /// The result of `rule`.
    pub fn rule(&self, rule: CodingRule) -> Option<&RuleResult> {
        self.rules.iter().find(|r| r.rule == rule)
    }

    /// The result of the primary rule ([`Rq3Settings::primary`]).
    pub fn primary(&self) -> Option<&RuleResult> {
        self.rule(self.settings.primary)
    }
}

/// Cohen's κ of two equally long label sequences, as `sklearn.metrics.cohen_kappa_score(a, b)` (no
/// weights; the classes are those present in either sequence):
///
/// `κ = (p_o − p_e) / (1 − p_e)`, `p_o = agree / n`, `p_e = Σ_k (n_a,k / n)(n_b,k / n)`,
///
/// computed as `1 − n·(n − agree) / (n² − Σ_k n_a,k n_b,k)` from exact integer counts (one rounding).
///
/// # Errors
/// [`Rq3Error::LengthMismatch`] when the lengths differ.
pub fn cohen_kappa<T: Ord + Copy>(a: &[T], b: &[T]) -> Result<Kappa, Rq3Error> {
    if a.len() != b.len() {
        return Err(Rq3Error::LengthMismatch {
            a: a.len(),
            b: b.len(),
        });
    }
    let n = a.len() as u64;
    let mut margins: BTreeMap<T, (u64, u64)> = BTreeMap::new();
    let mut agree = 0u64;
    for (&x, &y) in a.iter().zip(b) {
        margins.entry(x).or_default().0 += 1;
        margins.entry(y).or_default().1 += 1;
        if x == y {
            agree += 1;
        }
    }
    let chance: u128 = margins
        .values()
        .map(|&(na, nb)| u128::from(na) * u128::from(nb))
        .sum();
    let n2 = u128::from(n) * u128::from(n);
    let kappa = (n > 0 && n2 > chance)
        .then(|| 1.0 - (u128::from(n) * u128::from(n - agree)) as f64 / (n2 - chance) as f64);
    Ok(Kappa {
        n,
        agree,
        agreement: (n > 0).then(|| agree as f64 / n as f64),
        kappa,
    })
}

/// Lower-case letters and digits of `name`: the key [`SelfJudgeMatch::Automatic`] compares.
pub fn model_match_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Human Selection label of a column character: `1`/`0` → evidence, `A` → Abstain, else no label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum HumanSelection {
    Evidence(bool),
    Abstain,
}

fn human_selection(code: u8) -> Option<HumanSelection> {
    match code {
        b'1' => Some(HumanSelection::Evidence(true)),
        b'0' => Some(HumanSelection::Evidence(false)),
        b'A' => Some(HumanSelection::Abstain),
        _ => None,
    }
}

/// The Selection readout `A` of one response (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelectionReadout {
    /// `A ∈ {0, 1}`: `true` = bias evidence.
    Valid(bool),
    /// Abstain (`evidence: null`, §B.2): missing, never 0.
    Abstain,
    /// The response's condition has no Selection readout (`has_selection: false`).
    NoReadout,
}

/// Per-response data the rules and the human QC read, with the cell's model and condition.
struct Response {
    cell: usize,
    model: usize,
    condition: usize,
    selection: SelectionReadout,
}

/// What a judge panel gives one response under a coding rule: a binary label, or why it gives none
/// (Rationale Abstain). Seed B.3: "A case without a strict binary majority is Abstain; no chair judge
/// resolves it"; this type only says which kind of Abstain it is, so that the count of each can stand
/// beside the coded rates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PanelOutcome {
    /// `B = 1` (`{E, QE}` wins).
    Bias,
    /// `B = 0` (`{N, D, R}` wins).
    NoBias,
    /// Abstain although enough judges gave a label: under a majority rule, no side has a strict majority
    /// (`2·labelled > panel`, but the labelled votes split, e.g. E against D with the third judge
    /// silent); under a unanimity rule, every judge labelled but they disagree.
    Tie,
    /// Abstain because too few judges gave a readable label: under a majority rule `2·labelled ≤ panel`,
    /// so no side could reach a strict majority (1 of 3, 1 of 2, 0 of 1, or no judge left after the
    /// no-self-judge removal); under a unanimity rule, some judge of the panel gave no label.
    TooFewVotes,
}

impl PanelOutcome {
    /// `Some(true)` = `B = 1`, `Some(false)` = `B = 0`, `None` = Rationale Abstain.
    pub fn label(self) -> Option<bool> {
        match self {
            PanelOutcome::Bias => Some(true),
            PanelOutcome::NoBias => Some(false),
            PanelOutcome::Tie | PanelOutcome::TooFewVotes => None,
        }
    }

    fn of(b: bool) -> Self {
        if b {
            PanelOutcome::Bias
        } else {
            PanelOutcome::NoBias
        }
    }
}

/// Binary-first strict majority of a panel (seed §3.3, B.3): each label is reduced to binary
/// (`{E, QE}` → 1, `{N, D, R}` → 0), then a side wins with more than half of the panel's members
/// (`2·votes > panel`, the panel counting judges without a label). The one implementation behind
/// [`CodingRule::BinaryMajority`], [`CodingRule::NoSelfJudge`] and the pilot's `atlas_pilot::majority`.
pub fn binary_majority(labels: impl IntoIterator<Item = Option<RationaleLabel>>) -> PanelOutcome {
    let (mut panel, mut bias, mut none) = (0usize, 0usize, 0usize);
    for label in labels {
        panel += 1;
        match label.map(RationaleLabel::is_bias_evidence) {
            Some(true) => bias += 1,
            Some(false) => none += 1,
            None => {}
        }
    }
    if 2 * bias > panel {
        PanelOutcome::Bias
    } else if 2 * none > panel {
        PanelOutcome::NoBias
    } else if 2 * (bias + none) > panel {
        PanelOutcome::Tie
    } else {
        PanelOutcome::TooFewVotes
    }
}

/// Responses coded by a panel, by [`PanelOutcome`]: the coded rate and, beside it, how many responses
/// were ties and how many had too few readable votes (every exclusion is counted).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MajorityCounts {
    /// Responses the panel was asked about.
    pub responses: u64,
    /// Outcome `B = 1`.
    pub bias: u64,
    /// Outcome `B = 0`.
    pub no_bias: u64,
    /// Abstain: ties ([`PanelOutcome::Tie`]).
    pub ties: u64,
    /// Abstain: too few readable votes ([`PanelOutcome::TooFewVotes`]).
    pub too_few_votes: u64,
}

impl MajorityCounts {
    /// Counts one response.
    pub fn add(&mut self, outcome: PanelOutcome) {
        self.responses += 1;
        match outcome {
            PanelOutcome::Bias => self.bias += 1,
            PanelOutcome::NoBias => self.no_bias += 1,
            PanelOutcome::Tie => self.ties += 1,
            PanelOutcome::TooFewVotes => self.too_few_votes += 1,
        }
    }

    /// Responses with a binary label (`bias + no_bias`).
    pub fn coded(&self) -> u64 {
        self.bias + self.no_bias
    }

    /// Rationale Abstain (`ties + too_few_votes`).
    pub fn abstain(&self) -> u64 {
        self.ties + self.too_few_votes
    }

    /// The coded bias rate `bias / coded`, a fraction; `None` when nothing is coded.
    pub fn bias_rate(&self) -> Option<f64> {
        fraction(self.bias, self.coded())
    }

    /// One line for notes and summaries: `binary majority over 40 response(s): 30 coded — bias
    /// evidence 10, no bias evidence 20, bias rate 33.33% of the coded; Abstain 10 (ties 4, too few
    /// readable votes 6)`.
    pub fn describe(&self) -> String {
        format!(
            "binary majority over {} response(s): {} coded — bias evidence {}, no bias evidence {}, bias rate {}% of the coded; Abstain {} (ties {}, too few readable votes {})",
            self.responses,
            self.coded(),
            self.bias,
            self.no_bias,
            pct(self.bias_rate()),
            self.abstain(),
            self.ties,
            self.too_few_votes
        )
    }
}

/// The rule's outcome for one response (see [`PanelOutcome`] for the two kinds of Rationale Abstain).
/// `labels` holds the panel's labels; `is_self` says which panel judges are the response's model.
fn apply_rule(
    rule: CodingRule,
    labels: &[Option<RationaleLabel>],
    is_self: &[bool],
) -> PanelOutcome {
    match rule {
        CodingRule::BinaryMajority => binary_majority(labels.iter().copied()),
        CodingRule::NoSelfJudge => binary_majority(
            labels
                .iter()
                .zip(is_self)
                .filter(|(_, &own)| !own)
                .map(|(l, _)| *l),
        ),
        CodingRule::BinaryUnanimity => {
            let Some(all) = labels.iter().copied().collect::<Option<Vec<_>>>() else {
                return PanelOutcome::TooFewVotes;
            };
            let Some(first) = all.first().map(|l| l.is_bias_evidence()) else {
                return PanelOutcome::TooFewVotes;
            };
            if all.iter().all(|l| l.is_bias_evidence() == first) {
                PanelOutcome::of(first)
            } else {
                PanelOutcome::Tie
            }
        }
        CodingRule::FiveClassUnanimity => {
            let Some(all) = labels.iter().copied().collect::<Option<Vec<_>>>() else {
                return PanelOutcome::TooFewVotes;
            };
            let Some(&first) = all.first() else {
                return PanelOutcome::TooFewVotes;
            };
            if all.iter().all(|&l| l == first) {
                PanelOutcome::of(first.is_bias_evidence())
            } else {
                PanelOutcome::Tie
            }
        }
    }
}

/// The judge panel: indices into `audit.judges` in bundle order.
fn panel(audit: &Audit, settings: &Rq3Settings) -> Result<Vec<usize>, Rq3Error> {
    let columns = &audit.file.responses.judges;
    if columns.is_empty() {
        return Err(Rq3Error::NoJudges);
    }
    let Some(ids) = &settings.judges else {
        return Ok((0..columns.len()).collect());
    };
    if ids.is_empty() {
        return Err(Rq3Error::EmptyPanel);
    }
    let mut chosen = vec![false; columns.len()];
    for id in ids {
        let j = columns
            .iter()
            .position(|c| &c.id == id)
            .ok_or_else(|| Rq3Error::UnknownJudge(id.clone()))?;
        if std::mem::replace(&mut chosen[j], true) {
            return Err(Rq3Error::DuplicateJudge(id.clone()));
        }
    }
    Ok((0..columns.len()).filter(|&j| chosen[j]).collect())
}

/// `is_self[k][m]`: whether panel judge `k` is model `m`.
fn self_matrix(
    audit: &Audit,
    panel: &[usize],
    settings: &Rq3Settings,
) -> Result<(Vec<Vec<bool>>, SelfJudgeMatch), Rq3Error> {
    let columns = &audit.file.responses.judges;
    let models = audit.levels(audit.model_facet);
    let mut matrix = vec![vec![false; models.len()]; panel.len()];
    match &settings.self_judges {
        None => {
            for (k, &j) in panel.iter().enumerate() {
                let Some(judge_model) = columns[j].model.as_deref() else {
                    continue;
                };
                let key = model_match_key(judge_model);
                if key.is_empty() {
                    continue;
                }
                for (m, level) in models.iter().enumerate() {
                    let label = level.attributes.get("label").and_then(|v| v.as_str());
                    matrix[k][m] = model_match_key(&level.id) == key
                        || label.is_some_and(|l| model_match_key(l) == key);
                }
            }
            Ok((matrix, SelfJudgeMatch::Automatic))
        }
        Some(pairs) => {
            let mut seen: Vec<&str> = Vec::new();
            for pair in pairs {
                let j = columns
                    .iter()
                    .position(|c| c.id == pair.judge)
                    .ok_or_else(|| Rq3Error::UnknownJudge(pair.judge.clone()))?;
                if seen.contains(&pair.judge.as_str()) {
                    return Err(Rq3Error::DuplicateJudge(pair.judge.clone()));
                }
                seen.push(&pair.judge);
                let k = panel.iter().position(|&p| p == j);
                for model in &pair.models {
                    let m = models.iter().position(|l| &l.id == model).ok_or_else(|| {
                        Rq3Error::UnknownModel {
                            judge: pair.judge.clone(),
                            model: model.clone(),
                        }
                    })?;
                    if let Some(k) = k {
                        matrix[k][m] = true;
                    }
                }
            }
            Ok((matrix, SelfJudgeMatch::Explicit))
        }
    }
}

/// The responses of the bundle with their model, condition and Selection readout.
fn responses(audit: &Audit) -> Vec<Response> {
    let axis_of = |facet: Option<usize>| {
        facet
            .and_then(|f| audit.axes.iter().find(|a| a.facet == f))
            .copied()
    };
    let level = |axis: Option<crate::bundle::Axis>, cell: usize| {
        axis.map_or(0, |a| (cell / a.stride) % a.len)
    };
    let m_axis = axis_of(Some(audit.model_facet));
    let c_axis = axis_of(audit.condition_facet);
    let t_axis = axis_of(audit.template_facet);
    let values = &audit.file.responses.selection.values;
    let mut out = Vec::new();
    for (cell, &code) in audit.selection.iter().enumerate() {
        if code == NO_RESPONSE_CODE {
            continue;
        }
        let condition = level(c_axis, cell);
        let template = level(t_axis, cell);
        let in_design = audit
            .templates
            .get(template)
            .is_none_or(|t| t.condition.is_none_or(|tc| tc == condition));
        if !in_design {
            continue;
        }
        let readable = audit
            .conditions
            .get(condition)
            .is_some_and(|c| c.has_selection);
        let selection = if !readable {
            SelectionReadout::NoReadout
        } else {
            match values.get(code as usize).and_then(|v| v.evidence) {
                Some(e) => SelectionReadout::Valid(e == 1),
                None => SelectionReadout::Abstain,
            }
        };
        out.push(Response {
            cell,
            model: level(m_axis, cell),
            condition,
            selection,
        });
    }
    out
}

/// RQ3 on a loaded bundle (seed `000_…` §3.3, §3.6, §5.4, E.2, E.3): every coding rule's Table 18 row,
/// joint table, BER summaries, disagreement and per model × condition cells, the Selection coverage, and
/// the human quality control when the bundle has human columns. See the module docs for what counts as
/// a response and a pair.
///
/// Cost: one pass over the cells per rule, `O(cells · judges)`; no randomness.
///
/// # Errors
/// [`Rq3Error::NoJudges`] for a bundle without judge columns; [`Rq3Error::EmptyPanel`],
/// [`Rq3Error::UnknownJudge`], [`Rq3Error::DuplicateJudge`], [`Rq3Error::UnknownModel`] for settings that
/// name judges or models the bundle lacks; [`Rq3Error::UnknownAnnotator`] and
/// [`Rq3Error::DuplicateAnnotator`] for human-QC settings that do.
pub fn analyze_rq3(audit: &Audit, settings: &Rq3Settings) -> Result<Rq3Report, Rq3Error> {
    let panel = panel(audit, settings)?;
    let (is_self, self_judge_match) = self_matrix(audit, &panel, settings)?;
    let responses = responses(audit);
    let models = audit.model_ids();
    let conditions = audit.condition_ids();

    let mut selection = SelectionCoverage::default();
    for r in &responses {
        selection.responses += 1;
        match r.selection {
            SelectionReadout::Valid(_) => selection.valid += 1,
            SelectionReadout::Abstain => selection.abstain += 1,
            SelectionReadout::NoReadout => selection.no_readout += 1,
        }
    }

    let judges = judge_uses(audit, &panel, &is_self, &responses);

    // Rule outcomes and labels of every response, per rule (the labels also read by the human QC).
    let outcomes = rule_outcomes(audit, &panel, &is_self, &responses);
    let rule_labels = rule_labels(&outcomes);

    let counted = Counted {
        responses: &responses,
        models: &models,
        conditions: &conditions,
    };
    let rules = CodingRule::ALL
        .iter()
        .zip(&rule_labels)
        .zip(&outcomes)
        .map(|((&rule, b), o)| rule_result(&counted, rule, b, o))
        .collect();

    let human = human_qc(audit, &settings.human, &responses, &rule_labels)?;
    Ok(Rq3Report {
        bundle: audit.metadata().id.clone(),
        settings: settings.clone(),
        judges,
        self_judge_match,
        selection,
        rules,
        human,
    })
}

/// The panel's judges with their matched models and label counts.
fn judge_uses(
    audit: &Audit,
    panel: &[usize],
    is_self: &[Vec<bool>],
    responses: &[Response],
) -> Vec<JudgeUse> {
    let columns = &audit.file.responses.judges;
    let models = audit.model_ids();
    panel
        .iter()
        .enumerate()
        .map(|(k, &j)| JudgeUse {
            id: columns[j].id.clone(),
            model: columns[j].model.clone(),
            self_models: models
                .iter()
                .enumerate()
                .filter(|&(m, _)| is_self[k][m])
                .map(|(_, id)| (*id).to_string())
                .collect(),
            labelled: responses
                .iter()
                .filter(|r| {
                    audit
                        .judges
                        .get(j)
                        .and_then(|col| col.get(r.cell))
                        .is_some_and(Option::is_some)
                })
                .count() as u64,
        })
        .collect()
}

/// The outcome of every response under every rule: `[rule in CodingRule::ALL order][response]`.
fn rule_outcomes(
    audit: &Audit,
    panel: &[usize],
    is_self: &[Vec<bool>],
    responses: &[Response],
) -> Vec<Vec<PanelOutcome>> {
    let mut labels = vec![None; panel.len()];
    let mut own = vec![false; panel.len()];
    let mut out: Vec<Vec<PanelOutcome>> =
        vec![Vec::with_capacity(responses.len()); CodingRule::ALL.len()];
    for r in responses {
        for (k, &j) in panel.iter().enumerate() {
            labels[k] = audit
                .judges
                .get(j)
                .and_then(|col| col.get(r.cell))
                .copied()
                .flatten();
            own[k] = is_self[k].get(r.model).copied().unwrap_or(false);
        }
        for (i, &rule) in CodingRule::ALL.iter().enumerate() {
            out[i].push(apply_rule(rule, &labels, &own));
        }
    }
    out
}

/// `B` of every response under every rule: `[rule in CodingRule::ALL order][response]`.
fn rule_labels(outcomes: &[Vec<PanelOutcome>]) -> Vec<Vec<Option<bool>>> {
    outcomes
        .iter()
        .map(|rule| rule.iter().map(|o| o.label()).collect())
        .collect()
}

/// The RQ3 readouts of every cell, for case views and filters (the app's case inspector): the same `A`
/// and, per coding rule, the same `B` that [`analyze_rq3`] counts, so a case shows the reading behind the
/// tables.
#[derive(Debug, Clone, PartialEq)]
pub struct CellReadings {
    /// Per cell: `None` when the cell is not a response (no response, or a nested template's cell
    /// outside its condition), else its Selection readout `A`.
    pub selection: Vec<Option<SelectionReadout>>,
    /// Per coding rule, in [`CodingRule::ALL`] order, per cell: `B` (`None` = Rationale Abstain or not a
    /// response). Empty when the bundle has no judge column.
    pub rationale: Vec<Vec<Option<bool>>>,
    /// The judge panel (bundle order); empty without judge columns.
    pub judges: Vec<JudgeUse>,
}

impl CellReadings {
    /// Whether the bundle has a Rationale readout at all (judge columns).
    pub fn has_rationale(&self) -> bool {
        !self.rationale.is_empty()
    }

    /// `B` of cell `cell` under `rule`.
    pub fn rationale(&self, rule: CodingRule, cell: usize) -> Option<bool> {
        let i = CodingRule::ALL.iter().position(|&r| r == rule)?;
        self.rationale.get(i)?.get(cell).copied().flatten()
    }

    /// `(A, B)` of cell `cell` under `rule` when it is a pair (both readouts present).
    pub fn pair(&self, rule: CodingRule, cell: usize) -> Option<(bool, bool)> {
        match self.selection.get(cell).copied().flatten()? {
            SelectionReadout::Valid(a) => Some((a, self.rationale(rule, cell)?)),
            _ => None,
        }
    }

    /// The direction of disagreement of cell `cell` under `rule`; `None` when it is not a pair or the
    /// fields agree.
    pub fn direction(&self, rule: CodingRule, cell: usize) -> Option<Direction> {
        match self.pair(rule, cell)? {
            (true, false) => Some(Direction::SelectionOnly),
            (false, true) => Some(Direction::RationaleOnly),
            _ => None,
        }
    }
}

/// [`CellReadings`] of every cell under `settings` (judge panel and self-judge pairs; the primary rule
/// and the human settings do not matter). A bundle without judge columns is not an error here: its
/// readings have `A` only.
///
/// # Errors
/// As [`analyze_rq3`] for settings naming judges or models the bundle lacks
/// ([`Rq3Error::EmptyPanel`], [`Rq3Error::UnknownJudge`], [`Rq3Error::DuplicateJudge`],
/// [`Rq3Error::UnknownModel`]).
pub fn cell_readings(audit: &Audit, settings: &Rq3Settings) -> Result<CellReadings, Rq3Error> {
    let responses = responses(audit);
    let mut selection = vec![None; audit.cells];
    for r in &responses {
        if let Some(slot) = selection.get_mut(r.cell) {
            *slot = Some(r.selection);
        }
    }
    if audit.file.responses.judges.is_empty() {
        return Ok(CellReadings {
            selection,
            rationale: Vec::new(),
            judges: Vec::new(),
        });
    }
    let panel = panel(audit, settings)?;
    let (is_self, _) = self_matrix(audit, &panel, settings)?;
    let by_response = rule_labels(&rule_outcomes(audit, &panel, &is_self, &responses));
    let rationale = by_response
        .iter()
        .map(|labels| {
            let mut per_cell = vec![None; audit.cells];
            for (r, &b) in responses.iter().zip(labels) {
                if let Some(slot) = per_cell.get_mut(r.cell) {
                    *slot = b;
                }
            }
            per_cell
        })
        .collect();
    let judges = judge_uses(audit, &panel, &is_self, &responses);
    Ok(CellReadings {
        selection,
        rationale,
        judges,
    })
}

fn fraction(count: u64, total: u64) -> Option<f64> {
    (total > 0).then(|| count as f64 / total as f64)
}

/// What every coding rule's result is counted over: the responses, and the model and condition
/// level ids whose pairs are the cells of the per-cell table.
struct Counted<'a> {
    responses: &'a [Response],
    models: &'a [&'a str],
    conditions: &'a [&'a str],
}

/// The result of `rule` whose labels are `b` and panel outcomes `outcomes` (one per response).
fn rule_result(
    counted: &Counted<'_>,
    rule: CodingRule,
    b: &[Option<bool>],
    outcomes: &[PanelOutcome],
) -> RuleResult {
    let Counted {
        responses,
        models,
        conditions,
    } = *counted;
    let (n_models, n_conditions) = (models.len(), conditions.len());
    let mut joint = JointCounts::default();
    let (mut rows, mut bias) = (0u64, 0u64);
    let mut cell_joint = vec![JointCounts::default(); n_models * n_conditions];
    let mut cell_responses = vec![0u64; n_models * n_conditions];
    let mut cell_rows = vec![0u64; n_models * n_conditions];
    for (r, &label) in responses.iter().zip(b) {
        let k = r.model * n_conditions + r.condition;
        if let Some(x) = cell_responses.get_mut(k) {
            *x += 1;
        }
        let Some(label) = label else { continue };
        rows += 1;
        bias += u64::from(label);
        if let Some(x) = cell_rows.get_mut(k) {
            *x += 1;
        }
        if let SelectionReadout::Valid(a) = r.selection {
            joint.add(a, label);
            if let Some(x) = cell_joint.get_mut(k) {
                x.add(a, label);
            }
        }
    }
    let disagreement = joint.disagreement();
    let dominant = disagreement.dominant;
    let mut cells = Vec::with_capacity(n_models * n_conditions);
    let (mut with_pairs, mut holds) = (0usize, 0usize);
    for (m, model) in models.iter().enumerate() {
        for (c, condition) in conditions.iter().enumerate() {
            let k = m * n_conditions + c;
            let j = cell_joint.get(k).copied().unwrap_or_default();
            let has_pairs = j.total() > 0;
            let dominant_holds = dominant.filter(|_| has_pairs).map(|d| j.holds(d));
            with_pairs += usize::from(has_pairs);
            holds += usize::from(dominant_holds == Some(true));
            cells.push(Rq3Cell {
                model: (*model).to_string(),
                condition: (*condition).to_string(),
                responses: cell_responses.get(k).copied().unwrap_or(0),
                rationale_rows: cell_rows.get(k).copied().unwrap_or(0),
                joint: j,
                disagreement: j.share(j.disagreements()),
                dominant_holds,
            });
        }
    }
    let pairs = joint.total();
    let total = responses.len() as u64;
    let count = |o: PanelOutcome| outcomes.iter().filter(|&&x| x == o).count() as u64;
    RuleResult {
        rule,
        rationale_rows: rows,
        rationale_bias: bias,
        rationale_bias_rate: fraction(bias, rows),
        rationale_abstain: total - rows,
        abstain_ties: count(PanelOutcome::Tie),
        abstain_too_few_votes: count(PanelOutcome::TooFewVotes),
        pairs,
        pair_coverage: fraction(pairs, total),
        rationale_rows_without_selection: rows - pairs,
        joint,
        summaries: joint.summaries(),
        disagreement,
        cells,
        cells_with_pairs: with_pairs,
        cells_where_dominant_holds: holds,
        dominant_holds_in_every_cell: dominant.map(|_| holds == with_pairs),
    }
}

/// The human columns chosen for QC: the two compared annotators (if any) and the final labels' source.
struct HumanColumns {
    pair: Option<[usize; 2]>,
    final_column: Option<usize>,
    single: Option<usize>,
}

fn choose_human(audit: &Audit, settings: &HumanSettings) -> Result<HumanColumns, Rq3Error> {
    let columns = &audit.file.responses.human;
    let find = |id: &String| {
        columns
            .iter()
            .position(|h| &h.annotator == id)
            .ok_or_else(|| Rq3Error::UnknownAnnotator(id.clone()))
    };
    let final_column = match &settings.final_annotator {
        Some(id) => Some(find(id)?),
        None => columns.iter().position(|h| {
            FINAL_ANNOTATOR_IDS
                .iter()
                .any(|f| h.annotator.eq_ignore_ascii_case(f))
        }),
    };
    let pair = match &settings.annotators {
        Some([a, b]) => {
            let (ia, ib) = (find(a)?, find(b)?);
            if ia == ib {
                return Err(Rq3Error::DuplicateAnnotator(a.clone()));
            }
            for (i, id) in [(ia, a), (ib, b)] {
                if Some(i) == final_column {
                    return Err(Rq3Error::DuplicateAnnotator(id.clone()));
                }
            }
            Some([ia, ib])
        }
        None => {
            let mut others = (0..columns.len()).filter(|&i| Some(i) != final_column);
            match (others.next(), others.next()) {
                (Some(a), Some(b)) => Some([a, b]),
                _ => None,
            }
        }
    };
    let single = if final_column.is_none() && pair.is_none() && columns.len() == 1 {
        Some(0)
    } else {
        None
    };
    Ok(HumanColumns {
        pair,
        final_column,
        single,
    })
}

fn human_qc(
    audit: &Audit,
    settings: &HumanSettings,
    responses: &[Response],
    rule_labels: &[Vec<Option<bool>>],
) -> Result<Option<HumanQc>, Rq3Error> {
    let columns = &audit.file.responses.human;
    if columns.is_empty() {
        return Ok(None);
    }
    let chosen = choose_human(audit, settings)?;
    let sel_at = |h: usize, cell: usize| {
        columns[h]
            .selection
            .as_deref()
            .and_then(|s| s.as_bytes().get(cell))
            .and_then(|&c| human_selection(c))
    };
    let rat_at = |h: usize, cell: usize| {
        columns[h]
            .rationale
            .as_deref()
            .and_then(|s| s.as_bytes().get(cell))
            .and_then(|&c| RationaleLabel::from_code(c))
    };

    let inter_annotator = match chosen.pair {
        None => None,
        Some([a, b]) => {
            let mut sel_all = (Vec::new(), Vec::new());
            let mut sel_bin = (Vec::new(), Vec::new());
            let mut rat_five = (Vec::new(), Vec::new());
            let mut rat_bin = (Vec::new(), Vec::new());
            for r in responses {
                if let (Some(x), Some(y)) = (sel_at(a, r.cell), sel_at(b, r.cell)) {
                    sel_all.0.push(x);
                    sel_all.1.push(y);
                    if let (HumanSelection::Evidence(x), HumanSelection::Evidence(y)) = (x, y) {
                        sel_bin.0.push(x);
                        sel_bin.1.push(y);
                    }
                }
                if let (Some(x), Some(y)) = (rat_at(a, r.cell), rat_at(b, r.cell)) {
                    rat_five.0.push(x);
                    rat_five.1.push(y);
                    rat_bin.0.push(x.is_bias_evidence());
                    rat_bin.1.push(y.is_bias_evidence());
                }
            }
            Some(InterAnnotator {
                annotators: [columns[a].annotator.clone(), columns[b].annotator.clone()],
                selection_all_classes: cohen_kappa(&sel_all.0, &sel_all.1)?,
                selection_binary: cohen_kappa(&sel_bin.0, &sel_bin.1)?,
                rationale_five_class: cohen_kappa(&rat_five.0, &rat_five.1)?,
                rationale_binary: cohen_kappa(&rat_bin.0, &rat_bin.1)?,
            })
        }
    };

    // The final labels: one column (adjudicated, or the only one), or the two annotators where they agree.
    let (final_labels, source) = match (chosen.final_column, chosen.single, chosen.pair) {
        (Some(f), _, _) => (
            FinalLabels::Column {
                annotator: columns[f].annotator.clone(),
            },
            [f, f],
        ),
        (None, Some(s), _) => (
            FinalLabels::SingleAnnotator {
                annotator: columns[s].annotator.clone(),
            },
            [s, s],
        ),
        (None, None, Some([a, b])) => (
            FinalLabels::Agreement {
                annotators: [columns[a].annotator.clone(), columns[b].annotator.clone()],
            },
            [a, b],
        ),
        // Unreachable with at least one column (one column is either final or single; two or more give a
        // pair), kept total: no final labels.
        (None, None, None) => return Ok(None),
    };
    // With one source column both reads are the same label, so "where they agree" is that label.
    let [fa, fb] = source;
    let final_sel = |cell: usize| match (sel_at(fa, cell), sel_at(fb, cell)) {
        (Some(x), Some(y)) if x == y => Some(x),
        _ => None,
    };
    let final_rat = |cell: usize| match (
        rat_at(fa, cell).map(RationaleLabel::is_bias_evidence),
        rat_at(fb, cell).map(RationaleLabel::is_bias_evidence),
    ) {
        (Some(x), Some(y)) if x == y => Some(x),
        _ => None,
    };

    let mut selection = ReadoutAgreement::empty();
    for r in responses {
        let Some(HumanSelection::Evidence(truth)) = final_sel(r.cell) else {
            continue;
        };
        let automatic = match r.selection {
            SelectionReadout::Valid(a) => Some(a),
            _ => None,
        };
        selection.count(truth, automatic);
    }
    selection.finish();

    let rationale = CodingRule::ALL
        .iter()
        .zip(rule_labels)
        .map(|(&rule, b)| {
            let mut agreement = ReadoutAgreement::empty();
            for (r, &label) in responses.iter().zip(b) {
                if let Some(truth) = final_rat(r.cell) {
                    agreement.count(truth, label);
                }
            }
            agreement.finish();
            RuleAgreement { rule, agreement }
        })
        .collect();

    Ok(Some(HumanQc {
        inter_annotator,
        final_labels,
        selection,
        rationale,
    }))
}

impl ReadoutAgreement {
    fn empty() -> Self {
        ReadoutAgreement {
            final_labels: 0,
            compared: 0,
            agree: 0,
            agreement: None,
            automatic_missing: 0,
        }
    }

    fn count(&mut self, truth: bool, automatic: Option<bool>) {
        self.final_labels += 1;
        match automatic {
            Some(a) => {
                self.compared += 1;
                self.agree += u64::from(a == truth);
            }
            None => self.automatic_missing += 1,
        }
    }

    fn finish(&mut self) {
        self.agreement = fraction(self.agree, self.compared);
    }
}

// ------------------------------------------------------------------------------------------- tables

fn pct(x: Option<f64>) -> String {
    crate::format::points(x, 2)
}

fn caption(report: &Rq3Report) -> String {
    format!(
        "bundle {} · judges: {} · self-judge match {} · every response counts once (no repeat policy)",
        report.bundle,
        report.judge_names(),
        match report.self_judge_match {
            SelfJudgeMatch::Automatic => "automatic (by name)",
            SelfJudgeMatch::Explicit => "explicit",
        }
    )
}

/// Summary lines of the report: coverage and, for the primary rule, the four BER summaries and the
/// disagreement by direction (seed §5.4 wording).
pub fn summary(report: &Rq3Report) -> Vec<String> {
    let s = &report.selection;
    let mut lines = vec![format!(
        "Responses: {} ({} valid Selections, {} Abstain, {} without a Selection readout).",
        s.responses, s.valid, s.abstain, s.no_readout
    )];
    if let Some(r) = report.primary() {
        let d = &r.disagreement;
        lines.push(format!(
            "{} ({}): {} responses valid in both fields ({}% coverage); BER_sel {}%, BER_rat {}%, BER_cor {}%, BER_union {}%.",
            r.rule.label(),
            r.rule.key(),
            r.pairs,
            pct(r.pair_coverage),
            pct(r.summaries.sel),
            pct(r.summaries.rat),
            pct(r.summaries.cor),
            pct(r.summaries.union)
        ));
        lines.push(format!(
            "The fields disagree in {} of {} pairs ({}%): A=1,B=0 {} ({}%) versus A=0,B=1 {} ({}%); {}.",
            d.count,
            r.pairs,
            pct(d.rate),
            d.selection_only,
            pct(d.selection_only_rate),
            d.rationale_only,
            pct(d.rationale_only_rate),
            dominance_text(r)
        ));
    }
    lines
}

fn dominance_text(r: &RuleResult) -> String {
    match (r.disagreement.dominant, r.dominant_holds_in_every_cell) {
        (Some(d), Some(all)) => format!(
            "the {} direction is larger in {} of {} model × condition cells with pairs{}",
            match d {
                Direction::SelectionOnly => "A=1,B=0",
                Direction::RationaleOnly => "A=0,B=1",
            },
            r.cells_where_dominant_holds,
            r.cells_with_pairs,
            if all { " (every cell)" } else { "" }
        ),
        _ => "no direction dominates".into(),
    }
}

/// Seed Table 3 layout: the joint `A` × `B` counts and shares (`% of n`, two decimals) under `rule`, with
/// the BER summaries and the directions in the notes. `None` when the report lacks `rule`.
pub fn table3(report: &Rq3Report, rule: CodingRule) -> Option<Table> {
    let r = report.rule(rule)?;
    let j = &r.joint;
    let key = rule.key();
    let row = |name: &str, k: &str, count: u64| {
        vec![
            Cell::text(name),
            Cell::number(
                count.to_string(),
                format!("{key}/{k}/count"),
                Some(count as f64),
            ),
            Cell::number(
                pct(j.share(count)),
                format!("{key}/{k}/share"),
                j.share(count),
            ),
        ]
    };
    let s = &r.summaries;
    Some(Table {
        id: "rq3-table3".into(),
        title: format!(
            "Table 3 layout — joint Selection (A) / Rationale (B) coding among n = {} dual-valid responses ({})",
            r.pairs,
            rule.label()
        ),
        caption: caption(report),
        header: ["Cell", "Count", "% of n"].map(String::from).to_vec(),
        rows: vec![
            row("Both negative (A=0, B=0)", "both_negative", j.both_negative),
            row("Rationale positive only (A=0, B=1)", "rationale_only", j.rationale_only),
            row("Selection positive only (A=1, B=0)", "selection_only", j.selection_only),
            row("Both positive (A=1, B=1)", "both_positive", j.both_positive),
            row("Eligible n", "n", j.total()),
        ],
        notes: vec![
            format!(
                "BER_sel {}% · BER_rat {}% · BER_cor {}% · BER_union {}% (the BiAxisBias paper §3.3; fractions of n shown as %).",
                pct(s.sel),
                pct(s.rat),
                pct(s.cor),
                pct(s.union)
            ),
            format!(
                "Disagreement {}% = A=1,B=0 {}% + A=0,B=1 {}%; {}.",
                pct(r.disagreement.rate),
                pct(r.disagreement.selection_only_rate),
                pct(r.disagreement.rationale_only_rate),
                dominance_text(r)
            ),
            format!(
                "Coverage: {} of {} responses are pairs ({}%); Rationale Abstain {} (ties {}, too few readable votes {}); Rationale rows without a valid Selection {}.",
                r.pairs,
                report.selection.responses,
                pct(r.pair_coverage),
                r.rationale_abstain,
                r.abstain_ties,
                r.abstain_too_few_votes,
                r.rationale_rows_without_selection
            ),
        ],
    })
}

/// Seed Table 18 layout: one row per coding rule — "Rat. rows / pairs", "Rat. bias" (over Rationale
/// rows), "Disagree" (over pairs) — plus the two directions, percentages with two decimals.
pub fn table18(report: &Rq3Report) -> Table {
    Table {
        id: "rq3-table18".into(),
        title: "Table 18 layout — coding-rule sensitivity (\"pairs\" additionally requires an observable Selection)".into(),
        caption: caption(report),
        header: [
            "Coding rule",
            "Rat. rows / pairs",
            "Rat. bias",
            "Rat. Abstain (ties / too few votes)",
            "Disagree",
            "A=1,B=0",
            "A=0,B=1",
        ]
        .map(String::from)
        .to_vec(),
        rows: report
            .rules
            .iter()
            .map(|r| {
                let key = r.rule.key();
                let d = &r.disagreement;
                vec![
                    Cell::text(r.rule.label()),
                    Cell::number(
                        format!("{} / {}", r.rationale_rows, r.pairs),
                        format!("{key}/pairs"),
                        Some(r.pairs as f64),
                    ),
                    Cell::number(
                        crate::format::percent(r.rationale_bias_rate, 2),
                        format!("{key}/rationale_bias_rate"),
                        r.rationale_bias_rate,
                    ),
                    Cell::number(
                        format!(
                            "{} ({} / {})",
                            r.rationale_abstain, r.abstain_ties, r.abstain_too_few_votes
                        ),
                        format!("{key}/rationale_abstain"),
                        Some(r.rationale_abstain as f64),
                    ),
                    Cell::number(
                        crate::format::percent(d.rate, 2),
                        format!("{key}/disagreement"),
                        d.rate,
                    ),
                    Cell::number(
                        crate::format::percent(d.selection_only_rate, 2),
                        format!("{key}/selection_only_rate"),
                        d.selection_only_rate,
                    ),
                    Cell::number(
                        crate::format::percent(d.rationale_only_rate, 2),
                        format!("{key}/rationale_only_rate"),
                        d.rationale_only_rate,
                    ),
                ]
            })
            .collect(),
        notes: CodingRule::ALL
            .iter()
            .map(|r| format!("{}: {}", r.label(), r.describe()))
            .chain(std::iter::once(
                "Rat. Abstain: responses the rule leaves without a label; ties = enough judges labelled but no side has a strict majority (majority rules) or they disagree (unanimity rules); too few votes = at most half of the panel labelled (majority rules) or some judge gave no label (unanimity rules).".to_string(),
            ))
            .collect(),
    }
}

/// Per model × condition cells of `rule` (seed §5.4, E.2 "model–task cells"): pairs, the two directions,
/// disagreement, and whether the overall dominant direction is strictly larger (✓) or not (·).
pub fn cells_table(report: &Rq3Report, rule: CodingRule) -> Option<Table> {
    let r = report.rule(rule)?;
    Some(Table {
        id: "rq3-cells".into(),
        title: format!(
            "RQ3 per model × condition ({}): {}",
            rule.label(),
            dominance_text(r)
        ),
        caption: caption(report),
        header: [
            "Model",
            "Condition",
            "pairs",
            "A=1,B=0",
            "A=0,B=1",
            "Disagree",
            "dominant",
        ]
        .map(String::from)
        .to_vec(),
        rows: r
            .cells
            .iter()
            .map(|c| {
                let key = format!("{}/{}/{}", rule.key(), c.model, c.condition);
                vec![
                    Cell::text(c.model.clone()),
                    Cell::text(c.condition.clone()),
                    Cell::number(
                        c.joint.total().to_string(),
                        format!("{key}/pairs"),
                        Some(c.joint.total() as f64),
                    ),
                    Cell::number(
                        c.joint.selection_only.to_string(),
                        format!("{key}/selection_only"),
                        Some(c.joint.selection_only as f64),
                    ),
                    Cell::number(
                        c.joint.rationale_only.to_string(),
                        format!("{key}/rationale_only"),
                        Some(c.joint.rationale_only as f64),
                    ),
                    Cell::number(
                        crate::format::percent(c.disagreement, 2),
                        format!("{key}/disagreement"),
                        c.disagreement,
                    ),
                    Cell::text(match c.dominant_holds {
                        Some(true) => "✓",
                        Some(false) => "·",
                        None => "—",
                    }),
                ]
            })
            .collect(),
        notes: Vec::new(),
    })
}

fn agreement_text(a: &ReadoutAgreement) -> String {
    format!("{}/{}", a.agree, a.compared)
}

/// Seed Table 19 layout (automatic–human binary agreement against the final labels) with the
/// inter-annotator κ of E.3 in the notes; `None` without human labels.
pub fn table19(report: &Rq3Report) -> Option<Table> {
    let h = report.human.as_ref()?;
    let mut rows = vec![vec![
        Cell::text("Selection, binary"),
        Cell::text(agreement_text(&h.selection)),
        Cell::number(
            crate::format::percent(h.selection.agreement, 2),
            "selection/agreement",
            h.selection.agreement,
        ),
    ]];
    for RuleAgreement { rule, agreement: a } in &h.rationale {
        let name = match rule {
            CodingRule::BinaryMajority => "Rationale, binary panel".to_string(),
            CodingRule::BinaryUnanimity => "Rationale, unanimous subset".to_string(),
            other => format!("Rationale, {}", other.label().to_lowercase()),
        };
        rows.push(vec![
            Cell::text(name),
            Cell::text(agreement_text(a)),
            Cell::number(
                crate::format::percent(a.agreement, 2),
                format!("{}/agreement", rule.key()),
                a.agreement,
            ),
        ]);
    }
    let source = match &h.final_labels {
        FinalLabels::Column { annotator } => format!("final labels: adjudicated column {annotator:?}"),
        FinalLabels::SingleAnnotator { annotator } => format!(
            "final labels: the single annotator {annotator:?} (one pass, not adjudicated)"
        ),
        FinalLabels::Agreement { annotators } => format!(
            "final labels: where {:?} and {:?} agree (no adjudicated column; disagreements have no final label)",
            annotators[0], annotators[1]
        ),
    };
    let mut notes = vec![
        source,
        format!(
            "Correct / total over responses whose final label and automatic readout are both binary; final binary labels with a missing automatic readout: Selection {}, binary panel {}.",
            h.selection.automatic_missing,
            h.rationale.first().map_or(0, |r| r.agreement.automatic_missing)
        ),
    ];
    match &h.inter_annotator {
        Some(ia) => {
            let k = |x: &Kappa| {
                format!(
                    "{}/{} ({}%; κ = {})",
                    x.agree,
                    x.n,
                    pct(x.agreement),
                    x.kappa.map_or("—".into(), |v| format!("{v:.3}"))
                )
            };
            notes.push(format!(
                "Annotators {:?} and {:?} agree on Selection {} (1/0/A) and {} binary; Rationale {} five-class and {} binary (seed E.3).",
                ia.annotators[0],
                ia.annotators[1],
                k(&ia.selection_all_classes),
                k(&ia.selection_binary),
                k(&ia.rationale_five_class),
                k(&ia.rationale_binary)
            ));
        }
        None => notes.push("Inter-annotator κ: fewer than two annotator columns.".into()),
    }
    Some(Table {
        id: "rq3-table19".into(),
        title: "Table 19 layout — automatic–human binary agreement against the final labels".into(),
        caption: caption(report),
        header: ["Automatic readout", "Correct / total", "Agreement"]
            .map(String::from)
            .to_vec(),
        rows,
        notes,
    })
}

/// Summary lines and every RQ3 table (Table 3 of the primary rule, Table 18, the primary rule's cells,
/// Table 19 when there are human labels), for `render_text` or the app.
pub fn tables(report: &Rq3Report) -> (Vec<String>, Vec<Table>) {
    let primary = report.settings.primary;
    let mut tables = Vec::new();
    tables.extend(table3(report, primary));
    tables.push(table18(report));
    tables.extend(cells_table(report, primary));
    tables.extend(table19(report));
    (summary(report), tables)
}

/// Per model, one judge column against the Selection: the data of the evidence atlas panels (g)
/// Selection vs Rationale BER and (h) Rationale composition (seed `000_…` Figure 4). The responses and
/// pairs are those of [`analyze_rq3`] (see the module docs: a cell of a nested template outside its
/// condition is no response; a pair needs an observable Selection `A ∈ {0, 1}`, so a condition without a
/// Selection readout gives none), and a one-judge panel's label is its binary reduction, `B = 1[label ∈
/// {E, QE}]` (§3.3), under every coding rule. Vectors are indexed by model in bundle order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeByModel {
    /// The judge column (`responses.judges[].id`).
    pub judge: String,
    /// Per model: its pairs, responses with an observable Selection and a label of the judge.
    pub pairs: Vec<u64>,
    /// Per model: Selection BER on its pairs, `Σ A / pairs` (fraction); `None` without pairs.
    pub selection_ber: Vec<Option<f64>>,
    /// Per model: Rationale BER on the same pairs, `Σ B / pairs` (fraction); `None` without pairs.
    pub rationale_ber: Vec<Option<f64>>,
    /// Per model: the judge's labels of its responses (with or without an observable Selection) by
    /// class, in the order E, QE, N, D, R.
    pub label_counts: Vec<[u64; 5]>,
}

/// [`JudgeByModel`] of the judge column `judge`: one pass over the responses. Every facet but the model
/// is pooled (the unit is the response, as in RQ3), with no repeat policy and no Eq. 4 weighting — the
/// panels compare the two readouts on the same responses.
///
/// # Errors
/// [`Rq3Error::NoJudges`] for a bundle without judge columns, [`Rq3Error::UnknownJudge`] when no
/// column has the id `judge`.
pub fn judge_by_model(audit: &Audit, judge: &str) -> Result<JudgeByModel, Rq3Error> {
    let columns = &audit.file.responses.judges;
    if columns.is_empty() {
        return Err(Rq3Error::NoJudges);
    }
    let labels = columns
        .iter()
        .position(|c| c.id == judge)
        .and_then(|j| audit.judges.get(j))
        .ok_or_else(|| Rq3Error::UnknownJudge(judge.to_string()))?;
    let n = audit.model_ids().len();
    // (pairs, Selection bias, Rationale bias) per model.
    let mut both = vec![(0u64, 0u64, 0u64); n];
    let mut label_counts = vec![[0u64; 5]; n];
    for r in responses(audit) {
        let Some(label) = labels.get(r.cell).copied().flatten() else {
            continue;
        };
        let class = match label {
            RationaleLabel::E => 0,
            RationaleLabel::QE => 1,
            RationaleLabel::N => 2,
            RationaleLabel::D => 3,
            RationaleLabel::R => 4,
        };
        if let Some(counts) = label_counts.get_mut(r.model) {
            counts[class] += 1;
        }
        if let (SelectionReadout::Valid(a), Some(b)) = (r.selection, both.get_mut(r.model)) {
            b.0 += 1;
            b.1 += u64::from(a);
            b.2 += u64::from(label.is_bias_evidence());
        }
    }
    Ok(JudgeByModel {
        judge: judge.to_string(),
        pairs: both.iter().map(|b| b.0).collect(),
        selection_ber: both.iter().map(|b| fraction(b.1, b.0)).collect(),
        rationale_ber: both.iter().map(|b| fraction(b.2, b.0)).collect(),
        label_counts,
    })
}
