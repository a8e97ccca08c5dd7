// Load benchmark: Audit Atlas's bundle load (read + parse/validate/decode in wasm) against JSON.parse of
// the same bytes, in the same headless-Chromium page, for the default bundle and the synthetic
// full-scale bundle in both layouts (nested, 13.6 MB; crossed, 744 kB). A benchmark, not a test: it
// prints medians and ratios and always exits 0 unless something could not run.
//
//   NODE_PATH=$HOME/.cache/audit-atlas/node/node_modules node bench/load_bench.mjs [--runs 5] [--json OUT] [--bundle FILE]
//   … node bench/load_bench.mjs --paint --before OLD_DIST --after dist   (first paint: bench/paint_bench.mjs)
//
// Needs dist/ (scripts/build.sh) and target/release/atlas (cargo build --release -p atlas-cli); the
// synthetic bundles are generated into a temporary folder with `atlas synth --seed 20260722`.
// Per bundle: `--runs` fresh pages open the app with ?bundle=<url>; each reads window.__atlasLoad
// (read_ms, parse_ms) and then times JSON.parse of the same text in that page (median of 5), and
// JSON.parse(new TextDecoder().decode(bytes)) (median of 5; the app's parse starts from bytes too).
// "Warm": in every page the same bytes are then loaded a second time through the file input and that
// second parse_ms is compared with a fresh JSON.parse median in the same page (medians over the pages).
// The first load's parse_ms follows the app's decoder warm-up (prime_ms, run once per page while the
// first chunk is in flight, counted in read_ms); the warm one shows the steady state.
import { mkdtemp, rm, writeFile, readFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { need, serve, launch, median, cliPath, root } from './common.mjs';

const args = process.argv.slice(2);
// `--paint --before OLD_DIST --after dist`: the first-paint benchmark instead (bench/paint_bench.mjs):
// time to the loading shell, the ranking and a settled page under emulated networks and CPUs.
if (args.includes('--paint')) {
  await (await import('./paint_bench.mjs')).main(args.filter((a) => a !== '--paint'));
  process.exit(0);
}
const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
const RUNS = Number(opt('--runs', 5));
// `--bundle FILE`: that bundle alone (e.g. the scale benchmark's DIR/bundle.json), instead of the three.
const ONLY = opt('--bundle', null);
const JSON_OUT = opt('--json', null);
need();

const tmp = await mkdtemp(join(tmpdir(), 'atlas-load-bench-'));
const synth = (layout, file) => {
  const extra = layout === 'crossed' ? ['--layout', 'crossed'] : [];
  execFileSync(cliPath, ['synth', '--seed', '20260722', '--out', join(tmp, file), ...extra], { stdio: ['ignore', 'ignore', 'inherit'] });
};
if (ONLY) {
  await copyFile(ONLY, join(tmp, 'given.json'));
} else {
  synth('crossed', 'synthetic-crossed.json');
  synth('nested', 'synthetic-nested.json');
}

const server = await serve(tmp);
const base = `http://127.0.0.1:${server.address().port}/`;
const bundles = ONLY ? [
  { name: ONLY, query: '?bundle=' + encodeURIComponent(base + 'bench-data/given.json'), file: join(tmp, 'given.json') },
] : [
  { name: 'default (DecodingTrust)', query: '', file: join(root, 'static/bundles/decodingtrust-stereotype/bundle.json') },
  { name: 'synthetic nested', query: '?bundle=' + encodeURIComponent(base + 'bench-data/synthetic-nested.json'), file: join(tmp, 'synthetic-nested.json') },
  { name: 'synthetic crossed', query: '?bundle=' + encodeURIComponent(base + 'bench-data/synthetic-crossed.json'), file: join(tmp, 'synthetic-crossed.json') },
];

// In the page: JSON.parse of the text (median of 5, and the first run) and of TextDecoder(bytes).
const timeJsonParse = async (source) => {
  const buf = await (await fetch(source)).arrayBuffer();
  const text = new TextDecoder().decode(buf);
  const runs = [], withDecode = [];
  for (let i = 0; i < 5; i++) { const t0 = performance.now(); JSON.parse(text); runs.push(performance.now() - t0); }
  for (let i = 0; i < 5; i++) { const t0 = performance.now(); JSON.parse(new TextDecoder().decode(buf)); withDecode.push(performance.now() - t0); }
  const med = (xs) => [...xs].sort((a, b) => a - b)[2];
  return { json_parse_first_ms: runs[0], json_parse_ms: med(runs), decode_json_parse_ms: med(withDecode) };
};

const browser = await launch();
const results = [];
try {
  for (const b of bundles) {
    const rows = [];
    const warms = [];
    for (let run = 0; run < RUNS; run++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
      const page = await context.newPage();
      const errors = [];
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(base + b.query);
      await page.waitForFunction(() => window.__atlasLoad && document.querySelector('#ber-table td[data-ber]'), null, { timeout: 300000 })
        .catch((e) => { throw new Error(`${b.name}: the app did not load (${errors.join(' | ') || e.message})`); });
      const load = await page.evaluate(() => ({ ...window.__atlasLoad }));
      const jp = await page.evaluate(timeJsonParse, load.source);
      rows.push({ ...load, ...jp });
      {
        // Warm: the same bytes a second time in this page, through the file input.
        const buffer = await readFile(b.file);
        await page.setInputFiles('#bundle-file', { name: 'warm.json', mimeType: 'application/json', buffer });
        await page.waitForFunction(() => window.__atlasLoad?.source === 'file: warm.json', null, { timeout: 300000 });
        const second = await page.evaluate(() => ({ ...window.__atlasLoad }));
        const jp2 = await page.evaluate(timeJsonParse, load.source);
        warms.push({ parse_ms: second.parse_ms, read_ms: second.read_ms, json_parse_ms: jp2.json_parse_ms });
      }
      await context.close();
    }
    const r = {
      bundle: b.name, id: rows[0].bundle, bytes: rows[0].bytes, runs: RUNS,
      read_ms: median(rows.map((x) => x.read_ms)),
      parse_ms: median(rows.map((x) => x.parse_ms)),
      prime_ms: median(rows.map((x) => x.prime_ms ?? 0)),
      json_parse_ms: median(rows.map((x) => x.json_parse_ms)),
      json_parse_first_ms: median(rows.map((x) => x.json_parse_first_ms)),
      decode_json_parse_ms: median(rows.map((x) => x.decode_json_parse_ms)),
      ratio_per_run: rows.map((x) => x.parse_ms / x.json_parse_ms),
      warm: { parse_ms: median(warms.map((w) => w.parse_ms)), json_parse_ms: median(warms.map((w) => w.json_parse_ms)) },
      raw: rows, raw_warm: warms,
    };
    r.ratio = median(r.ratio_per_run);
    r.ratio_vs_decode = median(rows.map((x) => x.parse_ms / x.decode_json_parse_ms));
    r.warm_ratio = median(warms.map((w) => w.parse_ms / w.json_parse_ms));
    results.push(r);
    console.error(`done: ${b.name}`);
  }
} finally {
  await browser.close();
  server.close();
  await rm(tmp, { recursive: true, force: true });
}

const f = (x, d = 1) => (x == null ? '—' : x.toFixed(d));
console.log(`\nLoad in headless Chromium vs JSON.parse of the same bytes (medians of ${RUNS} fresh pages; target ratio ≤ 1.5×)`);
console.log('| bundle | bytes | read ms | decoder warm-up ms (in read) | parse ms (app) | JSON.parse ms | ratio | TextDecoder+JSON.parse ms | ratio vs that | warm parse ms | warm ratio |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of results) {
  console.log(`| ${r.bundle} | ${r.bytes.toLocaleString('en-US')} | ${f(r.read_ms)} | ${f(r.prime_ms)} | ${f(r.parse_ms)} | ${f(r.json_parse_ms)} | ${f(r.ratio, 2)}× | ${f(r.decode_json_parse_ms)} | ${f(r.ratio_vs_decode, 2)}× | ${f(r.warm?.parse_ms)} | ${f(r.warm_ratio, 2)}× |`);
}
console.log('decoder warm-up = atlas_core::decode::prime_decoder, run once per page while the first chunk is in flight; it is inside read ms.');
console.log('ratio = median over runs of parse_ms / JSON.parse median in the same page; warm = a second load of the same bytes (file input) in the same page, median over the pages.');
if (JSON_OUT) await writeFile(JSON_OUT, JSON.stringify({ date: new Date().toISOString(), results }, null, 1));
