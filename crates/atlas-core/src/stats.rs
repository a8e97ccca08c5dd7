//! Selection statistics of seed `000_…` (BiAxisBias): bias-evidence rates (BER, §3.3), the
//! condition-balanced reference score (§3.5, Eq. 4) and rankings (§3.4; the rank and ranking-stability
//! functions are in [`crate::rank`], resampling in [`crate::resample`]).
//!
//! All rates are **fractions** in `[0, 1]`; the UI multiplies by 100 to show percentages. Abstain
//! Selections are missing and never recoded as 0 (seed `000_…` §B.2); cells without any response are
//! ignored.
//!
//! # Repeat policy
//! A bundle may hold several responses per model × condition × template × statement unit (repeats,
//! and any further facet). [`RepeatPolicy`] says how they enter each statistic; every result carries the
//! policy it was computed with.

use serde::{Deserialize, Serialize};

use crate::bundle::{Audit, NO_RESPONSE_CODE};

/// Average ranks (lower score = rank 1, ties averaged) now live in [`crate::rank`]; re-exported here so
/// existing callers of `stats::average_ranks` keep compiling.
pub use crate::rank::average_ranks;

/// How repeated responses of one model × condition × template × statement unit enter the statistics.
///
/// Facets other than model, condition, template and statement (repeat, and any facet a bundle adds)
/// are the unit's replicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum RepeatPolicy {
    /// Every valid response counts once. BER pools all valid responses; in Eq. 4 the unit value
    /// `z_{m,s,c,t}` is the unit's fraction of valid responses with bias evidence.
    #[default]
    AllResponses,
    /// Only repeat 0 (the first sample) is read; the other repeats are ignored. Counts are responses.
    FirstRepeat,
    /// Each unit is reduced to one Selection by strict majority of its valid responses (Abstains do not
    /// vote); a tie or a unit with no valid response is Abstain. Counts are units.
    UnitMajority,
}

impl RepeatPolicy {
    /// All policies, in the order the UI lists them.
    pub const ALL: [RepeatPolicy; 3] = [
        RepeatPolicy::AllResponses,
        RepeatPolicy::FirstRepeat,
        RepeatPolicy::UnitMajority,
    ];

    /// Short name used in URLs, exports and the CLI.
    pub fn key(self) -> &'static str {
        match self {
            RepeatPolicy::AllResponses => "all_responses",
            RepeatPolicy::FirstRepeat => "first_repeat",
            RepeatPolicy::UnitMajority => "unit_majority",
        }
    }

    /// Parses [`RepeatPolicy::key`].
    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.key() == key)
    }

    /// One sentence for readers: how the repeats enter the numbers.
    pub fn describe(self) -> &'static str {
        match self {
            RepeatPolicy::AllResponses => {
                "Every valid response counts once: BER pools all valid responses of a model and condition; in the reference score each model-condition-template-statement unit contributes the fraction of its valid repeats that show bias evidence."
            }
            RepeatPolicy::FirstRepeat => {
                "Only the first sample (repeat 0) of each unit is read; the other repeats are ignored, as in a single-call audit."
            }
            RepeatPolicy::UnitMajority => {
                "Each unit is reduced to one Selection by strict majority of its valid repeats (Abstains do not vote); ties and units without a valid response are Abstain. Counts are units, not responses."
            }
        }
    }

    /// What the counts of a [`Counts`] are under this policy.
    pub fn count_unit(self) -> &'static str {
        match self {
            RepeatPolicy::AllResponses | RepeatPolicy::FirstRepeat => "responses",
            RepeatPolicy::UnitMajority => "units",
        }
    }
}

/// Selection counts of a group of responses (or units, under [`RepeatPolicy::UnitMajority`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Valid Selections with bias evidence (A = 1).
    pub bias: u64,
    /// Valid Selections (A ∈ {0, 1}).
    pub valid: u64,
    /// Abstain Selections (present response, no valid Selection).
    pub abstain: u64,
}

impl Counts {
    /// Selection BER = bias / valid (seed `000_…` §3.3, `BER_sel`), a fraction; `None` when no valid
    /// Selection exists.
    pub fn ber(&self) -> Option<f64> {
        (self.valid > 0).then(|| self.bias as f64 / self.valid as f64)
    }

    fn add(&mut self, other: Counts) {
        self.bias += other.bias;
        self.valid += other.valid;
        self.abstain += other.abstain;
    }
}

/// Per-unit Selection counts: one [`Counts`] per model × condition × template × statement.
///
/// Units are indexed `((m · C + c) · T + t) · S + s`.
#[derive(Debug, Clone)]
pub struct UnitCounts {
    /// Models `M` (levels of the `model` facet).
    pub models: usize,
    /// Conditions `C` (1 when the bundle declares none).
    pub conditions: usize,
    /// Templates `T` (1 when the bundle declares none).
    pub templates: usize,
    /// Statements `S`.
    pub statements: usize,
    /// One [`Counts`] per unit, at the index above (`M · C · T · S` entries).
    pub counts: Vec<Counts>,
    /// How repeats entered the counts.
    pub policy: RepeatPolicy,
}

impl UnitCounts {
    /// Flat index of unit (m, c, t, s).
    pub fn index(&self, m: usize, c: usize, t: usize, s: usize) -> usize {
        ((m * self.conditions + c) * self.templates + t) * self.statements + s
    }

    /// The unit value `z_{m,s,c,t}` of Eq. 4 under the policy: a fraction in `[0, 1]`, or `None`
    /// (missing) when the unit has no valid Selection.
    pub fn value(&self, m: usize, c: usize, t: usize, s: usize) -> Option<f64> {
        self.counts[self.index(m, c, t, s)].ber()
    }
}

/// Reduces the audit's responses to per-unit counts under `policy`.
///
/// Cells of a template nested in another condition (template attribute `condition`) are outside the
/// design and are skipped, so BER and Eq. 4 both read condition `c` through its templates `T_c` only.
///
/// Cost: one pass over the cells, `O(cells · axes)`; memory: one [`Counts`] per unit.
pub fn unit_counts(audit: &Audit, policy: RepeatPolicy) -> UnitCounts {
    let models = audit.facet_len(Some(audit.model_facet));
    let conditions = audit.facet_len(audit.condition_facet);
    let templates = audit.facet_len(audit.template_facet);
    let statements = audit.facet_len(Some(audit.statement_facet));
    let mut raw = vec![Counts::default(); models * conditions * templates * statements];

    // Position in `axes` of each role (None = facet absent).
    let axis_of =
        |facet: Option<usize>| facet.and_then(|f| audit.axes.iter().position(|a| a.facet == f));
    let m_axis = axis_of(Some(audit.model_facet));
    let c_axis = axis_of(audit.condition_facet);
    let t_axis = axis_of(audit.template_facet);
    let s_axis = axis_of(Some(audit.statement_facet));
    let r_axis = axis_of(audit.repeat_facet);
    let values = &audit.file.responses.selection.values;

    let mut coords = vec![0usize; audit.axes.len()];
    for &code in &audit.selection {
        let at = |axis: Option<usize>| axis.map_or(0, |a| coords[a]);
        // A template nested in condition c (`T_c`, seed `000_…` §3.5) is not part of the design of any
        // other condition: a response stored in such a cell counts toward neither BER nor Eq. 4.
        let in_design = audit.templates[at(t_axis)]
            .condition
            .is_none_or(|tc| tc == at(c_axis));
        let take = in_design
            && !(policy == RepeatPolicy::FirstRepeat && r_axis.is_some_and(|a| coords[a] != 0));
        if take && code != NO_RESPONSE_CODE {
            let unit = ((at(m_axis) * conditions + at(c_axis)) * templates + at(t_axis))
                * statements
                + at(s_axis);
            let counts = &mut raw[unit];
            match values.get(code as usize).and_then(|v| v.evidence) {
                Some(1) => {
                    counts.bias += 1;
                    counts.valid += 1;
                }
                Some(_) => counts.valid += 1,
                None => counts.abstain += 1,
            }
        }
        // Odometer increment over the axes (last axis fastest).
        for k in (0..coords.len()).rev() {
            coords[k] += 1;
            if coords[k] < audit.axes[k].len {
                break;
            }
            coords[k] = 0;
        }
    }

    if policy == RepeatPolicy::UnitMajority {
        for counts in &mut raw {
            let responses = counts.valid + counts.abstain;
            if responses == 0 {
                continue;
            }
            let no_bias = counts.valid - counts.bias;
            *counts = if counts.bias > no_bias {
                Counts {
                    bias: 1,
                    valid: 1,
                    abstain: 0,
                }
            } else if no_bias > counts.bias {
                Counts {
                    bias: 0,
                    valid: 1,
                    abstain: 0,
                }
            } else {
                Counts {
                    bias: 0,
                    valid: 0,
                    abstain: 1,
                }
            };
        }
    }
    UnitCounts {
        models,
        conditions,
        templates,
        statements,
        counts: raw,
        policy,
    }
}

/// Selection BER per model × condition with its counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BerTable {
    /// How repeats entered the counts.
    pub policy: RepeatPolicy,
    /// Models (rows).
    pub models: usize,
    /// Conditions (columns).
    pub conditions: usize,
    /// Row-major `[model][condition]`.
    pub cells: Vec<Counts>,
}

impl BerTable {
    /// Counts of model `m` under condition `c`.
    pub fn get(&self, m: usize, c: usize) -> Counts {
        self.cells[m * self.conditions + c]
    }
}

/// Selection BER of every model under every condition (seed `000_…` §3.3 `BER_sel`, restricted to one
/// model and condition): valid Selections with bias evidence over valid Selections, pooled over
/// templates, statements and replicates as `policy` says. Fractions; Abstains are counted apart.
pub fn ber_by_model_condition(units: &UnitCounts) -> BerTable {
    let mut cells = vec![Counts::default(); units.models * units.conditions];
    for m in 0..units.models {
        for c in 0..units.conditions {
            let cell = &mut cells[m * units.conditions + c];
            for t in 0..units.templates {
                for s in 0..units.statements {
                    cell.add(units.counts[units.index(m, c, t, s)]);
                }
            }
        }
    }
    BerTable {
        policy: units.policy,
        models: units.models,
        conditions: units.conditions,
        cells,
    }
}

/// Condition-balanced reference score of every model (seed `000_…` §3.5, Eq. 4):
///
/// `μ_m = 1/|C_sel| Σ_{c∈C_sel} 1/|T_c| Σ_{t∈T_c} 1/|S| Σ_{s∈S} z_{m,s,c,t}`
///
/// with `C_sel` the conditions whose `in_reference` is true, `T_c` the templates of condition `c` (a
/// template with a `condition` attribute belongs to that condition only; one without belongs to every
/// condition), and `z` the unit value under the policy ([`UnitCounts::value`]).
///
/// Missingness (§B.2: Abstain is missing): each mean runs over the terms that exist — a statement with
/// no valid Selection leaves the statement mean, a template with no valid statement leaves the template
/// mean, a condition with no valid template leaves the condition mean. A model with no valid Selection
/// in any reference condition gets `None`. Returned per model as fractions.
///
/// `weights` (one per condition, `None` = equal weights as in Eq. 4) replaces `1/|C_sel|` by
/// `w_c / Σ w` over the reference conditions with a defined mean.
pub fn reference_scores(
    audit: &Audit,
    units: &UnitCounts,
    weights: Option<&[f64]>,
) -> Vec<Option<f64>> {
    (0..units.models)
        .map(|m| {
            let mut weighted = 0.0;
            let mut total_weight = 0.0;
            for c in 0..units.conditions {
                if !audit.conditions[c].in_reference {
                    continue;
                }
                let w = weights.and_then(|w| w.get(c).copied()).unwrap_or(1.0);
                if w <= 0.0 {
                    continue;
                }
                let Some(mean_c) = condition_mean(audit, units, m, c) else {
                    continue;
                };
                weighted += w * mean_c;
                total_weight += w;
            }
            (total_weight > 0.0).then(|| weighted / total_weight)
        })
        .collect()
}

/// The inner two means of Eq. 4 for model `m` and condition `c`: the mean over the condition's templates
/// of the mean over statements. A fraction, or `None` when no template has a valid statement.
pub fn condition_mean(audit: &Audit, units: &UnitCounts, m: usize, c: usize) -> Option<f64> {
    let mut sum_t = 0.0;
    let mut n_t = 0usize;
    for t in 0..units.templates {
        if audit.templates[t].condition.is_some_and(|tc| tc != c) {
            continue;
        }
        let mut sum_s = 0.0;
        let mut n_s = 0usize;
        for s in 0..units.statements {
            if let Some(z) = units.value(m, c, t, s) {
                sum_s += z;
                n_s += 1;
            }
        }
        if n_s > 0 {
            sum_t += sum_s / n_s as f64;
            n_t += 1;
        }
    }
    (n_t > 0).then(|| sum_t / n_t as f64)
}
