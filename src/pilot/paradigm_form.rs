//! The task-paradigm part of the pilot's design form (issue 18; seed `000_…` §4.3, Table 10): the
//! propositions (pasted, read from a propositions file, a CrowS-Pairs CSV or a BBQ JSON Lines file —
//! drawn down to a size with the form's seed — or taken from the loaded bundle's statements where
//! they carry the fields), the procedures to ask them as, and each
//! procedure's wording, editable. The design and plan are
//! [`crate::pilot::form::paradigm`]'s ([`crate::pilot::form::ParadigmForm`] holds the fields).

use atlas_pilot::paradigm::{ParadigmTemplates, Procedure};
use atlas_pilot::proposition::{from_bundle, parse_propositions, read_file, to_jsonl};
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::pilot::form::FormState;

/// How many propositions a CrowS-Pairs or BBQ file is drawn down to unless the user types another
/// number (the demo's size: 20 from each).
const DEFAULT_DRAW: usize = 20;

/// The task-paradigm fields (shown when the prompt family is task paradigms).
#[component]
pub fn ParadigmFields(form: RwSignal<FormState>) -> impl IntoView {
    let draw = RwSignal::new(DEFAULT_DRAW.to_string());
    let file_note = RwSignal::new(None::<Result<String, String>>);
    // What the pasted text reads as, live: a count or the first problem (record/line and member).
    let status = Memo::new(move |_| {
        form.with(|f| {
            let text = f.paradigm.propositions.trim();
            if text.is_empty() {
                return None;
            }
            Some(
                parse_propositions(text)
                    .map(|p| {
                        let mut cats: Vec<&str> =
                            p.iter().filter_map(|p| p.category.as_deref()).collect();
                        cats.sort_unstable();
                        cats.dedup();
                        format!(
                            "{} propositions read ({} bias categories).",
                            p.len(),
                            cats.len()
                        )
                    })
                    .map_err(|e| e.to_string()),
            )
        })
    });
    let on_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let Some(picked) = input.files().and_then(|f| f.get(0)) else {
            return;
        };
        let limit = draw
            .get_untracked()
            .trim()
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0);
        let seed = form
            .with_untracked(|f| f.seed.trim().parse::<u64>())
            .unwrap_or(1);
        spawn_local(async move {
            let name = picked.name();
            let Some(limit) = limit else {
                file_note.set(Some(Err(
                    "How many to draw: type a whole number above 0 first.".into(),
                )));
                return;
            };
            let read = match wasm_bindgen_futures::JsFuture::from(picked.text()).await {
                Ok(text) => read_file(&name, &text.as_string().unwrap_or_default(), limit, seed),
                Err(e) => Err(format!(
                    "reading {name} failed: {}",
                    crate::browser::loader::js_message(&e)
                )),
            };
            match read {
                Ok((props, note)) => {
                    form.update(|f| f.paradigm.propositions = to_jsonl(&props));
                    file_note.set(Some(Ok(note)));
                }
                // The propositions already typed stay as they were.
                Err(e) => file_note.set(Some(Err(e))),
            }
        });
    };
    // The loaded bundle's statements, where they carry the proposition fields.
    let state = expect_context::<crate::state::AtlasState>();
    let from_loaded = move |_| {
        let read = state.loaded.with_untracked(|l| {
            let l = l.as_ref().ok_or("No bundle is loaded.")?;
            let name = l.audit.metadata().id.clone();
            let c = from_bundle(&l.audit.file).map_err(|e| format!("{name}: {e}"))?;
            let skipped: usize = c.skipped.values().sum();
            if c.propositions.is_empty() {
                return Err(format!(
                    "{name}: none of its {skipped} statements carries the proposition fields (a `proposition` attribute, or `counter` and `counter_group`; docs/paradigms.md)."
                ));
            }
            Ok((
                to_jsonl(&c.propositions),
                format!(
                    "{name}: {} propositions read from its statements{}.",
                    c.propositions.len(),
                    if skipped > 0 {
                        format!(" ({skipped} statements without the fields skipped)")
                    } else {
                        String::new()
                    }
                ),
            ))
        });
        match read {
            Ok((text, note)) => {
                form.update(|f| f.paradigm.propositions = text);
                file_note.set(Some(Ok(note)));
            }
            Err(e) => file_note.set(Some(Err(e))),
        }
    };
    let procedures = Procedure::ALL
        .iter()
        .map(|&p| {
            let (task, space, mapping) = p.table10();
            view! {
                <label class="procedure-row">
                    <input type="checkbox" id=format!("pilot-proc-{}", p.id())
                        prop:checked=move || form.with(|f| f.paradigm.has(p))
                        on:change=move |ev| { let on = event_target_checked(&ev); form.update(|f| f.paradigm.set(p, on)); }/>
                    " "<strong>{p.label()}</strong>
                    <span class="hint">{format!(" — {task}; answer: {space}; counts as bias evidence: {mapping}")}</span>
                </label>
            }
        })
        .collect_view();
    let wordings = Procedure::ALL
        .iter()
        .map(|&p| {
            view! {
                <label class="block">{format!("{} wording", p.label())}
                    <textarea id=format!("pilot-wording-{}", p.id()) rows="6" cols="80"
                        prop:value=move || form.with(|f| f.paradigm.wording(p).to_string())
                        on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.paradigm.set_wording(p, v)); }></textarea>
                </label>
            }
        })
        .collect_view();
    view! {
        <div class="pilot-paradigm" id="pilot-paradigm">
            <p>
                "Each proposition — a stereotype about a target group, with a counter group — is asked in every ticked task format. "
                "The two options are shown as A and B, their order counterbalanced with the seed (recorded per response); a NEITHER answer or a refusal counts as "
                <em>"Abstain"</em>". The formats become the bundle's conditions, so its Analyses view can show whether the format reorders your models. "
                "Judges are not used in this design. See "<code>"docs/paradigms.md"</code>" for the proposition fields."
            </p>
            <label class="block">"Propositions (a JSON array or JSON Lines, as "<code>"atlas propositions"</code>" writes them)"
                <textarea id="pilot-propositions" rows="5" cols="80" spellcheck="false"
                    prop:value=move || form.with(|f| f.paradigm.propositions.clone())
                    on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.paradigm.propositions = v); }></textarea>
            </label>
            <p id="pilot-propositions-status" role="status">
                {move || match status.get() {
                    None => view! { <span class="hint">"None yet: paste them, or read a file below."</span> }.into_any(),
                    Some(Ok(s)) => view! { <span>{s}</span> }.into_any(),
                    Some(Err(e)) => view! { <span class="error">{format!("Not usable: {e}")}</span> }.into_any(),
                }}
            </p>
            <div>
                <label>"Read a file (propositions JSON/JSONL, a CrowS-Pairs CSV or a BBQ JSONL) "
                    <input type="file" id="pilot-propositions-file" accept=".json,.jsonl,.csv,application/json,text/csv" on:change=on_file/>
                </label>" "
                <label>"draw at most "
                    <input type="text" inputmode="numeric" id="pilot-propositions-draw" size="5"
                        prop:value=move || draw.get() on:input=move |ev| draw.set(event_target_value(&ev))/>
                    " from a CrowS-Pairs or BBQ file (with the seed below)"
                </label>
                " "
                <button id="pilot-propositions-from-bundle" on:click=from_loaded>"Use the loaded bundle's propositions"</button>
                {move || file_note.get().map(|n| match n {
                    Ok(s) => view! { <p id="pilot-propositions-file-note" role="status">{s}</p> }.into_any(),
                    Err(e) => view! { <p id="pilot-propositions-file-note" class="error" role="alert">{e}</p> }.into_any(),
                })}
            </div>
            <fieldset class="pilot-procedures">
                <legend>"Task formats (procedures; the BiAxisBias paper's Table 10)"</legend>
                {procedures}
            </fieldset>
            <details id="pilot-wordings">
                <summary>"Wordings of the task formats, editable (placeholders: {option_a}, {option_b}, {frame}, {context}, {question}, {evidence}, {contract})"</summary>
                {wordings}
                <label class="block">"Answer format filled into {contract}"
                    <textarea id="pilot-contract" rows="3" cols="80"
                        prop:value=move || form.with(|f| f.paradigm.templates.contract.clone())
                        on:input=move |ev| { let v = event_target_value(&ev); form.update(|f| f.paradigm.templates.contract = v); }></textarea>
                </label>
                <button id="pilot-wordings-reset" on:click=move |_| form.update(|f| f.paradigm.templates = ParadigmTemplates::default())>
                    "Reset the wordings"
                </button>
            </details>
        </div>
    }
}
