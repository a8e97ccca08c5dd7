// Browser leg of `bench/rq2_bench.sh headline` (issue 17 Benchmark): opens the release app in headless
// Chromium on the default bundle (`?view=plan`) and, through the Plan view's benchmark hook
// `window.atlasPlanEstimate(design, budget, draws)` (src/views/plan.rs: one Planner::estimate on the
// page's planner, in the page's wasm), times
//   1. the headline RQ2: concentrated, SRS and stratified at B = 200, 10,000 draws each, 8 models —
//      from the request to the result (performance.now around the three calls), REPEAT times in one page;
//   2. the planner's per-estimate time: 2,000 draws at the slider positions 20, 119, …, 2,000 each design
//      can read (SRS to 2,000, stratified to 3 × 384, concentrated to 384), the median — side by side on
//      the page's main thread (`atlasPlanEstimate`, how the view computed before the pool) and in the
//      view's pool of planner workers (`atlasPlanEstimateWorkers`, min(4, hardwareConcurrency) workers,
//      and 1 worker), interleaved position by position so that load affects both alike.
// With --compare NATIVE.json (`atlas plan-audit --design concentrated,srs,stratified --budget 200
// --draws 10000 --json`) it says whether the browser's three estimates equal the native ones value for
// value. Prints `browser_seconds S` per repetition and `estimate_ms_median M`.
//
//   NODE_PATH=$HOME/.cache/audit-atlas/node/node_modules node bench/plan_browser.mjs [--draws 10000]
//     [--budget 200] [--repeat 3] [--compare NATIVE.json]
import { readFileSync } from 'node:fs';
import { need, serve, launch, root, median } from './common.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const DRAWS = Number(opt('--draws', 10000));
const BUDGET = Number(opt('--budget', 200));
const REPEAT = Number(opt('--repeat', 3));
const compare = opt('--compare', null);
need();

const server = await serve(root);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launch();
let status = 0;
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${base}?view=plan`);
  await page.waitForSelector('#plan-live [data-key="srs/mae_pp"]', { timeout: 300000 });
  const designs = ['concentrated', 'srs', 'stratified'];
  for (let r = 0; r < REPEAT; r++) {
    const out = await page.evaluate(([designs, budget, draws]) => {
      const t0 = performance.now();
      const res = designs.map((d) => window.atlasPlanEstimate(d, budget, draws));
      return { ms: performance.now() - t0, res };
    }, [designs, BUDGET, DRAWS]);
    console.log(`browser_seconds ${(out.ms / 1000).toFixed(3)}`);
    const pooled = await page.evaluate(async ([designs, budget, draws, main]) => {
      const n = Math.min(4, Math.max(1, navigator.hardwareConcurrency || 1));
      await window.atlasPlanEstimateWorkers('srs', 20, 100, n); // pool started, planner built
      const t0 = performance.now();
      const res = [];
      for (const d of designs) res.push(await window.atlasPlanEstimateWorkers(d, budget, draws, n));
      return { ms: performance.now() - t0, n, same: res.every((r, i) => r === main[i]) };
    }, [designs, BUDGET, DRAWS, out.res]).catch((e) => ({ error: String(e) }));
    if (pooled.error) console.log(`browser_pool_error ${pooled.error}`);
    else console.log(`browser_pool_seconds ${(pooled.ms / 1000).toFixed(3)} (${pooled.n} planner workers; estimates ${pooled.same ? 'equal' : 'DIFFER from'} the main thread's)`);
    if (compare && r === 0) {
      const native = JSON.parse(readFileSync(compare, 'utf8'));
      const diffs = designs.filter((d, i) => {
        const want = native.designs.find((x) => x.design === d).estimates[0];
        return JSON.stringify(JSON.parse(out.res[i])) !== JSON.stringify(want);
      });
      console.log(diffs.length === 0 ? 'browser_estimates equal the native plan-audit JSON (3 designs)'
        : `browser_estimates DIFFER from the native plan-audit JSON: ${diffs.join(', ')}`);
      if (diffs.length) status = 1;
    }
  }
  const budgets = Array.from({ length: 21 }, (_, i) => Math.round(20 + (i * (2000 - 20)) / 20));
  const { n, times } = await page.evaluate(async (budgets) => {
    const n = Math.min(4, Math.max(1, navigator.hardwareConcurrency || 1));
    const ms = [];
    const time = async (f) => { const t0 = performance.now(); const r = JSON.parse(await f()); if (r.error) throw new Error(r.error); return performance.now() - t0; };
    // Warm the pools (workers started, bundle parsed, planner built) before timing.
    await window.atlasPlanEstimateWorkers('srs', 20, 2000, n);
    await window.atlasPlanEstimateWorkers('srs', 20, 2000, 1);
    // SRS reads up to 2,000; stratified up to 3 × 384 = 1,152; concentrated up to 384 statements.
    for (const [d, most] of [['srs', 2000], ['stratified', 1152], ['concentrated', 384]]) {
      for (const b of budgets.filter((b) => b <= most)) {
        const main = await time(() => window.atlasPlanEstimate(d, b, 2000));
        const pool = await time(() => window.atlasPlanEstimateWorkers(d, b, 2000, n));
        const one = await time(() => window.atlasPlanEstimateWorkers(d, b, 2000, 1));
        ms.push([d, b, main, pool, one]);
      }
    }
    return { n, times: ms };
  }, budgets);
  for (const [col, label] of [[2, 'main thread (before)'], [3, `pool of ${n} workers (after)`], [4, 'pool of 1 worker']]) {
    const all = times.map((t) => t[col]);
    const srs2000 = times.find((t) => t[0] === 'srs' && t[1] === 2000);
    console.log(`estimate_ms ${label}: median ${median(all).toFixed(1)}, p95 ${[...all].sort((a, b) => a - b)[Math.floor(0.95 * (all.length - 1))].toFixed(1)}, max ${Math.max(...all).toFixed(1)}, SRS at 2,000 ${srs2000[col].toFixed(1)} (2,000 draws, ${all.length} slider positions)`);
  }
  console.log(`estimate_ms_per_position design budget main pool${n} pool1: ${times.map((t) => `${t[0]} ${t[1]} ${t[2].toFixed(1)} ${t[3].toFixed(1)} ${t[4].toFixed(1)}`).join('; ')}`);
  console.log(`hardware_concurrency ${await page.evaluate(() => navigator.hardwareConcurrency)}`);
} finally {
  await browser.close();
  server.close();
}
process.exit(status);
