//! The color theme switch: Auto (follow the system's `prefers-color-scheme`), Light or Dark. The choice
//! is stored in `localStorage` under [`STORAGE_KEY`] and applied as `data-theme="auto|light|dark"` on
//! `<html>`; `static/style.css` defines every color as a custom property for both themes.
//!
//! Charts follow the theme: every chart panel (`crate::ui::chart`) draws with the [`chart_palette`] the
//! custom properties `--chart-bg`, `--chart-ink`, `--chart-grid`, `--chart-muted` and `--chart-1` …
//! `--chart-8` give ([`atlas_charts::palette::CSS_VARIABLES`], set for both themes in
//! `static/style.css`; their defaults are [`Palette::LIGHT`] and [`Palette::DARK`], WCAG AA), and
//! redraws when [`changes`] ticks: on every switch of the theme and on a change of the system's
//! `prefers-color-scheme`.

use std::cell::RefCell;

use atlas_charts::palette::Palette;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

/// The `localStorage` key of the stored choice.
pub const STORAGE_KEY: &str = "audit-atlas-theme";

/// One theme choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Theme {
    /// Follow the system setting (`prefers-color-scheme`).
    Auto,
    /// Always light.
    Light,
    /// Always dark.
    Dark,
}

impl Theme {
    /// The value of `data-theme` and of the stored choice.
    pub fn key(self) -> &'static str {
        match self {
            Theme::Auto => "auto",
            Theme::Light => "light",
            Theme::Dark => "dark",
        }
    }

    /// The choice a stored or selected value names; anything else is [`Theme::Auto`].
    pub fn parse(value: &str) -> Theme {
        match value {
            "light" => Theme::Light,
            "dark" => Theme::Dark,
            _ => Theme::Auto,
        }
    }
}

fn storage() -> Option<web_sys::Storage> {
    web_sys::window().and_then(|w| w.local_storage().ok().flatten())
}

/// The stored choice, [`Theme::Auto`] when none is stored or storage is unavailable.
pub fn stored() -> Theme {
    storage()
        .and_then(|s| s.get_item(STORAGE_KEY).ok().flatten())
        .map_or(Theme::Auto, |v| Theme::parse(&v))
}

/// Sets `data-theme` on `<html>` and ticks [`changes`] (the charts redraw in the new colors).
pub fn apply(theme: Theme) {
    if let Some(html) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        html.set_attribute("data-theme", theme.key()).ok();
    }
    changes().update(|n| *n = n.wrapping_add(1));
}

thread_local! {
    /// A reference-counted signal (not owned by any component, so it lives as long as the page).
    static CHANGES: ArcRwSignal<u32> = ArcRwSignal::new(0);
    /// The `prefers-color-scheme` listener, kept alive for the page's lifetime.
    static SCHEME_LISTENER: RefCell<Option<Closure<dyn FnMut()>>> = const { RefCell::new(None) };
}

/// A counter that ticks whenever the colors of the page may have changed: [`apply`] (the theme
/// switch) and a change of the system's `prefers-color-scheme` (which the Auto theme follows).
/// Track it to redraw in the new colors.
pub fn changes() -> ArcRwSignal<u32> {
    CHANGES.with(Clone::clone)
}

/// The chart palette of the page's current theme: [`Palette::from_lookup`] over the computed
/// `--chart-*` custom properties ([`css_color`]), [`Palette::LIGHT`] for any that is not set.
pub fn chart_palette() -> Palette {
    Palette::from_lookup(css_color, &Palette::LIGHT)
}

/// Ticks [`changes`] when the system's `prefers-color-scheme` changes (once per page; through
/// `matchMedia`, looked up by name so no extra web-sys feature is needed).
fn watch_system_scheme() {
    if SCHEME_LISTENER.with(|l| l.borrow().is_some()) {
        return;
    }
    let Some(window) = web_sys::window() else {
        return;
    };
    let Ok(match_media) = js_sys::Reflect::get(&window, &"matchMedia".into()) else {
        return;
    };
    let Ok(match_media) = match_media.dyn_into::<js_sys::Function>() else {
        return;
    };
    let Ok(list) = match_media.call1(&window, &"(prefers-color-scheme: dark)".into()) else {
        return;
    };
    let on_change = Closure::<dyn FnMut()>::new(move || {
        changes().update(|n| *n = n.wrapping_add(1));
    });
    let target: web_sys::EventTarget = list.unchecked_into();
    if target
        .add_event_listener_with_callback("change", on_change.as_ref().unchecked_ref())
        .is_ok()
    {
        SCHEME_LISTENER.with(|l| *l.borrow_mut() = Some(on_change));
    }
}

/// The computed value of a CSS custom property on `<html>` (e.g. `css_color("--chart-ink")`), trimmed;
/// `None` when it is not set.
pub fn css_color(name: &str) -> Option<String> {
    let window = web_sys::window()?;
    let html = window.document()?.document_element()?;
    let style = window.get_computed_style(&html).ok()??;
    let value = style.get_property_value(name).ok()?;
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// The theme switch for the page header: a labelled select of Auto / Light / Dark (`#theme-select`).
/// Applies the stored choice when it mounts.
#[component]
pub fn ThemeSwitch() -> impl IntoView {
    let theme = RwSignal::new(stored());
    apply(theme.get_untracked());
    watch_system_scheme();
    let on_change = move |ev: leptos::ev::Event| {
        let choice = Theme::parse(&event_target_value(&ev));
        theme.set(choice);
        apply(choice);
        if let Some(s) = storage() {
            s.set_item(STORAGE_KEY, choice.key()).ok();
        }
    };
    view! {
        <label class="theme-switch">
            <span>"Theme"</span>
            <select id="theme-select" on:change=on_change prop:value=move || theme.get().key()>
                <option value="auto">"Auto (system)"</option>
                <option value="light">"Light"</option>
                <option value="dark">"Dark"</option>
            </select>
        </label>
    }
}
