//! The sections of the page, one file each. A view reads [`crate::state`] and uses [`crate::ui`]; it
//! never imports another view.
//!
//! - [`headline`]: the Overview's headline (what the bundle is, ranking with intervals, findings);
//! - [`overview`]: load panel, bundle metadata, repeat policy, Selection BER table and chart;
//! - [`explorer`]: condition re-weighting (Eq. 4) with bootstrap intervals;
//! - [`analyses`]: the RQ1 and RQ2 panels, run in the analysis worker;
//! - [`atlas`]: the evidence-atlas panels (seed `000_…` Figure 4);
//! - [`rq3`]: the RQ3 panel (Tables 3, 18, 19);
//! - [`inspector`]: the case inspector (filtered virtual list, case view, case links);
//! - [`clinical`]: the Clinical view of clinical perturbation bundles (seed `001_…`);
//! - [`import`]: opening CSV / JSONL logs as a bundle.

pub mod analyses;
pub mod atlas;
pub mod clinical;
pub mod explorer;
pub mod headline;
pub mod import;
pub mod inspector;
pub mod overview;
pub mod rq3;
