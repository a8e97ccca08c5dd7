// First-paint benchmark (issue 15, "Measure"): how soon a fresh visitor sees something, sees the ranking,
// and sees a page that has stopped changing, under emulated networks and CPUs, for two builds of the app
// side by side in one run (e.g. before and after a change). A benchmark, not a test: it prints medians
// and exits 0 unless something could not run.
//
//   NODE_PATH=$HOME/.cache/audit-atlas/node/node_modules node bench/paint_bench.mjs \
//     --before /path/to/old/dist --after dist [--runs 3] [--profiles loopback,9mbit,phone] [--quiet 1000] [--json OUT]
//   (also: node bench/load_bench.mjs --paint …, the same arguments)
//
// Each dist folder is served by its own static server on 127.0.0.1 that behaves like a plain static host:
// gzip when the browser accepts it (compressed once, kept in memory), an ETag with 304 answers, no
// caching across pages (every run is a fresh browser context: empty HTTP cache, no service worker).
// Chromium is throttled through the DevTools protocol: Network.emulateNetworkConditions (download and
// upload throughput in bytes/s, `latency` = added round-trip time per request) and
// Emulation.setCPUThrottlingRate. Runs alternate between the builds, so both see the same machine load.
//
// Milestones, in ms since navigation start (performance.now() in the page):
// - first paint / first contentful paint (PerformanceObserver 'paint'); "shell in first frame" says
//   whether the served HTML itself contains the static loading shell (#loading-shell), i.e. whether that
//   first contentful paint shows it;
// - ranking: the first time RANKING_SELECTOR matches (a MutationObserver installed before any page
//   script runs): the loading shell's early ranking (scores and ranks computed in the analysis worker
//   while the app's wasm downloads, crates/atlas-worker/src/early.rs) or the app's own;
// - app's ranking: the first time APP_RANKING_SELECTOR matches (the mounted app's Overview, whose
//   95 % intervals then follow from the worker's bootstrap);
// - settled: the last DOM mutation before a quiet second (no mutation for 1,000 ms), measured after the
//   ranking appeared (cap: 120 s).
// Also per run: how many times the default bundle was requested (1 = the early fetch was reused).
import { createServer } from 'node:http';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { extname, join, resolve } from 'node:path';
import { launch, median, dist as defaultDist } from './common.mjs';

// The app's Overview ranking (after issue 15) or, in a build from before it, the BER table's first cell.
export const APP_RANKING_SELECTOR = '#headline-ranking tbody tr[data-model], #ber-table td[data-ber]';
// Either that or the loading shell's early ranking (index.html, #shell-ranking).
export const RANKING_SELECTOR = `#shell-ranking tbody tr[data-model], ${APP_RANKING_SELECTOR}`;
let QUIET_MS = 1000; // --quiet MS: the quiet period that ends "page stops changing"
const CAP_MS = 120000;
const BUNDLE_PATH = 'static/bundles/decodingtrust-stereotype/bundle.json';

// Network/CPU profiles: throughput in bit/s, latency = added RTT in ms, cpu = slowdown factor.
export const PROFILES = {
  loopback: { label: 'loopback', down: 0, up: 0, latency: 0, cpu: 1 },
  '9mbit': { label: '9 Mbit/s, 40 ms RTT', down: 9e6, up: 2e6, latency: 40, cpu: 1 },
  phone: { label: '1.6 Mbit/s, 150 ms RTT, 4× CPU', down: 1.6e6, up: 750e3, latency: 150, cpu: 4 },
};

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.wasm', '.css', '.json', '.svg']);

// A static host for `dir`: gzip (level 6, what common servers use) when accepted, ETag/304.
function serveDist(dir) {
  const cache = new Map();
  const load = async (path) => {
    if (cache.has(path)) return cache.get(path);
    const body = await readFile(path);
    const etag = '"' + createHash('sha1').update(body).digest('hex').slice(0, 16) + '"';
    const gz = COMPRESSIBLE.has(extname(path)) ? gzipSync(body, { level: 6 }) : null;
    const entry = { body, gz, etag };
    cache.set(path, entry);
    return entry;
  };
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      let path = join(dir, decodeURIComponent(url.pathname));
      if (!path.startsWith(dir)) { res.writeHead(403).end(); return; }
      let info = await stat(path).catch(() => null);
      if (info && info.isDirectory()) { path = join(path, 'index.html'); info = await stat(path).catch(() => null); }
      if (!info) { res.writeHead(404).end('not found'); return; }
      const f = await load(path);
      const headers = { 'Content-Type': MIME[extname(path)] || 'application/octet-stream', ETag: f.etag, 'Cache-Control': 'no-cache', Vary: 'Accept-Encoding' };
      if (req.headers['if-none-match'] === f.etag) { res.writeHead(304, headers).end(); return; }
      const gzip = f.gz && /\bgzip\b/.test(req.headers['accept-encoding'] || '');
      const body = gzip ? f.gz : f.body;
      if (gzip) headers['Content-Encoding'] = 'gzip';
      headers['Content-Length'] = body.length;
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (e) { res.writeHead(500).end(String(e)); }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

// Installed before any page script: paint entries, the ranking's first appearance, the last mutation.
const probe = ([selector, appSelector]) => {
  const m = { paints: {}, ranking: null, appRanking: null, lastMutation: 0, shellAtFirstCheck: null };
  window.__paintBench = m;
  try {
    new PerformanceObserver((list) => { for (const e of list.getEntries()) m.paints[e.name] = e.startTime; })
      .observe({ type: 'paint', buffered: true });
  } catch { /* no paint timing */ }
  const check = () => {
    const now = performance.now();
    m.lastMutation = now;
    if (m.ranking == null && document.querySelector(selector)) m.ranking = now;
    if (m.appRanking == null && document.querySelector(appSelector)) m.appRanking = now;
  };
  const start = () => {
    m.shellAtFirstCheck = !!document.getElementById('loading-shell');
    new MutationObserver(check).observe(document.documentElement, { subtree: true, childList: true, attributes: true, characterData: true });
    check();
  };
  if (document.documentElement) start(); else document.addEventListener('readystatechange', start, { once: true });
};

async function oneRun(browser, base, profile) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  if (profile.down) {
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false, latency: profile.latency, downloadThroughput: profile.down / 8, uploadThroughput: profile.up / 8,
    });
  }
  if (profile.cpu > 1) await cdp.send('Emulation.setCPUThrottlingRate', { rate: profile.cpu });
  await page.addInitScript(probe, [RANKING_SELECTOR, APP_RANKING_SELECTOR]);
  let bundleRequests = 0;
  page.on('request', (r) => { if (r.url().split('?')[0].endsWith(BUNDLE_PATH)) bundleRequests += 1; });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const html = await (await fetch(base)).text();
  await page.goto(base, { waitUntil: 'commit' });
  await page.waitForFunction(() => window.__paintBench?.ranking != null, null, { timeout: CAP_MS, polling: 100 })
    .catch((e) => { throw new Error(`the ranking (${RANKING_SELECTOR}) did not appear: ${errors.join(' | ') || e.message}`); });
  await page.waitForFunction(() => window.__paintBench?.appRanking != null, null, { timeout: CAP_MS, polling: 100 })
    .catch((e) => { throw new Error(`the app's ranking (${APP_RANKING_SELECTOR}) did not appear: ${errors.join(' | ') || e.message}`); });
  // Settled: wait until no mutation for QUIET_MS (in page time), then take the last mutation's time.
  await page.waitForFunction((quiet) => performance.now() - window.__paintBench.lastMutation >= quiet, QUIET_MS, { timeout: CAP_MS, polling: 100 });
  const m = await page.evaluate(() => ({ ...window.__paintBench }));
  const wasm = await page.evaluate(() => performance.getEntriesByType('resource')
    .filter((e) => /\.wasm$/.test(e.name)).map((e) => ({ name: e.name.split('/').pop(), end: e.responseEnd, transfer: e.transferSize, decoded: e.decodedBodySize })));
  await context.close();
  return {
    fp: m.paints['first-paint'] ?? null, fcp: m.paints['first-contentful-paint'] ?? null,
    shell_in_html: /id="loading-shell"/.test(html), ranking: m.ranking, app_ranking: m.appRanking, settled: m.lastMutation, bundle_requests: bundleRequests, wasm,
  };
}

export async function main(argv) {
  const opt = (name, dflt) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : dflt; };
  const runs = Number(opt('--runs', 3));
  QUIET_MS = Number(opt('--quiet', QUIET_MS));
  const profiles = opt('--profiles', 'loopback,9mbit,phone').split(',').map((p) => {
    if (!PROFILES[p]) { console.error(`unknown profile ${p} (known: ${Object.keys(PROFILES).join(', ')})`); process.exit(2); }
    return [p, PROFILES[p]];
  });
  const builds = [];
  if (opt('--before', null)) builds.push(['before', resolve(opt('--before'))]);
  builds.push(['after', resolve(opt('--after', defaultDist))]);
  for (const [, dir] of builds) {
    if (!(await stat(join(dir, 'index.html')).catch(() => null))) { console.error(`no index.html in ${dir} (build it with scripts/build.sh)`); process.exit(2); }
  }
  const jsonOut = opt('--json', null);
  const servers = await Promise.all(builds.map(([, dir]) => serveDist(dir)));
  const bases = servers.map((s) => `http://127.0.0.1:${s.address().port}/`);
  const browser = await launch();
  const results = [];
  try {
    for (const [key, profile] of profiles) {
      const per = builds.map(() => []);
      for (let r = 0; r < runs; r++) {
        for (let b = 0; b < builds.length; b++) {
          per[b].push(await oneRun(browser, bases[b], profile));
        }
      }
      builds.forEach(([name], b) => {
        const xs = per[b];
        const med = (k) => (xs.some((x) => x[k] == null) ? null : median(xs.map((x) => x[k])));
        results.push({ build: name, profile: key, label: profile.label, runs, fp: med('fp'), fcp: med('fcp'), ranking: med('ranking'), app_ranking: med('app_ranking'), settled: med('settled'),
          shell_in_html: xs.every((x) => x.shell_in_html), bundle_requests: Math.max(...xs.map((x) => x.bundle_requests)), raw: xs });
      });
      console.error(`done: ${profile.label}`);
    }
  } finally {
    await browser.close();
    servers.forEach((s) => s.close());
  }
  // Sizes of each build's wasm files: raw, gzip -6 (what the server sends) and gzip -9.
  const sizes = [];
  for (const [name, dir] of builds) {
    const { readdir } = await import('node:fs/promises');
    for (const f of (await readdir(dir)).filter((f) => f.endsWith('.wasm')).sort()) {
      const body = await readFile(join(dir, f));
      sizes.push({ build: name, file: f, raw: body.length, gzip6: gzipSync(body, { level: 6 }).length, gzip9: gzipSync(body, { level: 9 }).length });
    }
  }
  const s = (x) => (x == null ? '—' : (x / 1000).toFixed(2) + ' s');
  console.log(`\nFirst paint in headless Chromium, medians of ${runs} fresh pages (ranking marker: ${RANKING_SELECTOR})`);
  console.log('| profile | build | first paint | first contentful paint | shell in first frame | ranking | app\'s ranking | page stops changing | bundle requests |');
  console.log('| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |');
  for (const r of results) {
    console.log(`| ${r.label} | ${r.build} | ${s(r.fp)} | ${s(r.fcp)} | ${r.shell_in_html ? 'yes' : 'no'} | ${s(r.ranking)} | ${s(r.app_ranking)} | ${s(r.settled)} | ${r.bundle_requests} |`);
  }
  console.log('\n| build | file | raw kB | gzip -6 kB | gzip -9 kB |');
  console.log('| --- | --- | ---: | ---: | ---: |');
  for (const z of sizes) console.log(`| ${z.build} | ${z.file} | ${(z.raw / 1000).toFixed(0)} | ${(z.gzip6 / 1000).toFixed(0)} | ${(z.gzip9 / 1000).toFixed(0)} |`);
  if (jsonOut) await writeFile(jsonOut, JSON.stringify({ date: new Date().toISOString(), ranking_selector: RANKING_SELECTOR, app_ranking_selector: APP_RANKING_SELECTOR, builds, results, sizes }, null, 1));
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2));
