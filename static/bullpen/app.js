// Bullpen page helpers: relative times, log filter, copy as JSON, the overview's keys and groups,
// the "Go to queue" box, a job's flow tree, keyboard shortcuts and remembered preferences. Works
// after htmx swaps too.
(function () {
  "use strict";

  // The page's words, in its language (static/bullpen/util.js).
  var say = window.bullpenUtil.say;

  // As the server writes them (dashboard/templatetags/bullpen_times.py): "3 min ago", "in 2 h".
  function relative(ms) {
    var seconds = (Date.now() - ms) / 1000;
    var future = seconds < 0;
    seconds = Math.abs(seconds);
    var units = [[86400, "d"], [3600, "h"], [60, "min"], [1, "s"]];
    for (var i = 0; i < units.length; i++) {
      if (seconds >= units[i][0] || units[i][1] === "s") {
        var amount = Math.floor(seconds / units[i][0]);
        var pattern = future ? say("in", "in {n} {unit}") : say("ago", "{n} {unit} ago");
        return pattern.replace("{n}", amount).replace("{unit}", say(units[i][1], units[i][1]));
      }
    }
    return "";
  }

  // Rewrites the relative text of every time under root; says whether one is within a minute
  // of now (past or future), where the text changes every second.
  function refreshTimes(root) {
    var recent = false;
    root.querySelectorAll("time[data-ms]").forEach(function (el) {
      var rel = el.querySelector(".rel");
      if (!rel) return;
      var ms = Number(el.dataset.ms);
      // A scheduler's next run that has passed is due (its job waits for a worker), not "ago":
      // the server's words for it replace the time.
      var due = el.closest(".next-run[data-due-text]");
      if (due && ms <= Date.now()) {
        var said = document.createElement("span");
        said.className = "scheduler-due";
        said.dataset.testid = "scheduler-due";
        said.textContent = due.dataset.dueText;
        el.replaceWith(said);
        return;
      }
      if (Math.abs(Date.now() - ms) < 60000) recent = true;
      var text = relative(ms);
      if (rel.textContent !== text) rel.textContent = text;
    });
    return recent;
  }

  // Every second while a shown time is under a minute away, else every 15 s.
  var tickTimer = 0;
  function tick() {
    clearTimeout(tickTimer);
    tickTimer = setTimeout(tick, refreshTimes(document) ? 1000 : 15000);
  }

  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!input.classList || !input.classList.contains("log-filter")) return;
    var needle = input.value.toLowerCase();
    input.parentElement.querySelectorAll(".log-lines li").forEach(function (li) {
      li.classList.toggle("hidden", needle !== "" && li.textContent.toLowerCase().indexOf(needle) === -1);
    });
  });

  document.addEventListener("click", function (event) {
    var button = event.target.closest ? event.target.closest(".copy-json") : null;
    if (!button) return;
    var source = document.getElementById(button.dataset.copyTarget);
    if (!source) return;
    var text = JSON.stringify(JSON.parse(source.textContent), null, 2);
    var done = function () { button.textContent = say("copied", "Copied"); setTimeout(function () { button.textContent = say("copy_json", "Copy as JSON"); }, 1500); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done);
    } else {
      var area = document.createElement("textarea");
      area.value = text; document.body.appendChild(area); area.select();
      document.execCommand("copy"); area.remove(); done();
    }
  });

  // Actions: say what is happening, and why an action was refused.
  function toast(text, isError) {
    var el = document.getElementById("toast");
    if (!el) return;
    el.textContent = text;
    el.classList.toggle("error", !!isError);
    el.hidden = false;
    clearTimeout(el.hideTimer);
    el.hideTimer = setTimeout(function () { el.hidden = true; }, isError ? 8000 : 3000);
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var verb = event.detail.requestConfig && event.detail.requestConfig.verb;
    if (verb && verb !== "get") toast(say("working", "Working…"), false);
  });
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var message = say("failed_status", "Failed ({status})", { status: xhr.status });
    try { message = JSON.parse(xhr.responseText).error || message; } catch (e) { /* not JSON */ }
    toast(message, true);
  });
  document.addEventListener("change", function (event) {
    if (!event.target.classList || !event.target.classList.contains("select-all")) return;
    // Only the rows of its own table: search results and the list are separate tables.
    var table = event.target.closest("table") || document;
    table.querySelectorAll(".job-select").forEach(function (box) { box.checked = event.target.checked; });
  });
  window.bullpenToast = toast;

  // A confirmation the server put in the page (the action that led here): hide it in a while.
  function settleNotice() {
    var el = document.getElementById("toast");
    if (!el || el.hidden || !el.dataset.notice) return;
    delete el.dataset.notice;
    clearTimeout(el.hideTimer);
    el.hideTimer = setTimeout(function () { el.hidden = true; }, 10000);
  }
  document.addEventListener("click", function (event) {
    var el = event.target.closest ? event.target.closest("#toast") : null;
    if (el) el.hidden = true;
  });

  // Signing out of basic credentials: a server cannot revoke what the browser remembers, so
  // the page asks the sign-out URL with wrong credentials (a reserved name); a browser that
  // accepts them remembers those for this realm instead, and its next pages are anonymous.
  document.addEventListener("click", function (event) {
    var link = event.target.closest ? event.target.closest("a[data-sign-out]") : null;
    if (!link) return;
    event.preventDefault();
    var xhr = new XMLHttpRequest();
    xhr.open("GET", link.href, true, link.dataset.signOut, "-");
    xhr.onloadend = function () { window.location.assign(link.dataset.next); };
    xhr.send();
  });

  // htmx binds the page's action buttons when the document is parsed (its listener came
  // first); until then a click on one would be lost, so they take none (app.css).
  document.addEventListener("DOMContentLoaded", function () {
    document.documentElement.classList.add("htmx-ready");
  });

  // New times (a page, a swap, a live row) may be recent: refresh now and pick the pace again.
  document.addEventListener("DOMContentLoaded", function () { tick(); settleNotice(); });
  document.addEventListener("htmx:afterSettle", function () { tick(); settleNotice(); });
  window.addEventListener("bullpen:times", tick);
})();

// The overview's groups: a group's heading opens and closes it. The rows themselves come from
// the server (htmx loads an opened group's rows once); this only shows and hides them.
(function () {
  "use strict";

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest && event.target.closest(".group-toggle");
    if (!toggle) return;
    var group = toggle.closest("tbody.group");
    var open = group.classList.toggle("collapsed") === false;
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });
})();

// The "Go to queue" box: arrow keys move between the box and its suggestions, Escape closes them.
(function () {
  "use strict";

  document.addEventListener("keydown", function (event) {
    var box = event.target.closest ? event.target.closest("form.switcher") : null;
    if (!box) return;
    var input = box.querySelector("input[name=q]");
    var list = box.querySelector(".switcher-matches");
    if (event.key === "Escape") {
      if (!list.firstChild) return;
      event.preventDefault();
      list.replaceChildren();
      input.focus();
      return;
    }
    if (event.key !== "ArrowDown" && event.key !== "ArrowUp") return;
    var links = Array.prototype.slice.call(list.querySelectorAll("a"));
    if (!links.length) return;
    event.preventDefault();
    var at = links.indexOf(event.target);
    var down = event.key === "ArrowDown";
    if (at === -1) {
      links[down ? 0 : links.length - 1].focus();
    } else if (!down && at === 0) {
      input.focus();
    } else {
      links[Math.min(links.length - 1, down ? at + 1 : at - 1)].focus();
    }
  });

  // Suggestions for a longer text can arrive after the arrow keys went into the list for a
  // shorter one: the new list keeps the focus on the same suggestion, or gives it back to
  // the box, instead of dropping it with the old links. The box holds the focus during the
  // swap: the list is shown only while the form has it, and a hidden link takes none.
  var focusedHref = null;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var list = event.detail.target;
    if (!list || !list.matches || !list.matches(".switcher-matches")) return;
    var focused = document.activeElement;
    focusedHref = null;
    if (focused && focused !== list && list.contains(focused)) {
      focusedHref = focused.getAttribute("href");
      list.closest("form.switcher").querySelector("input[name=q]").focus({ preventScroll: true });
    }
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    var list = event.detail.target;
    if (focusedHref === null || !list || !list.matches || !list.matches(".switcher-matches")) return;
    var href = focusedHref;
    focusedHref = null;
    var same = list.querySelector('a[href="' + CSS.escape(href) + '"]');
    if (same) same.focus();
  });
})();

// A job's flow tree: each live job message carries its node, rendered by the server from the
// tree's own template; this puts it where the same node is shown. It never builds markup.
(function () {
  "use strict";
  if (window.bullpenFlowTree) return;
  window.bullpenFlowTree = true;

  document.addEventListener("bullpen:live", function (event) {
    var message = event.detail;
    if (!message || message.type !== "job" || !message.node) return;
    var fresh = window.bullpenUtil.parse(message.node).firstElementChild;
    var old = fresh && fresh.id ? document.getElementById(fresh.id) : null;
    if (old && window.htmx) window.htmx.swap(old, message.node, { swapStyle: "outerHTML" });
  });
})();

// Preferences remembered by this browser: the job lists' page size and order, the tab a queue
// opens at, how deep JSON opens, the overview's order, groups and queues per page, and the
// colour scheme. They
// are kept in a cookie the server reads and checks (dashboard/forms/preferences.py), so a page
// arrives as chosen; its query string wins over them. This only writes what was chosen in the
// controls the server rendered: the dialog names the cookie and shows what is kept.
(function () {
  "use strict";

  var util = window.bullpenUtil;
  // One year: as long as a choice is likely to matter.
  var MAX_AGE = 365 * 24 * 3600;

  function dialog() { return document.getElementById("shortcuts"); }

  function write(box, query) {
    var where = "; path=" + box.dataset.cookiePath + "; SameSite=Lax" + (location.protocol === "https:" ? "; Secure" : "");
    document.cookie = box.dataset.cookie + "=" + (query ? encodeURIComponent(query) + "; max-age=" + MAX_AGE : "; max-age=0") + where;
  }

  function save(changes) {
    var box = dialog();
    if (!box) return;
    write(box, util.withChanges(util.cookieValue(document.cookie, box.dataset.cookie), changes));
  }

  // Chosen where they are shown: a job list's size and order, the overview's tools and headings.
  // Kept before the link's request leaves (capture), so the page it loads is rendered as chosen.
  document.addEventListener("click", function (event) {
    var link = event.target.closest
      && event.target.closest("a[data-remember], #overview-list th a[data-sort]");
    if (!link) return;
    var params = new URL(link.getAttribute("href"), location.href).searchParams;
    if (link.dataset.remember === "order") save({ jobs_order: params.get("order") });
    else if (link.dataset.remember === "per_page") save({ jobs_per_page: params.get("per_page") });
    else save({ overview_sort: params.get("sort") });
  }, true);

  document.addEventListener("change", function (event) {
    var el = event.target;
    if (el.closest && el.closest("form.overview-tools")) {
      if (el.name === "sort") save({ overview_sort: el.value });
      if (el.name === "group") save({ overview_group: el.value });
      if (el.name === "per_page") save({ overview_per_page: el.value });
    }
    if (el.dataset && el.dataset.pref && el.closest("#shortcuts")) {
      var change = {};
      change[el.dataset.pref] = el.value;
      save(change);
      if (el.dataset.pref === "json_depth") openJson(document);
    }
  }, true);

  // JSON trees open to the chosen depth, as the dialog (rendered with what is kept) shows it.
  function openJson(root) {
    var choice = document.querySelector('#shortcuts select[data-pref="json_depth"]');
    if (!choice) return;
    var limit = choice.value === "all" ? Infinity : Number(choice.value);
    root.querySelectorAll(".json-tree details.j-node").forEach(function (node) {
      var level = 0;
      for (var up = node.parentElement; up && !up.classList.contains("json-tree"); up = up.parentElement) {
        if (up.classList.contains("j-node")) level += 1;
      }
      node.open = level < limit;
    });
  }

  function showDialog() {
    var box = dialog();
    if (box && !box.open) box.showModal();
  }

  document.addEventListener("click", function (event) {
    if (!event.target.closest) return;
    if (event.target.closest(".prefs-open")) showDialog();
    else if (event.target.closest("#shortcuts .dialog-close")) dialog().close();
    else if (event.target.closest("#shortcuts .prefs-forget")) {
      write(dialog(), "");
      dialog().querySelectorAll("select[data-pref]").forEach(function (select) {
        select.value = select.dataset.default;
      });
      openJson(document);
      if (window.bullpenToast) window.bullpenToast(util.say("prefs_forgotten", "Preferences forgotten"), false);
    }
  });
  window.bullpenShowShortcuts = showDialog;

  // The colour scheme chosen in the header: shown at once, and kept for the server to render
  // every later page in it ("system": its system's, nothing kept).
  function applyTheme(choice) {
    if (choice === "light" || choice === "dark") document.documentElement.dataset.theme = choice;
    else delete document.documentElement.dataset.theme;
  }
  document.addEventListener("change", function (event) {
    if (event.target.id !== "theme-choice") return;
    applyTheme(event.target.value);
    save({ theme: event.target.value === "system" ? "" : event.target.value });
  });
  document.addEventListener("click", function (event) {
    if (!event.target.closest || !event.target.closest("#shortcuts .prefs-forget")) return;
    applyTheme("system");
    var choice = document.getElementById("theme-choice");
    if (choice) choice.value = "system";
  });

  // Kept by an earlier version in this browser's storage: moved to the cookie once.
  try {
    var OLD_THEME = "bullpen.theme.v1";
    var theme = window.localStorage.getItem(OLD_THEME);
    if (theme !== null) {
      window.localStorage.removeItem(OLD_THEME);
      if (theme === "light" || theme === "dark") {
        save({ theme: theme });
        applyTheme(theme);
        var select = document.getElementById("theme-choice");
        if (select) select.value = theme;
      }
    }
  } catch (e) { /* unreadable or blocked storage: nothing to move */ }
  try {
    var OLD_KEY = "bullpen.prefs.v1";
    var old = window.localStorage.getItem(OLD_KEY);
    if (old !== null) {
      window.localStorage.removeItem(OLD_KEY);
      var box = dialog();
      if (box && !util.cookieValue(document.cookie, box.dataset.cookie)) save(JSON.parse(old) || {});
    }
  } catch (e) { /* unreadable or blocked storage: nothing to move */ }

  openJson(document);
  document.addEventListener("htmx:afterSwap", function (event) { openJson(event.detail.target || document); });
})();

// Keyboard shortcuts (the dialog "?" opens lists them): "/" to the page's search or filter,
// "g" then "o" to the overview, "j" and "k" through the rows, Enter opens one, "x" selects a job.
// None fires while typing in a field, with Ctrl, Alt or Meta held, or while a dialog is open.
(function () {
  "use strict";

  // The page's own search first; the header's "Go to queue" box when it has none.
  var SEARCHES = ["#queue-filter", "form.search input[name=q]", "form.search-all input[name=q]",
    ".log-filter", "form.find input[name=id]", "form.switcher input[name=q]"];
  var ROWS = "#overview-list tr[data-queue], #overview-list tr.group-row, #job-list tr[data-job-id],"
    + " #search-results tr[data-job-id], #search-all-results tr[data-job-id]";
  var SEQUENCE_MS = 1500;
  var pendingG = 0;

  function typing(el) {
    if (!el) return false;
    // A field of a dialog just closed keeps the focus until the browser moves it away, a
    // moment later: keys pressed meanwhile are the page's.
    if (el.closest && el.closest("dialog:not([open])")) return false;
    if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && !/^(checkbox|radio|button|submit|reset|range)$/.test(el.type);
  }

  function shown(el) { return !!el && el.getClientRects().length > 0; }

  function rows() { return Array.prototype.filter.call(document.querySelectorAll(ROWS), shown); }

  // What a row opens: a group's toggle, a job's id, a queue's name.
  function opener(row) { return row.querySelector(".group-toggle, .job-id a, td:first-child a"); }

  // The marked row by what it shows (a job's id, a queue, a group): a live update may render
  // the row again, and the mark then moves to the new one.
  var markedAs = null;

  function identity(row) {
    if (row.dataset.jobId) return 'tr[data-job-id="' + CSS.escape(row.dataset.jobId) + '"]';
    if (row.dataset.queue) return 'tr[data-queue="' + CSS.escape(row.dataset.queue) + '"]';
    var group = row.closest("tbody[data-group]");
    return group ? 'tbody[data-group="' + CSS.escape(group.dataset.group) + '"] > tr.group-row' : null;
  }

  function remark() {
    if (!markedAs || document.querySelector("tr.kbd-row")) return;
    var row = document.querySelector(markedAs);
    if (row) row.classList.add("kbd-row");
  }

  function current(all) {
    var active = document.activeElement;
    var row = active && active.closest ? active.closest("tr") : null;
    if (row && all.indexOf(row) >= 0) return row;
    remark();
    var marked = document.querySelector("tr.kbd-row");
    return all.indexOf(marked) >= 0 ? marked : null;
  }

  function move(step) {
    var all = rows();
    if (!all.length) return;
    var at = all.indexOf(current(all));
    var next = at < 0 ? (step > 0 ? 0 : all.length - 1) : Math.max(0, Math.min(all.length - 1, at + step));
    document.querySelectorAll("tr.kbd-row").forEach(function (row) { row.classList.remove("kbd-row"); });
    all[next].classList.add("kbd-row");
    markedAs = identity(all[next]);
    var target = opener(all[next]);
    if (target) target.focus();
    all[next].scrollIntoView({ block: "nearest" });
  }

  new MutationObserver(remark).observe(document.documentElement, { childList: true, subtree: true });
  // Another page: nothing marked on it yet.
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.boosted || event.detail.target === document.body) markedAs = null;
  });

  function focusSearch() {
    for (var i = 0; i < SEARCHES.length; i++) {
      var field = document.querySelector(SEARCHES[i]);
      // A phone folds the page's search under a summary: "/" opens it.
      var folded = field && field.closest("details.fold:not([open])");
      if (folded) folded.open = true;
      if (shown(field)) { field.focus(); field.select(); return true; }
    }
    return false;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(document.activeElement) || document.querySelector("dialog[open]")) return;
    var key = event.key;
    var afterG = pendingG && Date.now() - pendingG < SEQUENCE_MS;
    pendingG = 0;
    var done = true;
    if (key === "/") {
      done = focusSearch();
    } else if (key === "?") {
      if (window.bullpenShowShortcuts) window.bullpenShowShortcuts();
    } else if (key === "g") {
      pendingG = Date.now();
    } else if (key === "o" && afterG) {
      var home = document.querySelector(".top a.brand");
      if (home) home.click();
    } else if (key === "j" || key === "k") {
      move(key === "j" ? 1 : -1);
    } else if (key === "x") {
      var all = rows();
      var row = current(all);
      var box = row && row.querySelector(".job-select");
      if (box) box.click(); else done = false;
    } else if (key === "Enter") {
      // On a row's link the browser opens it; this is for a row marked while focus moved away.
      remark();
      var marked = document.querySelector("tr.kbd-row");
      var active = document.activeElement;
      var idle = !active || active === document.body || active.id === "main";
      var target = marked && idle && shown(marked) ? opener(marked) : null;
      if (target) target.click(); else done = false;
    } else {
      done = false;
    }
    if (done) event.preventDefault();
  });
})();
