// A small fault-injecting HTTP proxy on 127.0.0.1 in front of an OpenAI-compatible server (issue 5,
// "Faults"). Each POST gets the next fault of a fixed, repeating schedule; everything else is forwarded.
//
//   node tests/pilot/fault_proxy.mjs UPSTREAM_BASE [--port P] [--schedule ok,429,ok,500,stall,malformed,drop]
//
// Faults (each answered with CORS headers, so the browser sees the status and Retry-After):
//   ok         forward to the upstream unchanged
//   429        HTTP 429 with `Retry-After: 1` and an OpenAI-style error body
//   500        HTTP 500 with an OpenAI-style error body
//   503        HTTP 503 without a body
//   stall      accept the request and never answer (the client's per-call timeout must fire); the socket is
//              closed after 120 s
//   malformed  HTTP 200 with a body that is not JSON
//   drop       destroy the connection without an answer (a network error in the browser)
//
// The module export `startFaultProxy(upstream, { port, schedule })` resolves to { url, log, close }:
// `log` lists { n, fault, path, status } per POST, for the test's counts.
import { createServer, request as httpRequest } from 'node:http';

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Headers': '*',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Expose-Headers': 'Retry-After',
};

export function startFaultProxy(upstream, { port = 0, schedule = ['ok', '429', 'ok', '500', 'stall', 'malformed', 'drop'] } = {}) {
  const base = new URL(upstream);
  const log = [];
  let n = 0;
  const stalled = new Set();
  const server = createServer((req, res) => {
    if (req.method === 'OPTIONS') { res.writeHead(204, CORS).end(); return; }
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const fault = req.method === 'POST' ? schedule[n % schedule.length] : 'ok';
      const entry = { n: req.method === 'POST' ? n++ : null, fault, path: req.url, status: null };
      if (req.method === 'POST') log.push(entry);
      const json = (status, obj, extra = {}) => {
        entry.status = status;
        res.writeHead(status, { ...CORS, 'Content-Type': 'application/json', ...extra }).end(JSON.stringify(obj));
      };
      switch (fault) {
        case '429': return json(429, { error: { message: 'Rate limit reached (injected by the fault proxy)', type: 'rate_limit_error' } }, { 'Retry-After': '1' });
        case '500': return json(500, { error: { message: 'Internal server error (injected by the fault proxy)', type: 'server_error' } });
        case '503': entry.status = 503; res.writeHead(503, CORS).end(); return;
        case 'malformed': entry.status = 200; res.writeHead(200, { ...CORS, 'Content-Type': 'application/json' }).end('{"choices": [ {"message": '); return;
        case 'drop': entry.status = 'dropped'; req.socket.destroy(); return;
        case 'stall': {
          entry.status = 'stalled';
          const timer = setTimeout(() => req.socket.destroy(), 120000);
          stalled.add(timer);
          return;
        }
        default: {
          const target = new URL(req.url, base);
          const up = httpRequest(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (upRes) => {
            entry.status = upRes.statusCode;
            // The upstream's own CORS headers (it echoes the page's Origin) would be sent twice next
            // to ours, and a browser rejects a doubled Access-Control-Allow-Origin: keep only ours.
            const headers = Object.fromEntries(Object.entries(upRes.headers).filter(([k]) => !k.toLowerCase().startsWith('access-control-')));
            Object.assign(headers, CORS);
            res.writeHead(upRes.statusCode, headers);
            upRes.pipe(res);
          });
          up.on('error', (e) => { entry.status = `upstream error: ${e.message}`; res.writeHead(502, CORS).end(); });
          up.end(body);
        }
      }
    });
  });
  return new Promise((ok) => server.listen(port, '127.0.0.1', () => ok({
    url: `http://127.0.0.1:${server.address().port}`,
    log,
    close: () => { for (const t of stalled) clearTimeout(t); server.closeAllConnections?.(); server.close(); },
  })));
}

// Command line: run the proxy until interrupted.
if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : dflt; };
  if (!args[0] || args[0].startsWith('--')) {
    console.error('usage: node tests/pilot/fault_proxy.mjs UPSTREAM_BASE [--port P] [--schedule ok,429,...]');
    process.exit(2);
  }
  const proxy = await startFaultProxy(args[0], { port: Number(opt('--port', 0)), schedule: opt('--schedule', 'ok,429,ok,500,stall,malformed,drop').split(',') });
  console.log(`fault proxy on ${proxy.url} → ${args[0]}`);
}
