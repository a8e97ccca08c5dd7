// End-to-end test of the one table component and the main chart panel (issue 15 item 5) in headless
// Chromium, at 1280×800 and 390×844:
//
//   node tests/e2e/tables.mjs        (after `trunk build --release`; scripts/test.sh does both)
//
// The BER table (view=scores) sorted by a numeric column by click and by keyboard (Enter, Space):
// the order of the rows equals the order of the values read back from the DOM as numbers AND the order
// of the native CLI's `atlas stats --json` numbers for the same bundle; a second activation reverses;
// aria-sort says the order; missing values stay last; sorting by the model column follows the locale.
// Every sortable table's headers are aligned as their cells; the shown units (one-decimal percent,
// `n = 28,162`, never `—%`); the scroll cue on a clipped table at 390 px; the main chart drawn 1:1 with
// text ≥ 11 CSS px (the font of every fillText call, recorded in the page), hover shows a value inside
// the viewport, arrow keys move, PNG / SVG / CSV exports download; the 1-model and 50-model fixtures
// (tests/fixtures/make_model_count_bundles.py) draw one mark per bar without overflow, their SVG
// export with every text and rect inside its box. Screenshots in target/e2e-tables/.
// Ends with "N passed, M failed".
import { mkdir, readFile } from 'node:fs/promises';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { serveStatic, launchChromium } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = join(root, 'dist');
const shots = join(root, 'target/e2e-tables');
await mkdir(shots, { recursive: true });

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const BUNDLE = join(root, 'static/bundles/decodingtrust-stereotype/bundle.json');
// ATLAS_BIN: an atlas binary already built (else `cargo run --release` builds it).
const [atlasCmd, atlasPre] = process.env.ATLAS_BIN ? [process.env.ATLAS_BIN, []] : ['cargo', ['run', '-q', '--release', '-p', 'atlas-cli', '--bin', 'atlas', '--']];
const cli = JSON.parse(execFileSync(atlasCmd, [...atlasPre, 'stats', '--json', BUNDLE],
  { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'inherit'] }));
const cliModels = new Map(cli.models.map((m) => [m.model, m]));

// Ascending with missing values (null) last; a stable sort like the app's.
function sortedIndices(values, descending) {
  const idx = values.map((_, i) => i);
  return idx.sort((a, b) => {
    const x = values[a], y = values[b];
    if (x === null && y === null) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return descending ? y - x : x - y;
  });
}
const near = (a, b) => a !== null && b !== null && Math.abs(a - b) <= 1e-12;

// The rows of the BER table in DOM order: model id, reference, rank, per condition BER (numbers).
async function berRows(page) {
  return page.$$eval('#ber-table tbody tr', (rows) => rows.map((r) => ({
    model: r.dataset.model,
    label: r.querySelector('th').textContent,
    title: r.querySelector('th').getAttribute('title'),
    reference: r.querySelector('td.reference').dataset.reference === '' ? null : Number(r.querySelector('td.reference').dataset.reference),
    shownReference: r.querySelector('td.reference').childNodes[0]?.textContent ?? '',
    rank: Number(r.querySelector('td.rank').dataset.rank),
    cells: [...r.querySelectorAll('td[data-condition]')].map((td) => ({
      condition: td.dataset.condition, ber: td.dataset.ber === '' ? null : Number(td.dataset.ber),
      shown: td.querySelector('.ber').textContent, counts: td.querySelector('.counts').textContent,
    })),
  })));
}

// Checks that the table's rows are in the order of `key` (ascending or descending) by the DOM values
// and by the CLI's values.
function checkOrder(name, rows, domKey, cliKey, descending) {
  const dom = rows.map(domKey);
  const want = sortedIndices(dom, descending).map((i) => dom[i]);
  check(`${name}: the rows are in ${descending ? 'descending' : 'ascending'} order of the values read from the DOM`,
    dom.every((v, i) => v === want[i]), JSON.stringify(dom));
  const fromCli = rows.map((r) => cliKey(cliModels.get(r.model)));
  const cliOrder = sortedIndices(fromCli, descending).map((i) => fromCli[i]);
  check(`${name}: … and of the CLI's atlas stats numbers (1e-12)`,
    fromCli.every((v, i) => near(v, cliOrder[i])) && dom.every((v, i) => near(v, fromCli[i])), `${JSON.stringify(fromCli)}`);
}

// Every text and rect of an SVG document lies inside its width × height.
function svgInside(svg) {
  const w = Number(/<svg[^>]*width="(\d+)"/.exec(svg)?.[1]);
  const h = Number(/<svg[^>]*height="(\d+)"/.exec(svg)?.[1]);
  const bad = [];
  for (const m of svg.matchAll(/<(text|rect)\b([^>]*)>/g)) {
    const x = Number(/\bx="([-\d.]+)"/.exec(m[2])?.[1] ?? 0), y = Number(/\by="([-\d.]+)"/.exec(m[2])?.[1] ?? 0);
    const rw = Number(/\bwidth="([-\d.]+)"/.exec(m[2])?.[1] ?? 0), rh = Number(/\bheight="([-\d.]+)"/.exec(m[2])?.[1] ?? 0);
    if (x < 0 || y < 0 || x + rw > w + 0.5 || y + rh > h + 0.5) bad.push(m[0].slice(0, 100));
  }
  return { w, h, bad };
}

async function download(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download', { timeout: 20000 }), page.click(selector)]);
  return { name: d.suggestedFilename(), bytes: await readFile(await d.path()) };
}

// Records, per canvas id, the smallest font size (px) any fillText call used.
const FONT_PROBE = () => {
  window.__fonts = {};
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (...args) {
    const px = Number(/(\d+(?:\.\d+)?)px/.exec(this.font)?.[1]);
    const id = this.canvas.id || '?';
    if (px) window.__fonts[id] = Math.min(window.__fonts[id] ?? Infinity, px);
    return fill.apply(this, args);
  };
};

// A CSS point over a bar of the first condition colour (Okabe–Ito blue), the right-most one when
// `rightmost`.
async function barPoint(page, rightmost) {
  return page.$eval('#ber-chart', (c, rightmost) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let best = null;
    for (let y = 0; y < c.height; y += 2) for (let x = 0; x < c.width; x += 2) {
      const i = (y * c.width + x) * 4;
      if (d[i] === 0 && d[i + 1] === 114 && d[i + 2] === 178 && x > 40) {
        if (!best || (rightmost ? x > best.x : false)) best = { x, y };
      }
    }
    if (!best) return null;
    const r = c.getBoundingClientRect();
    return { x: r.left + (best.x + (rightmost ? -3 : 3)) * r.width / c.width, y: r.top + (best.y) * r.height / c.height };
  }, rightmost);
}

async function tipInside(page) {
  return page.$eval('#ber-chart-tip', (t) => {
    const r = t.getBoundingClientRect();
    const s = t.closest('.chart-scroll').getBoundingClientRect();
    return { inside: r.left >= 0 && r.right <= window.innerWidth && r.left >= s.left - 1 && r.right <= s.right + 1, left: r.left, right: r.right, vw: window.innerWidth, text: t.textContent, visible: t.classList.contains('visible') };
  });
}

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
try {
  for (const [w, h] of [[1280, 800], [390, 844]]) {
    const tag = `${w}×${h}`;
    const context = await browser.newContext({ viewport: { width: w, height: h }, acceptDownloads: true });
    await context.addInitScript(FONT_PROBE);
    const page = await context.newPage();
    await page.goto(`${base}?view=scores`);
    await page.waitForSelector('#ber-table td[data-ber]', { timeout: 60000 });
    await page.waitForTimeout(300);

    // Units.
    let rows = await berRows(page);
    check(`${tag}: the BER table shows the CLI's models`, rows.length === cli.models.length && rows.every((r) => cliModels.has(r.model)));
    const cells = rows.flatMap((r) => r.cells);
    check(`${tag}: every BER reads as a percent with one decimal ("13.4 %") and equals the CLI's BER rounded`,
      cells.every((c) => /^\d{1,3}\.\d %$/.test(c.shown)) && rows.every((r) => r.cells.every((c) => Math.abs(parseFloat(c.shown) - 100 * cliModels.get(r.model).conditions[c.condition].ber) <= 0.05 + 1e-9)),
      cells.slice(0, 3).map((c) => c.shown).join(' '));
    check(`${tag}: counts read "n = 28,162 · Abstain 638" with thousands separators`,
      cells.every((c) => /^n = \d{1,3}(,\d{3})* · Abstain \d{1,3}(,\d{3})*$/.test(c.counts)) && cells.some((c) => c.counts.includes(',')), cells[0]?.counts);
    check(`${tag}: the reference scores read as one-decimal percents`, rows.every((r) => /^\d{1,3}\.\d %$/.test(r.shownReference.trim())), rows.map((r) => r.shownReference).join('|'));
    check(`${tag}: model rows show the label with the id on hover`, rows.every((r) => r.title === `model id: ${r.model}`));
    check(`${tag}: no "—%" anywhere on the page`, !(await page.evaluate(() => document.body.innerText.includes('—%'))));

    // Sorting by click: the reference score.
    const refButton = '#ber-table thead th.reference button.sort';
    await page.click(refButton);
    check(`${tag}: a click sorts ascending and aria-sort says so`, await page.getAttribute('#ber-table thead th.reference', 'aria-sort') === 'ascending');
    rows = await berRows(page);
    checkOrder(`${tag}: reference score by click`, rows, (r) => r.reference, (m) => m.reference_score, false);
    await page.click(refButton);
    check(`${tag}: a second click reverses (aria-sort descending)`, await page.getAttribute('#ber-table thead th.reference', 'aria-sort') === 'descending');
    rows = await berRows(page);
    checkOrder(`${tag}: reference score, second click`, rows, (r) => r.reference, (m) => m.reference_score, true);
    check(`${tag}: sorting moves rows but never changes a number`, rows.every((r) => near(r.reference, cliModels.get(r.model).reference_score) && r.rank === cliModels.get(r.model).rank));

    // Sorting by keyboard: the first condition's BER, Enter then Space.
    const cond = rows[0].cells[0].condition;
    const condButton = '#ber-table thead th:nth-child(2) button.sort';
    await page.focus(condButton);
    await page.keyboard.press('Enter');
    rows = await berRows(page);
    check(`${tag}: Enter on a focused header sorts (aria-sort ascending)`, await page.getAttribute('#ber-table thead th:nth-child(2)', 'aria-sort') === 'ascending'
      && await page.getAttribute('#ber-table thead th.reference', 'aria-sort') === 'none');
    checkOrder(`${tag}: ${cond} BER by Enter`, rows, (r) => r.cells[0].ber, (m) => m.conditions[cond].ber, false);
    await page.keyboard.press('Space');
    rows = await berRows(page);
    checkOrder(`${tag}: ${cond} BER by Space (reversed)`, rows, (r) => r.cells[0].ber, (m) => m.conditions[cond].ber, true);
    const displayed = rows.map((r) => parseFloat(r.cells[0].shown));
    check(`${tag}: the shown percentages, parsed as numbers, are in descending order`, displayed.every((v, i) => i === 0 || displayed[i - 1] >= v), JSON.stringify(displayed));

    // The model column sorts as text by the locale.
    await page.click('#ber-table thead th:first-child button.sort');
    rows = await berRows(page);
    const labels = rows.map((r) => r.label);
    const wantLabels = [...labels].sort((a, b) => a.localeCompare(b, undefined, { numeric: true, sensitivity: 'base' }));
    check(`${tag}: the model column sorts by label in the locale's order`, JSON.stringify(labels) === JSON.stringify(wantLabels), JSON.stringify(labels));

    // Alignment: every sortable table's headers as their cells.
    const misaligned = await page.$$eval('table.sortable', (tables) => {
      const norm = (a) => ({ start: 'left', end: 'right' }[a] ?? a);
      const bad = [];
      for (const t of tables) {
        const heads = [...t.querySelectorAll('thead th')];
        for (const tr of t.querySelectorAll('tbody tr')) {
          [...tr.children].forEach((cell, k) => {
            if (!heads[k]) return;
            const a = norm(getComputedStyle(heads[k]).textAlign), b = norm(getComputedStyle(cell).textAlign);
            if (a !== b) bad.push(`${t.id} column ${k + 1} header ${a} cell ${b}`);
          });
        }
      }
      return { bad: [...new Set(bad)], tables: tables.length };
    });
    check(`${tag}: every sortable table's header is aligned as its cells (${misaligned.tables} tables)`, misaligned.tables > 0 && misaligned.bad.length === 0, misaligned.bad.slice(0, 5).join('; '));
    check(`${tag}: the header row is sticky`, await page.$eval('#ber-table thead th', (th) => getComputedStyle(th).position) === 'sticky');
    const region = await page.$eval('#ber-table', (t) => { const s = t.closest('.scroll'); return { role: s.getAttribute('role'), tab: s.getAttribute('tabindex'), label: s.getAttribute('aria-label') }; });
    check(`${tag}: the table scrolls in a focusable, named region`, region.role === 'region' && region.tab === '0' && /BER/.test(region.label ?? ''), JSON.stringify(region));

    // The scroll cue on a clipped table.
    const clipped = await page.$$eval('.table-scroll', (ws) => ws.map((w) => {
      const s = w.querySelector('.scroll');
      return { id: s.querySelector('table')?.id, clipped: s.scrollWidth > s.clientWidth + 1, end: w.classList.contains('clip-end'), cue: getComputedStyle(w, '::after').opacity };
    }));
    check(`${tag}: a clipped table shows the cue at its clipped edge, an unclipped one none`, clipped.every((c) => c.clipped === c.end && (c.end ? c.cue === '1' : c.cue === '0')), JSON.stringify(clipped));
    if (w === 390) {
      check('390 px: the BER table is clipped and shows its cue', clipped.some((c) => c.id === 'ber-table' && c.clipped && c.end), JSON.stringify(clipped));
      await page.$eval('#ber-table', (t) => { const s = t.closest('.scroll'); s.scrollLeft = s.scrollWidth; });
      await page.waitForTimeout(200);
      const after = await page.$eval('#ber-table', (t) => { const w = t.closest('.table-scroll'); return { start: w.classList.contains('clip-start'), end: w.classList.contains('clip-end') }; });
      check('390 px: scrolled to the end, the cue moves to the start edge', after.start && !after.end, JSON.stringify(after));
    }

    // The main chart.
    await page.locator('#ber-chart').scrollIntoViewIfNeeded();
    const chart = await page.$eval('#ber-chart', (c) => ({ width: c.width, client: c.clientWidth, marks: Number(c.dataset.marks), wrap: c.closest('.chart-scroll').clientWidth, font: window.__fonts['ber-chart'] }));
    const cssFont = chart.font * chart.client / chart.width;
    check(`${tag}: the chart is drawn at its container's width (1:1, no overflow)`, Math.abs(chart.width - chart.client) <= 1 && chart.client <= chart.wrap + 1, JSON.stringify(chart));
    check(`${tag}: the chart's smallest text is ≥ 11 CSS px (fillText font × CSS/canvas width)`, cssFont >= 11, `${cssFont.toFixed(1)} px ${JSON.stringify(chart)}`);
    check(`${tag}: one hover mark per model × condition`, chart.marks === cli.models.length * Object.keys(cli.models[0].conditions).length, JSON.stringify(chart));
    const p = await barPoint(page, false);
    await page.mouse.move(p.x, p.y);
    await page.waitForTimeout(200);
    let tip = await tipInside(page);
    check(`${tag}: hovering a bar shows its value`, tip.visible && /Selection BER \d+\.\d %/.test(tip.text), JSON.stringify(tip));
    check(`${tag}: … inside the viewport and the chart`, tip.inside, JSON.stringify(tip));
    const pr = await barPoint(page, true);
    await page.mouse.move(pr.x, pr.y);
    await page.waitForTimeout(250);
    tip = await tipInside(page);
    check(`${tag}: the tooltip of the right-most bar stays inside the viewport`, tip.visible && tip.inside, JSON.stringify(tip));
    await page.mouse.move(1, 1);
    await page.focus('#ber-chart');
    await page.keyboard.press('ArrowRight');
    const t1 = (await tipInside(page)).text;
    await page.keyboard.press('ArrowRight');
    const t2 = (await tipInside(page)).text;
    await page.keyboard.press('End');
    await page.waitForTimeout(250);
    const tEnd = await tipInside(page);
    check(`${tag}: the arrow keys move from bar to bar`, /\(1 of \d+\)/.test(t1) && /\(2 of \d+\)/.test(t2) && t1 !== t2, `${t1} | ${t2}`);
    check(`${tag}: End reaches the last bar, its tooltip inside the viewport`, new RegExp(`\\(${chart.marks} of ${chart.marks}\\)`).test(tEnd.text) && tEnd.inside, JSON.stringify(tEnd));
    await page.keyboard.press('Escape');
    const png = await download(page, '#ber-chart-png');
    check(`${tag}: PNG export downloads a PNG`, png.name.endsWith('-ber-chart.png') && png.bytes.subarray(1, 4).toString() === 'PNG', png.name);
    const svg = await download(page, '#ber-chart-svg');
    const svgText = svg.bytes.toString('utf8');
    const box = svgInside(svgText);
    check(`${tag}: SVG export downloads the chart at the drawn width, every text and rect inside its box`, svg.name.endsWith('-ber-chart.svg') && box.w === chart.width && box.bad.length === 0, `${svg.name} ${box.w} ${box.bad.slice(0, 2).join(' ')}`);
    const csv = await download(page, '#ber-chart-csv');
    const csvText = csv.bytes.toString('utf8');
    check(`${tag}: CSV export downloads the chart's table`, csv.name.endsWith('-ber-chart.csv') && csvText.startsWith('model,') && csvText.trim().split('\n').length === cli.models.length + 1, csvText.slice(0, 120));
    check(`${tag}: the chart has a table alternative`, await page.$$eval('#ber-chart-table tbody tr', (r) => r.length) === cli.models.length);
    await page.screenshot({ path: join(shots, `scores-${w}.png`), fullPage: true });

    // 1 model and 50 models.
    for (const [file, models] of [['one-model-bundle.json', 1], ['fifty-models-bundle.json', 50]]) {
      await page.setInputFiles('#bundle-file', join(root, 'tests/fixtures', file));
      await page.waitForFunction((n) => document.querySelectorAll('#ber-table tbody tr').length === n && document.querySelector('#ber-chart')?.dataset.marks === String(n * 2), models, { timeout: 30000 });
      await page.waitForTimeout(300);
      await page.locator('#ber-chart').scrollIntoViewIfNeeded();
      const c = await page.$eval('#ber-chart', (c) => {
        const r = c.getBoundingClientRect(), s = c.closest('section').getBoundingClientRect();
        return { width: c.width, client: c.clientWidth, height: c.height, right: r.right, sectionRight: s.right, vw: window.innerWidth, font: window.__fonts['ber-chart'] };
      });
      check(`${tag}: ${models} model(s): the chart fits its section and the viewport`, c.right <= c.sectionRight + 1 && c.right <= c.vw && Math.abs(c.width - c.client) <= 1, JSON.stringify(c));
      const s = await download(page, '#ber-chart-svg');
      const b = svgInside(s.bytes.toString('utf8'));
      check(`${tag}: ${models} model(s): the legend, bars and labels lie inside the chart's box (SVG export)`, b.bad.length === 0 && b.w === c.width, b.bad.slice(0, 3).join(' '));
      check(`${tag}: ${models} model(s): the chart grows with the models (${c.height} px)`, models === 1 ? c.height < 400 : c.height > 2000, String(c.height));
      await page.screenshot({ path: join(shots, `${models}-models-${w}.png`), fullPage: models === 1 });
    }
    await context.close();
  }
} catch (e) {
  failed++;
  console.log(`FAIL unexpected error: ${e.stack || e}`);
} finally {
  await browser.close();
  server.close();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
