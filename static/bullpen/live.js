// Bullpen live updates: one websocket per tab, kept across htmx navigations. The page says what
// it watches in <main data-live>; the server pushes counts, rows, progress, logs and status.
// Everything from the server is inserted with textContent: job data is untrusted.
(function () {
  "use strict";

  var socket = null;
  var retry = 0;
  var statusEl = function () { return document.getElementById("live-status"); };
  var redisState = "ok";

  function setStatus(state, text) {
    var el = statusEl();
    if (!el) return;
    el.dataset.state = state;
    el.textContent = text;
  }

  function spec() {
    var main = document.getElementById("main");
    if (!main || !main.dataset.live) return {};
    try { return JSON.parse(main.dataset.live); } catch (e) { return {}; }
  }

  function send(message) {
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(message));
  }

  function subscribe() {
    var watch = spec();
    send({ reset: true });
    if (watch.watch) send(watch);
  }

  function connect() {
    var path = document.body.dataset.wsPath || "/ws/bullpen/";
    var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
    setStatus("connecting", retry ? "reconnecting…" : "connecting…");
    socket = new WebSocket(url);
    socket.onopen = function () { retry = 0; subscribe(); };
    socket.onmessage = function (event) {
      var message;
      try { message = JSON.parse(event.data); } catch (e) { return; }
      handle(message);
    };
    socket.onclose = function () {
      socket = null;
      retry += 1;
      var delay = Math.min(10000, 500 * Math.pow(2, Math.min(retry, 5))) * (0.75 + Math.random() / 2);
      setStatus("reconnecting", "reconnecting…");
      setTimeout(connect, delay);
    };
  }

  function handle(message) {
    window.bullpenLastMessage = message;
    if (message.type === "status") {
      redisState = message.redis;
      if (message.redis === "down") setStatus("down", "Redis unreachable");
      else setStatus("live", "live");
      return;
    }
    if (redisState === "ok") setStatus("live", "live");
    if (message.type === "batch") { message.messages.forEach(handle); return; }
    if (message.type === "counts") message.queues.forEach(applyCounts);
    else if (message.type === "progress") message.updates.forEach(function (u) { applyProgress(message.queue, u); });
    else if (message.type === "rows") applyRows(message);
    else if (message.type === "logs") applyLogs(message);
    else if (message.type === "bulk") applyBulk(message);
    document.dispatchEvent(new CustomEvent("bullpen:live", { detail: message }));
  }

  // ---- counts ---------------------------------------------------------------------------
  function applyCounts(queue) {
    var watch = spec();
    var row = document.querySelector('tr[data-queue="' + CSS.escape(queue.slug) + '"]');
    if (row) {
      Object.keys(queue.counts).forEach(function (state) {
        var cell = row.querySelector('td[data-state="' + state + '"]');
        if (!cell) return;
        var link = cell.querySelector("a");
        if (link && link.textContent !== String(queue.counts[state])) {
          link.textContent = queue.counts[state];
          cell.classList.toggle("zero", !queue.counts[state]);
          flash(cell);
        }
      });
      var badge = row.querySelector(".badge.paused");
      if (badge) badge.hidden = !queue.paused;
      updateTotals();
    }
    if (watch.watch === "queue" && watch.queue === queue.slug) {
      Object.keys(queue.counts).forEach(function (state) {
        var count = document.querySelector('.tab[data-state="' + state + '"] .count');
        if (count && count.textContent !== String(queue.counts[state])) {
          count.textContent = queue.counts[state];
          flash(count);
          // Failure groups re-read themselves (throttled) when failures come or go.
          if (state === "failed") document.body.dispatchEvent(new CustomEvent("bullpen-failed-changed"));
        }
        var total = document.querySelector('.total[data-state="' + state + '"]');
        if (total) total.textContent = queue.counts[state];
      });
      var qbadge = document.querySelector("h1 .badge.paused");
      if (qbadge) qbadge.hidden = !queue.paused;
    }
  }

  function updateTotals() {
    document.querySelectorAll("th[data-total]").forEach(function (th) {
      var sum = 0;
      document.querySelectorAll('tr[data-queue] td[data-state="' + th.dataset.total + '"] a').forEach(function (a) {
        sum += Number(a.textContent) || 0;
      });
      th.textContent = sum;
    });
  }

  function flash(el) {
    el.classList.remove("flash");
    void el.offsetWidth;
    el.classList.add("flash");
  }

  // ---- progress ----------------------------------------------------------------------------
  function percent(progress) {
    var value = progress;
    if (progress && typeof progress === "object") {
      var keys = ["percentage", "percent", "pct", "progress"];
      value = null;
      for (var i = 0; i < keys.length; i++) if (keys[i] in progress) { value = progress[keys[i]]; break; }
    }
    if (typeof value !== "number" || !isFinite(value)) return null;
    return Math.max(0, Math.min(100, value));
  }

  function renderProgress(cell, progress) {
    cell.textContent = "";
    var pct = percent(progress);
    if (pct !== null) {
      var bar = document.createElement("progress");
      bar.max = 100; bar.value = pct;
      var label = document.createElement("span");
      label.className = "small"; label.textContent = " " + Math.round(pct) + "%";
      cell.appendChild(bar); cell.appendChild(label);
    } else if (progress) {
      var text = document.createElement("span");
      text.className = "mono small";
      text.textContent = JSON.stringify(progress).slice(0, 40);
      cell.appendChild(text);
    }
  }

  function applyProgress(queue, update) {
    var watch = spec();
    if (watch.watch === "queue" && watch.queue === queue) {
      var row = document.querySelector('tr[data-job-id="' + CSS.escape(update.id) + '"]');
      if (row) renderProgress(row.querySelector(".progress-cell"), update.progress);
    }
    if (watch.watch === "job" && watch.queue === queue && watch.id === update.id) {
      var box = document.querySelector(".progress-live");
      var pct = percent(update.progress);
      if (box) {
        box.hidden = pct === null;
        if (pct !== null) {
          box.querySelector("progress").value = pct;
          box.querySelector(".pct").textContent = Math.round(pct) + "%";
        }
      }
      var detail = document.querySelector(".progress-detail");
      if (detail && update.progress && typeof update.progress === "object") {
        detail.textContent = "";
        var pre = document.createElement("pre");
        pre.className = "mono small";
        pre.textContent = JSON.stringify(update.progress, null, 2);
        detail.appendChild(pre);
      }
    }
  }

  // ---- rows --------------------------------------------------------------------------------
  var INSERT_AT_TOP = { waiting: true, active: true, completed: true, failed: true };

  function timeCell(ms) {
    var td = document.createElement("td");
    if (typeof ms === "number" && ms > 0) {
      var t = document.createElement("time");
      t.dataset.ms = ms;
      t.dateTime = new Date(ms).toISOString();
      t.title = new Date(ms).toISOString();
      var rel = document.createElement("span");
      rel.className = "rel";
      t.appendChild(rel);
      td.appendChild(t);
    } else {
      td.innerHTML = '<span class="muted">—</span>';
    }
    return td;
  }

  function duration(job) {
    if (typeof job.processedOn !== "number" || typeof job.finishedOn !== "number") return "—";
    var ms = job.finishedOn - job.processedOn;
    if (ms < 1000) return ms + " ms";
    if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
    return Math.floor(ms / 60000) + " min " + Math.floor((ms % 60000) / 1000) + " s";
  }

  function jobUrl(table, id) {
    var encoded = String(id).replace(/%/g, "%25").replace(/\//g, "%2F");
    return table.dataset.jobUrlPrefix + encodeURIComponent(encoded) + "/";
  }

  function buildRow(table, job) {
    var tr = document.createElement("tr");
    tr.dataset.jobId = job.id;
    var id = document.createElement("td");
    id.className = "mono";
    var a = document.createElement("a");
    a.href = jobUrl(table, job.id);
    a.textContent = job.id;
    id.appendChild(a);
    tr.appendChild(id);
    var name = document.createElement("td");
    name.textContent = job.name || "—";
    tr.appendChild(name);
    tr.appendChild(timeCell(job.timestamp));
    tr.appendChild(timeCell(job.processedOn));
    tr.appendChild(timeCell(job.finishedOn));
    var dur = document.createElement("td");
    dur.textContent = duration(job);
    tr.appendChild(dur);
    var attempts = document.createElement("td");
    attempts.className = "num";
    attempts.textContent = (job.attemptsMade || 0) + (job.opts && job.opts.attempts ? " / " + job.opts.attempts : "");
    tr.appendChild(attempts);
    var progress = document.createElement("td");
    progress.className = "progress-cell";
    if (job.progress) renderProgress(progress, job.progress);
    tr.appendChild(progress);
    var preview = document.createElement("td");
    preview.className = "preview";
    if (job.failedReason) {
      var reason = document.createElement("div");
      reason.className = "reason";
      reason.textContent = String(job.failedReason).slice(0, 200);
      preview.appendChild(reason);
    }
    var code = document.createElement("code");
    code.className = "mono small";
    var data = typeof job.data === "string" ? job.data : JSON.stringify(job.data);
    code.textContent = data.length > 160 ? data.slice(0, 159) + "…" : data;
    preview.appendChild(code);
    tr.appendChild(preview);
    return tr;
  }

  function applyRows(message) {
    var watch = spec();
    if (watch.watch === "job" && watch.queue === message.queue) return applyJob(message);
    if (watch.watch !== "queue" || watch.queue !== message.queue) return;
    var table = document.querySelector("table.jobs");
    if (!table) return;
    var body = table.tBodies[0];
    var newHidden = 0;
    message.removed.forEach(function (gone) {
      var tr = body.querySelector('tr[data-job-id="' + CSS.escape(gone.id) + '"]');
      if (tr) tr.remove();
    });
    message.rows.forEach(function (job) {
      var existing = body.querySelector('tr[data-job-id="' + CSS.escape(job.id) + '"]');
      if (job.state !== watch.state) {
        if (existing) existing.remove();
        return;
      }
      if (job.partial) {
        // A state change sent without the job's fields: count it, do not draw it.
        if (!existing) newHidden += 1;
        return;
      }
      if (existing) {
        existing.replaceWith(buildRow(table, job));
        return;
      }
      if (watch.page === 1 && watch.order === "desc" && INSERT_AT_TOP[watch.state]) {
        var tr = buildRow(table, job);
        tr.classList.add("flash");
        body.insertBefore(tr, body.firstChild);
        while (body.rows.length > watch.per_page) body.deleteRow(body.rows.length - 1);
      } else {
        newHidden += 1;
      }
    });
    var empty = document.querySelector("p.empty");
    if (empty) empty.hidden = body.rows.length > 0;
    table.hidden = body.rows.length === 0;
    if (newHidden) {
      var news = document.querySelector("p.news");
      if (news) { news.hidden = false; news.querySelector("a").href = location.href; }
    }
    window.dispatchEvent(new Event("bullpen:times"));
  }

  function applyJob(message) {
    var watch = spec();
    message.rows.forEach(function (job) {
      if (job.id !== watch.id) return;
      setField("state", job.state);
      var badge = document.querySelector('[data-testid="job-state"]');
      if (badge) { badge.textContent = job.state; badge.className = "badge state-" + job.state; }
      setField("attemptsMade", String(job.attemptsMade) + (job.opts && job.opts.attempts ? " of " + job.opts.attempts : ""));
      setField("attemptsStarted", String(job.attemptsStarted));
      setField("failedReason", job.failedReason || "—");
      setTime("processedOn", job.processedOn);
      setTime("finishedOn", job.finishedOn);
      if (job.progress !== undefined) applyProgress(message.queue, { id: job.id, progress: job.progress });
    });
    message.removed.forEach(function (gone) {
      if (gone.id === watch.id) {
        setField("state", "removed");
        var badge = document.querySelector('[data-testid="job-state"]');
        if (badge) badge.textContent = "removed";
      }
    });
  }

  function setField(name, text) {
    var el = document.querySelector('[data-field="' + name + '"]');
    if (el && el.textContent !== text) { el.textContent = text; flash(el); }
  }

  function setTime(name, ms) {
    var el = document.querySelector('[data-field="' + name + '"]');
    if (!el || typeof ms !== "number") return;
    var current = el.querySelector("time");
    if (current && Number(current.dataset.ms) === ms) return;
    var td = timeCell(ms);
    el.textContent = "";
    while (td.firstChild) el.appendChild(td.firstChild);
    var t = el.querySelector("time");
    if (t) {
      var abs = document.createElement("span");
      abs.className = "abs";
      abs.textContent = new Date(ms).toISOString().replace("T", " ").replace("Z", " UTC");
      t.insertBefore(abs, t.firstChild);
      t.insertBefore(document.createTextNode(" "), t.lastChild);
    }
    window.dispatchEvent(new Event("bullpen:times"));
  }

  // ---- bulk actions (retry all, promote all) --------------------------------------------------
  function applyBulk(message) {
    var watch = spec();
    var box = document.getElementById("bulk-progress");
    if (!box || watch.queue !== message.queue) return;
    box.hidden = false;
    var pct = message.total ? Math.round(100 * message.done / message.total) : 100;
    box.querySelector("progress").value = pct;
    box.querySelector(".label").textContent = message.action + ": " + message.done + " of " + message.total;
  }

  // ---- logs --------------------------------------------------------------------------------
  function applyLogs(message) {
    var watch = spec();
    if (watch.watch !== "job" || watch.queue !== message.queue || watch.id !== message.id) return;
    var list = document.querySelector(".log-lines");
    if (!list) return;
    var have = Number(list.dataset.count) || 0;
    var filter = document.querySelector(".log-filter");
    var needle = filter ? filter.value.toLowerCase() : "";
    message.lines.forEach(function (line, index) {
      if (message.start + index < have) return;  // already on the page
      var li = document.createElement("li");
      li.textContent = line;
      if (needle && line.toLowerCase().indexOf(needle) === -1) li.classList.add("hidden");
      list.appendChild(li);
    });
    var total = Math.max(have, message.start + message.lines.length);
    list.dataset.count = total;
    var count = document.querySelector(".log-count");
    if (count) count.textContent = total;
    list.scrollTop = list.scrollHeight;
  }

  document.addEventListener("DOMContentLoaded", connect);
  document.addEventListener("htmx:afterSettle", function () { subscribe(); });
})();
