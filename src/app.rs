//! The Leptos components of the explorer. State lives in [`AtlasState`] (provided as context); the
//! numbers come from `atlas_core::stats`, so the browser and the native CLI compute the same values.

use crate::state::{AtlasState, Loaded, DEFAULT_BUNDLE};
use crate::views::overview::{BerChart, BerTableView, LoadPanel, Metadata, PolicyPanel};
use std::sync::Arc;

use atlas_core::summary::summarize;
use atlas_core::AbstainThreshold;
use leptos::prelude::*;

use crate::views::analyses::Analyses;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let state = AtlasState::new();
    provide_context(state);
    crate::state::url::restore(state);
    let requested = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|s| web_sys::UrlSearchParams::new_with_str(&s).ok())
        .and_then(|p| p.get("bundle"));
    state.load_url(requested.unwrap_or_else(|| DEFAULT_BUNDLE.to_string()));

    view! {
        <header class="top">
            <h1>"Audit Atlas"</h1>
            <p class="tagline">
                "Recompute LLM bias-audit statistics from frozen result bundles, in your browser."
            </p>
        </header>
        <main>
            <LoadPanel/>
            {move || state.loaded.get().map(|loaded| view! { <BundleView loaded/> })}
            <crate::views::import::ImportPanel/>
            <crate::pilot::panel::PilotPanel/>
        </main>
        <footer>
            <p>
                "Definitions follow BiAxisBias (Gan, Dong & Li): BER §3.3, reference score Eq. 4, Abstain = missing (§B.2). "
                "Data attribution of the loaded bundle is shown in its metadata above."
            </p>
        </footer>
    }
}

/// Metadata, repeat policy, table, chart and responses of one loaded bundle.
#[component]
fn BundleView(loaded: Arc<Loaded>) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let for_summary = loaded.clone();
    // The default Abstain threshold, as `atlas stats`.
    let summary = Memo::new(move |_| {
        summarize(
            &for_summary.audit,
            state.policy.get(),
            AbstainThreshold::default(),
        )
    });
    provide_context(crate::state::reweighting::AnalysisResults::new());
    crate::state::reweighting::ExplorerModel::new(loaded.clone());
    let clinical = loaded.audit.file.clinical.is_some().then(|| {
        view! { <crate::views::clinical::ClinicalView loaded=loaded.clone()/> }
    });
    view! {
        <Metadata loaded=loaded.clone()/>
        <crate::views::headline::Headline loaded=loaded.clone()/>
        {clinical}
        <PolicyPanel/>
        <BerTableView loaded=loaded.clone() summary/>
        <BerChart loaded=loaded.clone() summary/>
        <crate::views::explorer::Reweighting/>
        <Analyses loaded=loaded.clone()/>
        <crate::views::atlas::EvidenceAtlas/>
        <crate::views::rq3::Rq3Panel loaded=loaded.clone()/>
        <crate::views::inspector::Inspector loaded/>
    }
}
