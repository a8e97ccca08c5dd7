//! The app shell: the top bar (app name, the loaded bundle's name, the bundle picker button), the
//! navigation over the views of [`AppView`] (a sidebar from 900 px, a menu button opening the list on
//! narrower screens), the notice line, and the one drop target for the whole window.
//!
//! Only the current view is shown; every view stays mounted (its container is `hidden`), so running
//! analyses, pilot runs and results survive a switch. A navigation click pushes `?view=KEY` (back /
//! forward work: `popstate` restores the whole entry — view, weights, policy… —
//! [`crate::state::url::EntryRestorer`]); see [`crate::state::nav`].

use leptos::prelude::*;
use leptos::task::spawn_local;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::state::inbox::{classify_drop, plan_drop, DropPlan, ImportInbox, SNIFF_BYTES};
use crate::state::nav::{Navigator, ShellNotice};
use crate::state::url::{AppView, ViewState};
use crate::state::AtlasState;
use crate::views::bundles::PickerOpen;

/// Whether the navigation shows `view` for the loaded bundle (Clinical only with clinical data).
fn offered(state: AtlasState, view: AppView) -> bool {
    view != AppView::Clinical
        || state
            .loaded
            .with(|l| l.as_ref().is_some_and(|l| l.audit.file.clinical.is_some()))
}

/// The top bar: skip link target is `#content`; the bundle's name and the picker button.
#[component]
pub fn TopBar() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let picker = expect_context::<PickerOpen>().0;
    let menu = expect_context::<MenuOpen>().0;
    let name = move || {
        state.loaded.with(|l| match l {
            Some(l) => l.audit.metadata().title.clone(),
            None => "No bundle open".to_string(),
        })
    };
    let id = move || {
        state
            .loaded
            .with(|l| l.as_ref().map(|l| l.audit.metadata().id.clone()))
    };
    view! {
        <header class="top">
            <div class="brand">
                <button class="nav-toggle" id="nav-toggle" aria-controls="app-nav"
                    aria-expanded=move || menu.get().to_string()
                    on:click=move |_| {
                        menu.update(|m| *m = !*m);
                        // The list opens at the top of the page, under the bar.
                        if menu.get_untracked() {
                            if let Some(w) = web_sys::window() {
                                w.scroll_to_with_x_and_y(0.0, 0.0);
                            }
                        }
                    }>
                    <span aria-hidden="true">"☰ "</span>"Menu"
                </button>
                <h1 class="app-name">"Audit Atlas"</h1>
            </div>
            <div class="bundle-bar">
                <span class="bundle-label">"Bundle: "</span>
                <strong class="bundle-name" id="bundle-name" title=name data-bundle-id=move || id().unwrap_or_default()>{name}</strong>
                <button id="open-picker" class="open-picker" aria-controls="bundle-picker"
                    aria-expanded=move || picker.get().to_string()
                    on:click=move |_| picker.update(|p| *p = !*p)>
                    "Change bundle"
                </button>
            </div>
            <crate::ui::theme::ThemeSwitch/>
        </header>
    }
}

/// Whether the phone menu is open (context).
#[derive(Clone, Copy)]
pub struct MenuOpen(pub RwSignal<bool>);

/// The navigation: one link per view; the current one has `aria-current="page"`.
#[component]
pub fn Nav() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let nav = Navigator::from_context();
    let menu = expect_context::<MenuOpen>().0;
    let links = AppView::ALL
        .into_iter()
        .map(|v| {
            let href = move || {
                let bundle = state
                    .loaded
                    .with(|l| l.as_ref().and_then(|l| crate::state::url::bundle_param(l)));
                let id = state
                    .loaded
                    .with(|l| l.as_ref().map(|l| l.audit.metadata().id.clone()));
                let link = ViewState {
                    bundle,
                    bundle_id: id,
                    view: Some(v.key().to_string()),
                    ..ViewState::default()
                };
                format!("?{}", link.to_query())
            };
            view! {
                <li hidden=move || !offered(state, v)>
                    <a href=href data-nav=v.key()
                        aria-current=move || (nav.current.get() == v).then_some("page")
                        on:click=move |ev: leptos::ev::MouseEvent| {
                            if ev.ctrl_key() || ev.meta_key() || ev.shift_key() || ev.button() != 0 {
                                return;
                            }
                            ev.prevent_default();
                            menu.set(false);
                            nav.go(v, true);
                        }>
                        {v.label()}
                    </a>
                </li>
            }
        })
        .collect_view();
    view! {
        <nav class="app-nav" id="app-nav" aria-label="Views" class:open=move || menu.get()>
            <ul>{links}</ul>
        </nav>
    }
}

/// A container of one view: hidden unless `view` is shown.
#[component]
pub fn ViewBox(view: AppView, children: Children) -> impl IntoView {
    let nav = Navigator::from_context();
    view! {
        <div class="view" data-shell-view=view.key() data-view=view.key() hidden=move || nav.current.get() != view>
            {children()}
        </div>
    }
}

/// The notice line above the views (`#shell-notice`).
#[component]
pub fn Notice() -> impl IntoView {
    let notice = expect_context::<ShellNotice>().0;
    move || {
        notice.get().map(|(text, alert)| {
            view! {
                <div class="shell-notice" class:alert=alert id="shell-notice" role=if alert { "alert" } else { "status" }>
                    <span class="message">{text}</span>
                    " "
                    <button id="shell-notice-dismiss" on:click=move |_| notice.set(None)>"Dismiss"</button>
                </div>
            }
        })
    }
}

/// The drop overlay and the window's drag-and-drop listeners: every drop on the page is caught
/// (never a navigation away); a bundle opens, a results file goes to Import, anything else gets a
/// message.
#[component]
pub fn DropTarget() -> impl IntoView {
    let state = expect_context::<AtlasState>();
    let inbox = expect_context::<ImportInbox>();
    let notice = expect_context::<ShellNotice>();
    let nav = Navigator::from_context();
    let dragging = RwSignal::new(false);
    let depth = StoredValue::new(0i32);
    if let Some(window) = web_sys::window() {
        let listen = |name: &str, f: Box<dyn FnMut(web_sys::DragEvent)>| {
            let closure = Closure::<dyn FnMut(web_sys::DragEvent)>::new(f);
            let _ = window.add_event_listener_with_callback(name, closure.as_ref().unchecked_ref());
            // The listeners live as long as the page.
            closure.forget();
        };
        listen(
            "dragenter",
            Box::new(move |ev| {
                ev.prevent_default();
                depth.update_value(|d| *d += 1);
                dragging.try_set(true);
            }),
        );
        listen(
            "dragover",
            Box::new(move |ev| {
                ev.prevent_default();
                if !dragging.try_get_untracked().unwrap_or(true) {
                    dragging.try_set(true);
                }
            }),
        );
        listen(
            "dragleave",
            Box::new(move |_| {
                depth.update_value(|d| *d = (*d - 1).max(0));
                if depth.get_value() == 0 {
                    dragging.try_set(false);
                }
            }),
        );
        listen(
            "drop",
            Box::new(move |ev| {
                ev.prevent_default();
                depth.set_value(0);
                dragging.try_set(false);
                let files: Vec<web_sys::File> = ev
                    .data_transfer()
                    .and_then(|dt| dt.files())
                    .map(|list| (0..list.length()).filter_map(|i| list.get(i)).collect())
                    .unwrap_or_default();
                spawn_local(async move {
                    let mut kinds = Vec::with_capacity(files.len());
                    for file in &files {
                        let name = file.name();
                        let head = if name.to_ascii_lowercase().ends_with(".json") {
                            read_head(file).await
                        } else {
                            String::new()
                        };
                        let kind = classify_drop(&name, &head);
                        kinds.push((name, kind));
                    }
                    let (plan, left_out) = plan_drop(&kinds);
                    let left_out = if left_out.is_empty() {
                        String::new()
                    } else {
                        format!(
                            " Not taken (not a bundle, results file or tool log): {}.",
                            left_out.join(", ")
                        )
                    };
                    match plan {
                        DropPlan::OpenBundle(i) => {
                            notice.0.set(None);
                            state.load_file(files[i].clone());
                            if !left_out.is_empty() {
                                notice.show(left_out.trim_start().to_string(), true);
                            }
                        }
                        DropPlan::Import(ix) => {
                            let names: Vec<String> =
                                ix.iter().map(|&i| kinds[i].0.clone()).collect();
                            inbox.put(ix.iter().map(|&i| files[i].clone()).collect());
                            nav.go(AppView::Import, true);
                            let what = match names.as_slice() {
                                [one] => format!("{one} is selected in Import"),
                                _ => format!(
                                    "{} files are selected in Import ({})",
                                    names.len(),
                                    names.join(", ")
                                ),
                            };
                            notice.show(
                                format!("{what}: check the column mapping, then import.{left_out}"),
                                !left_out.is_empty(),
                            );
                        }
                        DropPlan::Refuse(message) => notice.show(message, true),
                    }
                });
            }),
        );
    }
    view! {
        <div class="drop-overlay" id="drop-overlay" hidden=move || !dragging.get() aria-hidden="true">
            <p>"Drop a bundle (.json) to open it, or a results file (CSV, TSV, JSONL, JSON) to import it."</p>
        </div>
    }
}

/// The first [`SNIFF_BYTES`] of `file` as text (empty when it cannot be read).
async fn read_head(file: &web_sys::File) -> String {
    let Ok(blob) = file.slice_with_f64_and_f64(0.0, SNIFF_BYTES) else {
        return String::new();
    };
    wasm_bindgen_futures::JsFuture::from(blob.text())
        .await
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_default()
}

/// Restores the whole history entry on `popstate` (back / forward): its view, weights, policy and
/// the rest of its URL ([`crate::state::url::EntryRestorer`]).
pub fn follow_history() {
    let restorer = crate::state::url::EntryRestorer::from_context();
    let Some(window) = web_sys::window() else {
        return;
    };
    let handler = Closure::<dyn FnMut(web_sys::Event)>::new(move |_: web_sys::Event| {
        let Some(location) = web_sys::window().map(|w| w.location()) else {
            return;
        };
        let search = location.search().unwrap_or_default();
        let hash = location.hash().unwrap_or_default();
        restorer.apply(&search, &hash);
    });
    let _ = window.add_event_listener_with_callback("popstate", handler.as_ref().unchecked_ref());
    handler.forget();
}
