// The door page's service worker: it keeps the page and its scripts in
// the browser's cache so a phone that opened /door once can open it again
// without a network. The page comes from the network while there is one
// (a new release is picked up at once) and from the cache when there is
// none; the scripts are content-hashed, so a cached one is always right.
// The API is never touched: check-ins, stats and the manifest go to the
// server as the page sends them.
"use strict";

var CACHE = "boxoffice-door-{{.Version}}";
var PAGE = {{.Page}};
var FILES = [PAGE, {{range .Assets}}{{.}}, {{end}}{{.Licenses}}];

self.addEventListener("install", function (e) {
  e.waitUntil(caches.open(CACHE).then(function (c) { return c.addAll(FILES); }).then(function () { return self.skipWaiting(); }));
});

// A new release's worker drops the caches of the old ones.
self.addEventListener("activate", function (e) {
  e.waitUntil(caches.keys().then(function (keys) {
    return Promise.all(keys.filter(function (k) { return k.indexOf("boxoffice-door-") === 0 && k !== CACHE; })
      .map(function (k) { return caches.delete(k); }));
  }).then(function () { return self.clients.claim(); }));
});

self.addEventListener("fetch", function (e) {
  var req = e.request;
  if (req.method !== "GET") { return; }
  var url = new URL(req.url);
  if (url.origin !== self.location.origin) { return; }
  if (url.pathname === PAGE && !url.search) {
    e.respondWith(fetch(req).then(function (res) {
      if (res.ok) {
        var copy = res.clone();
        caches.open(CACHE).then(function (c) { return c.put(PAGE, copy); });
      }
      return res;
    }, function (err) {
      return caches.match(PAGE, { cacheName: CACHE }).then(function (hit) { if (hit) { return hit; } throw err; });
    }));
    return;
  }
  if (FILES.indexOf(url.pathname + url.search) > 0) {
    e.respondWith(caches.match(url.pathname + url.search, { cacheName: CACHE }).then(function (hit) { return hit || fetch(req); }));
  }
});
