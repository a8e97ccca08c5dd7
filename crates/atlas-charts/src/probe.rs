//! [`FontProbe`]: a drawing backend that passes everything to another backend and records the
//! smallest text size drawn, in backend pixels — what the app shows as a chart's `data-min-font-px`
//! and what the tests check (text ≥ 11 CSS px on a 390-px phone, issue 15 item 7).

use std::cell::Cell;
use std::rc::Rc;

use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

/// The smallest text size a [`FontProbe`] saw, shared with its creator: `None` before any text.
pub type MinFont = Rc<Cell<Option<f64>>>;

/// Wraps a backend; every call goes to it unchanged, and [`DrawingBackend::draw_text`] also records
/// the text's size (pixels of the backend; `TextStyle`'s font size) in the shared [`MinFont`]. Empty
/// and fully transparent texts are not counted (nothing is drawn).
///
/// ```
/// use atlas_charts::probe::FontProbe;
/// use plotters::prelude::*;
/// let mut svg = String::new();
/// let (probe, min) = FontProbe::new(SVGBackend::with_string(&mut svg, (200, 100)));
/// {
///     let root = probe.into_drawing_area();
///     root.draw(&Text::new("hi", (10, 10), ("sans-serif", 13).into_font())).unwrap();
///     root.draw(&Text::new("ho", (10, 40), ("sans-serif", 17).into_font())).unwrap();
/// }
/// assert_eq!(min.get(), Some(13.0));
/// ```
pub struct FontProbe<DB> {
    inner: DB,
    min: MinFont,
}

impl<DB: DrawingBackend> FontProbe<DB> {
    /// The probe around `inner` and the handle that reads its smallest text size.
    pub fn new(inner: DB) -> (Self, MinFont) {
        let min: MinFont = Rc::new(Cell::new(None));
        (
            FontProbe {
                inner,
                min: Rc::clone(&min),
            },
            min,
        )
    }
}

impl<DB: DrawingBackend> DrawingBackend for FontProbe<DB> {
    type ErrorType = DB::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        if !text.trim().is_empty() && style.color().alpha > 0.0 {
            let size = style.size();
            let smaller = self.min.get().is_none_or(|m| size < m);
            if smaller {
                self.min.set(Some(size));
            }
        }
        self.inner.draw_text(text, style, pos)
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.inner.estimate_text_size(text, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }
}
