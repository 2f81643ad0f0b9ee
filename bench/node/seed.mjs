#!/usr/bin/env node
// Seeds Redis with BullMQ queues for the Bullpen benchmark.
//
//   node seed.mjs --redis redis://127.0.0.1:6379/0 --prefix bull --scale 1
//
// Queue bench-00 is the big one: scale x (1,000,000 waiting, 500,000 completed,
// 100,000 failed, 100,000 delayed). bench-01..bench-19 each get a small, fixed
// mix of jobs (a few hundred) in several states. Every job is written by BullMQ
// itself (Queue.addBulk, Worker), so the keys are exactly what a real
// application produces.
//
// Progress goes to stderr; a JSON summary (getJobCounts of every queue, and
// the time each phase took) goes to stdout.

import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';

const { values: args } = parseArgs({
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/0' },
    prefix: { type: 'string', default: 'bull' },
    scale: { type: 'string', default: '1' },
    queues: { type: 'string', default: '20' },
    // How completed/failed jobs are produced: 'worker' (a BullMQ Worker with
    // high concurrency) or 'manual' (Worker.getNextJob + moveToCompleted /
    // moveToFailed loops).
    mode: { type: 'string', default: 'worker' },
    concurrency: { type: 'string', default: '200' },
    chunk: { type: 'string', default: '2000' },
    inflight: { type: 'string', default: '4' },
    reset: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (args.help) {
  process.stderr.write(
    'usage: node seed.mjs [--redis URL] [--prefix bull] [--scale 1] [--queues 20]\n' +
      '                     [--mode worker|manual] [--concurrency 200] [--chunk 2000]\n' +
      '                     [--inflight 4] [--reset]\n' +
      '  --reset  obliterate existing bench-* queues first (otherwise a non-empty\n' +
      '           bench queue is an error)\n',
  );
  process.exit(0);
}

const SCALE = Number(args.scale);
const NQUEUES = Number.parseInt(args.queues, 10);
const CONCURRENCY = Number.parseInt(args.concurrency, 10);
const CHUNK = Number.parseInt(args.chunk, 10);
const INFLIGHT = Number.parseInt(args.inflight, 10);
if (!(SCALE > 0) || !(NQUEUES >= 1) || !(CONCURRENCY >= 1) || !(CHUNK >= 1) || !(INFLIGHT >= 1)) {
  process.stderr.write('seed: bad numeric argument\n');
  process.exit(2);
}
if (args.mode !== 'worker' && args.mode !== 'manual') {
  process.stderr.write('seed: --mode must be worker or manual\n');
  process.exit(2);
}

const connection = { url: args.redis, maxRetriesPerRequest: null };
const prefix = args.prefix;
const queueNames = Array.from({ length: NQUEUES }, (_, i) => `bench-${String(i).padStart(2, '0')}`);

const BIG = {
  waiting: Math.round(SCALE * 1_000_000),
  completed: Math.round(SCALE * 500_000),
  failed: Math.round(SCALE * 100_000),
  delayed: Math.round(SCALE * 100_000),
};

const t0 = Date.now();
const log = (msg) => process.stderr.write(`[seed ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);

// Small deterministic PRNG so every run seeds the same shapes.
function prng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

const JOB_NAMES = ['send-email', 'resize-image', 'charge-card', 'sync-crm', 'build-report'];
const DAY = 24 * 3600 * 1000;

function jobData(i) {
  return { i, user: 'u' + (i % 1000) };
}

// Errors are thrown from a couple of nested calls so the stored stacktrace
// looks like a real one.
class GatewayError extends Error {
  constructor(message) {
    super(message);
    this.name = 'GatewayError';
  }
}
function callGateway(job) {
  throw new GatewayError(`payment gateway timed out after 30000ms (job ${job.id}, user ${job.data.user})`);
}
function chargeCard(job) {
  return callGateway(job);
}
function makeError(job) {
  try {
    chargeCard(job);
  } catch (err) {
    return err;
  }
  return new Error('unreachable');
}

function shouldFail(job) {
  return job.data.fail === 1;
}
function returnValue(job) {
  return { ok: true, ref: `r-${job.id}`, ms: 5 + (job.data.i % 200) };
}

// Adds `count` jobs to `queue` with addBulk, `CHUNK` jobs per call and
// `INFLIGHT` calls in flight. `make(i)` returns {name, data, opts}.
async function addMany(queue, count, make, label) {
  let next = 0;
  let done = 0;
  let lastReport = Date.now();
  async function lane() {
    while (next < count) {
      const start = next;
      const end = Math.min(count, start + CHUNK);
      next = end;
      const batch = new Array(end - start);
      for (let i = start; i < end; i++) batch[i - start] = make(i);
      await queue.addBulk(batch);
      done += end - start;
      if (Date.now() - lastReport > 2000) {
        lastReport = Date.now();
        log(`${label}: ${done}/${count}`);
      }
    }
  }
  await Promise.all(Array.from({ length: INFLIGHT }, lane));
}

// Moves `total` waiting jobs of `queueName` to completed/failed
// (job.data.fail decides), using a BullMQ Worker with high concurrency.
async function processWithWorker(queueName, total, label, concurrency = CONCURRENCY) {
  if (total === 0) return;
  let finished = 0;
  let lastReport = Date.now();
  let resolveDone;
  const done = new Promise((r) => (resolveDone = r));
  const onFinished = () => {
    finished++;
    if (Date.now() - lastReport > 2000) {
      lastReport = Date.now();
      log(`${label}: ${finished}/${total}`);
    }
    if (finished >= total) resolveDone();
  };
  const worker = new Worker(
    queueName,
    async (job) => {
      if (shouldFail(job)) throw makeError(job);
      return returnValue(job);
    },
    {
      connection,
      prefix,
      concurrency,
      skipStalledCheck: true,
      skipLockRenewal: true,
      lockDuration: 10 * 60 * 1000,
      drainDelay: 1,
      autorun: false,
    },
  );
  worker.on('completed', onFinished);
  worker.on('failed', onFinished);
  worker.on('error', (err) => log(`worker error: ${err.message}`));
  worker.run();
  await done;
  await worker.close();
}

// Same, with the manual API: getNextJob + moveToCompleted/moveToFailed in
// `concurrency` parallel loops.
async function processManually(queueName, total, label, concurrency = CONCURRENCY) {
  if (total === 0) return;
  const worker = new Worker(queueName, null, {
    connection,
    prefix,
    skipStalledCheck: true,
    skipLockRenewal: true,
    lockDuration: 10 * 60 * 1000,
    autorun: false,
  });
  await worker.waitUntilReady();
  let claimed = 0;
  let finished = 0;
  let lastReport = Date.now();
  async function loop() {
    const token = randomUUID();
    while (claimed < total) {
      claimed++;
      const job = await worker.getNextJob(token, { block: false });
      if (!job) {
        claimed--;
        break;
      }
      if (shouldFail(job)) {
        await job.moveToFailed(makeError(job), token, false);
      } else {
        await job.moveToCompleted(returnValue(job), token, false);
      }
      finished++;
      if (Date.now() - lastReport > 2000) {
        lastReport = Date.now();
        log(`${label}: ${finished}/${total}`);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, loop));
  await worker.close();
  if (finished !== total) throw new Error(`${label}: finished ${finished} of ${total}`);
}

const processJobs = args.mode === 'manual' ? processManually : processWithWorker;

// Leaves `n` jobs in the active state (claimed, never finished), as a busy
// worker would.
async function leaveActive(queueName, n) {
  if (n === 0) return;
  const worker = new Worker(queueName, null, {
    connection,
    prefix,
    skipStalledCheck: true,
    skipLockRenewal: true,
    lockDuration: 10 * 60 * 1000,
    autorun: false,
  });
  const token = randomUUID();
  for (let k = 0; k < n; k++) {
    if (!(await worker.getNextJob(token, { block: false }))) break;
  }
  await worker.close();
}

// Interleaves exactly `failed` failing jobs evenly among `completed + failed`.
function finishedMaker(completed, failed, idBase) {
  const total = completed + failed;
  return (i) => {
    const fail = failed > 0 && Math.floor(((i + 1) * failed) / total) > Math.floor((i * failed) / total);
    const data = jobData(idBase + i);
    if (fail) data.fail = 1;
    return { name: JOB_NAMES[i % JOB_NAMES.length], data };
  };
}

async function seedBig(queue, timings) {
  const name = queue.name;
  let t = Date.now();
  const nFinished = BIG.completed + BIG.failed;
  log(`${name}: adding ${nFinished} jobs to be completed/failed`);
  await addMany(queue, nFinished, finishedMaker(BIG.completed, BIG.failed, 0), `${name} add (to finish)`);
  timings.big_add_to_finish = (Date.now() - t) / 1000;

  t = Date.now();
  log(`${name}: processing ${nFinished} jobs (${args.mode}, concurrency ${CONCURRENCY})`);
  await processJobs(name, nFinished, `${name} process`);
  timings.big_process = (Date.now() - t) / 1000;

  t = Date.now();
  log(`${name}: adding ${BIG.waiting} waiting jobs`);
  await addMany(
    queue,
    BIG.waiting,
    (i) => ({ name: JOB_NAMES[i % JOB_NAMES.length], data: jobData(nFinished + i) }),
    `${name} add waiting`,
  );
  timings.big_add_waiting = (Date.now() - t) / 1000;

  t = Date.now();
  log(`${name}: adding ${BIG.delayed} delayed jobs`);
  const base = nFinished + BIG.waiting;
  await addMany(
    queue,
    BIG.delayed,
    // 30..60 days out, so nothing gets promoted while benchmarking.
    (i) => ({
      name: JOB_NAMES[i % JOB_NAMES.length],
      data: jobData(base + i),
      opts: { delay: 30 * DAY + ((i * 2654435761) % (30 * DAY)) },
    }),
    `${name} add delayed`,
  );
  timings.big_add_delayed = (Date.now() - t) / 1000;
}

// A few hundred jobs in several states, different per queue.
async function seedSmall(queue, index) {
  const rnd = prng(0x9e3779b9 ^ (index * 7919));
  const pick = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const completed = pick(100, 600);
  const failed = pick(0, 60);
  const waiting = pick(0, 300);
  const delayed = pick(0, 40);
  const prioritized = index % 4 === 1 ? pick(5, 50) : 0;
  const active = index % 3 === 0 ? pick(1, 4) : 0;
  const name = queue.name;

  await addMany(queue, completed + failed, finishedMaker(completed, failed, 0), `${name} add`);
  await processJobs(name, completed + failed, `${name} process`, Math.min(CONCURRENCY, 50));
  await addMany(
    queue,
    waiting + active,
    (i) => ({ name: JOB_NAMES[(i + index) % JOB_NAMES.length], data: jobData(completed + failed + i) }),
    `${name} add waiting`,
  );
  await leaveActive(name, active);
  await addMany(
    queue,
    prioritized,
    (i) => ({ name: 'urgent-' + JOB_NAMES[i % JOB_NAMES.length], data: jobData(100000 + i), opts: { priority: 1 + (i % 5) } }),
    `${name} add prioritized`,
  );
  await addMany(
    queue,
    delayed,
    (i) => ({ name: JOB_NAMES[i % JOB_NAMES.length], data: jobData(200000 + i), opts: { delay: 30 * DAY + i * 60000 } }),
    `${name} add delayed`,
  );
  if (index === NQUEUES - 1 && NQUEUES > 1) await queue.pause();
}

async function main() {
  const queues = queueNames.map((name) => new Queue(name, { connection, prefix }));
  await Promise.all(queues.map((q) => q.waitUntilReady()));
  log(`redis ${args.redis.replace(/\/\/[^@]*@/, '//***@')}, prefix ${prefix}, scale ${SCALE}, ${NQUEUES} queues`);

  const existing = await Promise.all(queues.map((q) => q.getJobCounts()));
  const nonEmpty = queues.filter((q, k) => Object.values(existing[k]).some((n) => n > 0));
  if (nonEmpty.length > 0) {
    if (!args.reset) {
      log(`queues already hold jobs (${nonEmpty.map((q) => q.name).join(', ')}); pass --reset to wipe them`);
      await Promise.all(queues.map((q) => q.close()));
      process.exit(1);
    }
    for (const q of nonEmpty) {
      log(`obliterating ${q.name}`);
      await q.obliterate({ force: true });
    }
  }
  for (const q of queues) {
    if (await q.isPaused()) await q.resume();
  }

  const timings = {};
  let t = Date.now();
  await seedBig(queues[0], timings);
  t = Date.now();
  for (let k = 1; k < queues.length; k++) {
    await seedSmall(queues[k], k);
  }
  timings.small_queues = (Date.now() - t) / 1000;
  log(`small queues done`);

  const counts = {};
  for (const q of queues) counts[q.name] = await q.getJobCounts();
  timings.total = (Date.now() - t0) / 1000;
  const summary = {
    redis: args.redis.replace(/\/\/[^@]*@/, '//***@'),
    prefix,
    scale: SCALE,
    mode: args.mode,
    concurrency: CONCURRENCY,
    queues: counts,
    seconds: timings,
  };
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  log(`done in ${timings.total.toFixed(1)}s`);
  await Promise.all(queues.map((q) => q.close()));
}

main().catch((err) => {
  process.stderr.write(`seed failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
