// Bullpen page helpers: relative times, log filter, copy as JSON. Works after htmx swaps too.
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

  function refreshTimes(root) {
    root.querySelectorAll("time[data-ms]").forEach(function (el) {
      var rel = el.querySelector(".rel");
      if (rel) rel.textContent = relative(Number(el.dataset.ms));
    });
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

  document.addEventListener("DOMContentLoaded", function () { refreshTimes(document); });
  document.addEventListener("htmx:afterSettle", function (event) { refreshTimes(event.target); });
  window.addEventListener("bullpen:times", function () { refreshTimes(document); });
  setInterval(function () { refreshTimes(document); }, 15000);
})();
