//! Number fields: a text input that is never rewritten while the user types in it, with its inline
//! message. Every number field of the app (weights, seeds, bootstrap sizes, draws, budgets, pilot
//! parameters, prices, caps) is one of these, read by the rules of [`atlas_core::number`].
//!
//! Why a text input: an `<input type="number">` hands the page an empty value for a half-typed
//! number (`0.`, `-`, `1e`), so a page that writes its state back into the field wipes what the user
//! is typing (`0.5` became `50`). Here the page only ever writes into a field that does not have the
//! focus, and a half-typed or unusable text stays as typed, with its message beside it, while the
//! numbers computed from the last valid value stay.

use atlas_core::number::NumberError;
use leptos::html;
use leptos::prelude::*;

/// Whether the browser's element `el` has the keyboard focus.
fn has_focus(el: &web_sys::HtmlInputElement) -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element())
        .is_some_and(|active| {
            let el: &web_sys::Element = el.as_ref();
            active == *el
        })
}

/// `label: message` for the inline message of a field named `label`.
pub fn message(label: &str, error: &NumberError) -> String {
    format!("{label}: {error}")
}

/// A number input with id `id` and, right after it, its message (`{id}-msg`, announced politely).
///
/// - `shown`: the text the field shows whenever the user is not typing in it (a preset, a slider,
///   a restored run); while the field has the focus it is never written.
/// - `on_text`: every change, as typed.
/// - `problem`: the inline message, `None` when the text is usable; the input is then marked
///   `aria-invalid` and described by the message.
/// - `decimal`: a keypad with a decimal point on phones (`inputmode="decimal"`), else digits only.
#[component]
pub fn NumberInput(
    /// Element id of the input.
    #[prop(into)]
    id: String,
    /// What the field shows when it does not have the focus.
    #[prop(into)]
    shown: Signal<String>,
    /// Receives every edit, as typed.
    on_text: Callback<String>,
    /// The inline message (`None`: the value is usable).
    #[prop(into)]
    problem: Signal<Option<String>>,
    /// Whether the field is disabled.
    #[prop(optional, into)]
    disabled: Signal<bool>,
    /// A decimal keypad (`inputmode="decimal"`) instead of a numeric one.
    #[prop(optional)]
    decimal: bool,
    /// The field's width in characters (default 10).
    #[prop(optional)]
    size: Option<u32>,
    /// Ids of other elements that describe the field (a hint), space-separated.
    #[prop(optional, into)]
    describedby: Option<String>,
    /// An accessible name when no `<label for>` names the field.
    #[prop(optional, into)]
    aria_label: Option<String>,
) -> impl IntoView {
    let node = NodeRef::<html::Input>::new();
    let msg_id = format!("{id}-msg");
    let msg_id2 = msg_id.clone();
    // While the field has the focus, the value written is the field's own (a no-op for the browser):
    // the page never rewrites what the user is typing.
    let value = move || {
        let wanted = shown.get();
        match node.get() {
            Some(el) if has_focus(&el) => el.value(),
            _ => wanted,
        }
    };
    let described = move || {
        let mut ids: Vec<String> = describedby.iter().cloned().collect();
        if problem.with(Option::is_some) {
            ids.push(msg_id2.clone());
        }
        (!ids.is_empty()).then(|| ids.join(" "))
    };
    view! {
        <input
            type="text"
            node_ref=node
            id=id
            class="number"
            inputmode=if decimal { "decimal" } else { "numeric" }
            autocomplete="off"
            spellcheck="false"
            size=size.unwrap_or(10)
            aria-label=aria_label
            aria-invalid=move || problem.with(Option::is_some).then_some("true")
            aria-describedby=described
            prop:value=value
            prop:disabled=move || disabled.get()
            on:input=move |ev| on_text.run(event_target_value(&ev))
        />
        <span class="field-error" id=msg_id aria-live="polite">
            {move || problem.get()}
        </span>
    }
}
