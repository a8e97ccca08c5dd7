//! `atlas analyze-rq1`: the RQ1 analyses of seed `000_…` (§5.1, §5.2, C.1, C.2, C.3; Tables 8, 9, 11,
//! 12) on a bundle, printed as text — the same table layout the app shows
//! ([`atlas_core::tables::rq1`]) — or JSON.

use atlas_core::rq1::Rq1Report;
use atlas_core::tables;
use atlas_core::Audit;

/// Text layout of the report.
pub fn print_text(audit: &Audit, r: &Rq1Report) {
    let (summary, tables) = tables::rq1(audit, r);
    print!("{}", tables::render_text(&summary, &tables));
}
