// End-to-end test of the app shell, on the release build in headless Chromium, at 1280×800 and 390×844:
//
//   node tests/e2e/shell.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
//  1. the skip link is the first focusable element; the navigation reaches every view by click and by
//     keyboard (Tab to its link, Enter; on the phone the menu button first), the current link has
//     aria-current="page", only that view is shown, the focus moves to the view's heading, the URL says
//     ?view=ID; each ?view=ID opened in a fresh page shows that view; back / forward go between views
//     and restore the whole entry: weights typed on Scores, a switch to Analyses, other weights typed
//     (replaceState, no entry of their own), Back → the Analyses entry's weights and URL, Back → the
//     first Scores entry's, Forward ×2 → the last; a fresh page of the Analyses entry's URL the same;
//  2. links made before the shell still restore: view=reweight / atlas-c → Scores (the panel focused),
//     view=rq2 → Analyses, a case link (case= and #case=) → Cases with the content warning on screen,
//     ccase= → Clinical;
//  3. the bundle picker opens each shipped bundle (the top bar then names it); a ?bundle= that is not
//     there shows the error with the picker, which then opens a working bundle;
//  4. the window's drop target: a CSV dropped anywhere lands in Import with the file selected; a file
//     that is neither a bundle nor a results file gets a message naming it; a dropped bundle opens;
//     an imported bundle's "Open in the explorer" goes to the Overview and says what was opened;
//  5. screenshots of every view at both sizes in both colour schemes under target/e2e-shell/.
// Ends with "N passed, M failed".
import { mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const shots = join(root, 'target/e2e-shell');

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

// The shipped bundles (static/bundles/; ids and titles read from the files themselves).
const SHIPPED = ['decodingtrust-stereotype', 'pilot-demo-smollm2', 'clinical-demo-smollm2'].map((dir) => {
  const b = JSON.parse(readFileSync(join(root, 'static/bundles', dir, 'bundle.json'), 'utf8'));
  return { dir, id: b.metadata.id, title: b.metadata.title, clinical: !!b.clinical };
});
const DEFAULT = SHIPPED[0];
const CLINICAL = SHIPPED.find((b) => b.clinical);
const BUNDLE_VIEWS = ['overview', 'scores', 'compare', 'analyses', 'plan', 'rationale', 'cases'];
const VIEWS = [...BUNDLE_VIEWS, 'import', 'pilot'];

const server = await serveStatic(dist, [['/fixtures/', join(root, 'tests/fixtures')]]);
const base = `http://127.0.0.1:${server.address().port}/`;
await mkdir(shots, { recursive: true });

// Which views are shown (containers not hidden), the current nav link, and the view= of the URL.
const shellState = (page) => page.evaluate(() => ({
  shown: [...new Set([...document.querySelectorAll('[data-shell-view]')].filter((b) => !b.hidden).map((b) => b.dataset.shellView))],
  current: [...document.querySelectorAll('#app-nav a[aria-current="page"]')].map((a) => a.dataset.nav),
  view: new URLSearchParams(location.search).get('view'),
  focusIn: document.activeElement?.closest('[data-shell-view]')?.dataset.shellView ?? null,
  focusTag: document.activeElement?.tagName ?? null,
}));
const bundleShown = (page, id) => page.waitForFunction((i) => document.querySelector('#bundle-name')?.dataset.bundleId === i, id, { timeout: 60000 });
// Whether the top of `sel` is on screen (below the top bar, above the bottom edge).
const inViewport = (page, sel) => page.$eval(sel, (el) => {
  const r = el.getBoundingClientRect();
  const bar = document.querySelector('header.top').getBoundingClientRect().bottom;
  return r.height > 0 && r.top >= Math.max(0, bar) - 2 && r.top < window.innerHeight;
}).catch(() => false);

// Drops a file with `name`, `type` and text `text` on the page (a synthetic DataTransfer drop on an
// element far from any drop zone: the window's target takes it).
const dropFile = (page, name, type, text) => page.evaluate(async ([n, t, body]) => {
  const dt = new DataTransfer();
  dt.items.add(new File([body], n, { type: t }));
  const target = document.querySelector('footer') || document.body;
  target.dispatchEvent(new DragEvent('dragenter', { dataTransfer: dt, bubbles: true, cancelable: true }));
  const over = new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true });
  target.dispatchEvent(over);
  await new Promise((ok) => setTimeout(ok, 50));
  const overlay = !document.querySelector('#drop-overlay').hidden;
  const drop = new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
  target.dispatchEvent(drop);
  return { overlay, overPrevented: over.defaultPrevented, dropPrevented: drop.defaultPrevented };
}, [name, type, text]);

// Tab from the top of the page until `selector` has the focus (at most 60 presses); true if reached.
async function tabTo(page, selector) {
  for (let i = 0; i < 60; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s), selector)) return true;
  }
  return false;
}

const browser = await launchChromium();
const pageErrors = [];
try {
  for (const [w, h] of [[1280, 800], [390, 844]]) {
    const size = `${w}x${h}`;
    const phone = w < 900;
    const context = await browser.newContext({ viewport: { width: w, height: h }, acceptDownloads: true, serviceWorkers: 'block' });
    const page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(`${size}: ${e}`));
    await page.goto(base);
    await bundleShown(page, DEFAULT.id);
    await page.waitForSelector('[data-shell-view="overview"] #metadata', { state: 'attached', timeout: 60000 });

    // 1. Skip link, navigation by click and by keyboard, URL per view.
    let st = await shellState(page);
    check(`${size}: a fresh page shows only the Overview, its nav link current`, JSON.stringify(st.shown) === '["overview"]' && JSON.stringify(st.current) === '["overview"]', JSON.stringify(st));
    check(`${size}: the top bar names the loaded bundle`, (await page.textContent('#bundle-name')).trim() === DEFAULT.title, await page.textContent('#bundle-name'));
    await page.keyboard.press('Tab');
    check(`${size}: the first Tab reaches "Skip to content"`, await page.evaluate(() => document.activeElement?.classList.contains('skip-link') && document.activeElement.textContent === 'Skip to content'));
    check(`${size}: the navigation is ${phone ? 'collapsed behind a menu button' : 'a visible sidebar'}`,
      phone === await page.$eval('#app-nav', (n) => getComputedStyle(n).display === 'none') && phone === await page.isVisible('#nav-toggle'));
    check(`${size}: no Clinical link on a bundle without clinical data`, await page.$eval('#app-nav a[data-nav="clinical"]', (a) => a.closest('li').hidden));
    for (const id of VIEWS) {
      await showView(page, id);
      await page.waitForTimeout(80);
      st = await shellState(page);
      check(`${size}: click "${id}": only that view shown, its link aria-current, ?view=${id}, focus on its heading`,
        JSON.stringify(st.shown) === JSON.stringify([id]) && JSON.stringify(st.current) === JSON.stringify([id]) && st.view === id && st.focusIn === id && /^H[23]$/.test(st.focusTag), JSON.stringify(st));
      await page.screenshot({ path: join(shots, `${id}-${size}-light.png`) });
      await page.emulateMedia({ colorScheme: 'dark' });
      await page.screenshot({ path: join(shots, `${id}-${size}-dark.png`) });
      await page.emulateMedia({ colorScheme: 'light' });
    }
    // Back / forward over the history the clicks made.
    await page.goBack();
    await page.waitForFunction(() => !document.querySelector('[data-shell-view="import"]').hidden, null, { timeout: 5000 }).catch(() => {});
    st = await shellState(page);
    const back = st.shown.join();
    await page.goBack();
    await page.waitForTimeout(100);
    const back2 = (await shellState(page)).shown.join();
    await page.goForward();
    await page.waitForTimeout(100);
    const fwd = (await shellState(page)).shown.join();
    check(`${size}: Back shows the previous views (import, then cases), Forward the next (import)`, back === 'import' && back2 === 'cases' && fwd === 'import', `${back} ${back2} ${fwd}`);

    // Keyboard: from the top of the page, Tab to each link, Enter.
    for (const id of ['scores', 'cases', 'overview']) {
      await page.evaluate(() => { document.activeElement?.blur(); window.scrollTo(0, 0); });
      await page.focus('.skip-link');
      if (phone) {
        const menu = await tabTo(page, '#nav-toggle');
        await page.keyboard.press('Enter');
        await page.waitForSelector('#app-nav.open', { timeout: 2000 }).catch(() => {});
        check(`${size}: the menu button is reached by Tab and opens the navigation with Enter`, menu && await page.isVisible(`#app-nav a[data-nav="${id}"]`));
      }
      const reached = await tabTo(page, `#app-nav a[data-nav="${id}"]`);
      await page.keyboard.press('Enter');
      await page.waitForTimeout(150);
      st = await shellState(page);
      check(`${size}: keyboard: Tab reaches the "${id}" link, Enter shows the view and moves the focus to it`,
        reached && JSON.stringify(st.shown) === JSON.stringify([id]) && st.view === id && st.focusIn === id, JSON.stringify(st));
    }

    // Back / forward restore the whole entry (weights, preset, view), not only the view. Weights
    // typed then a view switch within the URL writer's 200-ms throttle: the entry left keeps them.
    if (!phone) {
      const weights = () => page.evaluate(() => [0, 1, 2].map((c) => document.getElementById(`w-${c}`)?.value));
      const params = () => page.evaluate(() => new URLSearchParams(location.search).getAll('w').join(','));
      // The provenance line's bundle, policy and weights (the bootstrap's state after them may differ).
      const weightsPart = (text) => text.split(' · ').slice(0, 3).join(' · ');
      await showView(page, 'scores');
      await page.waitForSelector('#w-0', { timeout: 60000 });
      await page.fill('#w-0', '0.5');
      await page.waitForFunction(() => document.querySelector('#reweight-provenance').textContent.includes('benign=0.5'));
      await showView(page, 'analyses');
      await page.waitForTimeout(400);
      const entryB = { url: page.url(), w: await params(), weights: await weights() };
      await showView(page, 'scores');
      await page.fill('#w-2', '3');
      await page.waitForFunction(() => document.querySelector('#reweight-provenance').textContent.includes('targeted=3'));
      await page.waitForTimeout(400);
      const entryC = { url: page.url(), w: await params(), weights: await weights() };
      check(`${size}: history setup: weights 0.5/1/1 left with the switch to Analyses (its URL has them), then 0.5/1/3 typed on Scores (replaced, not pushed)`,
        entryB.w === 'benign:0.5,untargeted:1,targeted:1' && entryC.w === 'benign:0.5,untargeted:1,targeted:3', `${entryB.w} | ${entryC.w}`);
      await page.goBack();
      await page.waitForFunction(() => !document.querySelector('[data-shell-view="analyses"]').hidden, null, { timeout: 5000 }).catch(() => {});
      await page.waitForTimeout(400);
      st = await shellState(page);
      const backW = await weights();
      const backProv = await page.textContent('#reweight-provenance');
      check(`${size}: Back to the Analyses entry shows its weights (0.5/1/1, not the 0.5/1/3 typed later) and its URL is unchanged`,
        JSON.stringify(st.shown) === '["analyses"]' && JSON.stringify(backW) === '["0.5","1","1"]' && backProv.includes('benign=0.5') && backProv.includes('targeted=1') && page.url() === entryB.url,
        `${JSON.stringify(st.shown)} ${JSON.stringify(backW)} ${page.url()} vs ${entryB.url}`);
      await page.goBack();
      await page.waitForFunction(() => !document.querySelector('[data-shell-view="scores"]').hidden, null, { timeout: 5000 }).catch(() => {});
      await page.waitForTimeout(400);
      st = await shellState(page);
      check(`${size}: Back again: the Scores entry where 0.5 was typed, with 0.5/1/1 (written into it before the switch)`,
        JSON.stringify(st.shown) === '["scores"]' && JSON.stringify(await weights()) === '["0.5","1","1"]' && await params() === 'benign:0.5,untargeted:1,targeted:1',
        `${JSON.stringify(st.shown)} ${JSON.stringify(await weights())} ${await params()}`);
      await page.goForward();
      await page.goForward();
      await page.waitForFunction(() => document.getElementById('w-2')?.value === '3', null, { timeout: 5000 }).catch(() => {});
      await page.waitForTimeout(400);
      st = await shellState(page);
      check(`${size}: Forward twice: the last Scores entry with 0.5/1/3, its URL as left`,
        JSON.stringify(st.shown) === '["scores"]' && JSON.stringify(await weights()) === '["0.5","1","3"]' && page.url() === entryC.url,
        `${JSON.stringify(st.shown)} ${JSON.stringify(await weights())} ${page.url()} vs ${entryC.url}`);
      const fresh = await context.newPage();
      fresh.on('pageerror', (e) => pageErrors.push(`${size} fresh entry: ${e}`));
      await fresh.goto(entryB.url);
      await bundleShown(fresh, DEFAULT.id);
      await fresh.waitForFunction(() => document.querySelector('#reweight-provenance')?.textContent.includes('benign=0.5'), null, { timeout: 30000 }).catch(() => {});
      const freshSt = await shellState(fresh);
      const freshW = await fresh.evaluate(() => [0, 1, 2].map((c) => document.getElementById(`w-${c}`)?.value));
      check(`${size}: a fresh page of the Analyses entry's URL shows the same view and weights as Back did`,
        JSON.stringify(freshSt.shown) === '["analyses"]' && JSON.stringify(freshW) === JSON.stringify(backW) && weightsPart(await fresh.textContent('#reweight-provenance')) === weightsPart(backProv),
        `${JSON.stringify(freshSt.shown)} ${JSON.stringify(freshW)}`);
      await fresh.close();
      // A weight typed and a view switch at once (within the URL writer's 200-ms throttle): the entry
      // left must still get it (written before the push), so Back restores it rather than the older
      // weights of its URL.
      await page.fill('#w-1', '2');
      await showView(page, 'overview');
      await page.waitForTimeout(400);
      await page.goBack();
      await page.waitForFunction(() => !document.querySelector('[data-shell-view="scores"]').hidden, null, { timeout: 5000 }).catch(() => {});
      await page.waitForTimeout(400);
      check(`${size}: a weight typed just before a view switch is kept by the entry left: Back shows 0.5/2/3`,
        JSON.stringify(await weights()) === '["0.5","2","3"]' && await params() === 'benign:0.5,untargeted:2,targeted:3',
        `${JSON.stringify(await weights())} ${await params()}`);
      // Back to equal weights for what follows.
      await page.click('#preset-equal');
      await showView(page, 'overview');
    }

    // Each view's URL restores it in a fresh page.
    for (const id of VIEWS) {
      const fresh = await context.newPage();
      fresh.on('pageerror', (e) => pageErrors.push(`${size} ?view=${id}: ${e}`));
      await fresh.goto(`${base}?view=${id}`);
      await bundleShown(fresh, DEFAULT.id);
      await fresh.waitForFunction((v) => [...document.querySelectorAll(`[data-shell-view="${v}"]`)].some((b) => !b.hidden), id, { timeout: 30000 }).catch(() => {});
      st = await shellState(fresh);
      check(`${size}: ?view=${id} in a fresh page shows that view`, JSON.stringify(st.shown) === JSON.stringify([id]) && JSON.stringify(st.current) === JSON.stringify([id]), JSON.stringify(st));
      await fresh.close();
    }

    // 2. Links made before the shell.
    for (const [param, view, panel] of [['reweight', 'scores', '#reweight'], ['atlas-c', 'scores', '#atlas-c'], ['rq2', 'analyses', '#rq2']]) {
      const old = await context.newPage();
      await old.goto(`${base}?view=${param}`);
      await bundleShown(old, DEFAULT.id);
      await old.waitForTimeout(800);
      st = await shellState(old);
      check(`${size}: an old link view=${param} opens ${view} with ${panel} on screen`, JSON.stringify(st.shown) === JSON.stringify([view]) && await inViewport(old, panel), JSON.stringify(st));
      await old.close();
    }
    for (const link of ['?case=5', '#case=5']) {
      const old = await context.newPage();
      await old.goto(`${base}${link}`);
      await bundleShown(old, DEFAULT.id);
      await old.waitForSelector('#case-view[data-cell="5"]', { timeout: 30000 }).catch(() => {});
      await old.waitForTimeout(700);
      st = await shellState(old);
      check(`${size}: a case link (${link}) opened fresh shows Cases with case 5 and the content warning on screen, the text hidden`,
        JSON.stringify(st.shown) === '["cases"]' && await inViewport(old, '#content-warning') && (await old.$('#case-view pre.text')) === null && (await old.$('#case-text-hidden')) !== null, JSON.stringify(st));
      if (link === '?case=5') await old.screenshot({ path: join(shots, `case-link-${size}.png`) });
      await old.close();
    }

    // 3. The picker opens each shipped bundle.
    for (const b of [...SHIPPED.slice(1), DEFAULT]) {
      await page.click('#open-picker');
      await page.waitForSelector('#bundle-picker', { timeout: 5000 });
      await page.click(`#bundle-picker .bundle-choice[data-bundle="${b.id}"]`);
      await bundleShown(page, b.id);
      const name = (await page.textContent('#bundle-name')).trim();
      check(`${size}: the picker opens ${b.dir}; the top bar names it and the picker closes`, name === b.title && !(await page.isVisible('#bundle-picker')), name);
      if (b.clinical) {
        await showView(page, 'clinical');
        await page.waitForSelector('#clinical-table5', { timeout: 30000 });
        st = await shellState(page);
        check(`${size}: the clinical bundle offers the Clinical view`, JSON.stringify(st.shown) === '["clinical"]' && st.view === 'clinical', JSON.stringify(st));
        await page.screenshot({ path: join(shots, `clinical-${size}-light.png`) });
        await page.emulateMedia({ colorScheme: 'dark' });
        await page.screenshot({ path: join(shots, `clinical-${size}-dark.png`) });
        await page.emulateMedia({ colorScheme: 'light' });
        await showView(page, 'overview');
      }
    }
    await page.click('#open-picker');
    check(`${size}: the picker lists recently opened bundles`, (await page.$$eval('#recent-bundles li', (li) => li.length)) >= 3);
    await page.screenshot({ path: join(shots, `picker-${size}-light.png`) });
    await page.click('#picker-close');

    // A ccase= link opens the Clinical view.
    {
      const old = await context.newPage();
      await old.goto(`${base}?bundle=static/bundles/${CLINICAL.dir}/bundle.json&ccase=x`);
      await bundleShown(old, CLINICAL.id);
      await old.waitForTimeout(300);
      st = await shellState(old);
      check(`${size}: a ccase= link opens the Clinical view`, JSON.stringify(st.shown) === '["clinical"]', JSON.stringify(st));
      await old.close();
    }

    // A missing ?bundle=: the error, the picker, and a way to a working bundle.
    {
      const bad = await context.newPage();
      bad.on('pageerror', (e) => pageErrors.push(`${size} 404: ${e}`));
      await bad.goto(`${base}?bundle=static/bundles/missing/bundle.json&view=scores`);
      await bad.waitForSelector('#load-error', { timeout: 60000 });
      const message = await bad.textContent('#load-error');
      check(`${size}: a 404 ?bundle= shows an error naming it, with the picker open`, message.includes('missing/bundle.json') && message.includes('404') && await bad.isVisible('#bundle-picker'), message);
      await bad.screenshot({ path: join(shots, `bundle-404-${size}.png`) });
      await bad.click(`#bundle-picker .bundle-choice[data-bundle="${SHIPPED[1].id}"]`);
      await bundleShown(bad, SHIPPED[1].id);
      await bad.waitForSelector('#ber-table td[data-ber]', { timeout: 30000 });
      check(`${size}: after the 404 the picker opens a working bundle (its table shown, the error gone)`, (await bad.$('#load-error')) === null && await bad.isVisible('#ber-table'));
      await bad.close();
    }

    // 4. Drops on the window.
    const csv = 'model,statement,answer\nm1,s1,agree\nm1,s2,disagree\nm2,s1,disagree\nm2,s2,disagree\n';
    let drop = await dropFile(page, 'rows.csv', 'text/csv', csv);
    check(`${size}: dragging over the page shows the drop overlay and the window takes dragover and drop (no navigation)`, drop.overlay && drop.overPrevented && drop.dropPrevented, JSON.stringify(drop));
    await page.waitForSelector('#import-dropped', { timeout: 10000 }).catch(() => {});
    await page.waitForSelector('#import-preview, #import-preview-error', { timeout: 10000 }).catch(() => {});
    st = await shellState(page);
    check(`${size}: a CSV dropped on the page lands in Import with the file selected and previewed`,
      JSON.stringify(st.shown) === '["import"]' && (await page.textContent('#import-dropped')).includes('rows.csv') && await page.isVisible('#import-preview'), JSON.stringify(st));
    await page.screenshot({ path: join(shots, `import-dropped-${size}.png`) });
    // Import it and open it: the Overview says what was opened.
    const mapping = {
      mapping_version: 1,
      metadata: {
        id: 'shell-import-v1', title: 'Shell test import', description: 'Four hand-written rows (tests/e2e/shell.mjs).',
        source: { citation: 'tests/e2e/shell.mjs' }, license: { id: 'CC0-1.0', attribution: 'none' }, content_warning: null,
      },
      facets: { model: { field: 'model' }, statement: { field: 'statement' } },
      selection: { field: 'answer', map: { agree: 1, disagree: 0 } },
    };
    if (await page.$('#import-mapping')) {
      // The raw mapping sits in the form mapper's collapsed "Edit as JSON".
      if (!(await page.$eval('#import-json', (d) => d.open))) await page.click('#import-json summary');
      await page.fill('#import-mapping', JSON.stringify(mapping));
      await page.click('#import-run');
      await page.waitForSelector('#import-open, #import-error', { timeout: 30000 });
      await page.click('#import-open').catch(() => {});
      await bundleShown(page, 'shell-import-v1').catch(() => {});
      await page.waitForTimeout(200);
      st = await shellState(page);
      const note = await page.textContent('#shell-notice').catch(() => '');
      check(`${size}: "Open in the explorer" goes to the Overview and confirms "Opened Shell test import — 4 responses, from rows.csv"`,
        JSON.stringify(st.shown) === '["overview"]' && note.includes('Opened Shell test import — 4 responses, from rows.csv') && await inViewport(page, '#shell-notice'), `${JSON.stringify(st)} ${note}`);
    } else {
      check(`${size}: the Import view has its raw mapping field (#import-mapping)`, false);
    }
    drop = await dropFile(page, 'notes.pdf', 'application/pdf', '%PDF-1.4');
    await page.waitForSelector('#shell-notice.alert', { timeout: 5000 }).catch(() => {});
    const refused = await page.textContent('#shell-notice').catch(() => '');
    check(`${size}: a dropped file that is neither a bundle nor results gets a message naming it and what is accepted`,
      refused.includes('notes.pdf') && refused.includes('.csv') && refused.includes('audit-atlas-bundle') && drop.dropPrevented, refused);
    const tiny = readFileSync(join(root, 'tests/fixtures/tiny-bundle.json'), 'utf8');
    await dropFile(page, 'tiny-bundle.json', 'application/json', tiny);
    const tinyId = JSON.parse(tiny).metadata.id;
    const opened = await bundleShown(page, tinyId).then(() => true, () => false);
    check(`${size}: a bundle dropped on the page opens`, opened && (await page.textContent('#metadata')).includes('file: tiny-bundle.json'));
    const results = JSON.stringify([{ model: 'm1', statement: 's1', answer: 'agree' }]);
    await dropFile(page, 'results.json', 'application/json', results);
    await page.waitForFunction(() => document.querySelector('#import-dropped')?.textContent.includes('results.json'), null, { timeout: 10000 }).catch(() => {});
    st = await shellState(page);
    check(`${size}: a JSON file that is not a bundle goes to Import`, JSON.stringify(st.shown) === '["import"]' && (await page.textContent('#import-dropped')).includes('results.json'), JSON.stringify(st));
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(`${size}: the page does not scroll sideways`, overflow <= 1, `${overflow}px`);
    await context.close();
  }
  check('no uncaught page errors', pageErrors.length === 0, pageErrors.slice(0, 5).join(' | '));
} finally {
  await browser.close();
  server.close();
}
console.log(`screenshots in ${shots}; the Overview: ${join(shots, 'overview-1280x800-light.png')}, ${join(shots, 'overview-390x844-light.png')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
