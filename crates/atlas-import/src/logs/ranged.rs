//! Inspect AI `.eval` logs read by byte ranges, member by member, from a [`RangedSource`] — in the
//! browser a `File` read through `Blob.slice` — so a large log is never held as one string or one
//! buffer.
//!
//! **Reads**, in order: the last 278 bytes (the zip's end-of-central-directory record; the last
//! 65,557 bytes only when the archive has a long comment) and, when sizes overflow 32 bits, the ZIP64
//! end record; the central directory (one range); then per member its 30-byte local header plus name and extra field, then its compressed
//! data (one range), decoded by [`super::inspect::decode_member`] and checked against the CRC-32 of
//! the directory. A member that is never asked for is never read.
//!
//! The source is asynchronous (a `Blob` answers with a promise) but the crate has no runtime: a
//! source whose futures are ready at once (e.g. [`SliceSource`]) is driven by any executor, and
//! [`block_on_ready`] drives it in tests and on the command line.

use std::cell::{Cell, RefCell};
use std::future::Future;

use serde_json::Value;

use super::inspect::{self, Options, SampleSource};
use super::{log_error, parse_json};
use crate::{Format, ImportError, Imported, Importer, Limits, Mapping};

/// A file that can be read by byte ranges.
pub trait RangedSource {
    /// The file's length in bytes.
    fn len(&self) -> u64;

    /// Whether the file is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes `[offset, offset + len)` (fewer only at the end of the file); `Err` with a message
    /// when the read fails.
    fn read_at(&self, offset: u64, len: u64) -> impl Future<Output = Result<Vec<u8>, String>>;
}

/// An in-memory [`RangedSource`] that records every range read (for tests: what was never read).
#[derive(Debug, Default)]
pub struct SliceSource<'a> {
    bytes: &'a [u8],
    reads: RefCell<Vec<(u64, u64)>>,
}

impl<'a> SliceSource<'a> {
    /// A source over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        SliceSource {
            bytes,
            reads: RefCell::new(Vec::new()),
        }
    }

    /// The ranges read so far, as `(offset, len)`, in order.
    pub fn reads(&self) -> Vec<(u64, u64)> {
        self.reads.borrow().clone()
    }
}

impl RangedSource for SliceSource<'_> {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    fn read_at(&self, offset: u64, len: u64) -> impl Future<Output = Result<Vec<u8>, String>> {
        self.reads.borrow_mut().push((offset, len));
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        let end = usize::try_from(offset.saturating_add(len))
            .unwrap_or(usize::MAX)
            .min(self.bytes.len());
        let out = self.bytes.get(start..end).unwrap_or_default().to_vec();
        std::future::ready(Ok(out))
    }
}

/// Runs `future` to completion when it never waits (every source it reads is ready at once, as
/// [`SliceSource`] is); `None` if it would wait.
pub fn block_on_ready<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Some(v),
        std::task::Poll::Pending => None,
    }
}

/// One member of the zip's central directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The member's path.
    pub name: String,
    /// Compression method (0 stored, 8 DEFLATE, 93 zstd).
    pub method: u16,
    /// CRC-32 of the decoded bytes.
    pub crc32: u32,
    /// Bytes of compressed data.
    pub compressed_size: u64,
    /// Bytes once decoded.
    pub size: u64,
    /// Offset of the member's local header in the file.
    pub header_offset: u64,
    /// General-purpose flags (bit 0: encrypted).
    pub flags: u16,
}

const EOCD_SIG: u32 = 0x0605_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const LOCAL_SIG: u32 = 0x0403_4b50;

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}
fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// An `.eval` zip's central directory, read by ranges from a [`RangedSource`].
#[derive(Debug, Clone)]
pub struct RangedZip {
    input: String,
    entries: Vec<Entry>,
    len: u64,
}

impl RangedZip {
    /// Reads the end-of-central-directory record and the central directory of `source` (the input
    /// called `input`): two or three ranged reads.
    ///
    /// # Errors
    /// [`ImportError::Log`] (location `(file)`, field `(zip)`) when the file is not a zip or is
    /// truncated (no end record, or a directory past the end of the file), or a read fails.
    pub async fn open<S: RangedSource>(input: &str, source: &S) -> Result<Self, ImportError> {
        let len = source.len();
        let bad = |m: String| log_error(input, "(file)", "(zip)", m);
        let read = |offset: u64, n: u64| async move {
            source
                .read_at(offset, n)
                .await
                .map_err(|e| bad(format!("reading bytes {offset}..{}: {e}", offset + n)))
        };
        // The end record is the last 22 bytes when the archive has no comment (Inspect writes none):
        // read a short tail first, the longest possible one (a 65,535-byte comment) only if needed.
        let mut found = None;
        for want in [22 + 256, 22 + 65_535] {
            let tail_len = len.min(want);
            let tail = read(len - tail_len, tail_len).await?;
            let at = (0..tail.len().saturating_sub(21))
                .rev()
                .find(|&i| u32_at(&tail, i) == Some(EOCD_SIG));
            if let Some(at) = at {
                found = Some((tail, tail_len, at));
                break;
            }
            if tail_len == len {
                break;
            }
        }
        let (tail, tail_len, at) = found.ok_or_else(|| {
            bad("no end-of-central-directory record: the .eval is truncated or not a zip".into())
        })?;
        let eocd_offset = len - tail_len + at as u64;
        let short = || bad("the end-of-central-directory record is cut short".into());
        let mut count = u64::from(u16_at(&tail, at + 10).ok_or_else(short)?);
        let mut cd_size = u64::from(u32_at(&tail, at + 12).ok_or_else(short)?);
        let mut cd_offset = u64::from(u32_at(&tail, at + 16).ok_or_else(short)?);
        if count == 0xFFFF || cd_size == 0xFFFF_FFFF || cd_offset == 0xFFFF_FFFF {
            // ZIP64: the locator is the 20 bytes before the end record.
            let loc = at
                .checked_sub(20)
                .filter(|&l| u32_at(&tail, l) == Some(ZIP64_LOCATOR_SIG))
                .ok_or_else(|| bad("a ZIP64 archive without its locator".into()))?;
            let rec_offset = u64_at(&tail, loc + 8).ok_or_else(short)?;
            let rec = read(rec_offset, 56).await?;
            if u32_at(&rec, 0) != Some(ZIP64_EOCD_SIG) {
                return Err(bad("the ZIP64 end record is missing".into()));
            }
            count = u64_at(&rec, 32).ok_or_else(short)?;
            cd_size = u64_at(&rec, 40).ok_or_else(short)?;
            cd_offset = u64_at(&rec, 48).ok_or_else(short)?;
        }
        if cd_offset.saturating_add(cd_size) > eocd_offset {
            return Err(bad(format!(
                "the central directory (bytes {cd_offset}..{}) lies past the end of the file ({len} bytes): truncated",
                cd_offset.saturating_add(cd_size)
            )));
        }
        let cd = read(cd_offset, cd_size).await?;
        let mut entries = Vec::new();
        let mut p = 0usize;
        while (entries.len() as u64) < count {
            let corrupt = || {
                bad(format!(
                    "central directory entry {} is corrupt",
                    entries.len()
                ))
            };
            if u32_at(&cd, p) != Some(CENTRAL_SIG) {
                return Err(corrupt());
            }
            let flags = u16_at(&cd, p + 8).ok_or_else(corrupt)?;
            let method = u16_at(&cd, p + 10).ok_or_else(corrupt)?;
            let crc32 = u32_at(&cd, p + 16).ok_or_else(corrupt)?;
            let mut compressed_size = u64::from(u32_at(&cd, p + 20).ok_or_else(corrupt)?);
            let mut size = u64::from(u32_at(&cd, p + 24).ok_or_else(corrupt)?);
            let name_len = usize::from(u16_at(&cd, p + 28).ok_or_else(corrupt)?);
            let extra_len = usize::from(u16_at(&cd, p + 30).ok_or_else(corrupt)?);
            let comment_len = usize::from(u16_at(&cd, p + 32).ok_or_else(corrupt)?);
            let mut header_offset = u64::from(u32_at(&cd, p + 42).ok_or_else(corrupt)?);
            let name_bytes = cd.get(p + 46..p + 46 + name_len).ok_or_else(corrupt)?;
            let name = String::from_utf8_lossy(name_bytes).into_owned();
            let extra = cd
                .get(p + 46 + name_len..p + 46 + name_len + extra_len)
                .ok_or_else(corrupt)?;
            // ZIP64 extended information (id 1): the overflowing fields, in this order.
            let mut e = 0usize;
            while let (Some(id), Some(n)) = (u16_at(extra, e), u16_at(extra, e + 2)) {
                if id == 1 {
                    let mut q = e + 4;
                    for field in [&mut size, &mut compressed_size, &mut header_offset] {
                        if *field == 0xFFFF_FFFF {
                            *field = u64_at(extra, q).ok_or_else(corrupt)?;
                            q += 8;
                        }
                    }
                }
                e += 4 + usize::from(n);
            }
            entries.push(Entry {
                name,
                method,
                crc32,
                compressed_size,
                size,
                header_offset,
                flags,
            });
            p += 46 + name_len + extra_len + comment_len;
        }
        Ok(RangedZip {
            input: input.to_string(),
            entries,
            len,
        })
    }

    /// The members, in central-directory order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Whether a member called `name` exists.
    pub fn has_member(&self, name: &str) -> bool {
        self.entries.iter().any(|e| e.name == name)
    }

    /// The decoded bytes of the member `name`: two ranged reads (local header, data).
    ///
    /// # Errors
    /// [`ImportError::Log`] naming the member: missing, encrypted, a local header or data past the
    /// end of the file (truncated), an unsupported method, corrupt data, a CRC-32 mismatch.
    pub async fn read_member<S: RangedSource>(
        &self,
        source: &S,
        name: &str,
    ) -> Result<Vec<u8>, ImportError> {
        let location = format!("member {name}");
        let bad = |m: String| log_error(&self.input, &location, "(zip)", m);
        let entry = self
            .entries
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| bad("the member is missing".into()))?;
        if entry.flags & 1 != 0 {
            return Err(bad("the member is encrypted".into()));
        }
        let read = |offset: u64, n: u64| async move {
            if offset.saturating_add(n) > self.len {
                return Err(bad(format!(
                    "bytes {offset}..{} lie past the end of the file ({} bytes): truncated",
                    offset.saturating_add(n),
                    self.len
                )));
            }
            source
                .read_at(offset, n)
                .await
                .map_err(|e| bad(format!("reading bytes {offset}..{}: {e}", offset + n)))
        };
        let local = read(entry.header_offset, 30).await?;
        if u32_at(&local, 0) != Some(LOCAL_SIG) {
            return Err(bad("no local header where the directory points".into()));
        }
        let name_len = u64::from(u16_at(&local, 26).unwrap_or(0));
        let extra_len = u64::from(u16_at(&local, 28).unwrap_or(0));
        let data_start = entry.header_offset + 30 + name_len + extra_len;
        let raw = read(data_start, entry.compressed_size).await?;
        let out = inspect::decode_member(&self.input, name, entry.method, &raw, entry.size)?;
        if inspect::crc32(&out) != entry.crc32 {
            return Err(bad("CRC-32 mismatch: the member's data is corrupt".into()));
        }
        Ok(out)
    }

    /// The member `name` parsed as JSON.
    ///
    /// # Errors
    /// As [`RangedZip::read_member`], and [`ImportError::Log`] when it is not valid JSON.
    pub async fn read_json<S: RangedSource>(
        &self,
        source: &S,
        name: &str,
    ) -> Result<Value, ImportError> {
        let bytes = self.read_member(source, name).await?;
        parse_json(&self.input, &format!("member {name}"), &bytes)
    }

    /// `header.json`, else `_journal/start.json` (as [`inspect::EvalArchive::header`]).
    ///
    /// # Errors
    /// [`ImportError::Log`] when neither is there or readable.
    pub async fn header<S: RangedSource>(&self, source: &S) -> Result<Value, ImportError> {
        for name in ["header.json", "_journal/start.json"] {
            if self.has_member(name) {
                return self.read_json(source, name).await;
            }
        }
        Err(log_error(
            &self.input,
            "member header.json",
            "(zip)",
            "the member is missing (and so is _journal/start.json): not an Inspect AI .eval log",
        ))
    }

    /// The sample summaries (as [`inspect::EvalArchive::summaries`]).
    ///
    /// # Errors
    /// [`ImportError::Log`] when a summaries member is unreadable or not a JSON array.
    pub async fn summaries<S: RangedSource>(&self, source: &S) -> Result<Vec<Value>, ImportError> {
        let mut out = Vec::new();
        for name in inspect::summary_members(self.entries.iter().map(|e| e.name.as_str())) {
            let value = self.read_json(source, &name).await?;
            inspect::push_summaries(&self.input, &name, value, &mut out)?;
        }
        Ok(out)
    }

    /// The `samples/` member names in directory order.
    pub fn sample_members(&self) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| e.name.starts_with("samples/") && e.name.ends_with(".json"))
            .map(|e| e.name.clone())
            .collect()
    }
}

/// What the Import view shows of an `.eval` before importing: its member count, the preset mapping
/// and the first records (from the summaries).
#[derive(Debug, Clone)]
pub struct EvalPreview {
    /// Members in the zip.
    pub members: usize,
    /// The reader's preset ([`inspect::preset`]).
    pub preset: Mapping,
    /// The first flat records (the reader's fields, from `summaries.json`; texts shortened there).
    pub records: Vec<Value>,
}

/// Reads the directory, header and summaries of the `.eval` `source` for the Import view.
///
/// # Errors
/// As [`RangedZip::open`], [`RangedZip::header`] and [`RangedZip::summaries`].
pub async fn preview_eval<S: RangedSource>(
    input: &str,
    source: &S,
    options: &Options,
    rows: usize,
) -> Result<EvalPreview, ImportError> {
    let zip = RangedZip::open(input, source).await?;
    let header = zip.header(source).await?;
    let summaries = zip.summaries(source).await?;
    let (basis, summaries) = inspect::eval_basis(input, &header, summaries, options)?;
    let preset = inspect::preset_from(&basis, &[input])?;
    let records = summaries
        .iter()
        .take(rows)
        .enumerate()
        .map(|(i, s)| {
            inspect::sample_record(
                input,
                &format!("summaries[{i}]"),
                &basis.eval,
                s,
                basis.scorer.as_deref(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(EvalPreview {
        members: zip.entries().len(),
        preset,
        records,
    })
}

/// Imports several `.eval` logs read by ranges into one bundle, as [`inspect::read_all`] does from
/// whole files: `mapping`, or the preset of the first log; the samples of each log are read one
/// member at a time, in the summaries' order. `progress(done, total)` is called after each member
/// with the compressed bytes of sample members read so far and in all.
///
/// # Errors
/// As [`inspect::read_all`]; a truncated file or member is [`ImportError::Log`] naming it.
pub async fn read_eval_logs<S: RangedSource>(
    inputs: &[(&str, &S)],
    mapping: Option<Mapping>,
    options: &Options,
    limits: Limits,
    mut progress: impl FnMut(u64, u64),
) -> Result<Imported, ImportError> {
    let mut logs = Vec::with_capacity(inputs.len());
    for (name, source) in inputs {
        let zip = RangedZip::open(name, *source).await?;
        let header = zip.header(*source).await?;
        let summaries = zip.summaries(*source).await?;
        let (basis, summaries) = inspect::eval_basis(name, &header, summaries, options)?;
        let order = inspect::sample_order(zip.sample_members(), &summaries);
        logs.push((*name, *source, zip, basis, summaries, order));
    }
    let mapping = match mapping {
        Some(m) => m,
        None => {
            let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
            let Some((_, _, _, basis, _, _)) = logs.first() else {
                return Err(ImportError::NothingImported {
                    records: 0,
                    detail: "no Inspect log was given".into(),
                });
            };
            inspect::preset_from(basis, &names)?
        }
    };
    let size_of = |zip: &RangedZip, m: &str| {
        zip.entries()
            .iter()
            .find(|e| e.name == m)
            .map_or(0, |e| e.compressed_size)
    };
    let total: u64 = logs
        .iter()
        .map(|(_, _, zip, _, _, order)| order.iter().map(|m| size_of(zip, m)).sum::<u64>())
        .sum();
    let done = Cell::new(0u64);
    let mut importer = Importer::new(mapping, limits)?;
    for (name, source, zip, basis, summaries, order) in &logs {
        let scorer = basis.scorer.as_deref();
        importer.begin(name, Format::Jsonl)?;
        let mut line = Vec::new();
        let mut push = |record: Value, importer: &mut Importer| {
            line.clear();
            serde_json::to_writer(&mut line, &record).map_err(|e| ImportError::Io {
                input: name.to_string(),
                message: e.to_string(),
            })?;
            line.push(b'\n');
            importer.push(&line)
        };
        if options.source == SampleSource::Summaries {
            for (i, s) in summaries.iter().enumerate() {
                let r = inspect::sample_record(
                    name,
                    &format!("summaries[{i}]"),
                    &basis.eval,
                    s,
                    scorer,
                )?;
                push(r, &mut importer)?;
            }
        } else {
            for m in order {
                let sample = zip.read_json(*source, m).await?;
                let r = inspect::sample_record(
                    name,
                    &format!("member {m}"),
                    &basis.eval,
                    &sample,
                    scorer,
                )?;
                push(r, &mut importer)?;
                done.set(done.get() + size_of(zip, m));
                progress(done.get(), total);
            }
        }
        importer.end()?;
    }
    importer.finish()
}
