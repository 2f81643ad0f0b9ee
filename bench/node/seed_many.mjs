#!/usr/bin/env node
// Seeds Redis with many small BullMQ queues, one per tenant and service, as a
// multi-tenant application keeps them: t0001-mail, t0001-billing, ...,
// t0002-mail, ... (the "-" groups them by tenant).
//
//   node seed_many.mjs --redis redis://127.0.0.1:6379/0 --prefix bull --queues 1000
//
// Every queue gets a few jobs in varied states, written by BullMQ itself
// (Queue.addBulk; completed and failed ones through a Worker's
// getNextJob + moveToCompleted / moveToFailed): most queues hold a few
// waiting and a few completed jobs, about one in ten a few failed ones, one in
// a hundred many failed ones, one in seven a few delayed ones (due 30+ days
// out, so nothing moves while a benchmark runs), one in eleven a prioritized
// job, and one in two hundred is paused. The shapes come from a seeded PRNG, so
// every run with the same --queues writes the same data.
//
// Progress goes to stderr; a JSON summary (totals per state, the paused and
// the problem queues, seconds per phase) goes to stdout. --names-out FILE
// writes the queue names, one a line (bullboard.mjs --names-file reads it).

import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import IORedis from 'ioredis';
import { Queue, Worker } from 'bullmq';

const { values: args } = parseArgs({
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/0' },
    prefix: { type: 'string', default: 'bull' },
    queues: { type: 'string', default: '1000' },
    services: { type: 'string', default: 'mail,billing,reports,webhooks,sync' },
    'tenant-prefix': { type: 'string', default: 't' },
    inflight: { type: 'string', default: '48' },
    // Creating a Worker (a connection of its own, the scripts registered on it)
    // costs Node more CPU than Redis spends on the jobs: several processes share it.
    procs: { type: 'string', default: '2' },
    shard: { type: 'string' },
    'names-out': { type: 'string' },
    reset: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (args.help) {
  process.stderr.write(
    'usage: node seed_many.mjs [--redis URL] [--prefix bull] [--queues 1000]\n' +
      '                          [--services mail,billing,reports,webhooks,sync] [--tenant-prefix t]\n' +
      '                          [--inflight 48] [--procs 2] [--names-out FILE] [--reset]\n' +
      '  --reset  delete every key of existing tenant queues (<prefix>:<tenant-prefix><digits>-*)\n' +
      '           first; otherwise existing tenant queues are an error\n',
  );
  process.exit(0);
}

const NQUEUES = Number.parseInt(args.queues, 10);
const INFLIGHT = Number.parseInt(args.inflight, 10);
const PROCS = Number.parseInt(args.procs, 10);
// A child seeds the queues whose index is `shard.k` modulo `shard.n`.
const shard = args.shard ? args.shard.split('/').map((v) => Number.parseInt(v, 10)) : null;
const SERVICES = args.services.split(',').filter(Boolean);
const TENANT_PREFIX = args['tenant-prefix'];
const badShard = shard && !(shard.length === 2 && shard[1] >= 1 && shard[0] >= 0 && shard[0] < shard[1]);
if (!(NQUEUES >= 1) || !(INFLIGHT >= 1) || !(PROCS >= 1) || badShard || SERVICES.length === 0) {
  process.stderr.write('seed_many: bad argument\n');
  process.exit(2);
}
if (!/^[A-Za-z]+$/.test(TENANT_PREFIX) || SERVICES.some((s) => !/^[a-z][a-z0-9_]*$/.test(s))) {
  process.stderr.write('seed_many: tenant prefix must be letters, services lowercase words\n');
  process.exit(2);
}

const prefix = args.prefix;
const redactedUrl = args.redis.replace(/\/\/[^@]*@/, '//***@');
const nTenants = Math.ceil(NQUEUES / SERVICES.length);
const pad = Math.max(4, String(nTenants).length);
const queueName = (i) =>
  `${TENANT_PREFIX}${String(Math.floor(i / SERVICES.length) + 1).padStart(pad, '0')}-${SERVICES[i % SERVICES.length]}`;
// Every key of a tenant queue: <prefix>:t<digits>-<service>:...
const keyPattern = `${prefix}:${TENANT_PREFIX}[0-9]*-*`;

const t0 = Date.now();
const log = (msg) => process.stderr.write(`[seed_many ${((Date.now() - t0) / 1000).toFixed(1).padStart(6)}s] ${msg}\n`);

// One connection for every Queue, and for the Workers' non-blocking commands:
// thousands of queues must not mean thousands of connections.
const connection = new IORedis(args.redis, { maxRetriesPerRequest: null });

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

const DAY = 24 * 3600 * 1000;
const JOB_NAMES = {
  mail: ['send-welcome', 'send-invoice', 'send-digest'],
  billing: ['charge-card', 'refund', 'issue-invoice'],
  reports: ['build-report', 'export-csv'],
  webhooks: ['deliver-webhook'],
  sync: ['sync-crm', 'sync-calendar'],
};
const jobNamesOf = (service) => JOB_NAMES[service] || ['run'];

// Errors are thrown from a couple of nested calls so the stored stacktrace
// looks like a real one.
class UpstreamError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UpstreamError';
  }
}
function callUpstream(queue, i) {
  throw new UpstreamError(`upstream answered 503 for ${queue} job ${i}`);
}
function makeError(queue, i) {
  try {
    callUpstream(queue, i);
  } catch (err) {
    return err;
  }
  return new Error('unreachable');
}

// The jobs of queue number `index`.
function shapeOf(index) {
  const rnd = prng(0x9e3779b9 ^ Math.imul(index + 1, 7919));
  const pick = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  // Moduli prime to the number of services, so every service gets its share.
  const manyFailed = index % 97 === 37;
  return {
    waiting: pick(0, 5),
    completed: pick(1, 4),
    failed: manyFailed ? pick(40, 120) : rnd() < 0.1 ? pick(1, 3) : 0,
    delayed: index % 7 === 3 ? pick(1, 3) : 0,
    prioritized: index % 11 === 5 ? pick(1, 2) : 0,
    paused: index % 199 === 57,
  };
}

const workerOpts = {
  connection,
  prefix,
  autorun: false,
  skipStalledCheck: true,
  skipLockRenewal: true,
  lockDuration: 10 * 60 * 1000,
};

// Runs `finishers` waiting jobs of the queue to completed or failed
// (job.data.fail decides), one after the other, as a worker would.
async function finish(name, finishers) {
  const worker = new Worker(name, null, workerOpts);
  worker.on('error', (err) => log(`${name}: worker error: ${err.message}`));
  const token = randomUUID();
  let done = 0;
  try {
    for (let k = 0; k < finishers; k++) {
      const job = await worker.getNextJob(token, { block: false });
      if (!job) break;
      if (job.data.fail) {
        await job.moveToFailed(makeError(name, job.data.i), token, false);
      } else {
        await job.moveToCompleted({ ok: true, ms: 3 + (job.data.i % 50) }, token, false);
      }
      done++;
    }
  } finally {
    await worker.close();
  }
  if (done !== finishers) throw new Error(`${name}: finished ${done} of ${finishers} jobs`);
}

async function seedQueue(index) {
  const name = queueName(index);
  const service = SERVICES[index % SERVICES.length];
  const names = jobNamesOf(service);
  const shape = shapeOf(index);
  const queue = new Queue(name, { connection, prefix });
  try {
    const finishers = shape.completed + shape.failed;
    // The failing jobs are spread among the others, as they happen.
    const toFinish = Array.from({ length: finishers }, (_, i) => ({
      name: names[i % names.length],
      data: { i, tenant: name.split('-')[0], fail: (i * shape.failed) % finishers < shape.failed ? 1 : 0 },
    }));
    if (finishers > 0) {
      await queue.addBulk(toFinish);
      await finish(name, finishers);
    }
    let i = finishers;
    const later = [];
    for (let k = 0; k < shape.waiting; k++, i++) later.push({ name: names[i % names.length], data: { i } });
    for (let k = 0; k < shape.delayed; k++, i++) {
      later.push({ name: names[i % names.length], data: { i }, opts: { delay: 30 * DAY + k * 60000 } });
    }
    for (let k = 0; k < shape.prioritized; k++, i++) {
      later.push({ name: names[i % names.length], data: { i }, opts: { priority: 1 + k } });
    }
    if (later.length > 0) await queue.addBulk(later);
    if (shape.paused) await queue.pause();
  } finally {
    await queue.close();
  }
}

// Deletes every key of the tenant queues; BullMQ's obliterate would take one
// Queue and several round trips per queue.
async function wipe() {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await connection.scan(cursor, 'MATCH', keyPattern, 'COUNT', 5000);
    cursor = next;
    if (keys.length > 0) deleted += await connection.unlink(...keys);
  } while (cursor !== '0');
  return deleted;
}

async function anyTenantKey() {
  let cursor = '0';
  do {
    const [next, keys] = await connection.scan(cursor, 'MATCH', keyPattern, 'COUNT', 5000);
    if (keys.length > 0) return keys[0];
    cursor = next;
  } while (cursor !== '0');
  return null;
}

// Seeds the queues whose index is `k` modulo `n`, `INFLIGHT` at a time.
async function seedShard(k, n) {
  const total = Math.ceil((NQUEUES - k) / n);
  let next = k;
  let seeded = 0;
  let lastReport = Date.now();
  async function lane() {
    while (next < NQUEUES) {
      const index = next;
      next += n;
      await seedQueue(index);
      seeded++;
      if (Date.now() - lastReport > 2000) {
        lastReport = Date.now();
        log(`${n > 1 ? `shard ${k}/${n}: ` : ''}${seeded}/${total} queues`);
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(INFLIGHT, total) }, lane));
}

// Runs `n` copies of this script, each on its shard, and waits for all of them.
async function seedInChildren(n) {
  const self = fileURLToPath(import.meta.url);
  const passOn = ['--redis', args.redis, '--prefix', prefix, '--queues', String(NQUEUES)];
  passOn.push('--services', SERVICES.join(','), '--tenant-prefix', TENANT_PREFIX, '--inflight', String(INFLIGHT));
  const children = Array.from({ length: n }, (_, k) =>
    spawn(process.execPath, [self, ...passOn, '--shard', `${k}/${n}`], { stdio: ['ignore', 'ignore', 'inherit'] }),
  );
  const codes = await Promise.all(children.map((child) => new Promise((resolve) => child.on('close', resolve))));
  if (codes.some((code) => code !== 0)) throw new Error(`a seeding process failed (exit codes ${codes.join(', ')})`);
}

// What Redis holds afterwards, summed over the queues, one pipeline.
async function countInRedis(names) {
  const pipeline = connection.pipeline();
  for (const name of names) {
    const key = (suffix) => `${prefix}:${name}:${suffix}`;
    pipeline.llen(key('wait'));
    pipeline.zcard(key('completed'));
    pipeline.zcard(key('failed'));
    pipeline.zcard(key('delayed'));
    pipeline.zcard(key('prioritized'));
    pipeline.hexists(key('meta'), 'paused');
  }
  const replies = await pipeline.exec();
  const fields = ['waiting', 'completed', 'failed', 'delayed', 'prioritized', 'paused'];
  const counts = Object.fromEntries(fields.map((f) => [f, 0]));
  replies.forEach(([err, value], i) => {
    if (err) throw err;
    counts[fields[i % fields.length]] += Number(value);
  });
  return counts;
}

async function main() {
  if (shard) {
    await seedShard(shard[0], shard[1]);
    await connection.quit();
    return;
  }
  log(`redis ${redactedUrl}, prefix ${prefix}, ${NQUEUES} queues (${nTenants} tenants x ${SERVICES.join('/')})`);
  const seconds = {};
  let t = Date.now();
  const existing = await anyTenantKey();
  if (existing) {
    if (!args.reset) {
      log(`tenant queues exist already (${existing}); pass --reset to wipe them`);
      connection.disconnect();
      process.exit(1);
    }
    const deleted = await wipe();
    log(`wiped ${deleted} keys of existing tenant queues`);
  }
  seconds.reset = (Date.now() - t) / 1000;

  t = Date.now();
  const procs = Math.min(PROCS, NQUEUES);
  if (procs > 1) await seedInChildren(procs);
  else await seedShard(0, 1);
  seconds.seed = (Date.now() - t) / 1000;

  const names = Array.from({ length: NQUEUES }, (_, i) => queueName(i));
  const shapes = names.map((_, i) => shapeOf(i));
  const planned = { waiting: 0, completed: 0, failed: 0, delayed: 0, prioritized: 0, paused: 0 };
  for (const shape of shapes) {
    for (const field of Object.keys(planned)) planned[field] += Number(shape[field]);
  }
  t = Date.now();
  const found = await countInRedis(names);
  seconds.check = (Date.now() - t) / 1000;
  const mismatched = Object.keys(planned).filter((field) => planned[field] !== found[field]);
  if (args['names-out']) writeFileSync(args['names-out'], names.join('\n') + '\n');
  seconds.total = (Date.now() - t0) / 1000;
  const summary = {
    redis: redactedUrl,
    prefix,
    queues: NQUEUES,
    tenants: nTenants,
    services: SERVICES,
    first: names[0],
    last: names[names.length - 1],
    jobs: found,
    queues_with_failed: shapes.filter((s) => s.failed > 0).length,
    paused: names.filter((_, i) => shapes[i].paused),
    many_failed: names.filter((_, i) => shapes[i].failed >= 10),
    procs,
    seconds,
  };
  process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  await connection.quit();
  if (mismatched.length > 0) {
    log(`Redis holds other counts than planned: ${mismatched.map((f) => `${f} ${found[f]} != ${planned[f]}`).join(', ')}`);
    process.exit(1);
  }
  log(`done in ${seconds.total.toFixed(1)}s`);
}

main().catch((err) => {
  process.stderr.write(`seed_many failed: ${err && err.stack ? err.stack : err}\n`);
  process.exit(1);
});
