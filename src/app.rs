//! The Leptos components of the explorer. State lives in [`AtlasState`] (provided as context); the
//! numbers come from `atlas_core::stats`, so the browser and the native CLI compute the same values.
//!
//! The page is the app shell of [`crate::views::shell`]: a top bar (bundle name, bundle picker), the
//! navigation, and one container per view ([`AppView`]), only the current one shown. The Overview is
//! in the first wasm; every other view is mounted by [`OnDemand`] (its code downloaded on demand).

use crate::on_demand::{self, OnDemand, SoonAfterFirstView, Start};
use crate::state::inbox::ImportInbox;
use crate::state::nav::{Navigator, ShellNotice};
use crate::state::url::AppView;
use crate::state::{AtlasState, Loaded, DEFAULT_BUNDLE};
use crate::views::bundles::{BundlePicker, LoadStatusBar, PickerOpen};
use crate::views::overview::Metadata;
use crate::views::shell::{DropTarget, MenuOpen, Nav, Notice, TopBar, ViewBox};
use std::sync::Arc;

use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let state = AtlasState::new();
    provide_context(state);
    crate::state::url::restore(state);
    provide_context(Navigator::from_context());
    provide_context(ShellNotice(RwSignal::new(None)));
    provide_context(ImportInbox::new());
    provide_context(PickerOpen(RwSignal::new(false)));
    provide_context(MenuOpen(RwSignal::new(false)));
    provide_context(crate::state::plan::PilotHandoff(RwSignal::new(None)));
    crate::views::shell::follow_history();
    let requested = web_sys::window()
        .and_then(|w| w.location().search().ok())
        .and_then(|s| web_sys::UrlSearchParams::new_with_str(&s).ok())
        .and_then(|p| p.get("bundle"));
    state.load_url(requested.unwrap_or_else(|| DEFAULT_BUNDLE.to_string()));

    view! {
        <a class="skip-link" href="#content">"Skip to content"</a>
        <TopBar/>
        <DropTarget/>
        <div class="shell">
            <Nav/>
            <main id="content" tabindex="-1">
                <Notice/>
                <LoadStatusBar/>
                <BundlePicker/>
                {move || state.loaded.get().map(|loaded| view! { <BundleView loaded/> })}
                <ViewBox view=AppView::Import>
                    <OnDemand view=AppView::Import start=Start::OnShow load=on_demand::import/>
                </ViewBox>
                <ViewBox view=AppView::Pilot>
                    <OnDemand view=AppView::Pilot start=Start::OnShow load=on_demand::pilot/>
                </ViewBox>
                <crate::ui::glossary::Glossary/>
            </main>
        </div>
        <footer>
            <p>
                "Definitions follow the BiAxisBias paper (Gan, Dong & Li): BER §3.3, reference score Eq. 4, Abstain = missing (§B.2); see the glossary. "
                "Data attribution of the loaded bundle is shown in its metadata (Overview)."
            </p>
        </footer>
    }
}

/// The views of one loaded bundle, one container each: Overview (headline, metadata), Scores (repeat
/// policy, table, chart, re-weighting, atlas (c)(d)), Compare (model pairs, rank bands), Analyses
/// (RQ1/RQ2, atlas (a)(b)(e)(f)), Plan, Selection vs Rationale (RQ3, atlas (g)(h)), Cases
/// (inspector), Clinical. Every view but the Overview is loaded on demand ([`crate::on_demand`]).
#[component]
fn BundleView(loaded: Arc<Loaded>) -> impl IntoView {
    provide_context(crate::state::reweighting::AnalysisResults::new());
    crate::state::reweighting::ExplorerModel::new(loaded.clone());
    // The views a reader goes to next start downloading once this bundle's first view is drawn.
    let soon = SoonAfterFirstView(RwSignal::new(false));
    provide_context(soon);
    let after_first_view = Closure::once_into_js(move || soon.0.try_set(true));
    if let Some(window) = web_sys::window() {
        let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(
            after_first_view.unchecked_ref(),
            SOON_DELAY_MS,
        );
    }
    let clinical = match loaded.audit.file.clinical.is_some() {
        true => {
            let l = loaded.clone();
            view! { <OnDemand view=AppView::Clinical start=Start::OnShow load=move || on_demand::clinical(l.clone())/> }.into_any()
        }
        false => view! {
            <section class="clinical-none" aria-labelledby="clinical-none-title">
                <h2 id="clinical-none-title">"Clinical view"</h2>
                <p id="clinical-none">"This bundle has no clinical data (no clinical block); open the clinical demo bundle to see this view."</p>
            </section>
        }
        .into_any(),
    };
    let (l_scores, l_analyses, l_plan, l_rationale, l_cases) = (
        loaded.clone(),
        loaded.clone(),
        loaded.clone(),
        loaded.clone(),
        loaded.clone(),
    );
    view! {
        <ViewBox view=AppView::Overview>
            <crate::views::headline::Headline loaded=loaded.clone()/>
            <Metadata loaded/>
        </ViewBox>
        <ViewBox view=AppView::Scores>
            <OnDemand view=AppView::Scores start=Start::Soon load=move || on_demand::scores(l_scores.clone())/>
        </ViewBox>
        <ViewBox view=AppView::Compare>
            <OnDemand view=AppView::Compare start=Start::OnShow load=on_demand::compare/>
        </ViewBox>
        <ViewBox view=AppView::Analyses>
            <OnDemand view=AppView::Analyses start=Start::Soon load=move || on_demand::analyses(l_analyses.clone())/>
        </ViewBox>
        <ViewBox view=AppView::Plan>
            <OnDemand view=AppView::Plan start=Start::OnShow load=move || on_demand::plan(l_plan.clone())/>
        </ViewBox>
        <ViewBox view=AppView::Rationale>
            <OnDemand view=AppView::Rationale start=Start::Soon load=move || on_demand::rationale(l_rationale.clone())/>
        </ViewBox>
        <ViewBox view=AppView::Cases>
            <OnDemand view=AppView::Cases start=Start::Soon load=move || on_demand::cases(l_cases.clone())/>
        </ViewBox>
        <ViewBox view=AppView::Clinical>
            {clinical}
        </ViewBox>
    }
}

/// How long after a bundle's first view is drawn the [`Start::Soon`] views start downloading (ms):
/// long enough for that view to be painted first.
const SOON_DELAY_MS: i32 = 300;
