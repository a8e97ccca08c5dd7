//! The parts of a form the pilot panel's three sections share: labelled text and number fields bound
//! to a form's field, and the lists of provider rows (provider, base URL, model, key masked, prices;
//! rubric or new column id for judges) with their add / remove buttons.

use crate::pilot::form::{rules, FormError, FormState, ProviderRow, Rows};
use atlas_core::number::Rule;
use atlas_pilot::provider::ProviderKind;
use leptos::prelude::*;

use crate::pilot::store::Keys;
use crate::ui::number_field::{message, NumberInput};

pub(crate) fn text_field(
    form: RwSignal<FormState>,
    id: &'static str,
    label: &'static str,
    get: fn(&FormState) -> String,
    set: fn(&mut FormState, String),
) -> impl IntoView {
    form_field(form, id, label, 20, get, set)
}

/// How a form field is read and written: its getter and its setter.
pub(crate) type Accessors<F> = (fn(&F) -> String, fn(&mut F, String));

pub(crate) fn number_field(
    form: RwSignal<FormState>,
    id: &'static str,
    label: &'static str,
    rule: Rule,
    (get, set): Accessors<FormState>,
) -> impl IntoView {
    form_number_field(form, id, label, rule, (get, set))
}

/// A labelled text input `id` of `size` characters bound to one field of a section's form.
pub(crate) fn form_field<F: Send + Sync + 'static>(
    form: RwSignal<F>,
    id: &'static str,
    label: &'static str,
    size: u32,
    get: fn(&F) -> String,
    set: fn(&mut F, String),
) -> impl IntoView {
    view! {
        <label class="field">
            {label}" "
            <input type="text" size=size id=id prop:value=move || form.with(get)
                on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| set(f, v)); }/>
        </label>
    }
}

/// A labelled number input `id` bound to one field of a section's form, read by `rule`: never
/// rewritten while typed in, with its inline message ([`NumberInput`]).
pub(crate) fn form_number_field<F: Send + Sync + 'static>(
    form: RwSignal<F>,
    id: &'static str,
    label: &'static str,
    rule: Rule,
    (get, set): Accessors<F>,
) -> impl IntoView {
    let decimal = matches!(rule, Rule::Decimal(_));
    let problem = Signal::derive(move || {
        form.with(|f| rule.check(&get(f)).err().map(|e| message(label, &e)))
    });
    view! {
        <label class="field">
            {label}" "
            <NumberInput id=id decimal=decimal size=8
                shown=Signal::derive(move || form.with(get))
                on_text=Callback::new(move |v: String| form.update(|f| set(f, v)))
                problem=problem/>
        </label>
    }
}

/// The buttons under a list of provider rows ([`row_list`]).
pub(crate) struct RowButtons {
    /// Element id of the add button.
    pub(crate) add_id: &'static str,
    /// Its label.
    pub(crate) add_label: &'static str,
    /// Element id of the remove button (`None`: no id).
    pub(crate) remove_id: Option<&'static str>,
    /// Its label.
    pub(crate) remove_label: &'static str,
    /// Most rows (`None`: no limit).
    pub(crate) max: Option<usize>,
    /// Fewest rows (the remove button does nothing at this count).
    pub(crate) min: usize,
}

/// A list of provider rows ([`provider_row`]) with a button that adds a row and one that removes
/// the last.
pub(crate) fn row_list(rows: Rows, keys: Keys, buttons: RowButtons) -> impl IntoView {
    let n = Memo::new(move |_| rows.count());
    let RowButtons {
        add_id,
        add_label,
        remove_id,
        remove_label,
        max,
        min,
    } = buttons;
    view! {
        {move || (0..n.get()).map(|i| provider_row(rows, keys, i)).collect_view()}
        <button id=add_id on:click=move |_| {
            if max.is_none_or(|m| rows.count() < m) {
                rows.push();
            }
        }>{add_label}</button>
        " "
        <button id=remove_id on:click=move |_| {
            if rows.count() > min {
                rows.pop();
            }
        }>{remove_label}</button>
    }
}

/// One provider row: provider, base URL, model, key (masked), prices per 1M tokens;
/// for the pilot's judges the rubric, and for the judges of a loaded bundle the new column id.
pub(crate) fn provider_row(rows: Rows, keys: Keys, i: usize) -> impl IntoView {
    let judge = rows.has_rubric();
    let column = matches!(rows, Rows::BundleJudges(_));
    let update = move |change: Box<dyn FnOnce(&mut ProviderRow)>| rows.update(i, change);
    let id = rows.get_untracked(i).map(|r| r.id).unwrap_or_default();
    let field = move |what: &'static str| {
        move || {
            rows.get(i)
                .map(|r| match what {
                    "kind" => r.kind,
                    "base_url" => r.base_url,
                    "model" => r.model,
                    "price_in" => r.price_in,
                    "price_out" => r.price_out,
                    "rubric_system" => r.rubric_system,
                    "column" => r.column,
                    _ => r.rubric_user,
                })
                .unwrap_or_default()
        }
    };
    let id_for_key = id.clone();
    let id_for_mask = id.clone();
    let id_for_rubric = id.clone();
    view! {
        <div class="provider-row" id=format!("pilot-row-{id}")>
            <strong>{id.clone()}</strong>" "
            {column.then(|| view! {
                <label>"New judge column id "
                    <input type="text" size="12" id=format!("pilot-column-{id}") prop:value=field("column")
                        on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.column = v)); }/>
                </label>
                " "
            })}
            <label>"Provider "
                <select id=format!("pilot-kind-{id}") prop:value=field("kind") on:change=move |ev| {
                    let v = event_target_value(&ev);
                    update(Box::new(move |r| {
                        let kind = match v.as_str() {
                            "anthropic" => ProviderKind::Anthropic,
                            "gemini" => ProviderKind::Gemini,
                            _ => ProviderKind::OpenAiCompatible,
                        };
                        r.base_url = kind.default_base_url().to_string();
                        r.kind = v;
                    }));
                }>
                    <option value="openai_compatible">"OpenAI-compatible (OpenAI, OpenRouter, vLLM, llama.cpp, Ollama /v1)"</option>
                    <option value="anthropic">"Anthropic"</option>
                    <option value="gemini">"Gemini"</option>
                </select>
            </label>" "
            <label>"Base URL "
                <input type="url" id=format!("pilot-base-{id}") prop:value=field("base_url")
                    on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.base_url = v)); }/>
            </label>" "
            <label>"Model "
                <input type="text" id=format!("pilot-model-{id}") prop:value=field("model")
                    on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.model = v)); }/>
            </label>" "
            <label>"API key "
                <input type="password" autocomplete="off" id=format!("pilot-key-{id}")
                    placeholder=move || keys.masked.with(|m| m.get(&id_for_mask).cloned()).unwrap_or_else(|| "not set".into())
                    on:change=move |ev| {
                        // The field is emptied once the key is taken; an empty field changes nothing
                        // (a browser may fire `change` again on blur). "Forget keys" removes keys.
                        let input: web_sys::HtmlInputElement = event_target(&ev);
                        let typed = input.value();
                        if !typed.trim().is_empty() {
                            keys.set(&id_for_key, &typed);
                            input.set_value("");
                        }
                    }/>
            </label>" "
            <span class="key-mask" id=format!("pilot-key-mask-{id}")>
                {let id = id.clone(); move || keys.masked.with(|m| m.get(&id).cloned()).map(|m| format!("key: {m}")).unwrap_or_else(|| "no key (fine for local servers)".into())}
            </span>
            " "{crate::pilot::connection_test::test_button(id.clone(), move || rows.get_untracked(i).ok_or(FormError::RowGone).and_then(|r| r.provider()), keys)}
            <br/>
            <label>"Price per 1M input tokens "
                <NumberInput id=format!("pilot-price-in-{id}") decimal=true size=6 shown=Signal::derive(field("price_in"))
                    on_text=Callback::new(move |v: String| update(Box::new(move |r| r.price_in = v)))
                    problem=Signal::derive(move || { let t = field("price_in")(); rules::PRICE.read(&t).err().map(|e| message("input price", &e)) })/>
            </label>" "
            <label>"per 1M output tokens "
                <NumberInput id=format!("pilot-price-out-{id}") decimal=true size=6 shown=Signal::derive(field("price_out"))
                    on_text=Callback::new(move |v: String| update(Box::new(move |r| r.price_out = v)))
                    problem=Signal::derive(move || { let t = field("price_out")(); rules::PRICE.read(&t).err().map(|e| message("output price", &e)) })/>
            </label>
            {judge.then(|| view! {
                <br/>
                <label>"Rubric system prompt "
                    <textarea rows="3" cols="80" id=format!("pilot-rubric-system-{id_for_rubric}") prop:value=field("rubric_system")
                        on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.rubric_system = v)); }></textarea>
                </label>
                <label>"Rubric user template ({statement}, {rationale}) "
                    <textarea rows="4" cols="80" id=format!("pilot-rubric-user-{id_for_rubric}") prop:value=field("rubric_user")
                        on:input=move |ev| { let v = event_target_value(&ev); update(Box::new(move |r| r.rubric_user = v)); }></textarea>
                </label>
            })}
        </div>
    }
}
