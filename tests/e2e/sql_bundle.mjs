// End-to-end test of the SQL path's bundle in the app (issue 16 item 6): `sql/long_to_cells.py` turns
// the committed pandas Parquet fixture into a bundle with its Rationale texts in shard files
// (DuckDB; `--metadata`), and the app opens it by URL in headless Chromium.
//
//   node tests/e2e/sql_bundle.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Checked: every BER cell of the app's table (model × system prompt, valid and Abstain counts) equals
// DuckDB's atlas_summary (summary.csv, computed by SQL, not by the Rust code); a case opened in the
// case inspector shows the text the shard file holds for that cell (read here with JSON.parse), fetched
// from the shard on demand. Needs python with duckdb (the test venv; PY=... to override).
// Screenshots (1280×800): target/e2e-sql-bundle/. Ends with "N passed, M failed".
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { tmpdir, homedir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shots = join(root, 'target/e2e-sql-bundle');
mkdirSync(shots, { recursive: true });
const py = process.env.PY || join(process.env.AUDIT_ATLAS_CACHE || join(homedir(), '.cache/audit-atlas'), 'venv/bin/python');

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

// The bundle, by the SQL path, from the fixture the Parquet reader tests use.
const out = mkdtempSync(join(tmpdir(), 'atlas-sql-bundle-'));
const mapping = JSON.parse(readFileSync(join(root, 'tests/fixtures/parquet/long.mapping.json'), 'utf8'));
const meta = join(out, 'meta.json');
writeFileSync(meta, JSON.stringify(mapping.metadata));
const facts = JSON.parse(execFileSync(py, [join(root, 'sql/long_to_cells.py'), join(root, 'tests/fixtures/parquet/pandas_snappy.parquet'), join(out, 'b'),
  '--column', 'condition=sys_prompt_type', '--column', 'repeat=sample', '--column', 'template=',
  '--column', 'selection=agreeability_num', '--column', 'rationale=output',
  '--map=1=1:agree', '--map=-1=0:disagree', '--map=0=abstain:neither', '--metadata', meta], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
check('sql/long_to_cells.py writes a bundle with its texts in shards', facts.bundle && facts.bundle.shards >= 1 && facts.bundle.texts === facts.texts, JSON.stringify(facts));
const summary = readFileSync(join(out, 'b/summary.csv'), 'utf8').trim().split('\n').slice(1).map((l) => {
  const [model, condition, responses, e1, e0, abstain, ber] = l.split(',');
  return { model, condition, valid: Number(e1) + Number(e0), abstain: Number(abstain), ber: Number(ber) };
});
const shardTexts = new Map();
for (const f of readdirSync(join(out, 'b')).filter((n) => /^rationale-.*\.json$/.test(n))) {
  const s = JSON.parse(readFileSync(join(out, 'b', f), 'utf8'));
  s.cells.forEach((c, i) => shardTexts.set(c, s.texts[i]));
}

const server = await serveStatic(dist, [['/sql/', join(out, 'b')]]);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const shardRequests = [];
  page.on('request', (r) => { if (/\/sql\/rationale-/.test(r.url())) shardRequests.push(r.url()); });
  await page.goto(`${base}?bundle=${encodeURIComponent(base + 'sql/bundle.json')}`);
  await showView(page, 'scores', 120000);
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 120000 });
  const cells = await page.$$eval('#ber-table td[data-condition]', (tds) => tds.map((td) => ({
    model: td.dataset.model, condition: td.dataset.condition, ber: Number(td.dataset.ber),
    valid: Number(td.dataset.valid), abstain: Number(td.dataset.abstain) })));
  const diffs = summary.filter((w) => {
    const g = cells.find((c) => c.model === w.model && c.condition === w.condition);
    return !g || Math.abs(g.ber - w.ber) > 1e-12 || g.valid !== w.valid || g.abstain !== w.abstain;
  });
  check(`the app's ${cells.length} BER cells equal DuckDB's atlas_summary (BER, valid, Abstain)`, cells.length === summary.length && diffs.length === 0,
    JSON.stringify(diffs.slice(0, 2)) + ' ' + JSON.stringify(cells.slice(0, 2)));
  check('no shard was fetched before a text was needed', shardRequests.length === 0, shardRequests.join(', '));
  await page.screenshot({ path: join(shots, 'scores-1280x800.png') });
  await showView(page, 'cases');
  await page.waitForSelector('#inspector-list .irow', { timeout: 30000 });
  await page.click('#show-texts');
  const first = await page.$eval('#inspector-list .irow', (r) => Number(r.dataset.cell));
  await page.click('#inspector-list .irow');
  await page.waitForFunction((c) => document.querySelector('#case-view')?.dataset.cell === String(c), first, { timeout: 10000 });
  await page.waitForFunction(() => (document.querySelector('#case-response')?.textContent || '').length > 0, null, { timeout: 30000 }).catch(() => {});
  const shown = await page.textContent('#case-response').catch(() => '');
  const selection = await page.textContent('#case-selection').catch(() => '');
  check(`the case shows the Selection's raw text as --map stored it`, /“(agree|disagree|neither)”/.test(selection), selection);
  check(`the case of cell ${first} shows the text its shard holds, fetched on demand`, shown === shardTexts.get(first) && shardRequests.length >= 1,
    `${JSON.stringify(shown.slice(0, 80))} vs ${JSON.stringify((shardTexts.get(first) || '').slice(0, 80))}; ${shardRequests.length} shard requests`);
  await page.screenshot({ path: join(shots, 'case-1280x800.png') });
  check('no uncaught page errors', errors.length === 0, errors.join(' | '));
  await context.close();
} finally {
  await browser.close();
  server.close();
  rmSync(out, { recursive: true, force: true });
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
