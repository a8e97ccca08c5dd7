// End-to-end test of the release build in headless Chromium (playwright-core + Debian's chromium).
//
//   node tests/e2e/e2e.mjs            (after `trunk build --release`; scripts/test.sh does both)
//
// Serves dist/ on 127.0.0.1 (a small static server, correct MIME types), opens the app, waits for the
// BER table and checks its numbers against the independent numpy reference
// (tests/reference/expected_decodingtrust.json), switches the repeat policy, loads a malformed bundle
// and checks the error while the table stays, opens a model text behind the content warning and
// compares it with the raw DecodingTrust file, measures the load time against JSON.parse of the same
// bytes, runs RQ1 and RQ2 in the analysis Web Worker and compares them with the native CLI's JSON for the
// same settings (the script runs `atlas analyze-rq1/-rq2` itself), cancels a long run while checking that
// the page stays responsive, and saves screenshots to tests/e2e/out/. Ends with "N passed, M failed".
import { mkdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { serveStatic, launchChromium } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = join(root, 'dist');
const out = join(here, 'out');
const shared = process.env.AUDIT_ATLAS_SHARED || resolve(root, '../shared');
const expected = JSON.parse(readFileSync(join(root, 'tests/reference/expected_decodingtrust.json'), 'utf8'));

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const FRACTION_TOL = 1e-12;

async function tableValues(page) {
  return page.$$eval('#ber-table td[data-condition]', (tds) => tds.map((td) => ({
    model: td.dataset.model, condition: td.dataset.condition, ber: td.dataset.ber,
    valid: Number(td.dataset.valid), abstain: Number(td.dataset.abstain),
    shown: td.querySelector('.ber').textContent,
  })));
}

async function compareTable(page, policy) {
  const cells = await tableValues(page);
  const want = expected.policies[policy];
  check(`${policy}: table has 8 × 3 BER cells`, cells.length === 24, `found ${cells.length}`);
  let mismatches = [];
  for (const c of cells) {
    const e = want[c.model]?.conditions?.[c.condition];
    if (!e) { mismatches.push(`${c.model}/${c.condition}: not in the reference`); continue; }
    if (Math.abs(Number(c.ber) - e.ber) > FRACTION_TOL) mismatches.push(`${c.model}/${c.condition} BER ${c.ber} vs ${e.ber}`);
    if (c.valid !== e.valid || c.abstain !== e.abstain) mismatches.push(`${c.model}/${c.condition} counts ${c.valid}/${c.abstain} vs ${e.valid}/${e.abstain}`);
    // Two decimals of the percentage; a value exactly halfway may round either way, so allow 0.005 pp.
    if (!/^\d+\.\d\d%$/.test(c.shown) || Math.abs(parseFloat(c.shown) - e.ber * 100) > 0.005 + 1e-9) mismatches.push(`${c.model}/${c.condition} shows ${c.shown}, reference ${(e.ber * 100).toFixed(4)}%`);
  }
  check(`${policy}: every BER, valid and Abstain count equals the numpy reference`, mismatches.length === 0, mismatches.slice(0, 5).join('; '));
  const refs = await page.$$eval('#ber-table tbody tr', (rows) => rows.map((r) => ({
    model: r.dataset.model, reference: r.querySelector('td.reference').dataset.reference,
    rank: r.querySelector('td.rank').textContent,
  })));
  mismatches = [];
  for (const r of refs) {
    const e = want[r.model];
    if (Math.abs(Number(r.reference) - e.reference_score) > FRACTION_TOL) mismatches.push(`${r.model} reference ${r.reference} vs ${e.reference_score}`);
    if (Number(r.rank) !== e.rank) mismatches.push(`${r.model} rank ${r.rank} vs ${e.rank}`);
  }
  check(`${policy}: reference scores (Eq. 4) and ranks equal the numpy reference`, refs.length === 8 && mismatches.length === 0, mismatches.join('; '));
}


// The native CLI's JSON for the same bundle and settings (built on demand by cargo).
const BUNDLE = join(root, 'static/bundles/decodingtrust-stereotype/bundle.json');
function cli(args) {
  const text = execFileSync('cargo', ['run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--', ...args],
    { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(text);
}

// First difference between two JSON values (numbers compared exactly), or null.
function jsonDiff(a, b, path = '$') {
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) return `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  if (a === null || typeof a !== 'object') return a === b ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) { const d = jsonDiff(a[k], b[k], `${path}.${k}`); if (d) return d; }
  return null;
}

async function reportJson(page, key) {
  const href = await page.getAttribute(`#${key}-json`, 'href');
  return JSON.parse(decodeURIComponent(href.slice(href.indexOf(',') + 1)));
}

async function cellValue(page, table, key) {
  return page.$eval(`#${table} td[data-key="${key}"]`, (td) => td.dataset.value).catch(() => undefined);
}

async function runAnalysis(page, key, settings, timeout = 120000) {
  for (const [field, value] of Object.entries(settings)) await page.fill(`#${key}-${field}`, String(value));
  await page.click(`#${key}-run`);
  await page.waitForFunction((k) => document.querySelector(`#${k}-result`) || document.querySelector(`#${k}-error`), key, { timeout });
  const error = await page.$(`#${key}-error`);
  return error ? await error.textContent() : null;
}

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
await mkdir(out, { recursive: true });
const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  await page.goto(base);
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });
  check('the default bundle loads and names itself', (await page.textContent('#metadata')).includes('decodingtrust-stereotype-v1'));
  check('the content warning is shown in the metadata', (await page.textContent('#metadata')).includes('Content warning'));
  check('no model text is on the page before the warning is acknowledged', (await page.$$('.case pre.text')).length === 0 && (await page.$('#content-warning')) !== null);
  await compareTable(page, 'all_responses');
  const provenance = await page.textContent('#table-provenance');
  check('the table names bundle, repeat policy and weights', provenance.includes('decodingtrust-stereotype-v1') && provenance.includes('all_responses') && provenance.includes('Eq. 4'), provenance);
  const chart = await page.$eval('#ber-chart', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let blue = 0; for (let i = 0; i < d.length; i += 4) if (d[i] === 0 && d[i + 1] === 114 && d[i + 2] === 178) blue++;
    return { w: c.width, h: c.height, blue };
  });
  check('the chart canvas has bars drawn in the first condition colour', chart.blue > 500, JSON.stringify(chart));
  await page.screenshot({ path: join(out, 'atlas-default.png'), fullPage: true });

  // Load time against JSON.parse of the same bytes in the same page.
  const timing = await page.evaluate(async () => {
    const load = window.__atlasLoad;
    const text = await (await fetch(load.source)).text();
    const runs = [];
    for (let i = 0; i < 5; i++) { const t0 = performance.now(); JSON.parse(text); runs.push(performance.now() - t0); }
    runs.sort((a, b) => a - b);
    return { ...load, json_parse_ms_median: runs[2] };
  });
  timing.atlas_parse_over_json_parse = timing.parse_ms / timing.json_parse_ms_median;
  await writeFile(join(out, 'timing.json'), JSON.stringify(timing, null, 1));
  console.log(`     load: ${timing.bytes} bytes, read ${timing.read_ms.toFixed(1)} ms, parse+validate ${timing.parse_ms.toFixed(1)} ms, JSON.parse ${timing.json_parse_ms_median.toFixed(1)} ms (ratio ${timing.atlas_parse_over_json_parse.toFixed(2)})`);
  check('load timings were recorded', timing.parse_ms > 0 && timing.json_parse_ms_median > 0);

  // Another repeat policy: numbers move and still match the reference.
  await page.check('input[name="repeat-policy"][value="unit_majority"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('unit_majority'));
  await compareTable(page, 'unit_majority');
  await page.check('input[name="repeat-policy"][value="first_repeat"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('first_repeat'));
  await compareTable(page, 'first_repeat');
  await page.check('input[name="repeat-policy"][value="all_responses"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('all_responses'));

  // A malformed bundle: an error naming record and field; the loaded bundle stays.
  const before = await tableValues(page);
  const bad = readFileSync(join(root, 'tests/fixtures/tiny-bundle.json'), 'utf8').replace('"version": 1', '"version": 7');
  await page.setInputFiles('#bundle-file', { name: 'bad-version.json', mimeType: 'application/json', buffer: Buffer.from(bad) });
  await page.waitForSelector('#load-error', { timeout: 10000 });
  let message = await page.textContent('#load-error');
  check('a bundle of another version shows an error naming the version', message.includes('unsupported format version 7') && message.includes('bad-version.json'), message);
  const truncated = readFileSync(join(root, 'static/bundles/decodingtrust-stereotype/bundle.json'), 'utf8').slice(0, 5000);
  await page.setInputFiles('#bundle-file', { name: 'truncated.json', mimeType: 'application/json', buffer: Buffer.from(truncated) });
  await page.waitForFunction(() => document.querySelector('#load-error')?.textContent.includes('truncated.json'));
  message = await page.textContent('#load-error');
  check('a truncated bundle shows an error naming line and column', /truncated: it ends early at line 1, column \d+/.test(message), message);
  check('the loaded bundle stays after a failed load', message.includes('decodingtrust-stereotype-v1') && JSON.stringify(await tableValues(page)) === JSON.stringify(before));
  await page.screenshot({ path: join(out, 'atlas-error.png'), fullPage: true });

  // Drag and drop: a bundle dropped on the drop zone replaces the loaded one.
  const tiny = readFileSync(join(root, 'tests/fixtures/tiny-bundle.json'), 'utf8');
  await page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'tiny-bundle.json', { type: 'application/json' }));
    const zone = document.querySelector('.dropzone');
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, tiny);
  await page.waitForFunction(() => document.querySelector('#metadata')?.textContent.includes('tiny-example-v1'), null, { timeout: 10000 });
  const dropped = await tableValues(page);
  check('a dropped bundle replaces the loaded one and its table is shown', dropped.length > 0 && (await page.$('#load-error')) === null && (await page.textContent('#metadata')).includes('file: tiny-bundle.json'));
  await page.goto(base);
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });

  // Model text behind the content warning, compared with the raw DecodingTrust file.
  await page.click('#show-texts');
  await page.waitForFunction(() => {
    const pre = document.querySelector('.case pre.text');
    return pre && pre.textContent !== 'Loading text…';
  }, null, { timeout: 20000 });
  const shown = await page.textContent('.case pre.text');
  const derived = readFileSync(join(shared, 'data/raw/decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl'), 'utf8');
  let rawText = null;
  for (const line of derived.split('\n')) {
    if (!line.includes('gpt-3.5-turbo-0301"') || !line.includes('"benign"')) continue;
    const row = JSON.parse(line);
    if (row.model === 'openai/gpt-3.5-turbo-0301' && row.sys_prompt_type === 'benign' && row.stereotype_topic === 'hiv' && row.target_group === 'Homosexuals' && row.template_idx === 0) { rawText = row.outputs[0]; break; }
  }
  check('the first shown response is DecodingTrust\'s first sample for that cell, as plain text', rawText !== null && shown === rawText, `shown ${JSON.stringify(shown).slice(0, 80)} raw ${JSON.stringify(rawText).slice(0, 80)}`);
  await page.screenshot({ path: join(out, 'atlas-responses.png'), fullPage: false });

  // RQ2 in the analysis worker, compared with the native CLI for the same settings.
  const rq2Cli = cli(['analyze-rq2', BUNDLE, '--draws', '200', '--budget', '200', '--seed', '20260722', '--format', 'json']);
  let error = await runAnalysis(page, 'rq2', { seed: 20260722, draws: 200, budget: 200, bootstrap: 2000 });
  check('RQ2 (200 draws, budget 200, seed 20260722) runs in the worker', error === null, error);
  let mismatches = [];
  for (const d of rq2Cli.designs) {
    const shown = await cellValue(page, 'rq2-table13', `${d.design}/mae_pp`);
    if (Number(shown) !== d.mae_pp.mean) mismatches.push(`${d.design} MAE ${shown} vs CLI ${d.mae_pp.mean}`);
    const inv = await cellValue(page, 'rq2-table13', `${d.design}/inversion_rate`);
    if (Number(inv) !== d.inversion_rate.mean) mismatches.push(`${d.design} inversions ${inv} vs CLI ${d.inversion_rate.mean}`);
    for (const m of d.per_model) {
      const v = await cellValue(page, 'rq2-table15', `${d.design}/mae_pp/${m.model}`);
      if (Number(v) !== m.mae_pp) mismatches.push(`${d.design}/${m.model} MAE ${v} vs CLI ${m.mae_pp}`);
    }
  }
  for (const d of rq2Cli.coverage) {
    const v = await cellValue(page, 'rq2-table14', `${d.conditions}/mae_pp`);
    if (Number(v) !== d.mae_pp.mean) mismatches.push(`coverage K=${d.conditions} MAE ${v} vs CLI ${d.mae_pp.mean}`);
  }
  check('RQ2 Tables 13, 14, 15: every design\'s score MAE and inversion rate and every per-model MAE equal the native CLI exactly', mismatches.length === 0 && rq2Cli.designs.length === 4, mismatches.slice(0, 5).join('; '));
  let diff = jsonDiff(await reportJson(page, 'rq2'), rq2Cli);
  check('the RQ2 report from the worker is the native CLI\'s JSON, value for value', diff === null, diff);
  const captions = await page.$$eval('#rq2-result figcaption .provenance', (cs) => cs.map((c) => c.textContent));
  check('each RQ2 table names bundle, seed, draws, budget, repeat policy and weights', captions.length === 3 && captions.every((c) => ['decodingtrust-stereotype-v1', 'seed 20260722', '200 draws', 'budget 200', 'all_responses', 'equal (Eq. 4)'].every((w) => c.includes(w))), captions[0]);
  await page.locator('#rq2').screenshot({ path: join(out, 'atlas-rq2.png') });

  // RQ1 with small bootstrap sizes, compared with the CLI.
  const rq1Cli = cli(['analyze-rq1', BUNDLE, '--seed', '20260716', '--unit-reps', '200', '--cluster-reps', '200', '--json']);
  error = await runAnalysis(page, 'rq1', { seed: 20260716, 'unit-reps': 200, 'cluster-reps': 200 });
  check('RQ1 (seed 20260716, 200 resamples) runs in the worker', error === null, error);
  const rq1Summary = await page.textContent('#rq1-result .summary');
  const changed = Number((/(\d+) of (\d+) model × condition × statement units/.exec(rq1Summary) || [])[1]);
  const reversals = await page.$$eval('#rq1-table11 tbody tr', (rows) => rows.length);
  check('RQ1: changed-unit count and reversing pairs equal the native CLI', changed === rq1Cli.wording_sensitivity.changed_any && reversals === rq1Cli.reversals.reversals.length,
    `changed ${changed} vs ${rq1Cli.wording_sensitivity.changed_any}, reversals ${reversals} vs ${rq1Cli.reversals.reversals.length}`);
  diff = jsonDiff(await reportJson(page, 'rq1'), rq1Cli);
  check('the RQ1 report from the worker is the native CLI\'s JSON, value for value', diff === null, diff);
  const rq1Caption = await page.textContent('#rq1-table11-provenance');
  check('RQ1 tables name bundle, seed, resamples, repeat policy and weights', ['decodingtrust-stereotype-v1', 'seed 20260716', '200 resamples', '200 draws', 'all_responses', 'equal (Eq. 4)'].every((w) => rq1Caption.includes(w)), rq1Caption);

  // A long run (100,000 draws): the main thread keeps painting and answering clicks; Cancel stops it.
  await page.fill('#rq2-draws', '100000');
  await page.click('#rq2-run');
  await page.waitForFunction(() => Number(document.querySelector('#rq2-progress')?.dataset.done) > 0, null, { timeout: 30000 });
  const frames = await page.evaluate(() => new Promise((ok) => {
    let n = 0; const t0 = performance.now();
    const tick = () => { n++; if (performance.now() - t0 < 1000) requestAnimationFrame(tick); else ok(n); };
    requestAnimationFrame(tick);
  }));
  check('during a run the page keeps painting (requestAnimationFrame ≥ 20 frames in 1 s)', frames >= 20, `${frames} frames`);
  const clicked = Date.now();
  await page.check('input[name="repeat-policy"][value="unit_majority"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('unit_majority'), null, { timeout: 5000 });
  const clickMs = Date.now() - clicked;
  const progressBefore = Number(await page.getAttribute('#rq2-progress', 'data-done'));
  console.log(`     during a run: ${frames} animation frames in 1 s; a policy click updated the BER table in ${clickMs} ms`);
  check('during a run a repeat-policy click updates the BER table within a second', clickMs < 1000, `${clickMs} ms`);
  await page.waitForFunction((d) => Number(document.querySelector('#rq2-progress')?.dataset.done) > d, progressBefore, { timeout: 30000 });
  const progressShown = await page.textContent('#rq2-progress');
  const totalDraws = (100000 * (rq2Cli.designs.length + rq2Cli.coverage.length)).toLocaleString('en-US');
  check('the progress bar counts draws done of all designs', new RegExp(`Running: [\\d,]+ of ${totalDraws} draws`).test(progressShown), progressShown);
  await page.click('#rq2-cancel');
  await page.waitForSelector('#rq2-status', { timeout: 2000 });
  await page.waitForTimeout(1000);
  const afterCancel = await page.evaluate(() => ({
    status: document.querySelector('#rq2-status')?.textContent, progress: !!document.querySelector('#rq2-progress'),
    result: !!document.querySelector('#rq2-result'), running: document.querySelector('#rq2-run').disabled,
  }));
  check('Cancel stops the run: no progress, no result, Run enabled again', afterCancel.status.includes('Cancelled') && !afterCancel.progress && !afterCancel.result && !afterCancel.running, JSON.stringify(afterCancel));
  await page.check('input[name="repeat-policy"][value="all_responses"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('all_responses'), null, { timeout: 5000 });
  await compareTable(page, 'all_responses');
  error = await runAnalysis(page, 'rq2', { draws: 200 });
  diff = error ?? jsonDiff(await reportJson(page, 'rq2'), rq2Cli);
  check('after a cancel a fresh worker runs again and gives the same report', diff === null, diff);

  // A narrow phone screen still shows the table (scrollable) without page errors.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const phonePage = await phone.newPage();
  phonePage.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  phonePage.on('pageerror', (e) => consoleErrors.push(String(e)));
  await phonePage.goto(base);
  await phonePage.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });
  await phonePage.screenshot({ path: join(out, 'atlas-phone.png') });
  error = await runAnalysis(phonePage, 'rq2', { draws: 200 });
  check('RQ2 runs on a phone-sized page', error === null, error);
  await phonePage.locator('#rq2').screenshot({ path: join(out, 'atlas-rq2-phone.png') });
  const overflow = await phonePage.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check('at 390 px wide the page does not scroll sideways (the tables scroll in their boxes)', overflow <= 1, `overflow ${overflow}px`);

  check('no console errors or page errors', consoleErrors.length === 0, consoleErrors.join(' | '));
} finally {
  await browser.close();
  server.close();
}
console.log(`screenshots and timing.json in ${out}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
