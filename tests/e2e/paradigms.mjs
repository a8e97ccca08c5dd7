// End-to-end test of the across-paradigm panel (issue 18 item 4: "Does the task format reorder
// models?", seed 000 §5.2, Table 11 with the procedures as conditions) on the release build in
// headless Chromium:
//
//   node tests/e2e/paradigms.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Opens the four-model paradigm fixture (tests/fixtures/paradigm-across/bundle.json, hand-worked in
// crates/atlas-core/tests/across.rs) in the Analyses view at 1280×800 and 390×844 and checks:
//  1. the panel is there, before RQ1, for a task-paradigm bundle; the default bundle has none;
//  2. a run with 2,000 draws: every score, proposition count, δ and its interval, and every pair's
//     reversal flags (strict, beyond 1 pp, beyond 2 pp, interval-supported) equal
//     `atlas paradigms across --json --draws 2000` (ATLAS_BIN or cargo run);
//  3. the scores, counts, δ and the reversal flags equal the pandas/numpy reference
//     (tests/reference/expected_paradigm_across.json, written by tests/reference/paradigm_across_reference.py
//     without the Rust code): 3 of 6 pairs reverse, 2 beyond 1 pp, 1 beyond 2 pp;
//  4. the tables' captions name the bundle, random seed and draws;
//  5. panels (c) and (d) across procedures are drawn after the results: (c) one mark per model and
//     procedure, (d) one coloured cell per reversing pair, each with its table alternative;
//  6. on the phone the page does not scroll sideways; no page errors.
// Screenshots: target/e2e-paradigms/across-desktop.png and across-phone.png.
// Ends with "N passed, M failed".
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, atlasJson } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shots = join(root, 'target/e2e-paradigms');
mkdirSync(shots, { recursive: true });
const BUNDLE = 'tests/fixtures/paradigm-across/bundle.json';
const DRAWS = 2000;
const SEED = 20260716;

const cli = atlasJson(['paradigms', 'across', BUNDLE, '--json', '--draws', String(DRAWS), '--seed', String(SEED)]);
const numpy = JSON.parse(readFileSync(join(root, 'tests/reference/expected_paradigm_across.json'), 'utf8')).bundles.fixture;

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}
const close = (a, b, tol = 1e-9) => a !== null && b !== null && Math.abs(a - b) <= tol;

const server = await serveStatic(dist, [['/fixtures/', join(root, 'tests/fixtures')]]);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();

// Every numeric cell of the three tables, by key.
const readCells = (page) => page.$$eval('#across-result td[data-key], #across-result th[data-key]',
  (cells) => Object.fromEntries(cells.map((c) => [c.dataset.key, c.dataset.value])));
// The pairs table's yes/no columns, by pair row header.
const readFlags = (page) => page.$$eval('#across-pairs tbody tr', (trs) => trs.map((tr) => {
  const cells = [...tr.children].map((c) => c.textContent.trim());
  return { pair: cells[0], flags: cells.slice(-4) };
}));

for (const [label, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]]) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}?bundle=${encodeURIComponent('fixtures/paradigm-across/bundle.json')}&view=analyses`);
  const shown = await page.waitForSelector('#across-run', { timeout: 120000 }).then(() => true, () => false);
  check(`${label}: a task-paradigm bundle gets the "Does the task format reorder models?" panel`, shown, errors.join(' | '));
  if (!shown) { await page.close(); continue; }
  const order = await page.evaluate(() => {
    const a = document.getElementById('across'), r = document.getElementById('rq1');
    return { title: a.querySelector('h3').textContent, before: !!r && !!(a.compareDocumentPosition(r) & Node.DOCUMENT_POSITION_FOLLOWING) };
  });
  check(`${label}: the panel says what it shows, with the paper reference, and comes before RQ1`,
    /Does the task format reorder models\?/.test(order.title) && /Tables 10 and 11/.test(order.title) && order.before, JSON.stringify(order));
  // Opening the bundle moves the focus to the view's heading 30 ms after the view appears (the shell's
  // navigation); type after that, as a person would.
  await page.waitForFunction(() => document.activeElement?.id === 'analyses-title', null, { timeout: 5000 }).catch(() => {});
  await page.fill('#across-draws', '');
  await page.locator('#across-draws').pressSequentially(String(DRAWS), { delay: 30 });
  await page.click('#across-run');
  const done = await page.waitForSelector('#across-result', { timeout: 120000 }).then(() => true, () => false);
  check(`${label}: the comparison runs in the worker`, done, errors.join(' | '));
  if (!done) { await page.close(); continue; }
  const cells = await readCells(page);
  const num = (k) => (cells[k] === undefined || cells[k] === '' ? null : Number(cells[k]));
  const bad = [], badNumpy = [];
  cli.procedures.forEach((p, k) => {
    cli.models.forEach((m, i) => {
      if (num(`score/${m}/${p.procedure}`) !== p.scores[i]) bad.push(`score ${m} ${p.procedure}`);
      if (num(`propositions/${m}/${p.procedure}`) !== p.propositions[i]) bad.push(`count ${m} ${p.procedure}`);
      const np = numpy.procedures[k];
      if (np.procedure !== p.procedure || !close(num(`score/${m}/${p.procedure}`), np.scores[i], 1e-12)) badNumpy.push(`score ${m} ${p.procedure}`);
      if (num(`propositions/${m}/${p.procedure}`) !== np.propositions[i]) badNumpy.push(`count ${m} ${p.procedure}`);
    });
  });
  for (const p of cli.pairs) {
    const pair = `${p.model_a}–${p.model_b}`;
    const np = numpy.pairs.find((q) => q.model_a === p.model_a && q.model_b === p.model_b);
    for (const d of p.deltas) {
      if (num(`delta_pp/${pair}/${d.condition_id}`) !== d.delta_pp) bad.push(`δ ${pair} ${d.condition_id}`);
      if (!np || !close(num(`delta_pp/${pair}/${d.condition_id}`), np.deltas[d.condition_id].delta_pp)) badNumpy.push(`δ ${pair} ${d.condition_id}`);
    }
  }
  check(`${label}: every score, count and δ equals atlas paradigms across --json (${DRAWS} draws)`, bad.length === 0, bad.slice(0, 5).join('; '));
  check(`${label}: every score, count and δ equals the pandas/numpy reference`, badNumpy.length === 0, badNumpy.slice(0, 5).join('; '));
  // Intervals: the cell text shows them to two decimals, as the CLI's report gives them unrounded.
  const texts = await page.$$eval('#across-pairs td[data-key]', (tds) => Object.fromEntries(tds.map((t) => [t.dataset.key, t.textContent.trim()])));
  const fmt = (v) => `${v >= 0 ? '+' : '-'}${Math.abs(v).toFixed(2)}`;
  const badCi = [];
  for (const p of cli.pairs) for (const d of p.deltas) {
    const want = d.ci_pp ? `[${fmt(d.ci_pp[0])}, ${fmt(d.ci_pp[1])}]` : '';
    if (!(texts[`delta_pp/${p.model_a}–${p.model_b}/${d.condition_id}`] || '').endsWith(want)) badCi.push(`${p.model_a}–${p.model_b} ${d.condition_id}: ${texts[`delta_pp/${p.model_a}–${p.model_b}/${d.condition_id}`]} vs ${want}`);
  }
  check(`${label}: every δ's 95 % paired interval is the CLI's`, badCi.length === 0, badCi.slice(0, 3).join('; '));
  const flags = await readFlags(page);
  const yn = (v) => (v ? 'yes' : 'no');
  const badFlags = [], badFlagsNumpy = [];
  cli.pairs.forEach((p, i) => {
    const want = [p.reverses, p.reverses_1pp, p.reverses_2pp, p.ci_supported].map(yn);
    if (JSON.stringify(flags[i]?.flags) !== JSON.stringify(want)) badFlags.push(`${p.model_a}–${p.model_b}: ${flags[i]?.flags} vs ${want}`);
    const np = numpy.pairs.find((q) => q.model_a === p.model_a && q.model_b === p.model_b);
    const wantNp = [np.reverses, np.reverses_1pp, np.reverses_2pp].map(yn);
    if (JSON.stringify(flags[i]?.flags.slice(0, 3)) !== JSON.stringify(wantNp)) badFlagsNumpy.push(`${p.model_a}–${p.model_b}`);
  });
  check(`${label}: every pair's reversal flags equal the CLI's`, badFlags.length === 0 && flags.length === cli.pairs.length, badFlags.join('; '));
  check(`${label}: the reversals equal the numpy reference's (${numpy.reversing} of 6 reverse, ${numpy.reversing_1pp} beyond 1 pp, ${numpy.reversing_2pp} beyond 2 pp)`,
    badFlagsNumpy.length === 0 && numpy.reversing === 3 && numpy.reversing_1pp === 2 && numpy.reversing_2pp === 1, badFlagsNumpy.join('; '));
  const summary = await page.$eval('#across-result', (r) => r.textContent);
  check(`${label}: the summary says how many pairs reverse`, /3 of 6 model pairs reverse/.test(summary));
  const captions = await page.$$eval('#across-result .provenance', (ps) => ps.map((p) => p.textContent));
  check(`${label}: each table's caption names the bundle, random seed and draws`,
    captions.length === 3 && captions.every((c) => c.includes('paradigm-across-fixture') && c.includes(`${DRAWS} draws, random seed ${SEED}`)), captions[0]);
  // Panels (c) and (d) across procedures, right after the results.
  const drawn = await page.waitForSelector('#atlas-d-across-canvas[data-marks]:not([data-marks="0"])', { timeout: 30000 }).then(() => true, () => false);
  const panels = await page.evaluate(() => {
    const at = (s) => document.querySelector(s);
    const follows = (a, b) => !!at(a) && !!at(b) && !!(at(a).compareDocumentPosition(at(b)) & Node.DOCUMENT_POSITION_FOLLOWING);
    return {
      cMarks: Number(at('#atlas-c-across-canvas')?.dataset.marks),
      dMarks: Number(at('#atlas-d-across-canvas')?.dataset.marks),
      cRows: document.querySelectorAll('#atlas-c-across-table tbody tr').length,
      dRows: document.querySelectorAll('#atlas-d-across-table tbody tr').length,
      order: follows('#across-result', '#atlas-c-across') && follows('#atlas-c-across', '#atlas-d-across') && follows('#atlas-d-across', '#rq1'),
    };
  });
  check(`${label}: panels (c) and (d) across procedures come right after the results`, drawn && panels.order, JSON.stringify(panels));
  check(`${label}: panel (c) marks each model's rank under each of the 5 procedures (20 marks)`, panels.cMarks === 20 && panels.cRows > 0, JSON.stringify(panels));
  check(`${label}: panel (d) colours the 3 reversing pairs`, panels.dMarks >= 3 && panels.dRows > 0, JSON.stringify(panels));
  if (label === 'phone') {
    const w = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    check('phone: the page does not scroll sideways', w[0] <= w[1], `${w[0]} > ${w[1]}`);
  }
  await page.$eval('#across', (s) => s.scrollIntoView());
  await page.screenshot({ path: join(shots, `across-${label}.png`) });
  check(`${label}: no page errors`, errors.length === 0, errors.join(' | '));
  await page.close();
}

{
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${base}?view=analyses`);
  await page.waitForSelector('#rq1-run', { timeout: 120000 });
  check('the default bundle (not a task-paradigm bundle) has no across-paradigm panel', (await page.$('#across')) === null);
  await page.close();
}

await browser.close();
server.close();
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
