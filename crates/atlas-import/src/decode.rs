//! Text encoding of an input, decided by its first bytes and applied chunk by chunk.
//!
//! Defined outcomes (each tested in `tests/readers.rs`):
//!
//! | first bytes | outcome |
//! | --- | --- |
//! | `EF BB BF` (UTF-8 byte-order mark) | the mark is dropped, the rest is read as UTF-8 |
//! | `FF FE` (UTF-16 LE mark) | **decoded** to UTF-8 (spreadsheet "Unicode text" exports are UTF-16 LE) |
//! | `FE FF` (UTF-16 BE mark) | **decoded** to UTF-8 |
//! | `FF FE 00 00` / `00 00 FE FF` (UTF-32 marks) | [`ImportError::Encoding`]: UTF-32 is not supported |
//! | a zero byte next to a non-zero one in the first two bytes | [`ImportError::Encoding`]: UTF-16 without a byte-order mark cannot be told apart reliably; re-save with a mark or as UTF-8 |
//! | anything else | read as UTF-8 |
//!
//! UTF-16 input with an unpaired surrogate or an odd number of bytes is an [`ImportError::Encoding`]
//! naming the byte offset. UTF-8 is not validated here but per record by the readers, so that invalid
//! bytes skip the record that holds them (the report names it) instead of failing the whole input.
//! The decoder holds at most three bytes between chunks; it never buffers the input.

use crate::error::ImportError;

/// The text encoding detected from an input's first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TextEncoding {
    /// UTF-8 without a byte-order mark.
    Utf8,
    /// UTF-8 with a byte-order mark (dropped).
    Utf8Bom,
    /// UTF-16 little-endian with a byte-order mark, decoded to UTF-8.
    Utf16Le,
    /// UTF-16 big-endian with a byte-order mark, decoded to UTF-8.
    Utf16Be,
}

#[derive(Debug)]
enum State {
    /// Fewer than four bytes seen: the encoding is not decided yet.
    Detect {
        buf: [u8; 4],
        len: usize,
    },
    Utf8,
    Utf16 {
        big_endian: bool,
        /// First byte of a code unit split across chunks.
        pending_byte: Option<u8>,
        /// A high surrogate waiting for its low surrogate, with the byte offset where it started.
        pending_high: Option<(u16, u64)>,
    },
}

/// Push-based decoder: feed raw chunks with [`Decoder::push`], then call [`Decoder::finish`]; UTF-8
/// bytes are appended to the output buffer.
#[derive(Debug)]
pub struct Decoder {
    input: String,
    state: State,
    encoding: Option<TextEncoding>,
    /// Raw bytes consumed so far (for error offsets).
    offset: u64,
}

impl Decoder {
    /// A decoder for the input called `input` (used in error messages).
    pub fn new(input: &str) -> Self {
        Decoder {
            input: input.to_string(),
            state: State::Detect {
                buf: [0; 4],
                len: 0,
            },
            encoding: None,
            offset: 0,
        }
    }

    /// The detected encoding, once at least four bytes (or the whole input) have been seen.
    pub fn encoding(&self) -> Option<TextEncoding> {
        self.encoding
    }

    /// Raw bytes consumed so far.
    pub fn bytes_in(&self) -> u64 {
        self.offset
    }

    fn error(&self, offset: u64, message: &str) -> ImportError {
        ImportError::Encoding {
            input: self.input.clone(),
            offset,
            message: message.to_string(),
        }
    }

    /// Decodes `bytes` (the next chunk of the input) and appends UTF-8 to `out`.
    ///
    /// # Errors
    /// [`ImportError::Encoding`] as described in the module documentation.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), ImportError> {
        let mut rest = bytes;
        if let State::Detect { buf, len } = &mut self.state {
            let take = (4 - *len).min(rest.len());
            buf[*len..*len + take].copy_from_slice(&rest[..take]);
            *len += take;
            rest = &rest[take..];
            if *len < 4 {
                self.offset += take as u64;
                return Ok(());
            }
            let head = *buf;
            self.offset += take as u64;
            // Re-run the head through the decided decoder (offset accounting: the head's bytes were
            // already counted, so rewind while decoding them).
            self.offset = self.offset.saturating_sub(4);
            self.decide(&head, out)?;
        }
        self.decode(rest, out)
    }

    /// Ends the input: decides the encoding of a input shorter than four bytes and checks that no
    /// UTF-16 code unit or surrogate pair is left incomplete.
    ///
    /// # Errors
    /// [`ImportError::Encoding`] for a truncated UTF-16 input.
    pub fn finish(&mut self, out: &mut Vec<u8>) -> Result<(), ImportError> {
        if let State::Detect { buf, len } = &self.state {
            let head = buf[..*len].to_vec();
            self.offset = self.offset.saturating_sub(head.len() as u64);
            self.decide(&head, out)?;
        }
        match &self.state {
            State::Utf16 {
                pending_byte: Some(_),
                ..
            } => Err(self.error(
                self.offset - 1,
                "UTF-16 input with an odd number of bytes (the last code unit is incomplete)",
            )),
            State::Utf16 {
                pending_high: Some((_, at)),
                ..
            } => Err(self.error(
                *at,
                "UTF-16 input ends inside a surrogate pair (a high surrogate without its low half)",
            )),
            _ => Ok(()),
        }
    }

    /// Decides the encoding from the first (up to four) bytes `head`, then decodes them.
    fn decide(&mut self, head: &[u8], out: &mut Vec<u8>) -> Result<(), ImportError> {
        let (state, encoding, skip) = if head.starts_with(&[0xFF, 0xFE, 0, 0])
            || head.starts_with(&[0, 0, 0xFE, 0xFF])
        {
            return Err(self.error(
                0,
                "the input starts with a UTF-32 byte-order mark; UTF-32 is not supported (re-save as UTF-8)",
            ));
        } else if head.starts_with(&[0xEF, 0xBB, 0xBF]) {
            (State::Utf8, TextEncoding::Utf8Bom, 3)
        } else if head.starts_with(&[0xFF, 0xFE]) {
            (
                State::Utf16 {
                    big_endian: false,
                    pending_byte: None,
                    pending_high: None,
                },
                TextEncoding::Utf16Le,
                2,
            )
        } else if head.starts_with(&[0xFE, 0xFF]) {
            (
                State::Utf16 {
                    big_endian: true,
                    pending_byte: None,
                    pending_high: None,
                },
                TextEncoding::Utf16Be,
                2,
            )
        } else if head.len() >= 2 && ((head[0] == 0) != (head[1] == 0)) {
            return Err(self.error(
                0,
                "the input looks like UTF-16 without a byte-order mark (a zero byte next to a \
                 non-zero one); re-save it as UTF-8, or as UTF-16 with a byte-order mark",
            ));
        } else {
            (State::Utf8, TextEncoding::Utf8, 0)
        };
        self.state = state;
        self.encoding = Some(encoding);
        self.offset += skip as u64;
        self.decode(&head[skip..], out)
    }

    fn decode(&mut self, bytes: &[u8], out: &mut Vec<u8>) -> Result<(), ImportError> {
        let input = &self.input;
        let start = self.offset;
        match &mut self.state {
            State::Detect { .. } => Ok(()),
            State::Utf8 => {
                out.extend_from_slice(bytes);
                self.offset += bytes.len() as u64;
                Ok(())
            }
            State::Utf16 {
                big_endian,
                pending_byte,
                pending_high,
            } => {
                out.reserve(bytes.len());
                for (k, &b) in bytes.iter().enumerate() {
                    let Some(first) = pending_byte.take() else {
                        *pending_byte = Some(b);
                        continue;
                    };
                    // Offset of the unit's first byte (possibly the last byte of the previous chunk).
                    let at = (start + k as u64).saturating_sub(1);
                    let unit = if *big_endian {
                        u16::from_be_bytes([first, b])
                    } else {
                        u16::from_le_bytes([first, b])
                    };
                    if let Some((high, high_at)) = pending_high.take() {
                        if (0xDC00..=0xDFFF).contains(&unit) {
                            let c = 0x10000
                                + ((u32::from(high) - 0xD800) << 10)
                                + (u32::from(unit) - 0xDC00);
                            push_char(out, c);
                            continue;
                        }
                        return Err(ImportError::Encoding {
                            input: input.clone(),
                            offset: high_at,
                            message: "UTF-16 high surrogate not followed by a low surrogate".into(),
                        });
                    }
                    if (0xD800..=0xDBFF).contains(&unit) {
                        *pending_high = Some((unit, at));
                    } else if (0xDC00..=0xDFFF).contains(&unit) {
                        return Err(ImportError::Encoding {
                            input: input.clone(),
                            offset: at,
                            message: "UTF-16 low surrogate without a high surrogate before it"
                                .into(),
                        });
                    } else {
                        push_char(out, u32::from(unit));
                    }
                }
                self.offset += bytes.len() as u64;
                Ok(())
            }
        }
    }
}

fn push_char(out: &mut Vec<u8>, code: u32) {
    // `code` is never a surrogate here, so `from_u32` always succeeds; U+FFFD is a defensive fallback.
    let c = char::from_u32(code).unwrap_or('\u{FFFD}');
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}
