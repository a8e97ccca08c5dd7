//! Same seed, same numbers natively and in the browser: fingerprints of the full RQ1 and RQ2 reports on
//! the default bundle. `tests/web_resample.rs` asserts the SAME constants in wasm32 (headless Chromium).
//!
//! The constants were obtained by running this native test once; they guard cross-target equality
//! (and accidental changes of the draws), not correctness — correctness is checked against the numpy
//! references in `rq1_reference.rs` and `rq2_reference.rs`. If an intended change alters the reports,
//! update both files together. The hashes cover every field, the RQ2 per-model partial-drop counts
//! and both reports' score direction included. The RQ2 constant changed on 2026-12-02, when RQ2's
//! draws moved to per-draw streams (`DrawStream::for_draw`, so that draws split across workers give
//! the same numbers).

use atlas_core::rq1::{condition_reversals, wording_sensitivity, Rq1Options};
use atlas_core::rq2::{analyze_rq2, Rq2Options};
use atlas_core::{Audit, RepeatPolicy};

/// FNV-1a 64 over the bytes (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Reports serialised with serde_json (shortest round-trip floats), hashed.
pub fn report_fingerprints(audit: &Audit) -> (u64, u64) {
    let rq1_options = Rq1Options {
        unit_bootstrap_reps: 500,
        cluster_bootstrap_reps: 200,
        seed: 20_260_716,
        ..Rq1Options::default()
    };
    let wording = wording_sensitivity(audit, &rq1_options).unwrap();
    let reversals =
        condition_reversals(audit, RepeatPolicy::AllResponses, 200, 20_260_716).unwrap();
    let rq1 = serde_json::to_string(&(wording, reversals)).unwrap();
    let rq2_options = Rq2Options {
        draws: 200,
        budget: 200,
        bootstrap_reps: 200,
        ..Rq2Options::default()
    };
    let rq2 = serde_json::to_string(&analyze_rq2(audit, &rq2_options).unwrap()).unwrap();
    (fnv1a(rq1.as_bytes()), fnv1a(rq2.as_bytes()))
}

const RQ1_FINGERPRINT: u64 = 9_291_688_427_133_396_670;
const RQ2_FINGERPRINT: u64 = 430_341_843_830_986_112;

#[test]
fn rq1_and_rq2_reports_of_the_default_bundle_have_the_recorded_fingerprints() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../static/bundles/decodingtrust-stereotype/bundle.json"
    ))
    .unwrap();
    let audit = Audit::from_json(&text).unwrap();
    assert_eq!(
        report_fingerprints(&audit),
        (RQ1_FINGERPRINT, RQ2_FINGERPRINT)
    );
}
