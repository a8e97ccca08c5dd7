//! The glossary in the page: [`Term`], a term in a title or a label that opens its definition in a small
//! popover (a "toggletip"), and [`Glossary`], the list of every term (`#glossary`). The entries are
//! `atlas_core::glossary::ENTRIES`, the same the docs (`docs/glossary.md`) are written from.
//!
//! Keyboard: the term is a button (Tab reaches it, Enter or Space opens), Escape closes and keeps the
//! focus on the term, moving the focus out closes. The popover is shifted to stay inside the viewport.

use atlas_core::glossary::{find, ENTRIES};
use leptos::prelude::*;
use wasm_bindgen::{JsCast, JsValue};

/// A glossary term: `<Term id="ber">"BER"</Term>`. Renders the children as a button with a dotted
/// underline; activating it shows the entry's plain definition, its paper term and source, and a link
/// to the entry in the [`Glossary`] list. An unknown id renders the children alone (the native test
/// `every_term_id_used_in_the_app_is_a_glossary_entry` keeps every id known).
#[component]
pub fn Term(
    /// The glossary entry's id (`atlas_core::glossary::Entry::id`).
    id: &'static str,
    children: Children,
) -> impl IntoView {
    let Some(entry) = find(id) else {
        return children().into_any();
    };
    let open = RwSignal::new(false);
    let wrap = NodeRef::<leptos::html::Span>::new();
    let pop = NodeRef::<leptos::html::Span>::new();
    let shift = RwSignal::new(0.0_f64);
    let above = RwSignal::new(false);
    // Unique per instance: the same term may appear several times on a page.
    let pop_id = format!("term-{id}-{}", next_instance());
    // After opening, measure the popover and move it back inside the viewport.
    Effect::new(move |_| {
        if !open.get() {
            shift.set(0.0);
            above.set(false);
            return;
        }
        let Some(el) = pop.get() else { return };
        let (Some(vw), Some(vh)) = viewport() else {
            return;
        };
        if let Some((left, right, top, bottom)) = rect(&el) {
            let margin = 8.0;
            let current = shift.get_untracked();
            let base_left = left - current;
            let width = right - left;
            let mut dx = 0.0;
            if base_left + width > vw - margin {
                dx = vw - margin - width - base_left;
            }
            if base_left + dx < margin {
                dx = margin - base_left;
            }
            shift.set(dx);
            let height = bottom - top;
            above.set(bottom > vh - margin && top - height - 40.0 > margin);
        }
    });
    let close_on_escape = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Escape" && open.get_untracked() {
            ev.prevent_default();
            ev.stop_propagation();
            open.set(false);
            if let Some(button) = wrap
                .get_untracked()
                .and_then(|w| w.query_selector("button").ok().flatten())
                .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
            {
                button.focus().ok();
            }
        }
    };
    let close_on_leave = move |ev: leptos::ev::FocusEvent| {
        let inside = ev
            .related_target()
            .and_then(|t| t.dyn_into::<web_sys::Node>().ok())
            .zip(wrap.get_untracked())
            .is_some_and(|(node, w)| w.contains(Some(&node)));
        if !inside {
            open.set(false);
        }
    };
    let pop_for_aria = pop_id.clone();
    view! {
        <span class="term" node_ref=wrap on:keydown=close_on_escape on:focusout=close_on_leave>
            <button
                type="button"
                class="term-button"
                data-term=id
                aria-expanded=move || open.get().to_string()
                aria-controls=pop_id.clone()
                aria-describedby=move || open.get().then(|| pop_for_aria.clone())
                title=format!("What is “{}”?", entry.term)
                on:click=move |_| open.update(|o| *o = !*o)
            >
                {children()}
            </button>
            <span
                class="term-pop"
                class:above=move || above.get()
                id=pop_id
                role="tooltip"
                node_ref=pop
                hidden=move || !open.get()
                style:transform=move || format!("translateX({:.0}px)", shift.get())
            >
                <strong>{entry.term}</strong>": "{entry.definition}
                <span class="term-source">
                    "Paper term: "{entry.paper_term}" · "{entry.source}"."
                </span>
                <a href=format!("#glossary-{id}") class="term-more">"In the glossary"</a>
            </span>
        </span>
    }
    .into_any()
}

/// The glossary list (`<section id="glossary">`): every entry with its definition, paper term and
/// source; each entry's anchor is `#glossary-ID`.
#[component]
pub fn Glossary() -> impl IntoView {
    let items = ENTRIES
        .iter()
        .map(|e| {
            view! {
                <dt id=format!("glossary-{}", e.id) tabindex="-1">{e.term}</dt>
                <dd>
                    {e.definition}
                    <span class="glossary-source">
                        "Paper term: "{e.paper_term}" · Source: "{e.source}"."
                    </span>
                </dd>
            }
        })
        .collect_view();
    view! {
        <section id="glossary" class="glossary" aria-labelledby="glossary-title">
            <h2 id="glossary-title">"Glossary"</h2>
            <p class="provenance">
                "Plain definitions of the terms this explorer uses, with the paper's own term and where it is defined. "
                "“The BiAxisBias paper” is Gan, Dong & Li (arXiv 2605.09041); “the clinical audit paper” is "
                "Purkayastha, Bolla & Nandi (arXiv 2609.32807). “Random seed” always means the number that fixes random draws."
            </p>
            <dl class="glossary-list">{items}</dl>
        </section>
    }
}

/// A number per [`Term`] instance, for unique popover ids.
fn next_instance() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The viewport's width and height in CSS pixels.
fn viewport() -> (Option<f64>, Option<f64>) {
    let Some(w) = web_sys::window() else {
        return (None, None);
    };
    (
        w.inner_width().ok().and_then(|v| v.as_f64()),
        w.inner_height().ok().and_then(|v| v.as_f64()),
    )
}

/// An element's bounding box in viewport pixels: (left, right, top, bottom). Read through
/// `getBoundingClientRect` by reflection (web-sys's `DomRect` is not among the enabled features).
fn rect(el: &web_sys::Element) -> Option<(f64, f64, f64, f64)> {
    let f = js_sys::Reflect::get(el, &JsValue::from_str("getBoundingClientRect"))
        .ok()?
        .dyn_into::<js_sys::Function>()
        .ok()?;
    let r = f.call0(el).ok()?;
    let num = |k: &str| {
        js_sys::Reflect::get(&r, &JsValue::from_str(k))
            .ok()?
            .as_f64()
    };
    Some((num("left")?, num("right")?, num("top")?, num("bottom")?))
}
