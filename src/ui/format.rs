//! How numbers and labels read on the page: counts with thousands separators, and a level's label.

use atlas_core::Audit;

/// `691200` → `691,200`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// The level's `label` attribute, else its id.
pub fn level_label(audit: &Audit, facet: usize, level: usize) -> String {
    let l = &audit.levels(facet)[level];
    l.attributes
        .get("label")
        .and_then(|v| v.as_str())
        .map_or_else(|| l.id.clone(), str::to_string)
}
