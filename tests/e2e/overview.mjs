// End-to-end test of the Overview's headline (issue 15, "Overview first") on the release build in
// headless Chromium, against the CLI:
//
//   node tests/e2e/overview.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// Runs `atlas overview static/bundles/decodingtrust-stereotype/bundle.json --json` (the built
// target/release/atlas when ATLAS_BIN names it, else `cargo run -q --release -p atlas-cli --bin atlas`),
// then opens `?view=overview` on the default bundle at 1280×800 and at 390×844 and checks:
//  1. the ranking: the same models in the same order, each row's score and 95% interval equal the CLI's
//     (the full-precision data-score / data-lo / data-hi attributes exactly, and the shown text as
//     percent with one decimal), the rank and the model label with the id on hover;
//  2. every headline finding: the same keys in the same order, its number (data-value) equal to the
//     CLI's, its text equal, and its link goes to `?view=ID` of the view the CLI names;
//  3. the sentence, size and provenance line (bundle id, license, commit) are there;
//  4. at 1280×800 the ranking table starts in the first screen (bounding box top < 800);
//  5. at 390 px the page does not overflow sideways;
//  6. what the headline took in the tab (the section's data-ms; the intervals come from the worker's bootstrap);
//  7. each row's 95 % rank band and the tie-group line equal `atlas compare --json` (issue 17), and under
//     the unit-majority policy — where the default bundle has tie groups — the Overview's and the Scores
//     view's bands and tie-group lines equal `atlas compare --policy unit_majority --json`.
// Screenshots (first screen): target/e2e-overview/overview-desktop.png and overview-phone.png.
// Ends with "N passed, M failed".
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shots = join(root, 'target/e2e-overview');
mkdirSync(shots, { recursive: true });
const BUNDLE = 'static/bundles/decodingtrust-stereotype/bundle.json';

const cliArgs = ['overview', BUNDLE, '--json'];
const cliOut = process.env.ATLAS_BIN
  ? execFileSync(process.env.ATLAS_BIN, cliArgs, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 })
  : execFileSync('cargo', ['run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--', ...cliArgs],
    { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 });
const cli = JSON.parse(cliOut);
// The rank bands (issue 17): `atlas compare BUNDLE --json` at equal weights, the same seed and replicates.
const cmpArgs = ['compare', BUNDLE, '--json'];
const cmp = JSON.parse(process.env.ATLAS_BIN
  ? execFileSync(process.env.ATLAS_BIN, cmpArgs, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 })
  : execFileSync('cargo', ['run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--', ...cmpArgs],
    { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 }));
const bandOf = Object.fromEntries(cmp.rank_bands.bands.map((b) => [b.model, b]));
const rankNum = (x) => { const t = x.toFixed(1); return t.endsWith('.0') ? t.slice(0, -2) : t; };
const bandText = (b) => (Math.abs(b.hi - b.lo) < 1e-9 ? rankNum(b.lo) : `${rankNum(b.lo)} – ${rankNum(b.hi)}`);
const tieGroups = cmp.rank_bands.tie_groups.filter((g) => g.length > 1).length;
console.log(`atlas overview: ${cli.ranking.length} models, ${cli.findings.length} findings, bundle ${cli.bundle}`);

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}
const pct = (f) => `${(f * 100).toFixed(1)}%`;
const same = (attr, value) => (value === null || value === undefined ? attr === '' : Number(attr) === value);

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();

async function run(label, viewport) {
  const page = await browser.newPage({ viewport });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${base}?view=overview`);
  await page.waitForSelector('#headline-ranking tbody tr', { timeout: 60000 });
  // The intervals come from the re-weighting bootstrap in the analysis worker and fill in when it is done.
  await page.waitForFunction(() => document.querySelector('#headline-ranking caption')?.textContent.includes('95% interval and rank band'), null, { timeout: 120000 });
  const got = await page.evaluate(() => {
    const q = (s) => document.querySelector(s);
    const rows = [...document.querySelectorAll('#headline-ranking tbody tr')].map((tr) => ({
      model: tr.dataset.model, score: tr.dataset.score, lo: tr.dataset.lo, hi: tr.dataset.hi,
      rank: tr.querySelector('td.rank')?.textContent.trim(),
      label: tr.querySelector('th.model')?.firstChild?.textContent.trim(),
      title: tr.querySelector('th.model')?.getAttribute('title'),
      scoreText: tr.querySelector('td.score')?.textContent.trim(),
      intervalText: tr.querySelector('td.interval')?.textContent.trim(),
      bandLo: tr.querySelector('td.band')?.dataset.bandLo, bandHi: tr.querySelector('td.band')?.dataset.bandHi,
      bandText: tr.querySelector('td.band')?.textContent.trim(),
    }));
    const findings = [...document.querySelectorAll('#headline-findings li')].map((li) => ({
      key: li.dataset.finding, value: li.dataset.value,
      text: li.firstChild?.textContent ?? '',
      href: li.querySelector('a')?.getAttribute('href') ?? '',
    }));
    const box = q('#headline-ranking').getBoundingClientRect();
    return {
      rows, findings, top: box.top + window.scrollY,
      sentence: q('.headline-sentence')?.textContent ?? '',
      size: q('.headline-size')?.textContent ?? '',
      provenance: q('.headline-provenance')?.textContent ?? '',
      actions: document.querySelectorAll('.headline-actions li').length,
      ms: q('#headline')?.dataset.ms,
      ties: q('#headline-ties')?.dataset.groups, tiesText: q('#headline-ties')?.textContent ?? '',
      scrollWidth: document.scrollingElement.scrollWidth,
    };
  });
  const tag = `[${label}]`;
  check(`${tag} the ranking lists the CLI's models in the CLI's order`,
    JSON.stringify(got.rows.map((r) => r.model)) === JSON.stringify(cli.ranking.map((r) => r.model)),
    JSON.stringify(got.rows.map((r) => r.model)));
  cli.ranking.forEach((r, i) => {
    const row = got.rows[i] || {};
    const [lo, hi] = r.interval || [null, null];
    check(`${tag} ${r.model}: score and 95% interval equal the CLI's (full precision)`,
      same(row.score, r.score) && same(row.lo, lo) && same(row.hi, hi), JSON.stringify(row));
    check(`${tag} ${r.model}: shown as rank ${r.rank}, ${pct(r.score)}, ${pct(lo)} – ${pct(hi)}`,
      row.rank === String(r.rank) && row.scoreText === pct(r.score) && row.intervalText === `${pct(lo)} – ${pct(hi)}`,
      JSON.stringify(row));
    const band = bandOf[r.model];
    check(`${tag} ${r.model}: rank band ${band ? bandText(band) : '?'} equals atlas compare's (2.5–97.5 % of the rank over the same replicates)`,
      band && Number(row.bandLo) === band.lo && Number(row.bandHi) === band.hi && row.bandText === bandText(band), JSON.stringify({ row, band }));
    check(`${tag} ${r.model}: the label is shown, the id on hover`, row.label === r.label && row.title === r.model,
      JSON.stringify(row));
  });
  check(`${tag} the tie-group line names as many unsettled groups as atlas compare (${tieGroups})`,
    got.ties === String(tieGroups) && (tieGroups === 0 ? got.tiesText.includes('settles the whole order') : got.tiesText.includes('cannot settle')),
    JSON.stringify({ ties: got.ties, text: got.tiesText }));
  check(`${tag} the findings are the CLI's, in its order`,
    JSON.stringify(got.findings.map((f) => f.key)) === JSON.stringify(cli.findings.map((f) => f.key)),
    JSON.stringify(got.findings.map((f) => f.key)));
  cli.findings.forEach((f, i) => {
    const g = got.findings[i] || {};
    check(`${tag} finding ${f.key}: number ${f.value} (${f.unit}) and text equal the CLI's`,
      same(g.value, f.value) && g.text.trim() === f.text, JSON.stringify(g));
    const params = new URL(g.href || 'x:', base).searchParams;
    check(`${tag} finding ${f.key} links to ?view=${f.view}`, params.get('view') === f.view, g.href);
  });
  check(`${tag} the sentence says what the bundle is`, got.sentence === cli.sentence, got.sentence);
  check(`${tag} size and provenance: responses, bundle id, license, commit`,
    got.size.includes(cli.size.responses.toLocaleString('en-US')) && got.provenance.includes(cli.provenance.bundle_id)
      && got.provenance.includes(cli.provenance.license) && got.provenance.includes(cli.provenance.commit.slice(0, 8)),
    `${got.size} | ${got.provenance}`);
  check(`${tag} "What you can do here" has three lines`, got.actions === 3, String(got.actions));
  if (label === 'desktop') {
    check(`${tag} the ranking starts in the first screen (top ${Math.round(got.top)} px < ${viewport.height})`,
      got.top < viewport.height, String(got.top));
  } else {
    check(`${tag} no sideways overflow (scroll width ${got.scrollWidth} <= ${viewport.width})`,
      got.scrollWidth <= viewport.width, String(got.scrollWidth));
  }
  console.log(`${tag} headline computed in ${got.ms} ms in the tab (without the bootstrap, which runs in the worker); ranking top at ${Math.round(got.top)} px`);
  await page.screenshot({ path: join(shots, `overview-${label}.png`) });
  check(`${tag} no page error`, errors.length === 0, errors.join('; '));
  await page.close();
}

// Under the unit-majority repeat policy the default bundle has tie groups (atlas compare --policy
// unit_majority): the Overview and the Scores view's re-weighting table show the same bands, and the
// tie-group line names every group of more than one model.
async function tieGroupsUnderUnitMajority() {
  const args = ['compare', BUNDLE, '--policy', 'unit-majority', '--json'];
  const um = JSON.parse(process.env.ATLAS_BIN
    ? execFileSync(process.env.ATLAS_BIN, args, { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 })
    : execFileSync('cargo', ['run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--', ...args],
      { cwd: root, encoding: 'utf8', maxBuffer: 1 << 26 }));
  const groups = um.rank_bands.tie_groups.filter((g) => g.length > 1);
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  for (const view of ['overview', 'scores']) {
    await page.goto(`${base}?view=${view}&policy=unit_majority`);
    const sel = view === 'overview' ? '#headline-ranking tbody tr td.band' : '#reweight-table tbody tr td.band';
    await page.waitForFunction((s) => [...document.querySelectorAll(s)].length > 0
      && [...document.querySelectorAll(s)].every((td) => (td.dataset.bandLo ?? td.dataset.lo) !== ''), sel, { timeout: 120000 });
    const got = await page.$$eval(sel, (tds) => tds.map((td) => ({ model: td.closest('tr').dataset.model,
      lo: Number(td.dataset.bandLo ?? td.dataset.lo), hi: Number(td.dataset.bandHi ?? td.dataset.hi) })));
    const bad = got.filter((g) => { const b = um.rank_bands.bands.find((x) => x.model === g.model); return !b || b.lo !== g.lo || b.hi !== g.hi; });
    check(`[unit_majority ${view}] ${got.length} rank bands equal atlas compare --policy unit_majority's`, got.length === um.models.length && bad.length === 0, JSON.stringify(bad));
    const line = view === 'overview' ? '#headline-ties' : '#reweight-ties';
    const ties = await page.$eval(line, (p) => ({ n: p.dataset.groups, text: p.textContent }));
    check(`[unit_majority ${view}] the tie-group line names its ${groups.length} groups of models the audit cannot order`,
      groups.length > 0 && ties.n === String(groups.length) && ties.text.includes('cannot settle') && (ties.text.match(/\{/g) || []).length === groups.length,
      JSON.stringify({ ties, groups }));
  }
  check('[unit_majority] no page error', errors.length === 0, errors.join('; '));
  await page.close();
}

try {
  await run('desktop', { width: 1280, height: 800 });
  await run('phone', { width: 390, height: 844 });
  await tieGroupsUnderUnitMajority();
} finally {
  await browser.close();
  server.close();
}
console.log(`screenshots: ${shots}/overview-desktop.png, overview-phone.png`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
