//! The Plan view's hand-over to the pilot form ("use this design", issue 17 §2).

use leptos::prelude::*;

/// A design and budget the Plan view hands to the pilot form (context, provided by the app): the
/// pilot panel applies it to its form state — the design name of `atlas_core::plan::design_name`
/// (`concentrated`, `srs`, `stratified`, `balanced` or `coverage:K`, e.g. `coverage:2`; read by
/// `atlas_pilot::plan::Sampling::from_name`) and `budget` (cells per model, as the form's text;
/// ignored by `balanced`, whose design fixes it) — through the same `FormState` the form edits
/// (`FormState::apply_handoff`), and clears it.
#[derive(Clone, Copy)]
pub struct PilotHandoff(pub RwSignal<Option<(String, String)>>);
