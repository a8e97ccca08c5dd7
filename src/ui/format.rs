//! How numbers and labels read on the page: the numbers as `atlas_core::format` writes them (the same
//! text as the CLI), and a level's label.

pub use atlas_core::format::{number, percent, points, thousands, NO_VALUE};
use atlas_core::Audit;

/// The level's `label` attribute, else its id.
pub fn level_label(audit: &Audit, facet: usize, level: usize) -> String {
    let l = &audit.levels(facet)[level];
    l.attributes
        .get("label")
        .and_then(|v| v.as_str())
        .map_or_else(|| l.id.clone(), str::to_string)
}
