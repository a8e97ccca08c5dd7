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
// the page stays responsive, and saves screenshots to tests/e2e/out/. The re-weighting panel and the
// evidence atlas: weights moved with the keyboard and typed to a vector of the numpy/scipy
// reference (tests/reference/expected_reweight.json), scores, ranks, τ-b, inverted pairs and bootstrap
// intervals against it, validation errors, the re-weighting CSV against `atlas reweight --format csv`, the
// JSON export's bundle hash, the shareable URL opened in a fresh context, chart hover and keyboard reading,
// PNG/SVG/CSV chart exports, and atlas screenshots at 1280×720 and 390 px wide in target/e2e-atlas/.
// Score direction and high-Abstain flags: the direction line of the summary and
// re-weighting tables, the flagged cells and ranks of the default bundle against an independent count
// from the numpy reference's valid/Abstain counts, the flag in the atlas SVG, and the two fixtures
// tests/fixtures/target-50-bundle.json and high-abstain-bundle.json opened as files (ranks by
// |score − 50 %|, flags and the caption's counts as hand-worked in direction-abstain-fixtures.md, the
// re-weighting CSV with its flag columns against `atlas reweight --format csv`).
// Ends with "N passed, M failed".
import { mkdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = join(root, 'dist');
const out = join(here, 'out');
const shared = process.env.AUDIT_ATLAS_SHARED || resolve(root, '../shared');
const expected = JSON.parse(readFileSync(join(root, 'tests/reference/expected_decodingtrust.json'), 'utf8'));
const expectedReweight = JSON.parse(readFileSync(join(root, 'tests/reference/expected_reweight.json'), 'utf8'));
const atlasShots = join(root, 'target/e2e-atlas');

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
    // One decimal of the percentage and a spaced sign (atlas_core::format::display_percent); a value
    // exactly halfway may round either way, so allow 0.05 pp.
    if (!/^\d+\.\d %$/.test(c.shown) || Math.abs(parseFloat(c.shown) - e.ber * 100) > 0.05 + 1e-9) mismatches.push(`${c.model}/${c.condition} shows ${c.shown}, reference ${(e.ber * 100).toFixed(4)}%`);
  }
  check(`${policy}: every BER, valid and Abstain count equals the numpy reference`, mismatches.length === 0, mismatches.slice(0, 5).join('; '));
  const refs = await page.$$eval('#ber-table tbody tr', (rows) => rows.map((r) => ({
    model: r.dataset.model, reference: r.querySelector('td.reference').dataset.reference,
    rank: r.querySelector('td.rank .value').textContent,
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
function cliText(args) {
  return execFileSync('cargo', ['run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--', ...args],
    { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
}
function cli(args) {
  return JSON.parse(cliText(args));
}

// The re-weighting table as shown: per model row, the full-precision values of its cells.
async function reweightRows(page) {
  return page.$$eval('#reweight-table tbody tr', (rows) => rows.map((r) => ({
    model: r.dataset.model,
    score: r.querySelector('td.score').dataset.value, delta: r.querySelector('td.delta').dataset.value,
    rank: r.querySelector('td.rank').dataset.value, equalRank: r.querySelector('td.equal-rank').dataset.value,
    lo: r.querySelector('td.ci').dataset.lo, hi: r.querySelector('td.ci').dataset.hi,
    abstain: r.querySelector('td.abstain').dataset.value, high: r.dataset.highAbstain,
    conditions: [...r.querySelectorAll('td.cond')].map((td) => td.dataset.condition),
  })));
}
async function reweightSummary(page) {
  return page.$eval('#reweight-summary', (s) => ({
    tau: s.dataset.tauB, inverted: Number(s.dataset.inverted), pairs: Number(s.dataset.pairs),
    list: [...s.querySelectorAll('#reweight-pairs li')].map((li) => [li.dataset.a, li.dataset.b]),
  }));
}
async function waitForIntervals(page, reps) {
  await page.waitForSelector(`#reweight-boot-status[data-state="ready"][data-reps="${reps}"]`, { timeout: 60000 });
  await page.waitForFunction(() => [...document.querySelectorAll('#reweight-table td.ci')].every((td) => td.dataset.lo !== ''));
}
// Clicks `selector` and returns the download's file name and bytes.
async function download(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 20000 }), page.click(selector)]);
  return { name: d.suggestedFilename(), bytes: readFileSync(await d.path()) };
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
  await showView(page, 'scores');
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });
  check('the default bundle loads and names itself', (await page.textContent('#metadata')).includes('decodingtrust-stereotype-v1'));
  check('the content warning is shown in the metadata', (await page.textContent('#metadata')).includes('Content warning'));
  check('no model text is on the page before the warning is acknowledged', (await page.$$('.case pre.text')).length === 0 && (await page.$('#content-warning')) !== null);
  await compareTable(page, 'all_responses');
  const provenance = await page.textContent('#table-provenance');
  check('the table names bundle, repeat policy and weights', provenance.includes('decodingtrust-stereotype-v1') && provenance.includes('all_responses') && provenance.includes('Eq. 4'), provenance);
  // Score direction: the default bundle declares "lower"; the table and the metadata say so.
  const directionLine = await page.textContent('#ranking-direction');
  check('the ranking says its direction: lower is better, declared by the default bundle', directionLine === 'Ranking: lower is better (declared by the bundle).' && (await page.textContent('#score-direction')).includes('less agreement is better'), directionLine);
  // High-Abstain flags against an independent count: share = Abstain / (valid + Abstain) of the numpy
  // reference's counts, flagged when above 0.5; a rank is flagged when any of its (reference) cells is.
  const flagged = await page.$$eval('#ber-table td[data-condition]', (tds) => tds.map((td) => ({
    model: td.dataset.model, condition: td.dataset.condition, high: td.dataset.highAbstain === 'true',
    share: Number(td.dataset.abstainShare), flag: td.querySelector('.flag')?.textContent ?? '' })));
  const want = expected.policies.all_responses;
  const wantCells = flagged.filter((c) => { const e = want[c.model].conditions[c.condition]; return e.abstain / (e.valid + e.abstain) > 0.5; });
  const flagMismatches = flagged.filter((c) => {
    const e = want[c.model].conditions[c.condition];
    const share = e.abstain / (e.valid + e.abstain);
    return c.high !== share > 0.5 || Math.abs(c.share - share) > 1e-12 || (c.high && c.flag !== `⚠ ${(100 * share).toFixed(1)} % Abstain`);
  }).map((c) => `${c.model}/${c.condition}`);
  check('BER cells above 50 % Abstain (9 of 24 by the numpy counts) are flagged with their share, as text', flagMismatches.length === 0 && wantCells.length === 9 && flagged.filter((c) => c.high).length === 9, flagMismatches.join(', '));
  const flaggedRows = await page.$$eval('#ber-table tbody tr', (rows) => rows.filter((r) => r.dataset.highAbstain === 'true').map((r) => [r.dataset.model, r.querySelector('td.rank .flag')?.textContent.trim()]));
  const wantRows = [...new Set(wantCells.map((c) => c.model))];
  check('the reference scores and ranks resting on a flagged cell are flagged (4 of 8; Llama-2 is rank 1)', JSON.stringify(flaggedRows.map((r) => r[0]).sort()) === JSON.stringify(wantRows.sort()) && flaggedRows.every((r) => r[1] === '⚠')
    && await page.$eval('#ber-table tr[data-model="Llama-2-7b-chat-hf"] td.rank .value', (td) => td.textContent) === '1', JSON.stringify(flaggedRows));
  const flagCaption = await page.textContent('#abstain-flags');
  check('the ranking caption counts the flags and names the threshold', flagCaption.includes('Abstain share above 50 %') && flagCaption.includes('9 of 24 BER cells flagged; 4 of 8 ranks rest on a flagged cell'), flagCaption);
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
  // A field of the wrong type: the error names its path (worked out in the module downloaded when a
  // bundle fails to parse, src/state/mod.rs `explain_refused`).
  const wrongType = readFileSync(join(root, 'tests/fixtures/tiny-bundle.json'), 'utf8').replace(/"title": "[^"]*"/, '"title": 7');
  await page.setInputFiles('#bundle-file', { name: 'wrong-type.json', mimeType: 'application/json', buffer: Buffer.from(wrongType) });
  await page.waitForFunction(() => document.querySelector('#load-error')?.textContent.includes('wrong-type.json'));
  message = await page.textContent('#load-error');
  const explainer = await page.evaluate(() => performance.getEntriesByType('resource').some((e) => /\/split_explain_bundle-[0-9a-f]+\.wasm$/.test(e.name)));
  check('a field of the wrong type shows an error naming its path (metadata.title), read by the module fetched for it', message.includes('metadata.title') && explainer, `${message} (explainer fetched: ${explainer})`);
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
  await showView(page, 'scores');
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });

  // Model text behind the content warning, compared with the raw DecodingTrust file.
  await showView(page, 'cases');
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
  await showView(page, 'analyses');
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
  // Exclusions: Table 13 counts, per design, the model-draws without a score and those that lost a
  // sampled condition (partial drops; "—" where a design averages one mean), and the atlas captions end
  // with the totals, all as the CLI's JSON.
  mismatches = [];
  const sum = (d, k) => d.per_model.reduce((s, m) => s + m[k], 0);
  const averaging = (d) => d.design === 'stratified' || d.design === 'balanced' || (d.design === 'coverage' && d.conditions >= 2);
  for (const d of rq2Cli.designs) {
    const x = await cellValue(page, 'rq2-table13', `${d.design}/excluded_draws`);
    if (Number(x) !== sum(d, 'excluded_draws')) mismatches.push(`${d.design} unscored ${x} vs CLI ${sum(d, 'excluded_draws')}`);
    const p = await cellValue(page, 'rq2-table13', `${d.design}/partial_drop_draws`);
    if (averaging(d) ? Number(p) !== sum(d, 'partial_drop_draws') : p !== undefined) mismatches.push(`${d.design} partial drops ${p} vs CLI ${sum(d, 'partial_drop_draws')}`);
  }
  for (const d of rq2Cli.coverage) {
    const p = await cellValue(page, 'rq2-table14', `${d.conditions}/partial_drop_draws`);
    if (averaging(d) ? Number(p) !== sum(d, 'partial_drop_draws') : p !== undefined) mismatches.push(`coverage K=${d.conditions} partial drops ${p} vs CLI ${sum(d, 'partial_drop_draws')}`);
  }
  const phrase = (ds) => `${ds.reduce((s, d) => s + sum(d, 'excluded_draws'), 0)} unscored, ${ds.filter(averaging).reduce((s, d) => s + sum(d, 'partial_drop_draws'), 0)} partial-drop model-draws`;
  await page.waitForSelector('#atlas-e-canvas[data-caption*="partial-drop"]', { timeout: 30000 });
  const atlasCaptions = {};
  for (const id of ['atlas-e', 'atlas-f', 'atlas-coverage']) atlasCaptions[id] = await page.getAttribute(`#${id}-canvas`, 'data-caption');
  check('RQ2 exclusions: Tables 13 and 14 count unscored and partial-drop model-draws per design as the CLI, and the (e), (f) and coverage captions end with the totals',
    mismatches.length === 0 && atlasCaptions['atlas-e'].endsWith(phrase(rq2Cli.designs)) && atlasCaptions['atlas-f'].endsWith(phrase(rq2Cli.designs)) && atlasCaptions['atlas-coverage'].endsWith(phrase(rq2Cli.coverage)),
    JSON.stringify({ mismatches: mismatches.slice(0, 5), atlasCaptions, want: [phrase(rq2Cli.designs), phrase(rq2Cli.coverage)] }));
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
  // Not timed checks (speed is for benchmarks): the page must paint and answer while the run is still
  // going. A main thread blocked by the run would paint at most once and update only after the end.
  const running = () => !!document.querySelector('#rq2-progress') && !document.querySelector('#rq2-result');
  const painted = await page.evaluate((runningSrc) => new Promise((ok) => {
    const isRunning = new Function(`return (${runningSrc})();`);
    let n = 0; const t0 = performance.now();
    const tick = () => { n++; if (performance.now() - t0 < 1000) requestAnimationFrame(tick); else ok({ n, running: isRunning() }); };
    requestAnimationFrame(tick);
  }), running.toString());
  check('during a run the page keeps painting: animation frames arrive while the worker runs', painted.n >= 2 && painted.running, JSON.stringify(painted));
  // Switching to Scores leaves the run going (every view stays mounted).
  await showView(page, 'scores');
  const clicked = Date.now();
  await page.check('input[name="repeat-policy"][value="unit_majority"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('unit_majority'), null, { timeout: 5000 });
  const clickMs = Date.now() - clicked;
  const stillRunning = await page.evaluate(running);
  const progressBefore = Number(await page.getAttribute('#rq2-progress', 'data-done'));
  console.log(`     during a run: ${painted.n} animation frames in 1 s; a policy click updated the BER table in ${clickMs} ms`);
  check('during a run a repeat-policy click updates the BER table before the run ends', stillRunning, `${clickMs} ms; still running ${stillRunning}`);
  await page.waitForFunction((d) => Number(document.querySelector('#rq2-progress')?.dataset.done) > d, progressBefore, { timeout: 30000 });
  const progressShown = await page.textContent('#rq2-progress');
  const totalDraws = (100000 * (rq2Cli.designs.length + rq2Cli.coverage.length)).toLocaleString('en-US');
  check('the progress bar counts draws done of all designs', new RegExp(`Running: [\\d,]+ of ${totalDraws} draws`).test(progressShown), progressShown);
  await showView(page, 'analyses');
  await page.click('#rq2-cancel');
  await page.waitForSelector('#rq2-status', { timeout: 2000 });
  await page.waitForTimeout(1000);
  const afterCancel = await page.evaluate(() => ({
    status: document.querySelector('#rq2-status')?.textContent, progress: !!document.querySelector('#rq2-progress'),
    result: !!document.querySelector('#rq2-result'), running: document.querySelector('#rq2-run').disabled,
  }));
  check('Cancel stops the run: no progress, no result, Run enabled again', afterCancel.status.includes('Cancelled') && !afterCancel.progress && !afterCancel.result && !afterCancel.running, JSON.stringify(afterCancel));
  await showView(page, 'scores');
  await page.check('input[name="repeat-policy"][value="all_responses"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('all_responses'), null, { timeout: 5000 });
  await compareTable(page, 'all_responses');
  await showView(page, 'analyses');
  error = await runAnalysis(page, 'rq2', { draws: 200 });
  diff = error ?? jsonDiff(await reportJson(page, 'rq2'), rq2Cli);
  check('after a cancel a fresh worker runs again and gives the same report', diff === null, diff);

  // ---------------------------------------------------------------- re-weighting
  const reference = expectedReweight.bundles.decodingtrust;
  const target = reference.policies.all_responses.cases.find((c) => c.name === '0.5 / 1 / 2');
  const targetBoot = reference.bootstrap.cases.find((c) => c.name === '0.5 / 1 / 2');
  check('the numpy reference has the 0.5 / 1 / 2 case (weights, scores, bootstrap)', target && targetBoot && JSON.stringify(target.custom) === '[0.5,1,2]' && reference.bootstrap.reps === 200);
  await showView(page, 'scores');
  await page.waitForSelector('#reweight-table td.score[data-value]', { timeout: 30000 });
  check('"baseline only" is disabled on a bundle without a baseline sweep, and says why',
    await page.$eval('#preset-baseline', (i) => i.disabled) && (await page.textContent('#preset-baseline-reason')).includes('no baseline condition'));
  const equalRows = await reweightRows(page);
  let mism = equalRows.filter((r) => Math.abs(Number(r.score) - expected.policies.all_responses[r.model].reference_score) > FRACTION_TOL || Number(r.rank) !== expected.policies.all_responses[r.model].rank).map((r) => r.model);
  check('equal weights show the Eq. 4 reference scores and ranks of the numpy reference', equalRows.length === 8 && mism.length === 0, mism.join(', '));
  mism = equalRows.filter((r) => {
    const cs = Object.values(want[r.model].conditions);
    const share = cs.reduce((a, e) => a + e.abstain, 0) / cs.reduce((a, e) => a + e.valid + e.abstain, 0);
    return Math.abs(Number(r.abstain) - share) > 1e-12 || (r.high === 'true') !== wantRows.includes(r.model);
  }).map((r) => r.model);
  check('the re-weighting table shows each score\'s pooled Abstain share (numpy counts) and flags the same 4 models', mism.length === 0, mism.join(', '));
  check('the re-weighting table says its direction and counts its flags (9 of 24 weighted cells, 4 of 8 ranks)', (await page.textContent('#reweight-direction')).includes('lower is better (declared by the bundle); rank 1 = lowest score')
    && (await page.textContent('#reweight-abstain')).includes('9 of 24 weighted cells flagged; 4 of 8 ranks rest on such a cell')
    && await page.$$eval('#reweight-table td.cond[data-high-abstain="true"]', (tds) => tds.length) === 9, await page.textContent('#reweight-abstain'));
  // Keyboard: the benign slider, five ArrowLeft presses of 0.1 (1 → 0.5); then the targeted weight typed.
  await page.focus('#w-0-range');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => document.querySelector('#w-0').value === '0.5');
  await page.fill('#w-2', '2');
  await page.waitForFunction(() => document.querySelector('#preset-custom').checked && document.querySelector('#reweight-provenance').textContent.includes('targeted=2'));
  const moved = await reweightRows(page);
  mism = [];
  for (const r of moved) {
    if (Math.abs(Number(r.delta) - target.delta_pp[r.model]) > 1e-10) mism.push(`${r.model} Δ ${r.delta} vs ${target.delta_pp[r.model]}`);
    if (Number(r.rank) !== target.ranks[r.model]) mism.push(`${r.model} rank ${r.rank} vs ${target.ranks[r.model]}`);
    if (Math.abs(Number(r.score) - target.scores[r.model]) > FRACTION_TOL) mism.push(`${r.model} score ${r.score} vs ${target.scores[r.model]}`);
  }
  check('weights 0.5 / 1 / 2 (slider by keyboard, then typed): every score, Δ and rank equals numpy at 1e-12', moved.length === 8 && mism.length === 0, mism.slice(0, 4).join('; '));
  let summary = await reweightSummary(page);
  const pairKey = (p) => [...p].sort().join(' | ');
  check('weights 0.5 / 1 / 2: Kendall τ-b, inverted-pair count and the inverted pairs equal scipy',
    Math.abs(Number(summary.tau) - target.tau_b) < 1e-12 && summary.inverted === target.inversions.inverted && summary.pairs === target.inversions.pairs
    && JSON.stringify(summary.list.map(pairKey).sort()) === JSON.stringify(target.inverted_pairs.map(pairKey).sort()), JSON.stringify(summary));
  const ranksMoved = moved.some((r) => r.rank !== r.equalRank);
  check('the ranking changes against the equal-weight ranking', ranksMoved);
  // Statement-cluster bootstrap with the reference's size: intervals equal the numpy ChaCha8 reference.
  await page.fill('#reweight-reps', String(reference.bootstrap.reps));
  await page.click('#reweight-boot-run');
  await waitForIntervals(page, reference.bootstrap.reps);
  const withCi = await reweightRows(page);
  mism = withCi.filter((r) => Math.abs(Number(r.lo) - targetBoot.intervals[r.model][0]) > FRACTION_TOL || Math.abs(Number(r.hi) - targetBoot.intervals[r.model][1]) > FRACTION_TOL).map((r) => `${r.model} [${r.lo}, ${r.hi}] vs ${targetBoot.intervals[r.model]}`);
  check('the worker\'s 200-replicate bootstrap intervals (seed 20260722, shown) equal the numpy reference at 1e-12', mism.length === 0 && (await page.textContent('#reweight-boot-status')).includes('seed 20260722'), mism.slice(0, 3).join('; '));
  // Validation: a negative weight, then all zero; the last valid numbers stay.
  await page.fill('#w-1', '-1');
  await page.waitForSelector('#reweight-error');
  let errorText = await page.textContent('#reweight-error');
  check('a negative weight is rejected inline, naming the condition, and the last valid numbers stay', errorText.includes('"untargeted"') && errorText.includes('negative') && JSON.stringify(await reweightRows(page)) === JSON.stringify(withCi), errorText);
  await page.fill('#w-0', '0');
  await page.fill('#w-1', '0');
  await page.waitForFunction(() => !document.querySelector('#reweight-error') && document.querySelector('#reweight-provenance').textContent.includes('custom: targeted=2'));
  const targetedOnly = await reweightRows(page);
  await page.fill('#w-2', '0');
  await page.waitForFunction(() => document.querySelector('#reweight-error')?.textContent.includes('at least one weight must be positive'));
  check('all-zero weights are rejected inline and the last valid numbers (targeted only) stay', JSON.stringify(await reweightRows(page)) === JSON.stringify(targetedOnly) && JSON.stringify(targetedOnly) !== JSON.stringify(withCi));
  await page.fill('#w-0', '0.5'); await page.fill('#w-1', '1'); await page.fill('#w-2', '2');
  await page.waitForFunction(() => !document.querySelector('#reweight-error'));
  // The CSV export against the native CLI for the same bundle, weights and bootstrap.
  const csv = await download(page, '#reweight-csv');
  const cliCsv = cliText(['reweight', BUNDLE, '--weights', 'benign=0.5,untargeted=1,targeted=2', '--bootstrap', '200', '--seed', '20260722', '--format', 'csv']);
  check('the re-weighting CSV export equals `atlas reweight --format csv` byte for byte', csv.bytes.toString('utf8') === cliCsv && csv.name === 'decodingtrust-stereotype-v1-reweighting.csv',
    `${csv.name}: ${csv.bytes.toString('utf8').split('\n')[1]} vs ${cliCsv.split('\n')[1]}`);
  const stateJson = JSON.parse((await download(page, '#reweight-json')).bytes.toString('utf8'));
  const bundleSha = createHash('sha256').update(readFileSync(BUNDLE)).digest('hex');
  check('the JSON export names bundle id, SHA-256 of the bundle bytes, seed, weights, policy and both analyses',
    stateJson.bundle.id === 'decodingtrust-stereotype-v1' && stateJson.bundle.sha256 === bundleSha && stateJson.state.bootstrap.seed === 20260722
    && JSON.stringify(stateJson.state.weights.values) === '[0.5,1,2]' && stateJson.state.policy === 'all_responses'
    && stateJson.rq2?.settings?.draws === 200 && stateJson.rq1?.report?.options?.seed === 20260716 && stateJson.reweighting.tau_b === Number(summary.tau), JSON.stringify(stateJson.bundle));

  // ---------------------------------------------------------------- the evidence atlas
  const marks = await page.$$eval('canvas[data-marks]', (cs) => Object.fromEntries(cs.map((c) => [c.id, Number(c.dataset.marks)])));
  check('atlas panels (a)–(f) and the coverage curve are drawn after RQ1 and RQ2 ran', ['a', 'b', 'c', 'd', 'e', 'f', 'coverage'].every((k) => marks[`atlas-${k}-canvas`] > 0), JSON.stringify(marks));
  check('panels (g) and (h) say why they are absent (no judge Rationale labels)', (await page.textContent('#atlas-g-absent')).includes('no judge Rationale labels') && (await page.textContent('#atlas-h-absent')).includes('no judge Rationale labels'));
  check('(d) marks the 3 pairs the weights invert', await page.$$eval('#atlas-d-table tbody tr', (rows) => rows.filter((r) => r.children[2].textContent === 'reverses').length) === 3);
  // Keyboard reading, then the pointer at the same mark: the tooltip shows its value, as in the table.
  await page.locator('#atlas-c').scrollIntoViewIfNeeded();
  await page.focus('#atlas-c-canvas');
  await page.keyboard.press('ArrowRight');
  // data-x: the mark's x (style.left is moved to keep the tooltip inside the chart, src/ui/chart.rs).
  const keyTip = await page.$eval('#atlas-c-tip', (t) => ({ text: t.textContent, left: parseFloat(t.dataset.x || t.style.left), top: parseFloat(t.style.top) }));
  const box = await page.locator('#atlas-c-canvas').boundingBox();
  await page.mouse.move(box.x + keyTip.left, box.y + keyTip.top);
  await page.waitForFunction(() => document.querySelector('#atlas-c-tip').classList.contains('visible') && !document.querySelector('#atlas-c-tip').textContent.includes(' of '), null, { timeout: 5000 }).catch(() => {});
  const hoverTip = await page.textContent('#atlas-c-tip');
  const tipMatch = /^(.+?) · (.+?): rank ([\d.]+)(?: · ⚠ Abstain [\d.]+ %)?$/.exec(hoverTip);
  const tableRank = tipMatch && await page.$eval('#atlas-c-table', (t, [model, step]) => {
    const col = [...t.querySelectorAll('thead th')].findIndex((th) => th.textContent === `rank: ${step}`);
    // A table shows a model's label with its id on hover (title "model id: ID", src/ui/table.rs).
    const row = [...t.querySelectorAll('tbody tr')].find((r) => r.children[0].textContent === model || r.children[0].title === `model id: ${model}`);
    return row && col > 0 ? row.children[col].textContent.split(' ')[0] : null;
  }, [tipMatch[1], tipMatch[2]]);
  check('hovering a rank-path mark shows its value, the same as the chart\'s table (and the keyboard reads it too)', tipMatch !== null && tableRank === tipMatch[3] && keyTip.text.startsWith(hoverTip), `hover ${JSON.stringify(hoverTip)}, keyboard ${JSON.stringify(keyTip.text)}, table ${tableRank}`);
  const svg = await download(page, '#atlas-c-svg');
  const png = await download(page, '#atlas-c-png');
  const chartCsv = await download(page, '#atlas-c-csv');
  check('chart exports: SVG with one circle per mark, PNG, CSV with one row per model', svg.bytes.toString('utf8').startsWith('<svg') && (svg.bytes.toString('utf8').match(/<circle/g) || []).length >= marks['atlas-c-canvas']
    && png.bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) && png.name === 'decodingtrust-stereotype-v1-atlas-c.png'
    && chartCsv.bytes.toString('utf8').trim().split('\n').length === 9, `${svg.name} ${png.name} ${chartCsv.name}`);
  check('panel (c) marks the ranks resting on high-Abstain cells with ⚠ in the SVG and its CSV, with the share', svg.bytes.toString('utf8').includes('⚠') && /Llama-2-7b-chat-hf,[^\n]*⚠ Abstain 80\.8 %/.test(chartCsv.bytes.toString('utf8')), chartCsv.bytes.toString('utf8').split('\n').find((l) => l.startsWith('Llama')));
  await showView(page, 'analyses');
  const tableCsv = await download(page, '#rq2-table13-csv');
  const table13Rows = await page.$$eval('#rq2-table13 tbody tr', (rows) => rows.length);
  check('an analysis table (RQ2 Table 13) downloads as CSV with its header and rows', tableCsv.name === 'rq2-rq2-table13.csv' && tableCsv.bytes.toString('utf8').startsWith('Metric,') && tableCsv.bytes.toString('utf8').trim().split('\n').length === table13Rows + 1, tableCsv.bytes.toString('utf8').slice(0, 60));
  await mkdir(atlasShots, { recursive: true });
  await showView(page, 'scores');
  await page.locator('#atlas').screenshot({ path: join(atlasShots, 'atlas-1280x720.png') });
  await page.screenshot({ path: join(atlasShots, 'reweight-1280x720.png') });

  // ---------------------------------------------------------------- shareable view
  await page.click('#reweight-shown summary');
  await page.uncheck('#show-model-7');
  await page.uncheck('#show-condition-2');
  await page.waitForFunction(() => document.querySelectorAll('#reweight-table tbody tr').length === 7);
  const sharedRows = await reweightRows(page);
  const sharedSummary = await reweightSummary(page);
  // The URL is rewritten at most every 200 ms: wait until it has the hidden model and condition.
  await page.waitForFunction(() => { const v = document.querySelector('#reweight-link').value; return v.includes('condition=untargeted') && v.includes('model=') && v === location.href; });
  const link = await page.inputValue('#reweight-link');
  const linkKeys = [...new URL(link).searchParams.keys()];
  check('the view lives in the URL (weights, seed, replicates, policy, shown models and conditions; known keys only)', link === page.url()
    && ['w=benign:0.5', 'w=targeted:2', 'seed=20260722', 'reps=200', 'policy=all_responses', 'preset=custom', 'condition=untargeted'].every((p) => link.includes(p))
    && linkKeys.every((k) => ['bundle', 'id', 'view', 'policy', 'preset', 'sweep', 'w', 'sw', 'seed', 'reps', 'model', 'condition'].includes(k)), link);
  const fresh = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const freshPage = await fresh.newPage();
  freshPage.on('pageerror', (e) => consoleErrors.push(String(e)));
  await freshPage.goto(link);
  await freshPage.waitForSelector('#reweight-table td.score[data-value]', { timeout: 60000 });
  await waitForIntervals(freshPage, 200);
  const freshRows = await reweightRows(freshPage);
  check('the copied URL opened in a fresh browser context shows the same numbers, intervals, models and conditions', JSON.stringify(freshRows) === JSON.stringify(sharedRows)
    && JSON.stringify(await reweightSummary(freshPage)) === JSON.stringify(sharedSummary) && await freshPage.inputValue('#w-0') === '0.5'
    && !(await freshPage.isChecked('#show-model-7')) && freshRows.every((r) => !r.conditions.includes('targeted')), `${JSON.stringify(freshRows[0])} vs ${JSON.stringify(sharedRows[0])}`);
  await fresh.close();
  await page.check('#show-model-7');
  await page.check('#show-condition-2');

  // ---------------------------------------------------------------- score direction and high-Abstain fixtures
  const fixturePage = await (await browser.newContext({ viewport: { width: 1280, height: 720 } })).newPage();
  fixturePage.on('pageerror', (e) => consoleErrors.push(String(e)));
  fixturePage.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  await fixturePage.goto(base);
  await showView(fixturePage, 'scores');
  await fixturePage.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });
  const openFixture = async (name, id) => {
    await fixturePage.setInputFiles('#bundle-file', join(root, 'tests/fixtures', name));
    await fixturePage.waitForFunction((i) => document.querySelector('#metadata')?.textContent.includes(i), id, { timeout: 10000 });
    await fixturePage.waitForSelector('#reweight-table td.score[data-value]', { timeout: 30000 });
  };
  const shownRanks = (p) => p.$$eval('#ber-table tbody tr', (rows) => rows.map((r) => [r.dataset.model, r.querySelector('td.rank .value').textContent]));
  await openFixture('target-50-bundle.json', 'target-50-fixture-v1');
  // Hand-worked: |score − 50 %| = 0, 0.25, 0.375, 0.375 → ranks 1, 2, 3.5, 3.5 (lower is better would give 3, 2, 4, 1).
  check('a target-50 % bundle ranks by the distance from 50 % (1, 2, 3.5, 3.5) and says so', JSON.stringify(await shownRanks(fixturePage)) === JSON.stringify([['model-a', '1'], ['model-b', '2'], ['model-c', '3.5'], ['model-d', '3.5']])
    && (await fixturePage.textContent('#ranking-direction')) === 'Ranking: closest to 50 % is best (ranked by |score − 50 %|; declared by the bundle).', await fixturePage.textContent('#ranking-direction'));
  const targetReweight = await reweightRows(fixturePage);
  check('the re-weighting table ranks the target bundle the same way', JSON.stringify(targetReweight.map((r) => r.rank)) === JSON.stringify(['1', '2', '3.5', '3.5']) && (await fixturePage.textContent('#reweight-direction')).includes('rank 1 = closest to 50 %'));
  await openFixture('high-abstain-bundle.json', 'high-abstain-fixture-v1');
  const abstainCells = await fixturePage.$$eval('#ber-table td[data-high-abstain="true"]', (tds) => tds.map((td) => `${td.dataset.model}/${td.dataset.condition}: ${td.querySelector('.flag').textContent}`));
  check('the high-Abstain fixture: only model-abstains under c1 (6 of 8 Abstain) is flagged, with its share', JSON.stringify(abstainCells) === JSON.stringify(['model-abstains/c1: ⚠ 75.0 % Abstain']), JSON.stringify(abstainCells));
  check('its rank 1 is flagged and the caption counts 1 of 6 cells and 1 of 3 ranks; the direction is the default', (await fixturePage.$eval('#ber-table tr[data-model="model-abstains"]', (r) => r.dataset.highAbstain + ' ' + r.querySelector('td.rank').textContent)) === 'true 1 ⚠'
    && (await fixturePage.textContent('#abstain-flags')).includes('1 of 6 BER cells flagged; 1 of 3 ranks rest on a flagged cell')
    && (await fixturePage.textContent('#ranking-direction')) === 'Ranking: lower is better (default: the bundle declares no direction).');
  await waitForIntervals(fixturePage, 2000);
  const fixtureCsv = await download(fixturePage, '#reweight-csv');
  const fixtureCli = cliText(['reweight', join(root, 'tests/fixtures/high-abstain-bundle.json'), '--format', 'csv']);
  check('the re-weighting CSV of the fixture (flag columns included) equals `atlas reweight --format csv` byte for byte', fixtureCsv.bytes.toString('utf8') === fixtureCli && fixtureCli.split('\n')[1].endsWith(',0.625,0.5,true,c1=0.75'), `${fixtureCsv.bytes.toString('utf8').split('\n')[1]} vs ${fixtureCli.split('\n')[1]}`);
  await fixturePage.locator('#table-title').scrollIntoViewIfNeeded();
  await fixturePage.screenshot({ path: join(atlasShots, 'high-abstain-flags.png') });
  await fixturePage.context().close();

  // A narrow phone screen still shows the table (scrollable) without page errors.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const phonePage = await phone.newPage();
  phonePage.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  phonePage.on('pageerror', (e) => consoleErrors.push(String(e)));
  await phonePage.goto(base);
  await showView(phonePage, 'scores');
  await phonePage.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });
  await phonePage.screenshot({ path: join(out, 'atlas-phone.png') });
  await showView(phonePage, 'analyses');
  error = await runAnalysis(phonePage, 'rq2', { draws: 200 });
  check('RQ2 runs on a phone-sized page', error === null, error);
  await phonePage.locator('#rq2').screenshot({ path: join(out, 'atlas-rq2-phone.png') });
  await phonePage.waitForSelector('#atlas-e-canvas', { timeout: 30000 });
  await showView(phonePage, 'scores');
  await phonePage.locator('#reweight').screenshot({ path: join(atlasShots, 'reweight-390.png') });
  await phonePage.locator('#atlas').screenshot({ path: join(atlasShots, 'atlas-390.png') });
  const overflow = await phonePage.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check('at 390 px wide the page does not scroll sideways (the tables scroll in their boxes)', overflow <= 1, `overflow ${overflow}px`);

  check('no console errors or page errors', consoleErrors.length === 0, consoleErrors.join(' | '));
} finally {
  await browser.close();
  server.close();
}
console.log(`screenshots and timing.json in ${out}`);
console.log(`atlas screenshots: ${['atlas-1280x720.png', 'reweight-1280x720.png', 'atlas-390.png', 'reweight-390.png'].map((f) => join(atlasShots, f)).join(', ')}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
