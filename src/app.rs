//! The Leptos components of the explorer. State lives in [`AtlasState`] (provided as context); the
//! numbers come from `atlas_core::stats`, so the browser and the native CLI compute the same values.
//!
//! The page is the app shell of [`crate::views::shell`]: a top bar (bundle name, bundle picker), the
//! navigation, and one container per view ([`AppView`]), all mounted, only the current one shown.

use crate::state::inbox::ImportInbox;
use crate::state::nav::{Navigator, ShellNotice};
use crate::state::url::AppView;
use crate::state::{AtlasState, Loaded, DEFAULT_BUNDLE};
use crate::views::atlas::AtlasGroup;
use crate::views::bundles::{BundlePicker, LoadStatusBar, PickerOpen};
use crate::views::overview::{BerChart, BerTableView, Metadata, PolicyPanel};
use crate::views::shell::{DropTarget, MenuOpen, Nav, Notice, TopBar, ViewBox};
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
                    <crate::views::import::ImportPanel/>
                </ViewBox>
                <ViewBox view=AppView::Pilot>
                    <crate::pilot::panel::PilotPanel/>
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

/// The views of one loaded bundle, one container each: Overview (metadata), Scores (repeat policy,
/// table, chart, re-weighting, atlas (c)(d)), Compare (model pairs, rank bands), Analyses (RQ1/RQ2, atlas (a)(b)(e)(f)), Selection vs
/// Rationale (RQ3, atlas (g)(h)), Cases (inspector), Clinical.
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
    let clinical = match loaded.audit.file.clinical.is_some() {
        true => view! { <crate::views::clinical::ClinicalView loaded=loaded.clone()/> }.into_any(),
        false => view! {
            <section class="clinical-none" aria-labelledby="clinical-none-title">
                <h2 id="clinical-none-title">"Clinical view"</h2>
                <p id="clinical-none">"This bundle has no clinical data (no clinical block); open the clinical demo bundle to see this view."</p>
            </section>
        }
        .into_any(),
    };
    let l_plan = loaded.clone();
    let l_likelihood = loaded.clone();
    let (l_overview, l_scores, l_analyses, l_rationale) = (
        loaded.clone(),
        loaded.clone(),
        loaded.clone(),
        loaded.clone(),
    );
    view! {
        <ViewBox view=AppView::Overview>
            <crate::views::headline::Headline loaded=l_overview.clone()/>
            <Metadata loaded=l_overview/>
        </ViewBox>
        <ViewBox view=AppView::Scores>
            <PolicyPanel/>
            <BerTableView loaded=l_scores.clone() summary/>
            <BerChart loaded=l_scores summary/>
            <crate::views::explorer::Reweighting/>
            <crate::views::atlas::EvidenceAtlas group=AtlasGroup::Weights/>
            <crate::views::likelihood::LikelihoodPanel loaded=l_likelihood/>
        </ViewBox>
        <ViewBox view=AppView::Compare>
            <crate::views::compare::CompareView/>
        </ViewBox>
        <ViewBox view=AppView::Analyses>
            // The atlas panels of each run sit right after its results (issue 15 item 1).
            <Analyses
                loaded=l_analyses
                rq1_atlas=|| view! { <crate::views::atlas::EvidenceAtlas group=AtlasGroup::Rq1/> }
                rq2_atlas=|| view! { <crate::views::atlas::EvidenceAtlas group=AtlasGroup::Rq2/> }
                across_atlas=|| view! { <crate::views::atlas::EvidenceAtlas group=AtlasGroup::Across/> }
            />
        </ViewBox>
        <ViewBox view=AppView::Plan>
            <crate::views::plan::PlanView loaded=l_plan/>
        </ViewBox>
        <ViewBox view=AppView::Rationale>
            <crate::views::rq3::Rq3Panel loaded=l_rationale/>
            <crate::views::atlas::EvidenceAtlas group=AtlasGroup::Rationale/>
        </ViewBox>
        <ViewBox view=AppView::Cases>
            <crate::views::inspector::Inspector loaded/>
        </ViewBox>
        <ViewBox view=AppView::Clinical>
            {clinical}
        </ViewBox>
    }
}
