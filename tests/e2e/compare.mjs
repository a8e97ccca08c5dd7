// End-to-end test of the Compare view (issue 17 item 1) on the release build in headless Chromium,
// against the CLI:
//
//   node tests/e2e/compare.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Runs `atlas compare static/bundles/decodingtrust-stereotype/bundle.json --json` (the built
// target/release/atlas when ATLAS_BIN names it, else `cargo run -q --release -p atlas-cli --bin atlas`) with
// the default settings (all responses, equal weights, 2,000 replicates, seed 20260722) and once with a
// changed weight, then checks in the page:
//  1. `?view=compare` opens the view; the default pair is the top two of the equal-weight ranking;
//  2. a pair picked with the select (Model A) and one picked by key (ArrowDown on Model B) show the CLI's
//     numbers for that pair: the 2×2 and the exclusions exactly, McNemar exact / mid-p, BH and Holm p
//     bit for bit (full-precision data attributes; the core takes exp/ln from the libm crate on every
//     target) and as shown (the CLI's p text), BER and score differences
//     and their interval ends exactly and as shown (two decimals), the sign-change conditions, the verdict;
//     a pair picked against the report's order shows b and c swapped and the differences negated;
//  3. "Report as JSON" downloads `atlas compare --json`'s report (every key, count and string exactly,
//     floats bit for bit — counted); "Pairs as CSV" `--csv pairs` (the same);
//     "Rank bands as CSV" `--csv bands` byte for byte; the pair table has a row per pair and the matrix a ✓ per
//     separable cell, with a text alternative;
//  4. a weight typed in the Scores view (targeted = 2) moves the score difference to
//     `atlas compare --weights benign=1,untargeted=1,targeted=2`'s;
//  5. the page URL keeps the pair (a=, b=) and a fresh page opened with it shows the same pair;
//  6. at 1280×800 and 390×844 no sideways page scroll, and at 390 px every control of the view is at least
//     44 × 44 px; screenshots of both sizes in both colour schemes in target/e2e-compare/;
//  7. what it took: the worker's paired part, the page's join and report, and (once, on request) the
//     whole `Comparison::new` + `report` on the main thread in wasm (`window.__atlasCompareFullMs`).
// Ends with "N passed, M failed".
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shots = join(root, 'target/e2e-compare');
mkdirSync(shots, { recursive: true });
const BUNDLE = 'static/bundles/decodingtrust-stereotype/bundle.json';

function atlas(args) {
  return process.env.ATLAS_BIN
    ? execFileSync(process.env.ATLAS_BIN, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 27 })
    : execFileSync('cargo', ['run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--', ...args],
      { cwd: root, encoding: 'utf8', maxBuffer: 1 << 27 });
}
const cliText = atlas(['compare', BUNDLE, '--json']);
const cli = JSON.parse(cliText);
const cliPairsCsv = atlas(['compare', BUNDLE, '--csv', 'pairs']);
const cliBandsCsv = atlas(['compare', BUNDLE, '--csv', 'bands']);
const W = 'benign=1,untargeted=1,targeted=2';
const cliW = JSON.parse(atlas(['compare', BUNDLE, '--weights', W, '--json']));
console.log(`atlas compare: ${cli.pairs.length} pairs, ${cli.reps} replicates, seed ${cli.seed}, conditions ${cli.conditions.join(', ')}`);

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}
// As the page and the CLI print them (state::compare::p_text, pp_text, ci_text; U+2212 minus).
const pText = (p) => (p === 0 ? '< 1e-300' : p < 1e-4 ? p.toExponential(2) : p.toFixed(4));
const signed = (x) => { const t = Math.abs(x).toFixed(2); return (x < 0 && Number(t) !== 0 ? '−' : '+') + t; };
const ppText = (x) => (x === null || x === undefined ? '—' : `${signed(x)} pp`);
const ciText = (i) => (i ? `[${signed(i[0])}, ${signed(i[1])}]` : '—');
const num = (a) => (a === '' || a === undefined ? null : Number(a));
const pairOf = (report, a, b) => report.pairs.find((p) => (p.model_a === a && p.model_b === b) || (p.model_a === b && p.model_b === a));

// The pair shown, in the page's orientation, against the CLI's pair (flipped when A is the CLI's B).
async function checkPair(page, report, tag) {
  await page.waitForSelector('#compare-pair', { timeout: 120000 });
  const got = await page.evaluate(() => {
    const el = document.querySelector('#compare-pair');
    const t = (s) => document.querySelector(s)?.textContent.trim() ?? '';
    return { ...el.dataset, ...JSON.parse(el.dataset.values), text: {
      pExact: t('#compare-p-exact'), pMid: t('#compare-p-mid'), pBh: t('#compare-p-bh'), pHolm: t('#compare-p-holm'),
      berDiff: t('#compare-ber-diff'), berCi: t('#compare-ber-ci'), scoreDiff: t('#compare-score-diff'), scoreCi: t('#compare-score-ci'),
      b: t('#compare-b-count'), c: t('#compare-c-count'), sentence: t('#compare-sentence'), separable: t('#compare-separable'),
      provenance: t('#compare-provenance'),
    } };
  });
  const p = pairOf(report, got.a, got.b);
  if (!p) { check(`${tag} the pair ${got.a} / ${got.b} is in the CLI's report`, false); return got; }
  const flip = p.model_a !== got.a;
  check(`${tag} ${got.a} (A) vs ${got.b} (B): orientation ${flip ? 'swapped against' : 'as'} the report`, String(flip) === got.flipped, got.flipped);
  const t = p.table;
  const [b, c] = flip ? [t.b_only, t.a_only] : [t.a_only, t.b_only];
  const [xa, xb] = flip ? [t.excluded.invalid_b_only, t.excluded.invalid_a_only] : [t.excluded.invalid_a_only, t.excluded.invalid_b_only];
  const matched = t.both + t.a_only + t.b_only + t.neither;
  check(`${tag} matched ${matched}, n11 ${t.both}, b ${b}, c ${c}, n00 ${t.neither}, invalid A only ${xa} / B only ${xb} / both ${t.excluded.invalid_both} equal the CLI's`,
    got.matched === matched && got.n11 === t.both && got.b_count === b && got.c_count === c && got.n00 === t.neither
      && got.invalid_a === xa && got.invalid_b === xb && got.invalid_both === t.excluded.invalid_both
      && got.text.b.startsWith(b.toLocaleString('en-US')) && got.text.c.startsWith(c.toLocaleString('en-US')),
    JSON.stringify(got));
  check(`${tag} McNemar exact ${pText(p.mcnemar.p_exact)}, mid-p ${pText(p.mcnemar.p_mid)}, BH ${pText(p.p_bh)}, Holm ${pText(p.p_holm)} equal the CLI's (exactly and as shown)`,
    closeRel(got.p_exact, p.mcnemar.p_exact) && closeRel(got.p_mid, p.mcnemar.p_mid) && closeRel(got.p_bh, p.p_bh) && closeRel(got.p_holm, p.p_holm)
      && got.text.pExact === pText(p.mcnemar.p_exact) && got.text.pMid === pText(p.mcnemar.p_mid)
      && got.text.pBh === pText(p.p_bh) && got.text.pHolm === pText(p.p_holm), JSON.stringify(got.text));
  const s = flip ? -1 : 1;
  const iv = (i) => (i ? (flip ? [-i[1], -i[0]] : i) : null);
  const [berCi, scoreCi] = [iv(p.ber_diff_ci_pp), iv(p.score_diff_ci_pp)];
  const close = (a, e) => (e === null ? a === null : Math.abs(a - e) <= 1e-12 * Math.max(1, Math.abs(e)));
  check(`${tag} BER difference ${ppText(s * p.ber_diff_pp)} ${ciText(berCi)} and score difference ${ppText(s * p.score_diff_pp)} ${ciText(scoreCi)} equal the CLI's`,
    close(got.ber_diff, s * p.ber_diff_pp) && close(got.ber_lo, berCi[0]) && close(got.ber_hi, berCi[1])
      && close(got.score_diff, s * p.score_diff_pp) && close(got.score_lo, scoreCi[0]) && close(got.score_hi, scoreCi[1])
      && got.text.berDiff === ppText(s * p.ber_diff_pp) && got.text.berCi === ciText(berCi)
      && got.text.scoreDiff === ppText(s * p.score_diff_pp) && got.text.scoreCi === ciText(scoreCi), JSON.stringify({ got, p: { ber: p.ber_diff_pp, ci: p.ber_diff_ci_pp, score: p.score_diff_pp, sci: p.score_diff_ci_pp } }));
  check(`${tag} sign changes (${p.sign_changes.join(', ') || 'none'}) and separable (${p.separable}) equal the CLI's`,
    got.signChanges === p.sign_changes.join(';') && got.separable === String(p.separable) && got.text.separable === (p.separable ? 'yes' : 'no'), JSON.stringify(got));
  check(`${tag} the sentence names the matched units, both BERs, the difference and the verdict`,
    got.text.sentence.includes(`On these ${matched.toLocaleString('en-US')} matched`) && got.text.sentence.includes(ppText(s * p.ber_diff_pp))
      && got.text.sentence.includes(p.separable ? 'The audit separates them' : 'cannot separate them'), got.text.sentence);
  check(`${tag} the provenance names bundle, policy, weights, seed and replicates`,
    got.text.provenance.includes(report.bundle) && got.text.provenance.includes(report.policy) && got.text.provenance.includes(report.weights_description)
      && got.text.provenance.includes(`seed ${report.seed}`) && got.text.provenance.includes(`${report.reps} replicates`), got.text.provenance);
  return got;
}

// Every number must be the CLI's bit for bit. (The standard library's exp / ln differ between wasm32 and
// glibc in the last bits, which once showed in the tiniest McNemar p-values — 8.991526592165137e-231 in
// the browser vs 8.991526592161048e-231 natively; the core now takes them from the libm crate on both.)
const REL = 0;
const closeRel = (x, y) => x === y || Math.abs(x - y) <= REL * Math.max(Math.abs(x), Math.abs(y));
function sameJson(got, want, path = '$', out = { numbers: 0, exact: 0, bad: [] }) {
  if (typeof want === 'number' && typeof got === 'number') {
    out.numbers++;
    if (got === want) out.exact++;
    else if (!(Number.isInteger(want) && Number.isInteger(got)) && closeRel(got, want)) { /* within REL */ }
    else out.bad.push({ path, got, want });
  } else if (Array.isArray(want) || (want && typeof want === 'object')) {
    if (typeof got !== 'object' || got === null || Array.isArray(got) !== Array.isArray(want)) { out.bad.push({ path, got, want }); return out; }
    const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
    for (const k of keys) sameJson(got[k], want[k], `${path}.${k}`, out);
  } else if (got !== want) out.bad.push({ path, got, want });
  return out;
}
function sameCsv(got, want) {
  const [g, w] = [got.trim().split('\n'), want.trim().split('\n')];
  const out = { fields: 0, bad: [] };
  if (g.length !== w.length) out.bad.push({ lines: [g.length, w.length] });
  w.forEach((line, i) => {
    const [a, b] = [(g[i] || '').split(','), line.split(',')];
    if (a.length !== b.length) out.bad.push({ line: i, got: g[i], want: line });
    b.forEach((x, j) => {
      out.fields++;
      const [nx, ny] = [Number(a[j]), Number(x)];
      if (a[j] === x) return;
      if (x !== '' && a[j] !== '' && Number.isFinite(nx) && Number.isFinite(ny) && !/^-?\d+$/.test(x) && closeRel(nx, ny)) return;
      out.bad.push({ line: i, field: j, got: a[j], want: x });
    });
  });
  return out;
}

async function download(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 20000 }), page.click(selector)]);
  const stream = await d.createReadStream();
  const chunks = [];
  for await (const c of stream) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

async function noSidewaysScroll(page, tag, width) {
  const w = await page.evaluate(() => document.scrollingElement.scrollWidth);
  check(`${tag} no sideways page scroll (scroll width ${w} <= ${width})`, w <= width, String(w));
}

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
const errors = [];
try {
  // Desktop: the default pair, picking, exports, a weight, the URL.
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.addInitScript(() => { window.__atlasCompareMeasure = true; });
  const t0 = Date.now();
  await page.goto(`${base}?view=compare`);
  await page.waitForSelector('#compare-pair', { timeout: 120000 });
  const readyS = (Date.now() - t0) / 1000;
  const ranked = [...cli.rank_bands.bands].sort((x, y) => x.rank - y.rank || cli.models.indexOf(x.model) - cli.models.indexOf(y.model));
  const first = await checkPair(page, cli, '[desktop default]');
  check(`[desktop] the default pair is the top two of the ranking (${ranked[0].model}, ${ranked[1].model})`,
    first.a === ranked[0].model && first.b === ranked[1].model, `${first.a} / ${first.b}`);
  const timing = await page.evaluate(() => ({ worker: document.querySelector('#compare-pair').dataset.workerMs, report: document.querySelector('#compare-pair').dataset.reportMs }));
  await page.waitForFunction(() => window.__atlasCompareFullMs !== undefined, null, { timeout: 60000 });
  const fullMs = await page.evaluate(() => window.__atlasCompareFullMs);
  console.log(`[desktop] compare view ready ${readyS.toFixed(1)} s after navigation; worker paired part ${timing.worker} ms (request to answer), report on the page ${timing.report} ms; Comparison::new + report on the main thread in wasm: ${fullMs === null ? 'failed' : fullMs.toFixed(0) + ' ms'}`);
  check('[desktop] Comparison::new + report ran on the main thread in wasm once (the measurement)', typeof fullMs === 'number' && fullMs > 0, String(fullMs));

  // Pick by select: Model A = the CLI's last model (against the report order for most pairs).
  const last = cli.models[cli.models.length - 1];
  await page.selectOption('#compare-a', last);
  await page.waitForFunction((m) => document.querySelector('#compare-pair')?.dataset.a === m, last, { timeout: 10000 });
  const bySelect = await checkPair(page, cli, '[desktop select]');
  check('[desktop] the select made the chosen model A', bySelect.a === last, bySelect.a);
  // Pick by key: focus Model B and press ArrowDown (the next model in the list; picking A's model swaps).
  const beforeB = bySelect.b;
  await page.focus('#compare-b');
  await page.keyboard.press(cli.models.indexOf(beforeB) < cli.models.length - 1 ? 'ArrowDown' : 'ArrowUp');
  await page.waitForFunction((b) => document.querySelector('#compare-pair')?.dataset.b !== b, beforeB, { timeout: 10000 });
  const byKey = await checkPair(page, cli, '[desktop key]');
  check('[desktop] the arrow key on Model B changed B', byKey.b !== beforeB, `${beforeB} → ${byKey.b}`);

  // The URL keeps the pair; a fresh page restores it.
  await page.waitForFunction((p) => { const q = new URL(location.href).searchParams; return q.get('a') === p.a && q.get('b') === p.b; }, { a: byKey.a, b: byKey.b }, { timeout: 5000 }).catch(() => {});
  const url = page.url();
  const q = new URL(url).searchParams;
  check('[desktop] the page URL names the pair (a=, b=) and the view', q.get('a') === byKey.a && q.get('b') === byKey.b && (q.get('view') || '').startsWith('compare'), url);

  // Exports.
  const json = await download(page, '#compare-json');
  if (json !== cliText) { writeFileSync(join(shots, 'page-compare.json'), json); writeFileSync(join(shots, 'cli-compare.json'), cliText); }
  const jc = sameJson(JSON.parse(json), cli);
  check(`[desktop] "Report as JSON" equals atlas compare --json (${jc.exact} of ${jc.numbers} numbers bit for bit, the rest within ${REL} relative; every key, count and string exactly; ${json === cliText ? 'byte for byte' : 'not byte for byte'})`,
    jc.bad.length === 0, JSON.stringify(jc.bad.slice(0, 5)));
  const pairsCsv = await download(page, '#compare-pairs-csv');
  if (pairsCsv !== cliPairsCsv) { writeFileSync(join(shots, 'page-pairs.csv'), pairsCsv); writeFileSync(join(shots, 'cli-pairs.csv'), cliPairsCsv); }
  const cc = sameCsv(pairsCsv, cliPairsCsv);
  check(`[desktop] "Pairs as CSV" equals atlas compare --csv pairs (${cc.fields} fields; numbers within ${REL} relative, the rest exactly)`, cc.bad.length === 0, JSON.stringify(cc.bad.slice(0, 5)));
  const bandsCsv = await download(page, '#compare-bands-csv');
  check('[desktop] "Rank bands as CSV" is exactly atlas compare --csv bands', bandsCsv === cliBandsCsv, `${bandsCsv.slice(0, 200)}`);
  const tables = await page.evaluate(() => ({
    rows: document.querySelectorAll('#compare-pairs tbody tr').length,
    headers: [...document.querySelectorAll('#compare-pairs thead th')].map((th) => th.textContent.trim()),
    ticks: document.querySelectorAll('#compare-matrix td.sep-yes').length,
    alt: [...document.querySelectorAll('#compare-matrix td.sep-yes .visually-hidden, #compare-matrix td.sep-no .visually-hidden')].length,
    matrixText: document.querySelector('#compare-matrix-text')?.dataset.separable,
    bands: [...document.querySelectorAll('#compare-bands-table tbody tr')].map((tr) => ({ model: tr.dataset.model, lo: Number(tr.querySelector('td.band').dataset.bandLo), hi: Number(tr.querySelector('td.band').dataset.bandHi) })),
    ties: document.querySelector('#compare-ties')?.dataset.groups,
  }));
  const sepCount = cli.pairs.filter((p) => p.separable).length;
  check(`[desktop] the pair table has ${cli.pairs.length} rows and names both adjustments in its header`,
    tables.rows === cli.pairs.length && tables.headers.some((h) => h.includes('Benjamini–Hochberg')) && tables.headers.some((h) => h.includes('Holm')), JSON.stringify(tables.headers));
  check(`[desktop] the separable matrix has ${2 * sepCount} ✓ cells (both halves) and a text alternative in every off-diagonal cell`,
    tables.ticks === 2 * sepCount && tables.alt === cli.models.length * (cli.models.length - 1) && tables.matrixText === String(sepCount), JSON.stringify(tables));
  const badBands = tables.bands.filter((g) => { const b = cli.rank_bands.bands.find((x) => x.model === g.model); return !b || b.lo !== g.lo || b.hi !== g.hi; });
  check('[desktop] the rank bands and the number of tie groups equal the CLI\'s', tables.bands.length === cli.models.length && badBands.length === 0
    && tables.ties === String(cli.rank_bands.tie_groups.filter((g) => g.length > 1).length), JSON.stringify({ badBands, ties: tables.ties }));
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(shots, 'compare-desktop-light.png'), fullPage: false });
  await page.screenshot({ path: join(shots, 'compare-desktop-light-full.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: join(shots, 'compare-desktop-dark.png'), fullPage: false });
  await page.emulateMedia({ colorScheme: 'light' });
  await noSidewaysScroll(page, '[desktop]', 1280);

  // A weight typed in the Scores view moves the score difference (targeted = 2).
  const targeted = cli.conditions.indexOf('targeted');
  await showView(page, 'scores');
  await page.fill(`#w-${targeted}`, '2');
  await showView(page, 'compare');
  await page.waitForFunction(() => document.querySelector('#compare-provenance')?.textContent.includes('targeted=2'), null, { timeout: 20000 });
  await checkPair(page, cliW, '[desktop weights targeted=2]');
  const wProv = await page.$eval('#compare-provenance', (p) => p.textContent);
  check(`[desktop] after the weight change the provenance names the weights (${cliW.weights_description})`, wProv.includes(cliW.weights_description), wProv);
  await page.close();

  // A fresh page opened with the URL restores the pair.
  const fresh = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  fresh.on('pageerror', (e) => errors.push(String(e)));
  await fresh.goto(url);
  await fresh.waitForSelector('#compare-pair', { timeout: 120000 });
  const restored = await fresh.$eval('#compare-pair', (el) => ({ a: el.dataset.a, b: el.dataset.b }));
  check('[fresh page] the link restores the pair', restored.a === byKey.a && restored.b === byKey.b, JSON.stringify(restored));
  await fresh.close();

  // Phone: no sideways scroll, 44-px controls, screenshots.
  for (const scheme of ['light', 'dark']) {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, colorScheme: scheme });
    phone.on('pageerror', (e) => errors.push(String(e)));
    await phone.goto(`${base}?view=compare&a=${encodeURIComponent(cli.models[1])}&b=${encodeURIComponent(cli.models[0])}`);
    await phone.waitForSelector('#compare-pair', { timeout: 120000 });
    if (scheme === 'light') {
      await checkPair(phone, cli, '[phone link, reversed pair]');
      const small = await phone.evaluate(() => [...document.querySelectorAll('#compare button, #compare select')]
        .filter((el) => el.offsetParent !== null)
        .map((el) => { const r = el.getBoundingClientRect(); return { id: el.id || el.className || el.textContent.trim().slice(0, 20), w: Math.round(r.width), h: Math.round(r.height) }; })
        .filter((r) => r.w < 44 || r.h < 44));
      check('[phone] every button and select of the view is at least 44 × 44 px', small.length === 0, JSON.stringify(small.slice(0, 8)));
    }
    await noSidewaysScroll(phone, `[phone ${scheme}]`, 390);
    await phone.evaluate(() => window.scrollTo(0, 0));
    await phone.screenshot({ path: join(shots, `compare-phone-${scheme}.png`), fullPage: false });
    await phone.evaluate(() => document.querySelector('#compare-matrix')?.scrollIntoView());
    await phone.screenshot({ path: join(shots, `compare-phone-${scheme}-matrix.png`), fullPage: false });
    await phone.close();
  }
  check('no page error', errors.length === 0, errors.join('; '));
} finally {
  await browser.close();
  server.close();
}
console.log(`screenshots: ${shots}/compare-{desktop,phone}-{light,dark}.png`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
