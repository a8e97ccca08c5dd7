// Number fields typed key by key, as a person types them, in headless Chromium (playwright-core).
//
//   node tests/e2e/typing.mjs        (after `trunk build --release`; scripts/test.sh does both)
//
// A field the user is typing in is never rewritten: after every key press the field holds exactly the
// keys pressed so far. An unusable text (empty, "-", "1e", "0,5", negative, out of range, not a number)
// shows its inline message next to the field while the last valid numbers stay; once the text is
// valid, the numbers are those of `atlas reweight` for the same weights (the native CLI, run here),
// and the slider shows the same weight as the field. Covered: the condition weights, the per-sweep
// weight, the bootstrap seed and replicates, the RQ1/RQ2 settings, the pilot's parameters, prices and
// caps, the clinical pilot's and the judge coding's fields. Screenshots at 1280×800 and 390 px in
// target/e2e-typing/. Ends with "N passed, M failed".
import { mkdir } from 'node:fs/promises';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = join(root, 'dist');
const shots = join(root, 'target/e2e-typing');
const BUNDLE = join(root, 'static/bundles/decodingtrust-stereotype/bundle.json');

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

// `atlas reweight` on the default bundle (no bootstrap), as JSON.
function reweight(weights) {
  const text = execFileSync('cargo', ['run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--',
    'reweight', BUNDLE, '--weights', weights, '--bootstrap', '0', '--format', 'json'],
  { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(text);
}

const settle = (page) => page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));

// Clears the field (select all, Backspace), then presses the keys of `text` one by one. Returns what the
// field held and the message it showed after each key: [{ keys, value, message }].
async function typeKeys(page, selector, text, { withRows = false } = {}) {
  await page.click(selector);
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await settle(page);
  const trace = [];
  let keys = '';
  for (const key of text) {
    await page.keyboard.type(key);
    keys += key;
    await settle(page);
    trace.push({ keys, ...(await fieldState(page, selector)), ...(withRows ? { rows: JSON.stringify(await rows(page)) } : {}) });
  }
  return trace;
}
async function fieldState(page, selector) {
  return page.$eval(selector, (el) => ({
    value: el.value,
    message: document.getElementById(`${el.id}-msg`)?.textContent || '',
    invalid: el.getAttribute('aria-invalid') === 'true',
  }));
}
const neverRewritten = (trace) => trace.every((t) => t.value === t.keys);

// The re-weighting table as shown: per model its score (fraction) and rank, full precision.
async function rows(page) {
  return page.$$eval('#reweight-table tbody tr', (trs) => trs.map((r) => ({
    model: r.dataset.model,
    score: Number(r.querySelector('td.score').dataset.value),
    rank: Number(r.querySelector('td.rank').dataset.value),
  })));
}
function sameAsCli(shown, cli) {
  const bad = [];
  for (const r of shown) {
    const m = cli.models.indexOf(r.model);
    if (m < 0) { bad.push(`${r.model}: not in the CLI output`); continue; }
    if (Math.abs(r.score - cli.scores[m]) > 1e-12) bad.push(`${r.model} score ${r.score} vs ${cli.scores[m]}`);
    if (r.rank !== cli.ranks[m]) bad.push(`${r.model} rank ${r.rank} vs ${cli.ranks[m]}`);
  }
  return { ok: shown.length === cli.models.length && bad.length === 0, detail: bad.slice(0, 3).join('; ') };
}
const provenance = (page) => page.textContent('#reweight-provenance');

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
await mkdir(shots, { recursive: true });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(base);
  await showView(page, 'scores');
  await page.waitForSelector('#reweight-table td.score[data-value]', { timeout: 60000 });
  const conditions = await page.$$eval('#reweight-weights .weight-row[data-condition]', (rs) => rs.map((r) => r.dataset.condition));
  check('the default bundle has the three DecodingTrust conditions', JSON.stringify(conditions) === '["benign","untargeted","targeted"]', JSON.stringify(conditions));

  // 0.5 into the benign weight: 0 → 0. → 0.5, each step a number, the field never rewritten.
  let trace = await typeKeys(page, '#w-0', '0.5');
  check('typing 0.5 key by key: the field holds 0, 0., 0.5 — never rewritten', neverRewritten(trace), JSON.stringify(trace));
  check('… and no step shows a message (0 and 0. are numbers)', trace.every((t) => !t.message && !t.invalid), JSON.stringify(trace));
  await page.waitForFunction(() => document.querySelector('#reweight-provenance').textContent.includes('benign=0.5'));
  let cli = reweight('benign=0.5,untargeted=1,targeted=1');
  let cmp = sameAsCli(await rows(page), cli);
  check('weights 0.5 / 1 / 1 typed: every score and rank equals atlas reweight', cmp.ok, cmp.detail);
  check('the benign slider shows 0.5, the typed weight', await page.inputValue('#w-0-range') === '0.5', await page.inputValue('#w-0-range'));

  // 2.5 into the targeted weight: 2 → 2. → 2.5 (it once became 52).
  trace = await typeKeys(page, '#w-2', '2.5');
  check('typing 2.5: the field holds 2, 2., 2.5 (it once became 52)', neverRewritten(trace), JSON.stringify(trace));
  await page.waitForFunction(() => document.querySelector('#reweight-provenance').textContent.includes('targeted=2.5'));
  cli = reweight('benign=0.5,untargeted=1,targeted=2.5');
  const valid = await rows(page);
  cmp = sameAsCli(valid, cli);
  check('weights 0.5 / 1 / 2.5 typed: every score and rank equals atlas reweight', cmp.ok, cmp.detail);
  check('the targeted slider shows 2.5', await page.inputValue('#w-2-range') === '2.5', await page.inputValue('#w-2-range'));
  const validProvenance = await provenance(page);

  // -1 into the untargeted weight: "-" is incomplete, "-1" negative; the numbers stay those of 0.5 / 1 / 2.5.
  trace = await typeKeys(page, '#w-1', '-1');
  check('typing -1: the field holds -, -1 (it once became 1)', neverRewritten(trace), JSON.stringify(trace));
  check('"-" shows "not a complete number yet" inline', /not a complete number yet/.test(trace[0].message) && trace[0].invalid, JSON.stringify(trace[0]));
  check('"-1" shows "negative" inline, naming the condition', /untargeted/i.test(trace[1].message) && /negative/.test(trace[1].message), JSON.stringify(trace[1]));
  check('… and the last valid numbers stay (table and provenance)', JSON.stringify(await rows(page)) === JSON.stringify(valid) && await provenance(page) === validProvenance);
  check('… the slider keeps the last valid weight, 1', await page.inputValue('#w-1-range') === '1', await page.inputValue('#w-1-range'));
  check('the panel says the weights were not applied', /Not applied/.test(await page.textContent('#reweight-error').catch(() => '')));

  // Empty, then ".5": "." is incomplete, ".5" is 0.5.
  await page.keyboard.press('Backspace'); await page.keyboard.press('Backspace'); await settle(page);
  let st = await fieldState(page, '#w-1');
  check('an emptied weight field says it is empty, and the numbers stay', st.value === '' && /empty/.test(st.message) && JSON.stringify(await rows(page)) === JSON.stringify(valid), JSON.stringify(st));
  trace = await typeKeys(page, '#w-1', '.5');
  check('typing .5: the field holds ., .5 (it once became 5)', neverRewritten(trace), JSON.stringify(trace));
  check('"." is incomplete, ".5" is valid', /not a complete number/.test(trace[0].message) && !trace[1].message, JSON.stringify(trace));
  await page.waitForFunction(() => document.querySelector('#reweight-provenance').textContent.includes('untargeted=0.5'));
  cli = reweight('benign=0.5,untargeted=.5,targeted=2.5');
  cmp = sameAsCli(await rows(page), cli);
  check('weights 0.5 / .5 / 2.5 typed: every score and rank equals atlas reweight', cmp.ok, cmp.detail);
  check('the untargeted slider and field agree once valid (0.5)', await page.inputValue('#w-1-range') === '0.5');

  // "1e" (incomplete exponent), "0,5" (decimal comma), "abc": messages; numbers stay.
  // (A valid prefix — the "1" of "1e", the "0" of "0,5" — applies; the numbers then stay those of it.)
  for (const [text, pattern] of [['1e', /not a complete number/], ['0,5', /comma.*write 0\.5/], ['abc', /not a number/]]) {
    const before = JSON.stringify(await rows(page));
    trace = await typeKeys(page, '#w-1', text, { withRows: true });
    const last = trace[trace.length - 1];
    const lastValid = [...trace].reverse().find((t) => !t.message);
    check(`"${text}" stays as typed with its message (${pattern}), and the numbers stay those of the last valid text`,
      neverRewritten(trace) && pattern.test(last.message) && last.rows === (lastValid ? lastValid.rows : before), JSON.stringify({ ...last, rows: undefined }));
  }
  trace = await typeKeys(page, '#w-1', '1e0');
  await page.waitForFunction(() => document.querySelector('#reweight-provenance').textContent.includes('untargeted=1'));
  cmp = sameAsCli(await rows(page), reweight('benign=0.5,untargeted=1,targeted=2.5'));
  check('"1e0" (= 1) is accepted and the numbers follow atlas reweight', neverRewritten(trace) && !trace[2].message && cmp.ok, cmp.detail);

  // Focus leaves the field: an invalid text stays, with its message, never replaced behind the user's back.
  await typeKeys(page, '#w-0', '-');
  await page.focus('#w-2');
  await settle(page);
  st = await fieldState(page, '#w-0');
  check('leaving a field with "-" keeps "-" and its message', st.value === '-' && /complete/.test(st.message), JSON.stringify(st));
  await typeKeys(page, '#w-0', '0.5');

  // Phone-size look at a message in the weight grid.
  await page.setViewportSize({ width: 390, height: 844 });
  await typeKeys(page, '#w-1', '-2');
  await page.$eval('#reweight-weights', (el) => el.scrollIntoView());
  await page.screenshot({ path: join(shots, 'weights-message-390.png') });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  check('at 390 px the weights with an inline message do not overflow sideways', overflow <= 0, `${overflow} px`);
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.$eval('#reweight-weights', (el) => el.scrollIntoView());
  await page.screenshot({ path: join(shots, 'weights-message-1280.png') });
  await typeKeys(page, '#w-1', '1');

  // The per-sweep weight.
  await page.click('#preset-per_sweep');
  await page.waitForSelector('#sw-0:not([disabled])');
  trace = await typeKeys(page, '#sw-0', '0.25');
  check('typing 0.25 into the sweep weight: never rewritten, no message', neverRewritten(trace) && trace.every((t) => !t.message), JSON.stringify(trace));
  await page.waitForFunction(() => /0\.25/.test(document.querySelector('#reweight-provenance').textContent));
  const perSweep = await rows(page);
  trace = await typeKeys(page, '#sw-0', '-');
  check('"-" in the sweep weight: its message, the numbers stay', /complete/.test(trace[0].message) && JSON.stringify(await rows(page)) === JSON.stringify(perSweep), JSON.stringify(trace));
  await page.click('#preset-equal');

  // The bootstrap settings: messages while typing; "Recompute intervals" refuses and keeps the intervals.
  trace = await typeKeys(page, '#reweight-reps', '0');
  check('bootstrap replicates "0": below the smallest value, 1', /smallest allowed value, 1/.test(trace[0].message), JSON.stringify(trace));
  trace = await typeKeys(page, '#reweight-reps', '2,000');
  check('bootstrap replicates "2,000" typed key by key: never rewritten, valid at the end', neverRewritten(trace) && !trace[trace.length - 1].message, JSON.stringify(trace));
  trace = await typeKeys(page, '#reweight-seed', '12x');
  check('bootstrap seed "12x": not a number', /not a number/.test(trace[2].message) && neverRewritten(trace), JSON.stringify(trace));
  await page.click('#reweight-boot-run');
  check('Recompute intervals with that seed is refused by name', /Random seed: “12x” is not a number/.test(await page.textContent('#reweight-boot-error').catch(() => '')));
  await typeKeys(page, '#reweight-seed', '20260722');

  // RQ1 / RQ2 settings: inline messages; Run refuses without losing anything.
  await showView(page, 'analyses');
  trace = await typeKeys(page, '#rq1-seed', '-5');
  check('RQ1 seed "-5": "-" incomplete, "-5" negative, never rewritten', neverRewritten(trace) && /complete/.test(trace[0].message) && /negative/.test(trace[1].message), JSON.stringify(trace));
  await page.click('#rq1-run');
  check('RQ1 Run with that seed says "Not run" and names the field', /Not run: Random seed: “-5” is negative/.test(await page.textContent('#rq1-settings-error').catch(() => '')));
  await typeKeys(page, '#rq1-seed', '20260716');
  trace = await typeKeys(page, '#rq2-draws', '1e3');
  check('RQ2 draws "1e3": not a whole number', /not a whole number/.test(trace[2].message), JSON.stringify(trace));
  trace = await typeKeys(page, '#rq2-budget', '180');
  check('RQ2 budget "180": never rewritten, valid', neverRewritten(trace) && !trace[2].message, JSON.stringify(trace));

  // The pilot's number fields.
  await showView(page, 'pilot');
  const pilotCases = [
    ['#pilot-temperature', '0.7', null],
    ['#pilot-temperature', '3', /largest allowed value, 2/],
    ['#pilot-temperature', '.', /complete/],
    ['#pilot-repeats', '0', /smallest allowed value, 1/],
    ['#pilot-max-tokens', '1.5', /not a whole number/],
    ['#pilot-seed', '42', null],
    ['#pilot-budget', '-', /complete/],
    ['#pilot-max-calls', '500', null],
    ['#pilot-max-cost', '-1', /negative/],
    ['#pilot-max-cost', '2.50', null],
    ['#pilot-concurrency', '65', /largest allowed value, 64/],
    ['#pilot-timeout', '0.5', /smallest allowed value, 1/],
    ['#pilot-per-category', '', null],
    ['#pilot-price-in-m1', '0,5', /comma/],
    ['#pilot-price-out-m1', '1.25', null],
  ];
  for (const [sel, text, pattern] of pilotCases) {
    if (!text) {
      await typeKeys(page, sel, 'x'); await page.keyboard.press('Backspace'); await settle(page);
      st = await fieldState(page, sel);
      check(`${sel} emptied: allowed (no message)`, st.value === '' && !st.message, JSON.stringify(st));
      continue;
    }
    trace = await typeKeys(page, sel, text);
    const last = trace[trace.length - 1];
    const ok = neverRewritten(trace) && (pattern ? pattern.test(last.message) && last.invalid : !last.message && !last.invalid);
    check(`${sel} typed "${text}": never rewritten, ${pattern ? `message ${pattern}` : 'no message'}`, ok, JSON.stringify(last));
  }
  await typeKeys(page, '#pilot-temperature', '0.7');
  await typeKeys(page, '#pilot-price-in-m1', '0.5');

  // The clinical pilot's and the judge coding's fields.
  for (const [sel, text, pattern] of [
    ['#clinical-pilot-n', '0', /smallest allowed value, 1/],
    ['#clinical-pilot-n', '12', null],
    ['#clinical-pilot-judge-temperature', '0.', null],
    ['#clinical-pilot-max-cost', '1e', /complete/],
    ['#bundle-judge-n', '2.5', /not a whole number/],
    ['#bundle-judge-timeout', '30', null],
  ]) {
    if (!(await page.$(sel))) { check(`${sel} is on the page`, false); continue; }
    trace = await typeKeys(page, sel, text);
    const last = trace[trace.length - 1];
    check(`${sel} typed "${text}": never rewritten, ${pattern ? `message ${pattern}` : 'no message'}`,
      neverRewritten(trace) && (pattern ? pattern.test(last.message) : !last.message), JSON.stringify(last));
  }
  await page.$eval('#pilot-temperature', (el) => el.scrollIntoView());
  await page.screenshot({ path: join(shots, 'pilot-fields-1280.png') });
  check('no page error or console error while typing', errors.length === 0, errors.slice(0, 3).join(' | '));
} finally {
  await browser.close();
  server.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
