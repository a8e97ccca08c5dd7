//! The Clinical view: a clinical perturbation audit (seed `001_…`, "Beyond Accuracy"; bundle layout in
//! `docs/clinical.md`) as the seed reports it, recomputed in the page from the bundle by
//! [`atlas_core::clinical::metrics::analyze`]. Shown for bundles with a `clinical` object.
//!
//! | part | seed |
//! | --- | --- |
//! | per-model profile: accuracy, CFV, answer change, mean EDD, flags per question, each with its unit and n | Table 5 |
//! | CFV by model, and by difficulty tier when the questions have one; Spearman difficulty–validity | Fig. 2, §4.2 |
//! | failure modes of invalid counterfactuals by model; the taxonomy over all models | Fig. 3, Table 6 |
//! | answer-change rate as a model × prefix heat map; a cell opens its non-robust cases | Fig. 4, §4.4 |
//! | direction of answer changes by model | Fig. 5, §4.5 |
//! | stereotype-flag categories; severity classes | Fig. 6, Table 7 |
//! | case views: valid / invalid counterfactual, robust / non-robust demographic case (FIELD / RECORDED) | Tables 1–4 |
//!
//! Every chart is an `atlas_charts::clinical` draw function in an atlas [`ChartPanel`] (hover and arrow
//! keys, table alternative, PNG / SVG / CSV), its data from [`ClinicalFigures`]; every table a core
//! `atlas_core::tables::Table` ([`table5`], [`table6`], [`table7`], the same layout `atlas clinical
//! stats` prints) shown by [`crate::ui::table::table_view`] (CSV from `Table::to_csv`); captions name
//! the bundle. The case views' data (which answers changed, flags, EDD, a counterfactual's result)
//! comes from `atlas_core::clinical::cases`. A case has a link
//! (`?id=BUNDLE&view=clinical-case&ccase=cfv:MODEL:QUESTION`, `bundle=` for a non-default bundle, see
//! [`crate::state::url`]) that opens it in a fresh page. Model texts (explanations, generated changes,
//! judge descriptions) are shown only after the bundle's content warning is acknowledged, and always as
//! text nodes, never as HTML.

use std::sync::Arc;

use atlas_charts::clinical::figures::ClinicalFigures;
use atlas_core::cases::level_id;
use atlas_core::clinical::cases::{
    cfv_result, changed_cases, conflict_words, counterfactual_of, option_text, options_line,
    outcome_explanation, plausibility_word, question_text, reanswer_unchanged, CaseKey, CaseKind,
    CfvResult, DrCase, Examples, VariantAnswer,
};
use atlas_core::clinical::metrics::{analyze, ClinicalReport};
use atlas_core::tables::clinical::{spearman_line, table5, table6, table7};
use atlas_core::Audit;
use leptos::prelude::*;

use crate::browser::clipboard::copy_then;
use crate::state::shards::{text_at, BundleShards, TextAt};
use crate::state::url::{
    absolute_link, bundle_param, page_link, ClinicalCase, FocusedView, ViewState,
};
use crate::state::{AtlasState, Loaded};
use crate::ui::chart::{ChartPanel, ChartSpec, Spec};
use crate::ui::format::level_label;

// ------------------------------------------------------------------------------------------ text

fn statement_attr(audit: &Audit, q: usize, key: &str) -> Option<String> {
    atlas_core::clinical::metrics::statement_attr(audit, q, key).map(str::to_string)
}

/// `text` cut to at most `max` characters, with `…` when cut.
fn excerpt(text: &str, max: usize) -> String {
    let t = text.trim();
    if t.chars().count() <= max {
        t.to_string()
    } else {
        let mut out: String = t.chars().take(max).collect();
        out.push('…');
        out
    }
}

// ------------------------------------------------------------------------------------------ view

/// Shared handles of the Clinical view.
#[derive(Clone)]
struct Ctx {
    loaded: Arc<Loaded>,
    report: Arc<ClinicalReport>,
    texts_allowed: Signal<bool>,
    shards: BundleShards,
    open: RwSignal<Option<CaseKey>>,
    /// The URL's `ccase=` and `view=` (contexts of [`crate::state::url`]).
    url_case: Option<ClinicalCase>,
    focused: Option<FocusedView>,
}

impl Ctx {
    /// Opens `key`: shows it, writes it into the URL (`ccase=`, `view=clinical-case`) and brings the case
    /// view into sight.
    fn open_case(&self, key: CaseKey) {
        if let Some(c) = &self.url_case {
            c.0.set(Some(key.value()));
        }
        if let Some(f) = self.focused {
            f.0.set(Some("clinical-case".into()));
        }
        self.open.set(Some(key));
        crate::state::url::focus_view("clinical-case".into());
    }

    /// The shareable view of `key` (its link is [`page_link`] / [`absolute_link`] of it).
    fn link_view(&self, key: &CaseKey) -> ViewState {
        ViewState {
            bundle: bundle_param(&self.loaded),
            bundle_id: Some(self.loaded.audit.metadata().id.clone()),
            view: Some("clinical-case".into()),
            ccase: Some(key.value()),
            ..ViewState::default()
        }
    }

    /// The text of `cell` as a view: hidden before the warning is acknowledged, loading, missing, or
    /// the text cut to `max` characters (as a text node).
    fn text(&self, cell: Option<usize>, max: usize) -> impl IntoView {
        let ctx = self.clone();
        move || {
            if !ctx.texts_allowed.get() {
                return hidden_text();
            }
            let Some(cell) = cell else {
                return view! { <span class="hint">"(no response)"</span> }.into_any();
            };
            let t = ctx
                .shards
                .with(|s| match text_at(&ctx.loaded.audit, s, cell) {
                    TextAt::Text(t) => Ok(excerpt(t, max)),
                    TextAt::NotLoaded(k) => Err((Some(k), "loading text…".to_string())),
                    TextAt::Loading => Err((None, "loading text…".to_string())),
                    TextAt::Failed(e) => Err((None, format!("text unavailable: {e}"))),
                    TextAt::Absent => {
                        Err((None, "(the bundle holds no text for this response)".into()))
                    }
                });
            match t {
                Ok(t) => view! { <span class="model-text">{t}</span> }.into_any(),
                Err((k, message)) => {
                    if let Some(k) = k {
                        ctx.shards.load(k);
                    }
                    view! { <span class="hint">{message}</span> }.into_any()
                }
            }
        }
    }

    /// A free text written by a model or judge (`change`, `description`, …): hidden before the warning is
    /// acknowledged, else as a text node.
    fn model_text(&self, text: Option<String>) -> impl IntoView {
        let allowed = self.texts_allowed;
        move || match (&text, allowed.get()) {
            (_, false) => hidden_text(),
            (Some(t), true) => view! { <span class="model-text">{t.clone()}</span> }.into_any(),
            (None, true) => view! { <span class="hint">"(not recorded)"</span> }.into_any(),
        }
    }
}

/// What stands in for a model text before the content warning is acknowledged.
fn hidden_text() -> AnyView {
    view! { <span class="hidden-text">"(model text hidden until the content warning is acknowledged)"</span> }
        .into_any()
}

/// The Clinical section of a bundle with a `clinical` object.
#[component]
pub fn ClinicalView(loaded: Arc<Loaded>) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let audit = &loaded.audit;
    let Some(clinical) = audit.file.clinical.clone() else {
        return ().into_any();
    };
    let report = Arc::new(analyze(audit));
    let warning = audit.metadata().content_warning.clone();
    let has_warning = warning.is_some();
    let texts_allowed = Signal::derive(move || !has_warning || state.warning_acknowledged.get());
    let ctx = Ctx {
        loaded: loaded.clone(),
        report: report.clone(),
        texts_allowed,
        shards: state.shards.for_bundle(&loaded),
        open: RwSignal::new(None),
        url_case: use_context::<ClinicalCase>(),
        focused: use_context::<FocusedView>(),
    };
    let bundle = audit.metadata().id.clone();
    let models = audit.model_ids();
    let questions: Vec<&str> = audit
        .levels(audit.statement_facet)
        .iter()
        .map(|l| l.id.as_str())
        .collect();
    let runs: Vec<&str> = audit
        .repeat_facet
        .map(|f| audit.levels(f).iter().map(|l| l.id.as_str()).collect())
        .unwrap_or_default();

    // The opening link's case (`ccase=`), if it is for this bundle. The URL's case is cleared when this
    // bundle's view goes (another bundle is opened), so a link's case is taken by the first bundle only.
    let notice = RwSignal::new(None::<String>);
    let url_case = ctx.url_case.clone();
    if let Some(c) = url_case.as_ref().map(|c| c.0) {
        on_cleanup(move || {
            c.try_set(None);
        });
    }
    let link_case = url_case.as_ref().and_then(|c| c.0.get_untracked());
    if let Some(value) = link_case {
        match url_case.as_ref().and_then(|c| c.1.clone()) {
            Some(other) if other != bundle => {
                notice.set(Some(format!("The link names clinical case {value:?} of bundle {other:?}; this is {bundle:?}, so no case was opened.")));
                if let Some(c) = &url_case {
                    c.0.set(None);
                }
            }
            _ => match CaseKey::parse(&value, &models, &questions, &runs) {
                Ok(key) => {
                    let ok = key.kind == CaseKind::Dr
                        || counterfactual_of(&clinical, &key.model, &key.question).is_some();
                    if ok {
                        ctx.open.set(Some(key));
                        crate::state::url::focus_view("clinical-case".into());
                    } else {
                        notice.set(Some(format!("The link names the counterfactual of {} on {}, but this bundle records none.", key.model, key.question)));
                    }
                }
                Err(e) => notice.set(Some(format!(
                    "The link's clinical case could not be opened: {e}."
                ))),
            },
        }
    }

    let figures = ClinicalFigures::new(audit, &report);
    let spec = |s: Result<ChartSpec, String>| -> Spec { Memo::new(move |_| s.clone()) };
    let why = |w: atlas_charts::clinical::figures::NotDrawn| w.to_string();
    let heat_cells = figures.heat_cells.clone();
    let picked = RwSignal::new(None::<(usize, usize)>);
    let on_heat = Callback::new(move |i: usize| {
        if let Some(&cell) = heat_cells.get(i) {
            picked.set(Some(cell));
            crate::state::url::focus_view("clinical-cell-cases".into());
        }
    });
    let spearman_line = spearman_line(&report);
    let mut profile = table5(audit, &report);
    profile.caption.push_str(" · computed in this page");
    let examples = Examples::find(audit, &report);
    let count =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let sizes = [
        count(models.len(), "model", "models"),
        count(questions.len(), "question", "questions"),
        count(
            audit.facet_len(audit.condition_facet),
            "variant",
            "variants",
        ),
        count(audit.facet_len(audit.repeat_facet), "run", "runs"),
    ]
    .join(" × ");

    let content_warning = warning.map(|w| {
        view! {
            <Show when=move || !state.warning_acknowledged.get()>
                <div class="content-warning" role="note" id="clinical-content-warning">
                    <p><strong>"Content warning. "</strong>{w.clone()}</p>
                    <p>"Model explanations, generated changes and judge descriptions stay hidden until you acknowledge this warning; answers and counts are shown."</p>
                    <button id="clinical-show-texts" on:click=move |_| state.warning_acknowledged.set(true)>
                        "I understand — show model texts"
                    </button>
                </div>
            </Show>
        }
    });
    let cell_ctx = ctx.clone();
    let case_ctx = ctx.clone();
    let picker_ctx = ctx.clone();
    view! {
        <section class="clinical" id="clinical" data-view="clinical" aria-labelledby="clinical-title">
            <h2 id="clinical-title">"Clinical audit: do answers hold up under small changes?" <span class="paper-ref">"clinical audit paper §3.3–3.5"</span></h2>
            <p class="provenance" id="clinical-provenance">
                {format!(
                    "Bundle {bundle} · protocol {} · baseline variant {} · {sizes} · recomputed in this page from the bundle (the clinical audit paper: CFV §3.3, demographic robustness §3.4, metrics §3.5, Tables 5–7, Figs. 2–6).",
                    clinical.protocol,
                    clinical.baseline.as_deref().unwrap_or("none"),
                )}
            </p>
            <p>
                "The metrics operate at different units (§3.4): CFV on counterfactual attempts, answer change on baseline–prefix comparisons, EDD on model × question records, stereotype flags on judged comparisons. "
                "All judgements in a bundle are automated unless it says otherwise; they screen cases for review and do not establish clinical validity."
            </p>
            {content_warning}
            {move || notice.get().map(|n| view! { <p class="error" role="alert" id="clinical-notice">{n}</p> })}
            {crate::ui::table::table_view(&profile, "clinical", 3)}
            <div class="atlas-grid">
                <ChartPanel panel="clinical-cfv" title="CFV by model and difficulty (Fig. 2)" what="Grouped bar chart: each model's counterfactual validity (% of attempts), for all questions and per difficulty tier." spec=spec(figures.cfv.map(ChartSpec::RateBars).map_err(why))/>
                <ChartPanel panel="clinical-failures" title="Failure modes by model (Fig. 3)" what="Stacked bar chart: each model's invalid counterfactual attempts by failure type (counts)." spec=spec(figures.failures.map(ChartSpec::Stacked).map_err(why))/>
                <ChartPanel panel="clinical-heatmap" title="Answer-change rate by model and prefix (Fig. 4)" what="Heat map: the share of baseline–prefix comparisons whose answer changed, per model (rows) and demographic prefix (columns)." spec=spec(figures.heat.map(ChartSpec::HeatMap).map_err(why)) on_activate=on_heat/>
                <ChartPanel panel="clinical-directions" title="Direction of answer changes (Fig. 5)" what="Stacked bar chart: each model's direction-classified answer changes by direction, as shares." spec=spec(figures.directions.map(ChartSpec::Stacked).map_err(why))/>
                <ChartPanel panel="clinical-categories" title="Stereotype evidence categories (Fig. 6)" what="Bar chart: the share of all stereotype flags in each category." spec=spec(figures.categories.map(ChartSpec::RateBars).map_err(why))/>
            </div>
            <p class="provenance" id="clinical-spearman">{spearman_line}</p>
            <CellCases ctx=cell_ctx picked/>
            {crate::ui::table::table_view(&table6(&report), "clinical", 3)}
            {crate::ui::table::table_view(&table7(&report), "clinical", 3)}
            <CasePicker ctx=picker_ctx examples/>
            {move || case_ctx.open.get().map(|key| view! { <CaseView ctx=case_ctx.clone() key/> })}
        </section>
    }
    .into_any()
}

/// The non-robust cases of the heat-map cell picked: every question whose answer under that prefix
/// differs from the baseline answer, each linking to its demographic case view.
#[component]
fn CellCases(ctx: Ctx, picked: RwSignal<Option<(usize, usize)>>) -> impl IntoView {
    let body = move || {
        let (m, c) = picked.get()?;
        let audit = &ctx.loaded.audit;
        let model = level_label(audit, audit.model_facet, m);
        let model_id = level_id(audit, audit.model_facet, m);
        let prefix = audit
            .condition_facet
            .map_or_else(String::new, |f| level_id(audit, f, c));
        let row = ctx
            .report
            .answer_change
            .iter()
            .find(|r| r.model == model_id && r.condition == prefix);
        let cases = changed_cases(audit, m, c);
        let summary = match row {
            Some(r) => format!(
                "{model} under {prefix}: answer changed in {} of {} comparisons ({}%). Non-robust cases:",
                r.changed,
                r.comparisons,
                crate::ui::format::points(r.rate, 2)
            ),
            None => format!("{model} under {prefix}: no comparisons."),
        };
        let runs = audit.facet_len(audit.repeat_facet);
        let items = cases
            .into_iter()
            .map(|changed| {
                let (q, r) = (changed.question, changed.run);
                let key = CaseKey {
                    kind: CaseKind::Dr,
                    model: model_id.clone(),
                    question: level_id(audit, audit.statement_facet, q),
                    run: (runs > 1)
                        .then(|| audit.repeat_facet.map(|f| level_id(audit, f, r)))
                        .flatten(),
                };
                let href = page_link(&ctx.link_view(&key));
                let run = if runs > 1 {
                    audit
                        .repeat_facet
                        .map(|f| format!(" (run {})", level_id(audit, f, r)))
                        .unwrap_or_default()
                } else {
                    String::new()
                };
                let text = format!(
                    "{}{run}: baseline {} → {}",
                    key.question, changed.baseline, changed.answer
                );
                let ctx = ctx.clone();
                let value = key.value();
                view! {
                    <li>
                        <a href=href data-case=value on:click=move |ev: leptos::ev::MouseEvent| {
                            ev.prevent_default();
                            ctx.open_case(key.clone());
                        }>{text}</a>
                    </li>
                }
            })
            .collect_view();
        Some(view! {
            <p id="clinical-cell-summary" data-model=model_id.clone() data-prefix=prefix.clone()>{summary}</p>
            <ul class="cell-cases" id="clinical-cell-list">{items}</ul>
        })
    };
    view! {
        <div class="clinical-cell-cases" id="clinical-cell-cases" data-view="clinical-cell-cases" tabindex="-1" aria-live="polite">
            <h3>"Non-robust cases of a heat-map cell"</h3>
            {move || if picked.with(Option::is_none) {
                Some(view! { <p class="hint">"Click a cell of the heat map (or focus it, move with the arrow keys and press Enter) to list the questions whose answer that prefix changed."</p> })
            } else {
                None
            }}
            {body}
        </div>
    }
}

/// Opens any case by model and question, or the first example of each of the seed's Tables 1–4.
#[component]
fn CasePicker(ctx: Ctx, examples: Examples) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let kind = RwSignal::new(CaseKind::Dr);
    let model = RwSignal::new(0usize);
    let question = RwSignal::new(0usize);
    let run = RwSignal::new(0usize);
    let runs = audit.facet_len(audit.repeat_facet);
    let run_options = (0..runs)
        .map(|r| {
            let id = audit
                .repeat_facet
                .map_or_else(|| (r + 1).to_string(), |f| level_id(audit, f, r));
            view! { <option value=r.to_string()>{id}</option> }
        })
        .collect_view();
    let models = (0..audit.levels(audit.model_facet).len())
        .map(|m| view! { <option value=m.to_string()>{level_label(audit, audit.model_facet, m)}</option> })
        .collect_view();
    let questions = audit
        .levels(audit.statement_facet)
        .iter()
        .enumerate()
        .map(|(q, l)| view! { <option value=q.to_string()>{l.id.clone()}</option> })
        .collect_view();
    let open_ctx = ctx.clone();
    let open = move |_| {
        let audit = &open_ctx.loaded.audit;
        let kind = kind.get_untracked();
        open_ctx.open_case(CaseKey {
            kind,
            model: level_id(audit, audit.model_facet, model.get_untracked()),
            question: level_id(audit, audit.statement_facet, question.get_untracked()),
            run: (kind == CaseKind::Dr && audit.facet_len(audit.repeat_facet) > 1)
                .then(|| {
                    audit
                        .repeat_facet
                        .map(|f| level_id(audit, f, run.get_untracked()))
                })
                .flatten(),
        });
    };
    let example = |id: &'static str, label: &'static str, key: Option<CaseKey>| {
        let ctx = ctx.clone();
        let disabled = key.is_none();
        view! {
            <button id=id disabled=disabled title=disabled.then_some("none in this bundle") on:click=move |_| {
                if let Some(k) = key.clone() {
                    ctx.open_case(k);
                }
            }>{label}</button>
        }
    };
    view! {
        <div class="clinical-picker" id="clinical-picker" role="group" aria-labelledby="clinical-picker-title">
            <h3 id="clinical-picker-title">"Example cases" <span class="paper-ref">"as in the clinical audit paper's Tables 1–4"</span></h3>
            <div class="inspector-actions">
                {example("clinical-example-valid", "Valid counterfactual (Table 1)", examples.valid_cfv)}
                {example("clinical-example-invalid", "Invalid counterfactual (Table 2)", examples.invalid_cfv)}
                {example("clinical-example-robust", "Robust demographic case (Table 3)", examples.robust_dr)}
                {example("clinical-example-nonrobust", "Non-robust demographic case (Table 4)", examples.non_robust_dr)}
            </div>
            <div class="inspector-filters">
                <label class="filter">
                    <span class="name">"Test"</span>
                    <select id="clinical-pick-kind" on:change=move |ev| kind.set(if event_target_value(&ev) == "cfv" { CaseKind::Cfv } else { CaseKind::Dr })>
                        <option value="dr">"Demographic robustness (§3.4)"</option>
                        <option value="cfv">"Counterfactual validity (§3.3)"</option>
                    </select>
                </label>
                <label class="filter">
                    <span class="name">"Model"</span>
                    <select id="clinical-pick-model" on:change=move |ev| model.set(event_target_value(&ev).parse().unwrap_or(0))>{models}</select>
                </label>
                <label class="filter">
                    <span class="name">"Question"</span>
                    <select id="clinical-pick-question" on:change=move |ev| question.set(event_target_value(&ev).parse().unwrap_or(0))>{questions}</select>
                </label>
                {(runs > 1).then(|| view! {
                    <label class="filter">
                        <span class="name">"Run (demographic records)"</span>
                        <select id="clinical-pick-run" on:change=move |ev| run.set(event_target_value(&ev).parse().unwrap_or(0))>{run_options}</select>
                    </label>
                })}
                <button id="clinical-pick-open" on:click=open>"Open case"</button>
            </div>
        </div>
    }
}

/// One FIELD / RECORDED row.
fn field(name: &'static str, key: &'static str, value: impl IntoView + 'static) -> impl IntoView {
    view! { <tr data-field=key><th scope="row">{name}</th><td>{value}</td></tr> }
}

/// A case in the layout of the seed's Tables 1–4, with its link.
#[component]
fn CaseView(ctx: Ctx, key: CaseKey) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let models = audit.model_ids();
    let m = models.iter().position(|x| *x == key.model);
    let q = audit
        .levels(audit.statement_facet)
        .iter()
        .position(|l| l.id == key.question);
    let r = match (&key.run, audit.repeat_facet) {
        (None, _) => Some(0),
        (Some(id), Some(f)) => audit.levels(f).iter().position(|l| &l.id == id),
        (Some(_), None) => None,
    };
    let (Some(m), Some(q), Some(r)) = (m, q, r) else {
        return view! { <p class="error" role="alert" id="clinical-case-missing">{format!("No case {} in this bundle.", key.value())}</p> }.into_any();
    };
    let body = match key.kind {
        CaseKind::Cfv => cfv_rows(&ctx, m, q).into_any(),
        CaseKind::Dr => dr_rows(&ctx, m, q, r).into_any(),
    };
    let title = match key.kind {
        CaseKind::Cfv => format!(
            "Counterfactual validity case: {} on {}",
            level_label(audit, audit.model_facet, m),
            key.question
        ),
        CaseKind::Dr => format!(
            "Demographic robustness case: {} on {}",
            level_label(audit, audit.model_facet, m),
            key.question
        ),
    };
    let link = page_link(&ctx.link_view(&key));
    let absolute = absolute_link(&ctx.link_view(&key));
    let copied = RwSignal::new(None::<String>);
    let to_copy = absolute.clone();
    let local = ctx.loaded.base_url.is_none();
    view! {
        <article class="case clinical-case" id="clinical-case" data-view="clinical-case" data-case=key.value() aria-labelledby="clinical-case-title">
            <h3 id="clinical-case-title" tabindex="-1">{title}</h3>
            <div class="scroll">
                <table class="case-table clinical-case-table" id="clinical-case-table">
                    <thead><tr><th scope="col">"FIELD"</th><th scope="col">"RECORDED"</th></tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
            <p class="case-link">
                "Link to this case: "
                <a id="clinical-case-link" href=link>{absolute}</a>
                " "
                <button id="clinical-case-copy" on:click=move |_| copy_then(to_copy.clone(), move |done| { copied.try_set(Some(match done { Ok(()) => "Link copied.".to_string(), Err(e) => format!("Could not copy ({e}); copy the link above by hand.") })); })>"Copy link"</button>
                {move || copied.get().map(|s| view! { <span class="status" role="status">{" "}{s}</span> })}
                {local.then_some(" (This bundle was opened from a local file: the link cannot name it, so it opens the case only where that bundle is loaded from the same address.)")}
            </p>
        </article>
    }
    .into_any()
}

/// Rows of a counterfactual case (Tables 1–2).
fn cfv_rows(ctx: &Ctx, m: usize, q: usize) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let model_id = level_id(audit, audit.model_facet, m);
    let question_id = level_id(audit, audit.statement_facet, q);
    let Some(cl) = audit.file.clinical.as_ref() else {
        return view! { <tr><td colspan="2">"This bundle has no clinical object."</td></tr> }
            .into_any();
    };
    let Some(k) = counterfactual_of(cl, &model_id, &question_id) else {
        return view! { <tr><td colspan="2" id="clinical-case-none">{format!("No counterfactual attempt of {model_id} on {question_id} is recorded.")}</td></tr> }.into_any();
    };
    let c = cl.counterfactuals[k].clone();
    let letter = |l: &Option<String>| {
        l.as_deref()
            .map_or("(not recorded)".to_string(), |l| option_text(audit, q, l))
    };
    let source = format!(
        "{question_id}{}; {} ({model_id}); run {}; counterfactual record {k} of bundle {}",
        statement_attr(audit, q, "source_id").map_or(String::new(), |s| format!(" ({s})")),
        level_label(audit, audit.model_facet, m),
        c.repeat.as_deref().unwrap_or("—"),
        audit.metadata().id
    );
    let question = question_text(audit, q);
    let unchanged = if reanswer_unchanged(&c) {
        "; unchanged"
    } else {
        ""
    };
    let modified_answer = format!("{}{unchanged}", letter(&c.reanswer));
    let (label, why) = outcome_explanation(c.outcome);
    let result = match cfv_result(&c) {
        CfvResult::Valid { original, target } => {
            format!("{label}. The recorded answer changed from {original} to the target {target}.")
        }
        CfvResult::ReachedTarget { target } => {
            format!("{label}. The answer reached the target {target}, but the attempt was not valid.")
        }
        CfvResult::MissedTarget {
            answer,
            original,
            target,
        } => format!(
            "{label}. The answer is {answer} (original {original}) and did not reach the target {target}."
        ),
        CfvResult::Incomplete => format!("{label}."),
    };
    let judge = c.plausibility.clone();
    let judge_head = judge.as_ref().map_or_else(
        || "No plausibility judgement recorded.".to_string(),
        |p| {
            format!(
                "Plausibility score {}/5 ({}){}. ",
                p.score,
                plausibility_word(p.score),
                p.judge
                    .as_deref()
                    .map_or(String::new(), |j| format!(", judge {j}"))
            )
        },
    );
    let justification = judge.and_then(|p| p.justification);
    let note = c.note.clone();
    view! {
        {field("Source record", "source", source)}
        {field("Original case", "original_case", question)}
        {field("Answer options", "options", options_line(audit, q).unwrap_or_else(|| "(not recorded)".into()))}
        {field("Original answer", "original_answer", letter(&c.original))}
        {field("Target answer", "target_answer", letter(&c.target))}
        {field("Generated change", "change", ctx.model_text(c.change.clone()))}
        {field("Modified case", "modified_case", ctx.model_text(c.modified_question.clone()))}
        {field("Explanation", "explanation", ctx.model_text(c.explanation.clone()))}
        {field("Modified answer", "modified_answer", modified_answer)}
        {field("Automated judge", "judge", view! { {judge_head} {ctx.model_text(justification)} })}
        {field("CFV result", "result", view! {
            <strong class="outcome" data-outcome=c.outcome.as_str()>{result}</strong>
            " " {why}
            {note.map(|n| view! { " Note: " {ctx.model_text(Some(n))} })}
        })}
    }
    .into_any()
}

/// Rows of a demographic-robustness case (Tables 3–4).
fn dr_rows(ctx: &Ctx, m: usize, q: usize, r: usize) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let case = DrCase::new(audit, &ctx.report, m, q, r);
    let model_id = level_id(audit, audit.model_facet, m);
    let question_id = level_id(audit, audit.statement_facet, q);
    let cf = audit.condition_facet;
    let runs = audit.facet_len(audit.repeat_facet);
    let run = audit
        .repeat_facet
        .map_or("—".to_string(), |f| level_id(audit, f, case.run));
    let source = format!(
        "{question_id}{}; {} ({model_id}); run {run}{}; bundle {}",
        statement_attr(audit, q, "source_id").map_or(String::new(), |s| format!(" ({s})")),
        level_label(audit, audit.model_facet, m),
        if runs > 1 {
            format!(" (of {runs} runs)")
        } else {
            String::new()
        },
        audit.metadata().id
    );
    let question = question_text(audit, q);
    let prefix_of = |c: usize| {
        cf.and_then(|f| audit.levels(f).get(c))
            .and_then(|l| l.attributes.get("prefix"))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let prefixes = case
        .prefixes
        .iter()
        .map(|p| {
            let text =
                prefix_of(p.condition).unwrap_or_else(|| "(no prefix template recorded)".into());
            view! { <li data-prefix=p.id.clone()><code>{p.id.clone()}</code>": " {text}</li> }
        })
        .collect_view();
    let answer_text = |v: &VariantAnswer| match (&v.letter, v.responded) {
        (Some(l), _) => l.clone(),
        (None, true) => "unreadable (no ANSWER field could be read)".to_string(),
        (None, false) => "no response".to_string(),
    };
    let baseline_line = case.baseline.as_ref().map_or_else(
        || "This bundle names no baseline variant.".to_string(),
        |b| format!("{} = {}", b.id, answer_text(b)),
    );
    let baseline_cell = case.baseline.as_ref().and_then(|b| b.cell);
    let six = case
        .prefixes
        .iter()
        .map(|p| {
            let changed = p.changed == Some(true);
            view! {
                <li class:changed=changed data-prefix=p.id.clone() data-answer=p.letter.clone().unwrap_or_default() data-changed=match p.changed { Some(true) => "1", Some(false) => "0", None => "" }>
                    {format!("{} = {}", p.id, answer_text(p))}
                    {changed.then_some(" (changed)")}
                </li>
            }
        })
        .collect_view();
    let changed = case.changed();
    let base_letter = case.baseline.as_ref().and_then(|b| b.letter.clone());
    let change_line = match &base_letter {
        None => "The baseline answer could not be read, so no comparison is defined (no answer-change comparison counts this record).".to_string(),
        Some(_) if changed.is_empty() => format!(
            "No prefix changed the baseline answer ({} of {} prefix answers compared).",
            case.prefixes.iter().filter(|p| p.changed.is_some()).count(),
            case.prefixes.len()
        ),
        Some(b) => format!(
            "The answer changed from {b} {} ({} of {} prefixes).",
            changed
                .iter()
                .map(|p| format!("to {} for {}", p.letter.clone().unwrap_or_default(), p.id))
                .collect::<Vec<_>>()
                .join(", "),
            changed.len(),
            case.prefixes.len()
        ),
    };
    // Explanation examples: the changed prefixes first, else the first two.
    let mut shown: Vec<&VariantAnswer> = changed.clone();
    for p in &case.prefixes {
        if shown.len() >= 2 {
            break;
        }
        if !shown.iter().any(|s| s.id == p.id) {
            shown.push(p);
        }
    }
    shown.truncate(2);
    let examples = shown
        .into_iter()
        .map(|p| {
            view! { <p class="example" data-prefix=p.id.clone()><strong>{format!("{}: ", p.id)}</strong>{ctx.text(p.cell, 300)}</p> }
        })
        .collect_view();
    let flagged: Vec<String> = case.flags.iter().map(|f| f.prefix.clone()).collect();
    let stereotype_head = if case.judged == 0 {
        "No stereotype-judge output is recorded for this record.".to_string()
    } else {
        format!(
            "{} of {} prefixes flagged: {}.{}",
            flagged.len(),
            case.prefixes.len(),
            if flagged.is_empty() {
                "none".to_string()
            } else {
                flagged.join(", ")
            },
            if case.unparsed.is_empty() {
                String::new()
            } else {
                format!(
                    " Unparseable judge output for: {}.",
                    case.unparsed.join(", ")
                )
            }
        )
    };
    let flag_items = case
        .flags
        .iter()
        .map(|f| {
            let tags = [
                f.severity.map(|s| s.as_str().to_string()),
                f.category.clone(),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", ");
            view! {
                <li data-prefix=f.prefix.clone()>
                    <strong>{f.prefix.clone()}</strong>
                    {(!tags.is_empty()).then(|| format!(" ({tags})"))}
                    ": " {ctx.model_text(f.description.clone())}
                </li>
            }
        })
        .collect_view();
    let directions = (!case.directions.is_empty()).then(|| {
        let line = case
            .directions
            .iter()
            .map(|(p, d)| format!("{p}: {}", d.as_str().replace('_', " ")))
            .collect::<Vec<_>>()
            .join("; ");
        field("Direction of change", "directions", line)
    });
    let conflicts = (!case.conflicts.is_empty()).then(|| {
        let items = case
            .conflicts
            .iter()
            .map(|conflict| {
                let (p, kind) = (&conflict.prefix, conflict_words(conflict.kind));
                let detail = &conflict.detail;
                let template = cf
                    .and_then(|f| audit.levels(f).iter().position(|l| &l.id == p))
                    .and_then(prefix_of)
                    .unwrap_or_default();
                view! {
                    <li data-prefix=p.clone()>
                        {format!("{p} ({kind}): {}", detail.clone().unwrap_or_default())}
                        {(!template.is_empty()).then(|| format!(" — the prefix “{template}” stands before “{}”", excerpt(&question_start(audit, q), 80)))}
                    </li>
                }
            })
            .collect_view();
        field(
            "Prefix interaction",
            "prefix_conflict",
            view! { <p>"The prefix conflicts with the vignette (§3.4: a stress test, not a clean causal intervention):"</p><ul>{items}</ul> },
        )
    });
    let edd = case.edd.map_or_else(
        || "No EDD: the record has fewer than two explanation embeddings.".to_string(),
        |(e, n)| {
            format!(
                "{e:.4} for this question across {n} explanation embeddings ({} pairs; Eq. 1).",
                n * n.saturating_sub(1) / 2
            )
        },
    );
    let robust = case.robust();
    let interpretation = if robust {
        "VALID ROBUST CASE. All prefixes preserved the baseline answer, all variants parsed, and the automated stereotype judge returned no flags. This is robustness under the recorded stress test, not clinician validation.".to_string()
    } else {
        let mut why = Vec::new();
        if !changed.is_empty() {
            why.push(format!(
                "the answer changed under {} prefix(es)",
                changed.len()
            ));
        }
        if case.prefixes.iter().any(|p| p.letter.is_none()) || base_letter.is_none() {
            why.push("some variants could not be read".to_string());
        }
        if !case.flags.is_empty() {
            why.push(format!(
                "the judge flagged stereotype evidence for {} prefix(es)",
                case.flags.len()
            ));
        }
        format!(
            "INVALID ROBUSTNESS CASE: {}. The record is an example of an audit failure in the saved automated judgements, not a clinical diagnosis or human adjudication.",
            why.join("; ")
        )
    };
    view! {
        {field("Source record", "source", source)}
        {field("Clinical case", "clinical_case", question)}
        {field("Prefix shown", "prefix", view! { <p>"Added before the original question, one per variant:"</p><ul class="prefixes">{prefixes}</ul> })}
        {conflicts}
        {field("Baseline answer", "baseline_answer", view! { <span id="clinical-baseline">{baseline_line}</span> "; reasoning excerpt: " {ctx.text(baseline_cell, 300)} })}
        {field("Prefix answers", "prefix_answers", view! { <ul class="prefix-answers" id="clinical-prefix-answers">{six}</ul> })}
        {field("Answer change", "answer_change", change_line)}
        {directions}
        {field("Explanation examples", "explanations", examples)}
        {field("Stereotype evidence", "stereotype", view! { <p id="clinical-stereotype">{stereotype_head}</p><ul>{flag_items}</ul> })}
        {field("EDD", "edd", view! { <span id="clinical-edd" data-edd=case.edd.map(|e| e.0.to_string()).unwrap_or_default()>{edd}</span> })}
        {field("DR interpretation", "interpretation", view! { <strong class="outcome" data-robust=robust.to_string()>{interpretation}</strong> })}
    }
    .into_any()
}

/// The question text's first characters with a lower-case first letter, as the variant reads on after
/// its prefix.
fn question_start(audit: &Audit, q: usize) -> String {
    let text = question_text(audit, q);
    let mut chars = text.trim().chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
