#!/usr/bin/env node
// Fills the failed set of one BullMQ queue, for the retry-all benchmark.
//
//   node seed_failed.mjs --redis redis://127.0.0.1:6379/0 --prefix bull --queue bench-19 --count 100000
//
// Every job is written by BullMQ itself: Queue.addBulk in chunks (several in
// flight), then a Worker with high concurrency whose processor throws an
// Error from two calls deep (attempts 1, so each job fails once and stays in
// the failed set with a real stacktrace, as in an application).
//
// Progress goes to stderr; a JSON summary (the queue's job counts and the time
// each phase took) goes to stdout. The queue must be empty unless --reset is
// given, which obliterates it first.

import { parseArgs } from 'node:util';
import { Queue, Worker } from 'bullmq';

const { values: args } = parseArgs({
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/0' },
    prefix: { type: 'string', default: 'bull' },
    queue: { type: 'string', default: 'bench-19' },
    count: { type: 'string', default: '100000' },
    concurrency: { type: 'string', default: '200' },
    chunk: { type: 'string', default: '2000' },
    inflight: { type: 'string', default: '4' },
    // Seconds before giving up (exit status 1), so a stuck run never hangs.
    timeout: { type: 'string', default: '900' },
    reset: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (args.help) {
  process.stderr.write(
    'usage: node seed_failed.mjs [--redis URL] [--prefix bull] [--queue bench-19] [--count 100000]\n' +
      '                            [--concurrency 200] [--chunk 2000] [--inflight 4]\n' +
      '                            [--timeout 900] [--reset]\n' +
      '  --reset  obliterate the queue first (otherwise a non-empty queue is an error)\n',
  );
  process.exit(0);
}

const COUNT = Number.parseInt(args.count, 10);
const CONCURRENCY = Number.parseInt(args.concurrency, 10);
const CHUNK = Number.parseInt(args.chunk, 10);
const INFLIGHT = Number.parseInt(args.inflight, 10);
const TIMEOUT_S = Number(args.timeout);
if (!(COUNT >= 1) || !(CONCURRENCY >= 1) || !(CHUNK >= 1) || !(INFLIGHT >= 1) || !(TIMEOUT_S > 0)) {
  process.stderr.write('seed_failed: bad numeric argument\n');
  process.exit(2);
}

const connection = { url: args.redis, maxRetriesPerRequest: null };
const prefix = args.prefix;
const queueName = args.queue;

const t0 = Date.now();
const log = (msg) =>
  process.stderr.write(`[seed-failed ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);

const watchdog = setTimeout(() => {
  log(`gave up after ${TIMEOUT_S} s`);
  process.exit(1);
}, TIMEOUT_S * 1000);
watchdog.unref();

// The error is thrown two calls deep so its stored stacktrace looks like an
// application's.
class UpstreamError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UpstreamError';
  }
}
function callUpstream(job) {
  throw new UpstreamError(`upstream answered 503 after 30000ms (job ${job.id}, user ${job.data.user})`);
}
function deliver(job) {
  return callUpstream(job);
}

const queue = new Queue(queueName, { connection, prefix });
await queue.waitUntilReady();

const before = await queue.getJobCounts();
const present = Object.values(before).reduce((a, b) => a + b, 0);
if (present > 0) {
  if (!args.reset) {
    log(`queue ${queueName} is not empty (${JSON.stringify(before)}); use --reset to wipe it`);
    process.exit(2);
  }
  log(`obliterating ${queueName}`);
  await queue.obliterate({ force: true });
}

// 1. Add the jobs, CHUNK per addBulk call, INFLIGHT calls in flight.
const tAdd = Date.now();
let next = 0;
let added = 0;
let lastReport = Date.now();
async function lane() {
  while (next < COUNT) {
    const start = next;
    const end = Math.min(COUNT, start + CHUNK);
    next = end;
    const batch = new Array(end - start);
    for (let i = start; i < end; i++) {
      batch[i - start] = {
        name: 'deliver-webhook',
        data: { i, user: 'u' + (i % 1000) },
        opts: { attempts: 1, removeOnComplete: false, removeOnFail: false },
      };
    }
    await queue.addBulk(batch);
    added += end - start;
    if (Date.now() - lastReport > 2000) {
      lastReport = Date.now();
      log(`added ${added}/${COUNT}`);
    }
  }
}
await Promise.all(Array.from({ length: INFLIGHT }, lane));
const addS = (Date.now() - tAdd) / 1000;
log(`added ${COUNT} jobs in ${addS.toFixed(1)} s`);

// 2. Run them through a Worker whose processor always throws.
const tFail = Date.now();
let failed = 0;
let unexpected = 0;
let resolveDone;
const allFailed = new Promise((resolve) => (resolveDone = resolve));
const worker = new Worker(
  queueName,
  async (job) => {
    deliver(job);
  },
  {
    connection,
    prefix,
    concurrency: CONCURRENCY,
    skipStalledCheck: true,
    skipLockRenewal: true,
    lockDuration: 10 * 60 * 1000,
    drainDelay: 1,
    autorun: false,
  },
);
const onFinished = () => {
  if (failed + unexpected >= COUNT) resolveDone();
  if (Date.now() - lastReport > 2000) {
    lastReport = Date.now();
    log(`failed ${failed}/${COUNT}`);
  }
};
worker.on('failed', () => {
  failed++;
  onFinished();
});
worker.on('completed', () => {
  unexpected++;
  onFinished();
});
worker.on('error', (err) => log(`worker error: ${err.message}`));
worker.run();
await allFailed;
await worker.close();
const failS = (Date.now() - tFail) / 1000;
log(`${failed} jobs failed in ${failS.toFixed(1)} s`);

const counts = await queue.getJobCounts();
await queue.close();

const summary = {
  queue: queueName,
  prefix,
  requested: COUNT,
  counts,
  seconds: {
    add: Number(addS.toFixed(2)),
    fail: Number(failS.toFixed(2)),
    total: Number(((Date.now() - t0) / 1000).toFixed(2)),
  },
  options: { concurrency: CONCURRENCY, chunk: CHUNK, inflight: INFLIGHT },
};
process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
clearTimeout(watchdog);
process.exit(counts.failed === COUNT && unexpected === 0 ? 0 : 1);
