//! Push-based splitters for JSON Lines and for a JSON array of records. Each yields the bytes of one
//! record at a time, so neither ever holds more than one record (plus one chunk) of the input.
//!
//! Defined outcomes (each tested in `tests/readers.rs`):
//!
//! **JSON Lines.** Records are separated by `\n`; a `\r` before it is dropped (CRLF files). Lines that
//! are empty or only whitespace are not records (counted in the report). A line that is not valid JSON,
//! or not a JSON object, is skipped and reported with its line number (an error under `"strict"`).
//! A line longer than the limit is [`ImportError::RecordTooLarge`], detected before the line is
//! buffered in full.
//!
//! **JSON array.** The input must be one array `[ … ]` (whitespace around it allowed) whose elements
//! are the records. Element boundaries are found by tracking strings, escapes and bracket depth, so an
//! element that is not valid JSON by itself (or not an object) is skipped and reported like a bad JSONL
//! line. Structural damage cannot be skipped and is [`ImportError::Syntax`]: input that does not start
//! with `[` (a top-level object gets a hint), a missing `,` between elements, an empty element
//! (`[1,,2]`, `[1,]`), text after the closing `]`, or an input that ends before the array is closed (a
//! truncated file). `[]` is [`ImportError::NoRecords`]. An element longer than the limit is
//! [`ImportError::RecordTooLarge`].

use crate::error::ImportError;

/// One record's bytes and where it starts.
#[derive(Debug)]
pub(crate) enum TextEvent<'a> {
    Record { bytes: &'a [u8], line: u64 },
    BlankLine,
}

#[derive(Debug)]
pub(crate) struct JsonlSplitter {
    input: String,
    max_record_bytes: usize,
    buf: Vec<u8>,
    /// Line of the first byte in `buf`.
    line: u64,
    records: u64,
}

impl JsonlSplitter {
    pub fn new(input: &str, max_record_bytes: usize) -> Self {
        JsonlSplitter {
            input: input.to_string(),
            max_record_bytes,
            buf: Vec::new(),
            line: 1,
            records: 0,
        }
    }

    fn too_large(&self) -> ImportError {
        ImportError::RecordTooLarge {
            input: self.input.clone(),
            record: self.records + 1,
            line: self.line,
            limit: self.max_record_bytes,
        }
    }

    fn emit(
        &mut self,
        sink: &mut dyn FnMut(TextEvent<'_>) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        let mut bytes = &self.buf[..];
        if let [head @ .., b'\r'] = bytes {
            bytes = head;
        }
        let result = if bytes.iter().all(u8::is_ascii_whitespace) {
            sink(TextEvent::BlankLine)
        } else {
            self.records += 1;
            sink(TextEvent::Record {
                bytes,
                line: self.line,
            })
        };
        self.buf.clear();
        result
    }

    /// Splits the next chunk into lines.
    ///
    /// # Errors
    /// [`ImportError::RecordTooLarge`], or any sink error.
    pub fn push(
        &mut self,
        bytes: &[u8],
        sink: &mut dyn FnMut(TextEvent<'_>) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        let mut rest = bytes;
        while let Some(pos) = rest.iter().position(|&b| b == b'\n') {
            if self.buf.len() + pos > self.max_record_bytes {
                return Err(self.too_large());
            }
            self.buf.extend_from_slice(&rest[..pos]);
            self.emit(sink)?;
            self.line += 1;
            rest = &rest[pos + 1..];
        }
        if self.buf.len() + rest.len() > self.max_record_bytes {
            return Err(self.too_large());
        }
        self.buf.extend_from_slice(rest);
        Ok(())
    }

    /// Ends the input: a last line without `\n` is a record too.
    ///
    /// # Errors
    /// Any sink error.
    pub fn finish(
        &mut self,
        sink: &mut dyn FnMut(TextEvent<'_>) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        if self.buf.is_empty() {
            return Ok(());
        }
        self.emit(sink)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArrayState {
    /// Before the opening `[`.
    Start,
    /// After `[`: an element or `]`.
    First,
    /// After `,`: an element.
    Next,
    /// Inside an element.
    Element,
    /// After an element: `,` or `]`.
    After,
    /// After the closing `]`: only whitespace.
    Done,
}

#[derive(Debug)]
pub(crate) struct ArraySplitter {
    input: String,
    max_record_bytes: usize,
    state: ArrayState,
    buf: Vec<u8>,
    depth: usize,
    in_string: bool,
    escape: bool,
    /// The element is a scalar at depth 0 (number, literal): it ends at whitespace, `,` or `]`.
    scalar: bool,
    line: u64,
    element_line: u64,
    records: u64,
}

impl ArraySplitter {
    pub fn new(input: &str, max_record_bytes: usize) -> Self {
        ArraySplitter {
            input: input.to_string(),
            max_record_bytes,
            state: ArrayState::Start,
            buf: Vec::new(),
            depth: 0,
            in_string: false,
            escape: false,
            scalar: false,
            line: 1,
            element_line: 1,
            records: 0,
        }
    }

    fn syntax(&self, message: &str) -> ImportError {
        ImportError::Syntax {
            input: self.input.clone(),
            line: self.line,
            message: message.to_string(),
        }
    }

    fn complete(
        &mut self,
        sink: &mut dyn FnMut(TextEvent<'_>) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        self.records += 1;
        self.state = ArrayState::After;
        let result = sink(TextEvent::Record {
            bytes: &self.buf,
            line: self.element_line,
        });
        self.buf.clear();
        result
    }

    /// Splits the next chunk into array elements.
    ///
    /// # Errors
    /// [`ImportError::Syntax`], [`ImportError::RecordTooLarge`], or any sink error.
    pub fn push(
        &mut self,
        bytes: &[u8],
        sink: &mut dyn FnMut(TextEvent<'_>) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        for &b in bytes {
            let ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
            match self.state {
                ArrayState::Start => {
                    if b == b'[' {
                        self.state = ArrayState::First;
                    } else if !ws {
                        let hint = if b == b'{' {
                            " (a single JSON object; a JSON input must be an array of records — \
                             for one object per line use the JSONL format)"
                        } else {
                            ""
                        };
                        return Err(self.syntax(&format!(
                            "expected `[` at the start of a JSON array of records{hint}"
                        )));
                    }
                }
                ArrayState::First | ArrayState::Next => {
                    if ws {
                    } else if b == b']' && self.state == ArrayState::First {
                        self.state = ArrayState::Done;
                    } else if b == b']' || b == b',' {
                        return Err(self.syntax(&format!(
                            "expected an array element, found `{}` (an empty element or a trailing comma)",
                            b as char
                        )));
                    } else {
                        self.state = ArrayState::Element;
                        self.element_line = self.line;
                        self.depth = 0;
                        self.in_string = false;
                        self.escape = false;
                        self.scalar = false;
                        match b {
                            b'{' | b'[' => self.depth = 1,
                            b'"' => self.in_string = true,
                            _ => self.scalar = true,
                        }
                        self.buf.push(b);
                    }
                }
                ArrayState::Element => {
                    if self.scalar && (ws || b == b',' || b == b']') {
                        self.complete(sink)?;
                        // Re-handle the terminator in the `After` state.
                        if b == b',' {
                            self.state = ArrayState::Next;
                        } else if b == b']' {
                            self.state = ArrayState::Done;
                        }
                    } else {
                        if self.buf.len() >= self.max_record_bytes {
                            return Err(ImportError::RecordTooLarge {
                                input: self.input.clone(),
                                record: self.records + 1,
                                line: self.element_line,
                                limit: self.max_record_bytes,
                            });
                        }
                        self.buf.push(b);
                        if self.in_string {
                            if self.escape {
                                self.escape = false;
                            } else if b == b'\\' {
                                self.escape = true;
                            } else if b == b'"' {
                                self.in_string = false;
                                if self.depth == 0 {
                                    self.complete(sink)?;
                                }
                            }
                        } else if !self.scalar {
                            match b {
                                b'"' => self.in_string = true,
                                b'{' | b'[' => self.depth += 1,
                                b'}' | b']' => {
                                    self.depth = self.depth.saturating_sub(1);
                                    if self.depth == 0 {
                                        self.complete(sink)?;
                                    }
                                }
                                _ => {}
                            }
                        }
                    }
                }
                ArrayState::After => {
                    if ws {
                    } else if b == b',' {
                        self.state = ArrayState::Next;
                    } else if b == b']' {
                        self.state = ArrayState::Done;
                    } else {
                        return Err(self.syntax(&format!(
                            "expected `,` or `]` after array element {}, found `{}`",
                            self.records,
                            char::from(b).escape_default()
                        )));
                    }
                }
                ArrayState::Done => {
                    if !ws {
                        return Err(self.syntax(
                            "text after the closing `]` of the array (only one JSON array is allowed)",
                        ));
                    }
                }
            }
            if b == b'\n' {
                self.line += 1;
            }
        }
        Ok(())
    }

    /// Ends the input.
    ///
    /// # Errors
    /// [`ImportError::Syntax`] when the array is not closed, [`ImportError::NoRecords`] for `[]`.
    pub fn finish(
        &mut self,
        sink: &mut dyn FnMut(TextEvent<'_>) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        match self.state {
            ArrayState::Start => Ok(()),
            ArrayState::Done => {
                if self.records == 0 {
                    Err(ImportError::NoRecords {
                        input: self.input.clone(),
                        what: "an empty JSON array `[]`",
                    })
                } else {
                    Ok(())
                }
            }
            ArrayState::Element if self.scalar => {
                self.complete(sink)?;
                Err(self
                    .syntax("the input ends before the JSON array is closed with `]` (truncated?)"))
            }
            _ => {
                Err(self
                    .syntax("the input ends before the JSON array is closed with `]` (truncated?)"))
            }
        }
    }
}
