// End-to-end test of the form-based column mapper on the release build in headless Chromium.
//
//   node tests/e2e/import_form.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// For the CrowS-Pairs CSV and the TrustWare BBQ JSONL (the six Religion_ambig files of
// ../shared/data/raw, concatenated byte for byte into one file, since the browser imports one file):
// chooses the file in the Import view (?view=import), checks the preview headers show the column name
// and its detected type as separate elements on separate lines, accepts the guessed roles (counting
// the corrections made with the dropdowns: at most one), imports through the form, and compares the
// report's counts with tests/import/count_reference.json (computed independently by
// tests/import/count_reference.py with pandas / Python json). Also checks that a dropdown change
// updates the live preview of the mapped rows, and that the "Edit as JSON" editor round-trips: a form
// change shows in the JSON, a JSON edit shows in the form, a JSON syntax error names line and column
// and the form keeps its last valid state. Inputs absent under ../shared/data/raw are skipped with a
// message. First, on a hand-written CSV: the content warning hides the preview's model texts (the
// Rationale's column, any column with a value of 40+ characters) until acknowledged, and asks again
// for a new file; the preview, value-map and mapped-rows tables are the sortable table component;
// the mapping's metadata (title, content warning, source citation) edited in the form shows in the JSON.
// Ends with "N passed, M failed".
import { readFileSync, writeFileSync, existsSync, mkdtempSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shared = process.env.AUDIT_ATLAS_SHARED || resolve(root, '../shared');
const raw = join(shared, 'data/raw');
const reference = JSON.parse(readFileSync(join(root, 'tests/import/count_reference.json'), 'utf8'));

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const bbqFiles = [];
for (const m of ['deepseek-reasoner_results', 'mistralai_mixtral-8x22b-instruct-v0.1_results', 'openai_gpt-oss-20b_results']) {
  for (const f of ['Religion_ambig_consistent.jsonl', 'Religion_ambig_mixed_cant_determine.jsonl']) {
    bbqFiles.push(join(raw, 'trustware-bbq-reasoning', m, f));
  }
}

const inputs = [
  { dataset: 'crows-pairs', files: [join(raw, 'crows-pairs-source/data/crows_pairs_anonymized.csv')],
    expect: { selection: 'stereo_antistereo', statement: 'sent_more', category: 'bias_type' } },
  { dataset: 'trustware-bbq', files: bbqFiles,
    expect: { selection: 'model_responses.{unpivot}.extracted_answer', statement: 'data.pair_index', evidence_field: 'model_responses.{unpivot}.is_cant_determine', rationale: 'model_responses.{unpivot}.reasoning' } },
];

const selectedText = (page, id) => page.$eval(id, (s) => s.options[s.selectedIndex]?.textContent ?? '');

async function openImport(browser, base) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(`${base}?view=import`);
  await page.waitForSelector('#import-file', { timeout: 120000 });
  return { context, page, pageErrors };
}

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
try {
  // The content warning gates the preview's model texts (a hand-written CSV, no shared data needed):
  // the Rationale's column and any column with a value of 40+ characters stay hidden until the
  // reader acknowledges the warning; ids, labels and answers show; a new file asks again.
  {
    const { context, page, pageErrors } = await openImport(browser, base);
    const MARK = 'WARNMARK';
    const csv = 'model,statement,answer,rationale\n'
      + `m1,s1,agree,"${MARK} because that group is always like that, the model said."\n`
      + `m2,s1,disagree,"${MARK} no, that is a stereotype and not a fact about anyone."\n`;
    // The mapping, written out (the guess is not what this part tests).
    const mapping = {
      mapping_version: 1,
      metadata: { id: 'warned-v1', title: 'Warned', description: 'tests/e2e/import_form.mjs', source: { citation: 'tests/e2e/import_form.mjs' },
        license: { id: 'CC0-1.0', attribution: 'none' }, content_warning: null },
      facets: { model: { field: 'model' }, statement: { field: 'statement' } },
      selection: { field: 'answer', map: { agree: 1, disagree: 0 } },
      rationale: { field: 'rationale' },
    };
    const pick = async (name) => {
      await page.setInputFiles('#import-file', { name, mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.waitForSelector('#import-form', { timeout: 60000 });
      if (!(await page.$eval('#import-json', (d) => d.open))) await page.click('#import-json summary');
      await page.fill('#import-mapping', JSON.stringify(mapping));
      await page.waitForSelector('#import-mapped-table', { timeout: 30000 }).catch(() => {});
    };
    await pick('warned.csv');
    const shownText = () => page.evaluate(() => ['#import-preview', '#import-mapped', '#import-value-map'].map((s) => document.querySelector(s)?.textContent ?? '').join(' | '));
    let text = await shownText();
    const warning = await page.$('#import-content-warning');
    check('import: with a file previewed the content warning is shown above the preview, with its button',
      warning !== null && await page.isVisible('#import-show-texts'));
    check('import: before the warning is acknowledged no model text is in the preview, the value map or the mapped rows',
      !text.includes(MARK) && text.includes('hidden until the content warning is acknowledged'), text.slice(0, 300));
    check('import: ids and answers stay visible (m1, agree)', text.includes('m1') && text.includes('agree'), text.slice(0, 300));
    check('import: the preview, value-map and mapped-rows tables are the one sortable table component',
      await page.evaluate(() => ['#import-preview-table', '#import-value-map', '#import-mapped-table'].every((s) => document.querySelector(`${s}.sortable thead th button.sort`))));
    await page.click('#import-show-texts');
    await page.waitForFunction((m) => document.querySelector('#import-preview')?.textContent.includes(m), MARK, { timeout: 5000 }).catch(() => {});
    text = await shownText();
    check('import: after "I understand" the Rationale texts show in the preview and the mapped rows; the warning is gone',
      text.split(MARK).length - 1 >= 4 && (await page.$('#import-content-warning')) === null, text.slice(0, 300));
    // The mapping's metadata as form fields: a change shows in the JSON when the field is left; an
    // emptied content warning is null ("no offensive text"), an emptied title leaves the key out.
    const mappingJson = () => page.$eval('#import-mapping', (t) => JSON.parse(t.value));
    await page.click('#import-metadata summary');
    await page.fill('#import-meta-title', 'A title typed in the form');
    await page.press('#import-meta-title', 'Tab');
    await page.waitForFunction(() => document.querySelector('#import-mapping').value.includes('A title typed in the form'), null, { timeout: 5000 }).catch(() => {});
    let m = await mappingJson();
    check('import: a title typed into "About the bundle" is the mapping\'s metadata.title in the JSON', m.metadata.title === 'A title typed in the form', JSON.stringify(m.metadata));
    check('import: "About the bundle" stays open after the form redraws', await page.$eval('#import-metadata', (d) => d.open));
    await page.fill('#import-meta-content_warning', 'Statements about social groups.');
    await page.press('#import-meta-content_warning', 'Tab');
    await page.waitForFunction(() => document.querySelector('#import-mapping').value.includes('Statements about social groups.'), null, { timeout: 5000 }).catch(() => {});
    m = await mappingJson();
    const warned = m.metadata.content_warning;
    await page.fill('#import-meta-content_warning', '');
    await page.press('#import-meta-content_warning', 'Tab');
    await page.waitForFunction(() => !document.querySelector('#import-mapping').value.includes('Statements about social groups.'), null, { timeout: 5000 }).catch(() => {});
    m = await mappingJson();
    check('import: the content warning field sets metadata.content_warning, and emptied it is null',
      warned === 'Statements about social groups.' && m.metadata.content_warning === null && 'content_warning' in m.metadata, `${warned} / ${JSON.stringify(m.metadata.content_warning)}`);
    await page.fill('#import-meta-source-citation', 'Nangia et al. 2020');
    await page.press('#import-meta-source-citation', 'Tab');
    await page.waitForFunction(() => document.querySelector('#import-mapping').value.includes('Nangia et al. 2020'), null, { timeout: 5000 }).catch(() => {});
    m = await mappingJson();
    check('import: a nested field (source citation) lands in metadata.source.citation', m.metadata.source?.citation === 'Nangia et al. 2020', JSON.stringify(m.metadata.source));
    await pick('again.csv');
    await page.waitForSelector('#import-content-warning', { timeout: 10000 }).catch(() => {});
    text = await shownText();
    check('import: choosing another file asks again (warning back, texts hidden)', (await page.$('#import-content-warning')) !== null && !text.includes(MARK), text.slice(0, 200));
    check('import (content warning): no uncaught page errors', pageErrors.length === 0, pageErrors.join(' | '));
    await context.close();
  }

  for (const input of inputs) {
    const absent = input.files.find((f) => !existsSync(f));
    if (absent) { console.log(`SKIPPED ${input.dataset}: ${absent} is absent`); continue; }
    let file = input.files[0];
    if (input.files.length > 1) {
      file = join(mkdtempSync(join(tmpdir(), 'atlas-import-form-')), 'Religion_ambig_all.jsonl');
      writeFileSync(file, Buffer.concat(input.files.map((f) => readFileSync(f))));
    }
    const { context, page, pageErrors } = await openImport(browser, base);
    await page.setInputFiles('#import-file', file);
    await page.waitForSelector('#import-form', { timeout: 60000 });

    // Preview headers: name and type as separate elements, the type on its own line.
    const headers = await page.$$eval('#import-preview thead th', (ths) => ths.map((th) => {
      const n = th.querySelector('.column-name'), k = th.querySelector('.column-kind');
      const nb = n?.getBoundingClientRect(), kb = k?.getBoundingClientRect();
      return { name: n?.textContent, kind: k?.textContent, below: !!(nb && kb && kb.top >= nb.bottom - 0.5) };
    }));
    check(`${input.dataset}: every preview header has a name element and a type element, the type below the name`,
      headers.length > 0 && headers.every((h) => h.name && h.kind && h.below), JSON.stringify(headers.slice(0, 3)));

    // The guesses, with their reasons.
    let corrections = 0;
    for (const [role, want] of Object.entries(input.expect)) {
      const got = await selectedText(page, `#import-role-${role}`);
      const ok = got.startsWith(want);
      check(`${input.dataset}: the ${role} is guessed as ${want}`, ok, `got ${got}`);
      if (!ok) corrections++;
    }
    const hint = await page.$eval('#import-role-selection-hint', (e) => e.textContent);
    check(`${input.dataset}: the Selection's row says why it was guessed`, /guessed from/.test(hint), hint);
    const missing = await page.$('#import-missing');
    check(`${input.dataset}: no required role is left to choose`, !missing);

    if (input.dataset === 'crows-pairs') {
      const table = await page.$$eval('#import-value-map tbody tr', (trs) => trs.map((tr) => ({
        value: tr.dataset.value, count: Number(tr.querySelector('.num').textContent.replace(/\D/g, '')), cls: tr.querySelector('select').value })));
      const byValue = Object.fromEntries(table.map((r) => [r.value, r]));
      check('crows-pairs: the value table maps stereo → bias evidence and antistereo → no bias evidence, with preview counts',
        byValue.stereo?.cls === 'evidence_1' && byValue.antistereo?.cls === 'evidence_0' && byValue.stereo.count > 0 && byValue.antistereo.count > 0,
        JSON.stringify(table));
      // A dropdown change updates the live mapped rows; changing it back restores them.
      const before = await page.$eval('#import-mapped', (e) => e.textContent);
      const value = await page.$eval('#import-role-selection', (s) => [...s.options].find((o) => o.textContent.startsWith('bias_type'))?.value);
      await page.selectOption('#import-role-selection', value);
      await page.waitForFunction((b) => document.querySelector('#import-mapped')?.textContent !== b, before, { timeout: 10000 });
      const changed = await page.$eval('#import-mapped', (e) => e.textContent);
      check('crows-pairs: choosing another Selection column updates the live preview of the mapped rows (bias_type values are Abstain)',
        changed !== before && /Abstain/.test(changed), changed.slice(0, 200));
      const json1 = JSON.parse(await page.$eval('#import-mapping', (t) => t.value));
      check('JSON editor: a form change shows in the JSON', json1.selection.field === 'bias_type', json1.selection.field);
      // A JSON edit shows in the form.
      await page.click('#import-json summary');
      json1.selection.field = 'stereo_antistereo';
      await page.fill('#import-mapping', JSON.stringify(json1, null, 2));
      await page.waitForFunction(() => { const s = document.querySelector('#import-role-selection'); return s.options[s.selectedIndex].textContent.startsWith('stereo_antistereo'); }, null, { timeout: 10000 });
      const restored = await page.$eval('#import-mapped', (e) => e.textContent);
      check('JSON editor: a JSON edit shows in the form and the live preview', restored === before, restored.slice(0, 200));
      // A syntax error names line and column; the form keeps its last valid state.
      await page.fill('#import-mapping', '{\n  "mapping_version": 1,\n  "facets": {\n');
      await page.waitForSelector('#import-json-error', { timeout: 10000 });
      const err = await page.$eval('#import-json-error', (e) => e.textContent);
      check('JSON editor: a parse error names the line and the column', /line \d+, column \d+/.test(err), err);
      const still = await selectedText(page, '#import-role-selection');
      check('JSON editor: after a parse error the form keeps its last valid state', still.startsWith('stereo_antistereo'), still);
      await page.fill('#import-mapping', JSON.stringify(json1, null, 2));
      await page.waitForFunction(() => !document.querySelector('#import-json-error'), null, { timeout: 10000 });
    }

    check(`${input.dataset}: at most one correction with the dropdowns`, corrections <= 1, `${corrections}`);
    await page.click('#import-run');
    await page.waitForSelector('#import-summary, #import-error', { timeout: 300000 });
    const error = await page.$eval('#import-error', (e) => e.textContent).catch(() => null);
    if (error) {
      check(`${input.dataset}: the import through the form finishes`, false, error);
    } else {
      const got = await page.$eval('#import-summary', (p) => ({ ...p.dataset }));
      const want = reference.datasets[input.dataset];
      const fields = [['records', 'records'], ['cells', 'cells'], ['responses', 'responses'], ['evidence1', 'evidence_1'],
        ['evidence0', 'evidence_0'], ['abstain', 'abstain'], ['duplicates', 'duplicates'], ['skipped', 'records_skipped']];
      const diffs = fields.filter(([ours, theirs]) => Number(got[ours]) !== want[theirs])
        .map(([ours, theirs]) => `${ours}: browser ${got[ours]} vs reference ${want[theirs]}`);
      check(`${input.dataset}: imported through the form mapper, the counts equal the independent pandas counts`, diffs.length === 0, diffs.join('; '));
    }
    check(`${input.dataset}: no uncaught page errors`, pageErrors.length === 0, pageErrors.join(' | '));
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
