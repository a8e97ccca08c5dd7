// End-to-end test of the loading shell's early Overview (issue 15, "First paint and size") on the release
// build in headless Chromium, against the CLI:
//
//   node tests/e2e/early_overview.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// While the app's wasm is still on its way, index.html starts the analysis worker (atlas-worker, a
// seventh of the app's size), hands it the early fetch of the default bundle and draws the ranking it
// computes (crates/atlas-worker/src/early.rs) into the loading shell. This test holds the app's wasm
// back (a route that answers it only when told) so that the order is certain, and checks:
//  1. the shell's ranking appears while the app has not started (the shell is still there, no app
//     markup): the same models in the same order as `atlas overview --reps 0 --json`, each row's
//     full-precision data-score equal to the CLI's score, its text the score as percent with one
//     decimal, its rank the CLI's rank, its label the CLI's label with the model id on hover; the
//     headline findings' sentences equal the CLI's;
//  2. after the app's wasm is let through: the shell is gone, the app's Overview ranking has the same
//     models and scores, its 95 % intervals fill in, and the app's first analysis job went to the
//     shell's worker (a wrapped Worker constructor records what is posted to each worker);
//  3. `?policy=first_repeat`: the shell's scores equal `atlas overview --policy first-repeat`'s;
//  4. `?view=scores` (another view) and `?bundle=` (another bundle): no early Overview, the app works;
//  5. at 390×844 the shell's ranking fits the width (no sideways scroll).
// Screenshots: target/e2e-early-overview/shell-desktop.png and shell-phone.png.
// Ends with "N passed, M failed".
import { mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, atlasJson } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shots = join(root, 'target/e2e-early-overview');
mkdirSync(shots, { recursive: true });
const BUNDLE = 'static/bundles/decodingtrust-stereotype/bundle.json';

const atlas = (args) => atlasJson(args);
const cliAll = atlas(['overview', BUNDLE, '--reps', '0', '--json']);
const cliFirst = atlas(['overview', BUNDLE, '--reps', '0', '--policy', 'first-repeat', '--json']);

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}
const pct = (f) => (f === null ? '—' : `${(f * 100).toFixed(1)}%`);
const rankText = (r) => (r === null ? '—' : String(r));

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();

// Opens `query` with the app's wasm held back until `release()`; counts the worker wasm's downloads.
async function openHeld(query, viewport) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  let release;
  const released = new Promise((r) => { release = r; });
  await page.route(/audit-atlas-[0-9a-f]+_bg\.wasm$/, async (route) => { await released; await route.continue(); });
  // Every Worker the page creates, with the kinds of message posted to it (the keys of each message).
  await page.addInitScript(() => {
    const Original = window.Worker;
    if (!Original) return;
    window.__workers = [];
    const Wrapped = function (url, options) {
      const worker = new Original(url, options);
      const record = { url: String(url), posts: [] };
      window.__workers.push(record);
      const post = worker.postMessage.bind(worker);
      worker.postMessage = (message, transfer) => {
        record.posts.push(message && typeof message === 'object' ? Object.keys(message).sort().join('+') : typeof message);
        return post(message, transfer);
      };
      return worker;
    };
    Wrapped.prototype = Original.prototype;
    window.Worker = Wrapped;
  });
  await page.goto(base + query);
  return { context, page, errors, release };
}

const shellRows = (page) => page.evaluate(() => [...document.querySelectorAll('#shell-ranking tbody tr')].map((tr) => ({
  model: tr.dataset.model, score: tr.dataset.score,
  rank: tr.querySelector('td.rank')?.textContent, text: tr.querySelector('td.score')?.textContent,
  label: tr.querySelector('th.model')?.textContent, title: tr.querySelector('th.model')?.title,
})));

function compareRows(name, rows, cli) {
  check(`${name}: the shell lists the CLI's ${cli.ranking.length} models in its order`,
    rows.length === cli.ranking.length && rows.every((r, i) => r.model === cli.ranking[i].model),
    JSON.stringify(rows.map((r) => r.model)));
  const bad = rows.filter((r, i) => {
    const c = cli.ranking[i];
    if (!c) return true;
    const scoreOk = c.score === null ? r.score === '' : Number(r.score) === c.score;
    return !scoreOk || r.text !== pct(c.score) || r.rank !== rankText(c.rank)
      || !r.label.startsWith(c.label) || r.title !== c.model;
  });
  check(`${name}: every score (full precision and as shown), rank and label equals the CLI's`, bad.length === 0,
    JSON.stringify(bad.slice(0, 2)));
}

for (const [label, viewport] of [['desktop', { width: 1280, height: 800 }], ['phone', { width: 390, height: 844 }]]) {
  const { context, page, errors, release } = await openHeld('', viewport);
  await page.waitForSelector('#shell-ranking tbody tr[data-model]', { timeout: 60000 });
  const before = await page.evaluate(() => ({
    shell: !!document.getElementById('loading-shell'),
    app: !!document.querySelector('#headline-ranking, nav, main'),
    scroll: document.documentElement.scrollWidth, width: window.innerWidth,
    boxScroll: document.getElementById('shell-overview').scrollWidth,
    boxWidth: document.getElementById('shell-overview').clientWidth,
  }));
  check(`${label}: the ranking is in the loading shell while the app's wasm is held back`, before.shell && !before.app,
    JSON.stringify(before));
  compareRows(label, await shellRows(page), cliAll);
  const findings = await page.$$eval('#shell-findings li', (li) => li.map((l) => l.textContent));
  check(`${label}: the shell lists the CLI's ${cliAll.findings.length} headline findings, in order and word for word`,
    JSON.stringify(findings) === JSON.stringify(cliAll.findings.map((f) => f.text)), JSON.stringify(findings));
  if (label === 'phone') {
    check('phone: the shell ranking fits 390 px (no sideways scroll)',
      before.scroll <= before.width && before.boxScroll <= before.boxWidth + 1, JSON.stringify(before));
  }
  await page.screenshot({ path: join(shots, `shell-${label}.png`) });

  release();
  await page.waitForSelector('#headline-ranking tbody tr[data-model]', { timeout: 120000 });
  await page.waitForFunction(() => document.querySelector('#headline-ranking caption')?.textContent.includes('95% interval and rank band'), null, { timeout: 120000 });
  const after = await page.evaluate(() => ({
    shell: !!document.getElementById('loading-shell'),
    early: window.__atlasEarlyWorker !== undefined,
    rows: [...document.querySelectorAll('#headline-ranking tbody tr')].map((tr) => ({ model: tr.dataset.model, score: tr.dataset.score, lo: tr.dataset.lo })),
    workers: window.__workers,
  }));
  check(`${label}: the app replaced the shell`, !after.shell);
  check(`${label}: the app's ranking has the shell's models and scores`,
    after.rows.length === cliAll.ranking.length && after.rows.every((r, i) => r.model === cliAll.ranking[i].model && Number(r.score) === cliAll.ranking[i].score),
    JSON.stringify(after.rows.slice(0, 2)));
  check(`${label}: the intervals are in`, after.rows.every((r) => r.lo !== ''), JSON.stringify(after.rows));
  // The shell's worker (the first one created) got the early job, then the app's first analysis job.
  const first = after.workers[0]?.posts ?? [];
  check(`${label}: the app took over the shell's worker for its first analysis (no second download for it)`,
    !after.early && first[0] === 'bundle+early' && first[1] === 'bundle+request', JSON.stringify(after.workers));
  check(`${label}: no page errors`, errors.length === 0, errors.join(' | '));
  await context.close();
}

{
  const { context, page, errors, release } = await openHeld('?policy=first_repeat', { width: 1280, height: 800 });
  await page.waitForSelector('#shell-ranking tbody tr[data-model]', { timeout: 60000 });
  compareRows('policy first_repeat', await shellRows(page), cliFirst);
  const caption = await page.textContent('#shell-ranking caption');
  check('policy first_repeat: the caption names the policy', caption.includes('first_repeat'), caption);
  release();
  await page.waitForSelector('#headline-ranking tbody tr[data-model]', { timeout: 120000 });
  check('policy first_repeat: no page errors', errors.length === 0, errors.join(' | '));
  await context.close();
}

for (const query of ['?view=scores', `?bundle=${encodeURIComponent('static/bundles/decodingtrust-stereotype/bundle.json')}`]) {
  const { context, page, errors, release } = await openHeld(query, { width: 1280, height: 800 });
  // Long enough for the worker and the bundle on loopback; the app's wasm is still held back.
  await page.waitForTimeout(2500);
  const drawn = await page.evaluate(() => document.querySelectorAll('#shell-ranking tr').length);
  check(`${query}: no early Overview`, drawn === 0, `${drawn} rows`);
  release();
  const loaded = await page.waitForFunction(() => !document.getElementById('loading-shell')
      && document.querySelector('#ber-table td[data-ber], #headline-ranking tbody tr'), null, { timeout: 120000 })
    .then(() => true, () => false);
  check(`${query}: the app loads and shows its scores`, loaded);
  check(`${query}: no page errors`, errors.length === 0, errors.join(' | '));
  await context.close();
}

await browser.close();
server.close();
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
