// End-to-end test that loads cannot race, on the release build in headless Chromium.
//
//   node tests/e2e/loads.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// The static server holds one bundle back: /slow/… serves static/bundles/… but sends only the headers and
// the first 64 KiB at once, and the rest when the test releases it (harness.mjs, `hold`). Then:
//  1. ?bundle=/slow/<default bundle> is still loading (progress shown) when a file is picked: the file's
//     bundle is shown, the slow fetch is aborted (the server sees the connection closed before the body
//     was sent), and once the slow response is released the picked bundle stays, with no error.
//  2. the same with a file dropped on the drop zone instead, and with the import panel's
//     "Open in the explorer" (a small CSV imported in the tab) — the synchronous open path the pilot,
//     judge coding and clinical pilot panels share.
//  3. ?bundle= naming a missing file: the error names HTTP 404 and offers "Open the default bundle", a
//     button reached and pressed with the keyboard; the default bundle then shows (its numbers), the
//     link's bundle= is gone from the URL, and a later failed load keeps it and offers no way "back".
// Service workers are blocked: this test is about the page's loads (the offline copy has offline.mjs).
// Ends with "N passed, M failed".
import { readFileSync } from 'node:fs';
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

// Held responses: pathname → its release function; closes: pathname → whether the body went out whole.
const releases = new Map();
const closes = new Map();
const server = await serveStatic(dist, [['/slow/', join(root, 'static/bundles')]], {
  hold: (pathname) => pathname.startsWith('/slow/') ? new Promise((ok) => releases.set(pathname, ok)) : null,
  onHeldClose: (pathname, complete) => closes.set(pathname, complete),
});
const base = `http://127.0.0.1:${server.address().port}/`;
const SLOW = '/slow/decodingtrust-stereotype/bundle.json';
const FIXTURE = join(root, 'tests/fixtures/rq3-cases-bundle.json');
const FIXTURE_ID = 'rq3-cases-fixture';
const DEFAULT_ID = 'decodingtrust-stereotype-v1';

const shownId = (page) => page.$eval('#metadata .bundle-id code', (c) => c.textContent).catch(() => null);
const shownSource = (page) => page.$eval('#metadata .bundle-id code:nth-of-type(2)', (c) => c.textContent).catch(() => null);
const waitFor = (ms) => new Promise((ok) => setTimeout(ok, ms));

// Opens ?bundle=SLOW in a fresh page and waits until the slow bundle shows as loading.
async function openSlow(context, name) {
  releases.delete(SLOW);
  closes.delete(SLOW);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}?bundle=${SLOW}`);
  await page.waitForFunction(() => document.querySelector('#load-progress')?.textContent.includes('slow/decodingtrust-stereotype'), null, { timeout: 60000 });
  // The line names the URL as soon as the fetch starts ("…: 0 KB" until the response's headers and the
  // first 64 KB arrive, which a loaded machine can delay); wait for the counts, then check them.
  await page.waitForFunction(() => / of \d+ KB/.test(document.querySelector('#load-progress')?.textContent ?? ''), null, { timeout: 30000 }).catch(() => {});
  const progress = await page.textContent('#load-progress');
  check(`${name}: the slow ?bundle= load shows its progress while it is held`, /Loading .*slow\/decodingtrust-stereotype.*: \d+ of \d+ KB/.test(progress), progress);
  check(`${name}: the server holds the slow response`, releases.has(SLOW));
  return { page, errors };
}

// After a later open has shown bundle `id`: the slow fetch was aborted; releasing it changes nothing.
async function releaseAndCheck(page, errors, name, id) {
  const deadline = Date.now() + 10000;
  while (!closes.has(SLOW) && Date.now() < deadline) await waitFor(50);
  check(`${name}: the later open aborted the slow fetch (the server saw the connection close before the whole body)`, closes.get(SLOW) === false, `close seen: ${closes.get(SLOW)}`);
  releases.get(SLOW)?.();
  await waitFor(1500);
  check(`${name}: after the slow response completes, the later bundle is still shown`, (await shownId(page)) === id, await shownId(page));
  check(`${name}: no error and no progress left over from the slow load`, (await page.$('#load-error')) === null && (await page.$('#load-progress')) === null);
  const table = await page.$$eval('#ber-table td[data-ber]', (tds) => tds.length);
  check(`${name}: the later bundle's table is shown`, table > 0, `${table} cells`);
  check(`${name}: no uncaught page errors`, errors.length === 0, errors.join(' | '));
}

const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, serviceWorkers: 'block' });

  // 1. The file picker while ?bundle= is still loading.
  {
    const { page, errors } = await openSlow(context, 'picker');
    await page.setInputFiles('#bundle-file', FIXTURE);
    await page.waitForFunction((id) => document.querySelector('#metadata .bundle-id code')?.textContent === id, FIXTURE_ID, { timeout: 30000 });
    check('picker: the picked file is shown while the slow load is still held', (await shownSource(page)) === 'file: rq3-cases-bundle.json' && releases.has(SLOW), await shownSource(page));
    await releaseAndCheck(page, errors, 'picker', FIXTURE_ID);
    await page.close();
  }

  // 2a. Drag and drop while ?bundle= is still loading.
  {
    const { page, errors } = await openSlow(context, 'drop');
    await page.evaluate((text) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], 'dropped.json', { type: 'application/json' }));
      const zone = document.querySelector('.dropzone');
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, readFileSync(FIXTURE, 'utf8'));
    await page.waitForFunction((id) => document.querySelector('#metadata .bundle-id code')?.textContent === id, FIXTURE_ID, { timeout: 30000 });
    check('drop: the dropped file is shown', (await shownSource(page)) === 'file: dropped.json', await shownSource(page));
    await releaseAndCheck(page, errors, 'drop', FIXTURE_ID);
    await page.close();
  }

  // 2b. The import panel's "Open in the explorer" while ?bundle= is still loading.
  {
    const { page, errors } = await openSlow(context, 'import');
    const csv = 'model,statement,answer\nm1,s1,agree\nm1,s2,disagree\nm2,s1,disagree\nm2,s2,disagree\n';
    const mapping = {
      mapping_version: 1,
      metadata: {
        id: 'loads-import-v1', title: 'Loads test import', description: 'Four hand-written rows (tests/e2e/loads.mjs).',
        source: { citation: 'tests/e2e/loads.mjs' }, license: { id: 'CC0-1.0', attribution: 'none' }, content_warning: null,
      },
      facets: { model: { field: 'model' }, statement: { field: 'statement' } },
      selection: { field: 'answer', map: { agree: 1, disagree: 0 } },
    };
    await showView(page, 'import');
    await page.setInputFiles('#import-file', { name: 'rows.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await page.waitForSelector('#import-preview, #import-preview-error', { timeout: 30000 });
    // The raw mapping sits in the form mapper's collapsed "Edit as JSON".
    if (!(await page.$eval('#import-json', (d) => d.open))) await page.click('#import-json summary');
    await page.fill('#import-mapping', JSON.stringify(mapping));
    await page.click('#import-run');
    await page.waitForSelector('#import-summary, #import-error', { timeout: 30000 });
    const importError = await page.$eval('#import-error', (e) => e.textContent).catch(() => null);
    check('import: the small CSV imports', importError === null, importError);
    check('import: the slow load is still held when the import is opened', releases.has(SLOW) && !closes.has(SLOW));
    await page.click('#import-open');
    await page.waitForFunction(() => document.querySelector('#metadata .bundle-id code')?.textContent === 'loads-import-v1', null, { timeout: 30000 });
    // Hand count: m1 = 1 agree of 2 → BER 0.5; m2 = 0 of 2 → 0. (The Scores view, hidden, arrives
    // on demand shortly after the Overview: src/on_demand.rs.)
    await page.waitForSelector('#ber-table td[data-ber]', { state: 'attached', timeout: 30000 });
    const bers = await page.$$eval('#ber-table td[data-ber]', (tds) => tds.map((td) => `${td.dataset.model}=${Number(td.dataset.ber)}`));
    check('import: the imported bundle is shown with its hand-counted BER (m1 1/2, m2 0/2)', bers.join() === 'm1=0.5,m2=0', bers.join());
    await releaseAndCheck(page, errors, 'import', 'loads-import-v1');
    await page.close();
  }

  // 3. A ?bundle= that is not there: the error and a keyboard-usable way back to the default bundle.
  {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${base}?bundle=static/bundles/missing/bundle.json`);
    await page.waitForSelector('#load-error', { timeout: 60000 });
    const message = await page.textContent('#load-error');
    check('404: the error names the link\'s bundle and HTTP 404', message.includes('static/bundles/missing/bundle.json') && message.includes('HTTP 404'), message);
    check('404: the page says no bundle is open', message.includes('No bundle is open'), message);
    const button = await page.$('#open-default');
    check('404: a button "Open the default bundle" is next to the error', button !== null && (await button.textContent()).trim() === 'Open the default bundle');
    // Keyboard: Tab from the start of the page reaches the button (a real button in the tab order), Enter presses it.
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement?.id === 'open-default');
    }
    check('404: the button is reached with Tab', reached);
    await page.keyboard.press('Enter');
    await page.waitForFunction((id) => document.querySelector('#metadata .bundle-id code')?.textContent === id, DEFAULT_ID, { timeout: 60000 }).catch(() => {});
    check('404: Enter on the button opens the default bundle', (await shownId(page)) === DEFAULT_ID, await shownId(page));
    await page.waitForSelector('#ber-table td[data-ber]', { state: 'attached', timeout: 30000 }).catch(() => {});
    const cells = await page.$$eval('#ber-table td[data-ber]', (tds) => tds.length);
    check('404: the default bundle\'s table is shown (8 models × 3 conditions)', cells === 24, `${cells} cells`);
    check('404: the error is gone', (await page.$('#load-error')) === null);
    await page.waitForFunction(() => !location.search.includes('bundle='), null, { timeout: 5000 }).catch(() => {});
    const search = await page.evaluate(() => location.search);
    check('404: the URL no longer names the missing bundle', !search.includes('bundle='), search);
    // A later failure keeps the default bundle and offers no way "back" to it (it is the one shown).
    await page.setInputFiles('#bundle-file', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from('{"format": ') });
    await page.waitForSelector('#load-error', { timeout: 10000 });
    const later = await page.textContent('#load-error');
    check('a failed file after that keeps the default bundle and says so', later.includes('broken.json') && later.includes(`(${DEFAULT_ID}) is unchanged`) && (await shownId(page)) === DEFAULT_ID, later);
    check('with the default bundle shown, no "Open the default bundle" button', (await page.$('#open-default')) === null);
    check('404: no uncaught page errors', errors.length === 0, errors.join(' | '));
    await page.close();
  }
  await context.close();
} finally {
  for (const release of releases.values()) release();
  await browser.close();
  server.close();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
