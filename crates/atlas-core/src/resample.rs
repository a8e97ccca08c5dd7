//! Seeded resampling that gives the same numbers natively and in the browser: a portable random stream
//! ([`DrawStream`]), numpy's default percentile ([`percentile`]), the unit bootstrap
//! ([`bootstrap_mean`]) and the paired cluster bootstrap ([`cluster_bootstrap`],
//! [`cluster_bootstrap_means`]) with percentile intervals ([`percentile_interval`]).
//!
//! Uses in seed `000_…`: §5.1 / C.1 "the paired 4.25-pp difference has a 20,000-resample
//! unit-bootstrap 95% interval"; §5.2 / C.2 "paired statement-cluster bootstrap 95% intervals" (all
//! models resampled on the same statements); §3.5 / D.1 equal-budget audit draws shared across models;
//! D.2 "seed 20260722, 10,000 offline draws … 2,000 bootstrap replications … empirical 2.5–97.5
//! percentiles across draws"; H.1 "seed 20260722, method stream 2".
//!
//! # Portability
//!
//! Every draw is derived from `u32` words of ChaCha8 ([`rand_chacha::ChaCha8Rng`], seeded only through
//! `SeedableRng::seed_from_u64`; no OS entropy, no `getrandom`) with integer arithmetic defined here on
//! `u32`/`u64`. Nothing samples a `usize` range: rand's `usize` sampling takes a different path on 32-
//! and 64-bit targets, so `gen_range(0..n_usize)` can give different numbers on wasm32 and x86_64 for
//! the same seed. Likewise rand's `seq::index::sample` and `SliceRandom::shuffle` are not used: their
//! algorithms depend on `usize` width and may change between rand versions. The algorithms below are
//! documented so that another implementation (e.g. `tests/reference/rank_reference.py`) can reproduce
//! the draws exactly; [`portability_fingerprint`] summarises them for the cross-target test.

use std::collections::BTreeMap;
use std::num::NonZeroU32;

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use thiserror::Error;

/// Why a resampling input was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ResampleError {
    /// Nothing to resample: no values, or no clusters.
    #[error("nothing to resample: the input is empty")]
    Empty,
    /// More items than a `u32` index can address (the stream draws `u32` indices only).
    #[error("{len} items: at most {} can be resampled", u32::MAX)]
    TooManyItems {
        /// Items given.
        len: usize,
    },
    /// A value that is NaN or infinite; `cluster` is the row for clustered input (else `None`) and
    /// `index` the position within the values or the row.
    #[error("value {index}{} is not finite", cluster.map(|c| format!(" of cluster {c}")).unwrap_or_default())]
    NonFinite {
        /// The cluster (row) of the value for clustered input; `None` for a plain list.
        cluster: Option<usize>,
        /// Position of the value within the list or the row.
        index: usize,
    },
    /// A sample of `k` distinct items was asked from only `n`.
    #[error("cannot draw {k} distinct items out of {n}")]
    SampleTooLarge {
        /// Items to draw from.
        n: u32,
        /// Distinct items asked for.
        k: u32,
    },
    /// Clustered input whose rows do not all have the same number of models.
    #[error("cluster {cluster} has {len} values, cluster 0 has {expected}")]
    Ragged {
        /// The cluster (row) whose length differs.
        cluster: usize,
        /// Its number of values.
        len: usize,
        /// The number of values of cluster 0.
        expected: usize,
    },
}

/// Keystream words between the starts of two consecutive draws of the per-draw layout
/// ([`DrawStream::for_draw`]): 2³².
pub const DRAW_WORD_SPACING: u128 = 1 << 32;

/// A portable seeded random stream: ChaCha8 (8 rounds, 64-bit block counter, 64-bit stream id) keyed
/// by `SeedableRng::seed_from_u64(seed)` (rand_core's PCG32 expansion of the `u64` into the 32-byte
/// key), read as consecutive little-endian `u32` keystream words.
///
/// Same seed and stream id ⇒ the same draws on every target (x86_64, wasm32, …) and every run. Every
/// method documents exactly how many words it consumes and how it maps them to a draw.
#[derive(Debug, Clone)]
pub struct DrawStream {
    rng: ChaCha8Rng,
}

impl DrawStream {
    /// The stream for `seed` (ChaCha stream id 0). Seed `000_…` D.2 uses seed 20260722.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// Independent stream `stream` of the same seed (ChaCha's 64-bit stream id / nonce), for method
    /// streams such as seed `000_…` H.1 "seed 20260722, method stream 2". `with_stream(s, 0)` equals
    /// [`DrawStream::new`]`(s)`.
    pub fn with_stream(seed: u64, stream: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(stream);
        Self { rng }
    }

    /// Draw `draw` of a per-draw layout of stream `stream` (issue 17 §3, worker-split invariance):
    /// [`DrawStream::with_stream`]`(seed, stream)` moved to keystream word `draw · 2³²`
    /// ([`DRAW_WORD_SPACING`]). Each draw thus reads its own run of words, found without reading the
    /// draws before it, so draws `a..b` can be computed anywhere (another Web Worker, another thread)
    /// and give the very words the unsplit loop gives. Two draws overlap only if one reads more than
    /// 2³² words (a draw reads about one word per sampled response).
    pub fn for_draw(seed: u64, stream: u64, draw: u64) -> Self {
        let mut s = Self::with_stream(seed, stream);
        s.seek_draw(draw);
        s
    }

    /// Moves this stream to the start of draw `draw` of the per-draw layout ([`DrawStream::for_draw`]):
    /// keystream word `draw · 2³²` of the same seed and stream id. `O(1)` (ChaCha seeks by block).
    pub fn seek_draw(&mut self, draw: u64) {
        self.rng.set_word_pos(u128::from(draw) * DRAW_WORD_SPACING);
    }

    /// The next keystream word: one `u32`, uniform over `0..=u32::MAX`.
    pub fn next_u32(&mut self) -> u32 {
        self.rng.next_u32()
    }

    /// A uniform draw from `0..n`, or `None` (nothing consumed) when `n == 0`. See
    /// [`DrawStream::index_nonzero`] for the algorithm. Takes a `u32`, never a `usize`, so the result
    /// is the same on 32- and 64-bit targets.
    pub fn index(&mut self, n: u32) -> Option<u32> {
        NonZeroU32::new(n).map(|n| self.index_nonzero(n))
    }

    /// A uniform draw from `0..n`, unbiased, by Lemire's multiply-and-reject method (Lemire 2019,
    /// "Fast random integer generation in an interval"): take a word `x`, `m = x · n` as `u64`; if the
    /// low 32 bits of `m` are below `(2³² − n) mod n`, reject and take the next word; the draw is
    /// `m >> 32`. Consumes one word, or more with probability `< n / 2³²`.
    pub fn index_nonzero(&mut self, n: NonZeroU32) -> u32 {
        let n = n.get();
        let mut m = u64::from(self.next_u32()) * u64::from(n);
        if (m as u32) < n {
            // (2^32 - n) mod n, the number of low values that would bias the result.
            let threshold = n.wrapping_neg() % n;
            while (m as u32) < threshold {
                m = u64::from(self.next_u32()) * u64::from(n);
            }
        }
        (m >> 32) as u32
    }

    /// `k` distinct indices from `0..n`, uniformly: the first `k` positions of a Fisher–Yates shuffle
    /// of `0..n` run front to back (for `i` in `0..k`: `j = i + index(n − i)`, swap positions `i` and
    /// `j`, emit position `i`). The result is in draw order, a uniformly random ordered `k`-sample
    /// (sort it if only the set matters). Consumes `k` draws of [`DrawStream::index_nonzero`].
    ///
    /// Memory `O(min(n, k log k))`: the array is stored densely when `n` is small relative to `k` and
    /// as a sparse map of displaced positions otherwise; both give the same draws.
    ///
    /// Used for SRS audits (seed `000_…` §3.5, D.1: "200 distinct template–statement cells uniformly
    /// without replacement from the 72,000-cell observable matrix").
    ///
    /// # Errors
    /// [`ResampleError::SampleTooLarge`] when `k > n` (nothing consumed).
    pub fn sample_without_replacement(
        &mut self,
        n: u32,
        k: u32,
    ) -> Result<Vec<u32>, ResampleError> {
        if k > n {
            return Err(ResampleError::SampleTooLarge { n, k });
        }
        if u64::from(n) <= 8 * u64::from(k) + 64 {
            Ok(self.sample_dense(n, k))
        } else {
            Ok(self.sample_sparse(n, k))
        }
    }

    /// [`DrawStream::sample_without_replacement`] appending to `out` and reusing `scratch` across
    /// calls: the same words consumed and the same indices in the same order (the same Fisher–Yates
    /// draws), without allocating once `scratch` has grown to `n` slots. The slot array is kept as the
    /// identity between calls (the `k` swaps are undone afterwards, `O(k)`), so a call costs `O(k)`, not
    /// `O(n)`. Beyond [`SampleScratch::MAX_DENSE`] slots it falls back to the sparse form.
    ///
    /// # Errors
    /// [`ResampleError::SampleTooLarge`] when `k > n` (nothing consumed, nothing appended).
    pub fn sample_without_replacement_into(
        &mut self,
        n: u32,
        k: u32,
        scratch: &mut SampleScratch,
        out: &mut Vec<u32>,
    ) -> Result<(), ResampleError> {
        if k > n {
            return Err(ResampleError::SampleTooLarge { n, k });
        }
        if n as usize > SampleScratch::MAX_DENSE {
            out.extend(self.sample_sparse(n, k));
            return Ok(());
        }
        let slots = &mut scratch.slots;
        if slots.len() < n as usize {
            let start = slots.len() as u32;
            slots.extend(start..n);
        }
        scratch.swaps.clear();
        out.reserve(k as usize);
        for i in 0..k {
            let j = i + self.draw_below(n - i);
            slots.swap(i as usize, j as usize);
            out.push(slots[i as usize]);
            scratch.swaps.push(j);
        }
        for (i, &j) in scratch.swaps.iter().enumerate().rev() {
            slots.swap(i, j as usize);
        }
        Ok(())
    }

    fn sample_dense(&mut self, n: u32, k: u32) -> Vec<u32> {
        let mut slots: Vec<u32> = (0..n).collect();
        let mut out = Vec::with_capacity(k as usize);
        for i in 0..k {
            let j = i + self.draw_below(n - i);
            slots.swap(i as usize, j as usize);
            out.push(slots[i as usize]);
        }
        out
    }

    fn sample_sparse(&mut self, n: u32, k: u32) -> Vec<u32> {
        // Position p holds `moved[p]` if present, else p itself.
        let mut moved: BTreeMap<u32, u32> = BTreeMap::new();
        let mut out = Vec::with_capacity(k as usize);
        for i in 0..k {
            let j = i + self.draw_below(n - i);
            let at_i = moved.remove(&i).unwrap_or(i);
            let at_j = if j == i {
                at_i
            } else {
                moved.get(&j).copied().unwrap_or(j)
            };
            // Position i is final from now on (never read again); j receives i's item.
            if j != i {
                moved.insert(j, at_i);
            }
            out.push(at_j);
        }
        out
    }

    /// Shuffles `items` in place, uniformly: Fisher–Yates from the back (for `i` from `len − 1` down to
    /// 1: `j = index(i + 1)`, swap `i` and `j`). Consumes `len − 1` draws (none for 0 or 1 items).
    ///
    /// # Errors
    /// [`ResampleError::TooManyItems`] (nothing consumed) beyond `u32::MAX` items.
    pub fn shuffle<T>(&mut self, items: &mut [T]) -> Result<(), ResampleError> {
        let len = u32_len(items.len())?;
        for i in (1..len).rev() {
            let j = self.draw_below(i + 1);
            items.swap(i as usize, j as usize);
        }
        Ok(())
    }

    /// `index_nonzero(n)` for an `n` the caller knows is at least 1 (`n = 0` is treated as 1).
    fn draw_below(&mut self, n: u32) -> u32 {
        self.index_nonzero(NonZeroU32::new(n).unwrap_or(NonZeroU32::MIN))
    }

    /// Fills `out` with `out.len()` draws from `0..n` with replacement (one bootstrap replicate).
    fn fill_with_replacement(&mut self, n: NonZeroU32, out: &mut [u32]) {
        for slot in out {
            *slot = self.index_nonzero(n);
        }
    }
}

/// Reusable memory of [`DrawStream::sample_without_replacement_into`]: a slot array kept as the
/// identity `0, 1, 2, …` between calls, and the swaps of the current call.
#[derive(Debug, Clone, Default)]
pub struct SampleScratch {
    slots: Vec<u32>,
    swaps: Vec<u32>,
}

impl SampleScratch {
    /// Largest `n` drawn with the dense slot array (4 Mi slots, 16 MiB); beyond, the sparse form.
    pub const MAX_DENSE: usize = 1 << 22;
}

fn u32_len(len: usize) -> Result<u32, ResampleError> {
    u32::try_from(len).map_err(|_| ResampleError::TooManyItems { len })
}

/// The `q`-th percentile of `values`, exactly as numpy's default `np.percentile(values, q)`
/// (`method="linear"`, Hyndman & Fan type 7): sort; `h = (n − 1) · (q / 100)`; `i = ⌊h⌋`, `γ = h − i`;
/// with `a = sorted[i]`, `b = sorted[i + 1]` the result is `a + (b − a)·γ` if `γ < 0.5`, else
/// `b − (b − a)·(1 − γ)` (numpy's `_lerp`), and `sorted[n − 1]` when `h ≥ n − 1`.
///
/// Units: those of `values`; `q` in percent, `[0, 100]`. `None` when `values` is empty, `q` is outside
/// `[0, 100]` or NaN, or a value is not finite (numpy gives NaN for a NaN value). Cost `O(n log n)`
/// (a sorted copy); use [`percentiles`] for several `q` on the same values.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    percentiles(values, &[q]).and_then(|v| v.first().copied())
}

/// [`percentile`] at each of `qs` (percent), sorting `values` once. `None` under the same conditions
/// as [`percentile`], if any `q` is invalid.
pub fn percentiles(values: &[f64], qs: &[f64]) -> Option<Vec<f64>> {
    if values.is_empty()
        || values.iter().any(|v| !v.is_finite())
        || qs.iter().any(|q| !(0.0..=100.0).contains(q))
    {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    qs.iter()
        .map(|&q| percentile_of_sorted(&sorted, q))
        .collect()
}

/// numpy's linear percentile on an already sorted, non-empty, finite slice.
fn percentile_of_sorted(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * (q / 100.0);
    if h >= last as f64 {
        return sorted.get(last).copied();
    }
    let below = h.floor();
    let gamma = h - below;
    let i = below as usize;
    let (a, b) = (*sorted.get(i)?, *sorted.get(i + 1)?);
    let diff = b - a;
    Some(if gamma >= 0.5 {
        b - diff * (1.0 - gamma)
    } else {
        a + diff * gamma
    })
}

/// The central `level` percentile interval of bootstrap or Monte Carlo `draws`: the percentiles
/// `(100 − 100·level)/2` and `(100 + 100·level)/2` by [`percentile`] — for `level = 0.95` exactly the
/// 2.5th and 97.5th (seed `000_…` §5.1 "95% interval", D.2 "empirical 2.5–97.5 percentiles across
/// draws"). Returns `(lo, hi)` in the units of the draws.
///
/// `None` when `draws` is empty or has a non-finite value, or `level` is outside `[0, 1]`.
pub fn percentile_interval(draws: &[f64], level: f64) -> Option<(f64, f64)> {
    if !(0.0..=1.0).contains(&level) {
        return None;
    }
    let width = 100.0 * level;
    let v = percentiles(draws, &[(100.0 - width) / 2.0, (100.0 + width) / 2.0])?;
    Some((*v.first()?, *v.get(1)?))
}

/// Unit bootstrap of the mean (seed `000_…` §5.1 / C.1 "20,000-resample unit-bootstrap 95% interval"):
/// `reps` replicates; each draws `n = values.len()` units with replacement (`n` calls of
/// `index(n)`, in order) and records the mean of the drawn values, summed in draw order and divided
/// by `n`. Returns the `reps` replicate means, in the units of `values` (e.g. a paired per-unit
/// difference in pp gives a bootstrap distribution of the mean difference in pp); feed them to
/// [`percentile_interval`].
///
/// Consumes exactly the draws of `cluster_bootstrap(n, reps, …)`, so the same seed gives the same
/// resamples whichever of the two is used.
///
/// # Errors
/// [`ResampleError::Empty`] without values, [`ResampleError::NonFinite`] naming the first NaN or
/// infinite value, [`ResampleError::TooManyItems`] beyond `u32::MAX` values; nothing consumed on
/// error.
pub fn bootstrap_mean(
    values: &[f64],
    reps: usize,
    stream: &mut DrawStream,
) -> Result<Vec<f64>, ResampleError> {
    if let Some(index) = values.iter().position(|v| !v.is_finite()) {
        return Err(ResampleError::NonFinite {
            cluster: None,
            index,
        });
    }
    let n = u32_len(values.len())?;
    let len = values.len() as f64;
    cluster_bootstrap(n, reps, stream, |drawn| {
        drawn
            .iter()
            .map(|&i| values.get(i as usize).copied().unwrap_or(0.0))
            .sum::<f64>()
            / len
    })
}

/// Cluster bootstrap with paired models (seed `000_…` §5.2 / C.2 "paired statement-cluster bootstrap
/// 95% intervals"; C.1 "binding all models for each statement"): `reps` replicates; each draws
/// `clusters` cluster indices from `0..clusters` with replacement (`clusters` calls of
/// `index(clusters)`, in order) and passes the drawn indices (with repeats, in draw order) to
/// `statistic`, which computes whatever the replicate needs — e.g. every model's BER as
/// `Σ bias / Σ valid` over the drawn statements, or the difference `δ = BER_a − BER_b`. Because one
/// draw serves all models of a replicate, models stay paired: every model is resampled on the same
/// clusters.
///
/// Returns the `reps` statistics in replicate order.
///
/// # Errors
/// [`ResampleError::Empty`] when `clusters == 0` (nothing consumed).
pub fn cluster_bootstrap<T>(
    clusters: u32,
    reps: usize,
    stream: &mut DrawStream,
    mut statistic: impl FnMut(&[u32]) -> T,
) -> Result<Vec<T>, ResampleError> {
    let n = NonZeroU32::new(clusters).ok_or(ResampleError::Empty)?;
    let mut drawn = vec![0u32; clusters as usize];
    let mut out = Vec::with_capacity(reps);
    for _ in 0..reps {
        stream.fill_with_replacement(n, &mut drawn);
        out.push(statistic(&drawn));
    }
    Ok(out)
}

/// [`cluster_bootstrap`] of per-model means: `per_cluster[c][m]` is model `m`'s value on cluster `c`
/// (cluster × model; every row has the same number of models, all values finite). Replicate `r`
/// gives `out[r][m]` = the mean over the drawn clusters of `per_cluster[c][m]` (summed in draw order),
/// all models on the same drawn clusters.
///
/// Use it when each cluster contributes one value per model with equal weight (e.g. a per-statement
/// rate); for ratio estimators whose clusters carry different numbers of responses (a BER pooled as
/// `Σ bias / Σ valid`), or for missing values, call [`cluster_bootstrap`] with your own statistic.
///
/// # Errors
/// [`ResampleError::Empty`] without clusters, [`ResampleError::Ragged`] naming a row whose length
/// differs from row 0's, [`ResampleError::NonFinite`] naming the first NaN or infinite value,
/// [`ResampleError::TooManyItems`] beyond `u32::MAX` clusters; nothing consumed on error.
pub fn cluster_bootstrap_means<R: AsRef<[f64]>>(
    per_cluster: &[R],
    reps: usize,
    stream: &mut DrawStream,
) -> Result<Vec<Vec<f64>>, ResampleError> {
    let models = per_cluster
        .first()
        .ok_or(ResampleError::Empty)?
        .as_ref()
        .len();
    for (cluster, row) in per_cluster.iter().enumerate() {
        let row = row.as_ref();
        if row.len() != models {
            return Err(ResampleError::Ragged {
                cluster,
                len: row.len(),
                expected: models,
            });
        }
        if let Some(index) = row.iter().position(|v| !v.is_finite()) {
            return Err(ResampleError::NonFinite {
                cluster: Some(cluster),
                index,
            });
        }
    }
    let clusters = u32_len(per_cluster.len())?;
    let len = per_cluster.len() as f64;
    cluster_bootstrap(clusters, reps, stream, |drawn| {
        let mut sums = vec![0.0; models];
        for &c in drawn {
            if let Some(row) = per_cluster.get(c as usize) {
                for (sum, v) in sums.iter_mut().zip(row.as_ref()) {
                    *sum += v;
                }
            }
        }
        sums.into_iter().map(|s| s / len).collect()
    })
}

/// The values fed to the bootstrap part of [`portability_fingerprint`].
pub const FINGERPRINT_VALUES: [f64; 12] = [
    0.125, -3.5, 2.0, 7.25, 0.1, 0.2, 0.3, 1e-3, 42.0, -0.75, 5.5, 3.0,
];

/// A 64-bit summary of the draws of [`DrawStream`] and of the bootstrap functions for `seed`, for a test
/// that the stream gives identical results on every target (natively and in wasm32).
///
/// FNV-1a 64 (offset basis `0xcbf29ce484222325`, prime `0x100000001b3`) over the little-endian bytes
/// of these `u32` values, in order (an `f64` enters as the low then the high half of its bits):
/// 1. 1,000 draws `index(1_000_003)` of `DrawStream::new(seed)`;
/// 2. then, same stream, `sample_without_replacement(1000, 50)` (sparse storage) and
///    `sample_without_replacement(60, 50)` (dense storage);
/// 3. then a `shuffle` of `0..20`;
/// 4. then `bootstrap_mean(FINGERPRINT_VALUES, 200)`: the 200 means and their
///    `percentile_interval(…, 0.95)`;
/// 5. then `cluster_bootstrap_means` of a fixed 5 clusters × 3 models table, 50 replicates;
/// 6. 10 `next_u32` of `DrawStream::with_stream(seed, 2)`.
///
/// # Errors
/// Those of the functions it calls (none occur for these fixed inputs).
pub fn portability_fingerprint(seed: u64) -> Result<u64, ResampleError> {
    let mut hash = Fnv1a::default();
    let mut s = DrawStream::new(seed);
    for _ in 0..1000 {
        hash.u32(s.draw_below(1_000_003));
    }
    for v in s.sample_without_replacement(1000, 50)? {
        hash.u32(v);
    }
    for v in s.sample_without_replacement(60, 50)? {
        hash.u32(v);
    }
    let mut items: Vec<u32> = (0..20).collect();
    s.shuffle(&mut items)?;
    for v in items {
        hash.u32(v);
    }
    let means = bootstrap_mean(&FINGERPRINT_VALUES, 200, &mut s)?;
    for &m in &means {
        hash.f64(m);
    }
    let (lo, hi) = percentile_interval(&means, 0.95).ok_or(ResampleError::Empty)?;
    hash.f64(lo);
    hash.f64(hi);
    let table = [
        [0.1, 0.2, 0.3],
        [0.5, 0.25, 0.125],
        [1.0, 0.0, 0.5],
        [0.75, 0.6, 0.9],
        [0.05, 0.95, 0.33],
    ];
    for row in cluster_bootstrap_means(&table, 50, &mut s)? {
        for m in row {
            hash.f64(m);
        }
    }
    let mut s2 = DrawStream::with_stream(seed, 2);
    for _ in 0..10 {
        hash.u32(s2.next_u32());
    }
    Ok(hash.0)
}

/// FNV-1a, 64-bit.
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn u32(&mut self, v: u32) {
        for byte in v.to_le_bytes() {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn f64(&mut self, v: f64) {
        let bits = v.to_bits();
        self.u32(bits as u32);
        self.u32((bits >> 32) as u32);
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn sample_without_replacement_into_draws_what_sample_without_replacement_draws() {
        let mut scratch = SampleScratch::default();
        let mut a = DrawStream::with_stream(7, 3);
        let mut b = DrawStream::with_stream(7, 3);
        // Dense and sparse regimes of the allocating form, n growing and shrinking between calls.
        for &(n, k) in &[
            (10, 3),
            (3456, 200),
            (3456, 2000),
            (384, 384),
            (5, 0),
            (100_000, 50),
            (1, 1),
            (3456, 20),
            (96, 17),
        ] {
            let expected = a.sample_without_replacement(n, k).unwrap();
            let mut got = vec![u32::MAX];
            b.sample_without_replacement_into(n, k, &mut scratch, &mut got)
                .unwrap();
            assert_eq!(got[0], u32::MAX, "appends");
            assert_eq!(&got[1..], &expected[..], "n = {n}, k = {k}");
        }
        assert_eq!(a.next_u32(), b.next_u32(), "the same words consumed");
        let mut out = Vec::new();
        assert!(b
            .sample_without_replacement_into(3, 4, &mut scratch, &mut out)
            .is_err());
        assert!(out.is_empty());
    }
    use super::*;

    #[test]
    fn dense_and_sparse_storage_give_the_same_sample() {
        for (n, k) in [(1u32, 1u32), (10, 10), (100, 7), (1000, 50), (72_000, 200)] {
            let dense = DrawStream::new(7).sample_dense(n, k);
            let sparse = DrawStream::new(7).sample_sparse(n, k);
            assert_eq!(dense, sparse, "n = {n}, k = {k}");
        }
    }

    #[test]
    fn index_of_one_is_always_zero_and_consumes_one_word() {
        let mut a = DrawStream::new(1);
        let mut b = DrawStream::new(1);
        assert_eq!(a.index(1), Some(0));
        b.next_u32();
        assert_eq!(a.next_u32(), b.next_u32());
    }

    #[test]
    fn index_of_zero_is_none_and_consumes_nothing() {
        let mut a = DrawStream::new(1);
        let mut b = DrawStream::new(1);
        assert_eq!(a.index(0), None);
        assert_eq!(a.next_u32(), b.next_u32());
    }
}
