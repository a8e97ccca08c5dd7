// Accessibility end-to-end test (issue 15 items 4 and 7) on the release build in headless Chromium.
//
//   node tests/e2e/a11y.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// At 1280×800 and 390×844, in the light and the dark color scheme (emulated prefers-color-scheme, the
// theme switch on Auto), for each view (`?view=ID`; before the app shell lands every section is on one
// page, so each URL shows the whole page):
//  1. on the phone, no visible control (button, a, input, select, textarea, summary, [role=button],
//     [tabindex]) is smaller than 44×44 px — a checkbox or radio counts with its label; offenders are
//     listed by selector and size;
//  2. every visible text element has a contrast ratio ≥ 4.5:1 (≥ 3:1 for large text: ≥ 24 px, or
//     ≥ 18.67 px bold), computed from the computed styles: the text color (with the opacity of the element
//     and its ancestors) over the first opaque background found walking up, the translucent layers on the
//     way blended in (WCAG 2.x relative luminance); disabled controls are exempt (WCAG 1.4.3);
//  3. the page does not scroll sideways (document width ≤ viewport width);
// and once per size and scheme:
//  4. Tab moves the focus to elements that show a focus ring (computed outline width > 0);
//  5. every glossary term on the page opens by keyboard (focus, Enter), its popover lies inside the
//     viewport, links to an existing glossary entry, and Escape closes it with the focus kept on the term;
//  6. the theme switch sets data-theme on <html> and the choice survives a reload (dark and light);
//  7. printing (emulated print media) hides navigation, controls and the theme switch (computed display
//     none) and keeps the provenance caption; a PDF and a screenshot are written.
// Screenshots and the PDF go to target/e2e-a11y/. Ends with "N passed, M failed".
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const out = join(root, 'target/e2e-a11y');
mkdirSync(out, { recursive: true });

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

const SIZES = [{ w: 1280, h: 800, name: 'desktop' }, { w: 390, h: 844, name: 'phone' }];
const SCHEMES = ['light', 'dark'];
// The views of the default bundle (clinical needs a clinical bundle: checked with the clinical demo).
const VIEWS = ['overview', 'scores', 'compare', 'analyses', 'plan', 'rationale', 'cases', 'import', 'pilot'];
const CLINICAL = 'static/bundles/clinical-demo-smollm2/bundle.json';

// --- In-page measurements (run with page.evaluate; no app code involved). ---

// Visible controls smaller than 44×44 px: [{ sel, w, h }]. A checkbox/radio is measured by its label.
function smallTargets() {
  const sel = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += `#${el.id}`;
    else if (el.classList.length) s += '.' + [...el.classList].join('.');
    const t = (el.textContent || el.getAttribute('aria-label') || '').trim().slice(0, 30);
    return t ? `${s} "${t}"` : s;
  };
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return false;
    const cs = getComputedStyle(el);
    return cs.visibility !== 'hidden' && cs.display !== 'none' && !el.closest('[hidden]');
  };
  const found = [];
  const controls = document.querySelectorAll('button, a[href], input, select, textarea, summary, [role="button"], [tabindex]');
  for (const el of controls) {
    if (el.getAttribute('tabindex') === '-1' && !el.matches('button, a[href], input, select, textarea, summary')) continue;
    if (el.type === 'hidden' || el.classList.contains('visually-hidden')) continue;
    if (!visible(el)) continue;
    let box = el;
    if (el.matches('input[type="checkbox"], input[type="radio"]')) box = el.closest('label') || el;
    const r = box.getBoundingClientRect();
    if (r.width < 2 && r.height < 2) continue; // visually hidden (e.g. a file input behind its label)
    if (r.width < 44 - 0.5 || r.height < 44 - 0.5) found.push({ sel: sel(el), w: Math.round(r.width), h: Math.round(r.height) });
  }
  return found;
}

// Visible text elements below WCAG AA contrast: [{ sel, ratio, need, fg, bg }], and the count checked.
function lowContrast() {
  const parse = (c) => {
    const m = c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return { r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1 };
  };
  const over = (top, bottom) => ({
    r: top.r * top.a + bottom.r * (1 - top.a),
    g: top.g * top.a + bottom.g * (1 - top.a),
    b: top.b * top.a + bottom.b * (1 - top.a),
    a: 1,
  });
  const lum = (c) => {
    const ch = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * ch(c.r) + 0.7152 * ch(c.g) + 0.0722 * ch(c.b);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  // The background under an element: translucent layers blended down to the first opaque one (white
  // if none: the canvas default).
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) break; }
    }
    let bg = { r: 255, g: 255, b: 255, a: 1 };
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const bad = [];
  let checked = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim()) continue;
    const el = n.parentElement;
    if (!el || seen.has(el)) continue;
    seen.add(el);
    if (el.closest('[hidden], script, style, noscript, canvas, .visually-hidden, option')) continue;
    if (el.closest(':disabled, [aria-disabled="true"]')) continue; // WCAG 1.4.3: inactive controls exempt
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.display === 'none') continue;
    const fg = parse(cs.color);
    if (!fg) continue;
    let opacity = 1;
    for (let e = el; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
    if (opacity === 0) continue;
    const bg = background(el);
    const ink = over({ ...fg, a: fg.a * opacity }, bg);
    const px = parseFloat(cs.fontSize);
    const large = px >= 24 || (px >= 18.66 && Number(cs.fontWeight) >= 700);
    const need = large ? 3 : 4.5;
    const got = ratio(ink, bg);
    checked++;
    if (got < need - 0.005) {
      let s = el.tagName.toLowerCase() + (el.id ? `#${el.id}` : '') + (el.classList.length ? '.' + [...el.classList].join('.') : '');
      bad.push({ sel: `${s} "${n.textContent.trim().slice(0, 30)}"`, ratio: Number(got.toFixed(2)), need, fg: cs.color, bg: `rgb(${bg.r.toFixed(0)}, ${bg.g.toFixed(0)}, ${bg.b.toFixed(0)})` });
    }
  }
  return { bad, checked };
}

const list = (items) => items.slice(0, 12).map((o) => JSON.stringify(o)).join('\n      ') + (items.length > 12 ? `\n      … and ${items.length - 12} more` : '');

const server = await serveStatic(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await launchChromium();

async function openPage(size, scheme, query) {
  const context = await browser.newContext({ viewport: { width: size.w, height: size.h }, colorScheme: scheme, deviceScaleFactor: 1, hasTouch: size.name === 'phone', isMobile: false });
  const page = await context.newPage();
  page.on('pageerror', (e) => console.log(`  page error: ${e.message}`));
  await page.goto(base + query);
  await page.waitForSelector('#metadata', { state: 'attached', timeout: 60000 });
  await page.waitForTimeout(400);
  return { context, page };
}

try {
  // The detectors themselves: planted offenders must be found (so a passing run means something).
  {
    const { context, page } = await openPage(SIZES[1], 'light', '?view=overview');
    await page.evaluate(() => {
      const box = document.createElement('div');
      box.id = 'a11y-planted';
      box.style.background = '#ffffff';
      box.innerHTML = '<button id="planted-small" style="min-height:0;min-width:0;width:20px;height:20px;padding:0">x</button>'
        + '<p id="planted-grey" style="color:#999999">grey on white, 2.85:1</p>'
        + '<p id="planted-ok" style="color:#767676">#767676 on white, 4.54:1</p>';
      document.body.prepend(box);
    });
    const small = await page.evaluate(smallTargets);
    const { bad } = await page.evaluate(lowContrast);
    check('detector: a planted 20×20 button is reported as too small', small.some((o) => o.sel.startsWith('button#planted-small') && o.w === 20 && o.h === 20), JSON.stringify(small.slice(0, 3)));
    check('detector: planted #999 on white (2.85:1) is reported and #767676 (4.54:1) is not',
      bad.some((o) => o.sel.startsWith('p#planted-grey') && Math.abs(o.ratio - 2.85) < 0.01) && !bad.some((o) => o.sel.startsWith('p#planted-ok')), JSON.stringify(bad.slice(0, 3)));
    await context.close();
  }
  for (const size of SIZES) {
    for (const scheme of SCHEMES) {
      const tag = `${size.w}×${size.h} ${scheme}`;
      const views = [...VIEWS.map((v) => [v, `?view=${v}`]), ['clinical', `?bundle=${CLINICAL}&view=clinical`]];
      for (const [view, query] of views) {
        const { context, page } = await openPage(size, scheme, query);
        await page.screenshot({ path: join(out, `${view}-${size.w}-${scheme}.png`) });
        if (size.name === 'phone') {
          const small = await page.evaluate(smallTargets);
          check(`${tag} ${view}: no visible control smaller than 44×44 px`, small.length === 0, `${small.length} offenders:\n      ${list(small)}`);
        }
        const { bad, checked } = await page.evaluate(lowContrast);
        check(`${tag} ${view}: all ${checked} visible text elements meet WCAG AA contrast`, checked > 20 && bad.length === 0, `${bad.length} offenders:\n      ${list(bad)}`);
        const overflow = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
        check(`${tag} ${view}: the page does not scroll sideways (${overflow[0]} ≤ ${overflow[1]} px)`, overflow[0] <= overflow[1], JSON.stringify(overflow));
        await context.close();
      }

      // Focus ring on Tab, glossary terms, print: on the Overview.
      const { context, page } = await openPage(size, scheme, '?view=overview');
      const rings = [];
      for (let i = 0; i < 12; i++) {
        await page.keyboard.press('Tab');
        rings.push(await page.evaluate(() => {
          const el = document.activeElement;
          if (!el || el === document.body) return null;
          const cs = getComputedStyle(el);
          return { sel: el.tagName.toLowerCase() + (el.id ? `#${el.id}` : ''), width: parseFloat(cs.outlineWidth), style: cs.outlineStyle };
        }));
      }
      const focused = rings.filter(Boolean);
      const noRing = focused.filter((r) => !(r.width > 0 && r.style !== 'none'));
      check(`${tag}: Tab reaches ${focused.length} elements and each shows a focus ring (outline > 0)`, focused.length >= 5 && noRing.length === 0, JSON.stringify(noRing));

      const terms = await page.$$eval('.term-button', (els) => els.filter((e) => e.getBoundingClientRect().width > 0 && !e.closest('[hidden]')).length);
      const results = [];
      for (let i = 0; i < terms; i++) {
        const button = page.locator('.term-button:visible').nth(i);
        await button.focus();
        await page.keyboard.press('Enter');
        await page.waitForTimeout(60);
        const r = await button.evaluate((b) => {
          const pop = document.getElementById(b.getAttribute('aria-controls'));
          const rect = pop.getBoundingClientRect();
          const more = pop.querySelector('a.term-more');
          const target = more && document.getElementById(more.getAttribute('href').slice(1));
          return {
            term: b.dataset.term, expanded: b.getAttribute('aria-expanded'), shown: !pop.hidden && rect.width > 0,
            left: rect.left, right: rect.right, vw: document.documentElement.clientWidth, linked: !!target,
            tabbable: b.tabIndex >= 0,
          };
        });
        await page.keyboard.press('Escape');
        await page.waitForTimeout(30);
        const after = await button.evaluate((b) => ({ expanded: b.getAttribute('aria-expanded'), hidden: document.getElementById(b.getAttribute('aria-controls')).hidden, focused: document.activeElement === b }));
        results.push({ ...r, closed: after.expanded === 'false' && after.hidden, kept: after.focused });
      }
      const badTerms = results.filter((r) => !(r.expanded === 'true' && r.shown && r.left >= 0 && r.right <= r.vw + 0.5 && r.linked && r.tabbable && r.closed && r.kept));
      check(`${tag}: ${results.length} glossary terms open by keyboard inside the viewport, link to the glossary, and close with Escape`, results.length >= 3 && badTerms.length === 0, JSON.stringify(badTerms.slice(0, 5)));
      if (results.length) {
        const first = page.locator('.term-button:visible').first();
        await first.focus();
        await page.keyboard.press('Enter');
        await page.waitForTimeout(60);
        await page.screenshot({ path: join(out, `term-popover-${size.w}-${scheme}.png`) });
        await page.keyboard.press('Escape');
      }
      check(`${tag}: the glossary list has an entry per term (#glossary)`, await page.$$eval('#glossary dt', (d) => d.length) >= 20);

      await page.emulateMedia({ media: 'print' });
      const print = await page.evaluate(() => {
        const shown = (sel) => [...document.querySelectorAll(sel)].filter((e) => getComputedStyle(e).display !== 'none' && e.getBoundingClientRect().height > 0).map((e) => e.tagName.toLowerCase() + (e.id ? `#${e.id}` : ''));
        const prov = document.querySelector('#table-provenance');
        return {
          // Glossary terms are buttons on screen and plain words on paper: they must stay printed.
          controls: shown('nav, [role="navigation"], button:not(.term-button), select, input, textarea, .theme-switch, .skip-link'),
          terms: shown('.term-button').length,
          provenance: !!prov && getComputedStyle(prov).display !== 'none' && prov.textContent.includes('Bundle'),
        };
      });
      check(`${tag} print: no navigation, control or theme switch is displayed`, print.controls.length === 0, print.controls.slice(0, 10).join(', '));
      check(`${tag} print: the provenance caption (bundle, repeat policy, weights) is printed`, print.provenance);
      check(`${tag} print: the glossary terms in titles stay printed as words (${print.terms})`, print.terms >= 3);
      await page.screenshot({ path: join(out, `overview-print-${size.w}-${scheme}.png`) });
      if (size.name === 'desktop' && scheme === 'light') {
        writeFileSync(join(out, 'overview-print.pdf'), await page.pdf({ format: 'A4', printBackground: true, pageRanges: '1-4' }));
      }
      await page.emulateMedia({ media: 'screen' });
      await context.close();
    }

    // The theme switch: data-theme follows the choice and survives a reload (system scheme light).
    const { context, page } = await openPage(size, 'light', '?view=overview');
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await bg();
    await page.selectOption('#theme-select', 'dark');
    const dark = await bg();
    check(`${size.w}×${size.h}: choosing Dark sets data-theme="dark" and changes the page colors`, (await page.getAttribute('html', 'data-theme')) === 'dark' && dark !== light, `${light} → ${dark}`);
    await page.reload();
    await page.waitForSelector('#metadata', { state: 'attached', timeout: 60000 });
    check(`${size.w}×${size.h}: Dark persists over a reload`, (await page.getAttribute('html', 'data-theme')) === 'dark' && (await page.inputValue('#theme-select')) === 'dark' && (await bg()) === dark);
    await page.screenshot({ path: join(out, `overview-${size.w}-switch-dark.png`) });
    const { bad } = await page.evaluate(lowContrast);
    check(`${size.w}×${size.h}: with the switch on Dark (system light) all text meets WCAG AA contrast`, bad.length === 0, list(bad));
    await page.selectOption('#theme-select', 'light');
    await page.reload();
    await page.waitForSelector('#metadata', { state: 'attached', timeout: 60000 });
    check(`${size.w}×${size.h}: Light persists over a reload`, (await page.getAttribute('html', 'data-theme')) === 'light' && (await bg()) === light);
    await context.close();
  }
} catch (e) {
  failed++;
  console.log(`FAIL the a11y test stopped: ${e.stack || e}`);
} finally {
  await browser.close();
  server.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
