//! Switching the app shell's view ([`Navigator`]) and the one-line confirmation shown above every view
//! ([`ShellNotice`]). Both are context, provided by the App; views use them without importing the
//! shell component.

use leptos::prelude::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::state::url::{flush_pending_url, with_view, AppView, CurrentView, FocusedView};

/// A message shown at the top of the page, above every view (`#shell-notice`): what was just opened,
/// or why a dropped file was not. `alert` marks a problem (`role=alert`) rather than a status.
#[derive(Clone, Copy)]
pub struct ShellNotice(pub RwSignal<Option<(String, bool)>>);

impl ShellNotice {
    /// Shows `text` as a status (`alert` false) or a problem (`alert` true).
    pub fn show(self, text: String, alert: bool) {
        self.0.set(Some((text, alert)));
    }
}

/// Switches the shown view (context). Every navigation goes through [`Navigator::go`].
#[derive(Clone, Copy)]
pub struct Navigator {
    /// The view shown.
    pub current: RwSignal<AppView>,
    /// The `view=` the URL writer puts into the address bar.
    pub focused: RwSignal<Option<String>>,
}

impl Navigator {
    /// The navigator over the page's [`CurrentView`] and [`FocusedView`] (both from
    /// [`crate::state::url::restore`]).
    pub fn from_context() -> Self {
        Navigator {
            current: expect_context::<CurrentView>().0,
            focused: expect_context::<FocusedView>().0,
        }
    }

    /// Shows `view`: with `push`, one new history entry `?…&view=KEY` (the other query keys and the
    /// fragment stay), so back / forward return here — after writing the URL state still held back
    /// by the throttled URL writer into the entry being left ([`flush_pending_url`]), so that Back
    /// restores that entry's weights exactly; then moves the keyboard focus to the view's
    /// first heading and the page to its top.
    pub fn go(self, view: AppView, push: bool) {
        self.current.set(view);
        self.focused.set(Some(view.key().to_string()));
        if push {
            // The entry left behind keeps the state it was left with (weights typed within the URL
            // writer's 200-ms throttle included); then the new entry.
            flush_pending_url();
            push_view(view);
        }
        focus_heading_later(self, view, 30, FOCUS_TRIES);
    }
}

/// How often [`focus_heading`] looks again for a heading that is not there yet: a view downloaded on
/// demand ([`crate::on_demand`]) draws its heading once its module has arrived. Every
/// [`FOCUS_RETRY_MS`], for at most 30 s.
const FOCUS_TRIES: u32 = 600;
const FOCUS_RETRY_MS: i32 = 50;

fn focus_heading_later(nav: Navigator, view: AppView, after_ms: i32, tries: u32) {
    let run = Closure::once_into_js(move || focus_heading(nav, view, tries));
    if let Some(window) = web_sys::window() {
        let _ = window
            .set_timeout_with_callback_and_timeout_and_arguments_0(run.unchecked_ref(), after_ms);
    }
}

/// Pushes `?…&view=KEY` as a new history entry (nothing when the address is already that).
fn push_view(view: AppView) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let location = window.location();
    let (Ok(path), search, hash) = (
        location.pathname(),
        location.search().unwrap_or_default(),
        location.hash().unwrap_or_default(),
    ) else {
        return;
    };
    let url = format!("{path}?{}{hash}", with_view(&search, view.key()));
    if format!("{path}{search}{hash}") != url {
        if let Ok(history) = window.history() {
            let _ = history.push_state_with_url(&JsValue::NULL, "", Some(&url));
        }
    }
}

/// Focuses the first heading of `view`'s container and scrolls to the page top; the URL's `view=`
/// stays the view's key (the focus would otherwise name the section the heading is in). A view still
/// downloading has no heading yet: it is looked for again ([`FOCUS_TRIES`] times) as long as `view`
/// is still the one shown.
fn focus_heading(nav: Navigator, view: AppView, tries: u32) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let Some(document) = window.document() else {
        return;
    };
    if tries == FOCUS_TRIES {
        window.scroll_to_with_x_and_y(0.0, 0.0);
    }
    let selector = format!("[data-shell-view=\"{}\"] :is(h2, h3)", view.key());
    match document.query_selector(&selector) {
        Ok(Some(heading)) => {
            if heading.get_attribute("tabindex").is_none() {
                let _ = heading.set_attribute("tabindex", "-1");
            }
            if let Ok(h) = heading.dyn_into::<web_sys::HtmlElement>() {
                let _ = h.focus();
            }
        }
        _ if tries > 0 && nav.current.try_get_untracked() == Some(view) => {
            focus_heading_later(nav, view, FOCUS_RETRY_MS, tries - 1);
            return;
        }
        _ => {}
    }
    nav.focused.try_set(Some(view.key().to_string()));
}
