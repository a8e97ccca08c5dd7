//! A push-based CSV/TSV record splitter (RFC 4180 with the lenient rules of Python's `csv` module).
//!
//! Defined outcomes (each tested in `tests/readers.rs`):
//!
//! - **Records** end at `\n`, `\r\n` or a lone `\r`; lines are counted the same way, so a record's
//!   `line` is the line its first byte is on.
//! - **Quoted fields** start with `"` as their first byte and may hold delimiters, quotes written as
//!   `""`, and line breaks (`\r\n` inside quotes is kept as is). Text after a closing quote up to the
//!   next delimiter is appended (`"ab"cd` reads `abcd`, as Python's `csv` does); a `"` inside an
//!   unquoted field is an ordinary character.
//! - **Blank lines** (nothing between two line breaks) are not records; they are counted in the report.
//!   A line of spaces is a record with one field.
//! - A quoted field still **open at the end of the input** is [`ImportError::UnclosedQuote`], naming
//!   the line where the quote opened.
//! - A record longer than the limit (input bytes from its first byte to its line break) is
//!   [`ImportError::RecordTooLarge`]: checked while reading, so a single huge line never makes the
//!   reader buffer more than the limit.
//! - Fields are bytes here; UTF-8 is checked per record by the caller.

use crate::error::ImportError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between records (nothing of the next record read yet).
    StartRecord,
    /// At the start of a field inside a record.
    StartField,
    Unquoted,
    Quoted,
    /// A `"` inside a quoted field: either the first half of `""` or the closing quote.
    QuoteInQuoted,
}

/// A complete record: the field bytes and where each field ends.
#[derive(Debug, Default)]
pub(crate) struct RawRecord {
    pub bytes: Vec<u8>,
    pub ends: Vec<usize>,
    /// 1-based line of the record's first byte.
    pub line: u64,
}

impl RawRecord {
    pub fn fields(&self) -> impl Iterator<Item = &[u8]> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let f = &self.bytes[start..end];
            start = end;
            f
        })
    }
}

/// What the splitter reports besides records.
#[derive(Debug)]
pub(crate) enum CsvEvent {
    Record(RawRecord),
    BlankLine,
}

#[derive(Debug)]
pub(crate) struct CsvSplitter {
    input: String,
    delimiter: u8,
    max_record_bytes: usize,
    state: State,
    current: RawRecord,
    /// Input bytes of the current record so far.
    record_bytes: usize,
    /// Records completed so far (the next record's number is `records + 1`, header included).
    records: u64,
    /// 1-based line of the next byte.
    line: u64,
    prev_cr: bool,
    /// Swallow a `\n` right after a `\r` that ended a record or a blank line.
    skip_lf: bool,
    quote_line: u64,
    /// The first record is a header: data records are numbered from the second one (the header is
    /// record 0 in errors).
    header: bool,
}

impl CsvSplitter {
    pub fn new(input: &str, delimiter: u8, max_record_bytes: usize, header: bool) -> Self {
        CsvSplitter {
            input: input.to_string(),
            delimiter,
            max_record_bytes,
            state: State::StartRecord,
            current: RawRecord::default(),
            record_bytes: 0,
            records: 0,
            line: 1,
            prev_cr: false,
            skip_lf: false,
            quote_line: 1,
            header,
        }
    }

    /// Number of the record being read, as reported in errors (the header is record 0).
    fn record_number(&self) -> u64 {
        if self.header {
            self.records
        } else {
            self.records + 1
        }
    }

    fn end_field(&mut self) {
        self.current.ends.push(self.current.bytes.len());
    }

    fn end_record(
        &mut self,
        sink: &mut dyn FnMut(CsvEvent) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        self.records += 1;
        self.state = State::StartRecord;
        self.record_bytes = 0;
        let record = std::mem::take(&mut self.current);
        sink(CsvEvent::Record(record))
    }

    /// Splits the next chunk of decoded input into records.
    ///
    /// # Errors
    /// [`ImportError::RecordTooLarge`], or any error the sink returns.
    pub fn push(
        &mut self,
        bytes: &[u8],
        sink: &mut dyn FnMut(CsvEvent) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        let delim = self.delimiter;
        for &b in bytes {
            let line_of_byte = self.line;
            // Line counting, independent of the parser state: `\r\n`, `\n` and a lone `\r` are breaks.
            if b == b'\n' {
                if !self.prev_cr {
                    self.line += 1;
                }
            } else if b == b'\r' {
                self.line += 1;
            }
            self.prev_cr = b == b'\r';
            if self.skip_lf {
                self.skip_lf = false;
                if b == b'\n' {
                    continue;
                }
            }
            if self.state == State::StartRecord {
                if b == b'\n' || b == b'\r' {
                    self.skip_lf = b == b'\r';
                    sink(CsvEvent::BlankLine)?;
                    continue;
                }
                self.current.line = line_of_byte;
                self.state = State::StartField;
            }
            self.record_bytes += 1;
            if self.record_bytes > self.max_record_bytes {
                return Err(ImportError::RecordTooLarge {
                    input: self.input.clone(),
                    record: self.record_number(),
                    line: self.current.line,
                    limit: self.max_record_bytes,
                });
            }
            match self.state {
                State::StartRecord => {}
                State::StartField => {
                    if b == b'"' {
                        self.state = State::Quoted;
                        self.quote_line = line_of_byte;
                    } else if b == delim {
                        self.end_field();
                    } else if b == b'\n' || b == b'\r' {
                        self.end_field();
                        self.skip_lf = b == b'\r';
                        self.end_record(sink)?;
                    } else {
                        self.current.bytes.push(b);
                        self.state = State::Unquoted;
                    }
                }
                State::Unquoted => {
                    if b == delim {
                        self.end_field();
                        self.state = State::StartField;
                    } else if b == b'\n' || b == b'\r' {
                        self.end_field();
                        self.skip_lf = b == b'\r';
                        self.end_record(sink)?;
                    } else {
                        self.current.bytes.push(b);
                    }
                }
                State::Quoted => {
                    if b == b'"' {
                        self.state = State::QuoteInQuoted;
                    } else {
                        self.current.bytes.push(b);
                    }
                }
                State::QuoteInQuoted => {
                    if b == b'"' {
                        self.current.bytes.push(b'"');
                        self.state = State::Quoted;
                    } else if b == delim {
                        self.end_field();
                        self.state = State::StartField;
                    } else if b == b'\n' || b == b'\r' {
                        self.end_field();
                        self.skip_lf = b == b'\r';
                        self.end_record(sink)?;
                    } else {
                        self.current.bytes.push(b);
                        self.state = State::Unquoted;
                    }
                }
            }
        }
        Ok(())
    }

    /// Ends the input: completes a last record without a line break.
    ///
    /// # Errors
    /// [`ImportError::UnclosedQuote`] when the input ends inside a quoted field; any sink error.
    pub fn finish(
        &mut self,
        sink: &mut dyn FnMut(CsvEvent) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        match self.state {
            State::StartRecord => Ok(()),
            State::Quoted => Err(ImportError::UnclosedQuote {
                input: self.input.clone(),
                record: self.record_number(),
                line: self.current.line,
                quote_line: self.quote_line,
            }),
            State::StartField | State::Unquoted | State::QuoteInQuoted => {
                self.end_field();
                self.end_record(sink)
            }
        }
    }
}
