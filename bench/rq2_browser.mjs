// Browser half of the RQ2 benchmark (bench/rq2_bench.sh runs it): opens the release app in headless
// Chromium with ?bundle=<the given bundle>, sets seed / draws / budget / bootstrap in the RQ2 panel,
// clicks Run and measures the wall time from the click until #rq2-result appears (the run happens in
// the analysis Web Worker, which parses the bundle bytes itself first). A fresh page per repetition.
//
//   NODE_PATH=$HOME/.cache/audit-atlas/node/node_modules node bench/rq2_browser.mjs BUNDLE \
//     [--draws 10000] [--budget 200] [--seed 20260722] [--repeat 3] [--compare NATIVE.json]
//
// Prints "browser_seconds S" per repetition; with --compare also whether the worker's report equals
// the native CLI's JSON for the same settings (value for value).
import { readFileSync } from 'node:fs';
import { dirname, basename, resolve } from 'node:path';
import { need, serve, launch } from './common.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const bundle = resolve(args[0] || '');
if (!args[0]) { console.error('usage: rq2_browser.mjs BUNDLE [--draws N] [--budget B] [--seed S] [--repeat R] [--compare NATIVE.json]'); process.exit(2); }
const settings = { seed: opt('--seed', '20260722'), draws: opt('--draws', '10000'), budget: opt('--budget', '200'), bootstrap: '2000' };
const REPEAT = Number(opt('--repeat', 3));
const compare = opt('--compare', null);
need();

function jsonDiff(a, b, path = '$') {
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) return `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  if (a === null || typeof a !== 'object') return a === b ? null : `${path}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) { const d = jsonDiff(a[k], b[k], `${path}.${k}`); if (d) return d; }
  return null;
}

const server = await serve(dirname(bundle));
const base = `http://127.0.0.1:${server.address().port}/`;
const url = base + '?bundle=' + encodeURIComponent(base + 'bench-data/' + basename(bundle)) + '&view=analyses';
const browser = await launch();
let status = 0;
try {
  for (let r = 0; r < REPEAT; r++) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page = await context.newPage();
    await page.goto(url);
    await page.waitForSelector('#ber-table td[data-ber]', { state: 'attached', timeout: 300000 });
    for (const [field, value] of Object.entries(settings)) await page.fill(`#rq2-${field}`, String(value));
    const t0 = Date.now();
    await page.click('#rq2-run');
    await page.waitForFunction(() => document.querySelector('#rq2-result') || document.querySelector('#rq2-error'), null, { timeout: 1800000, polling: 50 });
    const seconds = (Date.now() - t0) / 1000;
    const error = await page.$('#rq2-error');
    if (error) { console.error(`RQ2 failed in the browser: ${await error.textContent()}`); status = 1; break; }
    console.log(`browser_seconds ${seconds.toFixed(3)}`);
    if (compare && r === 0) {
      const href = await page.getAttribute('#rq2-json', 'href');
      const report = JSON.parse(decodeURIComponent(href.slice(href.indexOf(',') + 1)));
      const d = jsonDiff(report, JSON.parse(readFileSync(compare, 'utf8')));
      console.log(d === null ? 'browser_report equals the native CLI JSON' : `browser_report DIFFERS from the native CLI JSON: ${d}`);
    }
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}
process.exit(status);
