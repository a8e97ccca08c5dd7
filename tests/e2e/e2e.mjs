// End-to-end test of the release build in headless Chromium (playwright-core + Debian's chromium).
//
//   node tests/e2e/e2e.mjs            (after `trunk build --release`; scripts/test.sh does both)
//
// Serves dist/ on 127.0.0.1 (a small static server, correct MIME types), opens the app, waits for the
// BER table and checks its numbers against the independent numpy reference
// (tests/reference/expected_decodingtrust.json), switches the repeat policy, loads a malformed bundle
// and checks the error while the table stays, opens a model text behind the content warning and
// compares it with the raw DecodingTrust file, measures the load time against JSON.parse of the same
// bytes, and saves screenshots to tests/e2e/out/. Ends with "N passed, M failed".
import { createServer } from 'node:http';
import { readFile, mkdir, writeFile, stat } from 'node:fs/promises';
import { createReadStream, readFileSync } from 'node:fs';
import { extname, join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { chromium } = require('playwright-core');

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = join(root, 'dist');
const out = join(here, 'out');
const shared = process.env.AUDIT_ATLAS_SHARED || resolve(root, '../shared');
const expected = JSON.parse(readFileSync(join(root, 'tests/reference/expected_decodingtrust.json'), 'utf8'));

const MIME = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.png': 'image/png', '.svg': 'image/svg+xml',
};

function serve() {
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      let path = join(dist, decodeURIComponent(url.pathname));
      if (!path.startsWith(dist)) { res.writeHead(403).end(); return; }
      let info = await stat(path).catch(() => null);
      if (info && info.isDirectory()) { path = join(path, 'index.html'); info = await stat(path).catch(() => null); }
      if (!info) { res.writeHead(404).end('not found'); return; }
      res.writeHead(200, { 'Content-Type': MIME[extname(path)] || 'application/octet-stream', 'Content-Length': info.size });
      createReadStream(path).pipe(res);
    } catch (e) { res.writeHead(500).end(String(e)); }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const FRACTION_TOL = 1e-12;

async function tableValues(page) {
  return page.$$eval('#ber-table td[data-condition]', (tds) => tds.map((td) => ({
    model: td.dataset.model, condition: td.dataset.condition, ber: td.dataset.ber,
    valid: Number(td.dataset.valid), abstain: Number(td.dataset.abstain),
    shown: td.querySelector('.ber').textContent,
  })));
}

async function compareTable(page, policy) {
  const cells = await tableValues(page);
  const want = expected.policies[policy];
  check(`${policy}: table has 8 × 3 BER cells`, cells.length === 24, `found ${cells.length}`);
  let mismatches = [];
  for (const c of cells) {
    const e = want[c.model]?.conditions?.[c.condition];
    if (!e) { mismatches.push(`${c.model}/${c.condition}: not in the reference`); continue; }
    if (Math.abs(Number(c.ber) - e.ber) > FRACTION_TOL) mismatches.push(`${c.model}/${c.condition} BER ${c.ber} vs ${e.ber}`);
    if (c.valid !== e.valid || c.abstain !== e.abstain) mismatches.push(`${c.model}/${c.condition} counts ${c.valid}/${c.abstain} vs ${e.valid}/${e.abstain}`);
    // Two decimals of the percentage; a value exactly halfway may round either way, so allow 0.005 pp.
    if (!/^\d+\.\d\d%$/.test(c.shown) || Math.abs(parseFloat(c.shown) - e.ber * 100) > 0.005 + 1e-9) mismatches.push(`${c.model}/${c.condition} shows ${c.shown}, reference ${(e.ber * 100).toFixed(4)}%`);
  }
  check(`${policy}: every BER, valid and Abstain count equals the numpy reference`, mismatches.length === 0, mismatches.slice(0, 5).join('; '));
  const refs = await page.$$eval('#ber-table tbody tr', (rows) => rows.map((r) => ({
    model: r.dataset.model, reference: r.querySelector('td.reference').dataset.reference,
    rank: r.querySelector('td.rank').textContent,
  })));
  mismatches = [];
  for (const r of refs) {
    const e = want[r.model];
    if (Math.abs(Number(r.reference) - e.reference_score) > FRACTION_TOL) mismatches.push(`${r.model} reference ${r.reference} vs ${e.reference_score}`);
    if (Number(r.rank) !== e.rank) mismatches.push(`${r.model} rank ${r.rank} vs ${e.rank}`);
  }
  check(`${policy}: reference scores (Eq. 4) and ranks equal the numpy reference`, refs.length === 8 && mismatches.length === 0, mismatches.join('; '));
}

const server = await serve();
const base = `http://127.0.0.1:${server.address().port}/`;
await mkdir(out, { recursive: true });
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));

  await page.goto(base);
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });
  check('the default bundle loads and names itself', (await page.textContent('#metadata')).includes('decodingtrust-stereotype-v1'));
  check('the content warning is shown in the metadata', (await page.textContent('#metadata')).includes('Content warning'));
  check('no model text is on the page before the warning is acknowledged', (await page.$$('.case pre.text')).length === 0 && (await page.$('#content-warning')) !== null);
  await compareTable(page, 'all_responses');
  const provenance = await page.textContent('#table-provenance');
  check('the table names bundle, repeat policy and weights', provenance.includes('decodingtrust-stereotype-v1') && provenance.includes('all_responses') && provenance.includes('Eq. 4'), provenance);
  const chart = await page.$eval('#ber-chart', (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let blue = 0; for (let i = 0; i < d.length; i += 4) if (d[i] === 0 && d[i + 1] === 114 && d[i + 2] === 178) blue++;
    return { w: c.width, h: c.height, blue };
  });
  check('the chart canvas has bars drawn in the first condition colour', chart.blue > 500, JSON.stringify(chart));
  await page.screenshot({ path: join(out, 'atlas-default.png'), fullPage: true });

  // Load time against JSON.parse of the same bytes in the same page.
  const timing = await page.evaluate(async () => {
    const load = window.__atlasLoad;
    const text = await (await fetch(load.source)).text();
    const runs = [];
    for (let i = 0; i < 5; i++) { const t0 = performance.now(); JSON.parse(text); runs.push(performance.now() - t0); }
    runs.sort((a, b) => a - b);
    return { ...load, json_parse_ms_median: runs[2] };
  });
  timing.atlas_parse_over_json_parse = timing.parse_ms / timing.json_parse_ms_median;
  await writeFile(join(out, 'timing.json'), JSON.stringify(timing, null, 1));
  console.log(`     load: ${timing.bytes} bytes, read ${timing.read_ms.toFixed(1)} ms, parse+validate ${timing.parse_ms.toFixed(1)} ms, JSON.parse ${timing.json_parse_ms_median.toFixed(1)} ms (ratio ${timing.atlas_parse_over_json_parse.toFixed(2)})`);
  check('load timings were recorded', timing.parse_ms > 0 && timing.json_parse_ms_median > 0);

  // Another repeat policy: numbers move and still match the reference.
  await page.check('input[name="repeat-policy"][value="unit_majority"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('unit_majority'));
  await compareTable(page, 'unit_majority');
  await page.check('input[name="repeat-policy"][value="first_repeat"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('first_repeat'));
  await compareTable(page, 'first_repeat');
  await page.check('input[name="repeat-policy"][value="all_responses"]');
  await page.waitForFunction(() => document.querySelector('#table-provenance').textContent.includes('all_responses'));

  // A malformed bundle: an error naming record and field; the loaded bundle stays.
  const before = await tableValues(page);
  const bad = readFileSync(join(root, 'tests/fixtures/tiny-bundle.json'), 'utf8').replace('"version": 1', '"version": 7');
  await page.setInputFiles('#bundle-file', { name: 'bad-version.json', mimeType: 'application/json', buffer: Buffer.from(bad) });
  await page.waitForSelector('#load-error', { timeout: 10000 });
  let message = await page.textContent('#load-error');
  check('a bundle of another version shows an error naming the version', message.includes('unsupported format version 7') && message.includes('bad-version.json'), message);
  const truncated = readFileSync(join(root, 'static/bundles/decodingtrust-stereotype/bundle.json'), 'utf8').slice(0, 5000);
  await page.setInputFiles('#bundle-file', { name: 'truncated.json', mimeType: 'application/json', buffer: Buffer.from(truncated) });
  await page.waitForFunction(() => document.querySelector('#load-error')?.textContent.includes('truncated.json'));
  message = await page.textContent('#load-error');
  check('a truncated bundle shows an error naming line and column', /truncated: it ends early at line 1, column \d+/.test(message), message);
  check('the loaded bundle stays after a failed load', message.includes('decodingtrust-stereotype-v1') && JSON.stringify(await tableValues(page)) === JSON.stringify(before));
  await page.screenshot({ path: join(out, 'atlas-error.png'), fullPage: true });

  // Drag and drop: a bundle dropped on the drop zone replaces the loaded one.
  const tiny = readFileSync(join(root, 'tests/fixtures/tiny-bundle.json'), 'utf8');
  await page.evaluate((text) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'tiny-bundle.json', { type: 'application/json' }));
    const zone = document.querySelector('.dropzone');
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, tiny);
  await page.waitForFunction(() => document.querySelector('#metadata')?.textContent.includes('tiny-example-v1'), null, { timeout: 10000 });
  const dropped = await tableValues(page);
  check('a dropped bundle replaces the loaded one and its table is shown', dropped.length > 0 && (await page.$('#load-error')) === null && (await page.textContent('#metadata')).includes('file: tiny-bundle.json'));
  await page.goto(base);
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });

  // Model text behind the content warning, compared with the raw DecodingTrust file.
  await page.click('#show-texts');
  await page.waitForFunction(() => {
    const pre = document.querySelector('.case pre.text');
    return pre && pre.textContent !== 'Loading text…';
  }, null, { timeout: 20000 });
  const shown = await page.textContent('.case pre.text');
  const derived = readFileSync(join(shared, 'data/raw/decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl'), 'utf8');
  let rawText = null;
  for (const line of derived.split('\n')) {
    if (!line.includes('gpt-3.5-turbo-0301"') || !line.includes('"benign"')) continue;
    const row = JSON.parse(line);
    if (row.model === 'openai/gpt-3.5-turbo-0301' && row.sys_prompt_type === 'benign' && row.stereotype_topic === 'hiv' && row.target_group === 'Homosexuals' && row.template_idx === 0) { rawText = row.outputs[0]; break; }
  }
  check('the first shown response is DecodingTrust\'s first sample for that cell, as plain text', rawText !== null && shown === rawText, `shown ${JSON.stringify(shown).slice(0, 80)} raw ${JSON.stringify(rawText).slice(0, 80)}`);
  await page.screenshot({ path: join(out, 'atlas-responses.png'), fullPage: false });

  // A narrow phone screen still shows the table (scrollable) without page errors.
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 } });
  const phonePage = await phone.newPage();
  await phonePage.goto(base);
  await phonePage.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });
  await phonePage.screenshot({ path: join(out, 'atlas-phone.png') });
  const overflow = await phonePage.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check('at 390 px wide the page does not scroll sideways (the table scrolls in its box)', overflow <= 1, `overflow ${overflow}px`);

  check('no console errors or page errors', consoleErrors.length === 0, consoleErrors.join(' | '));
} finally {
  await browser.close();
  server.close();
}
console.log(`screenshots and timing.json in ${out}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
