// End-to-end test of the likelihood section (issue 18 item 3) on the release build in headless Chromium:
//
//   node tests/e2e/likelihood.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Opens the task-paradigm demo bundle (tests/fixtures/paradigm-demo/bundle.json, with likelihood
// readouts for its StereoSet- and CrowS-style cells) in the Scores view at 1280×800 and 390×844 and checks:
//  1. the section is there, after the Selection results, and says it is kept apart from them;
//  2. every row (model over all conditions, model × condition): readouts, valid, preferred, ties,
//     missing, the share, SS, LMS and ICAT equal `atlas likelihood --json` (ATLAS_BIN or cargo run), for the mean
//     per-token score and, after switching the select, for the summed score;
//  3. the CrowS-style share equals the numpy reference's CrowS preference, the StereoSet-style share
//     its p_s and the StereoSet-style SS, LMS, ICAT its ss, lms, icat (tests/reference/expected_paradigm.json, written by tests/reference/paradigm_reference.py
//     from the scoring log without the Rust code);
//  4. the 50 % unbiased point is stated; on the phone the page does not scroll sideways;
//  5. the default bundle (no likelihood readouts) has no such section;
//  6. Table 22 in the case inspector (case 0): one row per procedure, and the StereoSet- and CrowS-style
//     rows' two mean log-probabilities per token equal the numpy reference's for that proposition.
// Screenshots: target/e2e-likelihood/likelihood-desktop.png and likelihood-phone.png.
// Ends with "N passed, M failed".
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, atlasJson } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shots = join(root, 'target/e2e-likelihood');
mkdirSync(shots, { recursive: true });
const BUNDLE = 'tests/fixtures/paradigm-demo/bundle.json';

const atlas = (args) => atlasJson(args);
const cli = { mean: atlas(['likelihood', BUNDLE, '--basis', 'mean', '--json']), sum: atlas(['likelihood', BUNDLE, '--basis', 'sum', '--json']) };
// Condition labels as the page shows them (a level's label, else its id), from the bundle itself.
const bundleJson = JSON.parse(readFileSync(join(root, BUNDLE), 'utf8'));
const conditionLabel = Object.fromEntries((bundleJson.facets.find((f) => f.id === 'condition')?.levels || [])
  .map((l) => [l.id, l.label ?? l.id]));
const numpy = JSON.parse(readFileSync(join(root, 'tests/reference/expected_paradigm.json'), 'utf8')).models;

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const server = await serveStatic(dist, [['/fixtures/', join(root, 'tests/fixtures')]]);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();

const readRows = (page) => page.$$eval('#likelihood-preference tbody tr', (trs) => trs.map((tr) => {
  const cells = [...tr.children];
  const byKey = Object.fromEntries(cells.filter((c) => c.dataset.key).map((c) => [c.dataset.key, c.dataset.value]));
  return { condition: cells[1]?.textContent.trim(), ...byKey };
}));

// The CLI's rows in the table's order: per model its overall row, then its conditions.
function expectedRows(j) {
  const rows = [];
  for (const m of j.models) {
    rows.push({ condition: 'all conditions', ...m });
    for (const c of j.by_condition.filter((c) => c.model === m.model)) rows.push({ ...c, condition: conditionLabel[c.condition] ?? c.condition });
  }
  return rows;
}
function compare(name, got, want) {
  const keys = ['readouts', 'valid', 'preferred', 'ties', 'missing'];
  const bad = [];
  if (got.length !== want.length) bad.push(`${got.length} rows vs ${want.length}`);
  want.forEach((w, i) => {
    const g = got[i] || {};
    for (const k of keys) if (Number(g[k]) !== w[k]) bad.push(`row ${i} ${k}: ${g[k]} vs ${w[k]}`);
    const share = g.share === '' || g.share === undefined ? null : Number(g.share);
    if (share !== w.share) bad.push(`row ${i} share: ${g.share} vs ${w.share}`);
    for (const k of ['ss', 'lms', 'icat']) {
      const v = g[k] === '' || g[k] === undefined ? null : Number(g[k]);
      if (v !== (w[k] ?? null)) bad.push(`row ${i} ${k}: ${g[k]} vs ${w[k]}`);
    }
    if (w.condition !== 'all conditions' && g.condition !== w.condition) bad.push(`row ${i} condition: ${g.condition} vs ${w.condition}`);
  });
  check(name, bad.length === 0, bad.slice(0, 4).join('; '));
}

for (const [label, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]]) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}?bundle=${encodeURIComponent('fixtures/paradigm-demo/bundle.json')}&view=scores`);
  const shown = await page.waitForSelector('#likelihood-preference tbody tr', { timeout: 120000 }).then(() => true, () => false);
  check(`${label}: the likelihood section is shown for a bundle with likelihood readouts`, shown, errors.join(' | '));
  if (!shown) { await page.close(); continue; }
  const layout = await page.evaluate(() => {
    const sec = document.getElementById('likelihood');
    const ber = document.getElementById('ber-table');
    return {
      after: !!ber && !!(ber.compareDocumentPosition(sec) & Node.DOCUMENT_POSITION_FOLLOWING),
      text: sec.textContent,
      scroll: document.documentElement.scrollWidth, width: window.innerWidth,
    };
  });
  check(`${label}: the section comes after the Selection results and says it is kept apart from them`,
    layout.after && /kept apart from the Selection results/.test(layout.text) && /never enter/.test(layout.text), JSON.stringify({ after: layout.after }));
  check(`${label}: the unbiased point (50 %) is stated`, /50 % is the unbiased point/.test(layout.text));
  compare(`${label}: mean per token — every row's counts and share equal atlas likelihood --basis mean`, await readRows(page), expectedRows(cli.mean));
  const rows = await readRows(page);
  const share = (cond) => Number(rows.find((r) => r.condition === (conditionLabel[cond] ?? cond))?.share);
  const ref = numpy['smollm2-135m-instruct'];
  check(`${label}: the CrowS-style share equals the numpy CrowS preference (${ref.crows.preference} %)`, Math.abs(100 * share('CrowS') - ref.crows.preference) < 1e-9, `${share('CrowS')}`);
  check(`${label}: the StereoSet-style share equals the numpy p_s (${ref.stereoset.p_s})`, Math.abs(share('StereoSet') - ref.stereoset.p_s) < 1e-9, `${share('StereoSet')}`);
  const st = rows.find((r) => r.condition === (conditionLabel.StereoSet ?? 'StereoSet')) || {};
  check(`${label}: the StereoSet-style SS, LMS, ICAT equal the numpy reference's (${ref.stereoset.ss}, ${ref.stereoset.lms}, ${ref.stereoset.icat})`,
    ['ss', 'lms', 'icat'].every((k) => Math.abs(Number(st[k]) - ref.stereoset[k]) < 1e-9), JSON.stringify(st));
  if (label === 'phone') check('phone: the page does not scroll sideways', layout.scroll <= layout.width, `${layout.scroll} > ${layout.width}`);
  await page.$eval('#likelihood', (s) => s.scrollIntoView());
  await page.screenshot({ path: join(shots, `likelihood-${label}.png`) });
  await page.selectOption('#likelihood-basis', 'sum');
  await page.waitForTimeout(200);
  compare(`${label}: summed — every row's counts and share equal atlas likelihood --basis sum`, await readRows(page), expectedRows(cli.sum));
  check(`${label}: no page errors`, errors.length === 0, errors.join(' | '));
  await page.close();
}

// Table 22 with likelihoods: case 0 of the demo (model, statement, condition, template and repeat at
// their first levels) opened in the case inspector; "one proposition, all procedures" lists the five
// procedures, and the StereoSet- and CrowS-style rows show the two candidates' mean log-probabilities
// per token — as a set equal to the numpy reference's for that proposition and procedure (the
// reference does not record which is stereotyped) — with a verdict that follows from the shown numbers.
{
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}?bundle=${encodeURIComponent('fixtures/paradigm-demo/bundle.json')}#case=0`);
  await page.waitForSelector('#case-view', { timeout: 120000 });
  await page.click('#case-procedures');
  await page.waitForSelector('#procedures tbody tr');
  const rows = await page.$$eval('#procedures tbody tr', (trs) => trs.map((tr) => ({
    condition: tr.querySelector('th')?.textContent.trim(),
    readout: tr.querySelector('td.likelihood-readout')?.textContent.trim(),
  })));
  const conditions = bundleJson.facets.find((f) => f.id === 'condition').levels;
  check('Table 22: one row per procedure, in the bundle\'s order', JSON.stringify(rows.map((r) => r.condition)) === JSON.stringify(conditions.map((l) => l.label ?? l.id)), JSON.stringify(rows.map((r) => r.condition)));
  const statement = bundleJson.facets.find((f) => f.id === 'statement').levels[0].id;
  const refCands = JSON.parse(readFileSync(join(root, 'tests/reference/expected_paradigm.json'), 'utf8')).candidates;
  const fmt = (x) => x.toFixed(2).replace('-', '−');
  for (const proc of ['StereoSet', 'CrowS']) {
    const row = rows.find((r) => r.condition === (conditionLabel[proc] ?? proc));
    const want = refCands.filter((c) => c.procedure === proc && c.proposition === statement).map((c) => fmt(c.mean)).sort();
    const m = /^stereotyped (\S+) · other (\S+) → (.+)$/.exec(row?.readout || '');
    const shown = m ? [m[1], m[2]].sort() : [];
    const num = (t) => Number(t.replace('−', '-'));
    const verdict = m ? (num(m[1]) > num(m[2]) ? 'preferred' : num(m[1]) === num(m[2]) ? 'tie (not preferred)' : 'not preferred') : null;
    check(`Table 22: the ${proc}-style row shows the numpy reference's two mean log-probabilities (${want.join(', ')}) and a consistent verdict`,
      want.length === 2 && JSON.stringify(shown) === JSON.stringify(want) && m[3] === verdict, `${row?.readout}`);
  }
  const clear = rows.find((r) => r.condition === (conditionLabel.CLEAR ?? 'CLEAR'));
  check('Table 22: a procedure without likelihood readouts shows —', clear?.readout === '—', `${clear?.readout}`);
  await page.$eval('#procedures', (e) => e.scrollIntoView());
  await page.screenshot({ path: join(shots, 'table22-likelihood-desktop.png') });
  check('Table 22: no page errors', errors.length === 0, errors.join(' | '));
  await page.close();
}

{
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${base}?view=scores`);
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 120000 });
  check('default bundle: no likelihood section (it has no likelihood readouts)', (await page.$('#likelihood')) === null);
  await page.close();
}

await browser.close();
server.close();
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
