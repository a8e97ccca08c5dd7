// Browser half of the re-weighting benchmark (docs/benchmarks.md, section 3): the release app in headless
// Chromium on the SYNTHETIC full-scale bundle (`atlas synth --seed 20260722`, nested layout, 8 models × 21
// conditions × 401 templates × 200 statements), opened with ?bundle=. After the bundle has loaded and the
// bootstrap worker has finished (so nothing else runs), it changes one condition weight 200 times (a fixed
// SplitMix64 sequence: a Selection condition, weight 0 with probability 1/5, else uniform in [0, 10)),
// typing into the condition's number input and firing its `input` event, as a reader does.
//
// The time measured is the app's own: inside wasm, `performance.now()` around `ReweightBasis::reweight` +
// building the table's rows (src/views/explorer.rs), published per recompute on `window.__atlasReweight.samples`.
// `performance.now()` is coarse in a page that is not cross-origin isolated (100 µs in Chromium), so the
// script sets `window.__atlasReweightRepeat` (default 100): each recompute runs that many times inside one
// measurement and the sample is the mean. A second pass of as many changes without repetition reports,
// from JavaScript, the wall time from firing the input event until the page has re-rendered (microtasks
// flushed: re-weighting, bootstrap intervals, the table, and charts (c) and (d) redrawn), for scale.
//
//   NODE_PATH=$HOME/.cache/audit-atlas/node/node_modules node bench/reweight_browser.mjs \
//     [--changes 200] [--repeat 100] [--json out.json]
//
// Prints the median, p99 and maximum recompute time and the ratio median / 16.7 ms (one 60 Hz frame).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { need, serve, launch, cliPath, median } from './common.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const CHANGES = Number(opt('--changes', 200));
const REPEAT = Number(opt('--repeat', 100));
const jsonOut = opt('--json', null);
const FRAME_MS = 1000 / 60;
need();

const dir = mkdtempSync(join(tmpdir(), 'atlas-reweight-'));
let status = 0;
const server = await (async () => {
  console.log(`writing the synthetic bundle (atlas synth --seed 20260722) to ${dir}`);
  execFileSync(cliPath, ['synth', '--seed', '20260722', '--out', join(dir, 'bundle.json')], { stdio: ['ignore', 'ignore', 'inherit'] });
  return serve(dir);
})();
const base = `http://127.0.0.1:${server.address().port}/`;
const url = base + '?bundle=' + encodeURIComponent(base + 'bench-data/bundle.json') + '&view=scores';
const browser = await launch();
try {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 720 } })).newPage();
  const t0 = Date.now();
  await page.goto(url);
  await page.waitForSelector('#reweight-table td.score[data-value]', { timeout: 600000 });
  const firstTable = (Date.now() - t0) / 1000;
  await page.waitForSelector('#reweight-boot-status[data-state="ready"]', { timeout: 600000 });
  const bootSeconds = (Date.now() - t0) / 1000;
  const load = await page.evaluate(() => window.__atlasLoad);
  const pass = ({ changes, repeat, seed }) => page.evaluate(async ({ changes, repeat, seed }) => {
    window.__atlasReweightRepeat = repeat;
    window.__atlasReweight = undefined;
    // SplitMix64 on BigInt: the same sequence in every run.
    let state = BigInt(seed);
    const next = () => {
      state = (state + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
      let z = state;
      z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
      z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
      return Number((z ^ (z >> 31n)) >> 11n) / 2 ** 53;
    };
    const inputs = [...document.querySelectorAll('#reweight .weights:not(.sweep-weights) input[type="number"]')].filter((i) => !i.disabled);
    const wall = [];
    for (let k = 0; k < changes; k++) {
      const input = inputs[Math.floor(next() * inputs.length)];
      let w = next() < 0.2 ? 0 : next() * 10;
      // A change to the weight it already has recomputes nothing (the memo sees equal weights).
      if (Number(input.value) === w) w = w === 0 ? 1 : 0;
      const before = window.__atlasReweight?.count ?? 0;
      const started = performance.now();
      input.value = String(w);
      input.dispatchEvent(new Event('input', { bubbles: true }));
      await new Promise((ok) => setTimeout(ok, 0));
      wall.push(performance.now() - started);
      if ((window.__atlasReweight?.count ?? 0) <= before) return { error: `change ${k} (${input.id} = ${w}) recomputed nothing` };
    }
    const r = window.__atlasReweight;
    return { samples: [...r.samples], repeat: r.repeat, conditions: inputs.length, wall, error: document.querySelector('#reweight-error')?.textContent ?? null };
  }, { changes, repeat, seed });
  // Pass 1: the recompute, measured inside wasm (REPEAT times per sample). Pass 2: as a reader gets it
  // (one recompute per change), the wall time from the input event to the re-rendered page.
  const result = await pass({ changes: CHANGES, repeat: REPEAT, seed: 20260722 });
  if (result.error && !result.samples) throw new Error(result.error);
  const plain = await pass({ changes: CHANGES, repeat: 1, seed: 20260723 });
  if (plain.error && !plain.samples) throw new Error(plain.error);
  const s = [...result.samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))];
  const med = median(s);
  const report = {
    bundle: 'synthetic nested (atlas synth --seed 20260722)', bytes: load.bytes, parse_ms: load.parse_ms,
    first_table_s: firstTable, bootstrap_ready_s: bootSeconds, weight_changes: CHANGES, recomputes: s.length,
    repeat_per_sample: result.repeat, enabled_conditions: result.conditions,
    recompute_ms: { median: med, p99: q(0.99), max: s[s.length - 1] },
    ratio_median_to_frame: med / FRAME_MS,
    input_to_render_ms: { median: median(plain.wall), p99: [...plain.wall].sort((a, b) => a - b)[Math.floor(0.99 * (plain.wall.length - 1))], max: Math.max(...plain.wall) },
  };
  console.log(`bundle: ${report.bundle}, ${load.bytes} bytes, parse ${load.parse_ms.toFixed(0)} ms; re-weighting table after ${firstTable.toFixed(1)} s, bootstrap intervals after ${bootSeconds.toFixed(1)} s`);
  console.log(`${CHANGES} weight changes over ${result.conditions} Selection conditions → ${s.length} recomputes (each the mean of ${result.repeat} inside one performance.now() window)`);
  console.log(`recompute (reweight + table rows) in wasm: median ${(med * 1000).toFixed(2)} µs, p99 ${(q(0.99) * 1000).toFixed(2)} µs, max ${(s[s.length - 1] * 1000).toFixed(2)} µs`);
  console.log(`ratio median / 16.7 ms frame: ${report.ratio_median_to_frame.toExponential(2)}`);
  console.log(`input event → page re-rendered (JavaScript wall time: recompute, intervals, table, charts (c) and (d); ${CHANGES} further changes): median ${report.input_to_render_ms.median.toFixed(2)} ms, p99 ${report.input_to_render_ms.p99.toFixed(2)} ms, max ${report.input_to_render_ms.max.toFixed(2)} ms (ratio of the median to one frame ${(report.input_to_render_ms.median / FRAME_MS).toFixed(2)})`);
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 1));
} catch (e) {
  console.error(`benchmark failed: ${e.message ?? e}`);
  status = 1;
} finally {
  await browser.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
