//! The words a case is shown with: level names, judge labels, how a Selection was obtained, and the
//! readouts `A` and `B` (seed `000_…` §3.3 and B.3; Tables 20–22 layout).

use crate::bundle::{Level, Obtained, RationaleLabel};
use crate::rq3::{Direction, SelectionReadout};
use crate::Audit;

/// Level `level` of facet `facet`; `None` when either is out of range.
fn level(audit: &Audit, facet: usize, level: usize) -> Option<&Level> {
    audit.file.facets.get(facet)?.levels.get(level)
}

/// A level's display name: its `label` attribute, else its id; `?` when `facet` or `level` is out of
/// range.
pub fn level_label(audit: &Audit, facet: usize, level: usize) -> String {
    self::level(audit, facet, level).map_or_else(
        || "?".to_string(),
        |l| {
            l.attributes
                .get("label")
                .and_then(|v| v.as_str())
                .map_or_else(|| l.id.clone(), str::to_string)
        },
    )
}

/// A level's id; `?` when `facet` or `level` is out of range.
pub fn level_id(audit: &Audit, facet: usize, level: usize) -> String {
    self::level(audit, facet, level).map_or_else(|| "?".to_string(), |l| l.id.clone())
}

/// A level's string attribute `key` (e.g. a condition's `system_prompt`); `None` when the level, the
/// attribute or a string value is missing.
pub fn level_attr(audit: &Audit, facet: usize, level: usize, key: &str) -> Option<String> {
    self::level(audit, facet, level)?
        .attributes
        .get(key)?
        .as_str()
        .map(str::to_string)
}

/// The short code of a judge's five-class Rationale label (seed `000_…` §3.3, B.3): `E`, `QE`, `N`, `D`, `R`;
/// `·` for no label.
pub fn label_code(label: Option<RationaleLabel>) -> &'static str {
    match label {
        Some(RationaleLabel::E) => "E",
        Some(RationaleLabel::QE) => "QE",
        Some(RationaleLabel::N) => "N",
        Some(RationaleLabel::D) => "D",
        Some(RationaleLabel::R) => "R",
        None => "·",
    }
}

/// A five-class label with its name, e.g. `QE (qualified endorsement)`.
pub fn label_name(label: RationaleLabel) -> &'static str {
    match label {
        RationaleLabel::E => "E (endorsement)",
        RationaleLabel::QE => "QE (qualified endorsement)",
        RationaleLabel::N => "N (neutral analysis)",
        RationaleLabel::D => "D (denial)",
        RationaleLabel::R => "R (refusal)",
    }
}

/// How a Selection was obtained, in words: `regex`, `fallback`, `parser failure`, `refusal`.
pub fn obtained_name(o: Obtained) -> &'static str {
    match o {
        Obtained::Regex => "regex",
        Obtained::Fallback => "fallback",
        Obtained::ParserFailure => "parser failure",
        Obtained::Refusal => "refusal",
    }
}

/// A direction of divergence between the Selection and the Rationale in words, with its `A`/`B` values.
pub fn direction_text(d: Direction) -> &'static str {
    match d {
        Direction::SelectionOnly => {
            "Selection bias evidence, Rationale non-bias evidence (A=1, B=0)"
        }
        Direction::RationaleOnly => {
            "Selection non-bias evidence, Rationale bias evidence (A=0, B=1)"
        }
    }
}

/// The Rationale reading `B`: `1`, `0`, or `–` for Abstain.
pub fn b_text(b: Option<bool>) -> &'static str {
    match b {
        Some(true) => "1",
        Some(false) => "0",
        None => "–",
    }
}

/// The Selection readout `A`: `1`, `0`, `Abstain`, `no readout` (a condition without a Selection
/// readout), or `no response` (`None`: the cell holds no response).
pub fn a_text(a: Option<SelectionReadout>) -> &'static str {
    match a {
        Some(SelectionReadout::Valid(true)) => "1",
        Some(SelectionReadout::Valid(false)) => "0",
        Some(SelectionReadout::Abstain) => "Abstain",
        Some(SelectionReadout::NoReadout) => "no readout",
        None => "no response",
    }
}
