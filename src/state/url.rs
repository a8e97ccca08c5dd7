//! Shareable views: the explorer's state lives in the page URL's query string, so that a copied URL,
//! opened in a fresh browser, restores the same view and the same numbers.
//!
//! | key | value |
//! | --- | --- |
//! | `bundle` | the bundle's URL (kept as given; absent for the default bundle) |
//! | `id` | the id of the bundle the view was made for (a view is applied only to that bundle) |
//! | `view` | the view shown ([`AppView`]: `overview`, `scores`, `compare`, `analyses`, `rationale`, `cases`, `clinical`, `import`, `pilot`) or the section / panel in focus inside it (`reweight`, `atlas`, `atlas-c`, `rq2`, `clinical-case`, …; [`AppView::for_view_param`] names the view that holds it) |
//! | `case` | a response (cell index) for the case inspector to open; only in a copied case link — the open case is kept in the fragment, `#case=CELL` |
//! | `ccase` | the clinical case open in the Clinical view: `cfv:MODEL:QUESTION` or `dr:MODEL:QUESTION[:RUN]` (level ids; RUN names a run other than the first, [`crate::views::clinical::CaseKey`]) |
//! | `policy` | repeat policy key (`all_responses`, `first_repeat`, `unit_majority`) |
//! | `preset` | `equal`, `baseline`, `sweep`, `per_sweep` or `custom` |
//! | `sweep` | the sweep of the `sweep` preset |
//! | `w` (repeated) | `CONDITION:WEIGHT`, one per condition, as typed (custom preset) |
//! | `sw` (repeated) | `SWEEP:WEIGHT`, one per sweep (per-sweep preset) |
//! | `seed`, `reps` | seed and replicates of the statement-cluster bootstrap |
//! | `a`, `b` | the model pair of the Compare view (model ids; [`ComparePair`]) |
//! | `model`, `condition` (repeated) | the models / conditions shown, when some are hidden |
//! | `pd` (repeated), `pb`, `pm` (repeated), `pmae`, `pinv`, `ppair`, `ppct` | the Plan view: designs, budget per model, models scored, targets ([`PlanQuery`]) |
//!
//! Only these keys are written (anything else in the query is dropped), so no key, token or other
//! secret is ever put into the URL by the app. The page writes the URL with
//! `History.replaceState` (no navigation, no history entry per change: typing a weight, a policy,
//! a seed, hiding a model, opening a case), except that a view switch ([`crate::state::nav::Navigator::go`])
//! pushes one history entry (`pushState`, after writing the held-back state into the entry it
//! leaves, [`flush_pending_url`]), so the browser's back / forward go between views; `popstate`
//! ([`EntryRestorer::apply`]) reads the restored URL with the parser of a fresh page load and applies all of
//! it — view, weights, policy, seed, shown models and conditions, clinical case — the app has no router: the
//! whole UI is one page whose state is signals, and leptos_router's `query_signal` would need the App
//! wrapped in a `<Router>` and a navigation per weight change (see ARCHITECTURE.md).
//!
//! This module is the one owner of the address bar: [`replace_url`] writes the query,
//! [`replace_fragment`] the fragment (both through one writer), and [`page_link`] / [`absolute_link`]
//! build every shareable link from a [`ViewState`]. [`ViewState::from_query`] and
//! [`ViewState::to_query`] are pure (tested in `tests/web_url_state.rs`); [`restore`] and the writers
//! touch the browser.
//! The component codec ([`decode_component`], [`encode_component`], [`parse_query`]) is
//! [`atlas_core::query`], the one the case inspector's link reader ([`atlas_core::cases::link_case`])
//! uses too.

pub use atlas_core::query::{decode_component, encode_component, parse_query};
use atlas_core::RepeatPolicy;
use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::state::AtlasState;

/// The views of the app shell, one shown at a time (the others stay mounted, hidden), each with its
/// own `?view=` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppView {
    /// `overview`: what the bundle is (metadata; the headline goes here).
    Overview,
    /// `scores`: repeat policy, Selection BER table and chart, re-weighting, atlas panels (c) and (d).
    Scores,
    /// `compare`: is model A really less biased than model B? Paired tests, all pairs, rank bands.
    Compare,
    /// `analyses`: RQ1 / RQ2 with atlas panels (a), (b), (e), (f) and the coverage curve.
    Analyses,
    /// `plan`: plan an audit (issue 17 §2; `atlas_core::plan`): designs, budget, targets.
    Plan,
    /// `rationale`: Selection vs Rationale (RQ3) with atlas panels (g) and (h).
    Rationale,
    /// `cases`: the case inspector.
    Cases,
    /// `clinical`: the Clinical view (only for bundles with clinical data).
    Clinical,
    /// `import`: turning a results file into a bundle.
    Import,
    /// `pilot`: pilot runs, judge coding and the clinical pilot.
    Pilot,
}

impl AppView {
    /// Every view, in navigation order.
    pub const ALL: [AppView; 10] = [
        AppView::Overview,
        AppView::Scores,
        AppView::Compare,
        AppView::Analyses,
        AppView::Plan,
        AppView::Rationale,
        AppView::Cases,
        AppView::Clinical,
        AppView::Import,
        AppView::Pilot,
    ];

    /// The `view=` key (also the view container's `data-shell-view`).
    pub fn key(self) -> &'static str {
        match self {
            AppView::Overview => "overview",
            AppView::Scores => "scores",
            AppView::Compare => "compare",
            AppView::Analyses => "analyses",
            AppView::Plan => "plan",
            AppView::Rationale => "rationale",
            AppView::Cases => "cases",
            AppView::Clinical => "clinical",
            AppView::Import => "import",
            AppView::Pilot => "pilot",
        }
    }

    /// The short navigation label (plain language; the paper term is in the view's own titles).
    pub fn label(self) -> &'static str {
        match self {
            AppView::Overview => "Overview",
            AppView::Scores => "Scores & re-weighting",
            AppView::Compare => "Compare models",
            AppView::Analyses => "Analyses (RQ1, RQ2)",
            AppView::Plan => "Plan an audit",
            AppView::Rationale => "Selection vs Rationale",
            AppView::Cases => "Cases",
            AppView::Clinical => "Clinical",
            AppView::Import => "Import",
            AppView::Pilot => "Pilot",
        }
    }

    /// The view a `view=` value opens: a view key itself, or the id of a section or panel the app
    /// writes there (links made before the shell: `reweight`, `atlas`, `atlas-c`, `rq2`,
    /// `clinical-case`, …) mapped to the view that now holds it. `None` for a value naming nothing
    /// known (the caller then looks the id up in the page, [`focus_view`]).
    pub fn for_view_param(value: &str) -> Option<AppView> {
        if let Some(v) = AppView::ALL.into_iter().find(|v| v.key() == value) {
            return Some(v);
        }
        let view =
            match value {
                "metadata" | "load" | "headline" => AppView::Overview,
                "reweight" | "atlas" | "atlas-c" | "atlas-d" | "policy" | "ber-table"
                | "ber-chart" => AppView::Scores,
                "atlas-a" | "atlas-b" | "atlas-e" | "atlas-f" | "atlas-coverage"
                | "atlas-analyses" => AppView::Analyses,
                "atlas-g" | "atlas-h" | "atlas-rationale" => AppView::Rationale,
                "inspector" | "case-view" => AppView::Cases,
                "bundle-judge" | "clinical-pilot" => AppView::Pilot,
                v if v.starts_with("rq1") || v.starts_with("rq2") => AppView::Analyses,
                v if v.starts_with("rq3") => AppView::Rationale,
                v if v.starts_with("compare") => AppView::Compare,
                v if v.starts_with("clinical") => AppView::Clinical,
                v if v.starts_with("import") => AppView::Import,
                v if v.starts_with("pilot") => AppView::Pilot,
                v if v.starts_with("plan-") => AppView::Plan,
                _ => return None,
            };
        Some(view)
    }

    /// The view a page opened with `query` (with or without `?`) and `fragment` (with or without
    /// `#`) starts on: its `view=` ([`for_view_param`](Self::for_view_param)); else `cases` for a
    /// case link (`case=` or `#case=`), `clinical` for a clinical case (`ccase=`); else `overview`.
    pub fn initial(query: &str, fragment: &str) -> AppView {
        let v = ViewState::from_query(query);
        if let Some(view) = v.view.as_deref().and_then(AppView::for_view_param) {
            return view;
        }
        let fragment = fragment.trim_start_matches('#');
        if v.case.is_some() || fragment.starts_with("case=") {
            AppView::Cases
        } else if v.ccase.is_some() {
            AppView::Clinical
        } else {
            AppView::Overview
        }
    }
}

/// `query` (with or without `?`, already encoded) with its `view=` set to `view`: the other keys stay
/// in their order, encoded as they were; `view=` takes the place of the first old one, or comes last.
/// Returns the query without `?`.
pub fn with_view(query: &str, view: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut placed = false;
    for part in query.trim_start_matches('?').split('&') {
        if part.is_empty() {
            continue;
        }
        if part == "view" || part.starts_with("view=") {
            if !placed {
                parts.push(format!("view={}", encode_component(view)));
                placed = true;
            }
        } else {
            parts.push(part.to_string());
        }
    }
    if !placed {
        parts.push(format!("view={}", encode_component(view)));
    }
    parts.join("&")
}

/// Everything a shareable URL holds (see the module docs for the keys).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ViewState {
    /// `bundle`: the bundle URL as given in the link.
    pub bundle: Option<String>,
    /// `id`: the bundle id the view belongs to.
    pub bundle_id: Option<String>,
    /// `view`: the section or panel in focus.
    pub view: Option<String>,
    /// `case`: the response (cell index) a case link opens in the inspector.
    pub case: Option<usize>,
    /// `ccase`: the clinical case open in the Clinical view (`cfv:MODEL:QUESTION`, `dr:MODEL:QUESTION[:RUN]`).
    pub ccase: Option<String>,
    /// `policy`: the repeat policy.
    pub policy: Option<RepeatPolicy>,
    /// `preset`: `equal`, `baseline`, `sweep`, `per_sweep`, `custom`.
    pub preset: Option<String>,
    /// `sweep`: the sweep of the one-sweep preset.
    pub sweep: Option<String>,
    /// `w`: condition id and weight text, in bundle order.
    pub weights: Vec<(String, String)>,
    /// `sw`: sweep name and weight text, in sweep order.
    pub sweep_weights: Vec<(String, String)>,
    /// `seed`: the bootstrap seed.
    pub seed: Option<u64>,
    /// `reps`: the bootstrap replicates.
    pub reps: Option<usize>,
    /// `model`: the models shown (`None` = all).
    pub models: Option<Vec<String>>,
    /// `condition`: the conditions shown (`None` = all).
    pub conditions: Option<Vec<String>>,
    /// `a`: model A of the Compare view's pair (a model id).
    pub compare_a: Option<String>,
    /// `b`: model B of the Compare view's pair.
    pub compare_b: Option<String>,
    /// The Plan view's settings (`pd`, `pb`, `pm`, `pmae`, `pinv`, `ppair`, `ppct`).
    pub plan: PlanQuery,
}

/// The Plan view's settings in the URL (issue 17 §2), as typed. Keys: `pd` (repeated) a design
/// (`concentrated`, `srs`, `stratified`, `balanced`, `coverage:K`), `pb` the budget per model, `pm`
/// (repeated) a model scored (absent = all), `pmae` the MAE target (pp), `pinv` the inversion target
/// (%), `ppair` the pair `A,B`, `ppct` the pair target (%).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanQuery {
    /// `pd`: designs (empty = the default three).
    pub designs: Vec<String>,
    /// `pb`: budget per model.
    pub budget: Option<usize>,
    /// `pm`: models (`None` = all).
    pub models: Option<Vec<String>>,
    /// `pmae`: score MAE target, pp.
    pub mae: Option<String>,
    /// `pinv`: inversion-rate target, %.
    pub inversions: Option<String>,
    /// `ppair`: `A,B`.
    pub pair: Option<String>,
    /// `ppct`: the pair's target, % of audits.
    pub pair_pct: Option<String>,
}

/// The Plan view's settings the URL holds now (context, provided by [`restore`] from the opening
/// URL; the Plan view sets it, the URL writer of the loaded bundle puts it into the query).
#[derive(Clone, Copy)]
pub struct PlanUrl(pub RwSignal<PlanQuery>);

/// The Plan view's settings of a history entry that back / forward restored (context, set by
/// [`EntryRestorer::apply`]; the Plan view applies them to its form and clears this).
#[derive(Clone, Copy)]
pub struct PlanRestore(pub RwSignal<Option<PlanQuery>>);

impl ViewState {
    /// Reads a query string; unknown keys and malformed values are ignored (a bad link shows the
    /// defaults for what it could not say, never an error page).
    pub fn from_query(query: &str) -> Self {
        let mut v = ViewState::default();
        for (key, value) in parse_query(query) {
            let pair = |value: &str| {
                value
                    .rsplit_once(':')
                    .map(|(a, b)| (a.to_string(), b.to_string()))
            };
            match key.as_str() {
                "bundle" if !value.is_empty() => v.bundle = Some(value),
                "id" if !value.is_empty() => v.bundle_id = Some(value),
                "view" if !value.is_empty() => v.view = Some(value),
                "case" => v.case = value.parse().ok(),
                "ccase" if !value.is_empty() => v.ccase = Some(value),
                "policy" => v.policy = RepeatPolicy::from_key(&value),
                "preset" if !value.is_empty() => v.preset = Some(value),
                "sweep" => v.sweep = Some(value),
                "w" => v.weights.extend(pair(&value)),
                "sw" => v.sweep_weights.extend(pair(&value)),
                "seed" => v.seed = value.parse().ok(),
                "reps" => v.reps = value.parse().ok(),
                "model" => v.models.get_or_insert_with(Vec::new).push(value),
                "condition" => v.conditions.get_or_insert_with(Vec::new).push(value),
                "a" if !value.is_empty() => v.compare_a = Some(value),
                "b" if !value.is_empty() => v.compare_b = Some(value),
                "pd" if !value.is_empty() => v.plan.designs.push(value),
                "pb" => v.plan.budget = value.parse().ok(),
                "pm" => v.plan.models.get_or_insert_with(Vec::new).push(value),
                "pmae" if !value.is_empty() => v.plan.mae = Some(value),
                "pinv" if !value.is_empty() => v.plan.inversions = Some(value),
                "ppair" if !value.is_empty() => v.plan.pair = Some(value),
                "ppct" if !value.is_empty() => v.plan.pair_pct = Some(value),
                _ => {}
            }
        }
        v
    }

    /// The query string (without `?`) in a fixed key order; empty when there is nothing to say.
    pub fn to_query(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut put = |k: &str, v: &str| parts.push(format!("{k}={}", encode_component(v)));
        if let Some(b) = &self.bundle {
            put("bundle", b);
        }
        if let Some(id) = &self.bundle_id {
            put("id", id);
        }
        if let Some(view) = &self.view {
            put("view", view);
        }
        if let Some(case) = self.case {
            put("case", &case.to_string());
        }
        if let Some(c) = &self.ccase {
            put("ccase", c);
        }
        if let Some(p) = self.policy {
            put("policy", p.key());
        }
        if let Some(p) = &self.preset {
            put("preset", p);
        }
        if let Some(s) = &self.sweep {
            put("sweep", s);
        }
        for (c, w) in &self.weights {
            put("w", &format!("{c}:{w}"));
        }
        for (s, w) in &self.sweep_weights {
            put("sw", &format!("{s}:{w}"));
        }
        if let Some(seed) = self.seed {
            put("seed", &seed.to_string());
        }
        if let Some(reps) = self.reps {
            put("reps", &reps.to_string());
        }
        for m in self.models.iter().flatten() {
            put("model", m);
        }
        for c in self.conditions.iter().flatten() {
            put("condition", c);
        }
        if let Some(a) = &self.compare_a {
            put("a", a);
        }
        if let Some(b) = &self.compare_b {
            put("b", b);
        }
        let p = &self.plan;
        for d in &p.designs {
            put("pd", d);
        }
        if let Some(b) = p.budget {
            put("pb", &b.to_string());
        }
        for m in p.models.iter().flatten() {
            put("pm", m);
        }
        for (k, v) in [
            ("pmae", &p.mae),
            ("pinv", &p.inversions),
            ("ppair", &p.pair),
            ("ppct", &p.pair_pct),
        ] {
            if let Some(v) = v {
                put(k, v);
            }
        }
        parts.join("&")
    }
}

/// The view of the URL the page was opened with, until a bundle it belongs to takes it (context).
#[derive(Clone, Copy)]
pub struct InitialView(pub StoredValue<Option<ViewState>>);

impl InitialView {
    /// Takes the opening view if it belongs to the bundle `id` (or names no bundle id). A view for
    /// another bundle stays for a later load and is returned as `Err(its bundle id)`.
    pub fn take_for(&self, id: &str) -> Result<Option<ViewState>, String> {
        let mut out = Ok(None);
        self.0.update_value(|v| {
            let matches = v
                .as_ref()
                .is_some_and(|v| v.bundle_id.as_deref().is_none_or(|b| b == id));
            if matches {
                out = Ok(v.take());
            } else if let Some(other) = v.as_ref().and_then(|v| v.bundle_id.clone()) {
                out = Err(other);
            }
        });
        out
    }
}

/// The view of the app shell shown now (context, provided by [`restore`]); the navigation sets it,
/// every view container is hidden unless it is the one shown.
#[derive(Clone, Copy)]
pub struct CurrentView(pub RwSignal<AppView>);

thread_local! {
    /// The address the page was opened with: `(query, fragment)`, each with its `?` / `#`.
    static OPENING: std::cell::OnceCell<(String, String)> = const { std::cell::OnceCell::new() };
}

/// The page's query and fragment as it was opened (`("?case=3&…", "#…")`; empty strings where there
/// are none), read once — by [`restore`], before the URL writer rewrites the address — and the same
/// afterwards. A view downloaded on demand ([`crate::on_demand`]) mounts after that rewrite, so the
/// opening link's case (the inspector) is read from here, not from `location`.
pub fn opening_address() -> (String, String) {
    OPENING.with(|o| {
        o.get_or_init(|| {
            let location = web_sys::window().map(|w| w.location());
            let read = |f: fn(&web_sys::Location) -> Result<String, JsValue>| {
                location
                    .as_ref()
                    .and_then(|l| f(l).ok())
                    .unwrap_or_default()
            };
            (
                read(web_sys::Location::search),
                read(web_sys::Location::hash),
            )
        })
        .clone()
    })
}

thread_local! {
    /// [`CurrentView`]'s signal, for [`focus_view`] (called from timers, outside any component).
    static SHOWN: std::cell::Cell<Option<RwSignal<AppView>>> = const { std::cell::Cell::new(None) };
}

/// Shows the view whose container (`[data-shell-view]`) holds `el`; `true` if that changed the view.
fn show_view_holding(el: &web_sys::Element) -> bool {
    let Some(view) = el
        .closest("[data-shell-view]")
        .ok()
        .flatten()
        .and_then(|c| c.get_attribute("data-shell-view"))
        .and_then(|k| AppView::for_view_param(&k))
    else {
        return false;
    };
    SHOWN.with(|s| match s.get() {
        Some(shown) if shown.try_get_untracked() != Some(view) => {
            shown.try_set(view);
            true
        }
        _ => false,
    })
}

/// The page's query string (`location.search`), empty where unavailable.
pub fn current_query() -> String {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .unwrap_or_default()
}

/// At start: reads the URL's view, applies its repeat policy, provides [`CurrentView`] (the view the
/// URL opens, [`AppView::initial`]), [`InitialView`], [`ClinicalCase`] and [`RestoredEntry`] as
/// context and starts tracking which section is in focus (`view`).
pub fn restore(state: AtlasState) {
    // Kept before the URL writer changes the address: the views downloaded later read it.
    let _ = opening_address();
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    let shown = RwSignal::new(AppView::initial(&current_query(), &hash));
    provide_context(CurrentView(shown));
    SHOWN.with(|s| s.set(Some(shown)));
    let view = ViewState::from_query(&current_query());
    if let Some(p) = view.policy {
        state.policy.set(p);
    }
    let focused = RwSignal::new(view.view.clone());
    provide_context(FocusedView(focused));
    provide_context(ClinicalCase(
        RwSignal::new(view.ccase.clone()),
        view.bundle_id.clone(),
    ));
    provide_context(ComparePair(RwSignal::new(ComparePair::of(&view))));
    provide_context(PlanUrl(RwSignal::new(view.plan.clone())));
    provide_context(PlanRestore(RwSignal::new(None)));
    provide_context(InitialView(StoredValue::new(Some(view))));
    provide_context(RestoredEntry(RwSignal::new(None)));
    track_focus(focused);
}

/// The history entry that back / forward just restored (context, provided by [`restore`]): the whole
/// [`ViewState`] of its URL, read by [`ViewState::from_query`] exactly as a fresh page load reads its
/// URL. The loaded bundle's re-weighting model ([`crate::state::reweighting::ExplorerModel`]) applies
/// it — repeat policy, weights, seed and replicates, models and conditions shown — and clears it; the
/// view and the clinical case are applied by [`EntryRestorer::apply`].
#[derive(Clone, Copy)]
pub struct RestoredEntry(pub RwSignal<Option<ViewState>>);

/// What `popstate` restores (the page's contexts, taken once where they are provided, since the
/// `popstate` listener runs outside any component).
#[derive(Clone)]
pub struct EntryRestorer {
    shown: Option<CurrentView>,
    focused: Option<FocusedView>,
    case: Option<ClinicalCase>,
    restored: Option<RestoredEntry>,
    pair: Option<ComparePair>,
    plan: Option<(PlanUrl, PlanRestore)>,
}

impl EntryRestorer {
    /// The restorer over the contexts [`restore`] provided.
    pub fn from_context() -> Self {
        EntryRestorer {
            shown: use_context::<CurrentView>(),
            focused: use_context::<FocusedView>(),
            case: use_context::<ClinicalCase>(),
            restored: use_context::<RestoredEntry>(),
            pair: use_context::<ComparePair>(),
            plan: use_context::<PlanUrl>().zip(use_context::<PlanRestore>()),
        }
    }

    /// On `popstate`: reads the restored URL (`search`, `hash`) through the fresh page load's parser
    /// ([`ViewState::from_query`], [`AppView::initial`]) and applies all of it: the view shown, the
    /// section in focus, the clinical case, the Compare pair, the Plan view's settings, and (through
    /// [`RestoredEntry`]) the weights and policy. Returns the view shown.
    pub fn apply(&self, search: &str, hash: &str) -> AppView {
        // A field keeps what was typed while it has the focus (`ui::number_field`): let go of it, so
        // the fields show the restored entry's values.
        if let Some(active) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.active_element())
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            active.blur().ok();
        }
        let entry = ViewState::from_query(search);
        let view = AppView::initial(search, hash);
        if let Some(shown) = self.shown {
            shown.0.try_set(view);
        }
        if let Some(focused) = self.focused {
            focused
                .0
                .try_set(entry.view.clone().or(Some(view.key().to_string())));
        }
        if let Some(case) = &self.case {
            if case.0.try_get_untracked().flatten() != entry.ccase {
                case.0.try_set(entry.ccase.clone());
            }
        }
        if let Some(pair) = self.pair {
            let restored = ComparePair::of(&entry);
            if pair.0.try_get_untracked().flatten() != restored {
                pair.0.try_set(restored);
            }
        }
        if let Some((url, restore)) = self.plan {
            if url.0.try_get_untracked().as_ref() != Some(&entry.plan) {
                url.0.try_set(entry.plan.clone());
                restore.0.try_set(Some(entry.plan.clone()));
            }
        }
        if let Some(restored) = self.restored {
            restored.0.try_set(Some(entry));
        }
        view
    }
}

thread_local! {
    /// Writes the URL state that the (throttled) URL writer holds back, now ([`set_pending_writer`]).
    static FLUSH: std::cell::RefCell<Option<Box<dyn Fn()>>> = const { std::cell::RefCell::new(None) };
}

/// Registers `flush`: the function that writes at once whatever state the throttled URL writer of the
/// loaded bundle still holds back (replacing the one registered before, e.g. the previous bundle's).
pub fn set_pending_writer(flush: impl Fn() + 'static) {
    FLUSH.with(|f| *f.borrow_mut() = Some(Box::new(flush)));
}

/// Writes the held-back URL state into the current history entry now (before a new entry is pushed,
/// so that the entry left behind keeps the weights it was left with, not those of 200 ms before).
pub fn flush_pending_url() {
    FLUSH.with(|f| {
        if let Some(flush) = f.borrow().as_ref() {
            flush();
        }
    });
}

/// The clinical case open in the Clinical view (`ccase=`): set from the opening link, then by the view
/// whenever a case is opened; the URL writer puts it into the query. The second field is the bundle id
/// the opening link named (`id=`), if any.
#[derive(Clone)]
pub struct ClinicalCase(pub RwSignal<Option<String>>, pub Option<String>);

/// The model pair chosen in the Compare view (`a=`, `b=`; model ids, A first): set from the opening
/// link and by back / forward ([`EntryRestorer::apply`]), then by the view's pickers; the URL writer
/// puts it into the query. `None` until a link or the reader names one (the view then shows its
/// default pair).
#[derive(Clone, Copy)]
pub struct ComparePair(pub RwSignal<Option<(String, String)>>);

impl ComparePair {
    /// The pair a URL's view names: both `a=` and `b=`, else none.
    pub fn of(view: &ViewState) -> Option<(String, String)> {
        view.compare_a.clone().zip(view.compare_b.clone())
    }
}

/// The `bundle=` value of a link to a view of `loaded`: its URL, or `None` for the default bundle and
/// for a local file (which a link cannot name).
pub fn bundle_param(loaded: &crate::state::Loaded) -> Option<String> {
    let page = web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default();
    let default = crate::browser::loader::resolve_url(crate::state::DEFAULT_BUNDLE, &page);
    match &loaded.base_url {
        Some(_) if Some(&loaded.source) != default.as_ref() => Some(loaded.source.clone()),
        _ => None,
    }
}

/// The section or panel the reader last focused or clicked (an element id), for `view=`.
#[derive(Clone, Copy)]
pub struct FocusedView(pub RwSignal<Option<String>>);

/// Follows `focusin` and `pointerdown` on the page: the nearest element with `data-view`, or a section
/// or analysis panel with an id, becomes the focused view.
fn track_focus(focused: RwSignal<Option<String>>) {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let handler = Closure::<dyn FnMut(web_sys::Event)>::new(move |event: web_sys::Event| {
        let Some(target) = event
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        else {
            return;
        };
        let Ok(Some(el)) = target.closest("[data-view], section[id], .analysis-panel[id]") else {
            return;
        };
        let id = el
            .get_attribute("data-view")
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| el.id());
        if !id.is_empty() && focused.try_get_untracked().flatten().as_deref() != Some(&id) {
            focused.try_set(Some(id));
        }
    });
    for event in ["focusin", "pointerdown"] {
        let _ = document.add_event_listener_with_callback(event, handler.as_ref().unchecked_ref());
    }
    // The listener lives as long as the page.
    handler.forget();
}

/// Replaces the page URL's query with `view` (no navigation, no new history entry); the path and the
/// fragment stay. Returns the new URL.
pub fn replace_url(view: &ViewState) -> Option<String> {
    write_address(Some(&view.to_query()), None)
}

/// Replaces the page URL's fragment with `fragment` (without `#`; `None` removes it); the path and the
/// query stay. Returns the new URL.
pub fn replace_fragment(fragment: Option<&str>) -> Option<String> {
    write_address(None, Some(fragment))
}

/// The one writer of the address bar: the path stays; `query` (without `?`) and `fragment` (without
/// `#`) replace the current ones where given. Writes with `History.replaceState` only when the address
/// changes; returns the page's URL afterwards.
fn write_address(query: Option<&str>, fragment: Option<Option<&str>>) -> Option<String> {
    let window = web_sys::window()?;
    let location = window.location();
    let path = location.pathname().ok()?;
    let search = location.search().unwrap_or_default();
    let hash = location.hash().unwrap_or_default();
    let new_search = match query {
        Some("") => String::new(),
        Some(q) => format!("?{q}"),
        None => search.clone(),
    };
    let new_hash = match fragment {
        Some(Some(f)) => format!("#{f}"),
        Some(None) => String::new(),
        None => hash.clone(),
    };
    let url = format!("{path}{new_search}{new_hash}");
    if format!("{path}{search}{hash}") != url {
        window
            .history()
            .ok()?
            .replace_state_with_url(&JsValue::NULL, "", Some(&url))
            .ok()?;
    }
    location.href().ok()
}

/// A link to `view` on this page, relative to the origin: `PATH?QUERY`.
pub fn page_link(view: &ViewState) -> String {
    let path = web_sys::window()
        .and_then(|w| w.location().pathname().ok())
        .unwrap_or_default();
    format!("{path}?{}", view.to_query())
}

/// The absolute link to `view` on this page: `ORIGIN` + [`page_link`] (just the page link where the
/// origin is unknown).
pub fn absolute_link(view: &ViewState) -> String {
    let link = page_link(view);
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .map_or_else(|| link.clone(), |o| format!("{o}{link}"))
}

/// Brings the element `id` into view and focuses it (or its first heading) after the page has drawn;
/// first shows the app-shell view that holds it (so a link naming a panel opens that panel's view).
/// An element of a view still downloading ([`crate::on_demand`]) is looked for again every 100 ms,
/// for at most 30 s.
pub fn focus_view(id: String) {
    focus_view_after(id, 300, 300);
}

/// [`focus_view`] after `ms` milliseconds (again, shortly, when it had to switch the view first or
/// the element is not there yet; `tries` left for that).
fn focus_view_after(id: String, ms: i32, tries: u32) {
    let run = Closure::once_into_js(move || {
        let Some(document) = web_sys::window().and_then(|w| w.document()) else {
            return;
        };
        let Some(el) = document.get_element_by_id(&id) else {
            if tries > 0 {
                focus_view_after(id, 100, tries - 1);
            }
            return;
        };
        if show_view_holding(&el) {
            // The view was hidden: scroll and focus once it is drawn.
            focus_view_after(id, 60, tries.saturating_sub(1));
            return;
        }
        el.scroll_into_view();
        let target = el.query_selector("h2, h3, h4").ok().flatten().unwrap_or(el);
        if let Ok(html) = target.dyn_into::<web_sys::HtmlElement>() {
            if html.get_attribute("tabindex").is_none() {
                let _ = html.set_attribute("tabindex", "-1");
            }
            let _ = html.focus();
        }
    });
    if let Some(window) = web_sys::window() {
        let _ =
            window.set_timeout_with_callback_and_timeout_and_arguments_0(run.unchecked_ref(), ms);
    }
}
