//! Score direction: whether a lower Selection score is better, a higher one, or a target value.
//!
//! Seed `000_…` ranks models "lower observed rates first" (§B.4): its Selection score is the share of
//! valid Selections that are bias evidence, and less bias evidence is better. Other benchmarks have an
//! unbiased point inside the scale: CrowS-Pairs (Nangia et al. 2020) and StereoSet's stereotype score SS
//! (Nadeem et al. 2021) count how often a model prefers the stereotypical of two options, and a model
//! without a preference scores 50 %. A bundle declares its direction in `responses.selection.direction`
//! ([`DirectionSpec`], `docs/bundle-format.md`); without a declaration the seed's rule applies and every
//! output says it is the default ([`ScoreDirection::describe`]).
//!
//! The direction turns a score `s` (a fraction in `[0, 1]`) into a **ranking key**, lower key = better
//! (rank 1):
//!
//! | `better` | key | rank 1 |
//! | --- | --- | --- |
//! | `lower` (default) | `s` | the lowest score |
//! | `higher` | `−s` | the highest score |
//! | `target` `t` | `\|s − t\|` (computed in `f64` as `(s - t).abs()`, numpy's `abs(s - t)`) | the score closest to `t` |
//!
//! Every ranking statistic reads keys, never raw scores: average ranks ([`Direction::ranks`], scipy's
//! `rankdata` of the keys), Kendall τ-b, pairwise inversions and inverted pairs, maximum displacement,
//! the RQ1 reversals across conditions (δ is then a difference of keys) and the RQ2 rank metrics. Scores
//! themselves (BER, Eq. 4, Δ in pp, MAE) are never transformed. τ-b and inversions of `higher` equal those
//! of `lower` (negating both vectors keeps every pair's agreement), so only ranks and the rank-1 model
//! change there; a `target` changes which pairs are ordered how.

use serde::{Deserialize, Serialize};

use crate::error::BundleError;
use crate::rank::average_ranks;

/// Which way a score is better, as a bundle writes it (`responses.selection.direction.better`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// A lower score is better (seed `000_…` §B.4; the default).
    Lower,
    /// A higher score is better.
    Higher,
    /// A score closest to `target` is best.
    Target,
}

/// The JSON image of `responses.selection.direction` (format v1, optional): `{"better": "lower"}`,
/// `{"better": "higher"}` or `{"better": "target", "target": 0.5}`, each with an optional `note`.
///
/// Validated by [`ScoreDirection::from_spec`] when a bundle is read: `target` is required with
/// `"target"` and only allowed there, and is a fraction in `[0, 1]` (0.5 = 50 %).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    /// `lower`, `higher` or `target`: which scores rank best.
    pub better: Better,
    /// The ideal score for `"target"`, a fraction in `[0, 1]` (`0.5` = 50 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// Why this direction (shown beside the ranking), e.g. "CrowS-Pairs: a model without preference
    /// picks the stereotypical sentence in 50 % of the pairs".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl DirectionSpec {
    /// `{"better": "lower"}` with a note (what the converters write).
    pub fn lower(note: &str) -> Self {
        DirectionSpec {
            better: Better::Lower,
            target: None,
            note: Some(note.to_string()),
        }
    }
}

/// A validated direction: how a score becomes a ranking key (module docs).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "better", rename_all = "snake_case")]
pub enum Direction {
    /// Key = score.
    #[default]
    Lower,
    /// Key = −score.
    Higher,
    /// Key = |score − target|.
    Target {
        /// The ideal score, a fraction in `[0, 1]`.
        target: f64,
    },
}

/// `0.5` → `50 %`, `0.625` → `62.5 %` (at most four decimals of the percentage).
pub fn percent_text(fraction: f64) -> String {
    let text = format!("{:.4}", 100.0 * fraction);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} %")
}

impl Direction {
    /// The ranking key of score `s` (a fraction): lower key = better rank. Cost O(1).
    pub fn key(self, s: f64) -> f64 {
        match self {
            Direction::Lower => s,
            // `0.0 - s` rather than `-s`: a score of 0 gives the key +0, never −0.
            Direction::Higher => 0.0 - s,
            Direction::Target { target } => (s - target).abs(),
        }
    }

    /// The keys of `scores`, item by item; a missing score (`None`, NaN, ±∞) stays missing.
    pub fn keys(self, scores: &[Option<f64>]) -> Vec<Option<f64>> {
        scores
            .iter()
            .map(|s| s.filter(|v| v.is_finite()).map(|v| self.key(v)))
            .collect()
    }

    /// Average ranks in this direction: [`average_ranks`] of the keys (rank 1 = best; ties share the
    /// average of the ranks they span; missing scores get no rank), i.e. `scipy.stats.rankdata(keys,
    /// method="average")` on the present items. One output per input.
    pub fn ranks(self, scores: &[Option<f64>]) -> Vec<Option<f64>> {
        average_ranks(&self.keys(scores))
    }

    /// The rule in words: `lower is better`, `higher is better`, or `closest to 50 % is best (ranked by
    /// |score − 50 %|)`.
    pub fn rule(self) -> String {
        match self {
            Direction::Lower => "lower is better".into(),
            Direction::Higher => "higher is better".into(),
            Direction::Target { target } => {
                let t = percent_text(target);
                format!("closest to {t} is best (ranked by |score − {t}|)")
            }
        }
    }

    /// What rank 1 is: `rank 1 = lowest score`, `rank 1 = highest score`, `rank 1 = closest to 50 %`.
    pub fn rank_one(self) -> String {
        match self {
            Direction::Lower => "rank 1 = lowest score".into(),
            Direction::Higher => "rank 1 = highest score".into(),
            Direction::Target { target } => format!("rank 1 = closest to {}", percent_text(target)),
        }
    }

    /// The meaning of a difference of keys `δ = key(a) − key(b)` (RQ1 reversals): for `lower` the
    /// score difference, for `higher` its negative, for a target the difference of distances.
    pub fn delta_text(self) -> String {
        match self {
            Direction::Lower => "δ = 100 (score of the first model − score of the second)".into(),
            Direction::Higher => {
                "δ = 100 (score of the second model − score of the first), so that δ < 0 means the first model ranks better".into()
            }
            Direction::Target { target } => {
                let t = percent_text(target);
                format!("δ = 100 (|score of the first model − {t}| − |score of the second − {t}|)")
            }
        }
    }
}

/// The direction a bundle's rankings use, and whether the bundle declared it. Serialised as
/// `{"better": …, ["target": …,] "declared": …, "rule": "…"}`; read back from the same (the `rule`
/// text is ignored).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "ScoreDirectionWire")]
pub struct ScoreDirection {
    /// The validated direction.
    pub direction: Direction,
    /// `false` when the bundle has no `responses.selection.direction` and the default applies.
    pub declared: bool,
}

#[derive(Deserialize)]
struct ScoreDirectionWire {
    #[serde(flatten)]
    direction: Direction,
    declared: bool,
}

impl From<ScoreDirectionWire> for ScoreDirection {
    fn from(w: ScoreDirectionWire) -> Self {
        ScoreDirection {
            direction: w.direction,
            declared: w.declared,
        }
    }
}

impl Default for ScoreDirection {
    /// Lower is better, not declared.
    fn default() -> Self {
        ScoreDirection {
            direction: Direction::Lower,
            declared: false,
        }
    }
}

impl Serialize for ScoreDirection {
    /// `{"better": "lower", "declared": false, "rule": "lower is better (default: …)"}` (`target` with
    /// a target direction).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        match self.direction {
            Direction::Lower => map.serialize_entry("better", "lower")?,
            Direction::Higher => map.serialize_entry("better", "higher")?,
            Direction::Target { target } => {
                map.serialize_entry("better", "target")?;
                map.serialize_entry("target", &target)?;
            }
        }
        map.serialize_entry("declared", &self.declared)?;
        map.serialize_entry("rule", &self.describe())?;
        map.end()
    }
}

impl ScoreDirection {
    /// Validates a bundle's declaration (`None` = the default, not declared). `field` is the JSON path
    /// of the declaration, for messages (e.g. `responses.selection.direction`).
    ///
    /// # Errors
    /// [`BundleError::Invalid`] naming `FIELD.target` when `better` is `"target"` without a `target`,
    /// when `target` is given with `"lower"` / `"higher"`, or when it is not a finite fraction in
    /// `[0, 1]` (e.g. `50` for 50 %). An unknown `better` or a non-number `target` is refused earlier,
    /// by the JSON reader, as [`BundleError::Field`] with the path.
    pub fn from_spec(spec: Option<&DirectionSpec>, field: &str) -> Result<Self, BundleError> {
        let Some(spec) = spec else {
            return Ok(ScoreDirection::default());
        };
        let invalid = |message: String| BundleError::Invalid {
            field: format!("{field}.target"),
            message,
        };
        let direction = match (spec.better, spec.target) {
            (Better::Target, None) => {
                return Err(invalid(
                    "missing: a \"target\" direction needs the ideal score, a fraction in [0, 1] (0.5 = 50 %)".into(),
                ))
            }
            (Better::Target, Some(t)) => {
                if !t.is_finite() || !(0.0..=1.0).contains(&t) {
                    let hint = if t.is_finite() && t > 1.0 && t <= 100.0 {
                        format!(" (write {} for {t} %)", t / 100.0)
                    } else {
                        String::new()
                    };
                    return Err(invalid(format!(
                        "is {t}; the target is a fraction in [0, 1]{hint}"
                    )));
                }
                Direction::Target { target: t }
            }
            (better, Some(t)) => {
                let name = if better == Better::Lower {
                    "lower"
                } else {
                    "higher"
                };
                return Err(invalid(format!(
                    "is {t}, but \"better\" is \"{name}\": a target is only read with \"better\": \"target\""
                )));
            }
            (Better::Lower, None) => Direction::Lower,
            (Better::Higher, None) => Direction::Higher,
        };
        Ok(ScoreDirection {
            direction,
            declared: true,
        })
    }

    /// The line every ranking shows: the rule and where it comes from, e.g. `lower is better
    /// (default: the bundle declares no direction)` or `closest to 50 % is best (ranked by |score −
    /// 50 %|; declared by the bundle)`.
    pub fn describe(&self) -> String {
        let rule = self.direction.rule();
        match (self.declared, rule.strip_suffix(')')) {
            (false, _) => format!("{rule} (default: the bundle declares no direction)"),
            (true, Some(open)) => format!("{open}; declared by the bundle)"),
            (true, None) => format!("{rule} (declared by the bundle)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_says_it_is_the_default() {
        assert_eq!(
            ScoreDirection::default().describe(),
            "lower is better (default: the bundle declares no direction)"
        );
        let declared = ScoreDirection::from_spec(
            Some(&DirectionSpec {
                better: Better::Target,
                target: Some(0.5),
                note: None,
            }),
            "d",
        )
        .unwrap();
        assert_eq!(
            declared.describe(),
            "closest to 50 % is best (ranked by |score − 50 %|; declared by the bundle)"
        );
    }

    #[test]
    fn a_direction_reads_back_from_its_json() {
        for d in [
            ScoreDirection::default(),
            ScoreDirection {
                direction: Direction::Target { target: 0.5 },
                declared: true,
            },
        ] {
            let text = serde_json::to_string(&d).unwrap();
            assert_eq!(
                serde_json::from_str::<ScoreDirection>(&text).unwrap(),
                d,
                "{text}"
            );
        }
    }

    #[test]
    fn a_higher_key_of_zero_is_positive_zero() {
        assert!(Direction::Higher.key(0.0).is_sign_positive());
    }
}
