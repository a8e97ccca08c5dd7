//! Size probe: the other log readers and the CSV import path and, with `--features parquet`, also
//! the Parquet reader; the difference of the two optimised wasm files is what Parquet adds.
use atlas_import::logs::{LogInput, LogOptions};
use atlas_import::Limits;

/// # Safety
/// `ptr` must point to `len` readable bytes (the probe is only built, never called).
#[no_mangle]
pub unsafe extern "C" fn probe(ptr: *const u8, len: usize, which: u32) -> usize {
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    let o = LogOptions::default();
    let inputs = [LogInput { name: "x", bytes }];
    let r = match which {
        0 => atlas_import::logs::inspect::read_all(&[("x", bytes)], None, &Default::default(), Limits::default()),
        1 => atlas_import::logs::lmeval::read(&inputs, &o),
        2 => atlas_import::logs::promptfoo::read_all(&[("x", bytes)], None, Limits::default()),
        #[cfg(feature = "parquet")]
        3 => atlas_import::logs::parquet::read(&inputs, &o),
        _ => return 0,
    };
    match r { Ok(i) => i.report.records as usize, Err(e) => e.to_string().len() }
}
