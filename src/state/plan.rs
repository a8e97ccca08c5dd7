//! The Plan view's hand-over to the pilot form ("use this design", issue 17 §2).

use leptos::prelude::*;

/// A design and budget the Plan view hands to the pilot form (context, provided by the app): the
/// pilot panel applies it to its form state — `sampling` (`concentrated`, `srs`, `stratified`) and
/// `budget` (cells per model, as the form's text) — through the same `FormState` the form edits, and
/// clears it.
#[derive(Clone, Copy)]
pub struct PilotHandoff(pub RwSignal<Option<(String, String)>>);
