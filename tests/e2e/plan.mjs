// End-to-end test of the Plan view (issue 17 §2, §3) on the release build in headless Chromium, against
// the CLI:
//
//   node tests/e2e/plan.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Runs `atlas plan-audit static/bundles/decodingtrust-stereotype/bundle.json --budget B --json` for the
// budgets the test sets (target/release/atlas when ATLAS_BIN names it, else `cargo run --release`) and
// `--target-mae 2 --json` over the default grid, then opens `?view=plan` on the default bundle and checks:
//  1. the live table at the default budget 200: per design (concentrated, SRS, stratified) the score MAE,
//     its 95th percentile, RMSE, τ-b and inversion rate equal the CLI's exactly (data-value, full
//     precision) and as shown (two decimals / three for τ-b / percent with one decimal);
//  2. the slider moved by keyboard (ArrowRight × 5 → 205) updates the table to the CLI's numbers at 205;
//  3. the budget typed key by key (1, 5, 0) shows a message while below 20 and then the CLI's numbers
//     at 150;
//  4. the answer for "score MAE ≤ 2 pp in 95 % of audits" per design equals the CLI's smallest budget;
//  5. the URL holds the settings (pb=150, pmae=2) and a fresh page opened with it restores them;
//  6. the finite-reference note and the provenance line are there;
//  7. the per-estimate time measured in the page (#plan-timing), reported; "use this design" (SRS)
//     opens the Pilot view with the pilot form's sampling = srs and budget = 150, and coverage:2 with
//     sampling = coverage, K = 2 and budget 150;
//  8. the planner pool (issue 17 §3): `window.atlasPlanEstimateWorkers(design, 200, 2000, n)` for 1, 2
//     and 4 real Web Workers gives, for each design, the very estimate of `atlas plan-audit --budget 200`
//     (JSON value for value) and of the page's main thread; the per-estimate times of the pool at the
//     slider positions are printed (a benchmark figure, not a timed check);
//  9. the curve is drawn (a canvas in #plan-curve-chart) and its table alternative holds, per design and
//     budget, the CLI's 95th-percentile MAE to one decimal;
// 10. the pair target: the two models with the closest reference scores picked in the selects, 90 %
//     typed, give per design the smallest budget of `atlas plan-audit --pair A,B --target-pair 90`;
// 11. back / forward restore the Plan settings: budget 150 → Overview → Plan → budget 300, then back
//     twice shows 150 again and forward shows 300;
// 12. at 1280×800 and 390×844: no horizontal page scroll, the slider, budget field and checkboxes'
//     labels are at least 44 px high. Screenshots of both sizes in the light and the dark theme in
//     target/e2e-plan/.
// Ends with "N passed, M failed".
import { mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, atlasJson } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shots = join(root, 'target/e2e-plan');
mkdirSync(shots, { recursive: true });
const BUNDLE = 'static/bundles/decodingtrust-stereotype/bundle.json';

const atlas = (args) => atlasJson(args);
const DESIGNS = ['concentrated', 'srs', 'stratified'];
const at = {};
for (const b of [200, 205, 150]) at[b] = atlas(['plan-audit', BUNDLE, '--budget', String(b), '--json']);
const grid = atlas(['plan-audit', BUNDLE, '--target-mae', '2', '--json']);
// The pair whose reference scores are closest: the hardest order to get right.
let closest = null;
for (let i = 0; i < grid.models.length; i++) {
  for (let j = i + 1; j < grid.models.length; j++) {
    const gap = Math.abs(grid.reference[i] - grid.reference[j]);
    if (closest === null || gap < closest.gap) closest = { a: grid.models[i], b: grid.models[j], gap };
  }
}
const pairGrid = atlas(['plan-audit', BUNDLE, '--target-mae', '2', '--pair', `${closest.a},${closest.b}`, '--target-pair', '90', '--json']);

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();

const readTable = (page) => page.evaluate(() => {
  const out = { title: document.querySelector('#plan-table-title')?.textContent ?? document.querySelector('#plan-live h3, #plan-live h4')?.textContent ?? '' };
  for (const td of document.querySelectorAll('#plan-table [data-key], #plan-live [data-key]')) out[td.dataset.key] = { value: td.dataset.value, text: td.textContent.trim() };
  return out;
});
const FIELDS = [
  ['mae_pp', (e) => e.mae_pp.mean, (v) => v.toFixed(2)],
  ['mae_pp_p95', (e) => e.mae_pp_p95, (v) => v.toFixed(2)],
  ['rmse_pp', (e) => e.rmse_pp.mean, (v) => v.toFixed(2)],
  ['tau_b', (e) => e.tau_b.mean, (v) => v.toFixed(3)],
  ['inversion_rate', (e) => e.inversion_rate.mean, (v) => (100 * v).toFixed(1)],
];
function compareTable(tag, got, report, budget) {
  for (const d of DESIGNS) {
    const est = report.designs.find((x) => x.design === d).estimates[0];
    for (const [key, pick, fmt] of FIELDS) {
      const want = pick(est);
      const cell = got[`${d}/${key}`] || {};
      check(`${tag} budget ${budget}, ${d}: ${key} equals atlas plan-audit --budget ${budget} (${want})`,
        Number(cell.value) === want && cell.text.includes(fmt(want)), JSON.stringify(cell));
    }
  }
}
const waitTitle = (page, budget) => page.waitForFunction((b) => [...document.querySelectorAll('#plan-live figure, #plan-live')].some((n) => n.textContent.includes(`${b} responses per model`)), budget, { timeout: 60000 });

async function run(label, viewport, theme) {
  const context = await browser.newContext({ viewport, serviceWorkers: 'block' });
  await context.addInitScript((t) => localStorage.setItem('audit-atlas-theme', t), theme);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}?view=plan`);
  await page.waitForSelector('#plan-live [data-key="srs/mae_pp"]', { timeout: 120000 });
  const tag = `[${label} ${theme}]`;
  if (label === 'desktop' && theme === 'light') {
    compareTable(tag, await readTable(page), at[200], 200);
    // Keyboard: the slider moves by one per ArrowRight.
    await page.focus('#plan-budget-slider');
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
    await waitTitle(page, 205);
    compareTable(tag, await readTable(page), at[205], 205);
    // Typed key by key.
    await page.click('#plan-budget', { clickCount: 3 });
    await page.keyboard.type('1');
    await page.waitForFunction(() => document.querySelector('#plan-budget')?.getAttribute('aria-invalid') === 'true', null, { timeout: 10000 });
    check(`${tag} a budget below 20 while typing shows a message`, (await page.textContent('#plan-budget-msg')).includes('20'));
    await page.keyboard.type('50');
    await waitTitle(page, 150);
    compareTable(tag, await readTable(page), at[150], 150);
    check(`${tag} the slider follows the typed budget`, (await page.$eval('#plan-budget-slider', (e) => e.value)) === '150');
    // The answer for MAE ≤ 2 pp (the view's default target) equals the CLI's.
    await page.waitForSelector('#plan-answer li[data-target="mae_pp_p95"]', { timeout: 120000 });
    const answer = await page.$$eval('#plan-answer li[data-target="mae_pp_p95"]', (ls) => ls.map((l) => [l.dataset.design, l.dataset.smallest, l.textContent]));
    const cliAnswer = grid.answers.find((a) => a.target === 'mae_pp_p95').per_design;
    for (const a of cliAnswer) {
      const g = answer.find((x) => x[0] === a.design) || [];
      check(`${tag} smallest budget for MAE ≤ 2 pp, ${a.design}: ${a.smallest_budget ?? 'not reached'} as atlas plan-audit --target-mae 2`,
        g[1] === (a.smallest_budget === null ? '' : String(a.smallest_budget)) && (a.smallest_budget === null ? g[2].includes('not reached within') : g[2].includes(`${a.smallest_budget} responses`)), JSON.stringify(g));
    }
    console.log(`     answer: ${answer.map((a) => a[2]).join('; ')}`);
    check(`${tag} the finite-reference note says what the plan predicts`, (await page.textContent('#plan-note')).includes("this bundle's own conditions"));
    const prov = await page.textContent('#plan-provenance');
    check(`${tag} provenance: bundle, seed, draws, policy`, prov.includes(grid.bundle) && prov.includes('20260722') && prov.includes('2000 draws') && prov.includes('all_responses'), prov);
    console.log(`     ${await page.textContent('#plan-timing')}`);
    // The URL keeps the settings; a fresh page restores them.
    await page.waitForFunction(() => location.search.includes('pb=150'), null, { timeout: 5000 }).catch(() => {});
    const url = page.url();
    check(`${tag} the URL holds the budget and the target`, url.includes('pb=150') && url.includes('pmae=2'), url);
    const fresh = await context.newPage();
    await fresh.goto(url);
    await fresh.waitForSelector('#plan-live [data-key="srs/mae_pp"]', { timeout: 120000 });
    const restored = await fresh.evaluate(() => [document.querySelector('#plan-budget').value, document.querySelector('#plan-budget-slider').value, document.querySelector('#plan-target-mae').value]);
    check(`${tag} a fresh page with the URL restores budget 150 and target 2`, JSON.stringify(restored) === '["150","150","2"]', JSON.stringify(restored));
    compareTable(`${tag} (restored)`, await readTable(fresh), at[150], 150);
    await fresh.close();
    // The pool: 1, 2 and 4 real Web Workers give the CLI's estimate and the main thread's.
    for (const d of DESIGNS) {
      const want = JSON.stringify(at[200].designs.find((x) => x.design === d).estimates[0]);
      const main = await page.evaluate((d) => window.atlasPlanEstimate(d, 200, 2000), d);
      check(`${tag} ${d} at 200 on the page's main thread equals atlas plan-audit --budget 200`, JSON.stringify(JSON.parse(main)) === want, main.slice(0, 200));
      for (const n of [1, 2, 4]) {
        const got = await page.evaluate(([d, n]) => window.atlasPlanEstimateWorkers(d, 200, 2000, n), [d, n]);
        check(`${tag} ${d} at 200 in ${n} Web Worker(s) equals atlas plan-audit --budget 200`, JSON.stringify(JSON.parse(got)) === want, got.slice(0, 200));
      }
    }
    const timing = await page.evaluate(async () => {
      const n = Math.min(4, Math.max(1, navigator.hardwareConcurrency || 1));
      const out = [];
      for (const [d, most] of [['srs', 2000], ['stratified', 1152], ['concentrated', 384]]) {
        for (const b of [20, 119, 218, 416, 812, 1109, 2000].filter((b) => b <= most)) {
          await window.atlasPlanEstimateWorkers(d, b, 2000, n); // warm: the pool and its planner
          const t0 = performance.now();
          const r = JSON.parse(await window.atlasPlanEstimateWorkers(d, b, 2000, n));
          if (r.error) throw new Error(r.error);
          out.push([d, b, performance.now() - t0]);
        }
      }
      return { n, out };
    });
    const times = timing.out.map((t) => t[2]).sort((x, y) => x - y);
    console.log(`     pool of ${timing.n} workers, ms per estimate (2,000 draws): ${timing.out.map((t) => `${t[0]} ${t[1]}: ${t[2].toFixed(1)}`).join('; ')}; median ${times[times.length >> 1].toFixed(1)}, max ${times[times.length - 1].toFixed(1)}`);
    // The drawn curve and its table alternative.
    await page.waitForSelector('#plan-curve-chart canvas', { timeout: 120000 });
    check(`${tag} the curve is drawn`, await page.$('#plan-curve-chart canvas') !== null);
    const curveTable = await page.$$eval('#plan-curve-chart table tr', (rows) => rows.map((r) => [...r.children].map((c) => c.textContent.trim())));
    const header = curveTable[0] || [];
    let curveOk = curveTable.length > 1;
    for (const d of grid.designs) {
      const col = header.findIndex((h) => h.startsWith(`${d.design}:`));
      for (const e of d.estimates) {
        const row = curveTable.find((r) => r[0].replace(/[^0-9]/g, '') === String(e.budget));
        const want = e.mae_pp_p95 === null ? '—' : e.mae_pp_p95.toFixed(1);
        if (col < 0 || !row || !row[col].includes(want)) { curveOk = false; console.log(`     curve table ${d.design} ${e.budget}: ${row && row[col]} vs ${want}`); }
      }
    }
    check(`${tag} the curve's table alternative holds the CLI's 95th-percentile MAE per design and budget`, curveOk, JSON.stringify(curveTable.slice(0, 3)));
    // The pair target with the closest pair.
    const ids = grid.models;
    const idx = (m) => String(ids.indexOf(m));
    await page.selectOption('#plan-pair-a', idx(closest.a));
    await page.selectOption('#plan-pair-b', idx(closest.b));
    await page.click('#plan-target-pair', { clickCount: 3 });
    await page.keyboard.type('90');
    console.log(`     closest pair ${closest.a} (#${idx(closest.a)}) / ${closest.b} (#${idx(closest.b)})`);
    await page.waitForFunction(() => document.querySelectorAll('#plan-answer li[data-target="pair_pct"]').length === 3, null, { timeout: 180000 })
      .catch(async () => console.log(`     no pair answer after 180 s: ${JSON.stringify(await page.evaluate(() => ({ answer: document.querySelector('#plan-answer')?.textContent, error: document.querySelector('#plan-report-error')?.textContent, live: document.querySelector('#plan-error')?.textContent, a: document.querySelector('#plan-pair-a')?.value, b: document.querySelector('#plan-pair-b')?.value, pct: document.querySelector('#plan-target-pair')?.value, url: location.search })))}`));
    const pairAnswer = await page.$$eval('#plan-answer li[data-target="pair_pct"]', (ls) => ls.map((l) => [l.dataset.design, l.dataset.smallest, l.textContent]));
    for (const a of pairGrid.answers.find((x) => x.target === 'pair_pct').per_design) {
      const g = pairAnswer.find((x) => x[0] === a.design) || [];
      check(`${tag} pair ${closest.a} / ${closest.b} (reference gap ${(100 * closest.gap).toFixed(2)} pp) right in ≥ 90 %, ${a.design}: ${a.smallest_budget ?? 'not reached'} as atlas plan-audit --target-pair 90`,
        g[1] === (a.smallest_budget === null ? '' : String(a.smallest_budget)), JSON.stringify(g));
    }
    console.log(`     pair answer: ${pairAnswer.map((a) => a[2]).join('; ')}`);
    const pairCell = await page.evaluate(() => document.querySelector('#plan-live [data-key="srs/pair"]')?.dataset.value);
    const pairWant = pairGrid.designs.find((x) => x.design === 'srs').estimates.find((e) => e.requested_budget === 150).pair.probability;
    check(`${tag} the live table's pair probability for SRS at 150 equals the CLI's (${pairWant})`, Number(pairCell) === pairWant, String(pairCell));
    // Back / forward restore the Plan settings.
    await page.click('#plan-pair-a'); // leave the typed field
    await page.selectOption('#plan-pair-a', '');
    await page.click('[data-nav="overview"]');
    await page.waitForFunction(() => new URLSearchParams(location.search).get('view') === 'overview', null, { timeout: 10000 });
    await page.click('[data-nav="plan"]');
    await page.waitForFunction(() => new URLSearchParams(location.search).get('view') === 'plan', null, { timeout: 10000 });
    await page.click('#plan-budget', { clickCount: 3 });
    await page.keyboard.type('300');
    await waitTitle(page, 300);
    await page.waitForFunction(() => location.search.includes('pb=300'), null, { timeout: 5000 }).catch(() => {});
    await page.goBack();
    await page.goBack();
    await page.waitForFunction(() => document.querySelector('#plan-budget')?.value === '150', null, { timeout: 10000 }).catch(() => {});
    await waitTitle(page, 150).catch(() => {});
    const back = await page.evaluate(() => [document.querySelector('#plan-budget').value, document.querySelector('#plan-budget-slider').value, new URLSearchParams(location.search).get('view')]);
    check(`${tag} back twice restores budget 150 in the Plan view`, JSON.stringify(back) === '["150","150","plan"]', JSON.stringify(back));
    compareTable(`${tag} (back)`, await readTable(page), at[150], 150);
    await page.goForward();
    await page.goForward();
    await page.waitForFunction(() => document.querySelector('#plan-budget')?.value === '300', null, { timeout: 10000 }).catch(() => {});
    const fwd = await page.evaluate(() => [document.querySelector('#plan-budget').value, new URLSearchParams(location.search).get('pb')]);
    check(`${tag} forward twice restores budget 300`, JSON.stringify(fwd) === '["300","300"]', JSON.stringify(fwd));
    await page.click('#plan-budget', { clickCount: 3 });
    await page.keyboard.type('150');
    await waitTitle(page, 150);
    // "Use this design": the pilot form gets SRS and the budget, and the Pilot view is shown.
    await page.click('#plan-use-srs');
    await page.waitForFunction(() => [...document.querySelectorAll('[data-shell-view="pilot"]')].every((b) => !b.hidden), null, { timeout: 10000 });
    await page.waitForFunction(() => document.querySelector('#pilot-sampling')?.value === 'srs', null, { timeout: 10000 }).catch(() => {});
    const pilot = await page.evaluate(() => [document.querySelector('#pilot-sampling')?.value, document.querySelector('#pilot-budget')?.value]);
    check(`${tag} "use this design" opens the Pilot view with sampling srs and budget 150`, JSON.stringify(pilot) === '["srs","150"]', JSON.stringify(pilot));
    await page.goBack();
    // Coverage of K conditions goes to the pilot form too: its sampling, K and budget.
    await page.waitForSelector('#plan-design-coverage-2', { timeout: 10000 });
    await page.check('#plan-design-coverage-2');
    await page.waitForSelector('#plan-use-coverage-2', { timeout: 60000 });
    await page.click('#plan-use-coverage-2');
    await page.waitForFunction(() => document.querySelector('#pilot-sampling')?.value === 'coverage', null, { timeout: 10000 }).catch(() => {});
    const cover = await page.evaluate(() => [document.querySelector('#pilot-sampling')?.value, document.querySelector('#pilot-coverage-k')?.value, document.querySelector('#pilot-budget')?.value, document.querySelector('#pilot-coverage-k-field')?.hidden]);
    check(`${tag} "use coverage:2" opens the Pilot view with sampling coverage, K 2 and budget 150`, JSON.stringify(cover) === '["coverage","2","150",false]', JSON.stringify(cover));
    await page.goBack();
  }
  const layout = await page.evaluate(() => {
    const h = (s) => Math.min(...[...document.querySelectorAll(s)].map((e) => e.getBoundingClientRect().height));
    return {
      scroll: document.scrollingElement.scrollWidth, width: window.innerWidth,
      slider: h('#plan-budget-slider'), field: h('#plan-budget'), checks: h('.plan-view label.check'),
    };
  });
  check(`${tag} no horizontal page scroll (${layout.scroll} ≤ ${layout.width})`, layout.scroll <= layout.width, JSON.stringify(layout));
  check(`${tag} slider, budget field and check labels ≥ 44 px high`, layout.slider >= 44 && layout.field >= 44 && layout.checks >= 44, JSON.stringify(layout));
  await page.screenshot({ path: join(shots, `plan-${label}-${theme}.png`), fullPage: false });
  check(`${tag} no page errors`, errors.length === 0, errors.join(' | '));
  await context.close();
}

try {
  for (const theme of ['light', 'dark']) {
    await run('desktop', { width: 1280, height: 800 }, theme);
    await run('phone', { width: 390, height: 844 }, theme);
  }
} finally {
  await browser.close();
  server.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
