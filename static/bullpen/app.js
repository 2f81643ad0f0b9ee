// Bullpen page helpers: relative times, log filter, copy as JSON, the overview's keys and groups,
// the "Go to queue" box, a job's flow tree, keyboard shortcuts and remembered preferences. Works
// after htmx swaps too.
(function () {
  "use strict";

  // The page's words (data-text on <body>, in the page's language), English without them;
  // names in braces are filled in from values. With a count (values.n), the form for it.
  function say(key, english, values) {
    var words = {};
    try { words = JSON.parse(document.body.dataset.text || "{}"); } catch (e) { words = {}; }
    values = values || {};
    var text = words[key] || english;
    if (typeof values.n === "number" && words[key + "_one"]) {
      var form = new Intl.PluralRules(document.documentElement.lang || "en").select(values.n);
      text = words[key + "_" + form] || words[key + "_other"];
    }
    Object.keys(values).forEach(function (name) { text = text.split("{" + name + "}").join(values[name]); });
    return text;
  }
  window.bullpenSay = say;

  // As the server writes them (dashboard/templatetags/bullpen.py): "3 min ago", "in 2 h".
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
    var template = document.createElement("template");
    template.innerHTML = message.node;
    var fresh = template.content.firstElementChild;
    var old = fresh && fresh.id ? document.getElementById(fresh.id) : null;
    if (!old) return;
    old.replaceWith(fresh);
    if (window.htmx) window.htmx.process(fresh);
  });
})();

// The overview's count links say what they count ("14 failed jobs in documents"); a live update
// changes only the number, so their words follow it here.
(function () {
  "use strict";

  var ONE = "{n} {state} job in {queue}", OTHER = "{n} {state} jobs in {queue}";

  // The label's forms in the page's language (data-text on <body>), as the server wrote them.
  function forms() {
    var words = {};
    try { words = JSON.parse(document.body.dataset.text || "{}"); } catch (e) { words = {}; }
    return [words.count_label_one || ONE, words.count_label_other || OTHER];
  }

  // The state and queue a label names, read back through the form that wrote it.
  function parts(label, form) {
    var names = [];
    var pattern = form.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(n|state|queue)\}/g, function (all, name) {
      names.push(name);
      return name === "n" ? "\\d+" : name === "queue" ? "(.*)" : "(.*?)";
    });
    var match = new RegExp("^" + pattern + "$").exec(label);
    if (!match) return null;
    var found = {};
    names.filter(function (name) { return name !== "n"; }).forEach(function (name, i) { found[name] = match[i + 1]; });
    return found;
  }

  function relabel(link) {
    var label = link.getAttribute("aria-label");
    var n = Number(link.textContent.replace(/\D/g, ""));
    if (!label || !/\d/.test(link.textContent)) return;
    var both = forms();
    var found = parts(label, both[0]) || parts(label, both[1]);
    if (!found) return;
    var form = new Intl.PluralRules(document.documentElement.lang || "en").select(n) === "one" ? both[0] : both[1];
    var fresh = form.split("{n}").join(n).split("{state}").join(found.state).split("{queue}").join(found.queue);
    if (fresh !== label) link.setAttribute("aria-label", fresh);
  }

  new MutationObserver(function (records) {
    records.forEach(function (record) {
      var el = record.target.nodeType === 1 ? record.target : record.target.parentElement;
      if (el && el.matches && el.matches("td[data-state] > a[aria-label]")) relabel(el);
    });
  }).observe(document.documentElement, { childList: true, characterData: true, subtree: true });
})();

// Preferences remembered by this browser (a versioned key, as the colour scheme's): the job
// lists' page size and order, the tab a queue opens at, how deep JSON opens, and the overview's
// order, groups and queues per page. The server keeps nothing: the links a page renders carry
// them (rewritten before htmx takes the links over), and an address without them (typed, or
// bookmarked) loads again with them once, in place.
(function () {
  "use strict";

  var KEY = "bullpen.prefs.v1";
  // What a stored value may be: anything else (an older or hand-edited entry) is ignored.
  var VALID = {
    tab: /^(waiting|active|prioritized|delayed|waiting-children|completed|failed|paused)$/,
    json_depth: /^([1-9]|all)$/,
    jobs_per_page: /^[1-9]\d{0,3}$/,
    jobs_order: /^(asc|desc)$/,
    overview_sort: /^-?[a-z-]{1,20}$/,
    overview_group: /^(head|tail|prefix)$/,
    overview_per_page: /^[1-9]\d{0,2}$/
  };
  // The server's own choices (dashboard/overview_list.py, the JSON tree's open levels): a
  // preference equal to one of them is not kept.
  var DEFAULTS = { overview_sort: "name", overview_group: "", overview_per_page: "100", json_depth: "2" };

  function load() {
    var found = {};
    try {
      var raw = JSON.parse(window.localStorage.getItem(KEY) || "{}");
      Object.keys(VALID).forEach(function (name) {
        if (typeof raw[name] === "string" && VALID[name].test(raw[name])) found[name] = raw[name];
      });
    } catch (e) { /* unreadable or blocked storage: no preferences */ }
    return found;
  }

  var prefs = load();

  function save(changes) {
    prefs = load();
    Object.keys(changes).forEach(function (name) {
      var value = changes[name] == null ? "" : String(changes[name]);
      if (value === "" || value === DEFAULTS[name] || !VALID[name].test(value)) delete prefs[name];
      else prefs[name] = value;
    });
    try {
      window.localStorage.setItem(KEY, JSON.stringify(prefs));
    } catch (e) { /* storage blocked: the choice lasts for this page */ }
    refreshLinks();
  }

  function forget() {
    prefs = {};
    try { window.localStorage.removeItem(KEY); } catch (e) { /* nothing was kept */ }
    refreshLinks();
  }

  // The overview's path: the brand link in the header points there on every page.
  function base() {
    var brand = document.querySelector(".top a.brand");
    var href = brand && (brand.dataset.plainHref || brand.getAttribute("href"));
    return href ? new URL(href, location.href).pathname : null;
  }

  function kindOf(url, root) {
    if (!root || url.origin !== location.origin || url.pathname.indexOf(root) !== 0) return null;
    var rest = url.pathname.slice(root.length);
    if (rest === "") return "overview";
    return /^q\/[^/]+\/$/.test(rest) ? "queue" : null;
  }

  // ``href`` with the preferences it leaves out, or null when it needs none.
  function withPrefs(href, root) {
    var url = new URL(href, location.href);
    var kind = kindOf(url, root);
    if (!kind || url.hash) return null;
    var params = url.searchParams;
    var changed = false;
    function add(name, value) {
      if (value && !params.has(name)) { params.set(name, value); changed = true; }
    }
    if (kind === "overview") {
      if (url.search) return null; // a filter, a group, a page: as the link says
      add("sort", prefs.overview_sort);
      add("group", prefs.overview_group);
      add("per_page", prefs.overview_per_page);
    } else {
      add("state", prefs.tab);
      add("per_page", prefs.jobs_per_page);
      add("order", prefs.jobs_order);
    }
    return changed ? url.pathname + url.search : null;
  }

  // Says whether the link's address changed.
  function rewrite(link, root) {
    if (link.hasAttribute("hx-get") || link.hasAttribute("data-sign-out")) return false;
    if (!link.dataset.plainHref && !Object.keys(prefs).length) return false; // nothing to add
    var plain = link.dataset.plainHref || link.getAttribute("href");
    if (!plain) return false;
    var fresh = withPrefs(plain, root) || plain;
    if (fresh === link.getAttribute("href")) return false;
    // Kept when the address is the plain one again too: htmx compares a link's attributes with
    // those it first saw to tell whether to read its address anew.
    link.dataset.plainHref = plain;
    link.setAttribute("href", fresh);
    return true;
  }

  // htmx reads a boosted link's address once, when it takes the link over: rewrite it first.
  document.addEventListener("htmx:beforeProcessNode", function (event) {
    if (event.target.tagName === "A") rewrite(event.target, base());
  });

  // After a change of preferences: the links already on the page, each changed one handed to
  // htmx again (and only those: a form with a request under way is left alone).
  function refreshLinks() {
    var root = base();
    document.querySelectorAll("a[href]").forEach(function (link) {
      if (rewrite(link, root) && window.htmx) window.htmx.process(link);
    });
  }

  // Chosen where they are shown: a job list's size and order, the overview's tools and headings.
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
  });

  // JSON trees open to the chosen depth (the server opens two levels).
  function openJson(root) {
    var depth = prefs.json_depth || DEFAULTS.json_depth;
    var limit = depth === "all" ? Infinity : Number(depth);
    root.querySelectorAll(".json-tree details.j-node").forEach(function (node) {
      var level = 0;
      for (var up = node.parentElement; up && !up.classList.contains("json-tree"); up = up.parentElement) {
        if (up.classList.contains("j-node")) level += 1;
      }
      node.open = level < limit;
    });
  }

  // An overview or queue address without the preferred parameters: the same page again with
  // them, swapped in place (as a boosted link would) and put in the address bar.
  function arrive() {
    var root = base();
    var here = new URL(location.href);
    var kind = kindOf(here, root);
    var fresh = kind && withPrefs(here.pathname + here.search, root);
    if (!fresh || !window.htmx || !differs(kind, new URL(fresh, location.href).searchParams)) return;
    window.htmx.ajax("GET", fresh, { target: "body", swap: "innerHTML" }).then(function () {
      history.replaceState(history.state, "", fresh);
    });
  }

  // Whether the page shows something else than ``wanted`` asks for.
  function differs(kind, wanted) {
    var shown = {};
    if (kind === "overview") {
      var tools = document.querySelector("form.overview-tools");
      if (!tools) return false;
      ["sort", "group", "per_page"].forEach(function (name) {
        var control = tools.elements.namedItem(name);
        if (control) shown[name] = control.value;
      });
    } else {
      var main = document.getElementById("main");
      try { shown = JSON.parse(main.dataset.live); } catch (e) { return false; }
    }
    var found = false;
    wanted.forEach(function (value, name) {
      if (name in shown && String(shown[name]) !== value) found = true;
    });
    return found;
  }

  // The dialog "?" opens: the keys, and the choices no page shows a control for.
  function dialog() { return document.getElementById("shortcuts"); }

  function showDialog() {
    var box = dialog();
    if (!box || box.open) return;
    box.querySelectorAll("select[data-pref]").forEach(function (select) {
      select.value = prefs[select.dataset.pref] || DEFAULTS[select.dataset.pref] || "";
    });
    box.showModal();
  }

  document.addEventListener("click", function (event) {
    if (!event.target.closest) return;
    if (event.target.closest(".prefs-open")) showDialog();
    else if (event.target.closest("#shortcuts .dialog-close")) dialog().close();
    else if (event.target.closest("#shortcuts .prefs-forget")) {
      forget();
      dialog().querySelectorAll("select[data-pref]").forEach(function (select) {
        select.value = DEFAULTS[select.dataset.pref] || "";
      });
      openJson(document);
      if (window.bullpenToast) window.bullpenToast(JSON.parse(document.body.dataset.text || "{}").prefs_forgotten || "Preferences forgotten", false);
    }
  });
  window.bullpenShowShortcuts = showDialog;

  // Another tab chose: follow it.
  window.addEventListener("storage", function (event) {
    if (event.key === KEY || event.key === null) { prefs = load(); refreshLinks(); }
  });

  openJson(document);
  document.addEventListener("htmx:afterSwap", function (event) { openJson(event.detail.target || document); });
  document.addEventListener("DOMContentLoaded", arrive);
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
