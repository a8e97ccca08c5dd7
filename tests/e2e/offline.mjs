// End-to-end test (shareable views): the built dist/ works from a plain static file server
// under a sub-path, and keeps working offline once loaded.
//
//   node tests/e2e/offline.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Serves dist/ at /sub/atlas/ (not at the server root) on 127.0.0.1, opens the app there, waits for the
// default bundle's BER table and for the service worker (web/sw.js) to be active, then switches the
// browser context offline and reloads: the page, the default bundle and its numbers come back from the
// service worker's cache, an RQ1 run still starts the analysis worker and finishes, and a view never
// opened online (Plan) loads its on-demand module from the cache. Ends with "N passed, M failed".
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const cells = (page) => page.$$eval('#ber-table td[data-ber]', (tds) => tds.map((td) => `${td.dataset.model}/${td.dataset.condition}=${td.dataset.ber}`));

const empty = await mkdtemp(join(tmpdir(), 'atlas-offline-'));
const server = await serveStatic(empty, [['/sub/atlas/', dist]]);
const url = `http://127.0.0.1:${server.address().port}/sub/atlas/`;
const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);
  await showView(page, 'scores', 120000);
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 120000 });
  const online = await cells(page);
  check('the app loads from a static server under a sub-path (/sub/atlas/) with its default bundle', online.length === 24, `cells ${online.length}`);
  const active = await page.evaluate(async () => {
    if (!('serviceWorker' in navigator)) return 'no serviceWorker API';
    const timeout = new Promise((ok) => setTimeout(() => ok(null), 30000));
    const reg = await Promise.race([navigator.serviceWorker.ready, timeout]);
    if (!reg?.active) return 'no active service worker after 30 s';
    // It is registered once the page has loaded (index.html), so it may still be activating here.
    const worker = reg.active;
    if (worker.state !== 'activated') {
      await Promise.race([new Promise((ok) => worker.addEventListener('statechange', () => worker.state === 'activated' && ok())), timeout]);
    }
    return worker.state;
  });
  check('the offline service worker is registered and active', active === 'activated', active);

  await context.setOffline(true);
  const reloaded = await page.reload({ timeout: 60000 }).then(() => null, (e) => e.message.split('\n')[0]);
  check('offline, the page reloads from the service worker', reloaded === null, reloaded);
  await showView(page, 'scores').catch(() => {});
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 }).catch(() => {});
  const offline = await cells(page).catch(() => []);
  check('offline, a reload shows the same bundle and the same BER numbers', offline.length === 24 && offline.join() === online.join(), `${offline.length} cells`);
  await showView(page, 'analyses').catch(() => {});
  await page.fill('#rq1-unit-reps', '50', { timeout: 10000 }).catch(() => {});
  await page.fill('#rq1-cluster-reps', '50', { timeout: 10000 }).catch(() => {});
  await page.click('#rq1-run', { timeout: 10000 }).catch(() => {});
  await page.waitForFunction(() => document.querySelector('#rq1-result') || document.querySelector('#rq1-error'), null, { timeout: 120000 }).catch(() => {});
  const rq1 = await page.$('#rq1-result');
  const rq1Error = await page.$eval('#rq1-error', (e) => e.textContent).catch(() => null);
  check('offline, RQ1 still runs in the analysis worker', rq1 !== null, rq1Error ?? 'no result');
  // The Plan view was never opened online: its module (src/on_demand.rs) comes from what the service
  // worker stored ahead at install (index.html's <meta name="atlas-modules">).
  const plan = await showView(page, 'plan', 60000).then(() => null, (e) => e.message.split('\n')[0]);
  check('offline, a view never opened online (Plan) loads its on-demand module from the service worker', plan === null && await page.$('#plan-budget, [data-shell-view="plan"] h2') !== null, plan ?? '');
  check('no uncaught page errors', errors.length === 0, errors.join(' | '));
  await context.close();
} finally {
  await browser.close();
  server.close();
  await rm(empty, { recursive: true, force: true });
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
