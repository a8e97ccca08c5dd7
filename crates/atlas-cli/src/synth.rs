//! `atlas synth`: a seeded **SYNTHETIC** full-scale bundle, for scale tests and for the
//! designs that need the 18 Selection conditions of seed `000_…` (BiAxisBias) §3.5. It holds no real
//! model output; every model, statement and template in it is a numbered placeholder, and its title,
//! description, source, license attribution, ids and labels all say so.
//!
//! # Design (seed `000_…` §3.2, B.2, Tables 5 and 6)
//!
//! - **model**: `synthetic-model-1` … (default 8), each with its configured parameters as attributes.
//! - **condition**: the 21 conditions of Table 6 in its order: B0 (baseline, one template,
//!   `has_selection: true`, `in_reference: false`: the seed leaves it out of Eq. 4), T1–T5 (task; T3
//!   explain and T4 judge have `has_selection: false`), P1–P5, R1–R5, S1–S5.
//! - **template**: `--templates-per-condition` (default 20) per non-baseline condition plus B0's one:
//!   401 levels, each nested in its condition (`condition` attribute, seed §3.5 `T_c`). With
//!   `--layout crossed` the template facet is instead the within-condition slot (20 levels crossed with
//!   every condition, B0 using slot 1 only) — the same responses in a 20× smaller matrix.
//! - **statement**: the 10 categories of Table 5 × `--statements-per-category` (default 20) = 200.
//! - **repeat**: `--repeats` (default 1) independent samples of every prompt.
//!
//! Axes: model, condition, template, statement, repeat. Cells of a template under another condition are
//! `-` (not part of the design). The 641,600 responses of the seed (8 × 401 × 200) are all present: the
//! T3/T4 responses exist but have no Selection slot, so they are stored as parser failures (Abstain);
//! `--explain-judge-cells absent` stores them as `-` instead (577,600 responses).
//!
//! # Generative model
//!
//! For model `m`, condition `c`, template `t` of `c` and statement `s`:
//!
//! ```text
//! logit P(Selection = bias evidence) = a_m + e_c + e_t + e_s + i_mc
//! e_c ~ N(0, σ_sweep²)          σ_task = 1.5, σ_perspective = 0.3, σ_role = 0.4, σ_sentiment = 0.35, e_B0 = 0
//! e_t ~ N(0, 0.5²)              template within its condition
//! e_s = k_cat(s) + u_s          k_cat ~ N(0, 0.4²) per category, u_s ~ N(0, 0.8²)
//! i_mc ~ N(0, 0.25²)            small model × condition interaction
//! ```
//!
//! The sweep scales follow the ordering of the seed's variance components (Table 12: task ≫ role >
//! sentiment; perspective below the listed six); their size is set so that one template of one
//! condition misses the reference by several pp on average with a heavy tail from the three task
//! conditions, as the seed's concentrated audits do (Table 13: MAE 10.63 pp, 97.5th percentile 51 pp;
//! here the noise-free mean deviation is 5–10 pp depending on the seed, 7.4 pp for seed 20260722). `a_m` is **calibrated**, not drawn: it is the value
//! (bisection, rounded to 1e-6) at which the expected condition-balanced reference score (Eq. 4, the
//! mean over the 18 reference conditions × their templates × the statements of the model's
//! probabilities) equals the model's configured base rate. The base rates are the eight reference
//! Selection scores of seed Table 15 in its row order: 6.9, 11.4, 3.6, 20.3, 14.4, 15.4, 26.2, 13.8 %
//! (model 9 onwards repeats the list, +0.5 pp per round). Each response first abstains with the model's
//! Abstain probability (2.0, 1.0, 3.0, 1.5, 2.5, 1.2, 2.8, 1.8 %, repeated likewise): a quarter of the
//! Abstains are parser failures (`""`), the rest the readable non-binary answer `neither`; otherwise
//! it is bias evidence with the probability above. Raw Selections follow the task (Table 6): `yes`/`no`
//! for the binary judgment conditions (B0, P, R, S), `stereotype option`/`counter-stereotype option`
//! (T1), `stereotyped actor`/`other actor` (T2), `5`/`1` (T5).
//!
//! # Randomness
//!
//! Every draw comes from [`DrawStream`] (ChaCha8, `u32` words only), one stream id per component so
//! that, e.g., changing the number of statements leaves the condition effects alone: stream 1 condition
//! effects (the 20 non-baseline conditions in Table 6 order; T3/T4 are drawn but unused), 2 template
//! effects (condition by condition in Table 6 order, B0 first), 3 statement effects (the 10 category
//! effects, then one per statement), 4 interactions (model by model, the 21 conditions each), 5 the
//! responses (model, condition, template, statement, repeat; two words per Selection-bearing response,
//! none for T3/T4). A uniform is `word / 2³²` in `[0, 1)`; a normal is Box–Muller's cosine branch on
//! two words, `sqrt(−2 ln(1 − u₁)) · cos(2π u₂)` (the sine branch is discarded). Effects are rounded to
//! 1e-4 before use and stored, rounded, in the level attributes (`synthetic_*`), so the bundle carries
//! the exact parameters that generated it. The output is a pure function of the settings: the same
//! seed gives the same bytes. (`ln`, `cos` and `exp` come from the platform's libm; another platform
//! could differ only if a last-bit difference crossed a rounding or draw boundary.)

use std::collections::BTreeMap;
use std::fs;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use atlas_core::bundle::{
    facet_ids, BundleFile, Facet, Level, License, Metadata, Obtained, Production, Responses,
    SelectionColumn, SelectionValue, Source, CODE_ALPHABET, FORMAT_NAME, FORMAT_VERSION, MAX_CELLS,
    NO_RESPONSE, NO_RESPONSE_CODE,
};
use atlas_core::{Audit, DrawStream};
use clap::{Args, ValueEnum};
use serde_json::{json, Map, Value};

/// Reference Selection scores of the eight models of seed `000_…` Table 15, in the table's row order.
pub const BASE_RATES: [f64; 8] = [0.069, 0.114, 0.036, 0.203, 0.144, 0.154, 0.262, 0.138];
/// Per-model Abstain probability (1–3 %, not tied to the base rate).
pub const ABSTAIN_RATES: [f64; 8] = [0.020, 0.010, 0.030, 0.015, 0.025, 0.012, 0.028, 0.018];
/// Share of a model's Abstains that are parser failures; the rest answer `neither`.
pub const PARSER_FAILURE_SHARE: f64 = 0.25;

/// Standard deviations (logit scale) of the random effects.
pub const SD_TASK: f64 = 1.5;
pub const SD_PERSPECTIVE: f64 = 0.3;
pub const SD_ROLE: f64 = 0.4;
pub const SD_SENTIMENT: f64 = 0.35;
pub const SD_TEMPLATE: f64 = 0.5;
pub const SD_CATEGORY: f64 = 0.4;
pub const SD_STATEMENT: f64 = 0.8;
pub const SD_INTERACTION: f64 = 0.25;

const STREAM_CONDITIONS: u64 = 1;
const STREAM_TEMPLATES: u64 = 2;
const STREAM_STATEMENTS: u64 = 3;
const STREAM_INTERACTIONS: u64 = 4;
const STREAM_RESPONSES: u64 = 5;

/// The bias categories of seed Table 5: (id slug, label).
const CATEGORIES: [(&str, &str); 10] = [
    ("ethnicity", "Ethnicity"),
    ("sexual-orientation", "Sexual orientation"),
    ("gender", "Gender"),
    ("religion", "Religion"),
    ("age", "Age"),
    ("socioeconomic-status", "Socioeconomic status"),
    ("disability", "Disability"),
    ("gender-ethnicity", "Gender-ethnicity"),
    ("gender-sexual-orientation", "Gender-sexual orientation"),
    (
        "ethnicity-socioeconomic-status",
        "Ethnicity-socioeconomic status",
    ),
];

/// How a condition's Selection reads (seed Table 6).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Readout {
    /// Binary judgment (B0 and the perspective, role and sentiment sweeps): yes / no.
    Binary,
    /// T1: stereotype / counter-stereotype option.
    Completion,
    /// T2: stereotyped / other actor.
    ChoiceOfTwo,
    /// T5: endpoint rating 5 / 1.
    Rating,
    /// T3 explain, T4 judge: no discrete Selection slot.
    None,
}

struct ConditionSpec {
    id: &'static str,
    sweep: &'static str,
    level: &'static str,
    readout: Readout,
}

const fn cond(
    id: &'static str,
    sweep: &'static str,
    level: &'static str,
    readout: Readout,
) -> ConditionSpec {
    ConditionSpec {
        id,
        sweep,
        level,
        readout,
    }
}

/// The 21 conditions of seed Table 6, in its order.
const CONDITIONS: [ConditionSpec; 21] = [
    cond("B0", "baseline", "binary judgment", Readout::Binary),
    cond("T1", "task", "sentence completion", Readout::Completion),
    cond("T2", "task", "choice of two", Readout::ChoiceOfTwo),
    cond("T3", "task", "explain", Readout::None),
    cond("T4", "task", "judge", Readout::None),
    cond("T5", "task", "endpoint rating", Readout::Rating),
    cond("P1", "perspective", "others", Readout::Binary),
    cond("P2", "perspective", "historical", Readout::Binary),
    cond("P3", "perspective", "institutional", Readout::Binary),
    cond("P4", "perspective", "media", Readout::Binary),
    cond("P5", "perspective", "famous figure", Readout::Binary),
    cond("R1", "role", "sociologist", Readout::Binary),
    cond("R2", "role", "military/security", Readout::Binary),
    cond("R3", "role", "policy maker", Readout::Binary),
    cond("R4", "role", "data scientist", Readout::Binary),
    cond("R5", "role", "AI ethicist", Readout::Binary),
    cond("S1", "sentiment", "positive", Readout::Binary),
    cond("S2", "sentiment", "negative", Readout::Binary),
    cond("S3", "sentiment", "skeptical", Readout::Binary),
    cond("S4", "sentiment", "indignant", Readout::Binary),
    cond("S5", "sentiment", "analytical", Readout::Binary),
];

impl ConditionSpec {
    fn is_baseline(&self) -> bool {
        self.sweep == "baseline"
    }
    fn has_selection(&self) -> bool {
        self.readout != Readout::None
    }
    /// In the condition-balanced reference (Eq. 4): the 18 Selection conditions, not B0.
    fn in_reference(&self) -> bool {
        self.has_selection() && !self.is_baseline()
    }
    fn sd(&self) -> f64 {
        match self.sweep {
            "task" => SD_TASK,
            "perspective" => SD_PERSPECTIVE,
            "role" => SD_ROLE,
            "sentiment" => SD_SENTIMENT,
            _ => 0.0,
        }
    }
    /// Selection-value codes (bias evidence, no bias evidence); `None` for T3/T4.
    fn codes(&self) -> Option<(u8, u8)> {
        match self.readout {
            Readout::Binary => Some((0, 1)),
            Readout::Completion => Some((2, 3)),
            Readout::ChoiceOfTwo => Some((4, 5)),
            Readout::Rating => Some((6, 7)),
            Readout::None => None,
        }
    }
    fn label(&self) -> String {
        let sweep = if self.is_baseline() {
            "Baseline"
        } else {
            match self.sweep {
                "task" => "Task",
                "perspective" => "Perspective",
                "role" => "Role",
                _ => "Sentiment",
            }
        };
        format!("{sweep}: {}", self.level)
    }
}

/// Selection-value code of a neutral non-binary answer (`neither`, Abstain).
const CODE_NEITHER: u8 = 8;
/// Selection-value code of a parser failure (Abstain); also the code of every T3/T4 response.
const CODE_PARSER_FAILURE: u8 = 9;

fn selection_values() -> Vec<SelectionValue> {
    let v = |raw: &str, evidence: Option<u8>, obtained| SelectionValue {
        raw: raw.to_string(),
        evidence,
        obtained,
    };
    vec![
        v("yes", Some(1), Obtained::Regex),
        v("no", Some(0), Obtained::Regex),
        v("stereotype option", Some(1), Obtained::Regex),
        v("counter-stereotype option", Some(0), Obtained::Regex),
        v("stereotyped actor", Some(1), Obtained::Regex),
        v("other actor", Some(0), Obtained::Regex),
        v("5", Some(1), Obtained::Regex),
        v("1", Some(0), Obtained::Regex),
        v("neither", None, Obtained::Regex),
        v("", None, Obtained::ParserFailure),
    ]
}

/// How the template facet is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Layout {
    /// 401 template levels, each nested in its condition (the seed's `T_c`); 13,473,600 cells.
    Nested,
    /// 20 template slots crossed with every condition (B0 uses slot 1); 672,000 cells, same responses.
    Crossed,
}

/// What the cells of T3 (explain) and T4 (judge) hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExplainJudgeCells {
    /// A response without a Selection slot: parser failure (Abstain), as the seed's 641,600 responses.
    ParserFailure,
    /// No response (`-`): 577,600 responses.
    Absent,
}

impl Layout {
    fn key(self) -> &'static str {
        match self {
            Layout::Nested => "nested",
            Layout::Crossed => "crossed",
        }
    }
}

impl ExplainJudgeCells {
    fn key(self) -> &'static str {
        match self {
            ExplainJudgeCells::ParserFailure => "parser-failure",
            ExplainJudgeCells::Absent => "absent",
        }
    }
}

/// The settings that determine the bundle (everything but the output path).
#[derive(Args, Debug, Clone)]
pub struct SynthConfig {
    /// Seed of every draw; the same seed and settings give the same bytes.
    #[arg(long)]
    pub seed: u64,
    /// Number of synthetic models (base rates from seed Table 15, repeated beyond 8).
    #[arg(long, default_value_t = 8)]
    pub models: usize,
    /// Statements in each of the 10 bias categories of seed Table 5.
    #[arg(long, default_value_t = 20)]
    pub statements_per_category: usize,
    /// Templates of each non-baseline condition (B0 always has one).
    #[arg(long, default_value_t = 20)]
    pub templates_per_condition: usize,
    /// Independent samples of every prompt.
    #[arg(long, default_value_t = 1)]
    pub repeats: usize,
    /// Template facet: nested in its condition (the seed's design) or crossed slots (20× fewer cells).
    #[arg(long, value_enum, default_value_t = Layout::Nested)]
    pub layout: Layout,
    /// T3 (explain) and T4 (judge) cells: parser-failure responses, or absent (`-`).
    #[arg(long, value_enum, default_value_t = ExplainJudgeCells::ParserFailure)]
    pub explain_judge_cells: ExplainJudgeCells,
}

/// `atlas synth` arguments.
#[derive(Args, Debug, Clone)]
pub struct SynthArgs {
    #[command(flatten)]
    pub config: SynthConfig,
    /// Output bundle file (its parent folder is created if needed).
    #[arg(long)]
    pub out: PathBuf,
}

impl SynthConfig {
    /// The canonical command line (without `--out`, which does not change the bytes).
    pub fn command(&self) -> String {
        format!(
            "atlas synth --seed {} --models {} --statements-per-category {} --templates-per-condition {} --repeats {} --layout {} --explain-judge-cells {}",
            self.seed,
            self.models,
            self.statements_per_category,
            self.templates_per_condition,
            self.repeats,
            self.layout.key(),
            self.explain_judge_cells.key()
        )
    }

    fn statements(&self) -> usize {
        CATEGORIES.len() * self.statements_per_category
    }

    /// Templates of condition `c` (B0 has one).
    fn templates_of(&self, c: usize) -> usize {
        if CONDITIONS[c].is_baseline() {
            1
        } else {
            self.templates_per_condition
        }
    }

    /// Number of template levels of the bundle.
    fn template_levels(&self) -> usize {
        match self.layout {
            Layout::Nested => (0..CONDITIONS.len()).map(|c| self.templates_of(c)).sum(),
            Layout::Crossed => self.templates_per_condition,
        }
    }

    /// Responses the design holds: models × repeats × statements × the templates of the conditions whose
    /// cells hold responses.
    pub fn expected_responses(&self) -> usize {
        let templates: usize = (0..CONDITIONS.len())
            .filter(|&c| {
                CONDITIONS[c].has_selection()
                    || self.explain_judge_cells == ExplainJudgeCells::ParserFailure
            })
            .map(|c| self.templates_of(c))
            .sum();
        self.models * self.repeats * self.statements() * templates
    }
}

/// Base rate of model `m` (0-based): seed Table 15, repeated with +0.5 pp per round beyond 8.
pub fn base_rate(m: usize) -> f64 {
    round_to(BASE_RATES[m % 8] + 0.005 * (m / 8) as f64, 1e6).min(0.95)
}

/// Abstain probability of model `m` (0-based).
pub fn abstain_rate(m: usize) -> f64 {
    ABSTAIN_RATES[m % 8]
}

/// A uniform draw in `[0, 1)`: one word / 2³².
fn uniform(stream: &mut DrawStream) -> f64 {
    f64::from(stream.next_u32()) / 4_294_967_296.0
}

/// A standard normal draw: Box–Muller's cosine branch on two words (`1 − u₁` is in `(0, 1]`).
fn normal(stream: &mut DrawStream) -> f64 {
    let u1 = 1.0 - uniform(stream);
    let u2 = uniform(stream);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// `x` rounded to `1/scale` (e.g. `scale = 1e4` → 4 decimals), with −0 written as 0.
fn round_to(x: f64, scale: f64) -> f64 {
    let r = (x * scale).round() / scale;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Every parameter of the generative model, as rounded and used.
struct Effects {
    /// Per condition (Table 6 order).
    condition: Vec<f64>,
    /// Per condition, per template of it.
    template: Vec<Vec<f64>>,
    /// Per category.
    category: Vec<f64>,
    /// Per statement: its category's effect plus its own, rounded.
    statement: Vec<f64>,
    /// `[model][condition]`.
    interaction: Vec<Vec<f64>>,
    /// Calibrated intercept per model.
    intercept: Vec<f64>,
}

fn draw_effects(config: &SynthConfig) -> Effects {
    let seed = config.seed;
    let mut s = DrawStream::with_stream(seed, STREAM_CONDITIONS);
    let condition: Vec<f64> = CONDITIONS
        .iter()
        .map(|c| {
            if c.is_baseline() {
                0.0
            } else {
                round_to(c.sd() * normal(&mut s), 1e4)
            }
        })
        .collect();
    let mut s = DrawStream::with_stream(seed, STREAM_TEMPLATES);
    let template: Vec<Vec<f64>> = (0..CONDITIONS.len())
        .map(|c| {
            (0..config.templates_of(c))
                .map(|_| round_to(SD_TEMPLATE * normal(&mut s), 1e4))
                .collect()
        })
        .collect();
    let mut s = DrawStream::with_stream(seed, STREAM_STATEMENTS);
    let category: Vec<f64> = CATEGORIES
        .iter()
        .map(|_| round_to(SD_CATEGORY * normal(&mut s), 1e4))
        .collect();
    let statement: Vec<f64> = (0..config.statements())
        .map(|i| {
            let own = SD_STATEMENT * normal(&mut s);
            round_to(category[i / config.statements_per_category] + own, 1e4)
        })
        .collect();
    let mut s = DrawStream::with_stream(seed, STREAM_INTERACTIONS);
    let interaction: Vec<Vec<f64>> = (0..config.models)
        .map(|_| {
            CONDITIONS
                .iter()
                .map(|_| round_to(SD_INTERACTION * normal(&mut s), 1e4))
                .collect()
        })
        .collect();
    let mut effects = Effects {
        condition,
        template,
        category,
        statement,
        interaction,
        intercept: Vec::new(),
    };
    effects.intercept = (0..config.models)
        .map(|m| calibrate(&effects, m, base_rate(m)))
        .collect();
    effects
}

/// Expected Eq. 4 reference score of model `m` with intercept `a`: the mean over the reference
/// conditions of the mean over their templates of the mean over statements of the probability.
fn expected_reference(effects: &Effects, m: usize, a: f64) -> f64 {
    let mut sum_c = 0.0;
    let mut n_c = 0usize;
    for (c, spec) in CONDITIONS.iter().enumerate() {
        if !spec.in_reference() {
            continue;
        }
        let base = a + effects.condition[c] + effects.interaction[m][c];
        let mut sum_t = 0.0;
        for &e_t in &effects.template[c] {
            let sum_s: f64 = effects
                .statement
                .iter()
                .map(|&e_s| sigmoid(base + e_t + e_s))
                .sum();
            sum_t += sum_s / effects.statement.len() as f64;
        }
        sum_c += sum_t / effects.template[c].len() as f64;
        n_c += 1;
    }
    sum_c / n_c as f64
}

/// The intercept at which the expected reference score of model `m` equals `target`: 60 bisection steps
/// on `[−30, 30]` (the score is increasing in the intercept), rounded to 1e-6.
fn calibrate(effects: &Effects, m: usize, target: f64) -> f64 {
    let (mut lo, mut hi) = (-30.0_f64, 30.0_f64);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if expected_reference(effects, m, mid) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    round_to(0.5 * (lo + hi), 1e6)
}

/// Selection counts of one model over the 18 reference conditions, tallied while generating.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub bias: u64,
    pub valid: u64,
    pub abstain: u64,
}

/// A generated bundle: its JSON text and what it holds.
pub struct Generated {
    pub text: String,
    pub id: String,
    pub cells: usize,
    pub responses: usize,
    /// Per model: configured base rate, Abstain rate, calibrated intercept, realised reference tally.
    pub models: Vec<(String, f64, f64, f64, Tally)>,
    /// Expected concentrated-audit error (pp): the mean over reference condition–template pairs and models
    /// of |expected one-template score − expected reference|, a noise-free guide to the effect sizes.
    pub concentrated_spread_pp: f64,
}

fn level(id: String, attributes: Value) -> Level {
    let attributes = match attributes {
        Value::Object(map) => map.into_iter().collect(),
        _ => BTreeMap::new(),
    };
    Level { id, attributes }
}

/// Generates the bundle for `config` and checks it: it must read back as a valid audit and hold exactly
/// [`SynthConfig::expected_responses`] responses.
///
/// # Errors
/// Settings of zero, a matrix beyond the format's cell limit, or (a bug) a bundle that does not
/// validate or count up.
pub fn generate(config: &SynthConfig) -> Result<Generated> {
    if config.models == 0
        || config.statements_per_category == 0
        || config.templates_per_condition == 0
        || config.repeats == 0
    {
        bail!("--models, --statements-per-category, --templates-per-condition and --repeats must be at least 1");
    }
    let n_cond = CONDITIONS.len();
    let n_stmt = config.statements();
    let n_tmpl = config.template_levels();
    let cells = [config.models, n_cond, n_tmpl, n_stmt, config.repeats]
        .iter()
        .try_fold(1usize, |acc, &n| acc.checked_mul(n))
        .filter(|&c| c <= MAX_CELLS)
        .with_context(|| {
            format!(
                "{} models × {n_cond} conditions × {n_tmpl} templates × {n_stmt} statements × {} repeats exceeds the format's limit of {MAX_CELLS} cells",
                config.models, config.repeats
            )
        })?;

    let effects = draw_effects(config);

    // First template level of each condition in the nested layout.
    let mut offset = vec![0usize; n_cond];
    for c in 1..n_cond {
        offset[c] = offset[c - 1] + config.templates_of(c - 1);
    }
    let cell = |m: usize, c: usize, t: usize, s: usize, r: usize| {
        let t_level = match config.layout {
            Layout::Nested => offset[c] + t,
            Layout::Crossed => t,
        };
        (((m * n_cond + c) * n_tmpl + t_level) * n_stmt + s) * config.repeats + r
    };

    let mut codes = vec![NO_RESPONSE as u8; cells];
    let mut tallies = vec![Tally::default(); config.models];
    let mut responses = 0usize;
    let mut stream = DrawStream::with_stream(config.seed, STREAM_RESPONSES);
    for (m, tally) in tallies.iter_mut().enumerate() {
        let abstain = abstain_rate(m);
        let parser_failure = abstain * PARSER_FAILURE_SHARE;
        for (c, spec) in CONDITIONS.iter().enumerate() {
            let readout = spec.codes();
            if readout.is_none() && config.explain_judge_cells == ExplainJudgeCells::Absent {
                continue;
            }
            let base = effects.intercept[m] + effects.condition[c] + effects.interaction[m][c];
            for (t, &e_t) in effects.template[c].iter().enumerate() {
                for (s, &e_s) in effects.statement.iter().enumerate() {
                    let p = sigmoid(base + e_t + e_s);
                    for r in 0..config.repeats {
                        let code = match readout {
                            None => CODE_PARSER_FAILURE,
                            Some((bias, no_bias)) => {
                                let ua = uniform(&mut stream);
                                let ub = uniform(&mut stream);
                                if ua < parser_failure {
                                    CODE_PARSER_FAILURE
                                } else if ua < abstain {
                                    CODE_NEITHER
                                } else if ub < p {
                                    bias
                                } else {
                                    no_bias
                                }
                            }
                        };
                        if spec.in_reference() {
                            match code {
                                CODE_PARSER_FAILURE | CODE_NEITHER => tally.abstain += 1,
                                _ => {
                                    tally.valid += 1;
                                    if readout.is_some_and(|(b, _)| b == code) {
                                        tally.bias += 1;
                                    }
                                }
                            }
                        }
                        codes[cell(m, c, t, s, r)] = CODE_ALPHABET[code as usize];
                        responses += 1;
                    }
                }
            }
        }
    }
    let codes = String::from_utf8(codes).context("codes are ASCII")?;

    let bundle = build_bundle(config, &effects, codes);
    let id = bundle.metadata.id.clone();
    let mut text = serde_json::to_string(&bundle)?;
    text.push('\n');

    // Read it back: it must be a valid bundle with exactly the responses of the design.
    let audit = Audit::from_json(&text)
        .map_err(|e| anyhow::anyhow!("the synthetic bundle is invalid: {e}"))?;
    let present = audit
        .selection
        .iter()
        .filter(|&&c| c != NO_RESPONSE_CODE)
        .count();
    if present != config.expected_responses() || present != responses || audit.cells != cells {
        bail!(
            "the synthetic bundle holds {present} responses in {} cells; the design has {} in {cells}",
            audit.cells,
            config.expected_responses()
        );
    }

    let models = tallies
        .into_iter()
        .enumerate()
        .map(|(m, tally)| {
            (
                model_id(m),
                base_rate(m),
                abstain_rate(m),
                effects.intercept[m],
                tally,
            )
        })
        .collect();
    Ok(Generated {
        text,
        id,
        cells,
        responses,
        models,
        concentrated_spread_pp: concentrated_spread(config, &effects),
    })
}

fn concentrated_spread(config: &SynthConfig, effects: &Effects) -> f64 {
    let mut total = 0.0;
    let mut n = 0usize;
    for m in 0..config.models {
        let reference = expected_reference(effects, m, effects.intercept[m]);
        for (c, spec) in CONDITIONS.iter().enumerate() {
            if !spec.in_reference() {
                continue;
            }
            let base = effects.intercept[m] + effects.condition[c] + effects.interaction[m][c];
            for &e_t in &effects.template[c] {
                let score: f64 = effects
                    .statement
                    .iter()
                    .map(|&e_s| sigmoid(base + e_t + e_s))
                    .sum::<f64>()
                    / effects.statement.len() as f64;
                total += (score - reference).abs();
                n += 1;
            }
        }
    }
    100.0 * total / n as f64
}

fn model_id(m: usize) -> String {
    format!("synthetic-model-{}", m + 1)
}

fn build_bundle(config: &SynthConfig, effects: &Effects, codes: String) -> BundleFile {
    let model_levels = (0..config.models)
        .map(|m| {
            let interaction: Map<String, Value> = CONDITIONS
                .iter()
                .enumerate()
                .map(|(c, spec)| (spec.id.to_string(), json!(effects.interaction[m][c])))
                .collect();
            level(
                model_id(m),
                json!({
                    "label": format!("Synthetic model {}", m + 1),
                    "synthetic": true,
                    "synthetic_base_rate": base_rate(m),
                    "synthetic_abstain_rate": abstain_rate(m),
                    "synthetic_intercept": effects.intercept[m],
                    "synthetic_condition_interaction": interaction,
                }),
            )
        })
        .collect();
    let condition_levels = CONDITIONS
        .iter()
        .enumerate()
        .map(|(c, spec)| {
            level(
                spec.id.to_string(),
                json!({
                    "label": spec.label(),
                    "sweep": spec.sweep,
                    "level": spec.level,
                    "has_selection": spec.has_selection(),
                    "in_reference": spec.in_reference(),
                    "synthetic_effect": effects.condition[c],
                }),
            )
        })
        .collect();
    let template_text = |c: usize, t: usize| {
        if CONDITIONS[c].is_baseline() {
            format!(
                "Synthetic template {} of condition {} (the single neutral baseline template)",
                t + 1,
                CONDITIONS[c].id
            )
        } else {
            format!(
                "Synthetic template {} of condition {}",
                t + 1,
                CONDITIONS[c].id
            )
        }
    };
    let template_levels = match config.layout {
        Layout::Nested => CONDITIONS
            .iter()
            .enumerate()
            .flat_map(|(c, spec)| {
                effects.template[c].iter().enumerate().map(move |(t, &e)| {
                    level(
                        format!("{}-{:02}", spec.id, t + 1),
                        json!({
                            "text": template_text(c, t),
                            "condition": spec.id,
                            "synthetic_effect": e,
                        }),
                    )
                })
            })
            .collect(),
        Layout::Crossed => (0..config.templates_per_condition)
            .map(|t| {
                let mut texts = Map::new();
                let mut by_condition = Map::new();
                for (c, spec) in CONDITIONS.iter().enumerate() {
                    if let Some(&e) = effects.template[c].get(t) {
                        texts.insert(spec.id.to_string(), json!(template_text(c, t)));
                        by_condition.insert(spec.id.to_string(), json!(e));
                    }
                }
                level(
                    format!("slot-{:02}", t + 1),
                    json!({
                        "label": format!("Synthetic template slot {}", t + 1),
                        "text": format!("Synthetic template slot {}: its wording differs by condition (text_by_condition); slot numbers are not shared wordings", t + 1),
                        "text_by_condition": texts,
                        "synthetic_effect_by_condition": by_condition,
                    }),
                )
            })
            .collect(),
    };
    let statement_levels = (0..config.statements())
        .map(|i| {
            let k = i / config.statements_per_category;
            let j = i % config.statements_per_category;
            let (slug, label) = CATEGORIES[k];
            level(
                format!("{slug}-{:02}", j + 1),
                json!({
                    "text": format!("Synthetic statement {} ({label})", j + 1),
                    "category": label.to_lowercase(),
                    "synthetic_category_effect": effects.category[k],
                    "synthetic_effect": effects.statement[i],
                }),
            )
        })
        .collect();
    let repeat_levels = (1..=config.repeats)
        .map(|r| level(r.to_string(), json!({"label": format!("sample {r}")})))
        .collect();

    let base_rates: Vec<String> = (0..config.models)
        .map(|m| format!("{:.1}", 100.0 * base_rate(m)))
        .collect();
    let abstains: Vec<String> = (0..config.models)
        .map(|m| format!("{:.1}", 100.0 * abstain_rate(m)))
        .collect();
    let notes = format!(
        "SYNTHETIC: generated by the command above, no real model outputs. Generative model: logit P(bias evidence) = a_m + e_c + e_t + e_s + i_mc with e_c ~ N(0, s^2) per condition (s = {SD_TASK} task, {SD_PERSPECTIVE} perspective, {SD_ROLE} role, {SD_SENTIMENT} sentiment; e_B0 = 0), e_t ~ N(0, {SD_TEMPLATE}^2) per template, e_s = category effect ~ N(0, {SD_CATEGORY}^2) + own ~ N(0, {SD_STATEMENT}^2), model x condition interaction i_mc ~ N(0, {SD_INTERACTION}^2); a_m calibrated so that the expected Eq. 4 reference score (18 conditions, B0, T3 and T4 excluded) equals the model's base rate ({} %; the reference scores of seed 000 Table 15 in row order). Each response first abstains with the model's probability ({} %; a quarter parser failures, the rest 'neither'). T3/T4 cells: {}. Draws: atlas_core::resample::DrawStream (ChaCha8, u32 words), uniform = word / 2^32, normal = Box-Muller cosine branch; stream 1 condition effects, 2 template effects, 3 statement effects, 4 interactions, 5 responses (two words per Selection-bearing response). Effects rounded to 1e-4, intercepts to 1e-6, and stored in the level attributes synthetic_*. Template layout: {}. See crates/atlas-cli/src/synth.rs.",
        base_rates.join(", "),
        abstains.join(", "),
        match config.explain_judge_cells {
            ExplainJudgeCells::ParserFailure => "responses without a Selection slot, stored as parser failures (Abstain)",
            ExplainJudgeCells::Absent => "no response (-)",
        },
        match config.layout {
            Layout::Nested => "nested (each template belongs to one condition; cells of other conditions are -)",
            Layout::Crossed => "crossed slots (template slot k of every condition; B0 has slot 1 only)",
        },
    );

    BundleFile {
        schema: None,
        format: FORMAT_NAME.to_string(),
        version: FORMAT_VERSION,
        metadata: Metadata {
            id: format!(
                "synthetic-full-scale-seed{}-m{}-s{}-t{}-r{}-{}{}",
                config.seed,
                config.models,
                config.statements_per_category,
                config.templates_per_condition,
                config.repeats,
                config.layout.key(),
                match config.explain_judge_cells {
                    ExplainJudgeCells::ParserFailure => "",
                    ExplainJudgeCells::Absent => "-no-t3t4",
                }
            ),
            title: format!(
                "SYNTHETIC full-scale audit (seed {}): {} synthetic models × 21 conditions × {} templates × {} statements",
                config.seed,
                config.models,
                (0..CONDITIONS.len()).map(|c| config.templates_of(c)).sum::<usize>(),
                config.statements()
            ),
            description: format!(
                "SYNTHETIC DATA — NOT REAL MODEL OUTPUTS. A seeded stand-in with the shape of the main condition matrix of seed 000 (BiAxisBias, §3.2 and B.2): the 21 conditions of Table 6 (B0 baseline with one template; T1–T5, P1–P5, R1–R5, S1–S5 with {} templates each), {} placeholder statements in the 10 bias categories of Table 5, {} repeat(s). Selections are Bernoulli draws from a logistic model with model, condition, template and statement effects and a small model × condition interaction; the per-model reference scores are set to those of seed Table 15. For scale tests and for checking the statistics; it says nothing about any real model.",
                config.templates_per_condition,
                config.statements(),
                config.repeats
            ),
            source: Source {
                citation: "SYNTHETIC: generated by Audit Atlas (atlas synth); the design mirrors seed 000 (BiAxisBias) §3.2, §3.5, Tables 5, 6 and 15, but no data of that study is used.".to_string(),
                url: None,
                commit: None,
            },
            license: License {
                id: "CC0-1.0".to_string(),
                url: Some("https://creativecommons.org/publicdomain/zero/1.0/".to_string()),
                attribution: "Synthetic data generated by Audit Atlas (atlas synth), no real model outputs".to_string(),
            },
            content_warning: None,
            produced_by: Production {
                tool: format!("atlas {} synth (SYNTHETIC data generator)", env!("CARGO_PKG_VERSION")),
                command: Some(format!("{} (seed {}; the --out path does not change the bytes)", config.command(), config.seed)),
                notes: Some(notes),
            },
        },
        facets: vec![
            Facet { id: facet_ids::MODEL.into(), label: Some("Model (synthetic)".into()), levels: model_levels },
            Facet { id: facet_ids::CONDITION.into(), label: Some("Condition (seed 000 Table 6)".into()), levels: condition_levels },
            Facet {
                id: facet_ids::TEMPLATE.into(),
                label: Some(match config.layout {
                    Layout::Nested => "Template (synthetic, nested in its condition)".into(),
                    Layout::Crossed => "Template slot (synthetic, crossed with conditions)".into(),
                }),
                levels: template_levels,
            },
            Facet { id: facet_ids::STATEMENT.into(), label: Some("Statement (synthetic placeholder)".into()), levels: statement_levels },
            Facet { id: facet_ids::REPEAT.into(), label: Some("Repeat (sample)".into()), levels: repeat_levels },
        ],
        responses: Responses {
            axes: vec![
                facet_ids::MODEL.into(),
                facet_ids::CONDITION.into(),
                facet_ids::TEMPLATE.into(),
                facet_ids::STATEMENT.into(),
                facet_ids::REPEAT.into(),
            ],
            selection: SelectionColumn {
                direction: Some(atlas_core::direction::DirectionSpec::lower(
                    "SYNTHETIC: bias evidence as in seed 000, less bias evidence is better",
                )),
                values: selection_values(),
                codes,
            },
            judges: Vec::new(),
            human: Vec::new(),
            likelihood: None,
        },
        texts: None,
        clinical: None,
    }
}

/// `atlas synth`: generates, checks and writes the bundle, and prints what it holds.
///
/// # Errors
/// See [`generate`]; also a file that cannot be written.
pub fn run(args: &SynthArgs) -> Result<()> {
    let done = generate(&args.config)?;
    if let Some(parent) = args.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    fs::write(&args.out, &done.text).with_context(|| format!("writing {}", args.out.display()))?;
    let c = &args.config;
    println!(
        "wrote {} ({} bytes): SYNTHETIC bundle {:?}, {} cells, {} responses (design: {} models × {} templates with responses × {} statements × {} repeat(s))",
        args.out.display(),
        done.text.len(),
        done.id,
        done.cells,
        done.responses,
        c.models,
        done.responses / (c.models * c.statements() * c.repeats),
        c.statements(),
        c.repeats
    );
    println!(
        "expected one-template (concentrated) deviation from the reference: {:.2} pp (noise-free)",
        done.concentrated_spread_pp
    );
    println!(
        "{:<22} {:>9} {:>9} {:>11} {:>26}",
        "model", "base rate", "abstain", "intercept", "pooled BER, 18 ref. cond."
    );
    for (id, base, abstain, intercept, t) in &done.models {
        let ber = if t.valid > 0 {
            t.bias as f64 / t.valid as f64
        } else {
            f64::NAN
        };
        let abst = t.abstain as f64 / (t.valid + t.abstain).max(1) as f64;
        println!(
            "{id:<22} {:>8.1}% {:>8.1}% {intercept:>11.6} {:>13.2}% (abst {:.2}%)",
            100.0 * base,
            100.0 * abstain,
            100.0 * ber,
            100.0 * abst
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(seed: u64) -> SynthConfig {
        SynthConfig {
            seed,
            models: 3,
            statements_per_category: 2,
            templates_per_condition: 3,
            repeats: 2,
            layout: Layout::Nested,
            explain_judge_cells: ExplainJudgeCells::ParserFailure,
        }
    }

    #[test]
    fn box_muller_draws_are_standard_normal() {
        // 100,000 draws: the mean's standard error is 1/sqrt(1e5) = 0.0032, the variance's
        // sqrt(2/1e5) = 0.0045; both are checked within 5 standard errors.
        let mut s = DrawStream::new(7);
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| normal(&mut s)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let mean_tolerance = atlas_core::tolerance::monte_carlo_mean(5.0, 1.0, n);
        let var_tolerance = atlas_core::tolerance::monte_carlo_mean(5.0, 2f64.sqrt(), n);
        assert!(mean.abs() < mean_tolerance, "mean {mean}");
        assert!((var - 1.0).abs() < var_tolerance, "variance {var}");
        assert!(xs.iter().all(|x| x.is_finite()));
    }

    #[test]
    fn intercepts_hit_the_base_rates_in_expectation() {
        let config = SynthConfig {
            models: 10,
            ..small(3)
        };
        let effects = draw_effects(&config);
        for m in 0..config.models {
            let expected = expected_reference(&effects, m, effects.intercept[m]);
            // The intercept is rounded to 1e-6; the score moves by at most 0.25 per logit unit.
            assert!(
                (expected - base_rate(m)).abs() < 1e-6,
                "model {m}: {expected} vs {}",
                base_rate(m)
            );
        }
        assert_eq!(base_rate(8), 0.074);
    }

    #[test]
    fn the_effects_of_one_component_do_not_depend_on_the_size_of_another() {
        let a = draw_effects(&small(11));
        let b = draw_effects(&SynthConfig {
            statements_per_category: 5,
            ..small(11)
        });
        assert_eq!(a.condition, b.condition);
        assert_eq!(a.template, b.template);
        assert_eq!(a.category, b.category);
        assert_eq!(a.interaction, b.interaction);
        assert_eq!(a.statement[..2], b.statement[..2]);
    }

    #[test]
    fn small_bundles_validate_and_count_up() {
        for layout in [Layout::Nested, Layout::Crossed] {
            for cells in [ExplainJudgeCells::ParserFailure, ExplainJudgeCells::Absent] {
                let config = SynthConfig {
                    layout,
                    explain_judge_cells: cells,
                    ..small(5)
                };
                let done = generate(&config).expect("generates");
                // 3 models × 2 repeats × 20 statements × (1 + 20 × 3 or 1 + 18 × 3) templates.
                let templates = if cells == ExplainJudgeCells::Absent {
                    55
                } else {
                    61
                };
                assert_eq!(done.responses, 3 * 2 * 20 * templates);
            }
        }
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(generate(&SynthConfig {
            models: 0,
            ..small(1)
        })
        .is_err());
        assert!(generate(&SynthConfig {
            repeats: 10,
            ..small(1)
        })
        .is_ok());
        let err = generate(&SynthConfig {
            models: 8,
            statements_per_category: 20,
            templates_per_condition: 20,
            repeats: 4,
            ..small(1)
        })
        .err()
        .expect("53,894,400 cells exceed the limit");
        assert!(err.to_string().contains("limit"), "{err}");
    }
}
