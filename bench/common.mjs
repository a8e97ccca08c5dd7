// Shared helpers of the benchmarks: paths, a static server for dist/ plus a data folder, Chromium.
import { existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium } from '../tests/e2e/harness.mjs';

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

export { loadChromium } from '../tests/e2e/harness.mjs';

// Serves dist/ at / and `dataDir` at /bench-data/ on 127.0.0.1 (random port).
export function serve(dataDir) {
  return serveStatic(dist, [['/bench-data/', dataDir]]);
}

export function launch() {
  return launchChromium();
}

export const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
