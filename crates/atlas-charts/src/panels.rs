//! The evidence atlas panels (seed `000_…` Figure 4) as the app shows them: each builder turns the
//! statistics of the loaded bundle — an RQ1 run, the re-weighting, one judge column — into the
//! [`ChartSpec`] of one panel, keeping only the models (and, for the rank paths, the conditions) the
//! reader shows. Hiding a model or condition never changes a number: ranks stay among all models.
//!
//! `shown[i]` says whether entry `i` is shown; an entry past the end of `shown` is shown.

use atlas_core::across::AcrossReport;
use atlas_core::reweight::{ConditionWeights, ReweightBasis, Reweighted, WeightPreset};
use atlas_core::rq1::WordingRankStability;
use atlas_core::rq3::JudgeByModel;

use crate::atlas::{
    flags_of, PairFlips, RankPaths, RationaleComposition, ScoreRanges, SelectionVsRationale,
    WordingScores, RATIONALE_CLASSES,
};
use crate::spec::ChartSpec;

/// The most characters of a model id in the pair-flip matrix's column labels (the table keeps the
/// full ids).
pub const PAIR_FLIP_LABEL_CHARS: usize = 12;

/// The entries of `v` whose `shown` flag is set (an entry past the end of `shown` is kept).
pub fn keep<T: Clone>(v: &[T], shown: &[bool]) -> Vec<T> {
    v.iter()
        .enumerate()
        .filter(|(i, _)| shown.get(*i).copied().unwrap_or(true))
        .map(|(_, x)| x.clone())
        .collect()
}

/// `s` cut to at most `max` characters, ending in `…` when cut.
pub fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// Panel (a), score per wording per model ([`WordingScores::from_rq1`]), of the shown models.
pub fn wording_scores(
    models: &[String],
    r: &WordingRankStability,
    caption: String,
    shown: &[bool],
) -> ChartSpec {
    let mut d = WordingScores::from_rq1(models, r, caption);
    d.models = keep(&d.models, shown);
    d.scores = d.scores.iter().map(|s| keep(s, shown)).collect();
    d.pooled = keep(&d.pooled, shown);
    d.flags = d.flags.iter().map(|s| keep(s, shown)).collect();
    d.pooled_flags = keep(&d.pooled_flags, shown);
    ChartSpec::WordingScores(d)
}

/// Panel (b), each model's score range across wordings ([`ScoreRanges::from_rq1`]), of the shown
/// models.
pub fn score_ranges(
    models: &[String],
    r: &WordingRankStability,
    caption: String,
    shown: &[bool],
) -> ChartSpec {
    let mut d = ScoreRanges::from_rq1(models, r, caption);
    d.models = keep(&d.models, shown);
    d.min = keep(&d.min, shown);
    d.max = keep(&d.max, shown);
    d.pooled = keep(&d.pooled, shown);
    d.flags = keep(&d.flags, shown);
    d.pooled_flags = keep(&d.pooled_flags, shown);
    ChartSpec::ScoreRanges(d)
}

/// Panel (c), rank paths: each model's rank under each condition alone and under Eq. 4
/// ([`RankPaths::across_conditions`]), then — unless `weights` are the equal weights — under the
/// chosen weights (step `your weights`, ranks and high-Abstain flags of `result`). The steps of hidden
/// conditions leave (Eq. 4 and the chosen weights stay), and so do hidden models.
pub fn rank_paths(
    basis: &ReweightBasis,
    weights: &ConditionWeights,
    result: &Reweighted,
    shown_models: &[bool],
    shown_conditions: &[bool],
    caption: String,
) -> ChartSpec {
    let mut d = RankPaths::across_conditions(basis, caption);
    if !matches!(weights.preset(), WeightPreset::Equal) {
        d.steps.push("your weights".into());
        d.ranks.push(result.ranks.clone());
        d.flags
            .push(flags_of(&result.abstain, basis.abstain_threshold()));
    }
    let hidden: Vec<&str> = basis
        .conditions()
        .iter()
        .zip(shown_conditions)
        .filter(|(_, s)| !**s)
        .map(|(c, _)| c.id.as_str())
        .collect();
    let keep_step: Vec<bool> = d
        .steps
        .iter()
        .map(|s| !hidden.contains(&s.as_str()))
        .collect();
    d.steps = keep(&d.steps, &keep_step);
    d.ranks = keep(&d.ranks, &keep_step)
        .iter()
        .map(|r| keep(r, shown_models))
        .collect();
    d.flags = keep(&d.flags, &keep_step)
        .iter()
        .map(|r| keep(r, shown_models))
        .collect();
    d.models = keep(&d.models, shown_models);
    ChartSpec::RankPaths(d)
}

/// Panel (d), the model pairs whose order `result` inverts against equal weights
/// ([`PairFlips::from_reweighted`]), among the shown models: the matrix labels are the model ids cut to
/// [`PAIR_FLIP_LABEL_CHARS`] characters, the pairs re-indexed among the shown models, and the full ids
/// of the shown models go with the spec for its table.
pub fn pair_flips(
    basis: &ReweightBasis,
    result: &Reweighted,
    shown: &[bool],
    caption: String,
) -> ChartSpec {
    let short: Vec<String> = basis
        .models()
        .iter()
        .map(|m| shorten(m, PAIR_FLIP_LABEL_CHARS))
        .collect();
    let d = PairFlips::from_reweighted(&short, result, caption);
    shown_pairs(d, basis.models(), shown)
}

/// A pair-flip matrix of the shown models only: the pairs re-indexed among them, and their full ids
/// (`ids`, one per model of `d`) with the spec for its table.
fn shown_pairs(d: PairFlips, ids: &[String], shown: &[bool]) -> ChartSpec {
    let index: Vec<Option<usize>> = {
        let mut next = 0;
        (0..d.models.len())
            .map(|m| {
                shown.get(m).copied().unwrap_or(true).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    };
    let pairs = d
        .pairs
        .iter()
        .filter_map(|p| {
            let mut p = p.clone();
            p.a = index.get(p.a).copied().flatten()?;
            p.b = index.get(p.b).copied().flatten()?;
            Some(p)
        })
        .collect();
    ChartSpec::PairFlips(
        PairFlips {
            models: keep(&d.models, shown),
            pairs,
            caption: d.caption,
        },
        keep(ids, shown),
    )
}

/// Panel (c) across task paradigms ([`RankPaths::across_procedures`]): each shown model's rank under
/// each procedure of an across-paradigm report (ranks stay among all models).
pub fn across_rank_paths(r: &AcrossReport, caption: String, shown: &[bool]) -> ChartSpec {
    let mut d = RankPaths::across_procedures(&r.models, r, caption);
    d.ranks = d.ranks.iter().map(|x| keep(x, shown)).collect();
    d.models = keep(&d.models, shown);
    ChartSpec::RankPaths(d)
}

/// Panel (d) across task paradigms ([`PairFlips::from_across`]): the pairs whose order reverses
/// across procedures, coloured by their strongest tie zone (1 and 2 pp), among the shown models;
/// labels are the ids cut to [`PAIR_FLIP_LABEL_CHARS`] characters, the table keeps the full ids.
pub fn across_pair_flips(r: &AcrossReport, caption: String, shown: &[bool]) -> ChartSpec {
    let short: Vec<String> = r
        .models
        .iter()
        .map(|m| shorten(m, PAIR_FLIP_LABEL_CHARS))
        .collect();
    shown_pairs(PairFlips::from_across(&short, r, caption), &r.models, shown)
}

/// Panel (g), each shown model's Selection BER against its Rationale BER on the same pairs of one judge
/// (`atlas_core::rq3::judge_by_model`); the caption names the judge.
pub fn selection_vs_rationale(
    models: &[String],
    judge: &JudgeByModel,
    shown: &[bool],
) -> ChartSpec {
    ChartSpec::SelectionVsRationale(SelectionVsRationale {
        models: keep(models, shown),
        selection: keep(&judge.selection_ber, shown),
        rationale: keep(&judge.rationale_ber, shown),
        caption: format!("(g) Selection vs Rationale BER · judge {}", judge.judge),
    })
}

/// Panel (h), each shown model's labels of one judge by class ([`RATIONALE_CLASSES`] order); the
/// caption names the judge.
pub fn rationale_composition(models: &[String], judge: &JudgeByModel, shown: &[bool]) -> ChartSpec {
    ChartSpec::Composition(RationaleComposition {
        models: keep(models, shown),
        classes: RATIONALE_CLASSES.iter().map(|c| c.to_string()).collect(),
        counts: keep(&judge.label_counts, shown)
            .into_iter()
            .map(|c| c.to_vec())
            .collect(),
        caption: format!("(h) Rationale classes · judge {}", judge.judge),
    })
}
