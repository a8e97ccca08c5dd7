// Shared helpers of the benchmarks: paths, a static server for dist/ plus a data folder, Chromium.
import { createServer } from 'node:http';
import { stat } from 'node:fs/promises';
import { createReadStream, existsSync } from 'node:fs';
import { extname, join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const dist = join(root, 'dist');
export const cliPath = join(root, 'target/release/atlas');

export function need() {
  const missing = [];
  if (!existsSync(join(dist, 'index.html'))) missing.push(`dist/ (the release app): run scripts/build.sh`);
  if (!existsSync(cliPath)) missing.push(`target/release/atlas: run cargo build --release -p atlas-cli`);
  if (missing.length) {
    console.error(`missing: ${missing.join('; ')}`);
    process.exit(2);
  }
}

export function loadChromium() {
  const require = createRequire(import.meta.url);
  try {
    return require('playwright-core').chromium;
  } catch (e) {
    console.error('playwright-core not found: run with NODE_PATH=$HOME/.cache/audit-atlas/node/node_modules (scripts/setup.sh installs it)');
    process.exit(2);
  }
}

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml',
};

// Serves dist/ at / and `dataDir` at /bench-data/ on 127.0.0.1 (random port).
export function serve(dataDir) {
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      let pathname = decodeURIComponent(url.pathname);
      let base = dist;
      if (pathname.startsWith('/bench-data/')) { base = dataDir; pathname = pathname.slice('/bench-data'.length); }
      let path = join(base, pathname);
      if (!path.startsWith(base)) { res.writeHead(403).end(); return; }
      let info = await stat(path).catch(() => null);
      if (info && info.isDirectory()) { path = join(path, 'index.html'); info = await stat(path).catch(() => null); }
      if (!info) { res.writeHead(404).end('not found'); return; }
      res.writeHead(200, { 'Content-Type': MIME[extname(path)] || 'application/octet-stream', 'Content-Length': info.size });
      createReadStream(path).pipe(res);
    } catch (e) { res.writeHead(500).end(String(e)); }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

export async function launch() {
  const chromium = loadChromium();
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
