//! `atlas analyze-rq1`: the RQ1 analyses of seed `000_…` (§5.1, §5.2, C.1, C.2, Tables 8, 9, 11) on a
//! bundle, printed as text (laid out like the seed's tables) or JSON.

use atlas_core::rq1::Rq1Report;
use atlas_core::Audit;

fn pct(x: f64) -> String {
    format!("{:.2}", 100.0 * x)
}

fn ci(x: Option<(f64, f64)>) -> String {
    x.map_or("—".into(), |(lo, hi)| format!("[{lo:+.2}, {hi:+.2}]"))
}

/// Text layout of the report.
pub fn print_text(audit: &Audit, r: &Rq1Report) {
    let o = &r.options;
    println!(
        "bundle {}  seed {}  repeat policy {}  (wordings read at repeat 0; control = repeats 0..{} of wording {})",
        r.bundle,
        o.seed,
        o.policy.key(),
        r.wording_sensitivity.k,
        o.control_wording + 1
    );
    let w = &r.wording_sensitivity;
    println!();
    println!("Wording sensitivity (seed §5.1, C.1)");
    println!(
        "  {} of {} model × condition × statement units ({}%) change their Selection at least once across {} wordings",
        w.changed_any,
        w.units,
        pct(w.changed_any_rate),
        w.wordings
    );
    match &w.matched {
        None => println!(
            "  matched comparison: not possible (fewer than {} repeats)",
            w.k
        ),
        Some(m) => {
            println!(
                "  Matched {}-wording subsets vs {} identical calls on {} units (Table 8 layout):",
                w.k, w.k, m.units
            );
            println!("  {:<16} {:>8} {:>8}", "Subset", "Changed", "%");
            for s in &m.subsets {
                let name: Vec<String> = s.wordings.iter().map(|j| format!("W{}", j + 1)).collect();
                println!(
                    "  {:<16} {:>8} {:>8}",
                    name.join("/"),
                    s.changed,
                    pct(s.rate)
                );
            }
            println!(
                "  subset mean {}% (range {}–{}%), identical calls {} = {}%; paired difference {:+.2} pp",
                pct(m.subset_rates.mean),
                pct(m.subset_rates.min),
                pct(m.subset_rates.max),
                m.control_changed,
                pct(m.control_rate),
                m.difference_pp
            );
            println!(
                "  95% intervals: unit bootstrap ({} resamples) {} pp; statement-cluster bootstrap ({} draws) {} pp",
                o.unit_bootstrap_reps,
                ci(m.unit_bootstrap_ci_pp),
                o.cluster_bootstrap_reps,
                ci(m.statement_bootstrap_ci_pp)
            );
            println!(
                "  pairwise disagreement: wordings {}% ({}–{}%), identical calls {}% ({}–{}%)",
                pct(m.wording_pair_rates.mean),
                pct(m.wording_pair_rates.min),
                pct(m.wording_pair_rates.max),
                pct(m.repeat_pair_rates.mean),
                pct(m.repeat_pair_rates.min),
                pct(m.repeat_pair_rates.max)
            );
        }
    }
    let s = &r.rank_stability;
    let ids = audit.model_ids();
    println!();
    println!("Model-level sensitivity across wordings (seed §5.1, Table 9 layout)");
    println!(
        "  {:<32} {:>12} {:>12} {:>10}",
        "Model", "pooled (%)", "range (pp)", "rank range"
    );
    for (m, id) in ids.iter().enumerate() {
        let pooled = s.pooled[m].map_or("—".into(), pct);
        let range = s.score_range_pp[m].map_or("—".into(), |x| format!("{x:.2}"));
        let ranks = s.rank_range[m].map_or("—".into(), |(lo, hi)| format!("{lo}–{hi}"));
        println!("  {id:<32} {pooled:>12} {range:>12} {ranks:>10}");
    }
    println!(
        "  {:<10} {:>8} {:>12} {:>14}",
        "Wording", "τ-b", "inversions", "max displ."
    );
    for j in 0..s.scores.len() {
        let tau = s.tau_b[j].map_or("—".into(), |t| format!("{t:.3}"));
        let inv = s.inversions[j].map_or("—".into(), |i| format!("{}/{}", i.inverted, i.pairs));
        let d = s.max_displacement[j].map_or("—".into(), |d| format!("{d}"));
        println!("  W{:<9} {tau:>8} {inv:>12} {d:>14}", j + 1);
    }
    let v = &r.reversals;
    println!();
    println!(
        "Reversals across conditions (seed §5.2, Table 11 layout): {} of {} model pairs reverse; statement-cluster bootstrap {} draws",
        v.reversals.len(),
        v.pairs,
        v.draws
    );
    for rev in &v.reversals {
        print_reversal(rev);
    }
    if let Some(var) = &r.variance {
        println!();
        println!(
            "Descriptive variance components over {} (seed C.3, Table 12 layout): {} valid rows; complete grid: {} of {} {} units, {} rows",
            var.factors.join(" × "),
            var.rows,
            var.units_complete,
            var.units_seen,
            var.units_by.join(" × "),
            var.rows_complete
        );
        println!(
            "  {:<28} {:>16} {:>20}",
            "Effect", "valid-row η²", "complete-grid η²"
        );
        for c in &var.components {
            let fmt = |x: Option<f64>| x.map_or("—".into(), |v| format!("{v:.4}"));
            println!(
                "  {:<28} {:>16} {:>20}",
                c.effect.join(" × "),
                fmt(c.eta_squared),
                fmt(c.eta_squared_complete)
            );
        }
    }
}

fn print_reversal(rev: &atlas_core::rq1::Reversal) {
    println!(
        "  {}–{}: {} {:+.2} {} | {} {:+.2} {} | ε1 {} ε2 {} CI {}",
        rev.model_a,
        rev.model_b,
        rev.negative.condition_id,
        rev.negative.delta_pp,
        ci(rev.negative.ci_pp),
        rev.positive.condition_id,
        rev.positive.delta_pp,
        ci(rev.positive.ci_pp),
        if rev.survives_1pp { "✓" } else { "·" },
        if rev.survives_2pp { "✓" } else { "·" },
        if rev.ci_supported { "✓" } else { "·" },
    );
}
