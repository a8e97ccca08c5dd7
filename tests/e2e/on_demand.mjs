// End-to-end test of the views downloaded on demand (src/on_demand.rs, scripts/split-app.sh), on the
// release build in headless Chromium at 1280×800:
//
//   node tests/e2e/on_demand.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
//  1. a fresh page downloads the first wasm, then — without a click — the modules of Scores, Analyses,
//     Selection vs Rationale and Cases; none of Compare, Plan, Clinical, Import or Pilot until they are
//     opened; opening Plan downloads its module and draws it;
//  2. a view whose module is slow: "Loading Compare models…" is shown in it, the rest of the page works, and
//     once the module arrives the view is drawn and the keyboard focus is on its heading;
//  3. a view whose module cannot be downloaded (the request fails): a message and a Retry button in that
//     view, no uncaught error, the Overview still works; once the network answers again, Retry draws it.
// Service workers are blocked in these pages: the service worker's install stores every module ahead
// (web/sw.js; tests/e2e/offline.mjs), and its requests would bypass the routes that hold or fail one.
// Ends with "N passed, M failed".
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

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
const module = (url) => (/\/split_view_([a-z]+)-[0-9a-f]+\.wasm$/.exec(url) || [])[1] ?? null;
const SOON = ['analyses', 'cases', 'rationale', 'scores'];
const ON_SHOW = ['clinical', 'compare', 'import', 'pilot', 'plan'];
const ranking = (page) => page.waitForSelector('#headline-ranking tbody tr[data-model]', { timeout: 60000 });

try {
  // 1. What a fresh page downloads.
  {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
    const page = await context.newPage();
    const fetched = [];
    page.on('request', (r) => { const m = module(r.url()); if (m) fetched.push(m); });
    await page.goto(base);
    await ranking(page);
    const deadline = Date.now() + 20000;
    while (SOON.some((m) => !fetched.includes(m)) && Date.now() < deadline) await page.waitForTimeout(100);
    await page.waitForTimeout(1500);
    const got = [...new Set(fetched)].sort();
    check('a fresh page downloads the modules of Scores, Analyses, Selection vs Rationale and Cases without a click', SOON.every((m) => got.includes(m)), got.join(', '));
    check('… and none of Compare, Plan, Clinical, Import or Pilot', ON_SHOW.every((m) => !got.includes(m)), got.join(', '));
    check('the Scores view is drawn (hidden) before it is opened', await page.$('#ber-table td[data-ber]') !== null);
    await showView(page, 'plan');
    check('opening Plan downloads its module and draws the view', fetched.includes('plan') && await page.$('[data-shell-view="plan"] h2') !== null, fetched.join(', '));
    await context.close();
  }

  // 2. A slow module: the placeholder, the rest of the page, then the view and the focus on its heading.
  {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    let release;
    const held = new Promise((ok) => { release = ok; });
    await page.route(/\/split_view_compare-[0-9a-f]+\.wasm$/, async (route) => { await held; await route.continue(); });
    await page.goto(base);
    await ranking(page);
    await page.click('#app-nav a[data-nav="compare"]', { noWaitAfter: true });
    await page.waitForTimeout(800);
    const waiting = await page.$eval('[data-shell-view="compare"]', (b) => ({ loading: b.querySelector('.view-loading')?.textContent ?? null, shown: !b.hidden }));
    check('a slow module: its view says "Loading Compare models…" while it downloads', waiting.shown && waiting.loading === 'Loading Compare models…', JSON.stringify(waiting));
    await page.click('#app-nav a[data-nav="overview"]', { noWaitAfter: true });
    check('… and the other views still work meanwhile (the Overview shows its ranking)', await page.isVisible('#headline-ranking'));
    await page.click('#app-nav a[data-nav="compare"]', { noWaitAfter: true });
    await page.waitForTimeout(200);
    release();
    const focused = await page.waitForFunction(() => {
      const h = document.activeElement;
      return h && /^H[23]$/.test(h.tagName) && h.closest('[data-shell-view="compare"]') ? h.textContent : null;
    }, null, { timeout: 30000 }).then((h) => h.jsonValue(), () => null);
    check('once it arrives, the view is drawn and the keyboard focus is on its heading', focused !== null, String(focused));
    check('no uncaught page errors', errors.length === 0, errors.join(' | '));
    await context.close();
  }

  // 3. A module that cannot be downloaded: the message, Retry, the rest of the page unchanged.
  {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    let blocked = true;
    await page.route(/\/split_view_import-[0-9a-f]+\.wasm$/, (route) => (blocked ? route.abort('internetdisconnected') : route.continue()));
    await page.goto(base);
    await ranking(page);
    await page.click('#app-nav a[data-nav="import"]', { noWaitAfter: true });
    const message = await page.waitForSelector('[data-shell-view="import"] .view-load-error', { timeout: 30000 })
      .then((e) => e.textContent(), () => null);
    check('a failed download: the view says it could not be downloaded and offers Retry', message !== null && /^Import could not be downloaded/.test(message)
      && await page.isVisible('[data-shell-view="import"] .view-load-error button'), String(message));
    await page.click('#app-nav a[data-nav="overview"]', { noWaitAfter: true });
    check('… the rest of the page is unchanged (the Overview and its ranking)', await page.isVisible('#headline-ranking tbody tr[data-model]'));
    await showView(page, 'scores');
    check('… other views still open (Scores shows its table)', await page.isVisible('#ber-table td[data-ber]'));
    blocked = false;
    await page.click('#app-nav a[data-nav="import"]', { noWaitAfter: true });
    await page.click('[data-shell-view="import"] .view-load-error button');
    const drawn = await page.waitForSelector('[data-shell-view="import"] #import-file', { state: 'attached', timeout: 30000 }).then(() => true, () => false);
    check('Retry, with the network back, downloads the module and draws the view', drawn && await page.$('[data-shell-view="import"] .view-load-error') === null);
    check('no uncaught page errors (a failed download is not a crash)', errors.length === 0, errors.join(' | '));
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
