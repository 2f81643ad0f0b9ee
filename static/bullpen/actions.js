// Bulk actions (retry all, promote all, clean, failure groups) run on the server after
// the answer: the POST is answered at once (202) with the action's id, status URL, its
// progress bar and what to say. The page that asked follows it to its end (live `bulk`
// messages, or its status URL when none come), then shows the page as it is and says what was
// done. Every page of the queue shows the progress bar, with a Cancel button for those who may
// act. The server renders the bar and words the sentences; nothing is worded here.
(function () {
  "use strict";

  var ENDED = { done: true, cancelled: true, interrupted: true, failed: true };
  var followed = {};  // id -> status URL: the actions this page started or opened during
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
      html: m.html || "",
      text: m.text || ""
    };
  }

  function showBar(s) {
    var box = document.getElementById("bulk-progress");
    // A queue's pages show its actions; the search page shows those it started, on any queue.
    var mine = box && box.closest("[data-any-queue]") && (followed[s.id] || shown[s.id]);
    if (!box || !s.id || !s.html || !window.htmx || (watched().queue !== s.queue && !mine)) return;
    // A late progress message does not undo an end already shown.
    if (shown[s.id] && !s.over) return;
    window.htmx.swap(box, s.html, { swapStyle: "outerHTML" });
  }

  function toast(text, isError) {
    if (window.bullpenToast) window.bullpenToast(text, isError);
  }

  function end(s) {
    if (shown[s.id]) return;
    shown[s.id] = true;
    delete followed[s.id];
    var showEnd = function () {
      showBar(s);
      toast(s.text, s.state !== "done");
    };
    // The list, counts and groups as they are now; the page stays where it was.
    if (window.htmx && document.getElementById("main")) {
      window.htmx.ajax("GET", location.href, { target: "#main", select: "#main", swap: "outerHTML" })
        .then(showEnd, showEnd);
    } else {
      showEnd();
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
    if (box && box.closest("[data-any-queue]") && window.bullpenLiveWatch && watched().queue !== s.queue) {
      // Its progress comes over the websocket to those watching its queue: this page joins them.
      window.bullpenLiveWatch({ watch: "queue", queue: s.queue, state: "waiting", page: 1, per_page: 10, order: "desc" });
    }
    showBar(s);
    toast(s.text, false);
    if (finals[s.id]) end(finals[s.id]);
    else poll(s.id);
  });

  // A page opened while an action on its queue runs came with its bar: it follows that action
  // to its end as the page that started it does.
  function adoptRendered() {
    var box = document.getElementById("bulk-progress");
    var id = box && box.dataset.actionId;
    if (!id || !box.dataset.statusUrl || followed[id] || shown[id]) return;
    followed[id] = box.dataset.statusUrl;
    if (finals[id]) end(finals[id]);
    else poll(id);
  }
  document.addEventListener("DOMContentLoaded", adoptRendered);
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail && event.detail.target;
    if (target && (target === document.body || target.id === "main")) adoptRendered();  // a page, not a bar
  });

  document.addEventListener("bullpen:live", function (event) {
    var message = event.detail;
    if (!message || message.type !== "bulk" || !message.id) return;
    var s = status(message);
    if (s.over) {
      finals[s.id] = s;
      if (followed[s.id]) { end(s); return; }
    }
    showBar(s);
  });
})();
