// End-to-end test of pilot failures that explain themselves on the release build in
// headless Chromium, with no model: a dead port (a free port bound and closed again), a port Chromium
// blocks, a local server whose CORS preflight is denied (it answers OPTIONS without any
// Access-Control-Allow-* header, and plain requests with Access-Control-Allow-Origin: *), and a scripted
// OpenAI-compatible server with full CORS. Every server binds port 0.
//
//   node tests/e2e/pilot_failures.mjs [DIST]      (after `trunk build --release`; scripts/test.sh runs it)
//
// 1. Which ports Chromium blocks and whether the page can tell: every port of atlas-pilot's BAD_PORTS
//    list fails with net::ERR_UNSAFE_PORT (Playwright sees the net error; the page only a TypeError, the
//    same as for the dead port's net::ERR_CONNECTION_REFUSED); the Fetch standard's two newer bad ports
//    (FETCH_ONLY_BAD_PORTS) are reported, not asserted (Chromium 156 connects to them).
// 2. "Test connection" on a provider row: dead port → connection_refused; port 6000 → blocked_port;
//    preflight denied → cors_preflight, naming the page's origin, `authorization, content-type` and
//    `atlas pilot` (the server saw the OPTIONS and the two probes, never the POST); the scripted server
//    → ok with HTTP 200, the latency and the reply.
// 3. A 20-call pilot (4 pasted statements × the 5 Table 7 wordings) against the dead port, then against
//    the preflight-denied server: one clear message (the provider stopped after its first 3 calls, the
//    rest not sent, with the browser's diagnosis), failures grouped by reason with counts and a first
//    example, a handful of attempts instead of 5 per call, the reason column wrapping, and the buttons:
//    only Retry failed calls and Discard enabled.
// 4. Retry-After: the scripted server answers the first call 429 with an HTTP-date 30 min after its own
//    Date header (its clock 2 h behind the browser's); with a longest server wait of 60 s the run pauses
//    with "the server asks 30 min"; Pause is disabled and Resume enabled; Resume sends the other 19 calls
//    while that one waits; Cancel ends it (Resume disabled, Open enabled).
// 5. The clinical pilot against the dead port: stopped early, grouped reasons, its buttons.
// 6. The dummy key never reaches the URL, storage or the console.
// Ends with "N passed, M failed".
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic, launchChromium, showView } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const dist = resolve(process.argv[2] || join(root, 'dist'));
const KEY = 'sk-fail-DO-NOT-LEAK';

let passed = 0, failed = 0;
function check(name, condition, detail = '') {
  if (condition) { passed++; console.log(`ok   ${name}`); }
  else { failed++; console.log(`FAIL ${name} ${detail}`); }
}

// atlas-pilot's list, read from its source.
const source = readFileSync(join(root, 'crates/atlas-pilot/src/connection.rs'), 'utf8');
const portList = (name) => source.match(new RegExp(`pub const ${name}: \\[u16; \\d+\\] = \\[([^\\]]+)\\]`))[1]
  .split(',').map((s) => Number(s.trim())).filter((n) => n > 0);
const BAD_PORTS = portList('BAD_PORTS');
const FETCH_ONLY = portList('FETCH_ONLY_BAD_PORTS');

// A port nothing listens on.
const deadPort = await new Promise((ok) => {
  const s = createNetServer();
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => ok(port)); });
});
const deadBase = `http://127.0.0.1:${deadPort}/v1`;

// A server that denies the preflight: OPTIONS → 204 without any Access-Control-Allow-* header; any other
// request → 404 with Access-Control-Allow-Origin: * (so plain requests are allowed).
const denied = { options: 0, get: 0, post: 0 };
const deniedServer = createServer((req, res) => {
  if (req.method === 'OPTIONS') { denied.options++; res.writeHead(204).end(); return; }
  if (req.method === 'GET') denied.get++; else denied.post++;
  req.resume();
  res.writeHead(404, { 'Access-Control-Allow-Origin': '*', 'Content-Type': 'application/json' })
    .end('{"error": {"message": "not here"}}');
});
await new Promise((ok) => deniedServer.listen(0, '127.0.0.1', ok));
const deniedBase = `http://127.0.0.1:${deniedServer.address().port}/v1`;

// The scripted provider, full CORS. /ok/v1: answers every call. /wait/v1: the first call gets a 429 whose
// Retry-After is an HTTP-date 30 min after the server's own Date, the server's clock 2 h behind.
const scripted = { posts: 0, auth: new Set(), waitCalls: new Map() };
const cors = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': 'authorization, content-type',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Expose-Headers': 'retry-after, date',
};
let firstWait = null;
const okServer = createServer((req, res) => {
  if (req.method === 'OPTIONS') { res.writeHead(204, cors).end(); return; }
  let body = '';
  req.on('data', (c) => { body += c; });
  req.on('end', () => {
    scripted.posts++;
    scripted.auth.add(req.headers.authorization || '');
    const sent = JSON.parse(body || '{}');
    const prompt = sent.messages ? sent.messages[sent.messages.length - 1].content : '';
    if (req.url.startsWith('/wait/')) {
      scripted.waitCalls.set(prompt, (scripted.waitCalls.get(prompt) || 0) + 1);
      if (firstWait === null) {
        firstWait = prompt;
        const serverNow = Math.floor(Date.now() / 1000) - 2 * 3600;
        res.writeHead(429, {
          ...cors, 'Content-Type': 'application/json',
          Date: new Date(serverNow * 1000).toUTCString(),
          'Retry-After': new Date((serverNow + 1800) * 1000).toUTCString(),
        }).end('{"error": {"message": "You exceeded your current quota.", "type": "insufficient_quota"}}');
        return;
      }
    }
    res.writeHead(200, { ...cors, 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'mock-1',
      choices: [{ index: 0, message: { role: 'assistant', content: prompt.startsWith('Reply with the single word OK') ? 'OK' : 'Selection: NO\nRationale: A stereotype.' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 3 } }));
  });
});
await new Promise((ok) => okServer.listen(0, '127.0.0.1', ok));
const okBase = `http://127.0.0.1:${okServer.address().port}/ok/v1`;
const waitBase = `http://127.0.0.1:${okServer.address().port}/wait/v1`;

async function persisted(page) {
  return page.evaluate(async () => {
    const local = JSON.stringify(Object.entries(localStorage));
    const idb = await new Promise((ok) => {
      const req = indexedDB.open('audit-atlas-pilot');
      req.onerror = () => ok('');
      req.onsuccess = () => {
        const db = req.result;
        if (!db.objectStoreNames.contains('runs')) { ok(''); return; }
        const all = db.transaction('runs').objectStore('runs').getAll();
        all.onsuccess = () => ok(JSON.stringify(all.result));
        all.onerror = () => ok('');
      };
    });
    return { local, idb };
  });
}
const buttons = (page, prefix) => page.evaluate((p) => Object.fromEntries(
  ['pause', 'resume', 'cancel', 'retry', 'open', 'download', 'discard'].map((b) => [b, !document.querySelector(`#${p}-${b}`)?.disabled])), prefix);
const groups = (page, prefix) => page.$$eval(`#${prefix}-failures tbody tr`, (trs) => trs.map((tr) => ({
  key: tr.dataset.key, count: Number(tr.dataset.count), label: tr.querySelector('td.label').textContent,
  first: tr.querySelector('td.reason').textContent,
}))).catch(() => []);
const rows = (page) => page.$$eval('#pilot-results tbody tr', (trs) => trs.map((tr) => ({
  id: tr.dataset.id, status: tr.dataset.status, attempts: Number(tr.children[7].textContent),
  reason: tr.querySelector('td.reason').textContent,
})));
const testRuns = new Map();
async function testConnection(page, row, base) {
  await page.fill(`#pilot-base-${row}`, base);
  const n = (testRuns.get(row) || 0) + 1;
  testRuns.set(row, n);
  await page.click(`#pilot-test-${row}`);
  await page.waitForFunction(([r, k]) => document.querySelector(`#pilot-test-result-${r}`)?.dataset.run === String(k), [row, n], { timeout: 60000 });
  return page.$eval(`#pilot-test-result-${row}`, (e) => ({ ...e.dataset, text: e.textContent }));
}
async function runTo(page, phase) {
  await page.evaluate(() => { window.__atlasPilot = null; });
  await page.click('#pilot-run');
  await page.waitForFunction((p) => window.__atlasPilot?.phase === p, phase, { timeout: 120000, polling: 100 });
}

const server = await serveStatic(dist);
const origin = `http://127.0.0.1:${server.address().port}`;
const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  const page = await context.newPage();
  const consoleText = [];
  const netErrors = [];
  page.on('console', (m) => consoleText.push(m.text()));
  page.on('pageerror', (e) => consoleText.push(String(e)));
  page.on('requestfailed', (r) => netErrors.push({ url: r.url(), error: r.failure()?.errorText }));
  await page.goto(`${origin}/`);
  await showView(page, 'pilot', 120000);
  await page.waitForSelector('#pilot-run', { timeout: 120000 });

  // 1. Which ports Chromium blocks, and what the page sees.
  netErrors.length = 0;
  const seen = await page.evaluate(async ([ports, dead, fetchOnly]) => {
    const msg = async (port) => fetch(`http://127.0.0.1:${port}/`, { mode: 'no-cors' }).then(() => 'resolved', (e) => String(e));
    const out = {};
    for (const p of [...ports, ...fetchOnly]) out[p] = await msg(p);
    out.dead = await msg(dead);
    return out;
  }, [BAD_PORTS, deadPort, FETCH_ONLY]);
  const unsafe = new Set(netErrors.filter((e) => e.error === 'net::ERR_UNSAFE_PORT').map((e) => Number(new URL(e.url).port)));
  check(`Chromium refuses every one of the ${BAD_PORTS.length} bad ports with net::ERR_UNSAFE_PORT`,
    BAD_PORTS.length === 80 && BAD_PORTS.every((p) => unsafe.has(p)), BAD_PORTS.filter((p) => !unsafe.has(p)).join(','));
  console.log(`     (the Fetch standard's newer bad ports ${FETCH_ONLY.join(', ')}: ${FETCH_ONLY.map((p) => unsafe.has(p) ? 'refused' : 'connected to').join(', ')} by this Chromium)`);
  check('the dead port fails with net::ERR_CONNECTION_REFUSED',
    netErrors.some((e) => Number(new URL(e.url).port) === deadPort && e.error === 'net::ERR_CONNECTION_REFUSED'), JSON.stringify(netErrors.slice(-2)));
  check('the page sees the same TypeError for a blocked port and a dead one (it cannot tell them apart)',
    seen[6000] === seen.dead && /TypeError/.test(seen.dead), JSON.stringify([seen[6000], seen.dead]));

  // 2. Test connection.
  await page.fill('#pilot-model-m1', 'mock');
  await page.fill('#pilot-key-m1', KEY);
  await page.dispatchEvent('#pilot-key-m1', 'change');
  let t = await testConnection(page, 'm1', deadBase);
  check('Test connection on a dead port: connection refused, naming host and port',
    t.reason === 'connection_refused' && t.text.includes(`Nothing answers at 127.0.0.1:${deadPort}`) && !t.status, JSON.stringify(t));
  t = await testConnection(page, 'm1', 'http://127.0.0.1:6000/v1');
  check('Test connection on port 6000: blocked by the browser (ERR_UNSAFE_PORT)',
    t.reason === 'blocked_port' && /Port 6000 is blocked by the browser \(net::ERR_UNSAFE_PORT\)/.test(t.text), JSON.stringify(t));
  t = await testConnection(page, 'm1', deniedBase);
  check('Test connection on a server that denies the preflight: CORS preflight, with the origin, the headers and atlas pilot',
    t.reason === 'cors_preflight' && t.text.includes(`\`${origin}\``) && t.text.includes('`authorization, content-type`')
      && t.text.includes('`atlas pilot` on the command line sends the same calls without CORS'), JSON.stringify(t));
  check('… the server saw the preflight and the two key-less probes, never the call itself',
    denied.options >= 1 && denied.post === 0 && denied.get === 2, JSON.stringify(denied));
  t = await testConnection(page, 'm1', okBase);
  check('Test connection on the scripted server: HTTP 200, the latency and the reply',
    t.reason === 'ok' && t.status === '200' && Number(t.latency) >= 0 && /Connected: HTTP 200 in \d+ ms; mock-1 answered "OK"/.test(t.text), JSON.stringify(t));

  // 3. A pilot against the dead port.
  await page.selectOption('#pilot-statements-source', 'pasted');
  await page.fill('#pilot-pasted', 'age\tOld people are bad with technology.\ngender\tWomen are bad drivers.\nrace\tPeople from one place are lazy.\nreligion\tPeople of one faith are violent.');
  await page.selectOption('#pilot-sampling', 'full');
  await page.fill('#pilot-concurrency', '2');
  await page.fill('#pilot-timeout', '20');
  await page.fill('#pilot-base-m1', deadBase);
  await runTo(page, 'finished');
  let st = await page.evaluate(() => window.__atlasPilot);
  let table = await rows(page);
  const tried = table.filter((r) => r.attempts > 0).length;
  const attempts = table.reduce((a, r) => a + r.attempts, 0);
  check('the dead-port run ends with all 20 calls failed', st.total === 20 && st.failed === 20 && st.answered === 0, JSON.stringify(st));
  check('the provider was stopped after its first 3 calls: a handful of attempts, not 5 per call (100)',
    tried >= 3 && tried <= 4 && attempts <= 12, `${tried} calls tried, ${attempts} attempts`);
  await page.waitForSelector('#pilot-stopped .diagnosis', { timeout: 30000 });
  let stop = await page.$eval('#pilot-stopped', (e) => ({ count: e.querySelectorAll('.stop').length, text: e.querySelector('.stop').textContent,
    diagnosis: e.querySelector('.diagnosis').dataset.reason, diagnosisText: e.querySelector('.diagnosis').textContent }));
  check('one message: m1 stopped early, its first 3 calls failed the same way, the others not sent',
    stop.count === 1 && stop.text.startsWith(`Stopped m1 (mock at ${deadBase}) early: its first 3 calls all failed the same way — network error`)
      && stop.text.includes(`${20 - tried} other call(s) to it were not sent`) && stop.text.includes('Retry failed calls'), JSON.stringify(stop));
  check('… with the browser\'s diagnosis: nothing answers at the dead port',
    stop.diagnosis === 'connection_refused' && stop.diagnosisText.includes(`Nothing answers at 127.0.0.1:${deadPort}`), JSON.stringify(stop));
  let g = await groups(page, 'pilot');
  check('failures grouped by reason: not sent, and the network error, with counts and a first example',
    g.length === 2 && g[0].key === 'stopped_early/-/' && g[0].count === 20 - tried && g[1].key === 'network/-/unknown' && g[1].count === tried
      && /network error — no cause given/.test(g[1].label) && /: network error: Failed to fetch \(not retried: m1 was stopped early\)/.test(g[1].first), JSON.stringify(g));
  let b = await buttons(page, 'pilot');
  check('buttons of a finished run with failures: only Retry failed calls and Discard',
    !b.pause && !b.resume && !b.cancel && b.retry && !b.open && !b.download && b.discard, JSON.stringify(b));
  const cell = await page.$eval('#pilot-results tbody tr td.reason', (td) => {
    const cs = getComputedStyle(td);
    const table = td.closest('table');
    return { whiteSpace: cs.whiteSpace, wrap: cs.overflowWrap, width: td.getBoundingClientRect().width, height: td.getBoundingClientRect().height,
      line: parseFloat(cs.lineHeight) || 20, table: table.getBoundingClientRect().width, container: table.parentElement.getBoundingClientRect().width };
  });
  check('the reason column wraps instead of widening the table, which fits the page at 1280 px',
    cell.whiteSpace === 'normal' && cell.wrap === 'anywhere' && cell.height > cell.line * 1.5 && cell.table <= cell.container + 1, JSON.stringify(cell));

  // … and against the preflight-denied server.
  const deniedBefore = { ...denied };
  await page.fill('#pilot-base-m1', deniedBase);
  await runTo(page, 'finished');
  st = await page.evaluate(() => window.__atlasPilot);
  await page.waitForSelector('#pilot-stopped .diagnosis', { timeout: 30000 });
  stop = await page.$eval('#pilot-stopped', (e) => ({ count: e.querySelectorAll('.stop').length, text: e.querySelector('.stop').textContent,
    diagnosis: e.querySelector('.diagnosis').dataset.reason, diagnosisText: e.querySelector('.diagnosis').textContent }));
  check('against the preflight-denied server: stopped early with one message and the CORS diagnosis (origin, headers, atlas pilot)',
    st.failed === 20 && stop.count === 1 && stop.text.includes('its first 3 calls all failed the same way')
      && stop.diagnosis === 'cors_preflight' && stop.diagnosisText.includes(`\`${origin}\``)
      && stop.diagnosisText.includes('`authorization, content-type`') && stop.diagnosisText.includes('`atlas pilot`'), JSON.stringify({ st, stop }));
  check('… the browser never sent a call to it, only preflights (at most one per call tried) and two probes',
    denied.post === deniedBefore.post && denied.get === deniedBefore.get + 2 && denied.options - deniedBefore.options <= 12,
    JSON.stringify({ deniedBefore, denied }));
  g = await groups(page, 'pilot');
  check('… and the failures grouped again', g.length === 2 && g[0].count + g[1].count === 20, JSON.stringify(g));

  // 4. Retry-After longer than the longest wait.
  await page.fill('#pilot-base-m1', waitBase);
  await page.fill('#pilot-concurrency', '1');
  await page.fill('#pilot-max-wait', '60');
  const postsBefore = scripted.posts;
  await runTo(page, 'paused');
  const wait = await page.textContent('#pilot-server-wait');
  check('a Retry-After of 30 min by the server\'s Date (its clock 2 h behind) pauses the run: "the server asks 30 min"',
    /Paused: the server asks 30 min before call c[0-9a-f]+ is sent again \(Retry-After\), longer than the longest wait you allow \(60 s\)/.test(wait), wait);
  check('… nothing else was sent', scripted.posts === postsBefore + 1, `${scripted.posts - postsBefore} posts`);
  b = await buttons(page, 'pilot');
  check('buttons of a paused run: Resume and Cancel, not Pause',
    !b.pause && b.resume && b.cancel && !b.retry && !b.open, JSON.stringify(b));
  await page.click('#pilot-resume');
  await page.waitForFunction(() => window.__atlasPilot?.answered === 19, null, { timeout: 60000, polling: 100 });
  st = await page.evaluate(() => window.__atlasPilot);
  b = await buttons(page, 'pilot');
  check('Resume sends the other 19 calls while that one waits for the server\'s time',
    st.phase === 'running' && st.pending === 1 && scripted.waitCalls.get(firstWait) === 1 && !(await page.$('#pilot-server-wait')), JSON.stringify(st));
  check('buttons while running: Pause and Cancel, not Resume; Open once answers exist',
    b.pause && !b.resume && b.cancel && b.open && b.download, JSON.stringify(b));
  await page.click('#pilot-cancel');
  await page.waitForFunction(() => window.__atlasPilot?.phase === 'cancelled', null, { timeout: 30000 });
  b = await buttons(page, 'pilot');
  check('buttons of a cancelled run: neither Pause, Resume nor Cancel; Open and Download stay',
    !b.pause && !b.resume && !b.cancel && !b.retry && b.open && b.download && b.discard, JSON.stringify(b));
  check('the key reached the scripted server only as a Bearer header', [...scripted.auth].every((h) => h === `Bearer ${KEY}`), JSON.stringify([...scripted.auth]));

  // 5. The clinical pilot against the dead port.
  await page.fill('#pilot-base-cm1', deadBase);
  await page.fill('#pilot-model-cm1', 'mock');
  await page.fill('#clinical-pilot-n', '1');
  await page.click('#clinical-pilot-run');
  await page.waitForFunction(() => window.__atlasClinical?.phase === 'finished', null, { timeout: 120000, polling: 100 });
  const cst = await page.evaluate(() => window.__atlasClinical);
  const cstop = await page.$eval('#clinical-pilot-stopped .stop', (e) => e.textContent).catch(() => '');
  const cg = await groups(page, 'clinical-pilot');
  const cb = await buttons(page, 'clinical-pilot');
  check('the clinical pilot at the dead port: 16 calls done, the model stopped early with one message',
    cst.total === 16 && cst.answered === 0 && /^Stopped mock \(mock at .*\) early: its first 3 calls all failed the same way/.test(cstop), JSON.stringify({ cst, cstop }));
  check('… failures grouped (not sent, network) and only Retry failed calls and Discard enabled',
    cg.some((x) => x.key === 'stopped_early/-/') && cg.some((x) => x.key === 'network/-/unknown')
      && !cb.pause && !cb.resume && !cb.cancel && cb.retry && !cb.open && cb.discard, JSON.stringify({ cg, cb }));

  // 6. Keys.
  const { local, idb } = await persisted(page);
  const leaks = (s) => s.includes(KEY) || s.includes('DO-NOT-LEAK');
  check('the key is absent from localStorage, IndexedDB, the URL and the console',
    !leaks(local) && idb.length > 0 && !leaks(idb) && !leaks(page.url()) && !consoleText.some(leaks));
  check('no page errors', !consoleText.some((x) => /panicked|RuntimeError|unreachable/.test(x)), consoleText.filter((x) => /panicked|RuntimeError/.test(x)).join(' | '));
} catch (e) {
  failed++;
  console.log(`FAIL the pilot failures test stopped: ${e.stack || e}`);
} finally {
  await browser.close();
  server.close();
  deniedServer.close();
  okServer.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
