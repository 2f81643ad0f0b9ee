// Websocket viewers in one Node process, for bench/live/: the same sockets, watch messages and
// event→client latency as bench/live/live_viewer_child.py, at a fraction of its CPU.
//
//   node --experimental-websocket live_viewers.mjs SPEC        a viewer child (live_bench.py)
//   node --experimental-websocket live_viewers.mjs --floor PORT,N,SECONDS
//                                                              fanout_floor_bench.py's client
//
// A viewer child opens the viewers SPEC (JSON: ports, viewers as [index, kind], wait_s,
// n_queues, queue_page, ws_path) names, prints {"opened", "extensions"}, then answers
// start/stop/close on stdin with one JSON line each on stdout, in live_viewer_child.py's form
// (histograms in 1 ms bins as live_hist.py keeps them).
import readline from 'node:readline';

const HIST_LIMIT_MS = 60_000;

// Wall-clock milliseconds with a fraction, as Python's time.time() * 1000 (Date.now() drops it).
const nowMs = () => performance.timeOrigin + performance.now();

class Hist {
  constructor() {
    this.bins = new Map();
    this.n = 0;
    this.max = 0;
    this.sum = 0;
  }

  add(ms) {
    if (ms < 0) ms = 0;
    const i = Math.min(Math.trunc(ms), HIST_LIMIT_MS);
    this.bins.set(i, (this.bins.get(i) ?? 0) + 1);
    this.n += 1;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }

  toJSON() {
    return { bins: Object.fromEntries(this.bins), n: this.n, sum: this.sum, max: this.max };
  }
}

const HIST_NAMES = ['progress', 'rows', 'overview', 'overview-sent', 'queue-counts'];

class Recorder {
  constructor() {
    this.active = false;
    this.start();
    this.active = false;
  }

  start() {
    this.hists = Object.fromEntries(HIST_NAMES.map((k) => [k, new Hist()]));
    this.startedMs = nowMs();
    this.worstBySecond = {};
    this.errors = [];
    this.statusDown = 0;
    this.closed = 0;
    this.active = true;
  }
}

class Viewer {
  constructor(idx, kind, rec, spec) {
    this.idx = idx;
    this.kind = kind; // "overview" | "queue"
    this.rec = rec;
    this.spec = spec;
    this.trackCompleted = idx === 0;
    this.closing = false;
    this.ws = null;
    this.reset();
  }

  reset() {
    this.msgs = 0;
    this.bytes = 0;
    this.types = {};
    this.progressUpdates = 0;
    this.rowEntries = 0;
    this.completedIds = new Set();
  }

  watchMessage() {
    const { n_queues: n, queue_page: page } = this.spec;
    if (this.kind === 'overview') {
      const shown = Array.from({ length: n }, (_, i) => `bench-${String(i).padStart(2, '0')}`);
      return { watch: 'overview', shown, listed: n };
    }
    return { watch: 'queue', queue: page };
  }

  open(port, waitS) {
    return new Promise((resolve, reject) => {
      const origin = `http://127.0.0.1:${port}`;
      const ws = new WebSocket(`ws://127.0.0.1:${port}${this.spec.ws_path}`, {
        headers: { Origin: origin },
      });
      this.ws = ws;
      let first = true;
      const timer = setTimeout(() => {
        reject(new Error(`no status within ${waitS} s`));
        ws.close();
      }, waitS * 1000);
      ws.onmessage = (event) => {
        const t = nowMs();
        if (first) {
          first = false;
          clearTimeout(timer);
          const msg = JSON.parse(event.data);
          if (msg.type !== 'status') {
            reject(new Error(`first message was not a status: ${event.data.slice(0, 200)}`));
            return;
          }
          ws.send(JSON.stringify(this.watchMessage()));
          resolve();
          return;
        }
        this.read(event.data, t);
      };
      ws.onerror = (event) => {
        clearTimeout(timer);
        reject(new Error(`websocket error: ${event.message ?? event.type}`));
      };
      ws.onclose = (event) => {
        clearTimeout(timer);
        if (first) reject(new Error(`closed before its status: ${event.code}`));
        else if (!this.closing) {
          this.rec.closed += 1;
          this.rec.errors.push(
            `viewer ${this.idx} (${this.kind}) closed by the server: ${event.code} ${event.reason}`,
          );
        }
      };
    });
  }

  read(raw, t) {
    const rec = this.rec;
    if (!rec.active) return;
    try {
      this.msgs += 1;
      this.bytes += Buffer.byteLength(raw);
      const frame = JSON.parse(raw);
      for (const msg of frame.type === 'batch' ? frame.messages : [frame]) this.take(msg, t);
    } catch (exc) {
      rec.errors.push(`viewer ${this.idx}: ${exc.name}: ${exc.message}`);
    }
  }

  take(msg, t) {
    const rec = this.rec;
    const kind = String(msg.type);
    this.types[kind] = (this.types[kind] ?? 0) + 1;
    if (kind === 'progress' || kind === 'rows') {
      let worst = 0;
      if (kind === 'progress') {
        const hist = rec.hists.progress;
        for (const u of msg.updates ?? []) {
          worst = Math.max(worst, t - u.at);
          hist.add(t - u.at);
          this.progressUpdates += 1;
        }
      } else {
        const hist = rec.hists.rows;
        for (const row of msg.rows ?? []) {
          worst = Math.max(worst, t - row.at);
          hist.add(t - row.at);
          this.rowEntries += 1;
          if (this.trackCompleted && row.state === 'completed') this.completedIds.add(String(row.id));
        }
        for (const row of msg.removed ?? []) {
          worst = Math.max(worst, t - row.at);
          hist.add(t - row.at);
          this.rowEntries += 1;
        }
      }
      const sec = Math.trunc((t - rec.startedMs) / 1000);
      if (worst > (rec.worstBySecond[sec] ?? 0)) rec.worstBySecond[sec] = worst;
    } else if (kind === 'counts' || kind === 'overview') {
      const eventAt = msg.eventAt || 0;
      if (eventAt > 0) {
        rec.hists[this.kind === 'overview' ? 'overview' : 'queue-counts'].add(t - eventAt);
        // From the server's send to receipt: the fan-out's and this client's share.
        if (this.kind === 'overview') rec.hists['overview-sent'].add(t - msg.at);
      }
    } else if (kind === 'status') {
      if (msg.redis !== 'ok') rec.statusDown += 1;
    } else if (kind === 'error') {
      rec.errors.push(`viewer ${this.idx}: ${JSON.stringify(msg).slice(0, 200)}`);
    }
  }

  stats() {
    return {
      kind: this.kind,
      msgs: this.msgs,
      bytes: this.bytes,
      types: { ...this.types },
      progress_updates: this.progressUpdates,
      row_entries: this.rowEntries,
      track_completed: this.trackCompleted,
      completed_ids: [...this.completedIds].sort(),
    };
  }

  close() {
    this.closing = true;
    return new Promise((resolve) => {
      const ws = this.ws;
      if (!ws || ws.readyState === WebSocket.CLOSED) return resolve();
      const timer = setTimeout(resolve, 6000);
      ws.addEventListener('close', () => {
        clearTimeout(timer);
        resolve();
      });
      ws.close();
    });
  }
}

const say = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);

async function viewerChild(spec) {
  const rec = new Recorder();
  const viewers = spec.viewers.map(([idx, kind]) => new Viewer(idx, kind, rec, spec));
  try {
    // One at a time, as live_viewer_child.py opens its share.
    for (const v of viewers) await v.open(spec.ports[v.idx % spec.ports.length], spec.wait_s);
  } catch (exc) {
    say({ error: String(exc.message ?? exc) });
    await Promise.all(viewers.map((v) => v.close()));
    process.exit(0);
  }
  say({ opened: viewers.length, extensions: viewers[0]?.ws?.extensions || 'none' });
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const command = line.trim();
    if (command === 'start') {
      for (const v of viewers) v.reset();
      rec.start();
      say({ ok: true });
    } else if (command === 'stop') {
      rec.active = false;
      say({
        hists: rec.hists,
        worst_by_second: rec.worstBySecond,
        errors: rec.errors.slice(0, 20),
        status_down: rec.statusDown,
        closed: rec.closed,
        viewers: viewers.map((v) => v.stats()),
      });
    } else break;
  }
  // "close", or the parent went away.
  await Promise.all(viewers.map((v) => v.close()));
  say({ closed: true });
  process.exit(0);
}

// fanout_floor_bench.py's client: N sockets for SECONDS, each kept frame's send→receipt.
async function floorChild(port, n, seconds) {
  const lat = [];
  const end = Date.now() + seconds * 1000;
  const one = () =>
    new Promise((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
      ws.onmessage = (event) => {
        const t = nowMs();
        const frame = JSON.parse(event.data);
        if (frame.end) ws.close();
        else if (frame.kept) lat.push(t - frame.at); // not a frame of the settle
      };
      ws.onerror = () => resolve();
      ws.onclose = () => resolve();
      setTimeout(() => {
        ws.close();
        resolve();
      }, end - Date.now());
    });
  await Promise.all(Array.from({ length: n }, one));
  process.stdout.write(JSON.stringify(lat), () => process.exit(0));
}

const [arg, more] = process.argv.slice(2);
if (arg === '--floor') {
  const [port, n, seconds] = more.split(',');
  await floorChild(Number(port), Number(n), Number(seconds));
} else {
  await viewerChild(JSON.parse(arg));
}
