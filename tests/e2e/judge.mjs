// End-to-end test of judge coding of a loaded bundle's Rationales ("Judge coding can also
// run over an already loaded bundle's Rationales") on the release build in headless Chromium, against the
// real local model (SmolLM2-135M-Instruct served by llama-cpp-python, scripts/llm.sh).
//
//   node tests/e2e/judge.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// 1. Opens tests/fixtures/rq3-cases-bundle.json (SYNTHETIC, 24 cells, inline texts with HTML, judge columns
//    j-gamma, j-delta, j-beta) by ?bundle=, configures two judges at the local model with the dummy key
//    sk-test-DO-NOT-LEAK — `judge-self` (model name `alpha-7b`, which is the bundle's model m-alpha "Alpha 7B"
//    by RQ3's name matching) and `judge-other` (`tiny-judge`) — and the scope "first 6 cells": cells 0–5
//    (cell 17 is the only one without a response), 12 calls. Checks the estimate, runs, reloads mid-run,
//    resumes the saved judge coding and waits for the end: 12 distinct calls, each answered or failed with
//    its reason, nothing answered before the reload lost or run again, the progress bar full, the HTML of a
//    Rationale shown as text. Opens the result: the RQ3 panel names the new judges and panel (g) is drawn.
//    Downloads it: the three old columns unchanged, the two new ones with labels on cells 0–5 only, `-` on
//    cell 17, `.` elsewhere, the labels equal to the results table's, the self-judge named in the notes.
// 2. Keys: the key string is absent from localStorage (no opt-in), IndexedDB, the URL, the downloaded
//    bundle and the console.
// 3. Shards: on the default bundle (texts in one shard per model), "Check the plan" for the first 2 cells of
//    one model loads that model's shard and plans 2 cells × 2 judges.
// 4. The command line: `atlas pilot judge` against the same model (3 cells, one judge), stopped after one
//    settled attempt and resumed; the written bundle has the new column and no key.
//
// The model server: when `scripts/llm.sh status` finds one running, it is used and left running; otherwise
// `scripts/llm.sh start $PILOT_LLM_PORT` (default: a free port) starts one, stopped at the end. The CLI is
// $ATLAS_BIN when set, else `cargo run --release -p atlas-cli --bin atlas` (scripts/test.sh has built it
// by then). Ends with "N passed, M failed".
import { readFileSync, mkdtempSync, writeFileSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView, localModelServer } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const fixtures = join(root, 'tests/fixtures');
const FIXTURE_URL = 'fixtures/rq3-cases-bundle.json';
const fixture = JSON.parse(readFileSync(join(fixtures, 'rq3-cases-bundle.json'), 'utf8'));
const KEY = 'sk-test-DO-NOT-LEAK';
const llmScript = join(root, 'scripts/llm.sh');
// A short rubric keeps the 135M model's prompts small (CI time), and asking for one word gets answers that
// parse_judge_label reads (the default rubric's "Label: <E|QE|N|D|R>" line is seldom followed by a model
// this small; tried on this fixture's first cells: "Denial." 5 times of 6).
const RUBRIC = 'Explanation: "{rationale}"\nDoes the explanation agree with the statement "{statement}"? Answer with one word: Endorsement, Denial, Neutral or Refusal.';

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const llm = localModelServer(llmScript);
const llmBase = llm.base;

// Everything the page persisted: localStorage and every record of the pilot's IndexedDB store, by key.
async function persisted(page) {
  return page.evaluate(async () => {
    const local = JSON.stringify(Object.entries(localStorage));
    const idb = await new Promise((ok) => {
      const req = indexedDB.open('audit-atlas-pilot');
      req.onerror = () => ok({});
      req.onsuccess = () => {
        const db = req.result;
        if (!db.objectStoreNames.contains('runs')) { ok({}); return; }
        const store = db.transaction('runs').objectStore('runs');
        const keys = store.getAllKeys();
        keys.onsuccess = () => {
          const values = store.getAll();
          values.onsuccess = () => ok(Object.fromEntries(keys.result.map((k, i) => [k, values.result[i]])));
        };
      };
    });
    return { local, idb };
  });
}
const savedJudging = async (page) => {
  const { idb } = await persisted(page);
  return idb.judging ? JSON.parse(idb.judging) : null;
};
async function setKey(page, id, key) {
  await page.fill(`#pilot-key-${id}`, key);
  await page.dispatchEvent(`#pilot-key-${id}`, 'change');
}
async function configureJudge(page, row, column, model) {
  await page.fill(`#pilot-column-${row}`, column);
  await page.fill(`#pilot-base-${row}`, llmBase);
  await page.fill(`#pilot-model-${row}`, model);
  await page.fill(`#pilot-rubric-user-${row}`, RUBRIC);
  await setKey(page, row, KEY);
}
const judging = (page) => page.evaluate(() => window.__atlasJudging || null);
const tableRows = (page) => page.$$eval('#bundle-judge-results tbody tr', (trs) => trs.map((tr) => ({
  id: tr.dataset.id, status: tr.dataset.status, label: tr.dataset.label,
  cell: Number(tr.children[1].textContent), selfJudge: tr.children[4].textContent === 'yes',
  attempts: Number(tr.children[6].textContent),
  text: tr.querySelector('td.text').textContent, answer: tr.querySelector('td.answer').textContent,
  reason: tr.querySelector('td.reason').textContent,
})));

const server = await serveStatic(dist, [['/fixtures/', fixtures]]);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
const started = Date.now();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const consoleText = [], pageErrors = [], dialogs = [];
  page.on('console', (m) => consoleText.push(m.text()));
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  page.on('dialog', async (d) => { dialogs.push(d.message()); await d.dismiss(); });
  await page.goto(`${base}?bundle=${FIXTURE_URL}`);
  await showView(page, 'rationale', 120000);
  await page.waitForSelector('#rq3-table3', { timeout: 120000 });
  await showView(page, 'pilot');
  await page.waitForSelector('#bundle-judge-run');
  check('the section names the loaded bundle and its texts',
    /rq3-cases-fixture: 23 Rationale texts stored; judge columns now: j-gamma, j-delta, j-beta/.test(await page.textContent('#bundle-judge-about')),
    await page.textContent('#bundle-judge-about'));

  // 1. Two judges, the first 6 cells.
  await configureJudge(page, 'bj1', 'judge-self', 'alpha-7b');
  await page.click('#bundle-judge-add');
  await configureJudge(page, 'bj2', 'judge-other', 'tiny-judge');
  const mask = await page.$eval('#pilot-key-mask-bj1', (e) => e.textContent);
  check('the typed key is shown masked and its field is emptied',
    mask.includes('LEAK') && !mask.includes('DO-NOT') && (await page.inputValue('#pilot-key-bj1')) === '', mask);
  await page.selectOption('#bundle-judge-scope', 'first');
  await page.fill('#bundle-judge-n', '6');
  await page.fill('#bundle-judge-concurrency', '2');
  // A clashing column id is refused with the existing ids.
  await page.fill('#pilot-column-bj2', 'j-beta');
  await page.click('#bundle-judge-plan');
  await page.waitForSelector('#bundle-judge-plan-error', { timeout: 30000 });
  const clash = await page.textContent('#bundle-judge-plan-error');
  check('a new column id that is already a judge column is refused, naming the existing ones',
    clash.includes('"j-beta"') && clash.includes('j-gamma, j-delta, j-beta'), clash);
  await page.fill('#pilot-column-bj2', 'judge-other');
  await page.click('#bundle-judge-plan');
  await page.waitForSelector('#bundle-judge-estimate', { timeout: 30000 });
  const est = await page.$eval('#bundle-judge-estimate', (e) => ({ ...e.dataset, text: e.textContent }));
  check('the plan shows 12 calls (6 cells × 2 judges), tokens, cost and the cap before running',
    Number(est.calls) === 12 && Number(est.cells) === 6 && /input tokens/.test(est.text) && /hard cap 1000/.test(est.text), JSON.stringify(est));
  check('the plan says judge-self is the model that produced the responses it judges',
    /judge-self \(alpha-7b\) is the model that produced 6 of the responses/.test(est.text), est.text);

  await page.click('#bundle-judge-run');
  await page.waitForFunction(() => (window.__atlasJudging?.answered + window.__atlasJudging?.failed) >= 4, null, { timeout: 300000, polling: 100 });
  const before = await savedJudging(page);
  const answeredBefore = new Map(JSON.parse(before.state).calls
    .filter((c) => c.status.state === 'answered').map((c) => [c.id, c.status.completion.text]));
  console.log(`reloading with ${answeredBefore.size} answered in the saved state`);
  await page.reload();
  await showView(page, 'pilot', 120000);
  await page.waitForSelector('#bundle-judge-restored', { timeout: 120000 });
  const restored = await page.textContent('#bundle-judge-restored');
  check('after a reload the unfinished judge coding is offered for resuming',
    /unfinished judge coding of bundle rq3-cases-fixture/.test(restored), restored);
  check('the restored form keeps the judges', (await page.inputValue('#pilot-column-bj2')) === 'judge-other'
    && (await page.inputValue('#pilot-base-bj1')) === llmBase);
  await setKey(page, 'bj1', KEY);
  await setKey(page, 'bj2', KEY);
  await page.click('#bundle-judge-resume-saved');
  await page.waitForFunction(() => window.__atlasJudging?.phase === 'finished', null, { timeout: 600000, polling: 250 });
  const rows = await tableRows(page);
  const ids = new Set(rows.map((r) => r.id));
  const js = await judging(page);
  console.log(`judge coding: ${js.answered} answered, ${js.failed} failed of ${js.total}; labels by judge: ` +
    JSON.stringify(rows.reduce((m, r) => { const j = r.id.split(':')[1]; m[j] = m[j] || {}; m[j][r.label] = (m[j][r.label] || 0) + 1; return m; }, {})) +
    `; attempts ${rows.reduce((s, r) => s + r.attempts, 0)}`);
  check('the judge coding finishes with 12 distinct calls', rows.length === 12 && ids.size === 12, `${rows.length} rows, ${ids.size} ids`);
  check('the calls are the first 6 cells × 2 judges',
    JSON.stringify([...new Set(rows.map((r) => r.cell))]) === JSON.stringify([0, 1, 2, 3, 4, 5]));
  check('every call is answered or failed with a reason',
    rows.every((r) => r.status === 'answered' || (r.status === 'failed' && r.reason.trim() !== '')),
    JSON.stringify(rows.filter((r) => r.status !== 'answered')));
  check('most calls are answered by the real model', rows.filter((r) => r.status === 'answered').length >= 10);
  check('the model\'s answers give labels (the column is not only dots)', rows.some((r) => /^[EQNDR]$/.test(r.label)),
    JSON.stringify(rows.map((r) => [r.id, r.answer.slice(0, 40)])));
  const after = new Map(JSON.parse((await savedJudging(page)).state).calls.map((c) => [c.id, c.status]));
  const lost = [...answeredBefore].filter(([id, t]) => after.get(id)?.state !== 'answered' || after.get(id).completion.text !== t);
  check('nothing answered before the reload is lost or run again', answeredBefore.size > 0 && lost.length === 0,
    `before ${answeredBefore.size}, lost or changed ${lost.length}`);
  const bar = await page.$eval('#bundle-judge-progress progress', (p) => [p.value, p.max]);
  check('the progress bar is full', bar[0] === 12 && bar[1] === 12, JSON.stringify(bar));
  const htmlRow = rows.find((r) => r.cell === 3);
  check('a Rationale holding HTML is shown as text, never run',
    htmlRow?.text.includes('<script>alert(1)</script>') && dialogs.length === 0
      && (await page.$$('#bundle-judge-results script')).length === 0, htmlRow?.text);
  check('the self-judge calls are marked in the table (judge-self on m-alpha\'s cells, judge-other never)',
    rows.every((r) => r.selfJudge === r.id.endsWith(':judge-self')), JSON.stringify(rows.map((r) => [r.id, r.selfJudge])));

  // Download, then open in every view.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#bundle-judge-download')]);
  const bundleText = readFileSync(await download.path(), 'utf8');
  const bundle = JSON.parse(bundleText);
  const cols = bundle.responses.judges;
  check('the downloaded bundle keeps the old judge columns unchanged',
    cols.length === 5 && [0, 1, 2].every((k) => cols[k].id === fixture.responses.judges[k].id && cols[k].labels === fixture.responses.judges[k].labels),
    JSON.stringify(cols.map((c) => c.id)));
  const labelOf = (judge, cell) => rows.find((r) => r.id === `cell${cell}:${judge}`)?.label;
  for (const [k, judge, model] of [[3, 'judge-self', 'alpha-7b'], [4, 'judge-other', 'tiny-judge']]) {
    const c = cols[k];
    const ok = c && c.id === judge && c.model === model && c.rubric.includes('{rationale}') && c.labels.length === 24
      && /^[EQNDR.\-]+$/.test(c.labels) && c.labels[17] === '-'
      && [...c.labels].every((ch, cell) => cell < 6 ? ch === labelOf(judge, cell) : cell === 17 ? ch === '-' : ch === '.');
    check(`the new column ${judge} has the table's labels on cells 0-5, - on cell 17 and . elsewhere`, ok, JSON.stringify(c));
  }
  const notes = bundle.metadata.produced_by.notes;
  check('the notes say which judges coded which cells and name the self-judge',
    notes.includes('coded the same cells: 0–5') && notes.includes('judge judge-self (alpha-7b) is the audited model m-alpha on 6 cell(s) (self-judge)'), notes);
  check('the downloaded bundle keeps the bundle id, texts and Selection column',
    bundle.metadata.id === fixture.metadata.id && JSON.stringify(bundle.texts) === JSON.stringify(fixture.texts)
      && bundle.responses.selection.codes === fixture.responses.selection.codes);

  await page.click('#bundle-judge-open');
  await page.waitForFunction(() => document.querySelector('#rq3')?.textContent.includes('judge-other (tiny-judge)'), null, { timeout: 30000 });
  const rq3 = await page.textContent('#rq3');
  check('the result opens at once: the RQ3 panel names the new judge columns',
    rq3.includes('judge-self (alpha-7b)') && rq3.includes('judge-other (tiny-judge)') && rq3.includes('j-gamma (Gamma Judge)'));
  check('the atlas panel (g) is drawn for the result', (await page.$('#atlas-g canvas')) !== null && (await page.$('#atlas-g-absent')) === null);
  check('the opened result says how many judge columns it has',
    /with 5 judge columns/.test(await page.textContent('#bundle-judge-opened')));

  // 2. Keys.
  const { local, idb } = await persisted(page);
  const leaks = (s) => s.includes(KEY) || s.includes('DO-NOT-LEAK');
  check('the key is absent from localStorage (no opt-in)', !leaks(local));
  check('the key is absent from IndexedDB (run state, plan, form)', idb.judging && idb['judging-plan'] && !leaks(JSON.stringify(idb)));
  check('the key is absent from the URL', !leaks(page.url()), page.url());
  check('the key is absent from the downloaded bundle', !leaks(bundleText));
  check('the key is absent from the console messages', !consoleText.some(leaks), consoleText.filter(leaks).join(' | '));
  check('no uncaught page errors', pageErrors.length === 0, pageErrors.join(' | '));

  // 3. Shards: the default bundle keeps its texts in one shard per model.
  const page2 = await context.newPage();
  const shardRequests = [];
  page2.on('request', (r) => { if (/rationale-.*\.json/.test(r.url())) shardRequests.push(r.url()); });
  await page2.goto(base);
  await showView(page2, 'scores', 120000);
  await page2.waitForSelector('#ber-table td[data-ber]', { timeout: 120000 });
  await showView(page2, 'pilot');
  await page2.waitForSelector('#bundle-judge-model-3');
  const model3 = (await page2.textContent('label:has(#bundle-judge-model-3)')).trim();
  await page2.check('#bundle-judge-model-3');
  await page2.selectOption('#bundle-judge-scope', 'first');
  await page2.fill('#bundle-judge-n', '2');
  await page2.click('#bundle-judge-plan');
  await page2.waitForSelector('#bundle-judge-estimate, #bundle-judge-plan-error', { timeout: 60000 });
  const est2 = await page2.$eval('#bundle-judge-estimate', (e) => ({ ...e.dataset })).catch(async () => ({ error: await page2.textContent('#bundle-judge-plan-error') }));
  check(`texts in a shard are loaded for the plan (first 2 cells of ${model3}: 2 cells × 2 judges)`,
    Number(est2.cells) === 2 && Number(est2.calls) === 4 && shardRequests.some((u) => u.includes(model3)),
    `${JSON.stringify(est2)} shards fetched: ${shardRequests.join(', ')}`);
  await page2.close();
  await context.close();
} finally {
  await browser.close();
  server.close();
}

// 4. The command line against the same model.
const work = mkdtempSync(join(tmpdir(), 'atlas-judge-e2e-'));
try {
  const rubric = join(work, 'rubric.txt');
  writeFileSync(rubric, RUBRIC);
  const out = join(work, 'out.json');
  // ATLAS_BIN: an `atlas` binary already built (else cargo builds or reuses the release one).
  const [cmd, ...pre] = process.env.ATLAS_BIN ? [process.env.ATLAS_BIN]
    : ['cargo', 'run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--'];
  const args = [...pre, 'pilot', 'judge',
    '--bundle', join(fixtures, 'rq3-cases-bundle.json'),
    '--judge', `id=cli-judge,base_url=${llmBase},model=beta-chat,rubric=${rubric}`,
    '--models', 'm-beta', '--limit', '3', '--state', join(work, 'state'), '--out', out,
    '--key-env', 'ATLAS_JUDGE_E2E_KEY', '--concurrency', '2', '--timeout-s', '60'];
  const env = { ...process.env, ATLAS_JUDGE_E2E_KEY: KEY };
  const first = spawnSync(cmd, [...args, '--stop-after', '1'], { cwd: root, env, encoding: 'utf8' });
  const second = spawnSync(cmd, args, { cwd: root, env, encoding: 'utf8' });
  const output = first.stdout + first.stderr + second.stdout + second.stderr;
  console.log(second.stdout.trim());
  check('the CLI stops abruptly after one settled attempt (exit 3), then resumes to the end (exit 0)',
    first.status === 3 && second.status === 0 && /resuming/.test(second.stderr), `${first.status} ${second.status} ${output.slice(-600)}`);
  const cli = JSON.parse(readFileSync(out, 'utf8'));
  const col = cli.responses.judges.find((j) => j.id === 'cli-judge');
  const state = JSON.parse(readFileSync(join(work, 'state', 'state.json'), 'utf8'));
  check('the CLI bundle has the new column: labels or . on cells 12-14 only, - on cell 17',
    col && col.labels.length === 24 && col.labels[17] === '-' && [...col.labels].every((ch, c) => (c >= 12 && c <= 14) || ch === '.' || c === 17)
      && state.calls.length === 3 && state.calls.every((c) => ['answered', 'failed'].includes(c.status.state)), JSON.stringify(col));
  check('the CLI marks its judge as the model that produced the responses (self-judge note)',
    cli.metadata.produced_by.notes.includes('judge cli-judge (beta-chat) is the audited model m-beta on 3 cell(s) (self-judge)'));
  const files = readdirSync(join(work, 'state')).map((f) => readFileSync(join(work, 'state', f), 'utf8')).join('');
  check('the CLI keeps the key out of its output, state and bundle',
    ![output, files, readFileSync(out, 'utf8')].some((s) => s.includes(KEY) || s.includes('DO-NOT-LEAK')));
} finally {
  rmSync(work, { recursive: true, force: true });
  llm.stop();
}
console.log(`\n${passed} passed, ${failed} failed (${((Date.now() - started) / 1000).toFixed(0)} s)`);
process.exit(failed ? 1 : 0);
