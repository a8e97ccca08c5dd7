// Shared by the end-to-end test (tests/e2e/e2e.mjs) and the benchmarks (bench/): a static file server
// for dist/ on 127.0.0.1 with correct MIME types, and headless Chromium (Debian's) via playwright-core.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { extname, join } from 'node:path';
import { createRequire } from 'node:module';

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml',
};

// Serves `dist` at / and, for each [prefix, dir] of `mounts`, `dir` at `prefix` (e.g. '/bench-data/'),
// on 127.0.0.1 at a random port. Resolves to the listening http.Server.
// `options.hold(pathname)` makes a slow file: when it returns a promise, the headers and the first
// 64 KiB of that file go at once and the rest only once the promise resolves (a bundle still loading);
// `options.onHeldClose(pathname, complete)` is then told whether the whole body went out or the client
// closed the connection first (`complete` false: e.g. an aborted fetch).
export function serveStatic(dist, mounts = [], options = {}) {
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      let pathname = decodeURIComponent(url.pathname);
      let base = dist;
      for (const [prefix, dir] of mounts) {
        if (pathname.startsWith(prefix)) { base = dir; pathname = pathname.slice(prefix.length - 1); break; }
      }
      let path = join(base, pathname);
      if (!path.startsWith(base)) { res.writeHead(403).end(); return; }
      let info = await stat(path).catch(() => null);
      if (info && info.isDirectory()) { path = join(path, 'index.html'); info = await stat(path).catch(() => null); }
      if (!info) { res.writeHead(404).end('not found'); return; }
      const held = options.hold?.(url.pathname);
      if (held) {
        const body = await readFile(path);
        res.on('close', () => options.onHeldClose?.(url.pathname, res.writableFinished));
        res.writeHead(200, { 'Content-Type': MIME[extname(path)] || 'application/octet-stream', 'Content-Length': body.length });
        res.write(body.subarray(0, 65536));
        await held;
        if (!res.destroyed) res.end(body.subarray(65536));
        return;
      }
      res.writeHead(200, { 'Content-Type': MIME[extname(path)] || 'application/octet-stream', 'Content-Length': info.size });
      createReadStream(path).pipe(res);
    } catch (e) { res.writeHead(500).end(String(e)); }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

// playwright-core's chromium, with a clear message when it is not installed.
export function loadChromium() {
  const require = createRequire(import.meta.url);
  try {
    return require('playwright-core').chromium;
  } catch {
    console.error('playwright-core not found: run with NODE_PATH=$HOME/.cache/audit-atlas/node/node_modules (scripts/setup.sh installs it)');
    process.exit(2);
  }
}

// Headless Chromium with the flags this machine needs (closed network, root).
export function launchChromium() {
  return loadChromium().launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

// Shows the app-shell view `id` (overview, scores, analyses, rationale, cases, clinical, import, pilot)
// the way a reader does: a click on its link in the navigation (opening the phone menu first where the
// navigation is collapsed). Resolves once the view's container is shown (for a bundle's views: once a
// bundle is loaded) and its code has arrived ([`viewLoaded`]).
export async function showView(page, id, timeout = 60000) {
  await page.waitForSelector(`#app-nav a[data-nav="${id}"]`, { state: 'attached', timeout });
  await page.evaluate(() => document.activeElement?.blur());
  const collapsed = await page.$eval('#app-nav', (n) => getComputedStyle(n).display === 'none');
  if (collapsed) await page.click('#nav-toggle');
  // noWaitAfter: the link only pushes a history entry (no navigation to wait for).
  await page.click(`#app-nav a[data-nav="${id}"]`, { noWaitAfter: true });
  await page.waitForFunction((v) => {
    const boxes = [...document.querySelectorAll(`[data-shell-view="${v}"]`)];
    return boxes.length > 0 && boxes.every((b) => !b.hidden);
  }, id, { timeout });
  await viewLoaded(page, id, timeout);
}

// Resolves once view `id`'s code has arrived and the view is drawn: every view but the Overview is a
// module downloaded on demand (src/on_demand.rs), shown as "Loading <view>…" until then. Throws
// with the view's message when its module could not be downloaded.
export async function viewLoaded(page, id, timeout = 60000) {
  await page.waitForFunction((v) => {
    const boxes = [...document.querySelectorAll(`[data-shell-view="${v}"]`)];
    return boxes.length > 0 && boxes.every((b) => !b.querySelector('.view-loading') && (b.querySelector('h2, h3, .view-load-error')));
  }, id, { timeout });
  const failed = await page.$eval(`[data-shell-view="${id}"]`, (b) => b.querySelector('.view-load-error')?.textContent ?? null);
  if (failed) throw new Error(`view ${id} could not be loaded: ${failed}`);
}

// Runs the `atlas` CLI with `args` in the repository root and parses its standard output as JSON: the
// built binary when ATLAS_BIN names it (scripts/test.sh sets it), else `cargo run -q --release`.
export function atlasJson(args, maxBuffer = 1 << 28) {
  const root = new URL('../..', import.meta.url).pathname;
  const options = { cwd: root, encoding: 'utf8', maxBuffer };
  return JSON.parse(process.env.ATLAS_BIN
    ? execFileSync(process.env.ATLAS_BIN, args, options)
    : execFileSync('cargo', ['run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--', ...args], options));
}

// A local model server for the pilot tests: `script` is scripts/llm.sh (the chat model) or
// scripts/llm-echo.sh (the teacher-forced scorer). When `script status` finds one running, it is used
// and left running; otherwise `script start $port` (default: a free port) starts one. Returns its base
// URL and `stop()`, which stops it only if this call started it.
export function localModelServer(script, port = process.env.PILOT_LLM_PORT || '0') {
  const status = execFileSync('bash', [script, 'status'], { encoding: 'utf8' }).trim();
  const running = status.match(/^running: (\S+)/);
  if (running) {
    console.log(`using the server already running at ${running[1]} (${script})`);
    return { base: running[1], stop() {} };
  }
  const base = execFileSync('bash', [script, 'start', port], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
    .trim().split('\n').pop();
  console.log(`started the server at ${base} (${script})`);
  return { base, stop() { execFileSync('bash', [script, 'stop'], { stdio: 'inherit' }); } };
}
