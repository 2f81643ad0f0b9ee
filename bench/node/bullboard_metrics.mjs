#!/usr/bin/env node
// The Node side of bench/history/bullboard_compare.py: real BullMQ workers over
// jobs of known run times, and Bull Board's metrics recorder (@bull-board/metrics,
// built outside this repository: see bench/README.md) recording them at the same
// time as Bullpen, on the same Redis.
//
//   BULL_BOARD_METRICS_DIR=/tmp/bb-metrics/packages/metrics \
//     node bullboard_metrics.mjs --redis redis://127.0.0.1:6379/0 --queue cmp
//
// It reads one command a line on stdin and answers each with one JSON line on
// stdout (diagnostics go to stderr):
//
//   load SECONDS RATE   bursts of jobs (names send/resize/render, run times drawn
//                       from skewed distributions, a few failing) for SECONDS at
//                       RATE jobs/s on average, worked by Node BullMQ workers with
//                       native metrics on; answers once every job has finished
//   one                 one more job, worked to its end
//   backlog N           N jobs left waiting (no worker)
//   tick AFTER_MS       waits for the end of the first recorder tick that starts
//                       at or after AFTER_MS (epoch ms)
//   read FROM_MS        what Bull Board's provider answers from FROM_MS to now
//   steady QUEUE N      writes, through the recorder's own stores, what it keeps
//                       of a queue that finished N jobs every minute (2 % failed)
//                       for 90 days, at its default retention (below)
//   quit
//
// The recorder runs with its defaults (a tick every 60 s, latency sampling on,
// 5 s safety margin), as an application would run it.

import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import IORedis from 'ioredis';
import { MetricsTime, Queue, Worker } from 'bullmq';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';

console.log = console.error;
console.info = console.error;

const { values: args } = parseArgs({
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/0' },
    queue: { type: 'string', default: 'cmp' },
    prefix: { type: 'string', default: 'bull' },
    concurrency: { type: 'string', default: '8' },
    seed: { type: 'string', default: '7' },
  },
});

const dir = process.env.BULL_BOARD_METRICS_DIR;
if (!dir) {
  process.stderr.write('BULL_BOARD_METRICS_DIR is not set (see bench/README.md)\n');
  process.exit(2);
}
const require = createRequire(import.meta.url);
const { MetricsRecorder, RedisMetricsHistoryProvider } = require(join(dir, 'dist', 'index.js'));
const { HistoryStore } = require(join(dir, 'dist', 'HistoryStore.js'));
const { LatencyStore } = require(join(dir, 'dist', 'LatencyStore.js'));
const { DEFAULT_RETENTION } = require(join(dir, 'dist', 'MetricsRecorder.js'));
const { bucketIndex, emptyVector } = require(join(dir, 'dist', 'histogram.js'));

function answer(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

// A seeded PRNG, so that the same seed always draws the same jobs.
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = mulberry32(Number(args.seed));
function lognormal(median, sigma) {
  const u = 1 - random();
  const v = random();
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  return median * Math.exp(sigma * z);
}

// Job names with their share, run-time median (ms), spread and failure rate: a
// fast common job, a slower one, and a rare slow one whose tail is the p99's.
const KINDS = [
  { name: 'send', share: 0.55, median: 15, sigma: 0.6, fail: 0.06 },
  { name: 'resize', share: 0.35, median: 70, sigma: 0.7, fail: 0.02 },
  { name: 'render', share: 0.1, median: 350, sigma: 0.5, fail: 0.04 },
];
function drawJob() {
  let pick = random();
  let kind = KINDS[KINDS.length - 1];
  for (const each of KINDS) {
    if (pick < each.share) {
      kind = each;
      break;
    }
    pick -= each.share;
  }
  return {
    name: kind.name,
    data: { ms: Math.round(lognormal(kind.median, kind.sigma)), fail: random() < kind.fail },
  };
}

const url = new URL(args.redis);
const redisOptions = {
  host: url.hostname,
  port: Number(url.port || 6379),
  db: Number(url.pathname.slice(1) || 0),
};
const load = new IORedis({ ...redisOptions, maxRetriesPerRequest: null, connectionName: 'load' });
const producer = new Queue(args.queue, { connection: load, prefix: args.prefix });

// Bull Board's side: its own Queue (what the board's adapter reads metrics
// through) and the recorder's and provider's own connections, each named, so
// that the bench can tell their commands from everyone else's.
const boardConnection = new IORedis({
  ...redisOptions,
  maxRetriesPerRequest: null,
  connectionName: 'bb-queue',
});
const boardQueue = new Queue(args.queue, { connection: boardConnection, prefix: args.prefix });
const adapter = new BullMQAdapter(boardQueue, { readOnlyMode: true });
const recorder = new MetricsRecorder({
  queues: [adapter],
  connection: { ...redisOptions, connectionName: 'bb-recorder' },
});
const provider = new RedisMetricsHistoryProvider({
  connection: { ...redisOptions, connectionName: 'bb-reader' },
});

// Ticks as they end: the bench waits for the first one after a given moment.
const ticks = [];
const tickWaiters = [];
const snapshot = recorder.snapshot.bind(recorder);
recorder.snapshot = async () => {
  const started = Date.now();
  await snapshot();
  ticks.push({ started, ended: Date.now() });
  for (const waiter of tickWaiters.splice(0)) {
    waiter();
  }
};
async function tickAfter(afterMs) {
  for (;;) {
    const found = ticks.find((tick) => tick.started >= afterMs);
    if (found) {
      return found;
    }
    await new Promise((resolve) => tickWaiters.push(resolve));
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function startWorker() {
  return new Worker(
    args.queue,
    async (job) => {
      await sleep(job.data.ms);
      if (job.data.fail) {
        throw new Error('failed on purpose');
      }
      return null;
    },
    {
      connection: load,
      prefix: args.prefix,
      concurrency: Number(args.concurrency),
      // Bull Board's recorder copies BullMQ's per-minute counts: the workers must keep them.
      metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
    }
  );
}

async function finished() {
  const counts = await producer.getJobCounts('completed', 'failed');
  return counts.completed + counts.failed;
}

async function waitFinished(total) {
  while ((await finished()) < total) {
    await sleep(100);
  }
}

let added = 0;

// Bursts: every 2 s a burst of jobs at the average rate, and every 30 s one six
// times as large, so that waits are mostly short with a long tail.
async function runLoad(seconds, rate) {
  const worker = startWorker();
  await worker.waitUntilReady();
  const started = Date.now();
  for (let burst = 0; Date.now() - started < seconds * 1000; burst += 1) {
    const size = Math.round(rate * 2 * (burst % 15 === 14 ? 6 : 1));
    const jobs = Array.from({ length: size }, drawJob).map((job) => ({
      ...job,
      opts: { attempts: 1 },
    }));
    await producer.addBulk(jobs);
    added += jobs.length;
    const next = started + (burst + 1) * 2000;
    await sleep(Math.max(0, next - Date.now()));
  }
  await waitFinished(added);
  await worker.close();
  return { added, finishedAt: Date.now(), loadStarted: started };
}

async function runOne() {
  const worker = startWorker();
  await producer.add('send', { ms: 5, fail: false });
  added += 1;
  await waitFinished(added);
  await worker.close();
  return { added, finishedAt: Date.now() };
}

async function backlog(count) {
  const jobs = Array.from({ length: count }, () => ({ name: 'send', data: { ms: 5, fail: false } }));
  const made = await producer.addBulk(jobs);
  return { ids: made.map((job) => job.id), addedAt: Date.now() };
}

async function read(fromMs) {
  const to = Date.now();
  const queue = adapter.getName();
  const history = {};
  for (const metric of ['completed', 'failed', 'queueage']) {
    history[metric] = await provider.getHistory({
      queue,
      metric,
      from: fromMs,
      to,
      granularity: 'hour',
    });
  }
  const latency = {};
  for (const metric of ['waittime', 'runtime']) {
    latency[metric] = {
      range: await provider.getLatency({
        queue,
        metric,
        from: fromMs,
        to,
        granularity: 'range',
        percentiles: [50, 95, 99],
      }),
      hour: await provider.getLatency({
        queue,
        metric,
        from: fromMs,
        to,
        granularity: 'hour',
        percentiles: [50, 95, 99],
      }),
    };
  }
  const usage = await provider.getUsage();
  return { queue, to, history, latency, usage };
}

// Bull Board's storage of a queue busy every minute for 90 days, written through
// its own stores as its recorder writes it: every minute of the minute tier's 7
// days; before that one write an hour (what the hour and day tiers keep of it),
// whose minute hashes are then deleted, as their 7-day TTL would have; latency
// vectors of log-normal waits and runs and the queue-age gauge every hour.
async function steady(queue, perMinute) {
  const redis = new IORedis({ ...redisOptions, connectionName: 'bb-steady' });
  const retention = DEFAULT_RETENTION;
  const history = new HistoryStore({ redis, retention });
  const latency = new LatencyStore({ redis, retention });
  const nowMinute = Math.floor(Date.now() / 60000);
  const failed = Math.max(1, Math.round(perMinute * 0.02));
  const writes = [];
  for (let minute = nowMinute - retention.minutes * 1440; minute < nowMinute; minute += 1) {
    writes.push(() => history.upsertMinute(queue, 'completed', minute, perMinute));
    writes.push(() => history.upsertMinute(queue, 'failed', minute, failed));
  }
  const firstHour = Math.floor(nowMinute / 60) - retention.hours * 24;
  const minuteTierFrom = Math.floor((nowMinute - retention.minutes * 1440) / 60);
  const olderDays = new Set();
  for (let hour = firstHour; hour < minuteTierFrom; hour += 1) {
    writes.push(() => history.upsertMinute(queue, 'completed', hour * 60, perMinute * 60));
    writes.push(() => history.upsertMinute(queue, 'failed', hour * 60, failed * 60));
    olderDays.add(new Date(hour * 3600000).toISOString().slice(0, 10));
  }
  for (let hour = firstHour; hour < Math.floor(nowMinute / 60); hour += 1) {
    const wait = emptyVector();
    const run = emptyVector();
    for (let job = 0; job < perMinute * 60; job += 1) {
      wait[bucketIndex(lognormal(400, 1.2))] += 1;
      run[bucketIndex(lognormal(40, 1.0))] += 1;
    }
    writes.push(() => latency.addSamples(queue, 'waittime', hour, wait));
    writes.push(() => latency.addSamples(queue, 'runtime', hour, run));
    writes.push(() => latency.recordQueueAge(queue, hour, Math.round(lognormal(2000, 1))));
  }
  for (let i = 0; i < writes.length; i += 200) {
    await Promise.all(writes.slice(i, i + 200).map((write) => write()));
  }
  const minuteKeyDays = new Date((nowMinute - retention.minutes * 1440) * 60000)
    .toISOString()
    .slice(0, 10);
  const expired = [...olderDays].filter((day) => day < minuteKeyDays);
  for (const day of expired) {
    await redis.del(
      `bull-board:metrics:${queue}:completed:${day}`,
      `bull-board:metrics:${queue}:failed:${day}`
    );
  }
  await redis.quit();
  return { writes: writes.length, expiredMinuteDays: expired.length };
}

// The local ports of Bull Board's connections: how the bench tells them apart
// even if BullMQ renames one.
async function boardPorts() {
  await boardConnection.ping();
  await recorder.redis.ping();
  await provider.redis.ping();
  return {
    'bb-queue': boardConnection.stream?.localPort ?? null,
    'bb-recorder': recorder.redis.stream?.localPort ?? null,
    'bb-reader': provider.redis.stream?.localPort ?? null,
  };
}

async function main() {
  await producer.waitUntilReady();
  await boardQueue.waitUntilReady();
  recorder.start();
  await tickAfter(0);
  answer({ ready: true, ports: await boardPorts(), queue: adapter.getName() });
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    const [command, ...rest] = line.trim().split(/\s+/);
    try {
      if (command === 'load') {
        answer(await runLoad(Number(rest[0]), Number(rest[1])));
      } else if (command === 'one') {
        answer(await runOne());
      } else if (command === 'backlog') {
        answer(await backlog(Number(rest[0])));
      } else if (command === 'tick') {
        answer(await tickAfter(Number(rest[0])));
      } else if (command === 'read') {
        answer(await read(Number(rest[0])));
      } else if (command === 'steady') {
        answer(await steady(rest[0], Number(rest[1])));
      } else if (command === 'quit') {
        break;
      } else {
        answer({ error: `unknown command ${command}` });
      }
    } catch (error) {
      answer({ error: String(error?.stack ?? error) });
    }
  }
  recorder.stop();
  provider.disconnect();
  await producer.close();
  await boardQueue.close();
  await load.quit();
  await boardConnection.quit();
  answer({ bye: true });
  // Node would stay for stdin and BullMQ's timers otherwise.
  process.exit(0);
}

main().catch((error) => {
  process.stderr.write(`${error?.stack ?? error}\n`);
  process.exit(1);
});
