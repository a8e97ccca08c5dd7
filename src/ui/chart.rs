//! One chart panel for every chart of the app: [`ChartSpec`] (`atlas_charts::spec`, the data of one
//! panel: an atlas panel of seed `000_…` Figure 4 or a clinical figure of seed `001_…`), drawn by its
//! `atlas_charts` function on a `<canvas>` (plotters-canvas), with the value under the pointer or
//! keyboard focus in a tooltip (`role=status`), a table alternative ([`ChartSpec::table`], shown by
//! [`crate::ui::table::table_grid`]) and PNG / SVG / CSV exports ([`ChartPanel`]).
//!
//! Every chart is drawn at its container's width, one canvas pixel per CSS pixel
//! ([`ChartSpec::size_for`]; measured on mount, on a window resize and when its view is shown), in
//! the theme's [`crate::ui::theme::chart_palette`] (redrawn when [`crate::ui::theme::changes`]
//! ticks); the canvas says its smallest text in CSS pixels as `data-min-font-px` (read by
//! `atlas_charts::probe::FontProbe` while drawing) and its surface as `data-bg`. The SVG export is
//! drawn in the palette on screen; the PNG export is the canvas itself.

use atlas_charts::probe::FontProbe;
pub use atlas_charts::spec::ChartSpec;
use atlas_charts::{hit_index, hit_test, HitRegion, Palette};
use leptos::prelude::*;
use plotters::prelude::IntoDrawingArea;
use plotters_canvas::CanvasBackend;

use crate::browser::export::{download_canvas_png, download_text, DownloadError};
use crate::state::reweighting::ExplorerModel;

/// The pointer's position in the canvas, CSS pixels, with its fraction: `offsetX` / `offsetY` are
/// fractional in pointer events, but web-sys reads them as whole numbers (cut towards zero, so a
/// pointer at 69.96 px would miss a mark whose top edge is row 70); read as numbers here, whole
/// ones as a fallback.
fn pointer_offset(ev: &web_sys::MouseEvent) -> (f64, f64) {
    let read = |key: &str, whole: i32| {
        js_sys::Reflect::get(ev, &key.into())
            .ok()
            .and_then(|v| v.as_f64())
            .unwrap_or(f64::from(whole))
    };
    (
        read("offsetX", ev.offset_x()),
        read("offsetY", ev.offset_y()),
    )
}

/// A panel's spec, or why it is not drawn.
pub(crate) type Spec = Memo<Result<ChartSpec, String>>;

/// One atlas panel: the chart (or why it is absent), tooltip, table alternative and exports. With
/// `on_activate`, a click on a mark (or Enter / Space on the mark in keyboard focus) calls it with the
/// mark's index in the draw function's hover regions (the clinical heat map opens a cell's cases).
#[component]
pub(crate) fn ChartPanel(
    panel: &'static str,
    title: &'static str,
    what: &'static str,
    spec: Spec,
    #[prop(optional)] on_activate: Option<Callback<usize>>,
) -> impl IntoView {
    let model = expect_context::<ExplorerModel>();
    let available = Memo::new(move |_| spec.with(|s| s.is_ok()));
    let title_id = format!("{panel}-title");
    let labelled_by = title_id.clone();
    view! {
        <figure class="atlas-panel" id=panel data-view=panel aria-labelledby=labelled_by>
            <figcaption><h3 id=title_id>{title}</h3></figcaption>
            {move || if available.get() {
                view! { <ChartCanvas panel what spec stem=model.file_stem() on_activate/> }.into_any()
            } else {
                let why = spec.with(|s| s.as_ref().err().cloned().unwrap_or_default());
                view! { <p class="absent" id=format!("{panel}-absent")>{why}</p> }.into_any()
            }}
        </figure>
    }
}

/// The canvas of a panel with its tooltip, exports and table alternative. Every spec
/// ([`ChartSpec::responsive`]) is drawn at its container's width (measured on mount, on every
/// window resize and whenever the shown view changes — a hidden view's container has no width), so
/// its text keeps its drawn size on a phone, in the theme's palette (redrawn on a theme change).
/// The tooltip is kept inside the visible part of the chart (moved left or right at an edge).
/// `canvas_id` replaces the canvas's `{panel}-canvas`.
#[component]
pub(crate) fn ChartCanvas(
    panel: &'static str,
    what: &'static str,
    spec: Spec,
    stem: String,
    on_activate: Option<Callback<usize>>,
    #[prop(optional)] canvas_id: Option<&'static str>,
) -> impl IntoView {
    let canvas = NodeRef::<leptos::html::Canvas>::new();
    let wrap = NodeRef::<leptos::html::Div>::new();
    let scroller = NodeRef::<leptos::html::Div>::new();
    let tip_el = NodeRef::<leptos::html::P>::new();
    let available = RwSignal::new(None::<u32>);
    let tip_width = RwSignal::new(0.0f64);
    let responsive = Memo::new(move |_| spec.with(|s| s.as_ref().is_ok_and(ChartSpec::responsive)));
    let measure = move || {
        if let Some(w) = wrap.get_untracked() {
            let width = w.client_width();
            if width > 0 {
                available.set(Some(width as u32));
            }
        }
    };
    let shown_view = use_context::<crate::state::url::CurrentView>().map(|v| v.0);
    Effect::new(move |_| {
        // The view switch shows a container that had no width while hidden.
        if let Some(v) = shown_view {
            v.track();
        }
        if responsive.get() {
            request_animation_frame(measure);
        }
    });
    let resize = window_event_listener(leptos::ev::resize, move |_| {
        if responsive.get_untracked() {
            measure();
        }
    });
    on_cleanup(move || resize.remove());
    let hits = RwSignal::new(Vec::<HitRegion>::new());
    let tip = RwSignal::new(None::<(String, f64, f64)>);
    let focus = RwSignal::new(None::<usize>);
    let error = RwSignal::new(None::<String>);
    // The palette of the last drawing (the SVG export draws the same) and its smallest text.
    let drawn_palette = RwSignal::new(Palette::LIGHT);
    let min_font = RwSignal::new(None::<f64>);
    let theme_changes = crate::ui::theme::changes();
    let size = Memo::new(move |_| {
        let width = available.get();
        spec.with(|s| s.as_ref().map_or((720, 360), |s| s.size_for(width)))
    });
    Effect::new(move |_| {
        theme_changes.track();
        let Ok(s) = spec.get() else { return };
        let Some(element) = canvas.get() else { return };
        let (w, h) = size.get();
        element.set_width(w);
        element.set_height(h);
        let Some(backend) = CanvasBackend::with_canvas_object(element.clone()) else {
            error.set(Some("This browser gave no 2D canvas context.".into()));
            return;
        };
        let palette = crate::ui::theme::chart_palette();
        let (probe, smallest) = FontProbe::new(backend);
        match s.draw_themed(&probe.into_drawing_area(), &palette) {
            Ok(regions) => {
                error.set(None);
                hits.set(regions);
                drawn_palette.set(palette);
                // Canvas pixels → CSS pixels of the (at most container-wide) canvas.
                let css = f64::from(element.client_width());
                let scale = if css > 0.0 && w > 0 {
                    css / f64::from(w)
                } else {
                    1.0
                };
                min_font.set(smallest.get().map(|px| px * scale));
            }
            Err(e) => error.set(Some(format!("Drawing the chart failed: {e}"))),
        }
        tip.set(None);
        focus.set(None);
    });
    // Backend pixels ↔ CSS pixels of the (possibly scaled) canvas.
    let scale = move || -> Option<(f64, f64)> {
        let c = canvas.get_untracked()?;
        let (cw, ch) = (f64::from(c.client_width()), f64::from(c.client_height()));
        (cw > 0.0 && ch > 0.0).then(|| (f64::from(c.width()) / cw, f64::from(c.height()) / ch))
    };
    let on_move = move |ev: leptos::ev::PointerEvent| {
        let Some((sx, sy)) = scale() else { return };
        let (ox, oy) = pointer_offset(&ev);
        let label = hits.with_untracked(|h| {
            hit_test(h, (ox * sx).round() as i32, (oy * sy).round() as i32).map(|r| r.label.clone())
        });
        tip.set(label.map(|l| (l, ox, oy)));
    };
    let on_click = move |ev: leptos::ev::MouseEvent| {
        let Some(activate) = on_activate else { return };
        let Some((sx, sy)) = scale() else { return };
        let (ox, oy) = pointer_offset(&ev);
        let hit = hits
            .with_untracked(|h| hit_index(h, (ox * sx).round() as i32, (oy * sy).round() as i32));
        if let Some(i) = hit {
            focus.set(Some(i));
            activate.run(i);
        }
    };
    let activate_hint = if on_activate.is_some() {
        " Click a mark, or press Enter on the mark in focus, to open its cases."
    } else {
        ""
    };
    let show_region = move |i: usize| {
        let Some((sx, sy)) = scale() else { return };
        let region = hits.with_untracked(|h| h.get(i).cloned());
        if let Some(r) = region {
            let cx = f64::from(r.x0 + r.x1) / 2.0 / sx;
            let cy = f64::from(r.y0 + r.y1) / 2.0 / sy;
            tip.set(Some((
                format!(
                    "{} ({} of {})",
                    r.label,
                    i + 1,
                    hits.with_untracked(Vec::len)
                ),
                cx,
                cy,
            )));
            focus.set(Some(i));
        }
    };
    let on_key = move |ev: leptos::ev::KeyboardEvent| {
        let n = hits.with_untracked(Vec::len);
        if n == 0 {
            return;
        }
        let current = focus.get_untracked();
        if let (Some(activate), Some(i), "Enter" | " ") = (on_activate, current, ev.key().as_str())
        {
            ev.prevent_default();
            activate.run(i);
            return;
        }
        let next = match ev.key().as_str() {
            "ArrowRight" | "ArrowDown" => current.map_or(0, |i| (i + 1) % n),
            "ArrowLeft" | "ArrowUp" => current.map_or(n - 1, |i| (i + n - 1) % n),
            "Home" => 0,
            "End" => n - 1,
            "Escape" => {
                tip.set(None);
                focus.set(None);
                return;
            }
            _ => return,
        };
        ev.prevent_default();
        show_region(next);
    };
    // The tooltip's width once drawn, to keep it inside the visible part of the chart.
    Effect::new(move |_| {
        tip.track();
        request_animation_frame(move || {
            if let Some(t) = tip_el.get_untracked() {
                tip_width.set(f64::from(t.offset_width()));
            }
        });
    });
    // The tooltip's centre: the mark's x, moved so that the whole tooltip (centred on it) lies
    // between the visible edges of the scrolling chart, 4 px in.
    let tip_left = move |x: f64| -> f64 {
        let half = tip_width.get() / 2.0;
        let Some(sc) = scroller.get_untracked() else {
            return x;
        };
        let lo = f64::from(sc.scroll_left()) + 4.0 + half;
        let hi = f64::from(sc.scroll_left() + sc.client_width()) - 4.0 - half;
        if hi < lo {
            lo
        } else {
            x.clamp(lo, hi)
        }
    };
    let table = move || {
        spec.with(|s| s.as_ref().ok().map(ChartSpec::table))
            .map(|t| crate::ui::table::table_grid(&t, format!("{panel}-table"), None))
    };
    let (stem_png, stem_svg, stem_csv) = (stem.clone(), stem.clone(), stem);
    let png = move |_| {
        let Some(c) = canvas.get_untracked() else {
            return;
        };
        let name = format!("{stem_png}-{panel}.png");
        let report = move |e: DownloadError| {
            error.try_set(Some(format!("The PNG export failed: {e}")));
        };
        if let Err(e) = download_canvas_png(&c, name, report) {
            error.set(Some(format!("The PNG export failed: {e}")));
        }
    };
    let svg = move |_| {
        let result = spec
            .get_untracked()
            .and_then(|s| {
                s.svg_themed(size.get_untracked(), &drawn_palette.get_untracked())
                    .map_err(|e| e.to_string())
            })
            .and_then(|svg| {
                download_text(&svg, "image/svg+xml", &format!("{stem_svg}-{panel}.svg"))
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = result {
            error.set(Some(format!("The SVG export failed: {e}")));
        }
    };
    let csv = move |_| {
        let result = spec
            .get_untracked()
            .map(|s| s.table().to_csv())
            .and_then(|t| {
                download_text(
                    &t,
                    "text/csv;charset=utf-8",
                    &format!("{stem_csv}-{panel}.csv"),
                )
                .map_err(|e| e.to_string())
            });
        if let Err(e) = result {
            error.set(Some(format!("The CSV export failed: {e}")));
        }
    };
    view! {
        <div class="chart-scroll" node_ref=scroller><div class="chart-wrap" class:responsive=move || responsive.get() node_ref=wrap>
            <canvas
                id=canvas_id.map_or_else(|| format!("{panel}-canvas"), str::to_string)
                data-panel=panel
                node_ref=canvas
                width=move || size.get().0.to_string()
                height=move || size.get().1.to_string()
                role="img"
                tabindex="0"
                aria-label=format!("{what} Use the arrow keys to read each mark; the table below holds the same values.{activate_hint}")
                aria-describedby=format!("{panel}-tip")
                data-marks=move || hits.with(Vec::len).to_string()
                data-min-font-px=move || min_font.get().map_or(String::new(), |px| format!("{px:.1}"))
                data-bg=move || {
                    let c = drawn_palette.get().background;
                    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
                }
                data-caption=move || spec.with(|s| s.as_ref().map_or(String::new(), |s| s.caption().to_string()))
                on:pointermove=on_move
                on:pointerleave=move |_| tip.set(None)
                on:click=on_click
                class:activatable=on_activate.is_some()
                on:keydown=on_key
                on:blur=move |_| { tip.set(None); focus.set(None); }
            ></canvas>
            <p
                class="chart-tip"
                id=format!("{panel}-tip")
                role="status"
                aria-live="polite"
                class:visible=move || tip.with(Option::is_some)
                class:below=move || tip.with(|t| t.as_ref().is_some_and(|t| t.2 < 48.0))
                style:left=move || tip.with(|t| t.as_ref().map_or("0px".into(), |t| format!("{:.0}px", tip_left(t.1))))
                data-x=move || tip.with(|t| t.as_ref().map_or(String::new(), |t| format!("{:.0}", t.1)))
                node_ref=tip_el
                style:top=move || tip.with(|t| t.as_ref().map_or("0px".into(), |t| format!("{:.0}px", t.2)))
            >
                {move || tip.with(|t| t.as_ref().map(|t| t.0.clone()).unwrap_or_default())}
            </p>
        </div></div>
        {move || error.get().map(|e| view! { <p class="error" role="alert">{e}</p> })}
        <div class="chart-exports" role="group" aria-label="Export this chart">
            <button id=format!("{panel}-png") on:click=png>"PNG"</button>
            <button id=format!("{panel}-svg") on:click=svg>"SVG"</button>
            <button id=format!("{panel}-csv") on:click=csv>"CSV"</button>
        </div>
        <details class="chart-table">
            <summary>"Table"</summary>
            {table}
        </details>
    }
}
