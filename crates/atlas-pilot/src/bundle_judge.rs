//! Judge coding of an already loaded bundle's Rationales: new judge columns for a bundle that is
//! already open.
//!
//! One to three judges — the pilot's [`JudgeConfig`]: column id, provider and model, rubric, parameters,
//! prices — label the Rationale texts a bundle stores E, QE, N, D or R (seed `000_…` §3.3, B.3), and
//! their labels become **new judge columns of the same bundle**. The browser (pilot panel, "Judge a
//! loaded bundle's Rationales") and `atlas pilot judge` both go through this module, so they pick the
//! same cells, send the same prompts and write the same columns.
//!
//! # Steps
//! 1. [`plan_bundle_judging`]`(audit, design, text_of)` checks the design against the bundle, picks the
//!    cells (the scope, below), plans one call per judge and cell, estimates tokens and cost and applies
//!    the hard cap; or answers [`Planned::NeedShards`] when texts of unloaded shards are needed first.
//! 2. The calls run like a pilot's, through the [`Job`] trait and a [`RunState`]
//!    ([`BundleJudgePlan::new_state`]): concurrency, per-call timeout, retries with backoff honouring
//!    `Retry-After`, pause / resume / cancel, persistence after every settled call — the runners are the
//!    pilot's.
//! 3. [`merge_judge_columns`]`(file, plan, state, note)` appends one column per judge to the bundle
//!    that was judged (checked by its id, cell count and a fingerprint of its Selection column), adds a
//!    paragraph to `metadata.produced_by.notes` and validates the result.
//!
//! # Which cells (the scope)
//! A **candidate** is a cell with a response (its Selection code is not `-`), of a model the design
//! keeps (`models`: level ids of the `model` facet; empty = every model), whose Rationale text the
//! bundle stores (inline or in a text shard) and is not empty after trimming whitespace.
//! * [`JudgeScope::All`]: every candidate;
//! * [`JudgeScope::First`] `{ n }`: the first `n` candidates in cell order (the row-major cell index of
//!   the bundle format);
//! * [`JudgeScope::Sample`] `{ n, seed }`: `n` candidates drawn uniformly without replacement —
//!   `DrawStream::with_stream(seed, SAMPLE_STREAM).sample_without_replacement(candidates, n)` (ChaCha8,
//!   the same on x86_64 and wasm32) — kept in cell order; every candidate when `n` ≥ their number.
//!
//! Texts in shards that are not loaded yet: `first` asks for the first unloaded shard it meets before it
//! has `n` cells; `all` and `sample` ask for every unloaded shard whose cell range holds a cell with a
//! response of a kept model. The caller loads them ([`lookup_text`] reads loaded shards) and calls again.
//!
//! # Calls
//! For each judge in order, each chosen cell in cell order: one call with id `cell{index}:{judge id}` —
//! judge by judge, so consecutive prompts share the rubric's prefix (a local llama.cpp server's prompt
//! cache then evaluates only the new part). The prompt is [`build_judge_prompt`] with the cell's
//! statement (the `statement` level's `text`) and its stored Rationale text. A judge whose model is the
//! model that produced the response is a **self-judge** for that call ([`is_self_judge`] against the
//! model level's id or its `label` attribute — the rule RQ3's automatic self-judge matching applies).
//!
//! # Estimate and hard cap
//! Every prompt is known before the run: input tokens of a call = ⌈(characters of system + user
//! prompt) / 4⌉ ([`crate::plan::estimate_tokens`]), output tokens ≤ the judge's `max_tokens`; cost =
//! Σ tokens × the judge's prices per 1M tokens (an upper bound; unpriced calls counted apart). The
//! [`Estimate`] has `calls` = 0 (nothing is audited) and `judge_calls` = `total_calls` = the calls.
//! `limits.max_calls` caps the number of calls and `limits.max_cost` the cost, as for a pilot
//! ([`PlanError::OverCallCap`], [`PlanError::OverCostCap`]).
//!
//! # The new columns
//! Per judge, a column with `id` = the judge's id, `model` = its model name, `rubric` = its system prompt
//! and user template; labels as [`judge_column`] makes them: the label [`crate::judge::read_judge_label`] reads from an
//! answered call, `.` for a cell with a response but no label (not chosen, not run, failed, or an answer
//! without a readable label), `-` where the bundle has no response. The bundle's own judge columns, its
//! human columns, texts and everything else are kept as they are; a new id that is already a judge column
//! is refused ([`BundleJudgeError::IdClash`]). Self-judges are marked as in a pilot bundle: the column's
//! `model` is the judge's model name, so RQ3's automatic matching (the no-self-judge rule) finds the same
//! pairs, and the notes name each pair with its number of cells.

use std::collections::{BTreeMap, BTreeSet};

use atlas_core::bundle::{BundleFile, RationaleLabel, TextShard, NO_RESPONSE_CODE};
use atlas_core::rq3::MajorityCounts;
use atlas_core::{Audit, BundleError, DrawStream, ResampleError};
use serde::{Deserialize, Serialize};

use crate::judge::{
    build_judge_prompt, is_self_judge, judge_column, majority_counts, read_judge_label,
    JudgeConfig, MAX_JUDGES,
};
use crate::plan::{
    check_ids, check_params, check_prices, cost, estimate_tokens, Estimate, Limits, PlanError,
};
use crate::provider::{build_request, HttpRequest, SecretKey};
use crate::run::{
    CallStatus, HttpResponse, Job, KeyOwner, RunError, RunState, Settled, Settling, TOOL,
};

/// Stream id of the seeded sample of cells ([`JudgeScope::Sample`]).
pub const SAMPLE_STREAM: u64 = 9;

/// Which candidate cells are judged (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(tag = "scope", rename_all = "snake_case", deny_unknown_fields)]
pub enum JudgeScope {
    /// Every candidate.
    #[default]
    All,
    /// The first `n` candidates in cell order.
    First {
        /// How many, at least 1.
        n: u32,
    },
    /// `n` candidates drawn uniformly without replacement from `DrawStream::with_stream(seed,
    /// SAMPLE_STREAM)`, kept in cell order.
    Sample {
        /// How many, at least 1.
        n: u32,
        /// Seed of the draw.
        seed: u64,
    },
}

/// What the user chose. Holds no key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleJudgeDesign {
    /// One to three judges; each id becomes a new judge column id.
    pub judges: Vec<JudgeConfig>,
    /// Which cells (default: all candidates).
    #[serde(default)]
    pub scope: JudgeScope,
    /// Model level ids whose responses are judged; empty = every model.
    #[serde(default)]
    pub models: Vec<String>,
    /// Seed of the retry jitter (as a pilot's `seed`).
    #[serde(default)]
    pub seed: u64,
    /// The hard cap on calls and cost (default 1,000 calls, no cost cap).
    #[serde(default)]
    pub limits: Limits,
}

/// Which bundle was judged: its `metadata.id`, its cell count and a fingerprint of its Selection column
/// and judge column ids (FNV-1a-64, hex), so the labels are merged into that bundle only.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleRef {
    /// `metadata.id`.
    pub id: String,
    /// Cells of the response matrix.
    pub cells: u64,
    /// FNV-1a-64 (hex) of the decoded Selection column and the judge column ids.
    pub fingerprint: String,
}

impl BundleRef {
    /// The reference of a loaded bundle.
    pub fn of(audit: &Audit) -> Self {
        let ids: Vec<&[u8]> = audit
            .file
            .responses
            .judges
            .iter()
            .map(|j| j.id.as_bytes())
            .collect();
        let mut parts: Vec<&[u8]> = vec![audit.selection.as_slice()];
        parts.extend(ids);
        BundleRef {
            id: audit.metadata().id.clone(),
            cells: audit.cells as u64,
            fingerprint: format!("{:016x}", crate::fnv1a(&parts)),
        }
    }
}

/// One chosen cell: what its judges read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JudgedCell {
    /// Cell index (row-major) in the bundle.
    pub cell: u64,
    /// The model level id of the response.
    pub model: String,
    /// The statement's text (`{statement}` of the rubric).
    pub statement: String,
    /// The stored Rationale text (`{rationale}` of the rubric).
    pub text: String,
}

/// One planned judge call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleJudgeCall {
    /// `cell{index}:{judge id}`.
    pub id: String,
    /// Index into [`BundleJudgePlan::items`].
    pub item: u32,
    /// Index into the design's judges.
    pub judge: u32,
    /// Whether the judge model is the model that produced the response.
    pub self_judge: bool,
}

/// A checked judge coding of one bundle, with its calls (module docs). Holds no key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BundleJudgePlan {
    /// The design it was built from.
    pub design: BundleJudgeDesign,
    /// The bundle it belongs to.
    pub bundle: BundleRef,
    /// Candidates counted: every one for `all` and `sample`; for `first`, those up to the n-th (the
    /// walk over the cells stops there).
    pub candidates: u64,
    /// The chosen cells, in cell order.
    pub items: Vec<JudgedCell>,
    /// Every call: judge by judge, cells in cell order.
    pub calls: Vec<BundleJudgeCall>,
    /// Tokens and cost.
    pub estimate: Estimate,
    /// FNV-1a-64 (hex) of the bundle reference, the judges, the chosen cells with their texts and the
    /// call ids: a run state belongs to the plan with the same fingerprint.
    pub fingerprint: String,
}

/// A bundle's Rationale text of one cell, as far as the loaded shards tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextLookup<'a> {
    /// The stored text.
    Text(&'a str),
    /// The cell lies in the range of this shard (index into `texts.rationale.shards`), not loaded yet.
    NotLoaded(usize),
    /// The bundle stores no text for the cell.
    Absent,
}

/// The Rationale text of `cell`: inline in the bundle, or in one of `shards` (loaded shards by their
/// index into `texts.rationale.shards`).
pub fn lookup_text<'a>(
    audit: &'a Audit,
    shards: &'a BTreeMap<usize, TextShard>,
    cell: usize,
) -> TextLookup<'a> {
    if let Some(t) = audit.inline_rationale(cell) {
        return TextLookup::Text(t);
    }
    match audit.rationale_shard_for(cell) {
        None => TextLookup::Absent,
        Some(k) => match shards.get(&k) {
            None => TextLookup::NotLoaded(k),
            Some(shard) => shard
                .text(cell)
                .map_or(TextLookup::Absent, TextLookup::Text),
        },
    }
}

/// What [`plan_bundle_judging`] needs or gives.
#[derive(Debug, Clone, PartialEq)]
pub enum Planned {
    /// The plan.
    Ready(Box<BundleJudgePlan>),
    /// Load these shards (indices into `texts.rationale.shards`, ascending) and plan again.
    NeedShards(Vec<usize>),
}

/// What can go wrong in judge coding of a bundle.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BundleJudgeError {
    #[error("judge coding of a bundle needs 1 to {MAX_JUDGES} judges; got {0}")]
    /// No judge, or more than [`MAX_JUDGES`].
    PanelSize(usize),
    #[error("judge {judge:?}: the id is already a judge column of bundle {bundle:?} (its judge columns: {existing}); existing columns are kept, so give the new judge another id")]
    /// A new judge's id is an existing judge column id.
    IdClash {
        /// The new judge's id.
        judge: String,
        /// `metadata.id` of the bundle.
        bundle: String,
        /// The bundle's judge column ids, comma-separated.
        existing: String,
    },
    #[error("model {model:?} is not a level of the model facet of bundle {bundle:?} (its models: {known})")]
    /// The model filter names a model the bundle lacks.
    UnknownModel {
        /// The model id of the filter.
        model: String,
        /// `metadata.id` of the bundle.
        bundle: String,
        /// The bundle's model ids, comma-separated.
        known: String,
    },
    #[error("the scope asks for 0 cells; give a number of at least 1")]
    /// `First { n: 0 }` or `Sample { n: 0, .. }`.
    EmptyScope,
    #[error("bundle {bundle:?} stores no Rationale texts (`texts.rationale`), so there is nothing for a judge to read")]
    /// The bundle has no Rationale text field.
    NoTexts {
        /// `metadata.id` of the bundle.
        bundle: String,
    },
    #[error("bundle {bundle:?} has no cell with a response and a stored Rationale text{among}")]
    /// No candidate cell.
    NothingToJudge {
        /// `metadata.id` of the bundle.
        bundle: String,
        /// ` among the models …` when a model filter is set, else empty.
        among: String,
    },
    #[error("the sample of cells cannot be drawn: {0}")]
    /// The draw failed (more candidates than a `u32` counts).
    Sample(ResampleError),
    #[error("the judge coding belongs to bundle {expected:?} ({expected_cells} cells, fingerprint {expected_fingerprint}), not to the bundle given, {found:?} ({found_cells} cells, fingerprint {found_fingerprint}): open the bundle that was judged")]
    /// The bundle given to [`merge_judge_columns`] is not the judged one.
    BundleMismatch {
        /// `metadata.id` of the judged bundle ([`BundleRef::id`]).
        expected: String,
        /// Cells of the judged bundle.
        expected_cells: u64,
        /// [`BundleRef::fingerprint`] of the judged bundle.
        expected_fingerprint: String,
        /// `metadata.id` of the bundle given.
        found: String,
        /// Cells of the bundle given.
        found_cells: u64,
        /// Fingerprint of the bundle given.
        found_fingerprint: String,
    },
    #[error(transparent)]
    /// A judge's configuration, or the hard cap.
    Design(#[from] PlanError),
    #[error(transparent)]
    /// The run state does not fit the plan.
    Run(#[from] RunError),
    #[error("the bundle with the new judge columns is invalid: {0}")]
    /// The merged bundle does not validate.
    Bundle(#[from] BundleError),
}

impl BundleJudgeDesign {
    /// Checks the design against `audit` (module docs); returns the model level indices kept.
    ///
    /// # Errors
    /// [`BundleJudgeError::PanelSize`], [`BundleJudgeError::Design`] (empty or duplicate judge ids, a
    /// misconfigured provider, a rubric without `{rationale}`, bad parameters or prices),
    /// [`BundleJudgeError::IdClash`], [`BundleJudgeError::UnknownModel`], [`BundleJudgeError::EmptyScope`],
    /// [`BundleJudgeError::NoTexts`].
    pub fn validate(&self, audit: &Audit) -> Result<Vec<bool>, BundleJudgeError> {
        let bundle = audit.metadata().id.clone();
        if self.judges.is_empty() || self.judges.len() > MAX_JUDGES {
            return Err(BundleJudgeError::PanelSize(self.judges.len()));
        }
        check_ids("judges", self.judges.iter().map(|j| j.id.as_str()))?;
        for j in &self.judges {
            j.validate().map_err(|source| PlanError::Judge {
                judge: j.id.clone(),
                source,
            })?;
            j.provider
                .endpoint()
                .map_err(|source| PlanError::Provider {
                    model: format!("judge {}", j.id),
                    source,
                })?;
            check_params(&format!("judge {}", j.id), &j.provider, &j.params)?;
            check_prices(&format!("judge {:?}", j.id), j.prices.as_ref())?;
        }
        check_no_clash(&self.judges, &audit.file, &bundle)?;
        let model_ids = audit.model_ids();
        let mut keep = vec![self.models.is_empty(); model_ids.len()];
        for m in &self.models {
            let k = model_ids.iter().position(|id| id == m).ok_or_else(|| {
                BundleJudgeError::UnknownModel {
                    model: m.clone(),
                    bundle: bundle.clone(),
                    known: model_ids.join(", "),
                }
            })?;
            keep[k] = true;
        }
        if matches!(
            self.scope,
            JudgeScope::First { n: 0 } | JudgeScope::Sample { n: 0, .. }
        ) {
            return Err(BundleJudgeError::EmptyScope);
        }
        let has_texts = audit
            .file
            .texts
            .as_ref()
            .and_then(|t| t.rationale.as_ref())
            .is_some_and(|r| r.inline.is_some() || !r.shards.is_empty());
        if !has_texts {
            return Err(BundleJudgeError::NoTexts { bundle });
        }
        Ok(keep)
    }
}

fn check_no_clash(
    judges: &[JudgeConfig],
    file: &BundleFile,
    bundle: &str,
) -> Result<(), BundleJudgeError> {
    let existing: Vec<&str> = file
        .responses
        .judges
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    for j in judges {
        if existing.contains(&j.id.as_str()) {
            return Err(BundleJudgeError::IdClash {
                judge: j.id.clone(),
                bundle: bundle.to_string(),
                existing: existing.join(", "),
            });
        }
    }
    Ok(())
}

/// The model level index of `cell`.
fn model_of(audit: &Audit, cell: usize) -> usize {
    audit
        .axes
        .iter()
        .find(|a| a.facet == audit.model_facet)
        .map_or(0, |a| (cell / a.stride) % a.len)
}

/// The statement level index of `cell`.
fn statement_of(audit: &Audit, cell: usize) -> usize {
    audit
        .axes
        .iter()
        .find(|a| a.facet == audit.statement_facet)
        .map_or(0, |a| (cell / a.stride) % a.len)
}

/// Checks the design, picks the cells, plans the calls, estimates them and applies the cap (module
/// docs). `text_of(cell)` tells the Rationale text of a cell ([`lookup_text`] over the loaded shards).
///
/// # Errors
/// As [`BundleJudgeDesign::validate`]; [`BundleJudgeError::NothingToJudge`] when no cell qualifies;
/// [`PlanError::OverCallCap`] / [`PlanError::OverCostCap`] (as [`BundleJudgeError::Design`]) above the
/// cap; [`BundleJudgeError::Sample`].
pub fn plan_bundle_judging<'t>(
    audit: &Audit,
    design: BundleJudgeDesign,
    text_of: impl Fn(usize) -> TextLookup<'t>,
) -> Result<Planned, BundleJudgeError> {
    let keep = design.validate(audit)?;
    let wanted = match design.scope {
        JudgeScope::First { n } => Some(n as usize),
        JudgeScope::All | JudgeScope::Sample { .. } => None,
    };
    // Candidates, in cell order.
    let mut candidates: Vec<(usize, &'t str)> = Vec::new();
    let mut missing: BTreeSet<usize> = BTreeSet::new();
    for cell in 0..audit.cells {
        if audit
            .selection
            .get(cell)
            .is_none_or(|&c| c == NO_RESPONSE_CODE)
        {
            continue;
        }
        if !keep.get(model_of(audit, cell)).copied().unwrap_or(false) {
            continue;
        }
        match text_of(cell) {
            TextLookup::Text(t) if !t.trim().is_empty() => {
                candidates.push((cell, t));
                if wanted.is_some_and(|n| candidates.len() >= n) {
                    break;
                }
            }
            TextLookup::Text(_) | TextLookup::Absent => {}
            TextLookup::NotLoaded(k) => {
                if wanted.is_some() {
                    return Ok(Planned::NeedShards(vec![k]));
                }
                missing.insert(k);
            }
        }
    }
    if !missing.is_empty() {
        return Ok(Planned::NeedShards(missing.into_iter().collect()));
    }
    let bundle = BundleRef::of(audit);
    if candidates.is_empty() {
        return Err(BundleJudgeError::NothingToJudge {
            bundle: bundle.id,
            among: if design.models.is_empty() {
                String::new()
            } else {
                format!(" among the models {}", design.models.join(", "))
            },
        });
    }
    let n_candidates = candidates.len();
    let chosen: Vec<(usize, &str)> = match design.scope {
        JudgeScope::Sample { n, seed } if (n as usize) < candidates.len() => {
            let total = u32::try_from(candidates.len()).map_err(|_| {
                BundleJudgeError::Sample(ResampleError::TooManyItems {
                    len: candidates.len(),
                })
            })?;
            let mut stream = DrawStream::with_stream(seed, SAMPLE_STREAM);
            let mut picks = stream
                .sample_without_replacement(total, n)
                .map_err(BundleJudgeError::Sample)?;
            picks.sort_unstable();
            picks
                .into_iter()
                .filter_map(|p| candidates.get(p as usize).copied())
                .collect()
        }
        _ => candidates,
    };

    let models = audit.levels(audit.model_facet);
    let items: Vec<JudgedCell> = chosen
        .iter()
        .map(|&(cell, text)| JudgedCell {
            cell: cell as u64,
            model: models
                .get(model_of(audit, cell))
                .map_or_else(String::new, |l| l.id.clone()),
            statement: audit
                .statements
                .get(statement_of(audit, cell))
                .map_or_else(String::new, |s| s.text.clone()),
            text: text.to_string(),
        })
        .collect();
    // Self-judge pairs by model level (id or label), as RQ3's automatic matching.
    let self_by_level: Vec<Vec<bool>> = design
        .judges
        .iter()
        .map(|j| {
            models
                .iter()
                .map(|level| {
                    let label = level.attributes.get("label").and_then(|v| v.as_str());
                    is_self_judge(j.provider.model(), &level.id)
                        || label.is_some_and(|l| is_self_judge(j.provider.model(), l))
                })
                .collect()
        })
        .collect();
    let total = (items.len() as u64) * design.judges.len() as u64;
    if total > design.limits.max_calls {
        return Err(PlanError::OverCallCap {
            calls: total,
            audited: 0,
            judge: total,
            cap: design.limits.max_calls,
        }
        .into());
    }
    let mut calls = Vec::with_capacity(total as usize);
    for (j, judge) in design.judges.iter().enumerate() {
        for (i, (item, &(cell, _))) in items.iter().zip(&chosen).enumerate() {
            calls.push(BundleJudgeCall {
                id: call_id(item.cell, &judge.id),
                item: i as u32,
                judge: j as u32,
                self_judge: self_by_level
                    .get(j)
                    .and_then(|row| row.get(model_of(audit, cell)))
                    .copied()
                    .unwrap_or(false),
            });
        }
    }
    let estimate = estimate(&design, &items, &calls);
    design.limits.check(&estimate)?;
    let fingerprint = fingerprint(&bundle, &design, &items, &calls);
    Ok(Planned::Ready(Box::new(BundleJudgePlan {
        design,
        bundle,
        candidates: n_candidates as u64,
        items,
        calls,
        estimate,
        fingerprint,
    })))
}

/// `cell{cell}:{judge}`.
fn call_id(cell: u64, judge: &str) -> String {
    format!("cell{cell}:{judge}")
}

fn estimate(
    design: &BundleJudgeDesign,
    items: &[JudgedCell],
    calls: &[BundleJudgeCall],
) -> Estimate {
    let mut e = Estimate {
        judge_calls: calls.len() as u64,
        total_calls: calls.len() as u64,
        ..Estimate::default()
    };
    for call in calls {
        let (Some(judge), Some(item)) = (
            design.judges.get(call.judge as usize),
            items.get(call.item as usize),
        ) else {
            continue;
        };
        let input = build_judge_prompt(&judge.rubric, &item.statement, &item.text).map_or(0, |p| {
            estimate_tokens(p.system.chars().count() + p.user.chars().count())
        });
        let output = u64::from(judge.params.max_tokens);
        e.judge_input_tokens += input;
        e.judge_output_tokens_max += output;
        match cost(judge.prices.as_ref(), input, output) {
            Some(c) => e.cost_max += c,
            None => e.unpriced_calls += 1,
        }
    }
    e
}

fn fingerprint(
    bundle: &BundleRef,
    design: &BundleJudgeDesign,
    items: &[JudgedCell],
    calls: &[BundleJudgeCall],
) -> String {
    let mut parts: Vec<Vec<u8>> = vec![
        bundle.id.as_bytes().to_vec(),
        bundle.fingerprint.as_bytes().to_vec(),
    ];
    for j in &design.judges {
        parts.push(j.id.as_bytes().to_vec());
        parts.push(serde_json::to_vec(&j.provider).unwrap_or_default());
        parts.push(j.rubric.system.as_bytes().to_vec());
        parts.push(j.rubric.user_template.as_bytes().to_vec());
        parts.push(j.params.temperature.to_bits().to_le_bytes().to_vec());
        parts.push(j.params.max_tokens.to_le_bytes().to_vec());
    }
    for item in items {
        parts.push(item.cell.to_le_bytes().to_vec());
        parts.push(item.statement.as_bytes().to_vec());
        parts.push(item.text.as_bytes().to_vec());
    }
    for c in calls {
        parts.push(c.id.as_bytes().to_vec());
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    format!("{:016x}", crate::fnv1a(&refs))
}

impl BundleJudgePlan {
    /// Which cells, in words: `all 23 cells with a response and a Rationale text`, `the first 6 cells
    /// with a response and a Rationale text`, `a sample of 6 of the 23 cells with a response and a
    /// Rationale text (seed 1, stream 9)`, followed by ` of the models a, b` under a model filter.
    pub fn describe_cells(&self) -> String {
        let n = self.items.len();
        let what = "with a response and a Rationale text";
        let cells = match self.design.scope {
            JudgeScope::All => format!("all {n} cells {what}"),
            JudgeScope::First { .. } => format!("the first {n} cells {what}"),
            JudgeScope::Sample { seed, .. } => format!(
                "a sample of {n} of the {} cells {what} (seed {seed}, stream {SAMPLE_STREAM})",
                self.candidates
            ),
        };
        if self.design.models.is_empty() {
            cells
        } else {
            format!("{cells} of the models {}", self.design.models.join(", "))
        }
    }

    /// A fresh run state: every call pending, in plan order.
    pub fn new_state(&self) -> RunState {
        RunState::for_calls(&self.fingerprint, self.calls.iter().map(|c| c.id.clone()))
    }

    /// The call with `id` (ids are `cell{index}:{judge id}`; found by position, not by scanning).
    pub fn call(&self, id: &str) -> Option<&BundleJudgeCall> {
        let (cell, judge) = id.strip_prefix("cell")?.split_once(':')?;
        let cell: u64 = cell.parse().ok()?;
        let j = self.design.judges.iter().position(|x| x.id == judge)?;
        let i = self.items.binary_search_by_key(&cell, |x| x.cell).ok()?;
        self.calls
            .get(j * self.items.len() + i)
            .filter(|c| c.id == id)
    }

    /// The judge of a call.
    pub fn judge_of(&self, call: &BundleJudgeCall) -> Option<&JudgeConfig> {
        self.design.judges.get(call.judge as usize)
    }

    /// The cell a call judges.
    pub fn item_of(&self, call: &BundleJudgeCall) -> Option<&JudgedCell> {
        self.items.get(call.item as usize)
    }

    /// Calls by judge (index into the design's judges) that are self-judge calls.
    pub fn self_judge_calls(&self, judge: usize) -> usize {
        self.calls
            .iter()
            .filter(|c| c.judge as usize == judge && c.self_judge)
            .count()
    }
}

impl Job for BundleJudgePlan {
    /// The judge of the call (its id, the new column's).
    fn provider_of<'s>(
        &'s self,
        _state: &'s RunState,
        id: &str,
    ) -> Option<(&'s str, &'s crate::provider::Provider)> {
        let judge = self.judge_of(self.call(id)?)?;
        Some((judge.id.as_str(), &judge.provider))
    }

    fn request(
        &self,
        _state: &RunState,
        id: &str,
        key: &SecretKey,
    ) -> Result<HttpRequest, RunError> {
        let call = self
            .call(id)
            .ok_or_else(|| RunError::UnknownCall(id.to_string()))?;
        let (Some(judge), Some(item)) = (self.judge_of(call), self.item_of(call)) else {
            return Err(RunError::UnknownCall(id.to_string()));
        };
        let prompt = build_judge_prompt(&judge.rubric, &item.statement, &item.text)?;
        Ok(build_request(&judge.provider, &prompt, &judge.params, key)?)
    }

    fn record_response(
        &self,
        state: &mut RunState,
        id: &str,
        response: &HttpResponse<'_>,
        at: &Settling<'_>,
    ) -> Result<Settled, RunError> {
        let judge = self
            .call(id)
            .and_then(|c| self.judge_of(c))
            .ok_or_else(|| RunError::UnknownCall(id.to_string()))?;
        state.settle(id, &judge.provider, self.design.seed, response, at)
    }

    fn seed(&self) -> u64 {
        self.design.seed
    }

    fn key_owner<'s>(&'s self, _state: &'s RunState, id: &str) -> Option<KeyOwner<'s>> {
        let call = self.call(id)?;
        let judge = self.judge_of(call)?;
        Some(KeyOwner::Judge {
            index: call.judge as usize,
            id: judge.id.as_str(),
        })
    }

    fn check_state(&self, state: &RunState) -> Result<(), RunError> {
        if !state.judge_calls.is_empty() {
            return Err(RunError::PlanMismatch {
                expected: self.fingerprint.clone(),
                found: state.plan_fingerprint.clone(),
            });
        }
        state.check_calls(&self.fingerprint, self.calls.iter().map(|c| c.id.as_str()))
    }
}

/// Counts of one judge's calls, for the notes and the summaries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct JudgeCounts {
    /// The judge's id.
    pub judge: String,
    /// Its calls.
    pub calls: usize,
    /// Answered with a readable label, by code (`E`, `Q`, `N`, `D`, `R`).
    pub labels: BTreeMap<char, usize>,
    /// Answered without a readable label.
    pub unreadable: usize,
    /// Labels read only after normalising the answer (math / LaTeX markup, invisible characters:
    /// [`crate::judge::read_judge_label`]); included in `labels`.
    pub normalised: usize,
    /// Finally failed.
    pub failed: usize,
    /// Not run (pending or in flight).
    pub not_run: usize,
    /// Calls where the judge is the model that produced the response.
    pub self_judge: usize,
}

/// One judge's labels by cell (`None` = no label).
type CellLabels = Vec<(usize, Option<RationaleLabel>)>;

/// Per judge: its labels by cell and its counts.
fn labels_of(plan: &BundleJudgePlan, state: &RunState) -> Vec<(CellLabels, JudgeCounts)> {
    let mut out: Vec<(CellLabels, JudgeCounts)> = plan
        .design
        .judges
        .iter()
        .map(|j| {
            (
                Vec::new(),
                JudgeCounts {
                    judge: j.id.clone(),
                    ..JudgeCounts::default()
                },
            )
        })
        .collect();
    for (record, call) in state.calls.iter().zip(&plan.calls) {
        let (Some((labels, counts)), Some(item)) =
            (out.get_mut(call.judge as usize), plan.item_of(call))
        else {
            continue;
        };
        counts.calls += 1;
        if call.self_judge {
            counts.self_judge += 1;
        }
        let label = match &record.status {
            CallStatus::Answered { completion, .. } => {
                let reading = read_judge_label(&completion.text);
                match reading.label {
                    Some(l) => {
                        *counts
                            .labels
                            .entry(crate::judge::label_code(Some(l)))
                            .or_default() += 1;
                        if !reading.normalised.is_empty() {
                            counts.normalised += 1;
                        }
                    }
                    None => counts.unreadable += 1,
                }
                reading.label
            }
            CallStatus::Failed { .. } => {
                counts.failed += 1;
                None
            }
            CallStatus::Pending { .. } | CallStatus::InFlight { .. } => {
                counts.not_run += 1;
                None
            }
        };
        labels.push((item.cell as usize, label));
    }
    out
}

/// Each judge's counts so far (for progress and `atlas pilot judge`'s summary).
pub fn judge_counts(plan: &BundleJudgePlan, state: &RunState) -> Vec<JudgeCounts> {
    labels_of(plan, state).into_iter().map(|(_, c)| c).collect()
}

/// The binary majority of the design's judges (the new columns only; seed B.3, [`majority_counts`])
/// over the chosen cells, so far: bias evidence, no bias evidence, ties and too few readable votes (a
/// judge whose call is not run, failed or unreadable has no vote). The notes of the merged bundle,
/// `atlas pilot judge` and the app's judging results show it.
pub fn judge_majority(plan: &BundleJudgePlan, state: &RunState) -> MajorityCounts {
    majority_of(plan, &labels_of(plan, state))
}

fn majority_of(plan: &BundleJudgePlan, per_judge: &[(CellLabels, JudgeCounts)]) -> MajorityCounts {
    let n = per_judge.len();
    let mut by_cell: BTreeMap<usize, Vec<Option<RationaleLabel>>> = plan
        .items
        .iter()
        .map(|i| (i.cell as usize, vec![None; n]))
        .collect();
    for (j, (labels, _)) in per_judge.iter().enumerate() {
        for &(cell, label) in labels {
            if let Some(slot) = by_cell.get_mut(&cell).and_then(|v| v.get_mut(j)) {
                *slot = label;
            }
        }
    }
    majority_counts(by_cell.into_values())
}

/// `0–5, 9, 12–14`: sorted cell indices as ranges.
fn ranges(cells: &[u64]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cells.len() {
        let start = cells[i];
        let mut end = start;
        while i + 1 < cells.len() && cells[i + 1] == end + 1 {
            i += 1;
            end = cells[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}–{end}")
        });
        i += 1;
    }
    parts.join(", ")
}

/// The bundle that was judged, plus one new judge column per judge of `plan` (module docs), with a
/// paragraph added to `metadata.produced_by.notes`: `note` (e.g. who ran it) first, then the scope,
/// which judges coded which cells, each judge's label counts, the failed calls with their reasons, and
/// the self-judge pairs. Everything else of `file` is kept. The result is validated.
///
/// # Errors
/// [`BundleJudgeError::Run`] ([`RunError::PlanMismatch`]) for a state of another plan;
/// [`BundleJudgeError::BundleMismatch`] when `file` is not the judged bundle;
/// [`BundleJudgeError::IdClash`]; [`BundleJudgeError::Bundle`] when `file` or the result does not
/// validate.
pub fn merge_judge_columns(
    mut file: BundleFile,
    plan: &BundleJudgePlan,
    state: &RunState,
    note: Option<&str>,
) -> Result<BundleFile, BundleJudgeError> {
    plan.check_state(state)?;
    let audit = Audit::from_file(file.clone())?;
    let found = BundleRef::of(&audit);
    if found != plan.bundle {
        return Err(BundleJudgeError::BundleMismatch {
            expected: plan.bundle.id.clone(),
            expected_cells: plan.bundle.cells,
            expected_fingerprint: plan.bundle.fingerprint.clone(),
            found: found.id,
            found_cells: found.cells,
            found_fingerprint: found.fingerprint,
        });
    }
    check_no_clash(&plan.design.judges, &file, &found.id)?;
    let per_judge = labels_of(plan, state);
    let mut lines = Vec::new();
    let mut self_pairs = Vec::new();
    let mut failures = Vec::new();
    for (judge, (labels, counts)) in plan.design.judges.iter().zip(&per_judge) {
        file.responses.judges.push(judge_column(
            &judge.id,
            Some(judge.provider.model()),
            Some(&format!(
                "{}\n\n{}",
                judge.rubric.system, judge.rubric.user_template
            )),
            &file.responses.selection.codes,
            labels,
        ));
        let answered: usize = counts.labels.values().sum::<usize>() + counts.unreadable;
        let by_code: Vec<String> = counts
            .labels
            .iter()
            .map(|(code, n)| format!("{code} {n}"))
            .collect();
        lines.push(format!(
            "{} ({}, model {}): {} calls, {answered} answered ({}; no readable label {}; read after normalising markup or invisible characters {}), {} failed, {} not run",
            judge.id,
            judge.provider.kind().name(),
            judge.provider.model(),
            counts.calls,
            if by_code.is_empty() {
                "no label".to_string()
            } else {
                by_code.join(", ")
            },
            counts.unreadable,
            counts.normalised,
            counts.failed,
            counts.not_run,
        ));
        if counts.self_judge > 0 {
            let mut self_models = BTreeSet::new();
            for call in plan
                .calls
                .iter()
                .filter(|c| c.self_judge && plan.judge_of(c).is_some_and(|j| j.id == judge.id))
            {
                if let Some(item) = plan.item_of(call) {
                    self_models.insert(item.model.as_str());
                }
            }
            self_pairs.push(format!(
                "judge {} ({}) is the audited model {} on {} cell(s) (self-judge)",
                judge.id,
                judge.provider.model(),
                self_models.into_iter().collect::<Vec<_>>().join(", "),
                counts.self_judge
            ));
        }
    }
    for (record, call) in state.calls.iter().zip(&plan.calls) {
        if let CallStatus::Failed { reason, attempts } = &record.status {
            failures.push(format!(
                "{} after {attempts} attempt(s): {}",
                call.id, reason.message
            ));
        }
    }
    let cells: Vec<u64> = plan.items.iter().map(|i| i.cell).collect();
    let mut paragraph = Vec::new();
    if let Some(n) = note.map(str::trim).filter(|n| !n.is_empty()) {
        paragraph.push(n.to_string());
    }
    paragraph.push(format!(
        "Judge coding of this bundle's stored Rationale texts by {TOOL} (docs/pilot.md, judging a loaded bundle): {}, labelled E/QE/N/D/R by the rubric of each judge (seed 000 §3.3, B.3); every judge coded the same cells: {}.",
        plan.describe_cells(),
        ranges(&cells),
    ));
    paragraph.push(format!(
        "New judge columns (`.` = no label: not chosen, not run, failed or unreadable; `-` = no response): {}.",
        lines.join("; ")
    ));
    paragraph.push(format!(
        "Panel of the {} new judge(s), {} (B.3: a cell without a strict binary majority of the panel is Abstain).",
        plan.design.judges.len(),
        majority_of(plan, &per_judge).describe()
    ));
    paragraph.push(if self_pairs.is_empty() {
        "No new judge is a model of this bundle.".to_string()
    } else {
        format!(
            "{}; RQ3's no-self-judge rule leaves these judges out for those responses.",
            self_pairs.join("; ")
        )
    });
    if !failures.is_empty() {
        paragraph.push(format!("Failed judge calls: {}", failures.join(" | ")));
    }
    let notes = &mut file.metadata.produced_by.notes;
    let added = paragraph.join("\n");
    *notes = Some(match notes.take().filter(|n| !n.trim().is_empty()) {
        Some(old) => format!("{old}\n{added}"),
        None => added,
    });
    Audit::from_file(file.clone())?;
    Ok(file)
}
