// Bulk actions (retry all, promote all, clean, failure groups) run on the server after
// the answer: the POST is answered at once (202) with the action's id and status URL. The page
// that asked follows it to its end (live `bulk` messages, or its status URL when none come),
// then shows the page as it is and says what was done. Every page of the queue shows the
// progress bar, with a Cancel button for those who may act. Text only: no markup is built here.
(function () {
  "use strict";

  var ENDED = { done: true, cancelled: true, interrupted: true, failed: true };
  var followed = {};  // id -> status URL: the actions this page started
  var shown = {};     // id -> true once this page said how it ended
  var finals = {};    // id -> its end, when a live message brought it before the answer did

  function watched() {
    var main = document.getElementById("main");
    try { return JSON.parse((main && main.dataset.live) || "{}"); } catch (e) { return {}; }
  }

  // A live message and a status answer, alike. Over: its end is audited and the pages told.
  function status(m) {
    return {
      over: m.finished !== undefined ? !!m.finished : !!ENDED[m.state],
      id: m.id,
      action: m.action,
      queue: m.queue,
      state: m.state || "running",
      done: m.done !== undefined ? m.done : (m.count || 0),
      total: m.total || 0,
      text: m.text || ""
    };
  }

  function showBar(s) {
    var box = document.getElementById("bulk-progress");
    // A queue's pages show its actions; the search page shows those it started, on any queue.
    var mine = box && box.dataset.anyQueue && (followed[s.id] || shown[s.id]);
    if (!box || !s.id || (watched().queue !== s.queue && !mine)) return;
    var over = s.over;
    var total = Math.max(s.total, s.done);
    box.hidden = false;
    box.dataset.actionId = s.id;
    box.dataset.state = s.state;
    box.querySelector("progress").value = total ? Math.round(100 * s.done / total) : (over ? 100 : 0);
    box.querySelector(".label").textContent =
      over && s.text ? s.text : words("progress", "{action}: {done} of {total}", { action: s.action, done: s.done, total: total });
    var cancel = box.querySelector(".bulk-cancel");
    if (cancel) cancel.hidden = over;
  }

  // The page's words, in its language (static/bullpen/util.js).
  var words = window.bullpenUtil.say;

  function toast(text, isError) {
    if (window.bullpenToast) window.bullpenToast(text, isError);
  }

  function end(s) {
    if (shown[s.id]) return;
    shown[s.id] = true;
    var url = followed[s.id];
    delete followed[s.id];
    var say = function () {
      // A live message's words are the server's default language; the status URL answers
      // in this page's.
      var worded = s.live && url ? fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (body) { if (body && body.text) s.text = body.text; })
        .catch(function () { return null; }) : Promise.resolve();
      worded.then(function () {
        showBar(s);
        toast(s.text || s.action + ": " + s.state, s.state !== "done");
      });
    };
    // The list, counts and groups as they are now; the page stays where it was.
    if (window.htmx && document.getElementById("main")) {
      window.htmx.ajax("GET", location.href, { target: "#main", select: "#main", swap: "outerHTML" })
        .then(say, say);
    } else {
      say();
    }
  }

  function poll(id) {
    setTimeout(function () {
      var url = followed[id];
      if (!url) return;
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (response) {
          if (response.status === 404) { delete followed[id]; return null; }
          return response.ok ? response.json() : null;
        })
        .then(function (body) {
          if (!followed[id]) return;
          if (!body) { poll(id); return; }
          var s = status(body);
          if (s.over) end(s);
          else { showBar(s); poll(id); }
        })
        .catch(function () { if (followed[id]) poll(id); });
    }, 1000);
  }

  document.addEventListener("htmx:afterRequest", function (event) {
    var xhr = event.detail.xhr;
    if (!xhr || xhr.status !== 202) return;
    var body;
    try { body = JSON.parse(xhr.responseText); } catch (e) { return; }
    if (!body || !body.id || !body.statusUrl || body.action === "cancel") return;
    var s = status(body);
    followed[s.id] = body.statusUrl;
    var box = document.getElementById("bulk-progress");
    if (box && box.dataset.anyQueue && window.bullpenLiveWatch && watched().queue !== s.queue) {
      // Its progress comes over the websocket to those watching its queue: this page joins them.
      window.bullpenLiveWatch({ watch: "queue", queue: s.queue, state: "waiting", page: 1, per_page: 10, order: "desc" });
    }
    showBar(s);
    toast(words("started", s.total === 1 ? "{action}: started, {n} job" : "{action}: started, {n} jobs",
      { action: s.action, n: s.total }), false);
    if (finals[s.id]) end(finals[s.id]);
    else poll(s.id);
  });

  document.addEventListener("bullpen:live", function (event) {
    var message = event.detail;
    if (!message || message.type !== "bulk" || !message.id) return;
    var s = status(message);
    s.live = true;
    if (s.over) {
      finals[s.id] = s;
      if (followed[s.id]) { end(s); return; }
    }
    showBar(s);
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".bulk-cancel") : null;
    var box = document.getElementById("bulk-progress");
    if (!button || !box || !box.dataset.actionId || !window.htmx) return;
    button.disabled = true;
    var enable = function () { button.disabled = false; };
    // Through htmx, so the request carries the page's headers (CSRF token) like any action.
    window.htmx.ajax("POST", box.dataset.actionsUrl + encodeURIComponent(box.dataset.actionId) + "/cancel/",
      { source: button, swap: "none" }).then(enable, enable);
  });
})();
