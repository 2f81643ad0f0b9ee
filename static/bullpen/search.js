// What both searches share: the page's words and the reading of an NDJSON stream.
window.bullpenSearchStream = (function () {
  "use strict";

  // The page's words, in its language (static/bullpen/util.js).
  var say = window.bullpenUtil.say;

  // Fetch `url` and hand each chunk's complete lines, parsed, to `onItems` until the stream
  // ends or the search stops. False when the server refused: `progress` then says why.
  async function read(url, search, progress, onItems) {
    var response = await fetch(url, {
      signal: search.controller.signal,
      headers: { Accept: "application/x-ndjson" },
    });
    // A query the server cannot read is said as an error, under the box.
    progress.classList.toggle("search-error", !response.ok);
    if (!response.ok) {
      var problem = await response.json().catch(function () { return {}; });
      progress.textContent = problem.error || say("search_failed_status", "search failed ({status})", { status: response.status });
      return false;
    }
    var reader = response.body.getReader();
    var decoder = new TextDecoder();
    var buffer = "";
    for (;;) {
      var chunk = await reader.read();
      if (chunk.done || search.stopped) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      var lines = buffer.split("\n");
      buffer = lines.pop();
      onItems(lines.filter(Boolean).map(function (line) { return JSON.parse(line); }));
    }
    return true;
  }

  return { say: say, read: read };
})();

// Streaming search on the queue page. The server scans the tab's jobs in bounded steps and
// streams NDJSON: each match with its row already rendered by the page's row template
// (render=row), and progress lines with their text. This script only inserts that HTML and
// writes the server's progress text. Cancel, a new search or leaving the page aborts the
// request; the server stops scanning when the stream closes. The query is kept in the URL (?state=…&q=…), so a search
// can be linked, and it runs again when the page loads or reloads after a bulk action.
(function () {
  "use strict";
  var current = null; // the running search: {controller, parts, last, stopped}

  function partsOf(form) {
    var section = document.getElementById("search-results");
    if (!section) return null;
    return {
      form: form,
      input: form.querySelector("input[name=q]"),
      progress: form.querySelector(".search-progress"),
      cancel: form.querySelector(".search-cancel"),
      section: section,
      query: section.querySelector(".search-query"),
      body: section.querySelector("tbody"),
      none: section.querySelector(".search-none"),
      list: document.getElementById("job-list"),
    };
  }

  var say = window.bullpenSearchStream.say;

  // What the search says of its progress, written by the server in the page's language.
  function progressText(item) { return item.text || ""; }

  function recordQuery(state, query) {
    var url = new URL(location.href);
    url.searchParams.set("state", state);
    if (query) url.searchParams.set("q", query);
    else url.searchParams.delete("q");
    if (url.href !== location.href) history.replaceState(history.state, "", url.href);
  }

  function insertRows(body, html) {
    var content = window.bullpenUtil.parse(html);
    var rows = Array.prototype.slice.call(content.children);
    body.appendChild(content);
    rows.forEach(function (row) { if (window.htmx) window.htmx.process(row); });
  }

  // Stops the running search. A search that was cancelled says so; one replaced by another
  // search or by leaving the page leaves the page to what comes next.
  function stop(saying) {
    if (!current) return;
    var search = current;
    current = null;
    search.stopped = saying || "quiet";
    search.controller.abort();
    search.parts.cancel.hidden = true;
    if (saying) {
      search.parts.progress.textContent =
        (search.last ? progressText(search.last).replace(/…$/, "") + " — " : "") + saying;
    }
  }

  function showList(parts) {
    parts.section.hidden = true;
    parts.body.textContent = "";
    parts.none.hidden = true;
    if (parts.list) parts.list.hidden = false;
  }

  function clear(parts) {
    stop(null);
    showList(parts);
    parts.progress.textContent = "";
    parts.input.value = "";
    recordQuery(parts.form.dataset.state, "");
  }

  async function run(form, query) {
    var parts = partsOf(form);
    if (!parts) return;
    stop(null);
    query = query.trim();
    if (!query) return clear(parts);
    var search = { controller: new AbortController(), parts: parts, last: null, stopped: null };
    current = search;
    // The list's rows are hidden while results show: none of them may ride along in a bulk action.
    if (parts.list) {
      parts.list.querySelectorAll(".job-select:checked").forEach(function (box) { box.checked = false; });
      parts.list.hidden = true;
    }
    parts.body.textContent = "";
    parts.none.hidden = true;
    parts.query.textContent = query;
    parts.section.hidden = false;
    parts.cancel.hidden = false;
    parts.progress.textContent = say("searching", "searching…");
    recordQuery(form.dataset.state, query);
    var url = form.dataset.searchUrl + "?" +
      new URLSearchParams({
        state: form.dataset.state, q: query, render: "row", max_matches: form.dataset.maxMatches,
      }).toString();
    try {
      var read = await window.bullpenSearchStream.read(url, search, parts.progress, function (items) {
        var html = "";
        var error = null;
        items.forEach(function (item) {
          if (item.type === "job" && item.html) html += item.html;
          else if (item.type === "progress") search.last = item;
          else if (item.type === "error") error = item.error;
        });
        if (html) insertRows(parts.body, html);
        if (error) parts.progress.textContent = say("search_failed", "search failed: {error}", { error: error });
        else if (search.last) parts.progress.textContent = progressText(search.last);
      });
      if (read && search.last && search.last.done) parts.none.hidden = parts.body.rows.length > 0;
    } catch (error) {
      if (!search.stopped) parts.progress.textContent = say("search_failed", "search failed: {error}", { error: error.message });
    } finally {
      if (current === search) {
        current = null;
        parts.cancel.hidden = true;
      }
    }
  }

  function autorun() {
    var form = document.querySelector("form.search");
    if (!form || form.bullpenSearched) return;
    form.bullpenSearched = true;
    var query = new URL(location.href).searchParams.get("q");
    if (query && query.trim()) {
      form.querySelector("input[name=q]").value = query;
      run(form, query);
    }
  }

  // Capture phase: the page's own handler runs before htmx could see the submit.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form.search")) return;
    event.preventDefault();
    event.stopPropagation();
    form.bullpenSearched = true;
    run(form, form.querySelector("input[name=q]").value);
  }, true);

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!target.closest) return;
    if (target.closest(".search-cancel")) stop(say("search_cancelled", "cancelled"));
    var clearButton = target.closest(".search-clear");
    var form = document.querySelector("form.search");
    if (clearButton && form) {
      var parts = partsOf(form);
      if (parts) clear(parts);
    }
  });

  // Leaving the page by an htmx navigation: stop the scan, and keep the results out of the
  // saved snapshot (the search runs again from the URL when the page comes back).
  document.addEventListener("htmx:beforeHistorySave", function () {
    stop(null);
    var form = document.querySelector("form.search");
    var parts = form && partsOf(form);
    if (parts) {
      showList(parts);
      parts.progress.textContent = "";
    }
  });
  document.addEventListener("DOMContentLoaded", autorun);
  document.addEventListener("htmx:load", autorun);
  document.addEventListener("htmx:historyRestore", autorun);
})();

// The search over every queue (the search/ page). The server streams NDJSON: each match with
// its row rendered by the server (and, for a queue's first match, its group), each queue's foot
// once it is scanned (counts and the actions on its matches), and progress lines with their
// text. This script only inserts that HTML and writes the server's progress text. Cancel, a
// new search or leaving the page aborts the request; the server stops scanning when the
// stream closes.
(function () {
  "use strict";
  var current = null; // {controller, form, last, stopped}

  var say = window.bullpenSearchStream.say;

  function parts(form) {
    return {
      results: document.getElementById("search-all-results"),
      none: document.querySelector(".search-none"),
      progress: form.querySelector(".search-progress"),
      cancel: form.querySelector(".search-cancel"),
    };
  }

  function params(form) {
    var data = new URLSearchParams();
    data.set("q", form.querySelector("input[name=q]").value.trim());
    var boxes = form.querySelectorAll("input[name=state]");
    var checked = form.querySelectorAll("input[name=state]:checked");
    // Every state ticked (or none) is the default: left out of the address.
    if (checked.length && checked.length < boxes.length) {
      checked.forEach(function (box) { data.append("state", box.value); });
    }
    var queues = form.querySelector("input[name=queues]").value.trim();
    if (queues) data.set("queues", queues);
    return data;
  }

  // What the search says of its progress, written by the server in the page's language.
  function progressText(item) { return item.text || ""; }

  var fragment = window.bullpenUtil.parse;

  function process(element) { if (window.htmx && element) window.htmx.process(element); }

  function groupOf(results, queue) {
    var groups = results.querySelectorAll(".search-group");
    for (var i = 0; i < groups.length; i++) if (groups[i].dataset.queue === queue) return groups[i];
    return null;
  }

  function apply(p, item, search) {
    if (item.type === "match") {
      if (item.group) {
        var content = fragment(item.group);
        var section = content.firstElementChild;
        p.results.appendChild(content);
        process(section);
      }
      var group = groupOf(p.results, item.queue);
      if (!group || !item.html) return;
      var body = group.querySelector("tbody");
      var row = fragment(item.html).firstElementChild;
      body.appendChild(row);
      process(row);
      group.querySelector(".search-group-count").textContent = String(item.queueMatched);
    } else if (item.type === "queue") {
      var done = groupOf(p.results, item.queue);
      var foot = done && done.querySelector(".search-group-foot");
      if (!foot || !item.html) return;
      var fresh = fragment(item.html).firstElementChild;
      foot.replaceWith(fresh);
      process(fresh);
    } else if (item.type === "skipped") {
      if (item.html) p.results.appendChild(fragment(item.html));
    } else if (item.type === "progress") {
      search.last = item;
      p.progress.textContent = progressText(item);
    } else if (item.type === "error") {
      p.progress.textContent = say("search_failed", "search failed: {error}", { error: item.error });
    }
  }

  function stop(saying) {
    if (!current) return;
    var search = current;
    current = null;
    search.stopped = true;
    search.controller.abort();
    var p = parts(search.form);
    p.cancel.hidden = true;
    if (saying) {
      p.progress.textContent =
        (search.last ? progressText(search.last).replace(/…$/, "") + " — " : "") + saying;
    }
  }

  // The server's download links follow the search run now (the same parameters, a format).
  function downloads(form, data) {
    var box = form.querySelector(".search-downloads");
    if (!box) return;
    box.querySelectorAll("a[data-format]").forEach(function (link) {
      link.href = box.dataset.exportUrl + "?" + data.toString() + "&format=" + link.dataset.format;
    });
    box.hidden = false;
  }

  async function run(form) {
    stop(null);
    var p = parts(form);
    var data = params(form);
    if (!data.get("q")) return;
    var search = { controller: new AbortController(), form: form, last: null, stopped: false };
    current = search;
    p.results.textContent = "";
    p.none.hidden = true;
    p.cancel.hidden = false;
    p.progress.textContent = say("searching", "searching…");
    var url = new URL(location.href);
    url.search = data.toString();
    if (url.href !== location.href) history.replaceState(history.state, "", url.href);
    downloads(form, data);
    data.set("render", "html");
    data.set("max_matches", form.dataset.maxMatches);
    try {
      var streamUrl = form.dataset.searchUrl + "?" + data.toString();
      var read = await window.bullpenSearchStream.read(streamUrl, search, p.progress, function (items) {
        items.forEach(function (item) { apply(p, item, search); });
      });
      if (read && search.last && search.last.done) p.none.hidden = search.last.matched > 0;
      if (!read) form.querySelector(".search-downloads").hidden = true;  // nothing to take away
    } catch (error) {
      if (!search.stopped) p.progress.textContent = say("search_failed", "search failed: {error}", { error: error.message });
    } finally {
      if (current === search) {
        current = null;
        p.cancel.hidden = true;
      }
    }
  }

  function autorun() {
    var form = document.querySelector("form.search-all");
    if (!form || form.bullpenSearched) return;
    form.bullpenSearched = true;
    // A query the server already said it cannot read is not sent again.
    if (form.querySelector(".search-progress.search-error")) return;
    if (form.querySelector("input[name=q]").value.trim()) run(form);
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form.search-all")) return;
    event.preventDefault();
    event.stopPropagation();
    form.bullpenSearched = true;
    run(form);
  }, true);

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!target.closest) return;
    if (target.closest("form.search-all .search-cancel")) stop(say("search_cancelled", "cancelled"));
    var dismiss = target.closest(".match-dismiss");
    if (dismiss) {
      var box = dismiss.closest(".match-confirm");
      var opener = box && box.parentElement.querySelector(".match-actions button");
      if (box) box.textContent = "";
      if (opener) opener.focus();
    }
  });

  // An action on matches was accepted: its question goes; actions.js follows the action.
  document.addEventListener("htmx:afterRequest", function (event) {
    var source = event.detail.elt;
    if (!source || !source.matches || !source.matches(".match-go")) return;
    if (event.detail.xhr && event.detail.xhr.status === 202) {
      var box = source.closest(".match-confirm");
      if (box) box.textContent = "";
    }
  });

  // The question arrived: the keyboard goes to its answer. On the search page the page's
  // websocket starts watching that queue now, so that the action's progress comes over it.
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (!target || !target.matches || !target.matches(".match-confirm")) return;
    var go = target.querySelector(".match-go") || target.querySelector(".match-dismiss");
    if (go) go.focus();
    var group = target.closest(".search-group");
    if (group && window.bullpenLiveWatch) {
      window.bullpenLiveWatch({
        watch: "queue", queue: group.dataset.queue, state: "waiting", page: 1, per_page: 10, order: "desc",
      });
    }
  });

  document.addEventListener("htmx:beforeHistorySave", function () {
    stop(null);
    var results = document.getElementById("search-all-results");
    if (results) results.textContent = "";
  });
  document.addEventListener("DOMContentLoaded", autorun);
  document.addEventListener("htmx:load", autorun);
  document.addEventListener("htmx:historyRestore", autorun);
})();
