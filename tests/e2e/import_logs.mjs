// End-to-end test of tool logs in the Import view on the release build in headless Chromium.
//
//   node tests/e2e/import_logs.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Picks each committed fixture of tests/fixtures/logs/ in the Import view (?view=import): the two
// Inspect AI .eval logs together (one bundle), the promptfoo results, the lm-evaluation-harness samples
// with the run's results file. For each: the detected format shown, preview rows, the import through the
// reader's preset, and the report's counts against the counts the crate tests use, computed
// independently (tests/fixtures/logs/inspect/expected.json by inspect_ai's own reader,
// tests/fixtures/logs/promptfoo/expected.json by pandas, tests/import/expected_logs.json by pandas);
// "Open in the explorer" opens the bundle. The .eval files are read by Blob.slice ranges (an init script
// counts Blob.prototype.slice calls; no slice covers a whole file). A truncated .eval gives a named
// error and keeps the bundle loaded. A Parquet file is read by the Parquet worker, fetched only then:
// its footer summary, preview, import with tests/fixtures/parquet/long.mapping.json against pyarrow's
// counts (tests/fixtures/parquet/expected.json) and "Open"; a ZSTD file gets the codec error. Several files
// dropped on the window at once: the two .eval logs (and a text file, named as not taken) go to Import
// together and import with the combined counts; a bundle dropped beside a results file opens nothing;
// two CSVs dropped: Import names the one it reads and the one it does not.
// Screenshots (1280×800, 390×844): target/e2e-import-logs/. Ends with "N passed, M failed".
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const logs = join(root, 'tests/fixtures/logs');
const shots = join(root, 'target/e2e-import-logs');
mkdirSync(shots, { recursive: true });
const tmp = mkdtempSync(join(tmpdir(), 'atlas-import-logs-'));

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const inspectExpected = JSON.parse(readFileSync(join(logs, 'inspect/expected.json'), 'utf8')).combined_eval;
const promptfooExpected = JSON.parse(readFileSync(join(logs, 'promptfoo/expected.json'), 'utf8'));
const parquetExpected = JSON.parse(readFileSync(join(root, 'tests/fixtures/parquet/expected.json'), 'utf8'));
const lmevalExpected = JSON.parse(readFileSync(join(root, 'tests/import/expected_logs.json'), 'utf8')).bundle;
const evalFiles = inspectExpected.inputs.map((f) => join(logs, 'inspect', f));
const lmeval = join(logs, 'lm-eval');
const lmevalFiles = ['samples_atlas_bbq_2026-12-02T03-13-24.369283.jsonl',
  'samples_atlas_crows_pairs_2026-12-02T03-13-24.369283.jsonl',
  'results_2026-12-02T03-13-24.369283.json'].map((f) => join(lmeval, f));

const cases = [
  { name: 'Inspect AI .eval (two logs, one bundle)', files: evalFiles, detected: /^Inspect AI log \(\.eval, \d+ members\), 2 files into one bundle$/,
    want: { records: inspectExpected.records, cells: inspectExpected.cells, responses: inspectExpected.responses,
      evidence1: inspectExpected.evidence_1, evidence0: inspectExpected.evidence_0, abstain: inspectExpected.abstain } },
  { name: 'promptfoo results', files: [join(logs, 'promptfoo/results.json')], detected: /^promptfoo results v3$/,
    want: { records: promptfooExpected.records, cells: promptfooExpected.cells, responses: promptfooExpected.responses,
      evidence1: promptfooExpected.evidence_1, evidence0: promptfooExpected.evidence_0, abstain: promptfooExpected.abstain } },
  { name: 'lm-evaluation-harness samples + results', files: lmevalFiles, detected: /^lm-evaluation-harness samples \+ results, 3 files into one bundle$/,
    want: { cells: lmevalExpected.cells, responses: lmevalExpected.responses,
      evidence1: lmevalExpected.evidence_1, evidence0: lmevalExpected.evidence_0, abstain: lmevalExpected.abstain } },
];

// Counts every Blob.slice (a File is a Blob): start, end and the blob's size.
const countSlices = () => {
  window.__slices = [];
  const slice = Blob.prototype.slice;
  Blob.prototype.slice = function (start, end, type) {
    window.__slices.push({ start, end, size: this.size, name: this.name || '' });
    return slice.call(this, start, end, type);
  };
};

const bundleId = (page) => page.$eval('#metadata .bundle-id code', (c) => c.textContent).catch(() => null);

async function choose(page, files) {
  await showView(page, 'import');
  await page.setInputFiles('#import-file', files);
  await page.waitForSelector('#import-preview, #import-preview-error', { timeout: 60000 });
  await page.waitForSelector('#import-detected', { timeout: 10000 });
  return page.$eval('#import-detected strong', (e) => e.textContent);
}

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
try {
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    const size = `${width}×${height}`;
    const context = await browser.newContext({ viewport: { width, height } });
    await context.addInitScript(countSlices);
    const page = await context.newPage();
    const pageErrors = [];
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    const parquetRequests = [];
    page.on('request', (r) => { if (r.url().includes('atlas-parquet-worker')) parquetRequests.push(r.url()); });
    await page.goto(base);
    await showView(page, 'scores', 120000);
    await page.waitForSelector('#ber-table td[data-ber]', { timeout: 120000 });
    const first = await bundleId(page);
    const full = width === 1280;
    for (const c of (full ? cases : cases.slice(0, 1))) {
      await page.evaluate(() => { window.__slices = []; });
      const label = await choose(page, c.files);
      check(`${size} ${c.name}: the detected format is shown`, c.detected.test(label), label);
      const rows = await page.$$eval('#import-preview-table tbody tr', (r) => r.length).catch(() => 0);
      const headers = await page.$$eval('#import-preview-table thead th', (h) => h.length).catch(() => 0);
      check(`${size} ${c.name}: the preview shows rows in the preset's mapped columns`, rows > 0 && headers > 0 && headers <= 16, `${rows} rows, ${headers} columns`);
      if (c.files === evalFiles && !full) {
        await page.screenshot({ path: join(shots, `inspect-eval-${width}x${height}.png`), fullPage: false });
        continue;
      }
      await page.click('#import-run');
      await page.waitForSelector('#import-summary, #import-error', { timeout: 120000 });
      const error = await page.$eval('#import-error', (e) => e.textContent).catch(() => null);
      if (error) { check(`${size} ${c.name}: the import finishes`, false, error); continue; }
      const got = await page.$eval('#import-summary', (p) => ({ ...p.dataset }));
      const diffs = Object.entries(c.want).filter(([k, v]) => Number(got[k]) !== v).map(([k, v]) => `${k}: browser ${got[k]} vs reference ${v}`);
      check(`${size} ${c.name}: the report's counts equal the reference counts`, diffs.length === 0, diffs.join('; '));
      if (c.files === evalFiles) {
        const slices = await page.evaluate(() => window.__slices.filter((s) => s.name.endsWith('.eval')));
        const whole = slices.filter((s) => (s.start ?? 0) <= 0 && (s.end ?? s.size) >= s.size);
        check(`${size} ${c.name}: the .eval files were read by Blob.slice ranges, none covering a whole file`,
          slices.length > 10 && whole.length === 0, `${slices.length} slices, ${whole.length} whole: ${JSON.stringify(whole.slice(0, 3))}`);
        await page.screenshot({ path: join(shots, `inspect-eval-${width}x${height}.png`), fullPage: false });
      }
      const shown = await bundleId(page);
      await page.click('#import-open');
      await page.waitForFunction((id) => { const c = document.querySelector('#metadata .bundle-id code'); return c && c.textContent !== id; }, shown, { timeout: 30000 });
      const note = await page.$eval('#shell-notice', (n) => n.textContent).catch(() => '');
      check(`${size} ${c.name}: "Open in the explorer" opens the bundle and counts its responses`, note.includes(`— ${c.want.responses} responses`), note);
    }
    check(`${size}: the Parquet worker was not fetched before a Parquet file was chosen (after the log imports)`, parquetRequests.length === 0, parquetRequests.join(', '));
    // Several files dropped on the window at once (issue 16, several logs into one bundle): the two
    // .eval logs and a text file go to Import together, the text file named as not taken, and the
    // import gives the combined reference counts; a bundle dropped with a results file opens nothing.
    {
      const dropFiles = (files) => page.evaluate(async (items) => {
        const dt = new DataTransfer();
        for (const { name, b64 } of items) {
          const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
          dt.items.add(new File([bytes], name));
        }
        const target = document.querySelector('footer') || document.body;
        target.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true, cancelable: true }));
        target.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
        target.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
      }, files.map(([name, bytes]) => ({ name, b64: Buffer.from(bytes).toString('base64') })));
      const names = evalFiles.map((f) => f.split('/').pop());
      await showView(page, 'scores');
      await dropFiles([...evalFiles.map((f, i) => [names[i], readFileSync(f)]), ['notes.txt', Buffer.from('not a log')]]);
      await page.waitForSelector('#import-detected', { timeout: 60000 });
      await page.waitForFunction(() => /2 files into one bundle/.test(document.querySelector('#import-detected')?.textContent || ''), null, { timeout: 60000 }).catch(() => {});
      const got = await page.evaluate(() => ({
        url: location.search,
        detected: document.querySelector('#import-detected strong')?.textContent || '',
        dropped: document.querySelector('#import-dropped')?.textContent || '',
        notice: document.querySelector('#shell-notice')?.textContent || '',
      }));
      check(`${size} drop of two .eval logs and a text file: the Import view takes both logs as one bundle`,
        /view=import/.test(got.url) && /^Inspect AI log \(\.eval, \d+ members\), 2 files into one bundle$/.test(got.detected)
        && names.every((n) => got.dropped.includes(n)), JSON.stringify(got));
      check(`${size} drop of two .eval logs and a text file: the notice says 2 files are selected and names the one not taken`,
        got.notice.includes('2 files are selected in Import') && got.notice.includes('Not taken') && got.notice.includes('notes.txt'), got.notice);
      if (full) {
        await page.click('#import-run');
        await page.waitForSelector('#import-summary, #import-error', { timeout: 120000 });
        const sum = await page.$eval('#import-summary', (p) => ({ ...p.dataset })).catch(() => ({}));
        const want = cases[0].want;
        const diffs = Object.entries(want).filter(([k, v]) => Number(sum[k]) !== v).map(([k, v]) => `${k}: ${sum[k]} vs ${v}`);
        check(`${size} the dropped logs import with the combined reference counts`, diffs.length === 0, diffs.join('; ') || JSON.stringify(sum));
        await page.screenshot({ path: join(shots, `drop-two-logs-${width}x${height}.png`), fullPage: false });
      }
      const held = await bundleId(page);
      const bundleBytes = readFileSync(join(root, 'tests/fixtures/tiny-bundle.json'));
      await dropFiles([['tiny.json', bundleBytes], ['r.csv', Buffer.from('model,answer\nm,agree\n')]]);
      await page.waitForFunction(() => /Nothing was opened/.test(document.querySelector('#shell-notice')?.textContent || ''), null, { timeout: 30000 }).catch(() => {});
      const refused = await page.$eval('#shell-notice', (n) => n.textContent).catch(() => '');
      check(`${size} a bundle dropped with a results file opens nothing, says so, and the bundle loaded stays`,
        /Nothing was opened/.test(refused) && refused.includes('tiny.json') && (await bundleId(page)) === held, `${refused} (${held})`);
      await dropFiles([['a.csv', Buffer.from('model,answer\nm,agree\n')], ['b.csv', Buffer.from('model,answer\nm,disagree\n')]]);
      await page.waitForSelector('#import-several', { timeout: 30000 }).catch(() => {});
      const several = await page.$eval('#import-several', (n) => n.textContent).catch(() => '');
      check(`${size} two CSV files dropped: Import says it reads a.csv and names b.csv as not read`,
        several.includes('a.csv is selected') && several.includes('not read: b.csv'), several);
      // A Parquet file dropped on the window goes to Import and is summarised by the Parquet worker.
      const pqDropped = 'pandas_snappy.parquet';
      await dropFiles([[pqDropped, readFileSync(join(root, 'tests/fixtures/parquet', pqDropped))]]);
      await page.waitForFunction(() => /^Parquet: /.test(document.querySelector('#import-detected strong')?.textContent || ''), null, { timeout: 60000 }).catch(() => {});
      const pqDrop = await page.$eval('#import-detected strong', (e) => e.textContent).catch(() => '');
      check(`${size} a Parquet file dropped on the window opens in Import with its footer summary`,
        pqDrop.startsWith(`Parquet: ${parquetExpected.files[pqDropped].rows} rows`) && /view=import/.test(await page.evaluate(() => location.search)), pqDrop);
    }
    // A truncated .eval: a named error, the bundle loaded stays.
    const data = readFileSync(evalFiles[0]);
    const cut = join(tmp, 'truncated.eval');
    writeFileSync(cut, data.subarray(0, Math.floor(data.length / 2)));
    const before = await bundleId(page);
    const dropNotice = await page.$eval('#shell-notice', (n) => n.textContent).catch(() => null);
    await choose(page, [cut]);
    const stale = await page.$eval('#shell-notice', (n) => n.textContent).catch(() => null);
    check(`${size}: a file chosen in Import clears the notice of the earlier drop, which named another file`,
      /pandas_snappy\.parquet is selected in Import/.test(dropNotice ?? '') && stale === null, `before: ${dropNotice}; after: ${stale}`);
    const message = await page.$eval('#import-preview-error', (e) => e.textContent).catch(() => '');
    check(`${size}: a truncated .eval gives the reader's named error`, /truncated\.eval/.test(message) && /\(file\)/.test(message) && /truncated/.test(message), message);
    check(`${size}: after the truncated .eval the bundle loaded is unchanged`, (await bundleId(page)) === before && before !== null, `${before}`);
    // Parquet, read by the Parquet worker fetched only now: the footer summary, the preview rows, the
    // import with the fixtures' mapping and its counts against pyarrow (tests/fixtures/parquet/expected.json).
    const pqFile = 'pandas_snappy.parquet';
    const pqWant = parquetExpected.files[pqFile];
    const label = await choose(page, [join(root, 'tests/fixtures/parquet', pqFile)]);
    check(`${size}: a Parquet file is detected and its footer summarised (rows, row groups, columns, codec, writer as pyarrow reads them)`,
      label === `Parquet: ${pqWant.rows.toLocaleString('en-US')} rows in ${pqWant.row_groups} row group${pqWant.row_groups === 1 ? '' : 's'}, ${pqWant.columns.length} columns, SNAPPY; written by ${pqWant.created_by}`, label);
    check(`${size}: the Parquet worker's files were fetched once a Parquet file was chosen`,
      parquetRequests.some((u) => u.endsWith('atlas-parquet-worker_bg.wasm')), parquetRequests.join(', '));
    const pqRows = await page.$$eval('#import-preview-table tbody tr', (r) => r.length).catch(() => 0);
    const pqHeaders = await page.$$eval('#import-preview-table thead th', (h) => h.length).catch(() => 0);
    check(`${size}: the Parquet preview shows rows under the file's ${pqWant.columns.length} columns`, pqRows > 0 && pqHeaders === pqWant.columns.length, `${pqRows} rows, ${pqHeaders} columns`);
    if (full) {
      if (!(await page.$eval('#import-json', (d) => d.open))) await page.click('#import-json summary');
      await page.fill('#import-mapping', readFileSync(join(root, 'tests/fixtures/parquet/long.mapping.json'), 'utf8'));
      await page.waitForFunction(() => !document.querySelector('#import-json-error'), null, { timeout: 10000 });
      await page.click('#import-run');
      await page.waitForSelector('#import-summary, #import-error', { timeout: 120000 });
      const pqError = await page.$eval('#import-error', (e) => e.textContent).catch(() => null);
      const got = await page.$eval('#import-summary', (p) => ({ ...p.dataset })).catch(() => ({}));
      const want = { records: pqWant.records, cells: pqWant.cells, responses: pqWant.responses, evidence1: pqWant.evidence_1, evidence0: pqWant.evidence_0, abstain: pqWant.abstain };
      const diffs = Object.entries(want).filter(([k, v]) => Number(got[k]) !== v).map(([k, v]) => `${k}: browser ${got[k]} vs pyarrow ${v}`);
      check(`${size}: the Parquet import's counts equal pyarrow's reading of the same file`, !pqError && diffs.length === 0, pqError || diffs.join('; '));
      await page.screenshot({ path: join(shots, `parquet-${width}x${height}.png`), fullPage: false });
      const shownId = await bundleId(page);
      await page.click('#import-open');
      await page.waitForFunction((id) => { const c = document.querySelector('#metadata .bundle-id code'); return c && c.textContent !== id; }, shownId, { timeout: 30000 }).catch(() => {});
      const opened = await bundleId(page);
      check(`${size}: "Open in the explorer" opens the Parquet import`, opened === JSON.parse(readFileSync(join(root, 'tests/fixtures/parquet/long.mapping.json'), 'utf8')).metadata.id, `${opened}`);
    }
    // ZSTD (polars' default) cannot be decoded by the browser build: the reader's error names the
    // codec and points to atlas import; the bundle loaded stays.
    const heldPq = await bundleId(page);
    const zLabel = await choose(page, [join(root, 'tests/fixtures/parquet/polars_zstd.parquet')]);
    const zMessage = await page.$eval('#import-preview-error', (e) => e.textContent).catch(() => '');
    const zWant = parquetExpected.files['polars_zstd.parquet'];
    check(`${size}: a ZSTD Parquet file gets its footer summary (as pyarrow reads it), then the reader's error naming the codec, the column and atlas import`,
      zLabel.startsWith('Parquet')
      && zMessage.startsWith(`Parquet: ${zWant.rows} rows in ${zWant.row_groups} row groups, ${zWant.columns.length} columns, ZSTD; written by ${zWant.created_by}. `)
      && /polars_zstd\.parquet, row group 1, field `\w+`: Parquet column `\w+` uses ZSTD, which the browser build cannot decode; use `atlas import`/.test(zMessage), `${zLabel}: ${zMessage}`);
    check(`${size}: after the ZSTD Parquet file the bundle loaded is unchanged`, (await bundleId(page)) === heldPq, `${heldPq}`);
    if (!full) await page.screenshot({ path: join(shots, `parquet-zstd-${width}x${height}.png`), fullPage: false });
    if (full) check(`${size}: the first bundle was replaced by the imports`, before !== first, `${first}`);
    check(`${size}: no uncaught page errors`, pageErrors.length === 0, pageErrors.join(' | '));
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
