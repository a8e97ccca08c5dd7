// Scroll benchmark of the case inspector (issue 6, "Scale"): the release app in headless Chromium scrolls the
// inspector's virtual list over the default bundle (691,200 responses) and the SYNTHETIC full-scale bundle
// (`atlas synth --seed 20260722`, nested layout: 641,600 responses in 13,473,600 cells), opened with ?bundle=.
// After the page has settled (the re-weighting bootstrap finished, so nothing else runs), per bundle:
//  - jumps: 240 scroll positions spread over the whole list, one per animation frame;
//  - wheel: 600 consecutive scrolls of 3 rows (84 px) per frame, as a wheel or trackpad gives them;
//  - a filter change (condition) and back, from the change event to the next frame.
// The time per frame is the interval between consecutive requestAnimationFrame callbacks while the list is
// scrolled: 16.7 ms at 60 Hz when every frame keeps up.
//
//   NODE_PATH=$HOME/.cache/audit-atlas/node/node_modules node bench/inspector_scroll.mjs [--dist DIR] [--json OUT]
//
// Prints, per bundle and pattern, the median, p95, p99 and maximum frame time and the share of frames over
// 25 ms (a frame visibly late at 60 Hz).
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { root, cliPath, median } from './common.mjs';
import { serveStatic, launchChromium } from '../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const dist = resolve(opt('--dist', join(root, 'dist')));
const jsonOut = opt('--json', null);
for (const [path, how] of [[join(dist, 'index.html'), 'build the app (scripts/build.sh or trunk build --release --dist DIR)'], [cliPath, 'cargo build --release -p atlas-cli']]) {
  if (!existsSync(path)) { console.error(`missing ${path}: ${how}`); process.exit(2); }
}

const dir = mkdtempSync(join(tmpdir(), 'atlas-inspector-'));
console.log(`writing the synthetic bundle (atlas synth --seed 20260722) to ${dir}`);
execFileSync(cliPath, ['synth', '--seed', '20260722', '--out', join(dir, 'bundle.json')], { stdio: ['ignore', 'ignore', 'inherit'] });
const server = await serveStatic(dist, [['/bench-data/', dir]]);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
const stats = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * (s.length - 1)))];
  return { frames: s.length, median: median(s), p95: q(0.95), p99: q(0.99), max: s[s.length - 1], late_share: s.filter((x) => x > 25).length / s.length };
};
const report = {};
let status = 0;
try {
  for (const [name, url] of [['default (DecodingTrust)', `${base}?view=cases`], ['synthetic nested', `${base}?bundle=${encodeURIComponent(`${base}bench-data/bundle.json`)}&view=cases`]]) {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    const t0 = Date.now();
    await page.goto(url);
    await page.waitForSelector('#inspector-count', { timeout: 600000 });
    const rows = Number(await page.getAttribute('#inspector-count', 'data-rows'));
    const loaded = (Date.now() - t0) / 1000;
    await page.waitForSelector('#reweight-boot-status[data-state="ready"]', { state: 'attached', timeout: 600000 }).catch(() => {});
    await page.waitForTimeout(2000);
    const r = await page.evaluate(async () => {
      const el = document.querySelector('#inspector-list');
      const frame = () => new Promise((ok) => requestAnimationFrame(ok));
      const max = el.scrollHeight - el.clientHeight;
      const run = async (steps, position) => {
        const out = [];
        await frame();
        let t = performance.now();
        for (let i = 1; i <= steps; i++) {
          el.scrollTop = position(i);
          await frame();
          const now = performance.now();
          out.push(now - t);
          t = now;
        }
        return out;
      };
      const jumps = await run(240, (i) => (max * i) / 240);
      el.scrollTop = max / 3;
      const wheel = await run(600, () => Math.min(max, el.scrollTop + 84));
      const last = [...el.querySelectorAll('.irow')].map((x) => Number(x.dataset.cell));
      const select = document.querySelector('#filter-condition');
      const filter = [];
      for (const v of ['1', '']) {
        const t = performance.now();
        select.value = v;
        select.dispatchEvent(new Event('change'));
        await frame();
        filter.push(performance.now() - t);
      }
      return { jumps, wheel, domRows: last.length, scrollHeight: el.scrollHeight, filter };
    });
    const entry = { rows, loaded_s: loaded, dom_rows: r.domRows, scroll_height_px: r.scrollHeight, jumps: stats(r.jumps), wheel: stats(r.wheel), filter_ms: r.filter };
    report[name] = entry;
    const line = (k) => `${k}: ${entry[k].frames} frames, median ${entry[k].median.toFixed(1)} ms, p95 ${entry[k].p95.toFixed(1)}, p99 ${entry[k].p99.toFixed(1)}, max ${entry[k].max.toFixed(1)}, over 25 ms ${(100 * entry[k].late_share).toFixed(1)}%`;
    console.log(`\n${name}: ${rows.toLocaleString('en')} responses, list ready ${loaded.toFixed(1)} s after opening, ${r.domRows} rows in the page, scroll height ${r.scrollHeight} px`);
    console.log(`  ${line('jumps')}`);
    console.log(`  ${line('wheel')}`);
    console.log(`  filter by condition: ${r.filter[0].toFixed(1)} ms, clear: ${r.filter[1].toFixed(1)} ms (change → next frame)`);
    await page.context().close();
  }
  if (jsonOut) writeFileSync(jsonOut, JSON.stringify(report, null, 1));
} catch (e) {
  console.error(`benchmark failed: ${e.message ?? e}`);
  status = 1;
} finally {
  await browser.close();
  server.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(status);
