// Bullpen live updates: one websocket per tab, kept across htmx navigations. The socket is htmx's
// websocket extension's (hx-ext="ws" ws-connect on <body>, which every swap keeps): it connects
// and reconnects; this script reads Bullpen's JSON messages. The page says what it watches in
// <main data-live>. The server sends numbers (counts) and markup rendered by the pages' own
// Django templates; this script only decides where that markup goes (a bulk action's bar:
// actions.js). It never builds markup itself: job data is untrusted and escaped by the templates.
(function () {
  "use strict";

  // The extension's socket (its send), known once it opened; open while it is.
  var socket = null;
  var open = false;
  // Closes since the socket last opened: the pill says "reconnecting…" rather than "connecting…".
  var retry = 0;
  // "ok" or "down" as the server last said; "unknown" until it has said (its reader may not
  // have reached Redis yet) and while the socket is closed: only "ok" lets the pill say live.
  var redisState = "unknown";
  var recovering = null;
  // The reader of BullMQ's events beats every 2 s to pages that heard nothing else lately; a
  // page that has heard neither a beat nor an update for this long says its figures may be
  // stale instead of saying "live".
  var STALE_AFTER_MS = 7000;
  var lastBeat = 0;
  // Messages that come from the reader of the event streams (a list read for this page, a bulk
  // action's progress or a refusal say nothing about the reader).
  var READER_SAYS = { batch: true, counts: true, overview: true, rows: true, progress: true, job: true, logs: true };
  var stale = false;
  // Closed by the server because its user may no longer read: the page stays as it is and
  // says so (the server's words) until someone signs in and loads it again.
  var SIGNED_OUT = 4403;
  var signedOut = false;
  // With several Redis connections each has its own reader and status: one that is down
  // (name → why) leaves the others live, and the header names it.
  var connectionsDown = {};
  // What the reader says it cannot read now while it reads the rest (Redis Cluster masters
  // down): the pill says "live · … unreachable" rather than flipping to "unreachable".
  var partlyDown = "";

  function statusEl() { return document.getElementById("live-status"); }

  // The page's words and counts, as the server writes them in its language (util.js).
  var say = window.bullpenUtil.say;
  var count = window.bullpenUtil.count;

  function setStatus(state, text) {
    var el = statusEl();
    if (!el) return;
    el.dataset.state = state;
    el.textContent = text;
  }

  function main() { return document.getElementById("main"); }

  function spec() {
    var el = main();
    if (!el || !el.dataset.live) return {};
    try { return JSON.parse(el.dataset.live); } catch (e) { return {}; }
  }

  function send(message) {
    // Only while open: every opening sends the page's watch again, and a watch queued while
    // closed may be of a page left meanwhile (the extension would send it after the new one's).
    if (socket && open) socket.send(JSON.stringify(message));
  }

  // A watch a page's script adds after the page's own (the search page following an action it
  // started on a queue it does not show); a new page or a reconnection drops it.
  window.bullpenLiveWatch = function (message) { send(message); };

  function subscribe(force) {
    // Once per page: fragments that htmx loads into a page (charts, workers) change nothing.
    var el = main();
    if (!el || (!force && el.dataset.subscribed)) return;
    if (!open) return;
    el.dataset.subscribed = "1";
    var watch = spec();
    send({ reset: true });
    if (watch.watch === "overview") watch = overviewWatch();
    if (watch.watch) send(watch);
    watchOutage();
  }

  // The extension reconnects after the closes it takes for accidents (1006, a server stopped
  // or killed, a network lost; it asks htmx.config.wsReconnectDelay how long to wait); after
  // any other close but SIGNED_OUT (a proxy going away with 1000 or 1001, a re-check that
  // could not run) this script asks it to. Either waits up to 10 s with jitter, and for ever
  // once signed out.
  var NEVER = 2147483647;  // setTimeout's longest wait
  var extensionScheduled = false;
  function backoff(retries) {
    if (signedOut) return NEVER;
    return Math.min(10000, 500 * Math.pow(2, Math.min(retries + 1, 5))) * (0.75 + Math.random() / 2);
  }
  if (window.htmx) {
    window.htmx.config.wsReconnectDelay = function (retries) {
      extensionScheduled = true;
      return backoff(retries);
    };
  }

  document.addEventListener("htmx:wsConnecting", function () {
    setStatus("connecting", retry ? say("reconnecting", "reconnecting…") : say("connecting", "connecting…"));
  });
  document.addEventListener("htmx:wsOpen", function (event) {
    // subscribe(true) reads everything again; the server's first message, its status, ungreys.
    socket = event.detail.socketWrapper;
    open = true; retry = 0; lastBeat = Date.now(); stale = false; subscribe(true);
  });
  document.addEventListener("htmx:wsBeforeMessage", function (event) {
    // Bullpen's server speaks JSON: nothing it sends is markup for the extension to swap.
    event.preventDefault();
    var message;
    try { message = JSON.parse(event.detail.message); } catch (e) { return; }
    handle(message);
  });
  document.addEventListener("htmx:wsClose", function (event) {
    var closed = event.detail.event;
    var scheduled = extensionScheduled;
    extensionScheduled = false;
    open = false;
    redisState = "unknown";
    if (signedOut || closed.code === SIGNED_OUT) {
      if (!signedOut) showSignedOut(closed.reason || say("signed_out", "signed out"));
      return;
    }
    retry += 1;
    // Nothing reaches a closed socket: grey the figures until the server speaks again.
    stale = true;
    markStale(true, say("connection_lost", "Connection to the server lost: the figures may be out of date"));
    setStatus("reconnecting", say("reconnecting", "reconnecting…"));
    var wrapper = event.detail.socketWrapper;
    if (!scheduled) setTimeout(function () { if (!signedOut) wrapper.reconnect(); }, backoff(retry - 1));
  });

  function markStale(on, why) {
    var el = main();
    document.body.classList.toggle("stale", on);
    if (el) el.setAttribute("aria-busy", on ? "true" : "false");
    var status = statusEl();
    if (status) status.title = on ? why : say("live_updates", "Live updates");
  }

  function showSignedOut(text) {
    signedOut = true;
    setStatus("signed-out", text);
    markStale(true, text);
  }

  // The connection of the queue (or job) the page shows: after its slug's last "@", else the
  // default (first) one; "" for a page of every queue.
  function pageConnection(names) {
    var queue = spec().queue;
    if (typeof queue !== "string") return "";
    var tail = queue.slice(queue.lastIndexOf("@") + 1);
    return queue.indexOf("@") >= 0 && names.indexOf(tail) >= 0 ? tail : names[0];
  }

  // With several connections, what a status message means for this page: down when its own
  // connection is down (or every one is), live with the others named when only they are; null
  // with one connection (the message means what it says).
  function connectionState(message) {
    var names = (document.body.dataset.connections || "").split(" ").filter(Boolean);
    if (names.length < 2 || !message.connection) return null;
    if (message.redis === "down") connectionsDown[message.connection] = message.detail || "";
    else delete connectionsDown[message.connection];
    var down = Object.keys(connectionsDown);
    var mine = pageConnection(names);
    if ((mine && down.indexOf(mine) >= 0) || down.length >= names.length) {
      return { redis: "down", detail: connectionsDown[mine || down[0]], text: "" };
    }
    var text = down.length ? say("connections_down", "live · {names} unreachable", { names: down.join(", ") }) : "";
    return { redis: "ok", detail: "", text: text };
  }

  function partlyText() {
    return say("connections_down", "live · {names} unreachable", { names: partlyDown });
  }

  function checkBeat() {
    if (signedOut || !open || redisState === "down") return;
    var silent = Date.now() - lastBeat;
    if (silent > STALE_AFTER_MS && !stale) {
      stale = true;
      setStatus("stale", say("stale", "stale"));
      markStale(true, say("silent", "No live update for {n} s: the figures may be out of date", { n: Math.round(silent / 1000) }));
    }
  }

  function handle(message) {
    if (message.type === "signed-out") { showSignedOut(message.text); return; }
    if (signedOut) return;
    if (message.type === "status") {
      var seen = connectionState(message);
      if (seen) message = { type: "status", redis: seen.redis, detail: seen.detail, beat: message.beat };
      if (message.redis === "ok") partlyDown = message.partly || "";
      var partly = seen ? seen.text : "";
      if (!partly && partlyDown) partly = partlyText();
      var wasDown = redisState === "down";
      var wasStale = stale;
      redisState = message.redis;
      lastBeat = Date.now();
      stale = false;
      markStale(message.redis === "down", message.detail ? say("redis_down_detail", "Redis unreachable: {detail}", { detail: message.detail }) : say("redis_down", "Redis unreachable"));
      if (message.redis === "down") setStatus("down", say("redis_down", "Redis unreachable"));
      else if (partly) setStatus("partial", partly);
      else setStatus("live", say("live", "live"));
      if (message.redis === "ok" && wasStale) subscribe(true);  // read again what was missed
      if (message.redis === "ok" && main() && main().dataset.outage) recover();
      else if (message.redis === "ok" && wasDown) subscribe(true);  // read again what was missed
      return;
    }
    if (READER_SAYS[message.type] && redisState === "ok") {
      // The reader's updates prove it reads as its beat does (it beats only to pages it sent
      // nothing lately): a stale page is live again, and reads again what it may have missed.
      lastBeat = Date.now();
      if (stale) {
        stale = false;
        markStale(false, "");
        subscribe(true);
      }
    }
    if (redisState === "ok" && !stale) {
      var downNames = Object.keys(connectionsDown);
      if (downNames.length) setStatus("partial", say("connections_down", "live · {names} unreachable", { names: downNames.join(", ") }));
      else if (partlyDown) setStatus("partial", partlyText());
      else setStatus("live", say("live", "live"));
    }
    if (message.type === "batch") { message.messages.forEach(handle); return; }
    if (message.type === "counts") message.queues.forEach(applyCounts);
    else if (message.type === "overview") applyOverview(message);
    else if (message.type === "progress") applyProgress(message);
    else if (message.type === "rows") applyRows(message);
    else if (message.type === "list") applyList(message);
    else if (message.type === "job") applyJob(message);
    else if (message.type === "logs") applyLogs(message);
    else if (message.type === "followed" || message.type === "recheck") readAgain(message);
    else if (message.type === "gone") applyGone(message);
    document.dispatchEvent(new CustomEvent("bullpen:live", { detail: message }));
  }

  // ---- inserting server markup ---------------------------------------------------------------
  var parse = window.bullpenUtil.parse;

  function adopt(el) {
    if (window.htmx) window.htmx.process(el);
  }

  // A part holding the link or form whose request is on its way (a count clicked as it
  // changed) stays as it is: htmx gives the page it brings its address and title only while
  // the element that asked is still in the document, and that page replaces the part anyway.
  var LEAVING = "a.htmx-request, form.htmx-request";
  function asking(el) {
    return !!el && (el.matches(LEAVING) || !!el.querySelector(LEAVING));
  }

  // Parts of the page (a job's state, actions, facts) rendered again by the server: htmx swaps
  // each for the part with its id, as it swaps a response's out-of-band parts.
  function swapById(html) {
    // A part whose digest (or markup) is the one shown is left in place: an identical copy
    // swapped in under a finger would lose its click, and hundreds of them (every cell of a
    // list a page starts watching) held the page for seconds.
    var ids = Array.prototype.filter.call(parse(html).children, function (el) {
      var old = el.id && document.getElementById(el.id);
      return old && !asking(old) && !(el.dataset.digest && el.dataset.digest === old.dataset.digest) &&
        old.outerHTML !== el.outerHTML;
    }).map(function (el) { return el.id; });
    if (!ids.length || !window.htmx) return;
    var kept = [];
    ids.forEach(function (id) { kept = kept.concat(keptParts(document.getElementById(id))); });
    window.htmx.swap(document.body, html, { swapStyle: "none" },
      { selectOOB: ids.map(function (id) { return "#" + id; }).join(",") });
    kept.forEach(function (part) {
      var fresh = document.getElementById(part.id);
      var twin = fresh && fresh.querySelector(part.selector);
      if (twin) twin.replaceWith(part.node);
    });
    times();
  }

  // What someone is using in a part about to be swapped, taken out of it (so htmx does not
  // clean it up) to go back in its place: an open "Edit data" keeps its form while the state
  // around it changes, and a form they typed in (a reschedule delay, a priority) keeps what
  // they typed, where a fresh copy would quietly put its default value back.
  function keptParts(old) {
    var kept = [];
    var openDetails = old.querySelector("details.edit-data[open]");
    if (openDetails) kept.push({ node: openDetails, selector: "details.edit-data" });
    Array.prototype.forEach.call(old.querySelectorAll("form[hx-post]"), function (form) {
      if (openDetails && openDetails.contains(form)) return;
      var typed = form.contains(document.activeElement) ||
        Array.prototype.some.call(form.elements, function (input) {
          if (input.type === "checkbox" || input.type === "radio") {
            return input.checked !== input.defaultChecked;
          }
          return "defaultValue" in input && input.value !== input.defaultValue;
        });
      if (typed) kept.push({ node: form, selector: 'form[hx-post="' + CSS.escape(form.getAttribute("hx-post")) + '"]' });
    });
    kept.forEach(function (part) { part.id = old.id; part.node.remove(); });
    return kept;
  }

  function times() { window.dispatchEvent(new Event("bullpen:times")); }

  function flash(el) {
    el.classList.remove("flash");
    void el.offsetWidth;
    el.classList.add("flash");
  }

  function setText(el, text) {
    text = String(count(text));
    if (el && el.textContent !== text) { el.textContent = text; flash(el); }
  }

  // ---- counts ---------------------------------------------------------------------------------
  function applyCounts(queue) {
    var watch = spec();
    if (watch.watch === "queue" && watch.queue === queue.slug) {
      Object.keys(queue.counts).forEach(function (state) {
        setText(document.querySelector('.tab[data-state="' + state + '"] .count'), queue.counts[state]);
      });
      if (watch.state in queue.counts) {
        var before = document.querySelector('.total[data-state="' + watch.state + '"]');
        var changed = before && before.dataset.count !== String(queue.counts[watch.state]);
        if (changed) forgetListDigest();
        if (before) before.dataset.count = queue.counts[watch.state];
        setText(before, queue.counts[watch.state]);
        var pages = Math.max(1, Math.ceil(queue.counts[watch.state] / (watch.per_page || 50)));
        setText(document.querySelector(".pager .pages"), pages);
        var next = document.querySelector('.pager a[rel="next"]');
        if (next) next.hidden = (watch.page || 1) >= pages;
        // Failure groups re-read themselves (throttled) when failures come or go.
        if (changed && watch.state === "failed") document.body.dispatchEvent(new CustomEvent("bullpen-failed-changed"));
        checkList();
      }
      var qbadge = document.querySelector("h1 .badge.paused");
      if (qbadge) qbadge.hidden = !queue.paused;
      showReason(document.querySelector("h1 .pause-reason"), queue);
    }
  }

  function showReason(el, queue) {
    // Why a queue was paused, as the server read it with the pause (absent: as shown).
    if (!el) return;
    if (queue.paused && typeof queue.pauseReason === "string") el.textContent = queue.pauseReason;
    el.hidden = !queue.paused || !el.textContent;
  }

  // ---- the overview ---------------------------------------------------------------------------
  // The server knows what this overview shows (its watch says which rows and groups, and how
  // many queues its list counts) and sends, rendered by the page's own partials, the parts that
  // moved: the totals, its groups' figures, its rows' counts and pause badges. It says when
  // there are more queues than the list counts; the list is then asked for again.
  function listEl() { return document.getElementById("overview-list"); }

  function overviewWatch() {
    // What the overview shows and how its list groups the queues (as the server rendered it).
    var list = listEl(), watch = spec();
    watch.shown = shownQueues();
    watch.groups = Array.prototype.map.call(document.querySelectorAll("#overview-list tbody.group[data-group]"), function (body) {
      return body.dataset.group;
    }).slice(0, 500);
    watch.listed = list ? Number(list.dataset.total) || 0 : 0;
    if (list && list.dataset.group) {
      watch.group = list.dataset.group;
      watch.delimiter = list.dataset.delimiter || "";
    }
    return watch;
  }

  function shownQueues() {
    return Array.prototype.map.call(document.querySelectorAll("tr[data-queue]"), function (row) {
      return row.dataset.queue;
    }).slice(0, 500);
  }

  // The server renders the parts for what the page shows: it is told whenever the list changes
  // (a filter, an order, a page, an opened group, the list asked for again).
  document.addEventListener("htmx:afterSettle", function (event) {
    if (spec().watch !== "overview" || !listEl()) return;
    var target = event.detail && event.detail.target;
    if (!target || !(target.id === "overview-list" || target.closest && target.closest("#overview-list"))) return;
    send(overviewWatch());
  });

  function applyOverview(message) {
    if (spec().watch !== "overview") return;
    // Table cells parse only among cells: they come apart from the other parts.
    if (message.cells) swapById(message.cells);
    if (message.html) swapById(message.html);
    if (message.relist) relist(message.queues);
  }

  var refreshTimer = null;

  // Groups that were open when the list was asked for again: opened again in the fresh list.
  var reopenGroups = [];

  // Lists asked for again for the same number of queues: another server process may list a
  // new queue a moment later than the reader's, so a few more tries, then no more until the
  // number changes (a queue the list never holds must not fetch it for ever).
  var relistWait = window.bullpenUtil.tries(4, 300, 700);

  function relist(queues) {
    var wait = relistWait(queues);
    if (wait !== null) refreshList(wait);
  }

  function refreshList(delay) {
    // Queues created since the list was rendered: the list again, as the server renders it
    // now (it knows where they belong in this filter, order, page and group).
    if (refreshTimer || !window.htmx) return;
    refreshTimer = setTimeout(function () {
      refreshTimer = null;
      var list = listEl();
      if (!list || asking(list)) return;
      reopenGroups = Array.prototype.map.call(list.querySelectorAll("tbody.group:not(.collapsed)"), function (group) {
        return group.dataset.group;
      });
      window.htmx.ajax("GET", location.pathname + location.search, { target: "#overview-list", swap: "outerHTML" });
    }, delay);
  }

  // An opened group's rows come from the server as a click loads them (its toggle's hx-get).
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail && event.detail.target;
    if (!target || target.id !== "overview-list" || !reopenGroups.length) return;
    var keys = reopenGroups;
    reopenGroups = [];
    keys.forEach(function (key) {
      var group = document.querySelector('#overview-list tbody.group.collapsed[data-group="' + CSS.escape(key) + '"]');
      var toggle = group && group.querySelector(".group-toggle");
      if (toggle) toggle.click();
    });
  });

  // ---- the queue page's list ------------------------------------------------------------------
  var INSERT_AT_TOP = { waiting: true, active: true, completed: true, failed: true };

  function listBody() {
    var table = document.querySelector("#job-list table.jobs");
    return table ? table.tBodies[0] : null;
  }

  function expectedRows(watch) {
    var total = Number(((document.querySelector('.total[data-state="' + watch.state + '"]') || {}).dataset || {}).count);
    if (!isFinite(total)) return null;
    var perPage = watch.per_page || 50;
    return Math.max(0, Math.min(perPage, total - ((watch.page || 1) - 1) * perPage));
  }

  var disagreeTimer = null;

  function checkList() {
    // The rows shown and the count must agree. Counts often arrive a moment before the rows
    // they count; when they still disagree after that (a job left this page and another should
    // move up, or one came that belongs further down), say so and offer the list as it is now.
    var watch = spec();
    var body = listBody();
    if (watch.watch !== "queue" || !body) return;
    var table = body.parentElement;
    table.hidden = body.rows.length === 0;
    var empty = document.querySelector('#job-list [data-testid="no-jobs"]');
    if (empty && (watch.page || 1) === 1) empty.hidden = body.rows.length > 0;
    var news = document.querySelector("p.news");
    var expected = expectedRows(watch);
    var agree = expected === null || expected === body.rows.length;
    if (agree) {
      clearTimeout(disagreeTimer);
      disagreeTimer = null;
      if (news) news.hidden = true;
    } else if (!disagreeTimer) {
      disagreeTimer = setTimeout(function () {
        disagreeTimer = null;
        var again = expectedRows(spec());
        var rows = listBody();
        if (news && rows && again !== null && again !== rows.rows.length) news.hidden = false;
      }, 1500);
    }
  }

  function forgetListDigest() {
    // The list no longer holds what the server rendered: the next list it sends is swapped in.
    var list = document.getElementById("job-list");
    if (list) delete list.dataset.digest;
  }

  function applyRows(message) {
    var watch = spec();
    if (watch.watch !== "queue" || watch.queue !== message.queue) return;
    var body = listBody();
    if (!body) return;
    forgetListDigest();
    message.removed.forEach(function (gone) {
      var tr = body.querySelector('tr[data-job-id="' + CSS.escape(gone.id) + '"]');
      if (tr) tr.remove();
    });
    message.rows.forEach(function (change) {
      var existing = body.querySelector('tr[data-job-id="' + CSS.escape(change.id) + '"]');
      if (change.state !== watch.state) {
        if (existing) existing.remove();
        return;
      }
      if (!change.html) return;  // sent state-only: the count and checkList() tell
      var tr = parse(change.html).firstElementChild;
      if (existing) {
        var box = existing.querySelector(".job-select");
        var newBox = tr.querySelector(".job-select");
        if (box && newBox) newBox.checked = box.checked;
        existing.replaceWith(tr);
        adopt(tr);
        return;
      }
      if ((watch.page || 1) === 1 && watch.order !== "asc" && INSERT_AT_TOP[watch.state]) {
        body.insertBefore(tr, body.firstChild);
        adopt(tr);
        flash(tr);
        while (body.rows.length > (watch.per_page || 50)) body.deleteRow(body.rows.length - 1);
      }
    });
    checkList();
    times();
  }

  function applyList(message) {
    var watch = spec();
    var old = document.getElementById("job-list");
    if (watch.watch !== "queue" || watch.queue !== message.queue || !old) return;
    if (!window.htmx) return;
    var news = document.querySelector("p.news");
    if (message.stands) {
      // Nothing happened to the queue since the page read its list: it is Redis's still.
      if (news) news.hidden = true;
      return;
    }
    var incoming = parse(message.html).firstElementChild;
    if (old.dataset.digest && incoming && incoming.dataset.digest === old.dataset.digest) {
      // The same list as shown: nothing is swapped under a finger or the keyboard's focus.
      if (news) news.hidden = true;
      return;
    }
    if (asking(old)) return;
    var checked = {};
    old.querySelectorAll(".job-select:checked").forEach(function (box) { checked[box.value] = true; });
    var hidden = old.hidden;  // a search in progress keeps the list out of sight
    window.htmx.swap(old, message.html, { swapStyle: "outerHTML" });
    var fresh = document.getElementById("job-list");
    if (!fresh) return;
    fresh.querySelectorAll(".job-select").forEach(function (box) { box.checked = !!checked[box.value]; });
    fresh.hidden = hidden;
    if (news) news.hidden = true;
    times();
  }

  function showListNow() {
    // The list as it is now, rendered by the server for this page's tab, page and order.
    var watch = spec();
    if (watch.watch === "queue") send(watch);
  }

  function readAgain(message) {
    // The reader follows this queue's events only from now (what changed before that reached
    // no page), or something no event tells of changed (a job's lock expired): the list or
    // job is asked for again, swapped only where it differs.
    var watch = spec();
    if (watch.queue === message.queue && (watch.watch === "queue" || watch.watch === "job")) send(watch);
  }

  function applyGone(message) {
    // The queue was obliterated: the server's notice says so where the page keeps its place.
    var watch = spec();
    if (watch.watch === "queue" && watch.queue === message.queue) swapById(message.html);
  }

  // ---- progress, one job, logs ----------------------------------------------------------------
  function applyProgress(message) {
    var watch = spec();
    if (watch.queue !== message.queue) return;
    message.updates.forEach(function (update) {
      if (message.scope === "queue" && watch.watch === "queue") {
        var row = document.querySelector('#job-list tr[data-job-id="' + CSS.escape(update.id) + '"]');
        var cell = row && row.querySelector(".progress-cell");
        if (cell) forgetListDigest();
        if (cell && window.htmx) window.htmx.swap(cell, message.cells[update.cell], { swapStyle: "innerHTML" });
      } else if (message.scope === "job" && watch.watch === "job" && watch.id === update.id) {
        swapById(message.cells[update.cell]);
      }
    });
  }

  function applyJob(message) {
    var watch = spec();
    if (watch.watch !== "job" || watch.queue !== message.queue || watch.id !== message.id) return;
    var before = document.getElementById("job-state");
    var changed = before && !before.classList.contains("state-" + message.state);
    swapById(message.html);
    if (changed) flash(document.getElementById("job-state"));
  }

  function applyLogs(message) {
    var watch = spec();
    if (watch.watch !== "job" || watch.queue !== message.queue || watch.id !== message.id) return;
    var list = document.querySelector(".log-lines");
    if (!list) return;
    var have = Number(list.dataset.count) || 0;
    var filter = document.querySelector(".log-filter");
    var needle = filter ? filter.value.toLowerCase() : "";
    var lines = Array.prototype.slice.call(parse(message.html).children);
    lines.forEach(function (li, index) {
      if (message.start + index < have) return;  // already on the page
      if (needle && li.textContent.toLowerCase().indexOf(needle) === -1) li.classList.add("hidden");
      list.appendChild(li);
    });
    var total = Math.max(have, message.start + message.count);
    list.dataset.count = total;
    var count = document.querySelector(".log-count");
    if (count) count.textContent = total;
    list.scrollTop = list.scrollHeight;
  }

  // ---- a page that could not be read while Redis was away ------------------------------------
  function recover() {
    if (!window.htmx || !main() || !main().dataset.outage) return;
    // htmx swaps only a successful answer: while Redis is still away the page stays as it is.
    window.htmx.ajax("GET", location.href, { target: "body", swap: "innerHTML" });
  }

  function watchOutage() {
    clearInterval(recovering);
    recovering = null;
    if (main() && main().dataset.outage) recovering = setInterval(recover, 3000);
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a.show-list") : null;
    if (!link) return;
    event.preventDefault();
    showListNow();
  });
  setInterval(checkBeat, 1000);
  document.addEventListener("htmx:afterSettle", function () { subscribe(); });
  // A page the back button brings back from htmx's history is a snapshot: what it watches is
  // asked for again, so the server sends what changed since (the snapshot says it subscribed).
  document.addEventListener("htmx:historyRestore", function () { subscribe(true); });
})();
