//! The planner's side of the worker protocol (issue 17 §3, "fast enough to be live"): the Plan view
//! keeps a pool of persistent workers, each holding the bundle's [`Planner`], and splits every
//! estimate of 2,000 draws by draw ranges across them ([`atlas_core::plan::split_draws`]). A worker
//! computes [`Planner::estimate_range`] for its range and sends the part back; the page merges the
//! parts with [`Planner::merge`], which gives the unsplit estimate bit for bit whatever the number of
//! workers (each draw reads its own stream, `DrawStream::for_draw`).
//!
//! Messages: the page posts `{plan: "<PlanJob JSON>", bundle?: Uint8Array}` — the bundle bytes only
//! with a worker's first job; the worker keeps the parsed bundle and one planner per repeat policy.
//! It answers `{reply: "<Reply JSON>", means: Float64Array}` with [`crate::Reply::PlanPart`] and the
//! part's numbers packed by [`pack_part`] (f64 bits travel unchanged in the array; JSON text would
//! not round-trip every f64 with `serde_json`'s default parser), or [`crate::Reply::PlanFailed`].

use std::ops::Range;

use atlas_core::plan::{parse_design, EstimateOptions, EstimatePart, Planner};
use atlas_core::{Audit, RepeatPolicy};
use serde::{Deserialize, Serialize};

/// One range of draws of one estimate, for one worker of the pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanJob {
    /// The page's number for this job; the reply carries it back.
    pub ticket: u64,
    /// The repeat policy whose planner computes it.
    pub policy: RepeatPolicy,
    /// The design, as [`atlas_core::plan::design_name`] writes it (`srs`, `coverage:2`, …).
    pub design: String,
    /// Responses per model asked for.
    pub budget: usize,
    /// Draws of the whole estimate ([`EstimateOptions::draws`]).
    pub draws: usize,
    /// Seed of the whole estimate.
    pub seed: u64,
    /// Level of the ranges (checked here, used by the page's merge).
    pub level: f64,
    /// Bundle model indices summarised, in output order (`None` = all).
    pub models: Option<Vec<usize>>,
    /// Bundle model indices of the pair.
    pub pair: Option<(usize, usize)>,
    /// First draw of this job's range.
    pub start: usize,
    /// One past the last draw of this job's range.
    pub end: usize,
}

impl PlanJob {
    /// The job for `range` of the estimate of `design` at `budget` under `options`.
    pub fn new(
        ticket: u64,
        policy: RepeatPolicy,
        design: &str,
        budget: usize,
        options: &EstimateOptions,
        range: Range<usize>,
    ) -> Self {
        PlanJob {
            ticket,
            policy,
            design: design.to_string(),
            budget,
            draws: options.draws,
            seed: options.seed,
            level: options.level,
            models: options.models.clone(),
            pair: options.pair,
            start: range.start,
            end: range.end,
        }
    }

    /// The estimate's options.
    pub fn estimate_options(&self) -> EstimateOptions {
        EstimateOptions {
            draws: self.draws,
            seed: self.seed,
            level: self.level,
            models: self.models.clone(),
            pair: self.pair,
        }
    }

    /// The job as JSON (what the page posts).
    pub fn to_json(&self) -> String {
        // Plain numbers, strings and a unit enum: serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// What a worker sends back for a [`PlanJob`], beside the packed numbers ([`pack_part`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanPartReply {
    /// The job's ticket.
    pub ticket: u64,
    /// [`EstimatePart::design`].
    pub design: String,
    /// [`EstimatePart::budget`].
    pub budget: usize,
    /// First draw of the part.
    pub start: usize,
    /// One past its last draw.
    pub end: usize,
    /// Models per draw in the packed numbers.
    pub models: usize,
    /// [`EstimatePart::right_draws`].
    pub right_draws: usize,
    /// [`EstimatePart::tied_draws`].
    pub tied_draws: usize,
    /// [`EstimatePart::unscored_draws`].
    pub unscored_draws: usize,
}

/// Packs `part` for the page: per draw, the `m` model scores (NaN = no score), the draw MAE (NaN =
/// none) and the `m` dropped-condition counts, so `(2m + 1)` numbers per draw. Scores and MAEs are
/// finite when present, so NaN is free to mean `None`.
pub fn pack_part(ticket: u64, part: &EstimatePart) -> (PlanPartReply, Vec<f64>) {
    let m = part.scores.first().map_or(0, Vec::len);
    let mut values = Vec::with_capacity(part.draws.len() * (2 * m + 1));
    for ((scores, mae), dropped) in part.scores.iter().zip(&part.draw_mae).zip(&part.dropped) {
        values.extend(scores.iter().map(|s| s.unwrap_or(f64::NAN)));
        values.push(mae.unwrap_or(f64::NAN));
        values.extend(dropped.iter().map(|&d| f64::from(d)));
    }
    let reply = PlanPartReply {
        ticket,
        design: part.design.clone(),
        budget: part.budget,
        start: part.draws.start,
        end: part.draws.end,
        models: m,
        right_draws: part.right_draws,
        tied_draws: part.tied_draws,
        unscored_draws: part.unscored_draws,
    };
    (reply, values)
}

/// The [`EstimatePart`] of a worker's reply and its packed numbers ([`pack_part`]).
///
/// # Errors
/// A message naming the ticket when `values` is not `(end − start) · (2 · models + 1)` long or a
/// dropped count is not a whole number of 32 bits.
pub fn unpack_part(reply: &PlanPartReply, values: &[f64]) -> Result<EstimatePart, String> {
    let n = reply.end.saturating_sub(reply.start);
    let m = reply.models;
    let stride = 2 * m + 1;
    if reply.end < reply.start || values.len() != n * stride {
        return Err(format!(
            "planner job {}: {} numbers for draws {}..{} of {} models (expected {})",
            reply.ticket,
            values.len(),
            reply.start,
            reply.end,
            m,
            n * stride
        ));
    }
    let mut part = EstimatePart {
        design: reply.design.clone(),
        budget: reply.budget,
        draws: reply.start..reply.end,
        scores: Vec::with_capacity(n),
        dropped: Vec::with_capacity(n),
        draw_mae: Vec::with_capacity(n),
        right_draws: reply.right_draws,
        tied_draws: reply.tied_draws,
        unscored_draws: reply.unscored_draws,
    };
    for draw in values.chunks_exact(stride) {
        let (scores, rest) = draw.split_at(m);
        let (mae, dropped) = rest.split_at(1);
        part.scores
            .push(scores.iter().map(|&s| (!s.is_nan()).then_some(s)).collect());
        part.draw_mae
            .push(mae.first().copied().filter(|v| !v.is_nan()));
        let dropped = dropped
            .iter()
            .map(|&d| {
                (d >= 0.0 && d <= f64::from(u32::MAX) && d.fract() == 0.0)
                    .then_some(d as u32)
                    .ok_or_else(|| {
                        format!(
                            "planner job {}: a dropped-condition count of {d}",
                            reply.ticket
                        )
                    })
            })
            .collect::<Result<Vec<u32>, String>>()?;
        part.dropped.push(dropped);
    }
    Ok(part)
}

/// A pool worker's state: the parsed bundle (sent once) and the planner of the last repeat policy.
#[derive(Debug, Default)]
pub struct PlanWorker {
    audit: Option<Audit>,
    planner: Option<(RepeatPolicy, Planner)>,
}

impl PlanWorker {
    /// Computes `job`, parsing `bundle` first when given (a worker's first job) and building the
    /// planner of the job's policy when it is not the one held.
    ///
    /// # Errors
    /// A message for readers: the bundle is invalid or was never sent, the design is unknown, or the
    /// planner refuses the job ([`atlas_core::plan::PlanError`]).
    pub fn part(
        &mut self,
        job: &PlanJob,
        bundle: Option<&[u8]>,
    ) -> Result<(PlanPartReply, Vec<f64>), String> {
        if let Some(bytes) = bundle {
            let audit =
                Audit::from_bytes(bytes).map_err(|e| format!("the bundle is invalid: {e}"))?;
            self.audit = Some(audit);
            self.planner = None;
        }
        let fresh = !matches!(&self.planner, Some((p, _)) if *p == job.policy);
        if fresh {
            let audit = self
                .audit
                .as_ref()
                .ok_or("the planner worker has no bundle (it comes with the first job)")?;
            let planner = Planner::new(audit, job.policy, None)
                .map_err(|e| format!("the planner cannot run on this bundle: {e}"))?;
            self.planner = Some((job.policy, planner));
        }
        let Some((_, planner)) = &self.planner else {
            return Err("the planner worker has no planner".to_string());
        };
        let design = parse_design(&job.design)?;
        let part = planner
            .estimate_range(
                design,
                job.budget,
                &job.estimate_options(),
                job.start..job.end,
            )
            .map_err(|e| e.to_string())?;
        Ok(pack_part(job.ticket, &part))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atlas_core::plan::split_draws;
    use atlas_core::rq2::Design;

    fn bundle() -> Vec<u8> {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../static/bundles/decodingtrust-stereotype/bundle.json");
        std::fs::read(path).expect("the default bundle")
    }

    #[test]
    fn parts_packed_by_workers_and_merged_on_the_page_equal_the_unsplit_estimate_for_1_2_and_4_workers(
    ) {
        // The whole path of the pool except the browser: each "worker" is a PlanWorker that got the
        // bundle bytes with its first job; its reply is packed, unpacked and merged as the page does.
        let bytes = bundle();
        let audit = Audit::from_bytes(&bytes).unwrap();
        let planner = Planner::new(&audit, RepeatPolicy::FirstRepeat, None).unwrap();
        let options = EstimateOptions {
            draws: 203,
            models: Some(vec![4, 0, 2]),
            pair: Some((0, 2)),
            ..EstimateOptions::default()
        };
        for design in [Design::Srs, Design::Stratified, Design::Coverage(2)] {
            let whole = planner.estimate(design, 30, &options).unwrap();
            for workers in [1, 2, 4] {
                let mut pool: Vec<PlanWorker> =
                    (0..workers).map(|_| PlanWorker::default()).collect();
                let name = atlas_core::plan::design_name(design);
                let parts: Vec<EstimatePart> = split_draws(options.draws, workers)
                    .into_iter()
                    .zip(pool.iter_mut())
                    .enumerate()
                    .map(|(i, (range, w))| {
                        let job = PlanJob::new(
                            i as u64,
                            RepeatPolicy::FirstRepeat,
                            &name,
                            30,
                            &options,
                            range,
                        );
                        let job: PlanJob = serde_json::from_str(&job.to_json()).unwrap();
                        let (reply, values) = w.part(&job, Some(&bytes)).unwrap();
                        assert_eq!(reply.ticket, i as u64);
                        let reply: PlanPartReply =
                            serde_json::from_str(&serde_json::to_string(&reply).unwrap()).unwrap();
                        unpack_part(&reply, &values).unwrap()
                    })
                    .collect();
                let merged = planner.merge(design, 30, &options, &parts).unwrap();
                assert_eq!(merged, whole, "{name} over {workers} workers");
                assert_eq!(
                    serde_json::to_string(&merged).unwrap(),
                    serde_json::to_string(&whole).unwrap()
                );
            }
        }
    }

    #[test]
    fn packing_keeps_missing_scores_missing_and_every_bit_of_the_present_ones() {
        let part = EstimatePart {
            design: "srs".into(),
            budget: 7,
            draws: 5..7,
            scores: vec![
                vec![Some(0.1 + 0.2), None],
                vec![Some(-0.0), Some(1.0 / 3.0)],
            ],
            dropped: vec![vec![0, 3], vec![u32::MAX, 1]],
            draw_mae: vec![None, Some(12.345_678_901_234_567)],
            right_draws: 1,
            tied_draws: 0,
            unscored_draws: 1,
        };
        let (reply, values) = pack_part(9, &part);
        assert_eq!(values.len(), 2 * (2 * 2 + 1));
        let back = unpack_part(&reply, &values).unwrap();
        assert_eq!(back, part);
        assert_eq!(
            back.scores[1][0].map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
    }

    #[test]
    fn a_short_or_corrupt_reply_is_an_error_naming_the_ticket() {
        let part = EstimatePart {
            design: "srs".into(),
            budget: 7,
            draws: 0..1,
            scores: vec![vec![Some(0.5)]],
            dropped: vec![vec![0]],
            draw_mae: vec![Some(1.0)],
            right_draws: 0,
            tied_draws: 0,
            unscored_draws: 0,
        };
        let (reply, mut values) = pack_part(4, &part);
        let short = unpack_part(&reply, &values[..2]).unwrap_err();
        assert!(
            short.contains("planner job 4") && short.contains("expected 3"),
            "{short}"
        );
        values[2] = 0.5;
        let bad = unpack_part(&reply, &values).unwrap_err();
        assert!(bad.contains("dropped-condition count of 0.5"), "{bad}");
    }

    #[test]
    fn a_worker_without_the_bundle_or_with_a_bad_design_says_why() {
        let mut w = PlanWorker::default();
        let job = PlanJob::new(
            1,
            RepeatPolicy::AllResponses,
            "srs",
            10,
            &EstimateOptions::default(),
            0..10,
        );
        let err = w.part(&job, None).unwrap_err();
        assert!(err.contains("has no bundle"), "{err}");
        let err = w.part(&job, Some(b"{not json")).unwrap_err();
        assert!(err.starts_with("the bundle is invalid"), "{err}");
        let bad = PlanJob {
            design: "diagonal".into(),
            ..job
        };
        assert!(w.part(&bad, Some(&bundle())).is_err());
    }
}
