// End-to-end test (issue 15 item 6): the static loading shell of index.html and the early fetch of the
// default bundle.
//
//   node tests/e2e/first_paint.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Checks, in headless Chromium against dist/ on 127.0.0.1:
// - the served HTML itself carries the shell (#loading-shell with the title and one line on the app), so
//   it is in the first frame; with JavaScript off it is visible, and in the dark colour scheme its
//   background is dark (prefers-color-scheme, inline CSS);
// - while the app's wasm is still arriving (the server holds it after its first 64 KiB) the shell is
//   shown and counts the wasm's bytes against its Content-Length; once the app mounts the shell is gone;
// - without ?bundle= the default bundle is requested exactly once, and that request starts before the
//   wasm has finished downloading (in parallel, not after); the BER numbers are those of a page that
//   fetched the bundle itself (the same 24 cells as ?bundle=<default path>, which skips the early fetch);
// - with ?bundle= naming another bundle, the default bundle is not requested at all;
// - the stored theme (localStorage 'audit-atlas-theme') is on <html> and the shell's background is that
//   theme's at DOMContentLoaded, with the wasm held (no flash of the system's scheme); a painted pixel
//   agrees; with storage blocked nothing throws and the system's scheme decides.
// Ends with "N passed, M failed".
import { resolve, join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const DEFAULT = 'static/bundles/decodingtrust-stereotype/bundle.json';
const PILOT = 'static/bundles/pilot-demo-smollm2/bundle.json';

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

let release = null;
const held = new Promise((ok) => { release = ok; });
let holdWasm = false;
// The theme checks hold the wasm until they are done (so the app cannot have set the theme yet).
let releaseTheme = null;
const heldTheme = new Promise((ok) => { releaseTheme = ok; });
let holdForTheme = false;
const isWasm = (p) => /\/audit-atlas-[^/]*_bg\.wasm$/.test(p);
const server = await serveStatic(dist, [], { hold: (p) => (!isWasm(p) ? null : holdWasm ? held : holdForTheme ? heldTheme : null) });
const base = `http://127.0.0.1:${server.address().port}/`;
const cells = (page) => page.$$eval('#ber-table td[data-ber]', (tds) => tds.map((td) => `${td.dataset.model}/${td.dataset.condition}=${td.dataset.ber}`));
const browser = await launchChromium();
try {
  // 1. The HTML as served.
  const html = await (await fetch(base)).text();
  check('the served index.html contains the loading shell with the title and what the app is',
    /id="loading-shell"/.test(html) && /<h1>Audit Atlas<\/h1>/.test(html) && /bias-audit results/.test(html));

  // 2. No JavaScript: the shell alone, visible; dark scheme honoured.
  for (const scheme of ['light', 'dark']) {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, javaScriptEnabled: false, colorScheme: scheme });
    const page = await context.newPage();
    await page.goto(base);
    const shell = await page.$eval('#loading-shell', (e) => {
      const r = e.getBoundingClientRect();
      return { visible: r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden', title: e.querySelector('h1')?.textContent, bg: getComputedStyle(e).backgroundColor };
    }).catch((e) => ({ error: e.message }));
    check(`without JavaScript the shell is visible with its title (${scheme} scheme)`, shell.visible && shell.title === 'Audit Atlas', JSON.stringify(shell));
    // Relative luminance of the background (0 black … 255 white), from the computed rgb().
    const [r, g, b] = (shell.bg?.match(/\d+/g) || []).map(Number);
    const lum = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    check(`the shell's background follows prefers-color-scheme: ${scheme}`, scheme === 'dark' ? lum < 60 : lum > 200, shell.bg);
    await context.close();
  }

  // 2b. The stored theme in the first frame (no flash): the inline script of index.html puts the
  // switch's stored choice onto <html> before the first paint, while the app's wasm is still held.
  {
    holdForTheme = true;
    const lumOf = (bg) => { const [r, g, b] = (bg?.match(/\d+/g) || []).map(Number); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
    for (const [stored, scheme] of [['dark', 'light'], ['light', 'dark']]) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: scheme });
      await context.addInitScript((t) => { try { localStorage.setItem('audit-atlas-theme', t); } catch (e) { /* blocked */ } }, stored);
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      // At DOMContentLoaded the wasm is still held: only index.html itself can have set the theme.
      await page.goto(base, { waitUntil: 'domcontentloaded' });
      const first = await page.evaluate(() => ({
        theme: document.documentElement.dataset.theme ?? null,
        bg: getComputedStyle(document.getElementById('loading-shell')).backgroundColor,
        app: !!document.querySelector('#app-nav'),
      }));
      const lum = lumOf(first.bg);
      check(`stored theme ${stored} under a ${scheme} system scheme: <html data-theme="${stored}"> and the shell's ${stored} background at DOMContentLoaded, before the app has started`,
        first.theme === stored && !first.app && (stored === 'dark' ? lum < 60 : lum > 200), JSON.stringify(first));
      // The first frame as painted: a pixel of the shell's background (top-left corner).
      const shot = await page.screenshot({ clip: { x: 2, y: 2, width: 1, height: 1 } });
      const px = await page.evaluate(async (b64) => {
        const img = new Image(); img.src = `data:image/png;base64,${b64}`; await img.decode();
        const c = document.createElement('canvas'); c.width = 1; c.height = 1;
        const g = c.getContext('2d'); g.drawImage(img, 0, 0); return [...g.getImageData(0, 0, 1, 1).data];
      }, shot.toString('base64'));
      const pxLum = 0.2126 * px[0] + 0.7152 * px[1] + 0.0722 * px[2];
      check(`stored theme ${stored}: the painted pixel of the shell is ${stored} (luminance ${pxLum.toFixed(0)})`, stored === 'dark' ? pxLum < 60 : pxLum > 200, JSON.stringify(px));
      check(`stored theme ${stored}: no page errors`, errors.length === 0, errors.join(' | '));
      await context.close();
    }
    // Storage blocked (localStorage throws): the script does not fail; the system's scheme decides.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'dark' });
    await context.addInitScript(() => {
      Object.defineProperty(window, 'localStorage', { configurable: true, get() { throw new DOMException('blocked', 'SecurityError'); } });
    });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(base, { waitUntil: 'domcontentloaded' });
    const blocked = await page.evaluate(() => ({ theme: document.documentElement.dataset.theme ?? null, bg: getComputedStyle(document.getElementById('loading-shell')).backgroundColor }));
    check('with storage blocked the theme script throws nothing, sets no theme, and the shell follows the dark system scheme',
      errors.length === 0 && blocked.theme === null && lumOf(blocked.bg) < 60, `${JSON.stringify(blocked)} ${errors.join(' | ')}`);
    await context.close();
    holdForTheme = false;
    releaseTheme();
  }

  // 3. The wasm held after 64 KiB: the shell is up and counts bytes; the bundle request already started.
  {
    holdWasm = true;
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const bundleRequests = [];
    page.on('request', (r) => { if (r.url().split('?')[0] === base + DEFAULT) bundleRequests.push(r.url()); });
    await page.goto(base, { waitUntil: 'domcontentloaded' });
    const counted = await page.waitForFunction(() => /\d+ kB of \d/.test(document.getElementById('shell-wasm-count')?.textContent || ''), null, { timeout: 30000 })
      .then(() => page.$eval('#shell-wasm-count', (e) => e.textContent), () => null);
    check('while the wasm downloads, the shell counts its bytes ("N kB of M …")', counted !== null, String(counted));
    const bundleDuringWasm = await page.waitForFunction((u) => performance.getEntriesByType('resource').some((e) => e.name === u), base + DEFAULT, { timeout: 30000 })
      .then(() => true, () => false);
    check('the default bundle is fetched while the wasm is still downloading (before the app has started)', bundleDuringWasm && bundleRequests.length === 1, `requests ${bundleRequests.length}`);
    const shellShown = await page.$eval('#loading-shell', (e) => e.getBoundingClientRect().height > 0).catch(() => false);
    check('the shell is shown while the app is not there yet', shellShown);
    release();
    await page.waitForSelector('#ber-table td[data-ber]', { state: 'attached', timeout: 120000 }).catch(() => {});
    const early = await cells(page).catch(() => []);
    const shellGone = await page.$('#loading-shell');
    check('once the app has mounted the shell is removed', shellGone === null);
    check('the default bundle was requested exactly once (the app used the early response)', bundleRequests.length === 1, `requests ${bundleRequests.length}`);
    check('no uncaught page errors (early fetch)', errors.length === 0, errors.join(' | '));
    await context.close();
    holdWasm = false;

    // The same bundle opened by ?bundle= (no early fetch): the same numbers.
    const context2 = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page2 = await context2.newPage();
    await page2.goto(base + '?bundle=' + encodeURIComponent(DEFAULT));
    await page2.waitForSelector('#ber-table td[data-ber]', { state: 'attached', timeout: 120000 }).catch(() => {});
    const direct = await cells(page2).catch(() => []);
    check('the early-fetched bundle shows the same 24 BER cells as the bundle fetched by the app itself',
      early.length === 24 && early.join() === direct.join(), `${early.length} vs ${direct.length}`);
    await context2.close();
  }

  // 4. ?bundle= for another bundle: no bandwidth spent on the default.
  {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    let defaultRequests = 0, pilotRequests = 0;
    page.on('request', (r) => {
      const u = r.url().split('?')[0];
      if (u === base + DEFAULT) defaultRequests += 1;
      if (u === base + PILOT) pilotRequests += 1;
    });
    await page.goto(base + '?bundle=' + encodeURIComponent(PILOT));
    const loaded = await page.waitForFunction((p) => window.__atlasLoad?.source?.endsWith(p), PILOT, { timeout: 120000 }).then(() => true, () => false);
    await page.waitForTimeout(500);
    check('with ?bundle= naming another bundle, that bundle loads', loaded && pilotRequests === 1, `pilot requests ${pilotRequests}`);
    check('with ?bundle= naming another bundle, the default bundle is never requested', defaultRequests === 0, `default requests ${defaultRequests}`);
    await context.close();
  }
} finally {
  release();
  releaseTheme();
  await browser.close();
  server.close();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
