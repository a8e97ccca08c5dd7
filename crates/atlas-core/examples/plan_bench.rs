//! Planner estimate benchmark and fingerprint (issue 17 §3): times [`Planner::estimate`] (2,000
//! draws, every model, seed 20260722) natively at the Plan view's slider positions (21 budgets from 20
//! to 2,000, each design up to what it can read) and prints a fingerprint of every estimate: an FNV-1a
//! hash over the JSON of all estimates (every f64 written by serde_json's shortest round-trip form, so
//! any change of a bit changes the text). A change to the scoring or the draws that keeps the numbers
//! must keep the fingerprint.
//!
//! ```text
//! cargo run --release -p atlas-core --example plan_bench -- static/bundles/decodingtrust-stereotype/bundle.json
//! ```

use std::time::Instant;

use atlas_core::plan::{EstimateOptions, Planner};
use atlas_core::rq2::Design;
use atlas_core::{Audit, RepeatPolicy};

fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
}

fn main() {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "static/bundles/decodingtrust-stereotype/bundle.json".to_string());
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let audit = Audit::from_bytes(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    let planner = Planner::new(&audit, RepeatPolicy::AllResponses, None).expect("planner");
    let budgets: Vec<usize> = (0..21)
        .map(|i| (20.0 + i as f64 * 1980.0 / 20.0).round() as usize)
        .collect();
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    let mut times = Vec::new();
    let options = EstimateOptions {
        pair: Some((0, 1)),
        ..EstimateOptions::default()
    };
    for design in [
        Design::Srs,
        Design::Stratified,
        Design::Concentrated,
        Design::Coverage(2),
        Design::Balanced,
    ] {
        for &b in &budgets {
            let t0 = Instant::now();
            let Ok(e) = planner.estimate(design, b, &options) else {
                continue;
            };
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            if !matches!(design, Design::Coverage(_) | Design::Balanced) {
                times.push(ms);
            }
            fnv1a(
                &mut hash,
                serde_json::to_string(&e).expect("json").as_bytes(),
            );
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "estimate_ms median {median:.2} min {:.2} max {:.2} over {} slider positions (SRS, stratified, concentrated)",
        times[0],
        times[times.len() - 1],
        times.len()
    );
    println!("plan_fingerprint {hash:016x}");
    // Per point, the fastest of 5 runs (the least disturbed by other load on the machine).
    for (design, b) in [
        (Design::Srs, 2000),
        (Design::Srs, 200),
        (Design::Stratified, 1000),
        (Design::Concentrated, 300),
    ] {
        let (mut draws_ms, mut merge_ms) = (f64::INFINITY, f64::INFINITY);
        for _ in 0..5 {
            let t0 = Instant::now();
            let part = planner
                .estimate_range(design, b, &options, 0..options.draws)
                .expect("part");
            let t1 = Instant::now();
            planner.merge(design, b, &options, &[part]).expect("merge");
            draws_ms = draws_ms.min((t1 - t0).as_secs_f64() * 1e3);
            merge_ms = merge_ms.min(t1.elapsed().as_secs_f64() * 1e3);
        }
        println!("{design:?} {b}: draws+scoring {draws_ms:.2} ms, merge+summary {merge_ms:.2} ms (min of 5)");
    }
}
