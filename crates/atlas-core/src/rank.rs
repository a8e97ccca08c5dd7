//! Ranks and ranking-stability metrics of seed `000_…` §3.4 ("ranking stability using Kendall τ_b,
//! maximum displacement, and pairwise ordering reversals"), §5.1 (each wording's τ_b, inversion rate
//! and maximum displacement against the pooled ranking), §5.2 (pairs whose ordering reverses, with 1-pp
//! and 2-pp tie zones) and §5.3 (reference-relative inversions among the 28 unordered model pairs).
//!
//! Conventions shared by every function here:
//!
//! * Scores are rates as **fractions** (a BER or an Eq. 4 score in `[0, 1]`); a lower score is a
//!   better (lower) rank: rank 1 = least bias evidence (§B.4 "Model ranks order lower observed rates
//!   first and use average ranks for ties"). A bundle that declares another score direction is ranked
//!   through its ranking keys ([`crate::direction::Direction::keys`]: `−s`, or `|s − t|` for a target),
//!   which the callers pass here in place of the scores.
//! * A score is `Option<f64>`: `None` (a model without a valid Selection) and non-finite values (NaN,
//!   ±∞) are **missing**. Missing items get no rank and take part in no pair.
//! * Invalid input (slices of different lengths, a negative or NaN tie zone) gives `None`, never a panic.
//!
//! All functions are `O(n²)` in the number of items `n` (pairs are enumerated), which is what the
//! panels of the seed need (8 models = 28 pairs); they allocate at most `O(n)`.

/// Ranks of `scores`, lower score = rank 1, ties get the average of the ranks they span (as
/// `scipy.stats.rankdata(method="average")` on the present scores). Missing scores (`None`, NaN, ±∞)
/// get no rank and do not count: the present scores are ranked `1..=k` among themselves.
///
/// Shape: one output per input, in input order. Cost `O(n log n)`.
pub fn average_ranks(scores: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut present: Vec<(usize, f64)> = scores
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.filter(|v| v.is_finite()).map(|v| (i, v)))
        .collect();
    present.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let mut ranks = vec![None; scores.len()];
    let mut start = 0;
    while start < present.len() {
        let mut end = start + 1;
        while end < present.len() && present[end].1 == present[start].1 {
            end += 1;
        }
        // Ranks start+1 ..= end share their mean.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &(i, _) in &present[start..end] {
            ranks[i] = Some(rank);
        }
        start = end;
    }
    ranks
}

/// Kendall's τ_b between `x` and `y`, exactly as `scipy.stats.kendalltau(x, y, variant="b")`
/// (seed `000_…` §3.4, §5.1, §5.3: τ_b of a wording's or an audit draw's scores against the
/// reference ranking).
///
/// Over the `n(n−1)/2` unordered pairs `(i, j)`: `P` = concordant pairs (same strict order in `x`
/// and `y`), `Q` = discordant pairs (strictly opposite order), `T_x` = pairs tied in `x` only,
/// `T_y` = pairs tied in `y` only (pairs tied in both count in neither term), and
///
/// ```text
/// τ_b = (P − Q) / sqrt((P + Q + T_x) · (P + Q + T_y))
/// ```
///
/// computed as scipy does, `(P − Q) / sqrt(P + Q + T_y) / sqrt(P + Q + T_x)` with integer pair
/// counts, then clipped to `[−1, 1]`. Only the order of the values matters, so `x` and `y` may be
/// scores or ranks; pass ranks or scores of the same items in the same order.
///
/// Returns `None` where scipy returns NaN: fewer than 2 items, `x` or `y` constant (every pair tied),
/// or a NaN anywhere in either vector (scipy's default `nan_policy="propagate"`). Also `None` when the
/// lengths differ (scipy raises). ±∞ are ordinary, ordered values. Drop missing items from both
/// vectors before calling (see [`paired_present`]). Cost `O(n²)`, no allocation.
///
/// # Examples
/// Hand calculation for `x = [1, 2, 2, 3]`, `y = [1, 3, 2, 2]`, pair by pair: (0,1), (0,2), (0,3)
/// concordant; (1,2) tied in `x` only; (1,3) discordant; (2,3) tied in `y` only. So `P = 3`, `Q = 1`,
/// `T_x = T_y = 1` and `τ_b = (3 − 1) / √((3 + 1 + 1) · (3 + 1 + 1)) = 2/5`. scipy agrees:
/// `~/.cache/audit-atlas/venv/bin/python -c "from scipy.stats import kendalltau;
/// print(kendalltau([1,2,2,3],[1,3,2,2]))"` prints `statistic=0.39999999999999997`.
/// ```
/// use atlas_core::rank::kendall_tau_b;
/// use atlas_core::tolerance::EXACT;
///
/// let tau = kendall_tau_b(&[1.0, 2.0, 2.0, 3.0], &[1.0, 3.0, 2.0, 2.0]).unwrap();
/// assert!((tau - 0.4).abs() < EXACT, "{tau}");
/// // A constant vector leaves τ-b undefined (scipy: NaN), as do different lengths.
/// assert_eq!(kendall_tau_b(&[1.0, 2.0], &[5.0, 5.0]), None);
/// assert_eq!(kendall_tau_b(&[1.0, 2.0], &[1.0]), None);
/// ```
pub fn kendall_tau_b(x: &[f64], y: &[f64]) -> Option<f64> {
    if x.len() != y.len() || x.len() < 2 || x.iter().chain(y).any(|v| v.is_nan()) {
        return None;
    }
    // Counts as u64: n(n-1)/2 fits for any slice that fits in memory.
    let (mut concordant, mut discordant, mut tied_x_only, mut tied_y_only) =
        (0u64, 0u64, 0u64, 0u64);
    for i in 0..x.len() {
        for j in (i + 1)..x.len() {
            let dx = x[i].partial_cmp(&x[j])?;
            let dy = y[i].partial_cmp(&y[j])?;
            use std::cmp::Ordering::Equal;
            match (dx, dy) {
                (Equal, Equal) => {}
                (Equal, _) => tied_x_only += 1,
                (_, Equal) => tied_y_only += 1,
                (a, b) if a == b => concordant += 1,
                _ => discordant += 1,
            }
        }
    }
    let untied_in_x = concordant + discordant + tied_y_only; // scipy: tot - xtie
    let untied_in_y = concordant + discordant + tied_x_only; // scipy: tot - ytie
    if untied_in_x == 0 || untied_in_y == 0 {
        return None;
    }
    let tau = (concordant as f64 - discordant as f64)
        / (untied_in_x as f64).sqrt()
        / (untied_in_y as f64).sqrt();
    Some(tau.clamp(-1.0, 1.0))
}

/// The items present in both `a` and `b` (a finite `Some` in each), as two parallel vectors in item
/// order, ready for [`kendall_tau_b`]. `None` when the lengths differ.
pub fn paired_present(a: &[Option<f64>], b: &[Option<f64>]) -> Option<(Vec<f64>, Vec<f64>)> {
    if a.len() != b.len() {
        return None;
    }
    Some(
        a.iter()
            .zip(b)
            .filter_map(|(x, y)| Some((finite(*x)?, finite(*y)?)))
            .unzip(),
    )
}

/// Maximum displacement between two rankings of the same items (seed `000_…` §3.4, §5.1: "a maximum
/// displacement of two ranks"): `max_i |ranks_a[i] − ranks_b[i]|` over the items ranked in both, in
/// rank positions (average ranks may make it a half-integer).
///
/// Compute both rankings over the same items (e.g. [`average_ranks`] of two score vectors with the
/// same missing models) for the number to mean "positions moved". `None` when the lengths differ or no
/// item is ranked in both; missing ranks (`None`, non-finite) are skipped.
pub fn max_displacement(ranks_a: &[Option<f64>], ranks_b: &[Option<f64>]) -> Option<f64> {
    let (a, b) = paired_present(ranks_a, ranks_b)?;
    a.iter()
        .zip(&b)
        .map(|(x, y)| (x - y).abs())
        .reduce(f64::max)
}

/// Pairwise ordering inversions between two score vectors: how many unordered item pairs are ordered
/// strictly oppositely, out of how many pairs were compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Inversions {
    /// Unordered pairs whose order in `a` is strictly opposite to their order in `b`.
    pub inverted: usize,
    /// Unordered pairs compared: `k(k−1)/2` for the `k` items with a score in both vectors (28 for
    /// 8 models). Pairs tied in either vector are counted here but can never be inverted.
    pub pairs: usize,
}

impl Inversions {
    /// Inversion rate `inverted / pairs`, a fraction (seed `000_…` §B.4 "Pairwise ranking instability
    /// is the fraction of unordered model pairs whose order differs"); `None` when no pair was compared
    /// (fewer than 2 items with both scores).
    pub fn rate(&self) -> Option<f64> {
        (self.pairs > 0).then(|| self.inverted as f64 / self.pairs as f64)
    }
}

pub use crate::tolerance::TIE_ZONE_SLACK;

/// Pairwise inversions between two score vectors of the same items (seed `000_…` §3.4 "pairwise
/// ordering reversals", §5.1 "pairwise inversion rates", §5.3 "inversion rates among the 28 unordered
/// model pairs").
///
/// Over every unordered pair `{i, j}` of items with a score in both `scores_a` and `scores_b` (missing
/// = `None` or non-finite; such items take part in no pair): the pair is **inverted** when
/// `a_i < a_j` and `b_i > b_j`, or `a_i > a_j` and `b_i < b_j`. A pair tied in either vector
/// (`a_i == a_j` or `b_i == b_j`, exactly) is compared but is **not** an inversion: a tie is neither
/// order. Use [`pairwise_inversions_with_tie_zone`] to treat near-ties as ties.
///
/// `None` when the lengths differ. Cost `O(n²)`.
pub fn pairwise_inversions(
    scores_a: &[Option<f64>],
    scores_b: &[Option<f64>],
) -> Option<Inversions> {
    count_inversions(scores_a, scores_b, None)
}

/// [`pairwise_inversions`] with a tie zone (seed `000_…` §5.2, C.2: "under a 1-pp tie zone, 8 of the 9
/// pairs still reverse"; "two disappear under a 2-pp tie zone"): within each vector, a pair whose
/// scores differ by at most `zone` (a fraction: `0.01` = 1 pp, `0.02` = 2 pp; plus
/// [`TIE_ZONE_SLACK`] for rounding) counts as tied in that vector and so is never an inversion.
/// A pair is inverted only when both vectors order it strictly, beyond the zone, and oppositely.
///
/// `zone = 0.0` treats differences up to [`TIE_ZONE_SLACK`] as ties (use [`pairwise_inversions`] for
/// exact ties). `None` when the lengths differ or `zone` is negative or NaN.
pub fn pairwise_inversions_with_tie_zone(
    scores_a: &[Option<f64>],
    scores_b: &[Option<f64>],
    zone: f64,
) -> Option<Inversions> {
    if zone.is_nan() || zone < 0.0 {
        return None;
    }
    count_inversions(scores_a, scores_b, Some(zone + TIE_ZONE_SLACK))
}

/// The inverted pairs of [`pairwise_inversions`] themselves: every unordered pair `(i, j)`, `i < j`
/// (item indices of the input vectors), with a score in both vectors and a strictly opposite order in
/// `scores_a` and `scores_b` (exact ties are never inverted). In lexicographic order; its length is
/// `pairwise_inversions(scores_a, scores_b)?.inverted`. Used by the re-weighting panel (seed `000_…`
/// §6 "Alternative weights may change RQ2") to name the model pairs whose order flips.
///
/// `None` when the lengths differ. Cost `O(n²)`.
pub fn inverted_pairs(
    scores_a: &[Option<f64>],
    scores_b: &[Option<f64>],
) -> Option<Vec<(usize, usize)>> {
    if scores_a.len() != scores_b.len() {
        return None;
    }
    let present: Vec<(usize, f64, f64)> = scores_a
        .iter()
        .zip(scores_b)
        .enumerate()
        .filter_map(|(i, (a, b))| Some((i, finite(*a)?, finite(*b)?)))
        .collect();
    let mut out = Vec::new();
    for (k, &(i, ai, bi)) in present.iter().enumerate() {
        for &(j, aj, bj) in &present[k + 1..] {
            if (ai < aj && bi > bj) || (ai > aj && bi < bj) {
                out.push((i, j));
            }
        }
    }
    Some(out)
}

/// Shared body of the two inversion counts; `zone = None` = exact ties only.
fn count_inversions(a: &[Option<f64>], b: &[Option<f64>], zone: Option<f64>) -> Option<Inversions> {
    let (a, b) = paired_present(a, b)?;
    // -1, 0 or +1: the order of (u, v), 0 when tied (exactly, or within the zone).
    let order = |u: f64, v: f64| -> i8 {
        let tied = match zone {
            Some(z) => (u - v).abs() <= z,
            None => u == v,
        };
        if tied {
            0
        } else if u < v {
            -1
        } else {
            1
        }
    };
    let mut inverted = 0;
    let mut pairs = 0;
    for i in 0..a.len() {
        for j in (i + 1)..a.len() {
            pairs += 1;
            if order(a[i], a[j]) * order(b[i], b[j]) < 0 {
                inverted += 1;
            }
        }
    }
    Some(Inversions { inverted, pairs })
}

fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|v| v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_tied_in_one_vector_is_compared_but_not_inverted() {
        let inv = pairwise_inversions(&[Some(0.1), Some(0.1)], &[Some(0.3), Some(0.2)]);
        assert_eq!(
            inv,
            Some(Inversions {
                inverted: 0,
                pairs: 1
            })
        );
    }

    #[test]
    fn kendall_tau_b_is_none_for_vectors_of_different_lengths() {
        assert_eq!(kendall_tau_b(&[1.0, 2.0], &[1.0, 2.0, 3.0]), None);
    }
}
