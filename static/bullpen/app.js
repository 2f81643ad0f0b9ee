// Bullpen page helpers: relative times, log filter, copy as JSON, the overview's keys and groups,
// the "Go to queue" box, a job's flow tree. Works after htmx swaps too.
(function () {
  "use strict";

  function relative(ms) {
    var seconds = (Date.now() - ms) / 1000;
    var future = seconds < 0;
    seconds = Math.abs(seconds);
    var units = [[86400, "d"], [3600, "h"], [60, "min"], [1, "s"]];
    for (var i = 0; i < units.length; i++) {
      if (seconds >= units[i][0] || units[i][1] === "s") {
        var amount = Math.floor(seconds / units[i][0]);
        return future ? "in " + amount + " " + units[i][1] : amount + " " + units[i][1] + " ago";
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
    var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy as JSON"; }, 1500); };
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
    if (verb && verb !== "get") toast("Working…", false);
  });
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var message = "Failed (" + xhr.status + ")";
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

// The overview's keyboard and groups: "/" puts the cursor in the queue filter (as in many
// consoles), a group's heading opens and closes it. The rows themselves come from the server
// (htmx loads an opened group's rows once); this only shows and hides them.
(function () {
  "use strict";

  function typing(el) {
    return el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }

  document.addEventListener("keydown", function (event) {
    if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing(document.activeElement)) return;
    var filter = document.getElementById("queue-filter");
    if (!filter) return;
    event.preventDefault();
    filter.focus();
    filter.select();
  });

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
