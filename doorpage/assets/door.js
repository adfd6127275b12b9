// The door page: a scanner key (kept in this tab's sessionStorage only),
// a date of its event, then check-ins from the camera (jsQR) or typed
// codes, each answered full-screen. Everything is written with
// textContent: nothing the server or a QR code says becomes markup.
//
// Offline: once a date is chosen the page downloads its manifest (the
// hashes of the tickets' codes, never the codes) and keeps it current
// with `since`. Without a network it decides from the manifest, keeps
// each scan (its idempotency key and scanned_at made when scanned) in
// IndexedDB, and sends the queue to /check-ins/batch when the network is
// back, showing any scan the server decided otherwise. A service worker
// keeps the page itself opening without a network.
(function () {
  "use strict";

  var body = document.body;
  var routes = { dates: body.dataset.dates, checkIns: body.dataset.checkins, stats: body.dataset.stats,
    manifest: body.dataset.manifest, batch: body.dataset.batch };

  // How long a result stays up, how long a code the camera keeps seeing is
  // ignored after it was last seen, how often the camera is decoded and
  // the counts refreshed, and how a failed request is retried.
  var SHOW_ADMITTED_MS = 2000;
  var SHOW_REJECTED_MS = 3000;
  var SAME_CODE_MS = 3000;
  var DECODE_EVERY_MS = 110;
  var COUNTS_EVERY_MS = 10000;
  var REQUEST_TIMEOUT_MS = 8000;
  var RETRY_DELAYS_MS = [500, 1500, 3000];
  var REUSE_PENDING_MS = 10 * 60 * 1000;
  var MAX_CODE = 128;
  // While offline the page tries the server this often; a batch carries
  // at most BATCH scans and a manifest page MANIFEST_PAGE tickets (the
  // routes' limits).
  var OFFLINE_PROBE_MS = 3000;
  var BATCH = 500;
  var MANIFEST_PAGE = 1000;

  var REASONS = {
    unknown_code: "Unknown ticket",
    test_ticket: "Test ticket — not valid",
    wrong_event: "Ticket is for another event",
    wrong_date: "Ticket is for another date",
    "void": "Ticket was voided",
    already_checked_in: "Already checked in",
    not_inside: "Not inside — no entry to exit from"
  };

  function $(id) { return document.getElementById(id); }

  // Storage in this tab only; memory when the browser refuses it.
  var memory = {};
  var store = {
    get: function (k) { try { var v = sessionStorage.getItem(k); return v === null ? memory[k] || "" : v; } catch (e) { return memory[k] || ""; } },
    set: function (k, v) { memory[k] = v; try { if (v) { sessionStorage.setItem(k, v); } else { sessionStorage.removeItem(k); } } catch (e) { /* memory holds it */ } }
  };
  var S_KEY = "boxoffice.door.key", S_DATE = "boxoffice.door.date", S_DIR = "boxoffice.door.direction", S_GATE = "boxoffice.door.gate";
  // The key's event and dates as /door/dates last said, so a reload
  // without a network still knows them.
  var S_EVENT = "boxoffice.door.event";

  var state = {
    key: "",
    event: null,        // {event, environment, dates}
    date: null,         // one of event.dates
    direction: store.get(S_DIR) === "exit" ? "exit" : "entry",
    busy: false,        // a check-in is on its way
    showing: false,     // a result covers the screen
    pending: {},        // body → {idem, at}: check-ins that got no answer
    offline: false,     // the last request got no answer at all
    loading: null,      // the chosen date's stored manifest and queue, being read
    manifest: null,     // {id, since, synced, tickets: {code_hash: entry}} of the chosen date
    queue: [],          // scans waiting for the server, oldest first
    conflicts: [],      // scans the server decided otherwise than this phone did offline
    lastCode: "", lastSeen: 0
  };

  // ---- steps -------------------------------------------------------------

  function show(step) {
    ["step-key", "step-date", "step-scan"].forEach(function (id) { $(id).hidden = id !== step; });
    $("bar").hidden = step === "step-key";
    $("change").hidden = step !== "step-scan";
    $("footer").hidden = step === "step-scan";
    if (step === "step-scan") { startCamera(); startCounts(); } else { stopCamera(); stopCounts(); }
  }

  function showError(id, text) {
    var el = $(id);
    el.textContent = text || "";
    el.hidden = !text;
  }

  function headers(extra) {
    var h = { "X-API-Key": state.key, "Accept": "application/json" };
    Object.keys(extra || {}).forEach(function (k) { h[k] = extra[k]; });
    return h;
  }

  // request fetches with a timeout; it resolves {status, data, retryAfter}
  // and rejects only when no answer came.
  function request(url, opts) {
    var ctl = typeof AbortController === "function" ? new AbortController() : null;
    var timer = setTimeout(function () { if (ctl) { ctl.abort(); } }, REQUEST_TIMEOUT_MS);
    opts.cache = "no-store";
    opts.credentials = "omit";
    if (ctl) { opts.signal = ctl.signal; }
    return fetch(url, opts).then(function (res) {
      return res.text().then(function (text) {
        var data = null;
        try { data = JSON.parse(text); } catch (e) { data = null; }
        return { status: res.status, data: data, retryAfter: parseInt(res.headers.get("Retry-After") || "0", 10) || 0 };
      });
    }).finally(function () { clearTimeout(timer); });
  }

  function errorCode(ans) { return ans && ans.data && ans.data.error ? ans.data.error.code : ""; }
  function errorMessage(ans) { return ans && ans.data && ans.data.error ? ans.data.error.message : ""; }

  // keyProblem tells staff, before asking the server, why a pasted text
  // cannot be a scanner key.
  function keyProblem(k) {
    if (!k) { return "Paste the scanner key first."; }
    if (/^svc_(test|live)_/.test(k)) { return "This is an app's API key. The door needs a scanner key: it begins svc_scan_live_ or svc_scan_test_."; }
    if (!/^svc_scan_(test|live)_[\x21-\x7e]+$/.test(k)) { return "That is not a scanner key. Scanner keys begin svc_scan_live_ or svc_scan_test_."; }
    return "";
  }

  function keyRefused(ans) {
    switch (errorCode(ans)) {
      case "invalid_api_key": case "missing_api_key":
        return "This key is not valid: it was revoked or is mistyped. Ask the organiser for the scanner key.";
      case "scanner_key_required":
        return "This is not a scanner key. Ask the organiser for the scanner key of this event.";
      case "rate_limit_exceeded":
        return "Too many tries from this network. Wait " + (ans.retryAfter || 60) + " seconds, then try again.";
    }
    return "";
  }

  // loadEvent asks which event and dates the key covers; remembered says
  // the key came from this tab's storage (a reload), not from staff.
  function loadEvent(k, remembered) {
    var go = $("key-go");
    go.disabled = true;
    go.textContent = "Checking the key…";
    state.key = k;
    return request(routes.dates, { headers: headers() }).then(function (ans) {
      if (ans.status === 200 && ans.data && ans.data.data) {
        store.set(S_KEY, k);
        store.set(S_EVENT, JSON.stringify(ans.data.data));
        state.event = ans.data.data;
        afterEvent(remembered);
        return;
      }
      state.key = "";
      store.set(S_KEY, "");
      show("step-key");
      showError("key-error", keyRefused(ans) || errorMessage(ans) || "The server could not check the key just now. Try again.");
    }, function () {
      // A reload without a network: the tab knows the key's event.
      var known = remembered ? parseEvent(store.get(S_EVENT)) : null;
      if (known) {
        state.event = known;
        setOffline(true);
        afterEvent(true);
        return;
      }
      state.key = "";
      show("step-key");
      $("key").value = k;
      showError("key-error", "No connection to the server. Check the phone's internet, then press Continue again.");
    }).finally(function () {
      go.disabled = false;
      go.textContent = "Continue";
    });
  }

  function parseEvent(text) {
    try { var ev = JSON.parse(text); return ev && ev.event && ev.dates ? ev : null; } catch (e) { return null; }
  }

  function afterEvent(remembered) {
    var ev = state.event;
    $("bar-event").textContent = ev.event.name;
    $("bar-test").hidden = ev.environment !== "test";
    $("r-test").hidden = ev.environment !== "test";
    $("date-event").textContent = ev.environment === "test" ? "This is a test key: it admits test tickets only." : "";
    $("date-event").hidden = ev.environment !== "test";
    var stored = remembered ? parseInt(store.get(S_DATE), 10) : 0;
    var chosen = ev.dates.filter(function (d) { return d.id === stored; })[0];
    if (!chosen && ev.dates.length === 1) { chosen = ev.dates[0]; }
    if (chosen) { pickDate(chosen); } else { listDates(); }
  }

  function listDates() {
    var list = $("dates");
    list.textContent = "";
    showError("date-error", state.event.dates.length ? "" : "This event has no dates to check in.");
    state.event.dates.forEach(function (d) {
      var li = document.createElement("li");
      var b = document.createElement("button");
      b.type = "button";
      b.id = "date-" + d.id;
      b.className = (d.today ? "today" : "") + (d.over ? " over" : "");
      var day = document.createElement("span");
      day.className = "when";
      if (d.today || d.over) {
        var tag = document.createElement("span");
        tag.className = "tag";
        tag.textContent = d.today ? "TODAY" : "OVER";
        day.appendChild(tag);
      }
      day.appendChild(document.createTextNode(d.day));
      b.appendChild(day);
      [d.time, d.venue].forEach(function (text) {
        var line = document.createElement("span");
        line.className = "where";
        line.textContent = text;
        b.appendChild(line);
      });
      b.addEventListener("click", function () { pickDate(d); });
      li.appendChild(b);
      list.appendChild(li);
    });
    $("bar-date").textContent = "Pick a date";
    show("step-date");
  }

  function pickDate(d) {
    state.date = d;
    store.set(S_DATE, String(d.id));
    $("bar-date").textContent = d.short + " · " + d.venue;
    setCounts(null);
    if (state.manifest && state.manifest.id !== manifestID(d.id)) { state.manifest = null; }
    // Scans wait for the stored manifest and queue (a reload offline:
    // the camera may read a code before they are read).
    var loading = state.loading = loadManifest(d.id).finally(function () { if (state.loading === loading) { state.loading = null; } });
    show("step-scan");
    loading.then(function () { sync(); });
  }

  $("key-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var k = $("key").value.trim();
    var problem = keyProblem(k);
    showError("key-error", problem);
    if (!problem) { $("key").value = ""; loadEvent(k, false); }
  });
  $("key-show").addEventListener("change", function () { $("key").type = this.checked ? "text" : "password"; });
  $("forget").addEventListener("click", forgetKey);
  $("change").addEventListener("click", function () {
    if (state.event && state.event.dates.length > 1) { listDates(); } else { forgetKey(); }
  });

  function forgetKey() {
    state.key = "";
    state.event = null;
    state.date = null;
    state.manifest = null;
    store.set(S_KEY, "");
    store.set(S_EVENT, "");
    store.set(S_DATE, "");
    showError("key-error", "");
    show("step-key");
  }

  // ---- direction and gate ----------------------------------------------

  function setDirection(dir) {
    state.direction = dir;
    store.set(S_DIR, dir);
    $("dir-entry").setAttribute("aria-pressed", String(dir === "entry"));
    $("dir-exit").setAttribute("aria-pressed", String(dir === "exit"));
  }
  $("dir-entry").addEventListener("click", function () { setDirection("entry"); });
  $("dir-exit").addEventListener("click", function () { setDirection("exit"); });
  setDirection(state.direction);
  $("gate").value = store.get(S_GATE);
  $("gate").addEventListener("input", function () { store.set(S_GATE, this.value.trim()); });

  // ---- counts ------------------------------------------------------------

  var countsTimer = 0;
  var counts = null;

  function setCounts(c) {
    counts = c;
    $("n-inside").textContent = c ? c.inside : "–";
    $("n-checked").textContent = c ? c.checked_in : "–";
    $("n-issued").textContent = c ? c.issued : "–";
    $("r-counts").textContent = c ? "Inside " + c.inside + " · Checked in " + c.checked_in + " of " + c.issued : "";
  }

  // refreshCounts shows the server's counts; offline, or while scans
  // wait to be sent, this phone's view of them from the manifest.
  function refreshCounts() {
    if (!state.date) { return Promise.resolve(); }
    if (state.offline || state.queue.length) { localCounts(); }
    if (state.offline) { return Promise.resolve(); }
    var id = state.date.id;
    return request(routes.stats + "?eventdate_id=" + encodeURIComponent(id), { headers: headers() }).then(function (ans) {
      setOffline(false);
      if (ans.status === 200 && ans.data && ans.data.data && state.date && state.date.id === id && !state.queue.length) { setCounts(ans.data.data); }
    }, function () { setOffline(true); });
  }

  function localCounts() {
    var m = state.manifest;
    if (!m) { return; }
    var c = { inside: 0, checked_in: 0, issued: 0 };
    Object.keys(m.tickets).forEach(function (h) {
      var t = m.tickets[h];
      if (t.status === "void") { return; }
      c.issued++;
      if (t.status === "checked_in") { c.checked_in++; }
      if (t.inside) { c.inside++; }
    });
    setCounts(c);
  }

  // Every COUNTS_EVERY_MS online (OFFLINE_PROBE_MS offline) the page
  // sends what waits, brings the manifest up to date and refreshes the
  // counts; the first answer after a silence ends the offline state.
  var lastRound = 0;
  function round() {
    lastRound = Date.now();
    return flush().then(sync).then(refreshCounts);
  }

  function startCounts() {
    stopCounts();
    refreshCounts();
    countsTimer = setInterval(function () {
      if (document.hidden) { return; }
      if (Date.now() - lastRound >= (state.offline ? OFFLINE_PROBE_MS : COUNTS_EVERY_MS) - 50) { round(); }
    }, OFFLINE_PROBE_MS);
  }
  function stopCounts() { clearInterval(countsTimer); countsTimer = 0; }

  // ---- check-in ----------------------------------------------------------

  function idempotencyKey() {
    var b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return "door-" + Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join("");
  }

  function sleep(ms) { return new Promise(function (r) { setTimeout(r, ms); }); }

  // post sends one check-in, retrying with the same Idempotency-Key while
  // no answer comes (or a 5xx, 409 in progress, or a short 429): the
  // server answers a retry with what it answered the first try.
  function post(bodyText, idem) {
    var attempt = 0;
    function once() {
      return request(routes.checkIns, {
        method: "POST",
        headers: headers({ "Content-Type": "application/json", "Idempotency-Key": idem }),
        body: bodyText
      }).then(function (ans) {
        var again = ans.status >= 500 || errorCode(ans) === "idempotency_in_progress" ||
          (ans.status === 429 && ans.retryAfter <= 5);
        if (!again || attempt >= RETRY_DELAYS_MS.length) { return ans; }
        return sleep(Math.max(RETRY_DELAYS_MS[attempt++], ans.retryAfter * 1000)).then(once);
      }, function (err) {
        // No answer at all: with the manifest the page decides offline
        // at once rather than keep the queue waiting.
        if (attempt >= RETRY_DELAYS_MS.length || state.manifest) { throw err; }
        return sleep(RETRY_DELAYS_MS[attempt++]).then(once);
      });
    }
    return once();
  }

  // normalise reads a typed code as the ticket prints it: groups of four
  // with spaces, any case.
  function normalise(typed) { return typed.replace(/[\s-]+/g, "").toUpperCase(); }

  function checkIn(code) {
    if (state.busy || state.showing || !state.date) { return; }
    if (state.loading) {
      state.busy = true;
      state.loading.then(function () { state.busy = false; checkIn(code); });
      return;
    }
    if (code.length > MAX_CODE) {
      showResult("rejected", "REJECTED", "Not a ticket's QR code", "", null);
      return;
    }
    var payload = { code: code, eventdate_id: state.date.id, direction: state.direction };
    var gate = $("gate").value.trim();
    if (gate) { payload.gate = gate; }
    var scannedAt = new Date().toISOString();
    if ((state.offline || state.queue.length) && state.manifest) {
      // Offline, or scans still wait: this one joins the queue, so the
      // server gets the scans in the order they were made.
      state.busy = true;
      $("checking").hidden = false;
      decideOffline(payload, idempotencyKey(), scannedAt).finally(function () {
        state.busy = false;
        $("checking").hidden = true;
      });
      return;
    }
    var bodyText = JSON.stringify(payload);
    // A scan of the same ticket after one that got no answer reuses its
    // key: if the first did reach the server, this one gets its answer
    // back instead of "already checked in" by itself.
    var now = Date.now();
    Object.keys(state.pending).forEach(function (b) { if (now - state.pending[b].at > REUSE_PENDING_MS) { delete state.pending[b]; } });
    var idem = state.pending[bodyText] ? state.pending[bodyText].idem : idempotencyKey();
    state.pending[bodyText] = { idem: idem, at: now };
    state.busy = true;
    $("checking").hidden = false;
    // Nothing checked: the camera may send the same ticket again at once.
    function unchecked() { if (state.lastCode === code) { state.lastCode = ""; } }
    post(bodyText, idem).then(function (ans) {
      if (ans.status < 500 && ans.status !== 429 && errorCode(ans) !== "idempotency_in_progress") { delete state.pending[bodyText]; }
      if (!answer(ans)) { unchecked(); }
    }, function () {
      setOffline(true);
      if (state.manifest && state.date && state.date.id === payload.eventdate_id) {
        // The same key goes in the queue: if this try did reach the
        // server, the batch finds the key used and nothing is recorded
        // twice.
        delete state.pending[bodyText];
        return decideOffline(payload, idem, scannedAt);
      }
      unchecked();
      showResult("unchecked", "NOT CHECKED", "No answer from the server", "No ticket list on this phone yet: check its connection, then scan the ticket again.", null);
    }).finally(function () {
      state.busy = false;
      $("checking").hidden = true;
    });
  }

  function two(n) { return (n < 10 ? "0" : "") + n; }

  function already(prev) {
    if (!prev || !prev.scanned_at) { return REASONS.already_checked_in; }
    var t = new Date(prev.scanned_at);
    if (isNaN(t.getTime())) { return REASONS.already_checked_in; }
    var s = "Already checked in ";
    if (t.toDateString() !== new Date().toDateString()) {
      s += "on " + t.toLocaleDateString(undefined, { day: "numeric", month: "short" }) + " ";
    }
    s += "at " + two(t.getHours()) + ":" + two(t.getMinutes());
    if (prev.gate) { s += " (" + prev.gate + ")"; }
    return s;
  }

  // ticketLine is the ticket type and "Ticket n of N" (the ticket's
  // position and tickets_in_order).
  function ticketLine(ticket) {
    if (!ticket) { return ""; }
    var of = typeof ticket.tickets_in_order === "number" ? ticket.tickets_in_order : 0;
    var pos = typeof ticket.position === "number" ? "Ticket " + ticket.position + (of ? " of " + of : "") : "";
    return [ticket.ticket_name, pos].filter(Boolean).join(" · ");
  }

  // answer shows what the server said, and reports whether the ticket
  // was checked (admitted or rejected).
  function answer(ans) {
    var c = ans.data && ans.data.data;
    if (ans.status === 200 && c && (c.result === "admitted" || c.result === "rejected")) {
      setOffline(false);
      var line = ticketLine(c.ticket);
      if (c.result === "admitted") {
        if (c.direction === "exit") {
          showResult("admitted", "EXIT OK", "Exit recorded — may come back in", line, "✓");
        } else {
          showResult("admitted", "ADMITTED", "", line, "✓");
        }
      } else {
        var reason = c.reason === "already_checked_in" ? already(c.previous) : REASONS[c.reason] || String(c.reason || "").replace(/_/g, " ");
        showResult("rejected", "REJECTED", reason, line, "✕");
      }
      refreshCounts();
      return true;
    }
    switch (errorCode(ans)) {
      case "invalid_api_key": case "missing_api_key": case "scanner_key_required":
        showResult("unchecked", "NOT CHECKED", "The scanner key stopped working", "It was revoked. Tap, then paste a new key.", null, forgetKey);
        return false;
      case "event_date_not_found":
        showResult("unchecked", "NOT CHECKED", "This date is not of the key's event", "Tap, then pick the date again.", null, listDates);
        return false;
      case "rate_limit_exceeded":
        showResult("unchecked", "NOT CHECKED", "Too many scans at once", "Wait " + (ans.retryAfter || 5) + " seconds, then scan again.", null);
        return false;
    }
    showResult("unchecked", "NOT CHECKED", errorMessage(ans) || "The server could not check this ticket", "Scan the ticket again.", null);
    return false;
  }

  // ---- offline -----------------------------------------------------------

  // The browser's storage for the offline door: "manifests" holds each
  // date's manifest (by environment and date), "queue" the scans waiting
  // for the server (by idempotency key). Without IndexedDB (a private
  // window of some browsers) both live in memory only.
  var dbReady = new Promise(function (ok) {
    if (!window.indexedDB) { ok(null); return; }
    var rq;
    try { rq = indexedDB.open("boxoffice-door", 1); } catch (e) { ok(null); return; }
    rq.onupgradeneeded = function () {
      rq.result.createObjectStore("manifests", { keyPath: "id" });
      rq.result.createObjectStore("queue", { keyPath: "idempotency_key" });
    };
    rq.onsuccess = function () { ok(rq.result); };
    rq.onerror = function () { ok(null); };
    rq.onblocked = function () { ok(null); };
  });

  // idb runs fn on one object store and resolves, once the transaction
  // is written, with what fn's request returned.
  function idb(name, mode, fn) {
    return dbReady.then(function (db) {
      if (!db) { return undefined; }
      return new Promise(function (ok, fail) {
        var t = db.transaction(name, mode);
        var rq = fn(t.objectStore(name));
        t.oncomplete = function () { ok(rq ? rq.result : undefined); };
        t.onerror = t.onabort = function () { fail(t.error); };
      });
    });
  }

  function manifestID(dateID) { return state.event.environment + ":" + dateID; }

  function saveManifest() {
    var m = state.manifest;
    if (!m) { return Promise.resolve(); }
    return idb("manifests", "readwrite", function (s) { return s.put(m); }).catch(function () { /* kept in memory */ });
  }

  // loadManifest reads the date's manifest and the waiting scans from the
  // browser's storage (a reload, online or not).
  function loadManifest(dateID) {
    var id = manifestID(dateID);
    return Promise.all([
      idb("manifests", "readonly", function (s) { return s.get(id); }),
      idb("queue", "readonly", function (s) { return s.getAll(); })
    ]).then(function (got) {
      if (!state.date || state.date.id !== dateID) { return; }
      state.manifest = got[0] || state.manifest;
      var mem = {};
      state.queue.forEach(function (q) { mem[q.idempotency_key] = q; });
      (got[1] || []).forEach(function (q) { mem[q.idempotency_key] = q; });
      state.queue = Object.keys(mem).map(function (k) { return mem[k]; }).sort(function (a, b) { return a.seq - b.seq; });
      offlineBar();
      if (state.offline || state.queue.length) { localCounts(); }
    }, function () { /* memory only */ });
  }

  // sync brings the chosen date's manifest up to date, page by page from
  // its `since`, once no scans wait (the server's view of a ticket this
  // phone admitted offline is only right once the scan is sent).
  var syncing = null;
  function sync() {
    if (syncing) { return syncing; }
    if (!state.date || !state.key || state.queue.length) { return Promise.resolve(); }
    var dateID = state.date.id, id = manifestID(dateID);
    var m = state.manifest && state.manifest.id === id ? state.manifest : { id: id, since: "", synced: "", tickets: {} };
    // The pages' tickets are applied at the end, and only if no scan was
    // decided offline meanwhile (that scan's ticket is this phone's to
    // mark until the server has the scan); otherwise the next round
    // reads them again from the same since.
    var since = m.since, fresh = !since, updates = {}, changed = false;
    function page() {
      var url = routes.manifest + "?eventdate_id=" + encodeURIComponent(dateID) + "&limit=" + MANIFEST_PAGE +
        (since ? "&since=" + encodeURIComponent(since) : "");
      return request(url, { headers: headers() }).then(function (ans) {
        if (ans.status !== 200 || !ans.data || !ans.data.data || !ans.data.meta) {
          // A token the server no longer takes: download the whole list.
          if (ans.status === 422 && since) { since = ""; fresh = true; updates = {}; return page(); }
          return false;
        }
        setOffline(false);
        ans.data.data.forEach(function (t) {
          updates[t.code_hash] = { ticket_name: t.ticket_name, position: t.position, tickets_in_order: t.tickets_in_order, status: t.status, inside: t.inside };
          changed = true;
        });
        since = ans.data.meta.next_since || since;
        if (ans.data.meta.has_more && ans.data.data.length) { return page(); }
        return true;
      });
    }
    syncing = page().then(function (done) {
      if (!done || !state.date || state.date.id !== dateID || state.queue.length) { return; }
      if (fresh) { m = { id: id, since: "", synced: "", tickets: {} }; }
      Object.keys(updates).forEach(function (h) { m.tickets[h] = updates[h]; });
      m.since = since;
      m.synced = new Date().toISOString();
      state.manifest = m;
      offlineBar();
      if (changed || fresh) { return saveManifest(); }
    }, function () { setOffline(true); }).finally(function () { syncing = null; });
    return syncing;
  }

  function sha256(text) {
    return crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)).then(function (buf) {
      return Array.prototype.map.call(new Uint8Array(buf), function (x) { return (x + 256).toString(16).slice(1); }).join("");
    });
  }

  // decideOffline answers a scan from the manifest as the server would
  // (unknown, void, already inside, not inside), marks the ticket in the
  // manifest, and queues the scan, stored before the answer shows.
  function decideOffline(payload, idem, scannedAt) {
    var m = state.manifest;
    return sha256(normalise(payload.code)).then(function (hash) {
      var t = m.tickets[hash];
      var local = { result: "rejected", reason: "" };
      if (!t) {
        local.reason = "unknown_code";
      } else if (t.status === "void") {
        local.reason = "void";
      } else if (payload.direction === "exit") {
        if (t.inside) { local.result = "admitted"; t.inside = false; } else { local.reason = "not_inside"; }
      } else if (t.inside) {
        local.reason = "already_checked_in";
      } else {
        local.result = "admitted";
        t.inside = true;
        t.status = "checked_in";
      }
      var scan = { code: payload.code, eventdate_id: payload.eventdate_id, direction: payload.direction, scanned_at: scannedAt, idempotency_key: idem };
      if (payload.gate) { scan.gate = payload.gate; }
      var q = { idempotency_key: idem, seq: Date.now() + Math.random(), scan: scan, local: local, line: ticketLine(t) };
      state.queue.push(q);
      offlineBar();
      return idb("queue", "readwrite", function (s) { return s.put(q); }).catch(function () { /* kept in memory */ })
        .then(saveManifest).then(function () {
          var line = t ? ticketLine(t) : "";
          var note = "Offline — sent when the network is back";
          if (local.result === "admitted") {
            showResult("admitted", payload.direction === "exit" ? "EXIT OK" : "ADMITTED", note, line, "✓");
          } else {
            showResult("rejected", "REJECTED", REASONS[local.reason] + " (offline)", line, "✕");
          }
          localCounts();
          if (!state.offline) { flush(); }
        });
    });
  }

  // flush sends the waiting scans, oldest first, BATCH at a time. A scan
  // the server answered leaves the queue; one it could not take yet
  // (rate_limit_exceeded) stays for the next round; a scan whose key was
  // already used with its first, online try (idempotency_conflict) was
  // recorded by that try. A scan this phone admitted and the server did
  // not is shown to staff as a conflict.
  var flushing = null;
  function flush() {
    if (flushing) { return flushing; }
    if (!state.queue.length || !state.key) { return Promise.resolve(); }
    var sending = state.queue.slice(0, BATCH);
    flushing = request(routes.batch, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify({ scans: sending.map(function (q) { return q.scan; }) })
    }).then(function (ans) {
      if (ans.status !== 200 || !ans.data || !Array.isArray(ans.data.data) || ans.data.data.length !== sending.length) {
        if (ans.status < 500 && ans.status !== 429) { setOffline(false); }
        return false;
      }
      setOffline(false);
      var done = [];
      ans.data.data.forEach(function (r, i) {
        var q = sending[i];
        if (r && r.error) {
          if (r.error.code === "rate_limit_exceeded") { return; }
          if (r.error.code !== "idempotency_conflict") { conflict(q, null, r.error.message || r.error.code); }
        } else if (r && q.local.result === "admitted" && r.result !== "admitted") {
          conflict(q, r, "");
        }
        done.push(q.idempotency_key);
      });
      var gone = {};
      done.forEach(function (k) { gone[k] = true; });
      state.queue = state.queue.filter(function (q) { return !gone[q.idempotency_key]; });
      offlineBar();
      return idb("queue", "readwrite", function (s) { done.forEach(function (k) { s.delete(k); }); return null; })
        .catch(function () { /* the server answers a resent scan as before */ })
        .then(function () { return done.length === sending.length && state.queue.length > 0; });
    }, function () { setOffline(true); return false; }).finally(function () { flushing = null; });
    return flushing.then(function (more) {
      if (more) { return flush(); }
      if (!state.queue.length) { refreshCounts(); }
    });
  }

  // conflict shows staff a scan the server decided otherwise: most often
  // a ticket admitted here offline that another door had admitted first.
  function conflict(q, r, problem) {
    var t = new Date(q.scan.scanned_at);
    var what = (q.line || "A ticket") + ", " + (q.scan.direction === "exit" ? "let out" : "admitted") + " here offline at " + two(t.getHours()) + ":" + two(t.getMinutes()) + ": ";
    if (r && r.reason === "already_checked_in") {
      what += "it was already inside (" + already(r.previous).replace(/^Already checked in /, "checked in ") + "). Two people may have entered on one ticket.";
    } else if (r) {
      what += "the server says " + (REASONS[r.reason] || String(r.reason || r.result)).toLowerCase() + ".";
    } else {
      what += "not recorded: " + problem;
    }
    state.conflicts.push(what);
    var li = document.createElement("li");
    li.textContent = what;
    $("conflict-list").appendChild(li);
    $("conflicts").hidden = false;
  }
  $("conflicts-seen").addEventListener("click", function () {
    state.conflicts = [];
    $("conflict-list").textContent = "";
    $("conflicts").hidden = true;
  });

  function setOffline(off) {
    if (state.offline === off) { return; }
    state.offline = off;
    offlineBar();
    if (!off && state.queue.length) { flush(); }
  }

  // offlineBar tells staff the page is offline and how many scans wait.
  function offlineBar() {
    var el = $("offline");
    var n = state.queue.length;
    var waiting = n === 1 ? "1 scan waits to be sent." : n + " scans wait to be sent.";
    el.textContent = "";
    if (state.offline) {
      var b = document.createElement("b");
      b.textContent = "OFFLINE";
      el.appendChild(b);
      var synced = state.manifest && state.manifest.synced ? new Date(state.manifest.synced) : null;
      el.appendChild(document.createTextNode(" · " + (state.manifest ?
        "checking from this phone's ticket list" + (synced ? " (updated " + two(synced.getHours()) + ":" + two(synced.getMinutes()) + ")" : "") + ". " + waiting :
        "no ticket list on this phone yet: scans cannot be checked.")));
    } else if (n) {
      el.appendChild(document.createTextNode("Back online · sending " + (n === 1 ? "1 waiting scan" : n + " waiting scans") + "…"));
    }
    el.hidden = !state.offline && !n;
  }

  window.addEventListener("online", function () { if (state.date) { round(); } });
  window.addEventListener("offline", function () { setOffline(true); });

  // The service worker keeps this page opening without a network.
  if ("serviceWorker" in navigator && body.dataset.worker) {
    navigator.serviceWorker.register(body.dataset.worker, { scope: body.dataset.scope }).catch(function () { /* online only */ });
  }

  // ---- the result screen -------------------------------------------------

  var resultTimer = 0, resultShownAt = 0, afterResult = null;

  function showResult(kind, word, reason, line, mark, then) {
    var r = $("result");
    r.className = "result " + kind;
    $("r-mark").textContent = mark || "!";
    $("r-word").textContent = word;
    $("r-reason").textContent = reason;
    $("r-reason").hidden = !reason;
    $("r-ticket").textContent = line;
    $("r-ticket").hidden = !line;
    $("r-counts").hidden = kind === "unchecked";
    $("r-next").textContent = kind === "unchecked" ? "Tap to go back" : "Tap for the next ticket";
    r.hidden = false;
    state.showing = true;
    resultShownAt = Date.now();
    afterResult = then || null;
    if (navigator.vibrate) { try { navigator.vibrate(kind === "admitted" ? 120 : [250, 120, 250]); } catch (e) { /* not on this phone */ } }
    clearTimeout(resultTimer);
    // Nothing was checked: the screen waits for a tap, so staff see it.
    if (kind !== "unchecked") { resultTimer = setTimeout(hideResult, kind === "admitted" ? SHOW_ADMITTED_MS : SHOW_REJECTED_MS); }
  }

  function hideResult() {
    clearTimeout(resultTimer);
    $("result").hidden = true;
    state.showing = false;
    var then = afterResult;
    afterResult = null;
    if (then) { then(); }
  }

  // A tap closes the result, but not the tap that was already on its way
  // when it appeared.
  $("result").addEventListener("click", function () { if (Date.now() - resultShownAt > 350) { hideResult(); } });

  $("code-form").addEventListener("submit", function (e) {
    e.preventDefault();
    var input = $("code");
    var code = normalise(input.value);
    if (!code || state.busy) { return; }
    input.value = "";
    input.blur();
    checkIn(code);
  });

  // ---- the camera --------------------------------------------------------

  var stream = null, raf = 0, lastDecode = 0, wakeLock = null;
  var video = $("video"), canvas = $("frame"), ctx2d = null;

  function cameraState(text, off) {
    $("camera-state").textContent = text;
    $("camera").classList.toggle("off", !!off);
  }

  function startCamera() {
    if (stream || document.hidden) { return; }
    if (typeof jsQR !== "function") { cameraState("The QR decoder did not load. Reload the page, or type codes below.", true); return; }
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      cameraState("No camera on this page: it needs HTTPS and a browser that allows the camera. Type codes below.", true);
      return;
    }
    cameraState("Starting the camera…");
    navigator.mediaDevices.getUserMedia({
      audio: false,
      video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 720 } }
    }).then(function (s) {
      if ($("step-scan").hidden || stream) { s.getTracks().forEach(function (t) { t.stop(); }); return; }
      stream = s;
      video.srcObject = s;
      var played = video.play();
      if (played && played.catch) { played.catch(function () { /* muted inline video plays; retried by the next frame */ }); }
      cameraState("Hold the ticket's QR code in the square");
      keepAwake();
      raf = requestAnimationFrame(tick);
    }, function (err) {
      var name = err && err.name;
      cameraState(name === "NotAllowedError" ? "Camera access was refused. Allow the camera for this site in the browser's settings, or type codes below." :
        name === "NotFoundError" ? "This device has no camera. Type codes below." :
        "The camera could not start. Close other apps that use it, reload, or type codes below.", true);
    });
  }

  function stopCamera() {
    cancelAnimationFrame(raf);
    raf = 0;
    if (stream) { stream.getTracks().forEach(function (t) { t.stop(); }); }
    stream = null;
    video.srcObject = null;
    if (wakeLock) { wakeLock.release().catch(function () {}); wakeLock = null; }
  }

  // keepAwake stops the phone's screen from dimming while it scans.
  function keepAwake() {
    if (!navigator.wakeLock || wakeLock) { return; }
    navigator.wakeLock.request("screen").then(function (l) { wakeLock = l; }, function () { /* not offered: the screen may dim */ });
  }

  // tick decodes a frame now and then. It keeps decoding while a result
  // is up or a check-in is on its way, so a ticket still held in front of
  // the camera keeps counting as seen and is not scanned twice.
  function tick(now) {
    raf = requestAnimationFrame(tick);
    if (now - lastDecode < DECODE_EVERY_MS || video.readyState < 2 || !video.videoWidth) { return; }
    lastDecode = now;
    var w = video.videoWidth, h = video.videoHeight;
    var scale = Math.min(1, 720 / Math.max(w, h));
    var cw = Math.round(w * scale), ch = Math.round(h * scale);
    if (canvas.width !== cw || canvas.height !== ch) { canvas.width = cw; canvas.height = ch; ctx2d = null; }
    if (!ctx2d) { ctx2d = canvas.getContext("2d", { willReadFrequently: true }); }
    ctx2d.drawImage(video, 0, 0, cw, ch);
    var qr = jsQR(ctx2d.getImageData(0, 0, cw, ch).data, cw, ch, { inversionAttempts: "dontInvert" });
    if (qr && qr.data) { seen(qr.data); }
  }

  // seen takes a decoded code: the same code seen again within
  // SAME_CODE_MS of its last sighting is the same ticket still in view.
  // A code seen while the screen is busy with another is left for the
  // next frame after it.
  function seen(code) {
    var t = Date.now();
    if (code === state.lastCode && t - state.lastSeen < SAME_CODE_MS) {
      state.lastSeen = t;
      return;
    }
    if (state.busy || state.showing) { return; }
    state.lastCode = code;
    state.lastSeen = t;
    checkIn(code);
  }

  document.addEventListener("visibilitychange", function () {
    if ($("step-scan").hidden) { return; }
    if (document.hidden) { stopCamera(); } else { startCamera(); refreshCounts(); }
  });

  // ---- start -------------------------------------------------------------

  var remembered = store.get(S_KEY);
  if (remembered && !keyProblem(remembered)) { loadEvent(remembered, true); } else { show("step-key"); }
})();
