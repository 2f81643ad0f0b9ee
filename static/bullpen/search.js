// Streaming search on the queue page: results appear as the server's bounded scan finds them;
// Cancel aborts the request (the server stops scanning when the stream is closed).
(function () {
  "use strict";
  var running = null;

  function jobUrl(prefix, id) {
    return prefix + encodeURIComponent(String(id).replace(/%/g, "%25").replace(/\//g, "%2F")) + "/";
  }

  function addResult(list, prefix, job) {
    var li = document.createElement("li");
    var a = document.createElement("a");
    a.href = jobUrl(prefix, job.id);
    a.textContent = job.id;
    a.className = "mono";
    li.appendChild(a);
    li.appendChild(document.createTextNode(" " + (job.name || "") + " "));
    if (job.failedReason) {
      var reason = document.createElement("span");
      reason.className = "reason";
      reason.textContent = String(job.failedReason).slice(0, 160);
      li.appendChild(reason);
    }
    list.appendChild(li);
  }

  async function run(form) {
    var input = form.querySelector("input[name=q]");
    var progress = form.querySelector(".search-progress");
    var cancel = form.querySelector(".search-cancel");
    var list = document.querySelector(".search-results");
    if (running) running.abort();
    running = new AbortController();
    list.textContent = "";
    list.hidden = false;
    cancel.hidden = false;
    progress.textContent = "searching…";
    var url = form.dataset.searchUrl + "?state=" + encodeURIComponent(form.dataset.state) +
      "&q=" + encodeURIComponent(input.value);
    try {
      var response = await fetch(url, { signal: running.signal, headers: { Accept: "application/x-ndjson" } });
      if (!response.ok) {
        var body = await response.json().catch(function () { return {}; });
        progress.textContent = body.error || ("failed (" + response.status + ")");
        return;
      }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      for (;;) {
        var chunk = await reader.read();
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        var lines = buffer.split("\n");
        buffer = lines.pop();
        lines.forEach(function (line) {
          if (!line) return;
          var item = JSON.parse(line);
          if (item.type === "job") addResult(list, form.dataset.jobUrlPrefix, item.job);
          else if (item.type === "progress") {
            progress.textContent = "scanned " + item.scanned + " of " + item.total + ", " +
              item.matched + " match" + (item.matched === 1 ? "" : "es") + (item.done ? "" : "…");
          } else if (item.type === "error") progress.textContent = item.error;
        });
      }
    } catch (error) {
      if (error.name === "AbortError") progress.textContent += " (cancelled)";
      else progress.textContent = String(error);
    } finally {
      cancel.hidden = true;
      running = null;
    }
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.matches || !form.matches("form.search")) return;
    event.preventDefault();
    run(form);
  }, true);
  document.addEventListener("click", function (event) {
    if (event.target.classList && event.target.classList.contains("search-cancel") && running) {
      running.abort();
    }
  });
})();
