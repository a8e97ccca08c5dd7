//! A push-based CSV/TSV record splitter (RFC 4180 with the lenient rules of Python's `csv` module):
//! the `csv-core` state machine (the `csv` crate's parser) splits and unescapes the fields; this file
//! adds what the importer reports around it — lines, blank lines, the record limit while reading, and
//! an unclosed quote with the line where it opened, which `csv-core` reads leniently as a last field.
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

use csv_core::{ReadFieldResult, ReadRecordResult, Reader, ReaderBuilder, Terminator};

use crate::error::ImportError;

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
    reader: Box<Reader>,
    /// csv-core's output: the unescaped field bytes of the current record (`out[..out_len]`) and
    /// the field ends (`ends[..ends_len]`); both grow when csv-core says they are full.
    out: Vec<u8>,
    out_len: usize,
    ends: Vec<usize>,
    ends_len: usize,
    /// The current record's input bytes from its first byte (bounded by the record limit): read
    /// again only when the input ends inside a quote, to find the line where that quote opened.
    raw: Vec<u8>,
    /// 1-based line of the current record's first byte; `None` between records (before its first
    /// byte that is not a line break).
    record_line: Option<u64>,
    /// Records completed so far (the next record's number is `records + 1`, header included).
    records: u64,
    /// 1-based line of the next byte.
    line: u64,
    prev_cr: bool,
    /// The first record is a header: data records are numbered from the second one (the header is
    /// record 0 in errors).
    header: bool,
    /// Whether csv-core has been given input yet (its first call gets one byte).
    fed: bool,
}

fn reader(delimiter: u8) -> Reader {
    // `\n`, `\r\n` and a lone `\r` end records; `""` is a quote inside a quoted field; no escape
    // character and no comments (csv-core's defaults besides the delimiter).
    ReaderBuilder::new()
        .delimiter(delimiter)
        .terminator(Terminator::CRLF)
        .build()
}

/// Line breaks in `bytes` (`\r\n`, `\n` and a lone `\r` each one), the first byte not after a `\r`.
fn breaks(bytes: &[u8]) -> u64 {
    let mut n = 0;
    let mut prev_cr = false;
    for &b in bytes {
        if b == b'\r' || (b == b'\n' && !prev_cr) {
            n += 1;
        }
        prev_cr = b == b'\r';
    }
    n
}

impl CsvSplitter {
    pub fn new(input: &str, delimiter: u8, max_record_bytes: usize, header: bool) -> Self {
        CsvSplitter {
            input: input.to_string(),
            delimiter,
            max_record_bytes,
            reader: Box::new(reader(delimiter)),
            out: vec![0; 1024],
            out_len: 0,
            ends: vec![0; 64],
            ends_len: 0,
            raw: Vec::new(),
            record_line: None,
            records: 0,
            line: 1,
            prev_cr: false,
            header,
            fed: false,
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

    /// Bookkeeping of the input bytes csv-core consumed: lines, blank lines (line breaks before a
    /// record's first byte that do not end the previous record), the record's first line, its input
    /// bytes and the record limit.
    fn account(
        &mut self,
        consumed: &[u8],
        sink: &mut dyn FnMut(CsvEvent) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        for &b in consumed {
            let line_of_byte = self.line;
            let is_break = b == b'\r' || (b == b'\n' && !self.prev_cr);
            if is_break {
                self.line += 1;
            }
            self.prev_cr = b == b'\r';
            if self.record_line.is_none() {
                if b == b'\n' || b == b'\r' {
                    if is_break {
                        sink(CsvEvent::BlankLine)?;
                    }
                    continue;
                }
                self.record_line = Some(line_of_byte);
            }
            self.raw.push(b);
            if self.raw.len() > self.max_record_bytes {
                return Err(ImportError::RecordTooLarge {
                    input: self.input.clone(),
                    record: self.record_number(),
                    line: self.record_line.unwrap_or(line_of_byte),
                    limit: self.max_record_bytes,
                });
            }
        }
        Ok(())
    }

    /// Hands the finished record (first byte on `line`) to the sink and resets for the next one.
    fn emit(
        &mut self,
        line: u64,
        sink: &mut dyn FnMut(CsvEvent) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        let record = RawRecord {
            bytes: self.out[..self.out_len].to_vec(),
            ends: self.ends[..self.ends_len].to_vec(),
            line,
        };
        self.records += 1;
        self.out_len = 0;
        self.ends_len = 0;
        self.raw.clear();
        self.record_line = None;
        sink(CsvEvent::Record(record))
    }

    /// Grows csv-core's output buffers after it said which one is full.
    fn grow(&mut self, result: ReadRecordResult) {
        match result {
            ReadRecordResult::OutputFull => {
                let grown = self.out.len() * 2;
                self.out.resize(grown, 0);
            }
            ReadRecordResult::OutputEndsFull => {
                let grown = self.ends.len() * 2;
                self.ends.resize(grown, 0);
            }
            _ => {}
        }
    }

    /// Where the last field of the pending record starts in its input bytes: csv-core's field
    /// reader over [`CsvSplitter::raw`] (a field is never longer than its input).
    fn open_field_start(&self) -> usize {
        let mut fields = reader(self.delimiter);
        let mut out = vec![0u8; self.raw.len() + 1];
        let (mut at, mut start) = (0, 0);
        loop {
            let (result, nin, _) = fields.read_field(&self.raw[at..], &mut out);
            at += nin;
            match result {
                ReadFieldResult::Field { .. } => start = at,
                _ => return start,
            }
        }
    }

    /// Splits the next chunk of decoded input into records.
    ///
    /// # Errors
    /// [`ImportError::RecordTooLarge`], or any error the sink returns.
    pub fn push(
        &mut self,
        mut input: &[u8],
        sink: &mut dyn FnMut(CsvEvent) -> Result<(), ImportError>,
    ) -> Result<(), ImportError> {
        while !input.is_empty() {
            // Never more than the record limit allows past this record's bytes so far: a single
            // endless line stops at the limit instead of being buffered first.
            let room = self
                .max_record_bytes
                .saturating_add(1)
                .saturating_sub(self.raw.len())
                .max(1);
            // csv-core drops a UTF-8 byte-order mark at the start of its first call when that call
            // holds all three bytes, so whether it did would depend on the chunk borders. The decoder
            // has already dropped the input's own mark; one byte first makes csv-core drop none, so a
            // second mark is text whatever the chunks (found by the 10⁶-input fuzz run).
            let room = if self.fed { room } else { 1 };
            self.fed = true;
            let take = input.len().min(room);
            let (result, nin, nout, nend) = self.reader.read_record(
                &input[..take],
                &mut self.out[self.out_len..],
                &mut self.ends[self.ends_len..],
            );
            self.out_len += nout;
            self.ends_len += nend;
            self.account(&input[..nin], sink)?;
            input = &input[nin..];
            if result == ReadRecordResult::Record {
                let line = self.record_line.unwrap_or(self.line);
                self.emit(line, sink)?;
            } else {
                self.grow(result);
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
        let Some(record_line) = self.record_line else {
            return Ok(());
        };
        // A line break ends the pending record unless csv-core is inside a quoted field, where it
        // is one more byte of the field: that is how an open quote shows (csv-core itself would
        // return the field as if it were closed). The break is not input: no line or limit counts it.
        let mut pending: &[u8] = b"\n";
        loop {
            let (result, nin, nout, nend) = self.reader.read_record(
                pending,
                &mut self.out[self.out_len..],
                &mut self.ends[self.ends_len..],
            );
            self.out_len += nout;
            self.ends_len += nend;
            pending = &pending[nin..];
            match result {
                ReadRecordResult::Record => return self.emit(record_line, sink),
                ReadRecordResult::OutputFull | ReadRecordResult::OutputEndsFull => {
                    self.grow(result)
                }
                ReadRecordResult::InputEmpty | ReadRecordResult::End if pending.is_empty() => break,
                ReadRecordResult::InputEmpty | ReadRecordResult::End => {}
            }
        }
        let start = self.open_field_start();
        Err(ImportError::UnclosedQuote {
            input: self.input.clone(),
            record: self.record_number(),
            line: record_line,
            quote_line: record_line + breaks(&self.raw[..start]),
        })
    }
}
