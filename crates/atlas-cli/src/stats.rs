//! `atlas stats`: Selection BER per model × condition with valid and Abstain counts, the
//! condition-balanced reference score (seed `000_…` Eq. 4) and its rank — the app's summary table, from
//! the same [`atlas_core::summary::summarize`], with the same ranking direction and high-Abstain flags.
//!
//! Ranks follow the bundle's score direction (`atlas_core::direction`; the line under the title says
//! which, and that it is the default when the bundle declares none). A BER cell whose Abstain share is
//! above `--abstain-threshold` (default `atlas_core::abstain::DEFAULT_ABSTAIN_THRESHOLD`, 0.5) is
//! marked `⚠` with its share, and so are the reference score and rank of a model that averages such a
//! cell; the last line counts them (`atlas_core::abstain`).

use anyhow::Result;
use atlas_core::abstain::{share_text, FLAG};
use atlas_core::stats::RepeatPolicy;
use atlas_core::summary::summarize;
use atlas_core::{AbstainThreshold, Audit};

/// Parses `--abstain-threshold`: a fraction in `[0, 1]`.
pub fn parse_threshold(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number; give a fraction in [0, 1] (0.5 = 50 %)"))?;
    AbstainThreshold::new(v)
        .map(AbstainThreshold::value)
        .map_err(|e| e.to_string())
}

/// Prints the table (or its JSON with `as_json`) for `audit` under `policy`.
///
/// # Errors
/// Only a failure to serialise the JSON.
pub fn print(
    audit: &Audit,
    policy: RepeatPolicy,
    as_json: bool,
    threshold: AbstainThreshold,
) -> Result<()> {
    let summary = summarize(audit, policy, threshold);
    let table = &summary.table;
    let scores = &summary.reference;
    let ranks = &summary.ranks;
    let abstain = &summary.abstain;
    let direction = summary.direction;
    let models = audit.model_ids();
    let conditions = audit.condition_ids();
    let cells = summary.flagged_cells();
    let ranks_flagged = summary.flagged_ranks();
    let ranked = summary.ranked();
    if as_json {
        let rows: Vec<_> = models
            .iter()
            .enumerate()
            .map(|(m, id)| {
                let by_condition: serde_json::Map<String, serde_json::Value> = conditions
                    .iter()
                    .enumerate()
                    .map(|(c, cid)| {
                        let k = table.get(m, c);
                        (
                            (*cid).to_string(),
                            serde_json::json!({
                                "ber": k.ber(), "bias": k.bias, "valid": k.valid, "abstain": k.abstain,
                                "abstain_share": k.abstain_share(),
                                "high_abstain": threshold.flags(k.abstain_share()),
                            }),
                        )
                    })
                    .collect();
                serde_json::json!({
                    "model": id,
                    "conditions": by_condition,
                    "reference_score": scores[m],
                    "rank": ranks[m],
                    "reference_abstain": abstain[m],
                    "high_abstain": abstain[m].is_flagged(threshold),
                })
            })
            .collect();
        let out = serde_json::json!({
            "bundle": audit.metadata().id,
            "policy": policy.key(),
            "direction": direction,
            "abstain_threshold": threshold,
            "flagged_cells": cells.0,
            "cells_with_responses": cells.1,
            "flagged_ranks": ranks_flagged,
            "ranked_models": ranked,
            "models": rows,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "bundle {}  repeat policy {}",
        audit.metadata().id,
        policy.key()
    );
    println!(
        "ranking of the reference score: {}; {}",
        direction.describe(),
        direction.direction.rank_one()
    );
    print!("{:<36}", "model");
    for c in &conditions {
        print!(" {:>38}", format!("BER {c} (n, abst)"));
    }
    println!(" {:>12} {:>8}", "reference", "rank");
    for (m, id) in models.iter().enumerate() {
        print!("{id:<36}");
        for c in 0..conditions.len() {
            let k = table.get(m, c);
            let ber = k
                .ber()
                .map_or("—".to_string(), |b| format!("{:.2}%", b * 100.0));
            let flag = match k.abstain_share() {
                Some(s) if threshold.flags(Some(s)) => format!(" {FLAG} {} Abstain", share_text(s)),
                _ => String::new(),
            };
            print!(
                " {:>38}",
                format!("{ber} ({}, {}){flag}", k.valid, k.abstain)
            );
        }
        let mark = if summary.rank_flagged(m) {
            format!(" {FLAG}")
        } else {
            String::new()
        };
        let score = scores[m].map_or("—".to_string(), |s| format!("{:.2}%{mark}", s * 100.0));
        let rank = ranks[m].map_or("—".to_string(), |r| format!("{r}{mark}"));
        println!(" {score:>12} {rank:>8}");
    }
    println!("{}", summary.flag_caption());
    Ok(())
}
