//! Re-weighting benchmark (re-weight recompute time at full scale against one frame):
//! times the recompute the app runs on every weight change — validate the weights
//! (`ConditionWeights::custom`), then scores, ranks, Kendall τ-b, inversions and inverted pairs against
//! the equal-weight ranking (`ReweightBasis::reweight`) — over random weight vectors, and reports the
//! median and the 99th percentile against one 60 Hz frame (16.7 ms). The one-off costs (parse, unit
//! counts, `ReweightBasis::new`) and the statement-cluster bootstrap are timed apart: the app runs them
//! once per bundle and policy (the bootstrap in a worker), not per weight change.
//!
//! ```text
//! cargo run --release -p atlas-core --example reweight_bench -- BUNDLE.json [BUNDLE.json …] [--vectors N] [--bootstrap R]
//! bench/reweight_bench.sh     # builds the synthetic full-scale bundles (both layouts) and runs this
//! ```
//!
//! Native timing only (`std::time::Instant`); the browser measurement is the app's. The weight vectors
//! come from a fixed SplitMix64 sequence (seed 20260722), so every run times the same vectors.

use std::time::{Duration, Instant};

use atlas_core::reweight::{ConditionWeights, ReweightBasis, ReweightBootstrap, DEFAULT_SEED};
use atlas_core::stats::{reference_scores, unit_counts};
use atlas_core::{Audit, RepeatPolicy};

const FRAME: Duration = Duration::from_micros(16_667);

/// SplitMix64 (Steele, Lea & Flood 2014): the random weight vectors.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` from the top 53 bits.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn percentile(sorted: &[Duration], q: f64) -> Duration {
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut paths = Vec::new();
    let mut vectors = 1_000usize;
    let mut bootstrap_reps = 200usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--vectors" => vectors = args.next().ok_or("--vectors N")?.parse()?,
            "--bootstrap" => bootstrap_reps = args.next().ok_or("--bootstrap R")?.parse()?,
            _ => paths.push(arg),
        }
    }
    if paths.is_empty() || vectors == 0 {
        return Err(
            "usage: reweight_bench BUNDLE.json [BUNDLE.json …] [--vectors N] [--bootstrap R]"
                .into(),
        );
    }
    for path in &paths {
        let bytes = std::fs::read(path)?;
        let t = Instant::now();
        let audit = Audit::from_bytes(&bytes)?;
        let parse = t.elapsed();
        let t = Instant::now();
        let units = unit_counts(&audit, RepeatPolicy::AllResponses);
        let counts = t.elapsed();
        let t = Instant::now();
        let basis = ReweightBasis::new(&audit, &units);
        let build = t.elapsed();
        let selection: Vec<bool> = basis.conditions().iter().map(|c| c.has_selection).collect();
        let bits = |v: &[Option<f64>]| -> Vec<Option<u64>> {
            v.iter().map(|x| x.map(f64::to_bits)).collect()
        };
        let eq4_identical =
            bits(basis.equal_scores()) == bits(&reference_scores(&audit, &units, None));

        // Random weight vectors: each Selection condition 0 with probability 1/5, else uniform in
        // [0, 10); never all zero. Conditions without a Selection readout stay 0.
        let mut rng = SplitMix64(DEFAULT_SEED);
        let weight_vectors: Vec<Vec<f64>> = (0..vectors)
            .map(|_| loop {
                let w: Vec<f64> = selection
                    .iter()
                    .map(|&sel| {
                        let keep = rng.unit() >= 0.2;
                        let v = 10.0 * rng.unit();
                        if sel && keep {
                            v
                        } else {
                            0.0
                        }
                    })
                    .collect();
                if w.iter().any(|&x| x > 0.0) {
                    break w;
                }
            })
            .collect();

        // Warm-up, then one timing per vector.
        let mut checksum = 0.0;
        for w in weight_vectors.iter().take(50) {
            let weights = ConditionWeights::custom(&basis, w.clone())?;
            checksum += basis.reweight(&weights)?.tau_b.unwrap_or(0.0);
        }
        let mut times = Vec::with_capacity(vectors);
        let mut inverted = 0usize;
        for w in &weight_vectors {
            let w = w.clone();
            let t = Instant::now();
            let weights = ConditionWeights::custom(&basis, w)?;
            let result = basis.reweight(&weights)?;
            times.push(t.elapsed());
            inverted += result.inverted_pairs.len();
            checksum += result.tau_b.unwrap_or(0.0);
        }
        times.sort();
        let median = percentile(&times, 0.5);
        let p99 = percentile(&times, 0.99);
        let max = *times.last().unwrap_or(&Duration::ZERO);

        // For scale: the same scores recomputed from the unit counts on every change (no basis).
        let direct_n = vectors.min(20);
        let t = Instant::now();
        for w in weight_vectors.iter().take(direct_n) {
            let scores = reference_scores(&audit, &units, Some(w));
            checksum += scores.iter().flatten().sum::<f64>();
        }
        let direct = t.elapsed() / direct_n as u32;

        let t = Instant::now();
        let boot = ReweightBootstrap::run(&audit, &units, bootstrap_reps, DEFAULT_SEED)?;
        let boot_time = t.elapsed();
        let equal = ConditionWeights::equal(&basis);
        let t = Instant::now();
        let intervals = boot.intervals(&equal, 0.95)?;
        let interval_time = t.elapsed();

        println!("bundle {path}");
        println!(
            "  {} models × {} conditions ({} with a Selection readout), {} statements, {} templates, {} cells",
            basis.models().len(),
            basis.conditions().len(),
            selection.iter().filter(|&&s| s).count(),
            units.statements,
            units.templates,
            audit.cells
        );
        println!(
            "  one-off: parse {:.1} ms, unit counts {:.1} ms, ReweightBasis::new {:.2} ms",
            ms(parse),
            ms(counts),
            ms(build)
        );
        println!(
            "  equal weights reproduce stats::reference_scores (Eq. 4) bit for bit: {eq4_identical}"
        );
        println!(
            "  recompute (validate + scores + ranks + τ-b + inversions) over {vectors} random weight vectors:"
        );
        println!(
            "    median {:.2} µs = {:.2e} of a 16.7 ms frame (frame / median = {:.0}×); p99 {:.2} µs, max {:.2} µs ({:.2e} of a frame)",
            median.as_secs_f64() * 1e6,
            median.as_secs_f64() / FRAME.as_secs_f64(),
            FRAME.as_secs_f64() / median.as_secs_f64(),
            p99.as_secs_f64() * 1e6,
            max.as_secs_f64() * 1e6,
            max.as_secs_f64() / FRAME.as_secs_f64(),
        );
        println!(
            "    inverted pairs against equal weights: {:.2} per vector on average",
            inverted as f64 / vectors as f64
        );
        println!(
            "  without the basis (stats::reference_scores from the unit counts, mean of {direct_n}): {:.3} ms = {:.3} of a frame",
            ms(direct),
            direct.as_secs_f64() / FRAME.as_secs_f64()
        );
        println!(
            "  statement-cluster bootstrap (worker, once): {bootstrap_reps} replicates in {:.0} ms ({:.2} ms each); intervals for new weights {:.2} ms",
            ms(boot_time),
            ms(boot_time) / bootstrap_reps.max(1) as f64,
            ms(interval_time)
        );
        if let Some(Some(first)) = intervals.first() {
            println!(
                "    {}: equal-weight score {:.2}%, 95% interval [{:.2}, {:.2}]%",
                basis.models()[0],
                100.0 * basis.equal_scores()[0].unwrap_or(f64::NAN),
                100.0 * first.lo,
                100.0 * first.hi
            );
        }
        println!("  (checksum {checksum:.6})");
        if !eq4_identical {
            return Err(format!("{path}: equal weights differ from reference_scores").into());
        }
    }
    Ok(())
}
