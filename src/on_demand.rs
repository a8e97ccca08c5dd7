//! The views whose code is downloaded on demand (issue 15, item 6: the first wasm holds the shell and
//! the Overview only; the app wasm ≤ 1.5 MB raw and ≤ 500 kB gzipped).
//!
//! Each view below is one function. In the shipped build (the app crate's `split` feature, which
//! `index.html` turns on for the wasm32 build, with `scripts/split-app.sh` run by Trunk after its build)
//! each function is a split point of `wasm-split` (Leptos re-exports `wasm_split_helpers`): its code,
//! and the code only it uses, goes into a wasm module of its own that the page fetches the first time
//! the function is called; code shared by several of them goes into shared chunks. Without the
//! feature (native builds, the wasm tests, a plain `cargo build`) the functions are plain calls and
//! there is one wasm.
//!
//! [`OnDemand`] mounts such a view: when it is first shown — or, for the views a reader goes to first
//! (Scores, Analyses, Selection vs Rationale, Cases), as soon as the Overview has been drawn, so that
//! they are usually there before they are asked for ([`Start::Soon`]). A module that cannot be
//! downloaded (offline, a server error) gives a message with a Retry button in that view; nothing
//! else on the page changes.
//!
//! Which views are where, and the sizes: `docs/benchmarks.md` ("The code split").

use std::sync::Arc;

use leptos::prelude::*;

use crate::state::nav::Navigator;
use crate::state::url::AppView;
use crate::state::Loaded;

/// A view module could not be downloaded or instantiated (the network failed, the server answered
/// with an error, or the files of another deployment were mixed in). Shown in the view, with Retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewLoadError;

#[cfg(all(feature = "split", target_arch = "wasm32"))]
impl From<leptos::wasm_split::SplitLoaderError> for ViewLoadError {
    fn from(_: leptos::wasm_split::SplitLoaderError) -> Self {
        ViewLoadError
    }
}

/// Declares one view loaded on demand: a function `$name` (the split point, its body the view) and
/// an `async` function `$public` that downloads its module first where the build is split.
macro_rules! on_demand {
    ($name:ident, $public:ident, ($($arg:ident: $ty:ty),*) => $body:expr) => {
        #[cfg_attr(
            all(feature = "split", target_arch = "wasm32"),
            leptos::wasm_split::wasm_split($name, wasm_split_path = ::leptos::wasm_split, fallible)
        )]
        fn $name($($arg: $ty),*) -> Result<AnyView, ViewLoadError> {
            Ok($body)
        }

        #[doc = concat!("The view `", stringify!($name), "`, its module downloaded first where the build is split.")]
        pub async fn $public($($arg: $ty),*) -> Result<AnyView, ViewLoadError> {
            #[cfg(all(feature = "split", target_arch = "wasm32"))]
            {
                $name($($arg),*).await
            }
            #[cfg(not(all(feature = "split", target_arch = "wasm32")))]
            {
                $name($($arg),*)
            }
        }
    };
}

on_demand!(view_scores, scores, (loaded: Arc<Loaded>) => scores_body(loaded));
on_demand!(view_analyses, analyses, (loaded: Arc<Loaded>) => view! {
    // The atlas panels of each run sit right after its results (issue 15 item 1).
    <crate::views::analyses::Analyses
        loaded
        rq1_atlas=|| view! { <crate::views::atlas::EvidenceAtlas group=crate::views::atlas::AtlasGroup::Rq1/> }
        rq2_atlas=|| view! { <crate::views::atlas::EvidenceAtlas group=crate::views::atlas::AtlasGroup::Rq2/> }
        across_atlas=|| view! { <crate::views::atlas::EvidenceAtlas group=crate::views::atlas::AtlasGroup::Across/> }
    />
}.into_any());
on_demand!(view_rationale, rationale, (loaded: Arc<Loaded>) => view! {
    <crate::views::rq3::Rq3Panel loaded/>
    <crate::views::atlas::EvidenceAtlas group=crate::views::atlas::AtlasGroup::Rationale/>
}.into_any());
on_demand!(view_cases, cases, (loaded: Arc<Loaded>) => view! {
    <crate::views::inspector::Inspector loaded/>
}.into_any());
on_demand!(view_compare, compare, () => view! { <crate::views::compare::CompareView/> }.into_any());
on_demand!(view_plan, plan, (loaded: Arc<Loaded>) => view! {
    <crate::views::plan::PlanView loaded/>
}.into_any());
on_demand!(view_clinical, clinical, (loaded: Arc<Loaded>) => view! {
    <crate::views::clinical::ClinicalView loaded/>
}.into_any());
on_demand!(view_import, import, () => view! { <crate::views::import::ImportPanel/> }.into_any());
on_demand!(view_pilot, pilot, () => view! { <crate::pilot::panel::PilotPanel/> }.into_any());

/// The Scores view: repeat policy, the Selection BER table and chart, re-weighting, atlas (c)(d),
/// likelihood readouts.
fn scores_body(loaded: Arc<Loaded>) -> AnyView {
    use atlas_core::summary::summarize;
    use atlas_core::AbstainThreshold;
    let state = expect_context::<crate::state::AtlasState>();
    let for_summary = loaded.clone();
    // The default Abstain threshold, as `atlas stats`.
    let summary = Memo::new(move |_| {
        summarize(
            &for_summary.audit,
            state.policy.get(),
            AbstainThreshold::default(),
        )
    });
    view! {
        <crate::views::overview::PolicyPanel/>
        <crate::views::overview::BerTableView loaded=loaded.clone() summary/>
        <crate::views::overview::BerChart loaded=loaded.clone() summary/>
        <crate::views::explorer::Reweighting/>
        <crate::views::atlas::EvidenceAtlas group=crate::views::atlas::AtlasGroup::Weights/>
        <crate::views::likelihood::LikelihoodPanel loaded/>
    }
    .into_any()
}

/// When an [`OnDemand`] view starts downloading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// When the view is first shown.
    OnShow,
    /// When it is first shown or once the first view has been drawn ([`SoonAfterFirstView`]),
    /// whichever comes first.
    Soon,
}

/// Set (context, by [`crate::app`]) shortly after the loaded bundle's first view has been drawn:
/// the [`Start::Soon`] views start downloading then.
#[derive(Clone, Copy)]
pub struct SoonAfterFirstView(pub RwSignal<bool>);

/// Mounts the view `load` resolves to inside `view`'s container: nothing until it starts (see
/// [`Start`]), then "Loading Compare models…" (the view's label) while its module downloads, then the view (kept from then
/// on). A failed download shows what failed and a Retry button; a retry downloads again.
#[component]
pub fn OnDemand<F, Fut>(view: AppView, start: Start, load: F) -> impl IntoView
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<AnyView, ViewLoadError>> + Send + 'static,
{
    let nav = Navigator::from_context();
    let soon = use_context::<SoonAfterFirstView>();
    let started = RwSignal::new(false);
    let attempt = RwSignal::new(0u32);
    Effect::new(move || {
        let shown = nav.current.get() == view;
        let early = start == Start::Soon && soon.is_some_and(|s| s.0.get());
        if (shown || early) && !started.get_untracked() {
            started.set(true);
        }
    });
    let load = Arc::new(load);
    move || {
        if !started.get() {
            return None;
        }
        attempt.track();
        let fut = load();
        Some(view! {
            <Suspense fallback=move || view! {
                <p class="view-loading" role="status" data-on-demand=view.key()>{format!("Loading {}…", view.label())}</p>
            }>
                {Suspend::new(async move {
                    match fut.await {
                        Ok(shown) => shown,
                        Err(ViewLoadError) => view! {
                            <div class="view-load-error" role="alert" data-on-demand=view.key()>
                                <p>
                                    <strong>{view.label()}</strong>
                                    " could not be downloaded (the app loads each view when it is first opened). "
                                    "Check the connection, then retry; the rest of the page is unchanged."
                                </p>
                                <button type="button" on:click=move |_| attempt.update(|n| *n += 1)>"Retry"</button>
                            </div>
                        }
                        .into_any(),
                    }
                })}
            </Suspense>
        })
    }
}
