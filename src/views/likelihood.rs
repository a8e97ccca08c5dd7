//! The likelihood readouts of a bundle (issue 18 item 3): "stereotyped candidate preferred" per
//! model and per model × condition (seed `000_…` §4.3, §C.2; [`atlas_core::likelihood`], the code
//! behind `atlas likelihood`), with the readouts, valid readouts, ties and missing ones counted and
//! the unbiased point stated. Shown only for bundles with `responses.likelihood`, in its own section
//! after the Selection results and apart from them, as the seed keeps them.

use std::sync::Arc;

use atlas_core::likelihood::{stereotype_preference, Basis};
use leptos::prelude::*;

use crate::state::Loaded;
use crate::ui::glossary::Term;
use crate::ui::table::table_view;

/// The section, or nothing when the bundle has no likelihood readouts.
#[component]
pub fn LikelihoodPanel(loaded: Arc<Loaded>) -> impl IntoView {
    let auto = Basis::default_for(&loaded.audit)?;
    let has_tokens = auto == Basis::MeanPerToken;
    // The score compared: mean per token (§C.2) when the bundle records token counts, else the sum.
    let basis = RwSignal::new(auto);
    let table = move || {
        stereotype_preference(&loaded.audit, basis.get()).map(|t| t.to_table(&loaded.audit))
    };
    let on_basis = move |ev: leptos::ev::Event| {
        basis.set(if event_target_value(&ev) == "sum" {
            Basis::Sum
        } else {
            Basis::MeanPerToken
        });
    };
    Some(view! {
        <section class="likelihood" id="likelihood" data-view="likelihood" aria-labelledby="likelihood-title">
            <h2 id="likelihood-title">"Likelihood scores, kept apart from the Selection results"</h2>
            <p class="paper-ref">"Seed 000 §4.3, §C.2 · " <code>"atlas likelihood"</code></p>
            <p>
                "This bundle also records how likely a model finds each candidate sentence (its log-probabilities), "
                "not only what it answered. A readout "<em>"prefers the stereotyped candidate"</em>" when the stereotyped "
                "sentence scores strictly higher than every other candidate. These numbers are a different measurement from the "
                <Term id="selection">"Selection"</Term>" "<Term id="ber">"BER"</Term>" above and never enter it."
            </p>
            <label class="likelihood-basis">
                "Score compared: "
                <select id="likelihood-basis" on:change=on_basis>
                    <option value="mean" selected=has_tokens disabled=!has_tokens>"mean log-probability per token (§C.2)"</option>
                    <option value="sum" selected=!has_tokens>"summed log-probability"</option>
                </select>
            </label>
            {move || table().map(|t| table_view(&t, "likelihood", 3))}
        </section>
    })
}
