//! The cases of a loaded bundle, as the case inspector lists, filters, searches and shows them: every
//! response with its facet levels, Selection readout `A`, each judge's label and the Rationale reading
//! `B` under a coding rule (seed `000_…` §3.3, B.3, Table 18), in the layout of the seed's Tables 20–22.
//!
//! - [`CaseIndex`]: what a bundle's design says about its cells, read once per bundle (readings from
//!   [`crate::rq3::cell_readings`], the values [`crate::rq3::analyze_rq3`] counts, so a filtered list
//!   and the RQ3 tables agree);
//! - [`FilterSet`] and [`matching_rows`]: the list's filters on every facet and readout;
//! - [`text_at`], [`search_texts`], [`texts_in_bundle`]: Rationale texts inline in the bundle or in
//!   text shards loaded so far ([`ShardState`]);
//! - [`shortest_case`]: the seed's deterministic example rule (§F.1, Tables 20–21);
//! - [`fill_prompt`] and [`template_with_placeholder`]: the one prompt-fill rule that the inspector's
//!   case view and the pilot's bundle templates share;
//! - [`link_case`]: the case a shared link names;
//! - display helpers ([`level_label`], [`label_name`], [`a_text`], …): the words a case is shown with.

mod display;
mod filter;
mod index;
mod link;
mod prompt;
mod shortest;
mod text;

pub use display::{
    a_text, b_text, direction_text, label_code, label_name, level_attr, level_id, level_label,
    obtained_name,
};
pub use filter::{matching_rows, DirectionFilter, FilterSet, LabelFilter, ReadingFilter};
pub use index::{five_class_majority, CaseIndex, CellSet};
pub use link::{link_case, LinkCase};
pub use prompt::{fill_prompt, template_with_placeholder, STATEMENT_PLACEHOLDER};
pub use shortest::{shortest_case, Shortest};
pub use text::{search_texts, text_at, texts_in_bundle, ShardState, TextAt};
