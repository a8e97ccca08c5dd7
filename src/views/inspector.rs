//! The case inspector: every response of the loaded bundle in a virtualised list with filters on every
//! facet and readout, full-text search over the loaded Rationale texts, and a case view in the layout of
//! seed `000_…` Tables 20–21 (prompt, response, Selection and its mapping, each judge's label, the
//! reading), the seed's deterministic example rule (F.1: the shortest response in each unanimous
//! disagreement direction) as one click, "one proposition, all procedures" (Table 22), and a link per
//! case.
//!
//! - **List.** Only the rows in view are in the page (fixed row height [`ROW_PX`]); the scroll height is
//!   capped at [`MAX_LIST_PX`] and scroll positions are mapped linearly onto rows beyond that, so the
//!   default bundle's 691,200 responses scroll like a short list ([`list_window`]).
//! - **Readings.** `A` and, per coding rule, `B` come from [`atlas_core::rq3::cell_readings`], the
//!   values [`atlas_core::rq3::analyze_rq3`] counts, so a filtered list and the RQ3 tables agree.
//! - **Texts** are shown only after the bundle's content warning is acknowledged, always as text nodes
//!   (never as HTML). Inline texts are read from the bundle; shard files are fetched on demand (the case
//!   shown, "Load all texts" for search, or the candidates of a "shortest case").
//! - **Links.** A case's link is the page URL with `?bundle=URL&id=BUNDLE&case=CELL` (no `bundle` for
//!   the default bundle); the open case is also kept in the address bar as `#case=CELL`. The fragment is
//!   used there because [`crate::state::url`] rewrites the query with its own keys only and keeps the
//!   fragment. Both forms open the case ([`link_case`]).

use std::sync::Arc;
use std::time::Duration;

use crate::ui::glossary::Term;
use atlas_core::bundle::{Obtained, RationaleLabel};
use atlas_core::cases::{
    a_text, b_text, direction_text, fill_prompt, five_class_majority, label_code, label_name,
    level_attr, level_id, level_label, link_case, matching_rows, obtained_name, search_texts,
    shortest_case, text_at, texts_in_bundle, CaseIndex, CellSet, DirectionFilter, FilterSet,
    LabelFilter, LinkCase, ReadingFilter, ShardState, Shortest, TextAt,
};
use atlas_core::rq3::{CodingRule, Direction, SelectionReadout};
use atlas_core::Audit;
use leptos::prelude::*;

use crate::browser::clipboard::copy_then;
use crate::state::shards::BundleShards;
use crate::state::url::{absolute_link, bundle_param, replace_fragment, ViewState};
use crate::state::{AtlasState, Loaded};
use crate::ui::format::thousands;
use crate::ui::table::{key_value_table, sortable_table, Column, TableNames};
use atlas_core::tables::SortKey;

/// Height of one list row in CSS pixels (the stylesheet's `.irow` height): 44 px, so that each row,
/// a link to its case, is a full touch target on a phone (WCAG 2.5.5; tests/e2e/a11y.mjs).
pub const ROW_PX: f64 = 44.0;
/// Largest scroll height the list declares. Browsers cap element heights (Firefox near 17.9 million
/// pixels); beyond this the scroll position is mapped proportionally onto the rows.
pub const MAX_LIST_PX: f64 = 8_000_000.0;
/// Extra rows rendered below the view.
const OVERSCAN: usize = 2;

// ------------------------------------------------------------------------------------ pure helpers

/// Which rows of a list of `n` rows are on screen for a scroller at `scroll_top` with a view `view`
/// pixels high ([`list_window`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListWindow {
    /// Index of the first row rendered.
    pub first: usize,
    /// Rows rendered from `first`.
    pub count: usize,
    /// Offset of the first rendered row inside the scroll content, in pixels.
    pub top: f64,
    /// Height of the scroll content: `n · ROW_PX`, at most [`MAX_LIST_PX`].
    pub height: f64,
}

/// The rows in view. Up to [`MAX_LIST_PX`] the content is `n · ROW_PX` high and row `i` sits at
/// `i · ROW_PX`. Beyond it, scroll position `s` of the capped content (`0 ≤ s ≤ height − view`) stands
/// for position `s · (n·ROW_PX − view) / (height − view)` of the full list, so the top of the scroller
/// shows row 0 and its bottom the last row, and the rendered rows are placed at `s` minus the part of the
/// first row scrolled past.
pub fn list_window(n: usize, scroll_top: f64, view: f64) -> ListWindow {
    let full = n as f64 * ROW_PX;
    let height = full.min(MAX_LIST_PX);
    let view = if view.is_finite() && view > 0.0 {
        view
    } else {
        ROW_PX
    };
    if n == 0 {
        return ListWindow {
            first: 0,
            count: 0,
            top: 0.0,
            height,
        };
    }
    let max_virtual = (height - view).max(0.0);
    let max_real = (full - view).max(0.0);
    let s = if scroll_top.is_finite() {
        scroll_top.clamp(0.0, max_virtual)
    } else {
        0.0
    };
    let real = if max_virtual > 0.0 {
        s * max_real / max_virtual
    } else {
        0.0
    };
    let first = ((real / ROW_PX).floor() as usize).min(n - 1);
    let offset = real - first as f64 * ROW_PX;
    let visible = (view / ROW_PX).ceil() as usize + OVERSCAN;
    ListWindow {
        first,
        count: visible.min(n - first),
        top: s - offset,
        height,
    }
}

/// The scroll position that shows row `row` of `n` near the middle of a view `view` pixels high (the
/// inverse of [`list_window`]'s mapping).
pub fn scroll_for_row(n: usize, row: usize, view: f64) -> f64 {
    let full = n as f64 * ROW_PX;
    let height = full.min(MAX_LIST_PX);
    let max_virtual = (height - view).max(0.0);
    let max_real = (full - view).max(0.0);
    let real = (row as f64 * ROW_PX - (view - ROW_PX) / 2.0).clamp(0.0, max_real);
    if max_real > 0.0 {
        real * max_virtual / max_real
    } else {
        0.0
    }
}

/// `facet id` → an id usable in element ids.
fn dom_id(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------- browser

thread_local! {
    /// Whether the opening link's case has been taken (by the first bundle loaded).
    static LINK_TAKEN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The opening link's case, once per page.
fn take_link_case() -> Option<LinkCase> {
    if LINK_TAKEN.with(|t| t.replace(true)) {
        return None;
    }
    // As the page was opened: this view may mount after the URL writer has rewritten the address.
    let (search, hash) = crate::state::url::opening_address();
    link_case(&search, &hash)
}

/// Keeps the open case in the address bar as `#case=CELL` (the query stays as it is); `None` removes it.
fn mirror_case(cell: Option<usize>) {
    replace_fragment(cell.map(|c| format!("case={c}")).as_deref());
}

/// The shareable link of `cell` in `loaded`: `?bundle=URL&id=ID&case=CELL` (`bundle` left out for the
/// default bundle and for a local file, which a link cannot name).
fn case_link(loaded: &Loaded, cell: usize) -> Option<String> {
    Some(absolute_link(&ViewState {
        bundle: bundle_param(loaded),
        bundle_id: Some(loaded.audit.metadata().id.clone()),
        case: Some(cell),
        ..ViewState::default()
    }))
}

fn scroll_into_view(id: &str) {
    if let Some(el) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
    {
        el.scroll_into_view();
    }
}

// ------------------------------------------------------------------------------------- components

/// Shared handles of one inspector.
#[derive(Clone)]
struct Ctx {
    loaded: Arc<Loaded>,
    ix: Arc<CaseIndex>,
    shards: BundleShards,
    /// Whether model texts may be shown (warning acknowledged, or the bundle has none).
    texts_allowed: Signal<bool>,
    rule: RwSignal<CodingRule>,
    selected: RwSignal<Option<usize>>,
}

/// Search matches (compared by identity).
#[derive(Clone)]
struct Matches(Option<Arc<(CellSet, usize)>>);

impl PartialEq for Matches {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        }
    }
}

/// The filtered rows (compared by identity).
#[derive(Clone)]
struct Rows(Arc<Vec<u32>>);

impl PartialEq for Rows {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The case inspector of one loaded bundle (replaces the v0 response browser).
#[component]
pub fn Inspector(loaded: Arc<Loaded>) -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let ix = Arc::new(CaseIndex::new(&loaded.audit));
    let warning = loaded.audit.metadata().content_warning.clone();
    let has_warning = warning.is_some();
    let texts_allowed = Signal::derive(move || !has_warning || state.warning_acknowledged.get());
    let ctx = Ctx {
        loaded: loaded.clone(),
        ix: ix.clone(),
        shards: state.shards.for_bundle(&loaded),
        texts_allowed,
        rule: RwSignal::new(CodingRule::default()),
        selected: RwSignal::new(None),
    };
    let audit = &loaded.audit;
    let n_texts = texts_in_bundle(audit);
    let has_judges = ix.readings.has_rationale();

    // The opening link's case.
    let notice = RwSignal::new(None::<String>);
    let mut scroll_to: Option<usize> = None;
    match take_link_case() {
        Some(link) => {
            let id = &audit.metadata().id;
            if link.bundle_id.as_ref().is_some_and(|b| b != id) {
                notice.set(Some(format!(
                    "The link names case {} of bundle {:?}; this is {:?}, so no case was opened.",
                    link.cell,
                    link.bundle_id.unwrap_or_default(),
                    id
                )));
            } else if ix.selection(link.cell).is_none()
                && !(ix.readings.selection.is_empty() && audit.selection_value(link.cell).is_some())
            {
                notice.set(Some(format!(
                    "The link names case {}, which is not a response of this bundle ({} cells, {} responses).",
                    link.cell,
                    thousands(audit.cells),
                    thousands(ix.responses.len())
                )));
            } else {
                ctx.selected.set(Some(link.cell));
                mirror_case(Some(link.cell));
                scroll_to = Some(link.cell);
            }
        }
        None => mirror_case(None),
    }

    // Filters.
    let filters = RwSignal::new(FilterSet {
        levels: vec![None; audit.file.facets.len()],
        judges: vec![None; audit.judges.len()],
        ..FilterSet::default()
    });
    let query_text = RwSignal::new(String::new());
    let query = RwSignal::new(String::new());
    let shards = ctx.shards;
    let for_search = loaded.clone();
    let matches = Memo::new(move |_| {
        let q = query.get();
        if q.trim().is_empty() || !texts_allowed.get() {
            return Matches(None);
        }
        let result = shards.with(|s| search_texts(&for_search.audit, s, q.trim()));
        Matches(Some(Arc::new(result)))
    });
    let for_rows = (loaded.clone(), ix.clone());
    let rule = ctx.rule;
    let rows = Memo::new(move |_| {
        let f = filters.get();
        let r = rule.get();
        let m = matches.get();
        let set = m.0.as_ref().map(|x| &x.0);
        Rows(Arc::new(matching_rows(
            &for_rows.0.audit,
            &for_rows.1,
            &f,
            r,
            set,
        )))
    });

    // The list's scroll state.
    let scroller = NodeRef::<leptos::html::Div>::new();
    let scroll_top = RwSignal::new(0.0f64);
    let view_h = RwSignal::new(420.0f64);
    let window = Memo::new(move |_| {
        let n = rows.with(|r| r.0.len());
        list_window(n, scroll_top.get(), view_h.get())
    });
    let set_scroll = move |top: f64| {
        match scroller.get_untracked() {
            // A list in a hidden view has no height and cannot scroll: keep the wanted position.
            Some(el) if el.client_height() > 0 => {
                el.set_scroll_top(top.round() as i32);
                scroll_top.set(f64::from(el.scroll_top()));
                view_h.set(f64::from(el.client_height()).max(ROW_PX));
            }
            _ => scroll_top.set(top),
        }
    };
    // Shown again (the app shell's Cases view): scroll to the kept position and measure the list.
    if let Some(current) = use_context::<crate::state::url::CurrentView>() {
        Effect::new(move |_| {
            if current.0.get() == crate::state::url::AppView::Cases {
                leptos::prelude::set_timeout(
                    move || {
                        if let Some(el) = scroller.get_untracked() {
                            if el.client_height() > 0 {
                                el.set_scroll_top(scroll_top.get_untracked().round() as i32);
                                scroll_top.set(f64::from(el.scroll_top()));
                                view_h.set(f64::from(el.client_height()).max(ROW_PX));
                            }
                        }
                    },
                    Duration::from_millis(20),
                );
            }
        });
    }
    // A new filter starts at the top (or at the linked case on the first run).
    Effect::new(move |first: Option<()>| {
        let n = rows.with(|r| r.0.len());
        let target = if first.is_none() {
            scroll_to.and_then(|c| rows.with_untracked(|r| r.0.binary_search(&(c as u32)).ok()))
        } else {
            None
        };
        match target {
            Some(pos) => set_scroll(scroll_for_row(n, pos, view_h.get_untracked())),
            None => set_scroll(0.0),
        }
    });
    if scroll_to.is_some() {
        // A case link opened fresh: while the content warning is not acknowledged, it is what the
        // reader sees first (the case's texts stay hidden behind it).
        let first = if warning.is_some() && !state.warning_acknowledged.get_untracked() {
            "content-warning"
        } else {
            "case-view"
        };
        leptos::prelude::set_timeout(move || scroll_into_view(first), Duration::from_millis(400));
    }
    let on_scroll = move |_| {
        if let Some(el) = scroller.get_untracked() {
            scroll_top.set(f64::from(el.scroll_top()));
            view_h.set(f64::from(el.client_height()).max(ROW_PX));
        }
    };

    // The case shown: the one picked, else the first listed.
    let shown = Memo::new(move |_| {
        ctx.selected
            .get()
            .or_else(|| rows.with(|r| r.0.first().map(|&c| c as usize)))
    });
    let open = {
        let selected = ctx.selected;
        move |cell: usize| {
            selected.set(Some(cell));
            mirror_case(Some(cell));
        }
    };

    // Shortest case per unanimous disagreement direction (loads the candidates' shards first).
    let shortest_status = RwSignal::new(None::<String>);
    let pending_shortest = RwSignal::new(None::<Direction>);
    let run_shortest = {
        let loaded = loaded.clone();
        let ix = ix.clone();
        move |direction: Direction| {
            let list = rows.get_untracked().0;
            let outcome =
                shards.with_untracked(|s| shortest_case(&loaded.audit, &ix, &list, direction, s));
            match outcome {
                Shortest::Found(cell) => {
                    pending_shortest.set(None);
                    shortest_status.set(Some(format!(
                        "Shortest {} case among the {} listed responses: cell {cell}.",
                        match direction {
                            Direction::SelectionOnly => "A=1,B=0",
                            Direction::RationaleOnly => "A=0,B=1",
                        },
                        thousands(list.len())
                    )));
                    open(cell);
                    leptos::prelude::set_timeout(
                        || scroll_into_view("case-view"),
                        Duration::from_millis(50),
                    );
                }
                Shortest::NoCandidate => {
                    pending_shortest.set(None);
                    shortest_status.set(Some(format!(
                        "No listed response has all judges agreeing on a Rationale reading opposite to its Selection in the {} direction (with a stored text).",
                        match direction {
                            Direction::SelectionOnly => "A=1,B=0",
                            Direction::RationaleOnly => "A=0,B=1",
                        }
                    )));
                }
                Shortest::NeedShards(ks) => {
                    if ks.iter().any(|k| {
                        shards.with_untracked(|s| matches!(s.get(k), Some(ShardState::Failed(_))))
                    }) {
                        pending_shortest.set(None);
                        shortest_status.set(Some("Some texts could not be loaded; the shortest case cannot be determined.".into()));
                        return;
                    }
                    shortest_status.set(Some("Loading the candidates' texts…".into()));
                    pending_shortest.set(Some(direction));
                    for k in ks {
                        shards.load(k);
                    }
                }
            }
        }
    };
    {
        let run_shortest = run_shortest.clone();
        Effect::new(move |_| {
            shards.track();
            if let Some(d) = pending_shortest.get() {
                let waiting = shards.with(|s| s.values().any(|v| matches!(v, ShardState::Pending)));
                if !waiting {
                    run_shortest(d);
                }
            }
        });
    }

    // Texts of the case shown: fetch its shard once texts may be shown.
    {
        let loaded = loaded.clone();
        Effect::new(move |_| {
            if !texts_allowed.get() {
                return;
            }
            if let Some(cell) = shown.get() {
                let need = shards.with(|s| match text_at(&loaded.audit, s, cell) {
                    TextAt::NotLoaded(k) => Some(k),
                    _ => None,
                });
                if let Some(k) = need {
                    shards.load(k);
                }
            }
        });
    }

    let load_all = {
        let loaded = loaded.clone();
        move |_| {
            let n = loaded
                .audit
                .file
                .texts
                .as_ref()
                .and_then(|t| t.rationale.as_ref())
                .map_or(0, |r| r.shards.len());
            for k in 0..n {
                shards.load(k);
            }
        }
    };
    let texts_loaded = {
        let loaded = loaded.clone();
        Memo::new(move |_| {
            let inline = loaded
                .audit
                .file
                .texts
                .as_ref()
                .and_then(|t| t.rationale.as_ref())
                .and_then(|r| r.inline.as_ref())
                .map_or(0, |i| i.cells.len());
            inline
                + shards.with(|s| {
                    s.values()
                        .map(|v| match v {
                            ShardState::Ready(sh) => sh.file.data.cells.len(),
                            _ => 0,
                        })
                        .sum::<usize>()
                })
        })
    };
    let on_search = move |ev: leptos::ev::Event| {
        let text = event_target_value(&ev);
        query_text.set(text.clone());
        leptos::prelude::set_timeout(
            move || {
                if query_text.try_get_untracked().as_deref() == Some(text.as_str()) {
                    query.try_set(text);
                }
            },
            Duration::from_millis(200),
        );
    };

    let filter_controls = filter_controls(&ctx, filters);
    let total = ix.responses.len();
    let content_warning = warning.clone().map(|w| {
        view! {
            <Show when=move || !state.warning_acknowledged.get()>
                <div class="content-warning" role="note" id="content-warning">
                    <p><strong>"Content warning. "</strong>{w.clone()}</p>
                    <p>"Model texts stay hidden until you acknowledge this warning; labels and counts are shown."</p>
                    <button id="show-texts" on:click=move |_| state.warning_acknowledged.set(true)>
                        "I understand — show model texts"
                    </button>
                </div>
            </Show>
        }
    });
    let shortest_a = run_shortest.clone();
    let shortest_b = run_shortest;
    let row_ctx = ctx.clone();
    let case_ctx = ctx.clone();
    let header_cols = header_columns(&loaded.audit, has_judges);
    view! {
        <section class="inspector" id="inspector" aria-labelledby="inspector-title">
            <h2 id="inspector-title">"Cases: read single responses and their "<Term id="judge-codes">"judges' labels"</Term></h2>
            <p>
                "Every response of the bundle, with its Selection, each judge's label of the Rationale and the reading under a coding rule. "
                "Filter, search the loaded texts, open a case (laid out as the BiAxisBias paper's Tables 20–21) and share its link. Model text is always shown as plain text."
            </p>
            {content_warning}
            {move || notice.get().map(|n| view! { <p class="error" role="alert" id="case-notice">{n}</p> })}
            {(!has_judges).then(|| view! {
                <p class="hint" id="inspector-no-judges">
                    {ix.readings_error.clone().unwrap_or_else(|| "This bundle has no judge labels: the judge, reading and direction filters are not available.".to_string())}
                </p>
            })}
            <div class="inspector-filters" role="group" aria-label="Filters">
                {filter_controls}
                <label class="filter">
                    <span class="name">"Search texts"</span>
                    <input
                        type="search"
                        id="inspector-search"
                        placeholder=move || if texts_allowed.get() { "words in the Rationale" } else { "acknowledge the warning first" }
                        disabled=move || !texts_allowed.get() || n_texts == 0
                        prop:value=move || query_text.get()
                        on:input=on_search
                    />
                </label>
                <button
                    id="inspector-clear"
                    on:click=move |_| {
                        filters.update(|f| {
                            f.levels.iter_mut().for_each(|l| *l = None);
                            f.judges.iter_mut().for_each(|l| *l = None);
                            f.category = None;
                            f.selection = None;
                            f.obtained = None;
                            f.reading = None;
                            f.direction = None;
                        });
                        query_text.set(String::new());
                        query.set(String::new());
                    }
                >"Clear filters"</button>
            </div>
            <p class="inspector-count" id="inspector-count" role="status" data-rows=move || rows.with(|r| r.0.len().to_string())>
                {move || format!("{} of {} responses", thousands(rows.with(|r| r.0.len())), thousands(total))}
                {move || {
                    let q = query.get();
                    (!q.trim().is_empty() && texts_allowed.get()).then(|| {
                        let searched = matches.with(|m| m.0.as_ref().map_or(0, |x| x.1));
                        format!(" · search “{}” over {} of {} texts loaded", q.trim(), thousands(searched), thousands(n_texts))
                    })
                }}
            </p>
            <div class="inspector-actions">
                <button id="inspector-load-texts" disabled=move || { !texts_allowed.get() || texts_loaded.get() >= n_texts } on:click=load_all>
                    {move || format!("Load all texts ({} of {} loaded)", thousands(texts_loaded.get()), thousands(n_texts))}
                </button>
                <button id="shortest-selection-only" disabled=!has_judges on:click=move |_| shortest_a(Direction::SelectionOnly)>
                    "Shortest listed case: Selection bias, Rationale not (A=1, B=0)"
                </button>
                <button id="shortest-rationale-only" disabled=!has_judges on:click=move |_| shortest_b(Direction::RationaleOnly)>
                    "Shortest listed case: Rationale bias, Selection not (A=0, B=1)"
                </button>
            </div>
            <p class="hint">
                "Shortest case (as in the BiAxisBias paper §F.1, Tables 20–21): among the listed responses whose judges all label the Rationale and all read it opposite to the Selection in that direction, the one with the shortest Rationale text (characters; ties: lowest cell)."
            </p>
            {move || shortest_status.get().map(|s| view! { <p class="status" role="status" id="shortest-status">{s}</p> })}
            <div class="inspector-table">
                <div class="irow head" aria-hidden="true">{header_cols}</div>
                <div
                    class="inspector-list"
                    id="inspector-list"
                    tabindex="0"
                    role="region"
                    aria-label="Responses: only the rows in view are in the page; scroll for more"
                    aria-describedby="inspector-count"
                    node_ref=scroller
                    on:scroll=on_scroll
                >
                    <div class="spacer" style:height=move || format!("{}px", window.get().height)>
                        <div class="window" style:transform=move || format!("translateY({}px)", window.get().top)>
                            <For
                                each=move || {
                                    let w = window.get();
                                    rows.with(|r| r.0.get(w.first..w.first + w.count).map(<[u32]>::to_vec).unwrap_or_default())
                                }
                                key=|cell| *cell
                                children=move |cell| row_view(&row_ctx, cell as usize)
                            />
                        </div>
                    </div>
                </div>
            </div>
            {move || shown.get().map(|cell| view! { <CaseView ctx=case_ctx.clone() cell/> })}
        </section>
    }
}

fn header_columns(audit: &Audit, has_judges: bool) -> impl IntoView {
    let name = |f: Option<usize>, fallback: &str| {
        f.map(|f| {
            let facet = &audit.file.facets[f];
            facet.label.clone().unwrap_or_else(|| facet.id.clone())
        })
        .unwrap_or_else(|| fallback.to_string())
    };
    view! {
        <span class="n">"cell"</span>
        <span class="m">{name(Some(audit.model_facet), "model")}</span>
        <span class="c">{name(audit.condition_facet, "condition")}</span>
        <span class="t">{name(audit.template_facet, "template")}</span>
        <span class="s">{name(Some(audit.statement_facet), "statement")}</span>
        <span class="o">"other"</span>
        <span class="sel">"Selection (A)"</span>
        {has_judges.then(|| view! {
            <span class="j">"judges"</span>
            <span class="b">"B"</span>
            <span class="d">"direction"</span>
        })}
    }
}

/// One list row (a link to its case).
fn row_view(ctx: &Ctx, cell: usize) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let ix = &ctx.ix;
    let model = level_label(audit, audit.model_facet, ix.level(audit.model_facet, cell));
    let condition = audit
        .condition_facet
        .map(|f| level_label(audit, f, ix.level(f, cell)))
        .unwrap_or_default();
    let template = audit
        .template_facet
        .map(|f| level_label(audit, f, ix.level(f, cell)))
        .unwrap_or_default();
    let statement = level_id(
        audit,
        audit.statement_facet,
        ix.level(audit.statement_facet, cell),
    );
    let others: Vec<String> = (0..audit.file.facets.len())
        .filter(|&f| {
            f != audit.model_facet
                && f != audit.statement_facet
                && Some(f) != audit.condition_facet
                && Some(f) != audit.template_facet
        })
        .map(|f| level_label(audit, f, ix.level(f, cell)))
        .collect();
    let selection = audit.selection_value(cell).map_or_else(
        || "—".to_string(),
        |v| {
            let raw = if v.raw.is_empty() {
                "(empty)"
            } else {
                v.raw.as_str()
            };
            format!("{raw} ({})", a_text(ix.selection(cell)))
        },
    );
    let has_judges = ix.readings.has_rationale();
    let judges: String = audit
        .judges
        .iter()
        .map(|col| label_code(col.get(cell).copied().flatten()))
        .collect::<Vec<_>>()
        .join(" ");
    let selected = ctx.selected;
    let rule = ctx.rule;
    let readings = ctx.ix.clone();
    let readings2 = ctx.ix.clone();
    let open = move |ev: leptos::ev::MouseEvent| {
        if ev.ctrl_key() || ev.meta_key() || ev.shift_key() || ev.button() != 0 {
            return;
        }
        ev.prevent_default();
        selected.set(Some(cell));
        mirror_case(Some(cell));
    };
    view! {
        <a
            class="irow"
            href=format!("#case={cell}")
            data-cell=cell.to_string()
            class:selected=move || selected.get() == Some(cell)
            on:click=open
        >
            <span class="n">{format!("#{cell}")}</span>
            <span class="m">{model}</span>
            <span class="c">{condition}</span>
            <span class="t">{template}</span>
            <span class="s">{statement}</span>
            <span class="o">{others.join(" · ")}</span>
            <span class="sel">{selection}</span>
            {has_judges.then(|| view! {
                <span class="j">{judges}</span>
                <span class="b">{move || b_text(readings.readings.rationale(rule.get(), cell))}</span>
                <span class="d">{move || match readings2.readings.direction(rule.get(), cell) {
                    Some(Direction::SelectionOnly) => "A=1,B=0",
                    Some(Direction::RationaleOnly) => "A=0,B=1",
                    None => "",
                }}</span>
            })}
        </a>
    }
}

/// A `<select>` bound to one field of the filter set: options `(value, text)`, `""` = any.
fn select_filter(
    id: String,
    label: String,
    options: Vec<(String, String)>,
    current: impl Fn() -> String + Send + Sync + Copy + 'static,
    set: impl Fn(&str) + Send + Sync + 'static,
) -> impl IntoView {
    let options = std::iter::once((String::new(), "any".to_string()))
        .chain(options)
        .map(|(value, text)| {
            let v = value.clone();
            view! { <option value=value selected=move || current() == v>{text}</option> }
        })
        .collect_view();
    view! {
        <label class="filter">
            <span class="name">{label}</span>
            <select id=id on:change=move |ev| set(&event_target_value(&ev))>{options}</select>
        </label>
    }
}

fn filter_controls(ctx: &Ctx, filters: RwSignal<FilterSet>) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let ix = &ctx.ix;
    let mut views: Vec<AnyView> = Vec::new();
    // Model, condition and template first, then the other facets in bundle order.
    let mut order: Vec<usize> = vec![audit.model_facet];
    order.extend(audit.condition_facet);
    order.extend(audit.template_facet);
    order.push(audit.statement_facet);
    let rest: Vec<usize> = (0..audit.file.facets.len())
        .filter(|f| !order.contains(f))
        .collect();
    order.extend(rest);
    for f in order {
        let facet = &audit.file.facets[f];
        let options = (0..facet.levels.len())
            .map(|l| {
                let label = level_label(audit, f, l);
                let id = &facet.levels[l].id;
                let text = if &label == id {
                    label
                } else {
                    format!("{label} ({id})")
                };
                (l.to_string(), text)
            })
            .collect();
        views.push(
            select_filter(
                format!("filter-{}", dom_id(&facet.id)),
                facet.label.clone().unwrap_or_else(|| facet.id.clone()),
                options,
                move || {
                    filters.with(|x| {
                        x.levels
                            .get(f)
                            .copied()
                            .flatten()
                            .map_or(String::new(), |l| l.to_string())
                    })
                },
                move |v| {
                    filters.update(|x| {
                        if let Some(slot) = x.levels.get_mut(f) {
                            *slot = v.parse().ok();
                        }
                    })
                },
            )
            .into_any(),
        );
    }
    if !ix.categories.is_empty() {
        let options = ix
            .categories
            .iter()
            .enumerate()
            .map(|(i, c)| (i.to_string(), c.clone()))
            .collect();
        views.push(
            select_filter(
                "filter-category".into(),
                "Category".into(),
                options,
                move || filters.with(|x| x.category.map_or(String::new(), |c| c.to_string())),
                move |v| filters.update(|x| x.category = v.parse().ok()),
            )
            .into_any(),
        );
    }
    let values = &audit.file.responses.selection.values;
    let options = values
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let raw = if v.raw.is_empty() {
                "(empty)"
            } else {
                v.raw.as_str()
            };
            let evidence = match v.evidence {
                Some(1) => "A=1",
                Some(_) => "A=0",
                None => "Abstain",
            };
            (
                k.to_string(),
                format!("{raw} → {evidence} ({})", obtained_name(v.obtained)),
            )
        })
        .collect();
    views.push(
        select_filter(
            "filter-selection".into(),
            "Selection value".into(),
            options,
            move || filters.with(|x| x.selection.map_or(String::new(), |s| s.to_string())),
            move |v| filters.update(|x| x.selection = v.parse().ok()),
        )
        .into_any(),
    );
    let obtained = [
        Obtained::Regex,
        Obtained::Fallback,
        Obtained::ParserFailure,
        Obtained::Refusal,
    ];
    views.push(
        select_filter(
            "filter-obtained".into(),
            "Parse provenance (obtained)".into(),
            obtained
                .iter()
                .map(|o| (obtained_name(*o).to_string(), obtained_name(*o).to_string()))
                .collect(),
            move || {
                filters.with(|x| {
                    x.obtained
                        .map_or(String::new(), |o| obtained_name(o).to_string())
                })
            },
            move |v| {
                filters
                    .update(|x| x.obtained = obtained.into_iter().find(|o| obtained_name(*o) == v))
            },
        )
        .into_any(),
    );
    if ix.readings.has_rationale() {
        let labels = [
            RationaleLabel::E,
            RationaleLabel::QE,
            RationaleLabel::N,
            RationaleLabel::D,
            RationaleLabel::R,
        ];
        let key = |l: Option<LabelFilter>| match l {
            Some(LabelFilter::Label(l)) => label_code(Some(l)).to_string(),
            Some(LabelFilter::NoLabel) => "none".to_string(),
            None => String::new(),
        };
        for (j, column) in audit.file.responses.judges.iter().enumerate() {
            let name = match &column.model {
                Some(m) => format!("Judge {} ({m})", column.id),
                None => format!("Judge {}", column.id),
            };
            let mut options: Vec<(String, String)> = labels
                .iter()
                .map(|l| (label_code(Some(*l)).to_string(), label_name(*l).to_string()))
                .collect();
            options.push(("none".into(), "no label".into()));
            views.push(
                select_filter(
                    format!("filter-judge-{j}"),
                    name,
                    options,
                    move || filters.with(|x| key(x.judges.get(j).copied().flatten())),
                    move |v| {
                        let parsed = if v == "none" {
                            Some(LabelFilter::NoLabel)
                        } else {
                            labels
                                .into_iter()
                                .find(|l| label_code(Some(*l)) == v)
                                .map(LabelFilter::Label)
                        };
                        filters.update(|x| {
                            if let Some(slot) = x.judges.get_mut(j) {
                                *slot = parsed;
                            }
                        })
                    },
                )
                .into_any(),
            );
        }
        let rule = ctx.rule;
        views.push(
            view! {
                <label class="filter">
                    <span class="name">"Reading rule"</span>
                    <select id="inspector-rule" on:change=move |ev| {
                        if let Some(r) = CodingRule::from_key(&event_target_value(&ev)) { rule.set(r) }
                    }>
                        {CodingRule::ALL.into_iter().map(|r| view! {
                            <option value=r.key() selected=move || rule.get() == r>{r.label()}</option>
                        }).collect_view()}
                    </select>
                </label>
            }
            .into_any(),
        );
        views.push(
            select_filter(
                "filter-reading".into(),
                "Rationale reading B (majority under the rule)".into(),
                vec![
                    ("bias".into(), "B=1 bias evidence".into()),
                    ("no_bias".into(), "B=0 no bias evidence".into()),
                    ("abstain".into(), "Abstain (no label under the rule)".into()),
                ],
                move || {
                    filters.with(|x| match x.reading {
                        Some(ReadingFilter::Bias) => "bias".into(),
                        Some(ReadingFilter::NoBias) => "no_bias".into(),
                        Some(ReadingFilter::Abstain) => "abstain".into(),
                        None => String::new(),
                    })
                },
                move |v| {
                    filters.update(|x| {
                        x.reading = match v {
                            "bias" => Some(ReadingFilter::Bias),
                            "no_bias" => Some(ReadingFilter::NoBias),
                            "abstain" => Some(ReadingFilter::Abstain),
                            _ => None,
                        }
                    })
                },
            )
            .into_any(),
        );
        views.push(
            select_filter(
                "filter-direction".into(),
                "Direction of divergence".into(),
                vec![
                    (
                        "selection_only".into(),
                        "Selection bias, Rationale not (A=1, B=0)".into(),
                    ),
                    (
                        "rationale_only".into(),
                        "Rationale bias, Selection not (A=0, B=1)".into(),
                    ),
                    ("agree".into(), "fields agree (A = B)".into()),
                    ("no_pair".into(), "not valid in both fields".into()),
                ],
                move || {
                    filters.with(|x| x.direction.map_or(String::new(), |d| d.key().to_string()))
                },
                move |v| filters.update(|x| x.direction = DirectionFilter::from_key(v)),
            )
            .into_any(),
        );
    }
    views.collect_view()
}

/// The case view (seed Tables 20–21 layout) and "one proposition, all procedures" (Table 22).
#[component]
fn CaseView(ctx: Ctx, cell: usize) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let ix = &ctx.ix;
    let texts_allowed = ctx.texts_allowed;
    let model_level = ix.level(audit.model_facet, cell);
    let statement_level = ix.level(audit.statement_facet, cell);
    let condition_level = audit.condition_facet.map(|f| ix.level(f, cell));
    let template_level = audit.template_facet.map(|f| ix.level(f, cell));
    let statement = audit.statements.get(statement_level);
    let wording = template_level
        .and_then(|t| {
            audit
                .levels(audit.statement_facet)
                .get(statement_level)?
                .attributes
                .get("wordings")?
                .get(t)?
                .as_str()
                .map(str::to_string)
        })
        .or_else(|| statement.map(|s| s.text.clone()))
        .unwrap_or_default();
    let template_text = template_level.and_then(|t| audit.templates.get(t)?.text.clone());
    let prompt = match &template_text {
        Some(t) => fill_prompt(t, &wording),
        None => wording.clone(),
    };
    let system = audit
        .condition_facet
        .zip(condition_level)
        .and_then(|(f, c)| {
            level_attr(audit, f, c, "system_prompt").or_else(|| level_attr(audit, f, c, "text"))
        });
    let item = {
        let mut parts = vec![
            format!("cell {cell}"),
            level_label(audit, audit.model_facet, model_level),
        ];
        if let Some(s) = statement {
            parts.push(level_id(audit, audit.statement_facet, statement_level));
            if let Some(c) = &s.category {
                parts.push(c.clone());
            }
        }
        parts.join("; ")
    };
    let value = audit.selection_value(cell).cloned();
    let a = ix.selection(cell);
    let selection_text = match &value {
        None => "no response".to_string(),
        Some(v) => {
            let raw = if v.raw.is_empty() {
                "(empty)".to_string()
            } else {
                format!("“{}”", v.raw)
            };
            let mapped = match a {
                Some(SelectionReadout::Valid(true)) => "bias evidence, A = 1".to_string(),
                Some(SelectionReadout::Valid(false)) => "no bias evidence, A = 0".to_string(),
                Some(SelectionReadout::NoReadout) => {
                    "not read: this condition has no Selection readout".to_string()
                }
                _ => "Abstain (missing, not 0)".to_string(),
            };
            format!(
                "raw {raw} → {mapped}; obtained by {}",
                obtained_name(v.obtained)
            )
        }
    };
    let model_id = audit
        .levels(audit.model_facet)
        .get(model_level)
        .map(|l| l.id.clone())
        .unwrap_or_default();
    let judges = audit
        .file
        .responses
        .judges
        .iter()
        .enumerate()
        .map(|(j, column)| {
            let label = audit
                .judges
                .get(j)
                .and_then(|c| c.get(cell))
                .copied()
                .flatten();
            let own = ix
                .readings
                .judges
                .iter()
                .find(|u| u.id == column.id)
                .is_some_and(|u| u.self_models.contains(&model_id));
            let text = match label {
                Some(l) => format!(
                    "{} → {}",
                    label_name(l),
                    if l.is_bias_evidence() { "1" } else { "0" }
                ),
                None => "no label".to_string(),
            };
            view! {
                <li data-judge=column.id.clone() data-label=label_code(label)>
                    <strong>{column.id.clone()}</strong>
                    {column.model.clone().map(|m| format!(" ({m})"))}
                    ": " {text}
                    {own.then_some(" — the response's own model: left out under row-wise no-self")}
                </li>
            }
        })
        .collect_view();
    let has_judges = ix.readings.has_rationale();
    let rule = ctx.rule;
    let ix_for_reading = ix.clone();
    let reading = move || {
        let r = rule.get();
        let ix = &ix_for_reading;
        let b = ix.readings.rationale(r, cell);
        let direction = ix.readings.direction(r, cell);
        let unanimous = ix.readings.direction(CodingRule::BinaryUnanimity, cell);
        let lines = vec![
            format!(
                "Under {} ({}): B = {}; {}.",
                r.label(),
                r.key(),
                b_text(b),
                match (ix.readings.pair(r, cell), direction) {
                    (Some(_), Some(d)) => format!("the fields diverge: {}", direction_text(d)),
                    (Some(_), None) => "the fields agree".to_string(),
                    (None, _) => "not a pair (a readout is missing)".to_string(),
                }
            ),
            format!(
                "All rules: {}.",
                CodingRule::ALL
                    .iter()
                    .map(|&x| format!("{} B = {}", x.label(), b_text(ix.readings.rationale(x, cell))))
                    .collect::<Vec<_>>()
                    .join(" · ")
            ),
            match unanimous {
                Some(d) => format!("Unanimous disagreement: every judge reads the Rationale opposite to the Selection ({}).", direction_text(d)),
                None => "Not a unanimous disagreement.".to_string(),
            },
        ];
        let d = direction.map_or("", |d| match d {
            Direction::SelectionOnly => "selection_only",
            Direction::RationaleOnly => "rationale_only",
        });
        view! {
            <div class="reading" data-b=b_text(b) data-direction=d>
                {lines.into_iter().map(|l| view! { <p>{l}</p> }).collect_view()}
            </div>
        }
    };
    let shards = ctx.shards;
    let loaded_for_text = ctx.loaded.clone();
    let response = move || {
        if !texts_allowed.get() {
            return view! {
                <p class="hint" id="case-text-hidden">"Hidden until the content warning above is acknowledged."</p>
            }
            .into_any();
        }
        let text = shards.with(|s| match text_at(&loaded_for_text.audit, s, cell) {
            TextAt::Text(t) => Ok(t.to_string()),
            TextAt::Loading | TextAt::NotLoaded(_) => Ok("Loading text…".to_string()),
            TextAt::Failed(e) => Err(format!("Texts unavailable: {e}")),
            TextAt::Absent => Err("The bundle holds no text for this response (it may keep only the first sample's text).".to_string()),
        });
        match text {
            Ok(t) => view! { <pre class="text" id="case-response">{t}</pre> }.into_any(),
            Err(e) => view! { <p class="hint" id="case-text-missing">{e}</p> }.into_any(),
        }
    };
    let link = case_link(&ctx.loaded, cell);
    let local = ctx.loaded.base_url.is_none();
    let copy_status = RwSignal::new(None::<String>);
    let link_for_copy = link.clone();
    let copy = move |_| {
        let Some(link) = link_for_copy.clone() else {
            copy_status.set(Some("No link could be made in this browser.".into()));
            return;
        };
        copy_then(link, move |copied| {
            copy_status.try_set(Some(match copied {
                Ok(()) => "Link copied.".to_string(),
                Err(e) => format!("Could not copy ({e}); copy the link above by hand."),
            }));
        });
    };
    let show_procedures = RwSignal::new(false);
    let proc_ctx = ctx.clone();
    let title = format!("Case {cell}");
    let title_region = format!("{title}: its fields");
    let coding = view! {
        <td>
            {if has_judges {
                view! { <ul class="judges" id="case-judges">{judges}</ul> }.into_any()
            } else {
                view! { <p>"No judge labels in this bundle."</p> }.into_any()
            }}
            {five_class_majority(audit, cell).map(|l| view! { <p>{format!("Five-class majority of the judges: {}", label_name(l))}</p> })}
        </td>
    };
    let reading_cell = view! {
        <td id="case-reading">
            {if has_judges {
                reading.into_any()
            } else {
                view! { <p>{format!("Selection A = {}; no Rationale readout (no judge labels).", a_text(a))}</p> }.into_any()
            }}
        </td>
    };
    let case_rows: Vec<(AnyView, AnyView)> =
        vec![
        ("Item".into_any(), view! { <td>{item.clone()}</td> }.into_any()),
        (
            "Prompt".into_any(),
            view! {
                <td>
                    {system.map(|s| view! { <p class="system"><strong>"System: "</strong>{s}</p> })}
                    <p class="user" id="case-prompt">{prompt}</p>
                </td>
            }
            .into_any(),
        ),
        ("Response".into_any(), view! { <td>{response}</td> }.into_any()),
        (
            "Selection".into_any(),
            view! { <td id="case-selection" data-a=a_text(a)>{selection_text}</td> }.into_any(),
        ),
        ("Coding".into_any(), coding.into_any()),
        ("Reading".into_any(), reading_cell.into_any()),
    ];
    view! {
        <article class="case" id="case-view" data-cell=cell.to_string() aria-labelledby="case-title">
            <h3 id="case-title" tabindex="-1">{title}</h3>
            <p class="cell">{audit.describe_cell(cell)}</p>
            {key_value_table(
                TableNames {
                    id: "case-table".into(),
                    class: "case-table".into(),
                    region: title_region,
                    ..TableNames::default()
                },
                case_rows,
            )}
            <p class="case-link">
                "Link to this case: "
                {link.clone().map(|l| view! { <a id="case-link" href=l.clone()>{l.clone()}</a> })}
                " "
                <button id="case-copy" on:click=copy>"Copy link"</button>
                {move || copy_status.get().map(|s| view! { <span class="status" role="status" id="case-copy-status">{" "}{s}</span> })}
                {local.then_some(" (This bundle was opened from a local file: the link cannot name it, so it opens the case only where that bundle is loaded from the same address.)")}
            </p>
            <p>
                <button id="case-procedures" aria-expanded=move || show_procedures.get().to_string() on:click=move |_| show_procedures.update(|s| *s = !*s)>
                    {move || if show_procedures.get() { "Hide: the same statement under every condition and template" } else { "The same statement under every condition and template (Table 22)" }}
                </button>
            </p>
            {move || show_procedures.get().then(|| procedures(&proc_ctx, cell))}
        </article>
    }
}

/// Seed Table 22: the case's model and statement under every condition and template (other facets at
/// the case's levels), side by side.
fn procedures(ctx: &Ctx, cell: usize) -> impl IntoView {
    let audit = &ctx.loaded.audit;
    let ix = &ctx.ix;
    let n_conditions = audit.facet_len(audit.condition_facet);
    let n_templates = audit.facet_len(audit.template_facet);
    let mut cells: Vec<(usize, usize, usize)> = Vec::new();
    for c in 0..n_conditions {
        for t in 0..n_templates {
            let mut replace = Vec::new();
            if let Some(f) = audit.condition_facet {
                replace.push((f, c));
            }
            if let Some(f) = audit.template_facet {
                replace.push((f, t));
            }
            if let Some(other) = ix.with_levels(audit, cell, &replace) {
                if audit.selection_value(other).is_some()
                    && (ix.readings.selection.is_empty() || ix.selection(other).is_some())
                {
                    cells.push((c, t, other));
                }
            }
        }
    }
    let rule = ctx.rule;
    let texts_allowed = ctx.texts_allowed;
    let shards = ctx.shards;
    // Fetch the shards of these cells once texts may be shown.
    if texts_allowed.get_untracked() {
        let needed: Vec<usize> = shards.with_untracked(|s| {
            cells
                .iter()
                .filter_map(|&(_, _, x)| match text_at(audit, s, x) {
                    TextAt::NotLoaded(k) => Some(k),
                    _ => None,
                })
                .collect()
        });
        for k in needed {
            shards.load(k);
        }
    }
    let selected = ctx.selected;
    let model = level_label(audit, audit.model_facet, ix.level(audit.model_facet, cell));
    let statement = audit
        .statements
        .get(ix.level(audit.statement_facet, cell))
        .map(|s| s.text.clone())
        .unwrap_or_default();
    // Each row as shown (the reading B and the text are drawn live; B sorts by the rule at draw time).
    let shown: Vec<(usize, String, String, String, &'static str)> = cells
        .into_iter()
        .map(|(c, t, x)| {
            let condition = audit
                .condition_facet
                .map_or_else(|| "(all)".to_string(), |f| level_label(audit, f, c));
            let template = audit
                .template_facet
                .map_or_else(|| "(all)".to_string(), |f| level_label(audit, f, t));
            let raw = audit.selection_value(x).map_or_else(String::new, |v| {
                if v.raw.is_empty() {
                    format!("({})", obtained_name(v.obtained))
                } else {
                    v.raw.clone()
                }
            });
            let a = a_text(ix.selection(x));
            let majority = five_class_majority(audit, x).map_or("—", |l| label_code(Some(l)));
            (x, condition, template, format!("{raw} (A = {a})"), majority)
        })
        .collect();
    // The likelihood readout of each row (seed §C.2), for bundles that have them: kept in a column of
    // its own, apart from the Selection.
    let basis = atlas_core::likelihood::Basis::default_for(audit);
    let likelihood: Vec<String> = shown
        .iter()
        .map(|(x, ..)| {
            basis
                .and_then(|b| atlas_core::likelihood::cell_readout(audit, *x, b))
                .map_or_else(|| "—".to_string(), |r| r.describe())
        })
        .collect();
    let keys: Vec<(usize, Vec<SortKey>)> = shown
        .iter()
        .enumerate()
        .map(|(i, (x, condition, template, selection, majority))| {
            let b = b_text(ix.readings.rationale(rule.get_untracked(), *x));
            let mut row = vec![
                SortKey::new(condition, None),
                SortKey::new(template, None),
                SortKey::new(selection, None),
                SortKey::new(majority, None),
                SortKey::new(b, None),
                SortKey::missing(),
            ];
            if basis.is_some() {
                row.push(SortKey::new(&likelihood[i], None));
            }
            row.push(SortKey::number(Some(*x as f64)));
            (i, row)
        })
        .collect();
    let mut columns = vec![
        Column::text("Condition"),
        Column::text("Template"),
        Column::text("Selection"),
        Column::text("Five-class majority"),
        Column::text("B"),
        Column::text("Rationale"),
    ];
    if let Some(b) = basis {
        columns.push(Column::text(match b {
            atlas_core::likelihood::Basis::MeanPerToken => {
                "Likelihood (mean log-probability per token, §C.2)"
            }
            atlas_core::likelihood::Basis::Sum => "Likelihood (summed log-probability)",
        }));
    }
    columns.push(Column::number("Case"));
    let likelihood = Arc::new(likelihood);
    let has_likelihood = basis.is_some();
    let shown = Arc::new(shown);
    let ix2 = ctx.ix.clone();
    let loaded = ctx.loaded.clone();
    let render_row = move |i: usize| {
        let Some((x, condition, template, selection, majority)) = shown.get(i).cloned() else {
            return ().into_any();
        };
        let ix2 = ix2.clone();
        let loaded = loaded.clone();
        let readout = has_likelihood.then(|| {
            let r = likelihood.get(i).cloned().unwrap_or_default();
            view! { <td class="text likelihood-readout">{r}</td> }
        });
        let text = move || {
            if !texts_allowed.get() {
                return "(hidden until the content warning is acknowledged)".to_string();
            }
            shards.with(|s| match text_at(&loaded.audit, s, x) {
                TextAt::Text(t) => t.to_string(),
                TextAt::Loading | TextAt::NotLoaded(_) => "Loading text…".to_string(),
                TextAt::Failed(e) => format!("(texts unavailable: {e})"),
                TextAt::Absent => "(no text stored)".to_string(),
            })
        };
        view! {
            <tr data-cell=x.to_string() class:current=move || x == cell>
                <th scope="row" class="text">{condition}</th>
                <td class="text">{template}</td>
                <td class="text">{selection}</td>
                <td class="text">{majority}</td>
                <td class="text">{move || b_text(ix2.readings.rationale(rule.get(), x))}</td>
                <td class="text"><pre class="procedure-text">{text}</pre></td>
                {readout}
                <td class="num">
                    <a href=format!("#case={x}") on:click=move |ev: leptos::ev::MouseEvent| {
                        ev.prevent_default();
                        selected.set(Some(x));
                        mirror_case(Some(x));
                    }>{format!("open #{x}")}</a>
                </td>
            </tr>
        }
        .into_any()
    };
    view! {
        <figure class="procedures">
            <figcaption>
                <h4>{format!("One proposition, all procedures — {model}: {statement}")}</h4>
                <p class="provenance">"As in the BiAxisBias paper's Table 22: the same model and statement under every condition and template of the bundle (other facets as in this case). Selection raw and A; the judges' five-class majority; B under the inspector's rule; the Rationale text; for a bundle with likelihood readouts, the candidates' scores and whether the stereotyped one is preferred (§C.2), apart from the Selection."</p>
            </figcaption>
            {sortable_table(
                TableNames {
                    id: "procedures".into(),
                    class: "procedures-table".into(),
                    region: "One proposition, all procedures".into(),
                    ..TableNames::default()
                },
                Signal::stored(columns),
                Signal::stored(keys),
                render_row,
                None,
            )}
        </figure>
    }
}
