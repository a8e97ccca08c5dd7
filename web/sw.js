// Audit Atlas service worker: keeps the app usable offline once it has been loaded.
//
// Network first, cache as fallback, for same-origin GET requests: every successful response (the page,
// its hashed JS/wasm/CSS, the analysis worker, the default bundle and any text shard or bundle opened by
// URL on this origin) is stored in the cache as it passes; when the network fails, the stored copy is
// served. A new deployment is picked up on the next online load (the network answer wins), so a stale
// app is never preferred over a reachable server. Nothing else is stored: no other origins (provider
// APIs), no POST requests (pilot calls with keys), no query-string variants beyond the exact URL.
const CACHE = 'audit-atlas-v1';

// On install, store the page and everything it names (the hashed JS, wasm and CSS that Trunk writes into
// index.html, and the on-demand view modules it lists), the analysis worker's files and the default bundle, so that even a first visit works
// offline afterwards (the page's own first requests happen before this worker controls it).
// The Parquet worker (atlas-parquet-worker_*) is not stored ahead: it is fetched, and then kept, only when
// the user opens a Parquet file.
const WORKER_FILES = ['atlas-worker_loader.js', 'atlas-worker.js', 'atlas-worker_bg.wasm'];
const DEFAULT_BUNDLE = 'static/bundles/decodingtrust-stereotype/bundle.json';

self.addEventListener('install', (event) => event.waitUntil((async () => {
  const cache = await caches.open(CACHE);
  const scope = self.registration.scope;
  const page = await fetch(scope);
  if (!page.ok) return;
  const html = await page.clone().text();
  await cache.put(scope, page);
  const named = [...html.matchAll(/(?:href|src|module_or_path:)\s*=?\s*['"]([^'"]+\.(?:js|wasm|css))['"]/g)].map((m) => m[1]);
  const imported = [...html.matchAll(/from\s+['"]([^'"]+\.js)['"]/g)].map((m) => m[1]);
  // The views downloaded on demand (src/on_demand.rs): their loader and modules, which
  // scripts/split-app.sh lists in <meta name="atlas-modules">, so that every view works offline.
  const listed = html.match(/<meta name="atlas-modules" content="([^"]*)"/);
  const modules = listed ? listed[1].split(/\s+/).filter(Boolean) : [];
  const urls = [...new Set([...named, ...imported, ...modules, ...WORKER_FILES, DEFAULT_BUNDLE])].map((u) => new URL(u, scope).href);
  await Promise.all(urls.map(async (u) => {
    try { const r = await fetch(u); if (r.ok) await cache.put(u, r); } catch { /* stored later, when fetched */ }
  }));
  await self.skipWaiting();
})()));
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('fetch', (event) => {
  const request = event.request;
  if (request.method !== 'GET' || new URL(request.url).origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    try {
      const response = await fetch(request);
      if (response.ok && response.type === 'basic') await cache.put(request, response.clone());
      return response;
    } catch (error) {
      const stored = await cache.match(request, { ignoreSearch: false });
      if (stored) return stored;
      // A page URL with a query (?bundle=…, view state) falls back to the stored page itself.
      if (request.mode === 'navigate') {
        const page = await cache.match(new URL('./', self.registration.scope).href);
        if (page) return page;
      }
      throw error;
    }
  })());
});
