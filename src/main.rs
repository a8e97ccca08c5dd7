//! Entry point: panic hook, mount, and removing the static loading shell of `index.html`.

fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(audit_atlas::App);
    remove_loading_shell();
}

/// Removes `#loading-shell`, the static title, description and download bars that `index.html` shows
/// until the wasm has loaded; the mounted app shows its own progress for the bundle from here on.
fn remove_loading_shell() {
    if let Some(shell) = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("loading-shell"))
    {
        shell.remove();
    }
}
