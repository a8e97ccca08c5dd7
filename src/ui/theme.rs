//! The color theme switch: Auto (follow the system's `prefers-color-scheme`), Light or Dark. The choice
//! is stored in `localStorage` under [`STORAGE_KEY`] and applied as `data-theme="auto|light|dark"` on
//! `<html>`; `static/style.css` defines every color as a custom property for both themes.
//!
//! Charts read their surface and ink from the custom properties `--chart-bg`, `--chart-ink` and
//! `--chart-grid` ([`css_color`]); both themes keep a light chart surface so the charts' colorblind-safe
//! palette keeps its contrast.

use leptos::prelude::*;

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

/// Sets `data-theme` on `<html>`.
pub fn apply(theme: Theme) {
    if let Some(html) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        html.set_attribute("data-theme", theme.key()).ok();
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
