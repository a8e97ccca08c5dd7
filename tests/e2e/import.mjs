// End-to-end test of the browser import on the release build in headless Chromium.
//
//   node tests/e2e/import.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Picks real inputs from ../shared/data/raw in the "Import your own results" panel, loads the committed
// mapping files of tests/import/, runs the import and compares the report's counts with the counts that
// tests/import/count_reference.py computed independently (tests/import/count_reference.json): the
// CrowS-Pairs CSV (quoted text with commas, quotes and a line break) and the DecodingTrust JSONL (arrays
// of 25 labels per row → repeats). Then opens the CrowS-Pairs import in the explorer (the BER table shows
// it), checks that a broken mapping (no statement facet) gives an error naming the problem while the loaded bundle stays, and
// that the downloaded bundle is the same bundle. Ends with "N passed, M failed".
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shared = process.env.AUDIT_ATLAS_SHARED || resolve(root, '../shared');
const reference = JSON.parse(readFileSync(join(root, 'tests/import/count_reference.json'), 'utf8'));

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const inputs = [
  {
    dataset: 'crows-pairs',
    file: join(shared, 'data/raw/crows-pairs-source/data/crows_pairs_anonymized.csv'),
    mapping: join(root, 'tests/import/crows-pairs.mapping.json'),
  },
  {
    dataset: 'decodingtrust',
    file: join(shared, 'data/raw/decodingtrust-stereotype/derived/stereotype_responses_8models_3sysprompts.jsonl'),
    mapping: join(root, 'tests/import/decodingtrust.mapping.json'),
  },
];

async function importFile(page, input) {
  await showView(page, 'import');
  await page.setInputFiles('#import-file', input.file);
  await page.waitForSelector('#import-preview, #import-preview-error', { timeout: 60000 });
  await page.setInputFiles('#import-mapping-file', input.mapping);
  const mappingText = readFileSync(input.mapping, 'utf8');
  await page.waitForFunction((t) => document.querySelector('#import-mapping').value === t, mappingText, { timeout: 10000 });
  await page.click('#import-run');
  await page.waitForSelector('#import-summary, #import-error', { timeout: 300000 });
  const error = await page.$eval('#import-error', (e) => e.textContent).catch(() => null);
  if (error) return { error };
  return page.$eval('#import-summary', (p) => ({ ...p.dataset }));
}

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, acceptDownloads: true });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(base);
  await showView(page, 'scores', 120000);
  await page.waitForSelector('#ber-table td[data-ber]', { timeout: 120000 });

  for (const input of inputs) {
    const got = await importFile(page, input);
    const want = reference.datasets[input.dataset];
    if (got.error || !want) {
      check(`${input.dataset}: the import finishes`, false, got.error || 'no reference counts');
      continue;
    }
    const fields = [['records', 'records'], ['cells', 'cells'], ['responses', 'responses'],
      ['evidence1', 'evidence_1'], ['evidence0', 'evidence_0'], ['abstain', 'abstain'], ['duplicates', 'duplicates']];
    const diffs = fields.filter(([ours, theirs]) => Number(got[ours]) !== want[theirs])
      .map(([ours, theirs]) => `${ours}: browser ${got[ours]} vs reference ${want[theirs]}`);
    check(`${input.dataset}: the browser import's counts equal the independent pandas counts (records, cells, responses, evidence 1/0/Abstain, duplicates)`,
      diffs.length === 0, diffs.join('; '));
    check(`${input.dataset}: no record skipped`, Number(got.skipped) === 0, `skipped ${got.skipped}`);
    if (input.dataset === 'crows-pairs') {
      // Download: the offered file is a bundle with the mapping's id.
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('#import-download')]);
      const path = await download.path();
      const bundle = JSON.parse(readFileSync(path, 'utf8'));
      check('crows-pairs: the downloaded bundle is format v1 with the mapping\'s id',
        bundle.format === 'audit-atlas-bundle' && bundle.metadata.id === 'crows-pairs-labels-import-v1',
        `${bundle.format} ${bundle.metadata?.id}`);
      // Open in the explorer: the BER table now shows the imported bundle.
      await page.click('#import-open');
      await page.waitForFunction(() => document.querySelector('#metadata .bundle-id code')?.textContent === 'crows-pairs-labels-import-v1', null, { timeout: 30000 });
      // The Scores view (hidden) arrives on demand shortly after the Overview (src/on_demand.rs).
      await page.waitForSelector('#ber-table td[data-ber]', { state: 'attached', timeout: 30000 });
      const cells = await page.$$eval('#ber-table td[data-ber]', (tds) => tds.map((td) => Number(td.dataset.ber)));
      const want1 = reference.datasets['crows-pairs'].evidence_1;
      const want0 = reference.datasets['crows-pairs'].evidence_0;
      check('crows-pairs: opened in the explorer, its BER equals stereo / (stereo + antistereo) from the pandas counts',
        cells.length === 1 && Math.abs(cells[0] - want1 / (want1 + want0)) < 1e-12, `cells ${cells}`);
    }
  }

  // A broken mapping: a clear error naming the problem; the loaded bundle stays.
  const before = await page.$eval('#metadata .bundle-id code', (c) => c.textContent);
  await showView(page, 'import');
  // The JSON editor sits in the collapsed "Edit as JSON" details of the form-based mapper.
  if (!(await page.$eval('#import-json', (d) => d.open))) await page.click('#import-json summary');
  await page.fill('#import-mapping', '{"mapping_version": 1, "facets": {"model": {"field": "model"}}}');
  await page.click('#import-run');
  await page.waitForSelector('#import-error', { timeout: 30000 });
  const message = await page.$eval('#import-error', (e) => e.textContent);
  const after = await page.$eval('#metadata .bundle-id code', (c) => c.textContent);
  check('a mapping without the statement facet gives an error that names the missing key', /statement/.test(message), message);
  check('after a failed import the loaded bundle is unchanged', before === after, `${before} → ${after}`);
  check('no uncaught page errors', pageErrors.length === 0, pageErrors.join(' | '));
  await context.close();
} finally {
  await browser.close();
  server.close();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
