//! The sections of the page, one file each. A view reads [`crate::state`] and uses [`crate::ui`]; it
//! never imports another view.
//!
//! - [`shell`]: the app shell (top bar, navigation, view containers, the window's drop target);
//! - [`bundles`]: the bundle picker (shipped, recent, file, URL) and the load status / error bar;
//! - [`headline`]: the Overview's headline (what the bundle is, ranking with intervals, findings);
//! - [`overview`]: bundle metadata, repeat policy, Selection BER table and chart;
//! - [`explorer`]: condition re-weighting (Eq. 4) with bootstrap intervals;
//! - [`compare`]: compare two models (paired McNemar tests, all pairs, rank bands; issue 17);
//! - [`analyses`]: the RQ1 and RQ2 panels, run in the analysis worker;
//! - [`plan`]: plan an audit (designs, budget, targets; issue 17 §2);
//! - [`atlas`]: the evidence-atlas panels (seed `000_…` Figure 4);
//! - [`rq3`]: the RQ3 panel (Tables 3, 18, 19);
//! - [`inspector`]: the case inspector (filtered virtual list, case view, case links);
//! - [`clinical`]: the Clinical view of clinical perturbation bundles (seed `001_…`);
//! - [`likelihood`]: likelihood readouts (stereotyped candidate preferred, §C.2), apart from Selection;
//! - [`import`]: opening CSV / JSONL logs as a bundle.

pub mod analyses;
pub mod atlas;
pub mod bundles;
pub mod clinical;
pub mod compare;
pub mod explorer;
pub mod headline;
pub mod import;
pub mod import_logs;
pub mod inspector;
pub mod likelihood;
pub mod overview;
pub mod plan;
pub mod rq3;
pub mod shell;
