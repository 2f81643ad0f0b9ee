#!/usr/bin/env node
// Steady BullMQ traffic for Bullpen's live-update benchmark (bench/live/live_bench.py).
//
//   node live_load.mjs --redis redis://127.0.0.1:6379/0 --prefix bull --rate 200 --duration 300
//   node live_load.mjs --redis ... --setup 20 --duration 0      # only create bench-00..bench-19
//
// Producers add --rate jobs per second spread over a few queues (--mix, most
// of them on bench-00); one BullMQ Worker per loaded queue runs every job
// through job.updateProgress() --steps times (e.g. 25/50/75/100 with
// --step-ms sleeps between them) and completes it. The queues' event streams
// thus carry added / waiting / active / progress / completed / drained events
// at a realistic rate. Completed and failed jobs are trimmed to the newest
// 1000 per queue (removeOnComplete / removeOnFail), so memory stays bounded.
//
// --setup N first creates bench-00..bench-(N-1) with a few jobs each (three
// waiting, two delayed by an hour) so every queue exists before the load starts.
//
// The run ends by itself after --duration seconds (or on SIGTERM / SIGINT).
// Every --stats-ms a JSON line with cumulative counters goes to stdout:
//   {"t": <epoch ms>, "elapsed": s, "added": n, "completed": n, "failed": n,
//    "progress": n, "inflight": n, "behind": n,
//    "q": {"<queue>": [added, completed, progress], ...}}
// and a final line with "done": true. Messages for people go to stderr.

import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue, Worker } from 'bullmq';

const { values: args } = parseArgs({
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/0' },
    prefix: { type: 'string', default: 'bull' },
    rate: { type: 'string', default: '200' },
    duration: { type: 'string', default: '60' },
    mix: { type: 'string', default: 'bench-00:70,bench-01:10,bench-02:10,bench-03:10' },
    concurrency: { type: 'string', default: '50' },
    steps: { type: 'string', default: '4' },
    'step-ms': { type: 'string', default: '25' },
    'keep-jobs': { type: 'string', default: '1000' },
    setup: { type: 'string', default: '0' },
    'stats-ms': { type: 'string', default: '1000' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (args.help) {
  process.stderr.write(
    'usage: node live_load.mjs [--redis URL] [--prefix bull] [--rate 200] [--duration 60]\n' +
      '                          [--mix bench-00:70,bench-01:10,...] [--concurrency 50]\n' +
      '                          [--steps 4] [--step-ms 25] [--keep-jobs 1000]\n' +
      '                          [--setup N] [--stats-ms 1000]\n',
  );
  process.exit(0);
}

const RATE = Number(args.rate);
const DURATION_S = Number(args.duration);
const CONCURRENCY = Number.parseInt(args.concurrency, 10);
const STEPS = Number.parseInt(args.steps, 10);
const STEP_MS = Number(args['step-ms']);
const KEEP = Number.parseInt(args['keep-jobs'], 10);
const SETUP = Number.parseInt(args.setup, 10);
const STATS_MS = Number(args['stats-ms']);
const TICK_MS = 20;
// Never more adds in flight than this; beyond it the producers fall behind
// (counted in "behind") rather than queueing without bound.
const MAX_INFLIGHT_ADDS = Math.max(50, Math.ceil(RATE));

if (
  !(RATE >= 0) ||
  !(DURATION_S >= 0) ||
  !(CONCURRENCY >= 1) ||
  !(STEPS >= 0) ||
  !(STEP_MS >= 0) ||
  !(KEEP >= 0) ||
  !(SETUP >= 0) ||
  !(STATS_MS >= 100)
) {
  process.stderr.write('live_load: bad numeric argument\n');
  process.exit(2);
}

const mix = args.mix.split(',').map((part) => {
  const [name, weight] = part.split(':');
  const w = Number(weight ?? '1');
  if (!/^[A-Za-z0-9_.-]+$/.test(name || '') || !(w > 0)) {
    process.stderr.write(`live_load: bad --mix entry ${JSON.stringify(part)}\n`);
    process.exit(2);
  }
  return { name, weight: w };
});

const connection = { url: args.redis, maxRetriesPerRequest: null };
const prefix = args.prefix;
const t0 = Date.now();
const log = (msg) =>
  process.stderr.write(`[live_load ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);

const jobOptions = {
  removeOnComplete: { count: KEEP },
  removeOnFail: { count: KEEP },
};

// ---- setup: make sure every benchmark queue exists ---------------------------------------

if (SETUP > 0) {
  const names = Array.from({ length: SETUP }, (_, i) => `bench-${String(i).padStart(2, '0')}`);
  for (const name of names) {
    const q = new Queue(name, { connection, prefix, defaultJobOptions: jobOptions });
    await q.addBulk([
      { name: 'setup', data: { i: 0 } },
      { name: 'setup', data: { i: 1 } },
      { name: 'setup', data: { i: 2 } },
      { name: 'setup', data: { i: 3 }, opts: { delay: 3_600_000 } },
      { name: 'setup', data: { i: 4 }, opts: { delay: 3_600_000 } },
    ]);
    await q.close();
  }
  log(`created ${names.length} queues (${names[0]} .. ${names[names.length - 1]})`);
}

if (DURATION_S === 0 || RATE === 0) {
  process.stdout.write(JSON.stringify({ done: true, t: Date.now(), added: 0, completed: 0 }) + '\n');
  process.exit(0);
}

// ---- load -----------------------------------------------------------------------------------

const stats = { added: 0, completed: 0, failed: 0, progress: 0, inflight: 0, behind: 0 };
const perQueue = Object.fromEntries(mix.map((m) => [m.name, { added: 0, completed: 0, progress: 0 }]));

const queues = new Map(
  mix.map((m) => [m.name, new Queue(m.name, { connection, prefix, defaultJobOptions: jobOptions })]),
);
await Promise.all([...queues.values()].map((q) => q.waitUntilReady()));

const progressSteps = Array.from({ length: STEPS }, (_, i) => Math.round(((i + 1) * 100) / STEPS));

const workers = mix.map(
  (m) =>
    new Worker(
      m.name,
      async (job) => {
        for (const p of progressSteps) {
          if (STEP_MS > 0) await sleep(STEP_MS);
          await job.updateProgress(p);
          stats.progress += 1;
          perQueue[m.name].progress += 1;
        }
        return { ok: true, i: job.data.i };
      },
      { connection, prefix, concurrency: CONCURRENCY },
    ),
);
for (const [i, w] of workers.entries()) {
  const name = mix[i].name;
  w.on('completed', () => {
    stats.completed += 1;
    perQueue[name].completed += 1;
  });
  w.on('failed', () => {
    stats.failed += 1;
  });
  w.on('error', (err) => log(`worker ${name}: ${err.message}`));
}
await Promise.all(workers.map((w) => w.waitUntilReady()));

// Smooth weighted round robin: the same deterministic queue sequence every run.
const totalWeight = mix.reduce((s, m) => s + m.weight, 0);
const current = mix.map(() => 0);
function nextQueue() {
  let best = 0;
  for (let i = 0; i < mix.length; i += 1) {
    current[i] += mix[i].weight;
    if (current[i] > current[best]) best = i;
  }
  current[best] -= totalWeight;
  return mix[best].name;
}

let stopping = false;
let seq = 0;
const loadStart = Date.now();
let scheduled = 0; // jobs the schedule asked for so far

function produce() {
  if (stopping) return;
  const due = Math.floor(((Date.now() - loadStart) / 1000) * RATE);
  let n = due - scheduled;
  scheduled = due;
  const room = MAX_INFLIGHT_ADDS - stats.inflight;
  if (n > room) {
    stats.behind += n - room;
    n = Math.max(0, room);
  }
  for (let k = 0; k < n; k += 1) {
    const name = nextQueue();
    const i = seq;
    seq += 1;
    stats.inflight += 1;
    queues
      .get(name)
      .add('work', { i, user: `u${i % 997}` })
      .then(
        () => {
          stats.added += 1;
          perQueue[name].added += 1;
        },
        (err) => log(`add to ${name}: ${err.message}`),
      )
      .finally(() => {
        stats.inflight -= 1;
      });
  }
}

function emitStats(extra = {}) {
  process.stdout.write(
    JSON.stringify({
      t: Date.now(),
      elapsed: (Date.now() - loadStart) / 1000,
      ...stats,
      q: Object.fromEntries(
        Object.entries(perQueue).map(([name, c]) => [name, [c.added, c.completed, c.progress]]),
      ),
      ...extra,
    }) + '\n',
  );
}

const producer = setInterval(produce, TICK_MS);
const reporter = setInterval(() => emitStats(), STATS_MS);
log(
  `producing ${RATE} jobs/s for ${DURATION_S} s over ${mix.map((m) => `${m.name}:${m.weight}`).join(',')}; ` +
    `${STEPS} progress steps, ${STEP_MS} ms apart; concurrency ${CONCURRENCY} per queue`,
);

async function stop(reason) {
  if (stopping) return;
  stopping = true;
  clearInterval(producer);
  log(`stopping (${reason})`);
  // Give up on a clean close after a while: the benchmark must end.
  const hard = setTimeout(() => {
    log('close timed out; exiting');
    emitStats({ done: true, perQueue, closed: false });
    process.exit(0);
  }, 15_000);
  hard.unref();
  const waitInflight = Date.now() + 5_000;
  while (stats.inflight > 0 && Date.now() < waitInflight) await sleep(50);
  await Promise.allSettled(workers.map((w) => w.close()));
  clearInterval(reporter);
  emitStats({ done: true, perQueue, closed: true });
  await Promise.allSettled([...queues.values()].map((q) => q.close()));
  process.exit(0);
}

setTimeout(() => stop('duration reached'), DURATION_S * 1000);
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
