// End-to-end test of the Clinical view (profile table, figures, heat map → non-robust
// cases → case view, case links) on the release build in headless Chromium.
//
//   node tests/e2e/clinical.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Opens the shipped clinical demo bundle static/bundles/clinical-demo-smollm2/bundle.json via ?bundle= when
// DIST has it, else (while developing) the hand-designed fixture tests/fixtures/clinical-tiny/bundle.json
// (mounted at /fixtures/); the first line of the output says which. Expected numbers come from
// tests/reference/expected_clinical_view.json, written by the independent pandas script
// tests/reference/clinical_view_reference.py (its sha256 of the bundle must match the bundle served, so a
// changed bundle with a stale reference fails here). Then:
//  1. the Table 5 profile: accuracy, CFV, answer change, mean EDD, flags/q and every n equal the reference;
//     the section names the bundle; the CSV buttons are there; no page error on the whole page (every
//     other view also runs on the clinical bundle);
//  2. the heat map has one mark per model × prefix; a non-robust cell (the first with a changed answer) is
//     found with the keyboard (arrow keys read the tooltip), then clicked with the mouse at its centre; the
//     list shows the reference's changed cases of that model × prefix;
//  3. a listed case opens the demographic case view in the Table 4 layout: the fields, the prefix answers,
//     which changed, the EDD and the interpretation equal the reference; no model text before the content
//     warning is acknowledged, then texts appear as text (a <script> in a text creates no element);
//  4. the case's URL opens the same case in a fresh browser context;
//  5. a counterfactual case (the valid example) in the Table 1 layout;
//  6. at 390 px wide the page does not overflow sideways.
// Screenshots go to target/e2e-clinical/. Ends with "N passed, M failed".
import { readFileSync, existsSync, mkdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const fixtures = join(root, 'tests/fixtures');
const shots = join(root, 'target/e2e-clinical');
mkdirSync(shots, { recursive: true });

const reference = JSON.parse(readFileSync(join(root, 'tests/reference/expected_clinical_view.json'), 'utf8'));
const DEMO = 'static/bundles/clinical-demo-smollm2/bundle.json';
const useDemo = existsSync(join(dist, DEMO));
const ref = useDemo ? reference.bundles.demo : reference.bundles.fixture;
if (!ref) {
  console.log(`FAIL no reference for the ${useDemo ? 'demo' : 'fixture'} bundle: run ${reference.command}`);
  process.exit(1);
}
const servedPath = useDemo ? join(dist, DEMO) : join(fixtures, 'clinical-tiny/bundle.json');
console.log(`bundle: ${useDemo ? 'the shipped demo' : 'the development fixture (the demo bundle is not in DIST)'} ${ref.url}`);

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}
const near = (a, b) => (b === null ? a === '' || a === undefined : Math.abs(Number(a) - b) <= 1e-12);

check('the reference was computed from the bundle served (sha256)',
  createHash('sha256').update(readFileSync(servedPath)).digest('hex') === ref.sha256, `rerun ${reference.command}`);

const server = await serveStatic(dist, [['/fixtures/', fixtures]]);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
const errors = [];
function watch(page, label) {
  page.on('pageerror', (e) => errors.push(`${label}: ${e}`));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`${label} console: ${m.text()}`); });
  page.on('dialog', async (d) => { errors.push(`${label} dialog: ${d.message()}`); await d.dismiss(); });
}
async function cellValue(page, key) {
  return page.$eval(`#clinical-table5 td[data-key="${key}"]`, (td) => td.dataset.value).catch(() => undefined);
}
async function fields(page) {
  return page.$$eval('#clinical-case-table tr[data-field]', (rows) => rows.map((r) => r.dataset.field));
}

try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  watch(page, 'main');

  // ---------------------------------------------------------------- 1. the profile table
  await page.goto(`${base}?bundle=${ref.url}`);
  await showView(page, 'clinical');
  await page.waitForSelector('#clinical-table5', { timeout: 60000 });
  const provenance = await page.textContent('#clinical-provenance');
  check('the Clinical view names the bundle', provenance.includes(ref.id), provenance);
  check('the profile table\'s caption names the bundle', (await page.textContent('#clinical-table5-provenance')).includes(ref.id));
  const metrics = ['accuracy', 'answers', 'accuracy_unreadable_wrong', 'asked', 'cfv', 'attempts', 'answer_change', 'comparisons', 'mean_edd', 'records', 'flags_per_question', 'flags', 'questions'];
  const got = {};
  let profileOk = true;
  for (const m of ref.models) {
    got[m] = {};
    for (const k of metrics) {
      got[m][k] = await cellValue(page, `${m}/${k}`);
      if (!near(got[m][k], ref.profile[m][k])) profileOk = false;
    }
  }
  check(`Table 5: accuracy (readable answers, and unreadable counted wrong), CFV, answer change, mean EDD, flags/q and their n for ${ref.models.length} models equal the pandas reference`,
    profileOk, JSON.stringify({ got, want: ref.profile }).slice(0, 1500));
  const headers = await page.$$eval('#clinical-table5 thead th', (t) => t.map((x) => x.textContent));
  check('Table 5 headers give the units', ['Accuracy (%)', 'Accuracy, unreadable counted wrong (%)', 'CFV (%)', 'Answer change (%)', 'Mean EDD', 'Flags/q'].every((h) => headers.includes(h)), JSON.stringify(headers));
  const missing = [];
  for (const t of ['table5', 'table6', 'table7']) if ((await page.$(`#clinical-${t}-csv`)) === null) missing.push(t);
  const absent = {};
  for (const c of ['heatmap', 'cfv', 'failures', 'directions', 'categories']) {
    const why = await page.$(`#clinical-${c}-absent`);
    if (why) absent[c] = await why.textContent();
    else if (!(await Promise.all(['png', 'svg', 'csv'].map((x) => page.$(`#clinical-${c}-${x}`)))).every((e) => e !== null)) missing.push(c);
  }
  check('every clinical table has a CSV export and every chart PNG / SVG / CSV exports, or a sentence why it is not drawn',
    missing.length === 0 && Object.values(absent).every((t) => t.length > 20), JSON.stringify({ missing, absent }));
  check('the heat map is drawn', !absent.heatmap, absent.heatmap);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#clinical-table5-csv')]);
  const csv = readFileSync(await download.path(), 'utf8');
  const m0 = ref.models[0];
  check('the profile CSV carries the unrounded accuracy of the first model', csv.split('\n')[0].startsWith('Model,Accuracy (%)') && (ref.profile[m0].accuracy === null || csv.includes(String(ref.profile[m0].accuracy))), csv.slice(0, 300));
  await page.screenshot({ path: join(shots, 'clinical-overview.png'), fullPage: false });
  await page.$eval('#clinical', (e) => e.scrollIntoView());
  await page.locator('#clinical').screenshot({ path: join(shots, 'clinical-section.png') });

  // ---------------------------------------------------------------- 2. the heat map
  const marks = Number(await page.getAttribute('#clinical-heatmap-canvas', 'data-marks'));
  check('the heat map has one cell per model × prefix', marks === ref.models.length * ref.prefixes.length, `${marks}`);
  let target = null;
  for (const [mi, m] of ref.models.entries()) {
    for (const [pi, p] of ref.prefixes.entries()) {
      if (!target && ref.answer_change[m][p].changed > 0) target = { m, p, index: mi * ref.prefixes.length + pi };
    }
  }
  check('the bundle has a non-robust model × prefix cell to open', target !== null);
  if (target) {
    const want = ref.answer_change[target.m][target.p];
    await page.focus('#clinical-heatmap-canvas');
    for (let i = 0; i <= target.index; i++) await page.keyboard.press('ArrowRight');
    const tip = await page.textContent('#clinical-heatmap-tip');
    check('the arrow keys reach the cell and its tooltip gives model, prefix and k of n',
      tip.includes(`· ${target.p}: answer change`) && tip.includes(`(${want.changed} of ${want.comparisons} comparisons)`), tip);
    // The tooltip sits at the cell's centre: click there with the mouse.
    // data-x: the cell's x (style.left is moved to keep the tooltip inside the chart).
    const at = await page.$eval('#clinical-heatmap-tip', (t) => ({ x: parseFloat(t.dataset.x || t.style.left), y: parseFloat(t.style.top) }));
    await page.keyboard.press('Escape');
    await page.locator('#clinical-heatmap-canvas').click({ position: at });
    await page.waitForSelector('#clinical-cell-summary', { timeout: 5000 });
    const summary = await page.$eval('#clinical-cell-summary', (p) => ({ ...p.dataset, text: p.textContent }));
    check('clicking the cell lists the cases of that model × prefix',
      summary.model === target.m && summary.prefix === target.p && summary.text.includes(`${want.changed} of ${want.comparisons} comparisons`), JSON.stringify(summary));
    const listed = await page.$$eval('#clinical-cell-list a', (a) => a.map((x) => x.dataset.case));
    const expected = [...new Set(want.cases.map((c) => `dr:${target.m}:${c[0]}`))];
    check('the list holds exactly the reference\'s changed comparisons (question by question)',
      listed.length === want.cases.length && JSON.stringify([...new Set(listed)]) === JSON.stringify(expected), `${JSON.stringify(listed)} vs ${JSON.stringify(want.cases)}`);
    await page.locator('#clinical-heatmap').screenshot({ path: join(shots, 'clinical-heatmap.png') });
    await page.keyboard.press('Escape');
    // Keyboard activation opens the same list.
    await page.focus('#clinical-heatmap-canvas');
    await page.keyboard.press('Home');
    for (let i = 0; i < target.index; i++) await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Enter');
    check('Enter on the focused heat-map cell opens the same list', (await page.getAttribute('#clinical-cell-summary', 'data-prefix')) === target.p);

    // ---------------------------------------------------------------- 3. the non-robust case
    const caseKey = listed[0];
    const question = caseKey.slice(`dr:${target.m}:`.length);
    await page.click(`#clinical-cell-list a[data-case="${caseKey}"]`);
    await page.waitForSelector('#clinical-case', { timeout: 5000 });
    check('the link opens the demographic case view', (await page.getAttribute('#clinical-case', 'data-case')) === caseKey);
    const rec = ref.records[`${target.m}\t${question}`];
    const table4 = ['source', 'clinical_case', 'prefix', 'baseline_answer', 'prefix_answers', 'answer_change', 'explanations', 'stereotype', 'edd', 'interpretation'];
    const f = await fields(page);
    check('the case view has the Table 4 fields (source, case, prefix, baseline, six answers, change, explanations, stereotype evidence, EDD, interpretation)',
      table4.every((x) => f.includes(x)), JSON.stringify(f));
    const answers = await page.$$eval('#clinical-prefix-answers li', (l) => l.map((x) => [x.dataset.prefix, x.dataset.answer, x.dataset.changed]));
    const wantAnswers = ref.prefixes.map((p) => [p, rec.answers[p] ?? '', rec.baseline !== null && rec.answers[p] !== null ? (rec.changed.includes(p) ? '1' : '0') : '']);
    check('the prefix answers and which of them changed equal the reference', JSON.stringify(answers) === JSON.stringify(wantAnswers), `${JSON.stringify(answers)} vs ${JSON.stringify(wantAnswers)}`);
    check('the baseline answer is the reference\'s', (await page.textContent('#clinical-baseline')).endsWith(`= ${rec.baseline}`), await page.textContent('#clinical-baseline'));
    check('the record\'s EDD equals the reference', near(await page.getAttribute('#clinical-edd', 'data-edd'), rec.edd), `${await page.getAttribute('#clinical-edd', 'data-edd')} vs ${rec.edd}`);
    const st = await page.textContent('#clinical-stereotype');
    check('the stereotype evidence names the flagged prefixes', rec.flags.every((p) => st.includes(p)) && st.includes(`${rec.flags.length} of ${ref.prefixes.length} prefixes flagged`), st);
    check('the interpretation says non-robust', (await page.getAttribute('#clinical-case .outcome', 'data-robust')) === 'false' && (await page.textContent('#clinical-case .outcome')).startsWith('INVALID ROBUSTNESS CASE'));
    const hidden = await page.$$eval('#clinical-case .hidden-text', (h) => h.length);
    check('no model text before the content warning is acknowledged',
      (await page.$('#clinical-content-warning')) !== null && hidden > 0 && (await page.$$('#clinical-case .model-text')).length === 0, `hidden ${hidden}`);
    await page.click('#clinical-show-texts');
    await page.waitForSelector('#clinical-case .model-text', { timeout: 5000 });
    const texts = await page.$$eval('#clinical-case .model-text', (t) => t.map((x) => x.textContent));
    check('after acknowledging, the explanations are shown', texts.length >= 2 && texts.every((t) => t.length > 0), JSON.stringify(texts).slice(0, 300));
    check('model text is text: no script or other element inside it, no dialog',
      (await page.$$eval('#clinical-case .model-text *', (e) => e.length)) === 0 && (await page.$$eval('#clinical script', (s) => s.length)) === 0);
    if (!useDemo) {
      check('the fixture\'s <script> explanation shows as characters', texts.some((t) => t.includes('<script>alert(1)</script>')), JSON.stringify(texts));
    }
    await page.waitForTimeout(500);
    await page.locator('#clinical-case').screenshot({ path: join(shots, 'clinical-case-dr.png') });
    const caseText = await page.textContent('#clinical-case-table');

    // ---------------------------------------------------------------- 4. the case link in a fresh context
    await page.waitForFunction(() => location.search.includes('ccase='), null, { timeout: 5000 });
    const href = await page.$eval('#clinical-case-link', (a) => a.href);
    const address = page.url();
    check('the case link and the address bar name the bundle, its id, the view and the case',
      [href, address].every((u) => new URL(u).searchParams.get('ccase') === caseKey && new URL(u).searchParams.get('id') === ref.id)
      && new URL(href).searchParams.get('view') === 'clinical-case', `${href} | ${address}`);
    const fresh = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const other = await fresh.newPage();
    watch(other, 'fresh');
    await other.goto(href);
    await other.waitForSelector('#clinical-case', { timeout: 60000 });
    check('the link opens the same case in a fresh page', (await other.getAttribute('#clinical-case', 'data-case')) === caseKey);
    const answersThere = await other.$$eval('#clinical-prefix-answers li', (l) => l.map((x) => [x.dataset.prefix, x.dataset.answer, x.dataset.changed]));
    check('… with the same recorded fields', JSON.stringify(answersThere) === JSON.stringify(answers)
      && (await other.textContent('#clinical-case-table')).includes((await page.textContent('#clinical-baseline'))), '');
    check('… and its model texts hidden again until the warning is acknowledged', (await other.$$('#clinical-case .model-text')).length === 0);
    await fresh.close();
    check('the first page\'s case view kept its texts', caseText.length > 0);
  }

  // ---------------------------------------------------------------- 5. a counterfactual case (Table 1)
  const validEnabled = await page.$eval('#clinical-example-valid', (b) => !b.disabled);
  if (validEnabled) {
    await page.click('#clinical-example-valid');
    await page.waitForFunction(() => document.querySelector('#clinical-case')?.dataset.case?.startsWith('cfv:'), null, { timeout: 5000 });
    const f = await fields(page);
    const table1 = ['source', 'original_case', 'options', 'original_answer', 'target_answer', 'change', 'modified_case', 'modified_answer', 'judge', 'result'];
    check('the valid counterfactual has the Table 1 fields', table1.every((x) => f.includes(x)), JSON.stringify(f));
    check('its CFV result says VALID', (await page.getAttribute('#clinical-case .outcome', 'data-outcome')) === 'valid' && (await page.textContent('#clinical-case .outcome')).startsWith('VALID'));
    await page.waitForTimeout(500);
    await page.locator('#clinical-case').screenshot({ path: join(shots, 'clinical-case-cfv.png') });
  } else {
    check('the bundle has no valid counterfactual, and the Table 1 example button says so', (await page.getAttribute('#clinical-example-valid', 'title')) === 'none in this bundle');
  }
  const invalidEnabled = await page.$eval('#clinical-example-invalid', (b) => !b.disabled);
  if (invalidEnabled) {
    await page.click('#clinical-example-invalid');
    await page.waitForFunction(() => document.querySelector('#clinical-case .outcome')?.dataset.outcome !== 'valid', null, { timeout: 5000 });
    check('an invalid counterfactual says INVALID and why', (await page.textContent('#clinical-case .outcome')).startsWith('INVALID'));
  }

  // ---------------------------------------------------------------- 6. 390 px wide
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
  const small = await phone.newPage();
  watch(small, 'phone');
  await small.goto(`${base}?bundle=${ref.url}`);
  await showView(small, 'clinical');
  await small.waitForSelector('#clinical-table5', { timeout: 60000 });
  await small.click('#clinical-example-nonrobust').catch(() => small.click('#clinical-pick-open'));
  await small.waitForSelector('#clinical-case', { timeout: 5000 });
  await small.waitForTimeout(600);
  const overflow = await small.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  check('at 390 px the page does not overflow sideways', overflow.scroll <= overflow.client, JSON.stringify(overflow));
  await small.screenshot({ path: join(shots, 'clinical-390-case.png'), fullPage: false });
  await small.$eval('#clinical', (e) => e.scrollIntoView());
  await small.screenshot({ path: join(shots, 'clinical-390.png'), fullPage: false });
  await phone.close();

  check('no page errors, console errors or dialogs on any page (every view runs on the clinical bundle)', errors.length === 0, JSON.stringify(errors).slice(0, 1500));
} catch (e) {
  failed++;
  console.log(`FAIL the test stopped: ${e.stack || e}`);
} finally {
  await browser.close();
  server.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
