// End-to-end test of the browser pilot on the release build in headless Chromium, against the
// real local model (SmolLM2-135M-Instruct served by llama-cpp-python, scripts/llm.sh).
//
//   node tests/e2e/pilot.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// 1. Designs a 20-call pilot (default bundle statements, stratified, budget 20, Table 7 wordings) with the
//    dummy key sk-test-DO-NOT-LEAK, runs it, reloads the page mid-run, resumes the saved run and waits for
//    the end: 20 distinct call ids, each answered or failed with its reason; every call answered before
//    the reload is still answered with the same text (not lost, not re-run); the progress bar is full and
//    the results table has a row per call. Opens the run as a bundle in every view and downloads it.
// 2. Keys: the key string is absent from localStorage (no opt-in), IndexedDB, the URL, the exported
//    bundle and every console message.
// 3. Faults: the fault proxy (tests/pilot/fault_proxy.mjs: 429 with Retry-After, 500, a stalled response,
//    malformed JSON, a dropped connection) in front of the model: every planned call is answered or
//    failed with its reason, none lost, none duplicated, and the attempts the run recorded equal the
//    requests the proxy saw.
//
// The model server: when `scripts/llm.sh status` finds one running (e.g. for the demo), it is used and
// left running; otherwise `scripts/llm.sh start $PILOT_LLM_PORT` (default: a free port) starts one, stopped at
// the end. Ends with "N passed, M failed".
// 4. Judges: a 6-call pilot with one judge (the same model) codes every answered Rationale; the
//    downloaded bundle carries the judge's label column.
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView, localModelServer } from './harness.mjs';
import { startFaultProxy } from '../pilot/fault_proxy.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const KEY = 'sk-test-DO-NOT-LEAK';
const llmScript = join(root, 'scripts/llm.sh');

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

// The model server.
const llm = localModelServer(llmScript);
const llmBase = llm.base;

// Everything the page persisted, as one string: localStorage and the pilot's IndexedDB records.
async function persisted(page) {
  return page.evaluate(async () => {
    const local = JSON.stringify(Object.entries(localStorage));
    const idb = await new Promise((ok) => {
      const req = indexedDB.open('audit-atlas-pilot');
      req.onerror = () => ok('');
      req.onsuccess = () => {
        const db = req.result;
        if (!db.objectStoreNames.contains('runs')) { ok(''); return; }
        const all = db.transaction('runs').objectStore('runs').getAll();
        all.onsuccess = () => ok(JSON.stringify(all.result));
        all.onerror = () => ok('');
      };
    });
    return { local, idb };
  });
}

async function savedRun(page) {
  const { idb } = await persisted(page);
  const records = JSON.parse(idb || '[]');
  return records.length ? JSON.parse(records[0]) : null;
}

async function setKey(page, id, key) {
  await page.fill(`#pilot-key-${id}`, key);
  await page.dispatchEvent(`#pilot-key-${id}`, 'change');
}

async function design(page, { base, budget, seed, timeout }) {
  await page.fill('#pilot-base-m1', base);
  await page.fill('#pilot-model-m1', 'smollm2-135m');
  await page.fill('#pilot-budget', String(budget));
  await page.fill('#pilot-seed', String(seed));
  await page.fill('#pilot-max-tokens', '48');
  await page.fill('#pilot-concurrency', '2');
  await page.fill('#pilot-timeout', String(timeout));
}

const pilotState = (page) => page.evaluate(() => window.__atlasPilot || null);
async function waitPhase(page, phase, timeout) {
  await page.waitForFunction((p) => window.__atlasPilot?.phase === p, phase, { timeout, polling: 250 });
}
const tableRows = (page) => page.$$eval('#pilot-results tbody tr', (trs) => trs.map((tr) => ({
  id: tr.dataset.id, status: tr.dataset.status,
  attempts: Number(tr.children[7].textContent), text: tr.querySelector('td.text').textContent,
  reason: tr.querySelector('td.reason').textContent,
})));

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
let proxy = null;
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const consoleText = [];
  const pageErrors = [];
  page.on('console', (m) => consoleText.push(m.text()));
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(base);
  await showView(page, 'scores', 120000);
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 120000 });
  await showView(page, 'pilot');
  await page.waitForSelector('#pilot-run');

  // 1. A 20-call pilot with the dummy key.
  await design(page, { base: llmBase, budget: 20, seed: 7, timeout: 60 });
  await setKey(page, 'm1', KEY);
  const mask = await page.$eval('#pilot-key-mask-m1', (e) => e.textContent);
  check('the typed key is shown masked and its field is emptied',
    mask.includes('LEAK') && !mask.includes('DO-NOT') && (await page.inputValue('#pilot-key-m1')) === '', mask);
  await page.click('#pilot-plan');
  await page.waitForSelector('#pilot-estimate, #pilot-plan-error', { timeout: 30000 });
  const estimate = await page.$eval('#pilot-estimate', (e) => ({ ...e.dataset, text: e.textContent })).catch(() => null);
  check('the plan shows 20 calls, estimated tokens and cost before running',
    estimate && Number(estimate.calls) === 20 && /tokens/.test(estimate.text) && /Cost/.test(estimate.text), JSON.stringify(estimate));

  await page.click('#pilot-run');
  await page.waitForFunction(() => (window.__atlasPilot?.answered + window.__atlasPilot?.failed) >= 6, null, { timeout: 300000, polling: 100 });
  const beforeReload = await savedRun(page);
  const answeredBefore = new Map();
  for (const c of JSON.parse(beforeReload.state).calls) {
    if (c.status.state === 'answered') answeredBefore.set(c.id, c.status.completion.text);
  }
  const inFlightBefore = JSON.parse(beforeReload.state).calls.filter((c) => c.status.state === 'in_flight').length;
  console.log(`reloading with ${answeredBefore.size} answered and ${inFlightBefore} in flight in the saved state`);
  await page.reload();
  await showView(page, 'pilot', 120000);
  await page.waitForSelector('#pilot-restored', { timeout: 60000 });
  const restoredText = await page.$eval('#pilot-restored', (e) => e.textContent);
  check('after a reload the unfinished run is offered for resuming', /unfinished run/.test(restoredText), restoredText);
  check('the restored form keeps the model server', (await page.inputValue('#pilot-base-m1')) === llmBase);
  await setKey(page, 'm1', KEY);
  await page.click('#pilot-resume-saved');
  await waitPhase(page, 'finished', 600000);
  const st = await pilotState(page);
  const rows = await tableRows(page);
  const ids = new Set(rows.map((r) => r.id));
  check('the run finishes with 20 distinct call ids', rows.length === 20 && ids.size === 20, `${rows.length} rows, ${ids.size} ids`);
  check('every call is answered or failed with a reason',
    rows.every((r) => r.status === 'answered' || (r.status === 'failed' && r.reason.trim() !== '')),
    JSON.stringify(rows.filter((r) => r.status !== 'answered').map((r) => [r.id, r.status, r.reason])));
  check('most calls are answered by the real model', rows.filter((r) => r.status === 'answered').length >= 15, JSON.stringify(st));
  const lost = [...answeredBefore].filter(([id, text]) => {
    const row = rows.find((r) => r.id === id);
    return !row || row.status !== 'answered';
  });
  const after = JSON.parse((await savedRun(page)).state).calls;
  const rerun = [...answeredBefore].filter(([id, text]) => after.find((c) => c.id === id)?.status.completion?.text !== text);
  check('nothing answered before the reload is lost or run again', answeredBefore.size > 0 && lost.length === 0 && rerun.length === 0,
    `before ${answeredBefore.size}, lost ${lost.length}, changed ${rerun.length}`);
  const bar = await page.$eval('#pilot-progress progress', (p) => [p.value, p.max]);
  check('the progress bar is full', bar[0] === bar[1] && bar[1] === 20, JSON.stringify(bar));
  const answeredText = rows.filter((r) => r.status === 'answered').map((r) => r.text);
  check('the results table shows the model text', answeredText.some((t) => t.trim().length > 0));

  // Output: download, then open in every view.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#pilot-download')]);
  const bundleText = readFileSync(await download.path(), 'utf8');
  const bundle = JSON.parse(bundleText);
  check('the downloaded bundle is format v1 with the run\'s cells',
    bundle.format === 'audit-atlas-bundle' && bundle.metadata.id.startsWith('pilot-'), `${bundle.format} ${bundle.metadata?.id}`);
  await page.click('#pilot-open');
  await page.waitForFunction((id) => document.querySelector('#metadata .bundle-id code')?.textContent === id, bundle.metadata.id, { timeout: 30000 });
  await showView(page, 'scores');
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 30000 });
  check('the run opens as the loaded bundle (metadata and BER table show it)', true);
  await showView(page, 'pilot');

  // 2. Keys.
  const { local, idb } = await persisted(page);
  const leaks = (s) => s.includes(KEY) || s.includes('DO-NOT-LEAK');
  check('the key is absent from localStorage (no opt-in)', !leaks(local));
  check('the key is absent from IndexedDB', idb.length > 0 && !leaks(idb));
  check('the key is absent from the URL', !leaks(page.url()), page.url());
  check('the key is absent from the exported bundle', !leaks(bundleText));
  check('the key is absent from the console messages', !consoleText.some(leaks), consoleText.filter(leaks).join(' | '));

  // 3. Faults: the proxy in front of the model.
  proxy = await startFaultProxy(new URL(llmBase).origin);
  await page.click('#pilot-discard');
  await page.waitForFunction(() => !document.querySelector('#pilot-progress'), null, { timeout: 10000 });
  // The proxy answers preflights with `Access-Control-Allow-Headers: *`, which by the Fetch standard
  // does not cover `Authorization`: this run goes without a key, as for any local server.
  await page.click('#pilot-forget-keys');
  await design(page, { base: `${proxy.url}/v1`, budget: 14, seed: 11, timeout: 4 });
  await page.click('#pilot-run');
  await waitPhase(page, 'finished', 600000);
  const frows = await tableRows(page);
  const fids = new Set(frows.map((r) => r.id));
  const fanswered = frows.filter((r) => r.status === 'answered').length;
  const ffailed = frows.filter((r) => r.status === 'failed');
  console.log(`fault run: ${frows.length} calls, ${fanswered} answered, ${ffailed.length} failed; proxy saw ${proxy.log.length} requests: ` +
    JSON.stringify(proxy.log.reduce((m, e) => ({ ...m, [e.fault]: (m[e.fault] || 0) + 1 }), {})));
  for (const r of ffailed) console.log(`  failed ${r.id}: ${r.reason}`);
  check('faults: every planned call appears once (14 distinct ids)', frows.length === 14 && fids.size === 14, `${frows.length} rows, ${fids.size} ids`);
  check('faults: every call answered or failed with its reason',
    frows.every((r) => r.status === 'answered' || (r.status === 'failed' && r.reason.trim() !== '')));
  check('faults: calls get answered through the proxy', fanswered > 0);
  // Every attempt the run recorded reached the proxy; the only extra requests are Chromium's own
  // transparent retry of a POST whose reused keep-alive connection was dropped (at most one per drop).
  const attempts = frows.reduce((s, r) => s + r.attempts, 0);
  const drops = proxy.log.filter((e) => e.fault === 'drop').length;
  check('faults: the attempts recorded match the requests the proxy saw (none duplicated, none lost)',
    attempts <= proxy.log.length && proxy.log.length - attempts <= drops,
    `attempts ${attempts}, proxy requests ${proxy.log.length}, drops ${drops}`);
  const faults = new Set(proxy.log.map((e) => e.fault));
  check('faults: the schedule was exercised (429, 500, stall, malformed, drop)',
    ['429', '500', 'stall', 'malformed', 'drop'].every((f) => faults.has(f)), [...faults].join(','));
  const retried = frows.filter((r) => r.status === 'answered' && r.attempts > 1).length;
  check('faults: retried calls were answered in the end', retried > 0, `retried and answered: ${retried}`);

  // 4. Judge coding: a small pilot with one judge (the same local model) codes each Rationale.
  proxy.close(); proxy = null;
  await page.click('#pilot-discard');
  await page.waitForFunction(() => !document.querySelector('#pilot-progress'), null, { timeout: 10000 });
  await page.click('#pilot-add-judge');
  await page.fill('#pilot-base-j1', llmBase);
  await page.fill('#pilot-model-j1', 'smollm2-135m-judge');
  await design(page, { base: llmBase, budget: 6, seed: 3, timeout: 60 });
  await page.click('#pilot-run');
  await waitPhase(page, 'finished', 600000);
  const js = await pilotState(page);
  check('judges: a judge call for every answered call with text, each settled',
    js.judge_total > 0 && js.judge_total <= js.answered && js.judge_done === js.judge_total, JSON.stringify(js));
  const [jdownload] = await Promise.all([page.waitForEvent('download'), page.click('#pilot-download')]);
  const jbundle = JSON.parse(readFileSync(await jdownload.path(), 'utf8'));
  const column = jbundle.responses.judges?.[0];
  check('judges: the bundle has the judge\'s label column (E/Q/N/D/R, . for no label, - for no response)',
    column && column.id === 'j1' && /^[EQNDR.\-]+$/.test(column.labels), JSON.stringify(column)?.slice(0, 200));
  check('no uncaught page errors', pageErrors.length === 0, pageErrors.join(' | '));
  await context.close();
} finally {
  proxy?.close();
  await browser.close();
  server.close();
  llm.stop();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
