//! The bundle picker (top bar button → this panel) and the load status bar: the shipped bundles with
//! one line each, the recently opened ones (names and URLs only, in `localStorage`), open a file or a
//! URL, and — after a failed load — the error with a way back (the bundle already loaded stays).
//!
//! Recent bundles are kept under [`RECENT_KEY`] as a JSON list of [`Recent`] (at most
//! [`RECENT_MAX`]): the name shown and the URL it was opened from, or no URL for a file opened from
//! disk (a page cannot reopen a local file, so it is listed by name with a note). Nothing of a bundle's
//! content is stored.

use crate::state::{default_bundle_url, AtlasState, LoadStatus, DEFAULT_BUNDLE};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A bundle shipped with the app: its path (relative to the page), id, and what it is in one line.
pub struct Shipped {
    /// Path relative to the page (`static/bundles/…/bundle.json`).
    pub path: &'static str,
    /// The bundle's `metadata.id` (what the top bar shows once it is open).
    pub id: &'static str,
    /// Name shown in the picker.
    pub name: &'static str,
    /// One plain line about it.
    pub line: &'static str,
}

/// The bundles in `static/bundles/` (made by the converter and `scripts/make-*.sh`).
pub const SHIPPED: [Shipped; 3] = [
    Shipped {
        path: DEFAULT_BUNDLE,
        id: "decodingtrust-stereotype-v1",
        name: "DecodingTrust stereotypes (default)",
        line: "8 LLMs agreeing or disagreeing with stereotype statements under 3 system prompts — the published DecodingTrust results.",
    },
    Shipped {
        path: "static/bundles/pilot-demo-smollm2/bundle.json",
        id: "pilot-demo-smollm2-135m",
        name: "Pilot demo (SmolLM2-135M)",
        line: "A small local model on 40 statements × 5 wordings × 3 repeats: shows what a pilot run produces (a pipeline demo, not evidence).",
    },
    Shipped {
        path: "static/bundles/clinical-demo-smollm2/bundle.json",
        id: "clinical-demo-smollm2-135m",
        name: "Clinical demo (SmolLM2-135M)",
        line: "A small local model on 20 medical questions with demographic changes: shows the Clinical view (a pipeline demo, not clinical evidence).",
    },
];

/// The `localStorage` key of the recent-bundles list.
pub const RECENT_KEY: &str = "audit-atlas.recent-bundles";
/// How many recent bundles are kept.
pub const RECENT_MAX: usize = 6;

/// One recently opened bundle: what the picker lists (no content of the bundle).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recent {
    /// The bundle's title (or id).
    pub name: String,
    /// The URL it was opened from; `None` for a file opened from disk (to be re-opened from disk).
    pub url: Option<String>,
    /// For a file from disk: its file name.
    pub file: Option<String>,
}

/// `list` with `entry` first and no other entry for the same URL (or file name), at most
/// [`RECENT_MAX`] long.
pub fn remember(mut list: Vec<Recent>, entry: Recent) -> Vec<Recent> {
    list.retain(|r| {
        !(r.url.is_some() && r.url == entry.url || r.file.is_some() && r.file == entry.file)
    });
    list.insert(0, entry);
    list.truncate(RECENT_MAX);
    list
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window()?.local_storage().ok().flatten()
}

fn read_recent() -> Vec<Recent> {
    storage()
        .and_then(|s| s.get_item(RECENT_KEY).ok().flatten())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn write_recent(list: &[Recent]) {
    if let (Some(s), Ok(text)) = (storage(), serde_json::to_string(list)) {
        let _ = s.set_item(RECENT_KEY, &text);
    }
}

/// The picker's open/closed state (context, provided by the shell).
#[derive(Clone, Copy)]
pub struct PickerOpen(pub RwSignal<bool>);

/// The bundle picker panel (`#bundle-picker`), shown while [`PickerOpen`] is set, when nothing is
/// loaded, or after a failed load.
#[component]
pub fn BundlePicker() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let open = expect_context::<PickerOpen>().0;
    let recent = RwSignal::new(read_recent());
    // Remember every bundle opened from a URL or a file (not imports or pilot runs made in the tab).
    Effect::new(move |_| {
        let Some(loaded) = state.loaded.get() else {
            return;
        };
        let name = loaded.audit.metadata().title.clone();
        let entry = if loaded.base_url.is_some() {
            Recent {
                name,
                url: Some(loaded.source.clone()),
                file: None,
            }
        } else if let Some(file) = loaded.source.strip_prefix("file: ") {
            Recent {
                name,
                url: None,
                file: Some(file.to_string()),
            }
        } else {
            return;
        };
        let list = remember(recent.get_untracked(), entry);
        write_recent(&list);
        recent.set(list);
    });
    let url_text = RwSignal::new(String::new());
    let open_url = move || {
        let url = url_text.get_untracked().trim().to_string();
        if !url.is_empty() {
            state.load_url(url);
            open.set(false);
        }
    };
    let on_pick = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        if let Some(file) = input.files().and_then(|f| f.get(0)) {
            state.load_file(file);
            open.set(false);
        }
        input.set_value("");
    };
    // Shown when asked for, after a failed load, and when nothing is open and nothing is loading.
    let shown = move || {
        open.get()
            || state.error.get().is_some()
            || (state.loaded.with(Option::is_none) && state.status.get() == LoadStatus::Idle)
    };
    let shipped = SHIPPED
        .iter()
        .map(|b| {
            let path = b.path;
            view! {
                <li>
                    <button class="bundle-choice" data-bundle=b.id on:click=move |_| { state.load_url(path.to_string()); open.set(false); }>
                        {b.name}
                    </button>
                    <span class="bundle-line">{b.line}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <section class="bundle-picker" id="bundle-picker" aria-labelledby="picker-title" hidden=move || !shown()>
            <div class="picker-head">
                <h2 id="picker-title">"Open a bundle"</h2>
                <button id="picker-close" class="picker-close" on:click=move |_| open.set(false)
                    hidden=move || state.loaded.with(Option::is_none)>"Close"</button>
            </div>
            <h3>"Shipped with the app"</h3>
            <ul class="shipped" id="shipped-bundles">{shipped}</ul>
            {move || {
                let list = recent.get();
                (!list.is_empty()).then(|| view! {
                    <h3>"Recently opened"</h3>
                    <ul class="recent" id="recent-bundles">
                        {list.into_iter().map(|r| match r.url.clone() {
                            Some(url) => {
                                let go = url.clone();
                                view! {
                                    <li>
                                        <button class="bundle-choice" on:click=move |_| { state.load_url(go.clone()); open.set(false); }>{r.name.clone()}</button>
                                        <span class="bundle-line"><code>{url}</code></span>
                                    </li>
                                }.into_any()
                            }
                            None => view! {
                                <li>
                                    <span class="recent-file">{r.name.clone()}</span>
                                    <span class="bundle-line">{format!("opened from the file {} — open it again from disk (below) to see it", r.file.clone().unwrap_or_default())}</span>
                                </li>
                            }.into_any(),
                        }).collect_view()}
                    </ul>
                })
            }}
            <h3>"Open your own"</h3>
            <div class="dropzone">
                <label>
                    "A bundle file (.json): "
                    <input type="file" id="bundle-file" accept=".json,application/json" on:change=on_pick/>
                </label>
                <span class="hint">" — or drop a file anywhere on the page: a bundle opens, a results file (CSV, TSV, JSONL, JSON) goes to Import."</span>
            </div>
            <form class="open-url" on:submit=move |ev: leptos::ev::SubmitEvent| { ev.prevent_default(); open_url(); }>
                <label>
                    "A bundle URL: "
                    <input type="url" id="bundle-url" placeholder="https://…/bundle.json"
                        prop:value=move || url_text.get()
                        on:input=move |ev| url_text.set(event_target_value(&ev))/>
                </label>
                <button type="submit" id="bundle-url-open">"Open"</button>
            </form>
        </section>
    }
}

/// The load in progress and the last failed load, above every view.
#[component]
pub fn LoadStatusBar() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    view! {
        <div class="load" aria-live="polite">
            {move || match state.status.get() {
                LoadStatus::Idle => None,
                LoadStatus::Reading { source, received, total } => {
                    let (value, max) = match total {
                        Some(t) if t > 0 => (received as f64, t as f64),
                        _ => (0.0, 0.0),
                    };
                    let text = match total {
                        Some(t) => format!("Loading {source}: {:.0} of {:.0} KB", received as f64 / 1024.0, t as f64 / 1024.0),
                        None => format!("Loading {source}: {:.0} KB", received as f64 / 1024.0),
                    };
                    Some(view! {
                        <div class="progress" role="status" id="load-progress">
                            <progress value=value max=max></progress>
                            <span>{text}</span>
                        </div>
                    }.into_any())
                }
                LoadStatus::Parsing { source } => Some(view! {
                    <div class="progress" role="status" id="load-progress">
                        <progress></progress>
                        <span>{format!("Checking {source}…")}</span>
                    </div>
                }.into_any()),
            }}
            {move || state.error.get().map(|message| {
                let kept = state.loaded.with(|l| l.as_ref().map(|l| (l.audit.metadata().id.clone(), l.source.clone())));
                // A way back to the default bundle unless it is the one shown (a failed `?bundle=` link
                // leaves nothing loaded).
                let default = default_bundle_url();
                let offer_default = kept.as_ref().is_none_or(|(_, source)| Some(source) != default.as_ref());
                view! {
                    <div class="error" role="alert" id="load-error">
                        <strong>"Bundle not loaded. "</strong>
                        <span class="message">{message}</span>
                        {match kept {
                            Some((id, _)) => view! { <p>{format!("The bundle already loaded ({id}) is unchanged and still shown.")}</p> }.into_any(),
                            None => view! { <p>"No bundle is open: pick one below."</p> }.into_any(),
                        }}
                        {offer_default.then(|| view! {
                            <button id="open-default" on:click=move |_| state.load_url(DEFAULT_BUNDLE.to_string())>
                                "Open the default bundle"
                            </button>
                            " "
                        })}
                        <button id="load-error-dismiss" on:click=move |_| state.error.set(None)>"Dismiss"</button>
                    </div>
                }
            })}
        </div>
    }
}
