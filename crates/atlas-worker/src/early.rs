//! The loading shell's early Overview (issue 15, "First paint and size"): the ranking by the reference
//! score, computed in the analysis worker while the app's much larger wasm is still downloading.
//!
//! `index.html` starts this worker (311 kB gzipped, against the app's 2.1 MB) as soon as the page
//! opens, hands it the default bundle's bytes from the early fetch, and draws the answer of
//! [`early_overview`] into the loading shell: the bundle's one-sentence description, its size, the
//! headline findings, and the ranking with each model's score and rank — the same numbers, with the same text, as the Overview's
//! ranking table once the app has mounted, because both come from [`atlas_core::headline::headline`]
//! and [`atlas_core::format`]. The 95 % intervals are left to the app (they need the 2,000-replicate
//! bootstrap; the shell says they follow).
//!
//! The message is `{early: "<EarlyJob JSON>", bundle: Uint8Array}`; the answer is
//! `{early: "<EarlyOverview JSON>"}` or `{early_failed: "<message>"}` — kept apart from [`crate::Reply`]
//! so that a page that adopts the worker afterwards reads only analysis replies.

use atlas_core::format::{percent, thousands};
use atlas_core::headline::{headline, HeadlineOptions};
use atlas_core::{Audit, RepeatPolicy};
use serde::{Deserialize, Serialize};

/// What the shell asks for: the repeat policy of the page's URL (`?policy=`, a
/// [`RepeatPolicy::key`]); absent or unknown = the app's default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EarlyJob {
    /// [`RepeatPolicy::key`] of `?policy=`, if the URL has one.
    #[serde(default)]
    pub policy: Option<String>,
}

/// One row of the early ranking, with its cells already written as the app's Overview writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlyRow {
    /// Model level id.
    pub model: String,
    /// Display name (`label`, else the id).
    pub label: String,
    /// Eq. 4 reference score (equal condition weights), a fraction; `None` without one.
    pub score: Option<f64>,
    /// The score as the Overview shows it (`13.4%`, or `—`).
    pub score_text: String,
    /// Average rank (1 = best in the bundle's direction) as the Overview shows it.
    pub rank_text: String,
    /// The score averages a cell that is mostly Abstain (§B.2).
    pub high_abstain: bool,
}

/// The early Overview of one bundle under one repeat policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EarlyOverview {
    /// `metadata.id`.
    pub bundle: String,
    /// The bundle's title.
    pub title: String,
    /// One plain sentence: what the bundle is ([`atlas_core::headline::Headline::sentence`]).
    pub sentence: String,
    /// Its size in one line (models, statements, conditions, responses).
    pub size: String,
    /// The repeat policy the numbers use (key).
    pub policy: String,
    /// `rank 1 = lowest score` (or the bundle's own direction).
    pub direction: String,
    /// Models by rank, best first (models without a score last).
    pub ranking: Vec<EarlyRow>,
    /// The headline findings' sentences, in the Overview's order
    /// ([`atlas_core::headline::Headline::findings`]).
    pub findings: Vec<String>,
}

/// Parses `bundle` and computes its early Overview: the headline without the bootstrap (0
/// replicates), so it takes one pass over the cells (a few milliseconds natively on the default
/// bundle).
///
/// # Errors
/// The bundle does not parse or validate (the message of [`Audit::from_bytes`]); `job.policy` names
/// no repeat policy.
///
/// # Example
/// ```
/// use atlas_worker::early::{early_overview, EarlyJob};
/// let bundle = std::fs::read(concat!(
///     env!("CARGO_MANIFEST_DIR"),
///     "/../../static/bundles/decodingtrust-stereotype/bundle.json"
/// ))
/// .unwrap();
/// let early = early_overview(&bundle, &EarlyJob::default()).unwrap();
/// assert_eq!(early.ranking.len(), 8);
/// assert_eq!(early.ranking[0].rank_text, "1");
/// ```
pub fn early_overview(bundle: &[u8], job: &EarlyJob) -> Result<EarlyOverview, String> {
    let policy = match job.policy.as_deref() {
        None => RepeatPolicy::default(),
        Some(key) => {
            RepeatPolicy::from_key(key).ok_or_else(|| format!("`{key}` is not a repeat policy"))?
        }
    };
    let audit = Audit::from_bytes(bundle).map_err(|e| format!("the bundle is invalid: {e}"))?;
    let h = headline(
        &audit,
        HeadlineOptions {
            policy,
            reps: 0,
            ..HeadlineOptions::default()
        },
    );
    let s = h.size;
    let size = format!(
        "{} models · {} statements · {} conditions · {} responses",
        thousands(s.models),
        thousands(s.statements),
        thousands(s.conditions),
        thousands(s.responses as usize),
    );
    Ok(EarlyOverview {
        bundle: h.bundle.clone(),
        title: h.provenance.title.clone(),
        sentence: h.sentence.clone(),
        size,
        policy: h.policy.key().to_string(),
        direction: h.direction.direction.rank_one(),
        ranking: h
            .ranking
            .iter()
            .map(|r| EarlyRow {
                model: r.model.clone(),
                label: r.label.clone(),
                score: r.score,
                score_text: percent(r.score, 1),
                rank_text: r.rank_text(),
                high_abstain: r.high_abstain,
            })
            .collect(),
        findings: h.findings.iter().map(|f| f.text.clone()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUNDLE: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../static/bundles/decodingtrust-stereotype/bundle.json"
    );

    // The early overview is the headline's ranking without the bootstrap: same models, order and
    // scores as the full headline (whose scores `tests/e2e/overview.mjs` compares with `atlas overview`
    // and the core's tests with numpy); `tests/e2e/early_overview.mjs` compares the shell's cells with
    // the CLI's.
    #[test]
    fn early_ranking_has_the_headline_scores_ranks_and_order() {
        let bytes = std::fs::read(BUNDLE).unwrap();
        let early = early_overview(&bytes, &EarlyJob::default()).unwrap();
        let audit = Audit::from_bytes(&bytes).unwrap();
        let full = headline(&audit, HeadlineOptions::default());
        assert_eq!(early.ranking.len(), full.ranking.len());
        for (e, f) in early.ranking.iter().zip(&full.ranking) {
            assert_eq!(e.model, f.model);
            assert_eq!(e.score, f.score);
            assert_eq!(e.score_text, percent(f.score, 1));
        }
        assert_eq!(early.policy, "all_responses");
        let texts: Vec<&str> = full.findings.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(early.findings, texts);
    }

    #[test]
    fn early_overview_names_a_bad_policy_and_a_bad_bundle() {
        let bytes = std::fs::read(BUNDLE).unwrap();
        let e = early_overview(
            &bytes,
            &EarlyJob {
                policy: Some("median".into()),
            },
        )
        .unwrap_err();
        assert!(e.contains("`median` is not a repeat policy"), "{e}");
        let e = early_overview(b"{\"format\":", &EarlyJob::default()).unwrap_err();
        assert!(e.starts_with("the bundle is invalid"), "{e}");
    }

    #[test]
    fn early_policy_first_repeat_changes_the_policy_key() {
        let bytes = std::fs::read(BUNDLE).unwrap();
        let first = early_overview(
            &bytes,
            &EarlyJob {
                policy: Some(RepeatPolicy::FirstRepeat.key().into()),
            },
        )
        .unwrap();
        assert_eq!(first.policy, RepeatPolicy::FirstRepeat.key());
    }
}
