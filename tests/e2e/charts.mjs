// End-to-end test of the charts' theme, responsiveness and table units (issue 15 items 5 and 7) in
// headless Chromium, at 1280×800 and 390×844, in the light and the dark theme:
//
//   node tests/e2e/charts.mjs        (after `trunk build --release`; scripts/test.sh does both)
//
// On the Scores view of the default bundle, on the Analyses view after a small RQ1 and RQ2 run, and on
// the Clinical view of the shipped clinical demo: every chart canvas fits its container and the page
// does not overflow sideways; the canvas is drawn 1:1 at its container's width; on the phone its
// smallest text is ≥ 11 CSS px, read twice — the app's `data-min-font-px` and, independently, the font
// of every fillText call recorded in the page; a background pixel of each chart (read from the canvas)
// equals the theme's `--chart-bg`; switching the theme (#theme-select) redraws (the pixel changes to
// the new `--chart-bg`); the table alternatives show percentages with one decimal (`13.4 %`, never two
// decimals); the atlas panels (a), (b) follow the RQ1 results and precede RQ2, (e), (f) and the
// coverage curve follow the RQ2 results, in DOM order. Screenshots of the Scores, Analyses and
// Clinical views at both sizes and in both themes in target/e2e-charts/. Ends with "N passed, M failed".
import { mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = join(root, 'dist');
const shots = join(root, 'target/e2e-charts');
await mkdir(shots, { recursive: true });
const CLINICAL = 'static/bundles/clinical-demo-smollm2/bundle.json';

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

// Records, per canvas id, the smallest font size (px) any fillText call used since the last reset,
// and stores the theme choice before the app starts.
const INIT = (theme) => {
  localStorage.setItem('audit-atlas-theme', theme);
  window.__fonts = {};
  const fill = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (...args) {
    const px = Number(/(\d+(?:\.\d+)?)px/.exec(this.font)?.[1]);
    const id = this.canvas.id || '?';
    if (px && String(args[0]).trim()) window.__fonts[id] = Math.min(window.__fonts[id] ?? Infinity, px);
    return fill.apply(this, args);
  };
};

// Every drawn chart canvas of the shown view: size, container, pixel at (2, 2), the theme's
// --chart-bg, fonts, and the table alternative's percent cells.
async function charts(page) {
  return page.evaluate(() => {
    const hex = (r, g, b) => '#' + [r, g, b].map((v) => v.toString(16).padStart(2, '0')).join('');
    const norm = (v) => {
      v = v.trim().toLowerCase();
      if (/^#[0-9a-f]{3}$/.test(v)) v = '#' + [...v.slice(1)].map((c) => c + c).join('');
      const m = /^rgba?\((\d+)[ ,]+(\d+)[ ,]+(\d+)/.exec(v);
      return m ? hex(+m[1], +m[2], +m[3]) : v;
    };
    const bg = norm(getComputedStyle(document.documentElement).getPropertyValue('--chart-bg'));
    const shown = [...document.querySelectorAll('[data-shell-view]')].filter((b) => !b.hidden);
    const canvases = shown.flatMap((b) => [...b.querySelectorAll('.chart-wrap canvas')]);
    return {
      bg,
      pageOverflow: document.documentElement.scrollWidth - window.innerWidth,
      list: canvases.map((c) => {
        const r = c.getBoundingClientRect();
        const box = c.closest('.chart-scroll').getBoundingClientRect();
        const d = c.getContext('2d').getImageData(2, 2, 1, 1).data;
        const panel = c.dataset.panel;
        const cells = [...document.querySelectorAll(`#${panel}-table tbody td`)].map((td) => td.textContent.trim());
        return {
          id: c.id, panel, width: c.width, client: c.clientWidth, right: r.right, boxRight: box.right + 1,
          boxWidth: box.width, pixel: hex(d[0], d[1], d[2]), dataBg: c.dataset.bg,
          minFont: c.dataset.minFontPx === '' ? null : Number(c.dataset.minFontPx),
          fillFont: window.__fonts[c.id] ?? null, marks: Number(c.dataset.marks),
          twoDecimals: cells.filter((t) => /^-?\d+\.\d\d(?!\d)/.test(t)).slice(0, 3),
          percents: cells.filter((t) => /%/.test(t)).length,
          // A percent with two or more decimals, or without the space before its sign.
          badPercents: cells.filter((t) => /\.\d{2,}\s*%/.test(t) || /\d%/.test(t)).slice(0, 3),
        };
      }),
    };
  });
}

// Checks every chart of the shown view (`where`), at viewport width `w`, in theme `theme`.
async function checkCharts(page, where, w, theme, expect) {
  await page.waitForTimeout(400);
  const s = await charts(page);
  const tag = `${w} px ${theme} ${where}`;
  check(`${tag}: ${expect} or more chart canvases are drawn`, s.list.length >= expect && s.list.every((c) => c.marks > 0 || c.panel === 'atlas-d'), JSON.stringify(s.list.map((c) => [c.id, c.marks])));
  check(`${tag}: the page does not overflow sideways`, s.pageOverflow <= 0, String(s.pageOverflow));
  const misfit = s.list.filter((c) => c.right > c.boxRight || Math.abs(c.width - c.client) > 1 || c.width > c.boxWidth + 1);
  check(`${tag}: every chart is drawn 1:1 and fits its container`, misfit.length === 0, JSON.stringify(misfit.slice(0, 2)));
  const wrongBg = s.list.filter((c) => c.pixel !== s.bg || c.dataBg !== s.bg);
  check(`${tag}: a background pixel of every chart is the theme's --chart-bg (${s.bg})`, s.bg.startsWith('#') && wrongBg.length === 0, JSON.stringify(wrongBg.slice(0, 3).map((c) => [c.id, c.pixel, c.dataBg])));
  if (w <= 390) {
    const small = s.list.filter((c) => !(c.minFont >= 11) || !(c.fillFont * c.client / c.width >= 11));
    check(`${tag}: every chart's smallest text is ≥ 11 CSS px (data-min-font-px and the fillText fonts)`, small.length === 0, JSON.stringify(small.slice(0, 3).map((c) => [c.id, c.minFont, c.fillFont, c.client, c.width])));
  }
  const twoDec = s.list.filter((c) => c.twoDecimals.length > 0 || c.badPercents.length > 0);
  check(`${tag}: the chart tables show one-decimal percents (${s.list.reduce((n, c) => n + c.percents, 0)} cells)`, twoDec.length === 0, JSON.stringify(twoDec.slice(0, 2).map((c) => [c.id, c.twoDecimals, c.badPercents])));
  return s;
}

// Switches the theme by the select and checks that every chart is redrawn on the new --chart-bg.
async function switchTheme(page, to, before, w, where) {
  await page.selectOption('#theme-select', to);
  await page.waitForFunction((t) => document.documentElement.dataset.theme === t, to);
  await page.waitForTimeout(400);
  const after = await charts(page);
  const same = after.list.filter((c, i) => c.pixel === before.list[i]?.pixel || c.pixel !== after.bg);
  check(`${w} px ${where}: switching the theme to ${to} redraws every chart (background ${before.bg} → ${after.bg})`,
    after.bg !== before.bg && after.list.length === before.list.length && same.length === 0, JSON.stringify(same.slice(0, 2)));
}

async function runAnalysis(page, key, settings, timeout = 180000) {
  for (const [field, value] of Object.entries(settings)) await page.fill(`#${key}-${field}`, String(value));
  await page.click(`#${key}-run`);
  await page.waitForFunction((k) => document.querySelector(`#${k}-result`) || document.querySelector(`#${k}-error`), key, { timeout });
  return page.$(`#${key}-error`).then((e) => e && e.textContent());
}

// a precedes b in document order.
async function before(page, a, b) {
  return page.evaluate(([a, b]) => {
    const x = document.querySelector(a), y = document.querySelector(b);
    return !!x && !!y && !!(x.compareDocumentPosition(y) & Node.DOCUMENT_POSITION_FOLLOWING);
  }, [a, b]);
}

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();
const errors = [];
try {
  for (const [w, h] of [[1280, 800], [390, 844]]) {
    const context = await browser.newContext({ viewport: { width: w, height: h }, deviceScaleFactor: 1 });
    await context.addInitScript(INIT, 'light');
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(`${w}: ${e}`));

    // Scores: the BER chart and panels (c), (d); light, then dark by the switch.
    await page.goto(`${base}?view=scores`);
    await page.waitForSelector('#ber-chart[data-marks]:not([data-marks="0"])', { timeout: 60000 });
    await page.waitForSelector('#atlas-c-canvas[data-marks]:not([data-marks="0"])', { timeout: 60000 });
    const light = await checkCharts(page, 'Scores', w, 'light', 3);
    await page.screenshot({ path: join(shots, `scores-${w}-light.png`), fullPage: true });
    await switchTheme(page, 'dark', light, w, 'Scores');
    await checkCharts(page, 'Scores', w, 'dark', 3);
    await page.screenshot({ path: join(shots, `scores-${w}-dark.png`), fullPage: true });

    // Analyses: a small RQ1 and RQ2 run; the panels follow their results.
    await showView(page, 'analyses');
    const e1 = await runAnalysis(page, 'rq1', { 'unit-reps': 200, 'cluster-reps': 200 });
    check(`${w} px: RQ1 runs`, !e1, e1 ?? '');
    const e2 = await runAnalysis(page, 'rq2', { draws: 200, bootstrap: 200 });
    check(`${w} px: RQ2 runs`, !e2, e2 ?? '');
    await page.waitForSelector('#atlas-f-canvas[data-marks]:not([data-marks="0"])', { timeout: 30000 });
    check(`${w} px: panels (a) and (b) come right after the RQ1 results, before RQ2`,
      await before(page, '#rq1-result', '#atlas-a') && await before(page, '#atlas-a', '#atlas-b') && await before(page, '#atlas-b', '#rq2'));
    check(`${w} px: panels (e), (f) and the coverage curve come after the RQ2 results`,
      await before(page, '#rq2-result', '#atlas-e') && await before(page, '#atlas-e', '#atlas-f') && await before(page, '#atlas-f', '#atlas-coverage'));
    check(`${w} px: the old #atlas-analyses link target is the RQ1 charts' block`, await before(page, '#rq1-result', '#atlas-analyses') && await before(page, '#atlas-analyses', '#atlas-a'));
    const dark = await checkCharts(page, 'Analyses', w, 'dark', 5);
    await page.screenshot({ path: join(shots, `analyses-${w}-dark.png`), fullPage: true });
    await switchTheme(page, 'light', dark, w, 'Analyses');
    await checkCharts(page, 'Analyses', w, 'light', 5);
    await page.screenshot({ path: join(shots, `analyses-${w}-light.png`), fullPage: true });

    // Clinical: the shipped demo's five figures.
    if (existsSync(join(dist, CLINICAL))) {
      await page.goto(`${base}?bundle=${CLINICAL}&view=clinical`);
      await page.waitForSelector('#clinical-heatmap-canvas[data-marks]:not([data-marks="0"])', { timeout: 60000 });
      // CFV, failure modes, heat map, directions (the demo has no stereotype flags: Fig. 6 says why).
      const cl = await checkCharts(page, 'Clinical', w, 'light', 4);
      await page.screenshot({ path: join(shots, `clinical-${w}-light.png`), fullPage: true });
      await switchTheme(page, 'dark', cl, w, 'Clinical');
      await checkCharts(page, 'Clinical', w, 'dark', 4);
      await page.screenshot({ path: join(shots, `clinical-${w}-dark.png`), fullPage: true });
    } else {
      check(`the clinical demo bundle is in dist (${CLINICAL})`, false);
    }
    await context.close();
  }
  check('no page errors', errors.length === 0, errors.slice(0, 3).join(' | '));
} catch (e) {
  failed++;
  console.log(`FAIL unexpected error: ${e.stack || e}`);
} finally {
  await browser.close();
  server.close();
}
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
