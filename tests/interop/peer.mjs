#!/usr/bin/env node
// Bullpen interop peer: a small CLI around the real BullMQ (Node.js) library.
//
// The Bullpen test-suite uses it to put real BullMQ data into a Redis server
// and to read it back through BullMQ's own API, so that Bullpen's Python
// reader can be checked against the reference implementation.
//
// Every subcommand prints exactly ONE JSON document on stdout and nothing
// else; diagnostics go to stderr. The exit code is non-zero on error (and the
// error is then printed to stderr, with nothing on stdout).
//
// Usage:
//   node peer.mjs <subcommand> [--redis redis://127.0.0.1:6379/0] [--prefix bull] ...
//   node peer.mjs <subcommand> --postgres postgresql://user@host:port/db ...
//
// With --postgres the queues live in BullMQ 6's PostgreSQL store (schema `bullmq`,
// migrated on first use as `migrate: true` does); subcommands that read Redis keys
// directly (many-queues, stall, limits...) are for Redis only.
//
//   scenario        --queue Q
//   inspect         --queue Q [--ids a,b,c] [--asc]
//   add             --queue Q --name N --data JSON [--opts JSON]
//   add-bulk        --queue Q --name N --count C [--data JSON] [--cycle KEY=N] [--dedup-prefix P] [--opts JSON] [--max-len-events N]
//   add-raw-hostile --queue Q
//   add-cut-emoji   --queue Q [--count N]
//   many-queues     --count N [--services a,b,c] [--failed-every K] [--paused-every K]
//   work            --queue Q [--fail] [--fail-attempts N] [--count N] [--concurrency C] [--progress] [--step-ms MS] [--delay-ms MS] [--max-rate-limit-delay-ms MS] [--timeout-ms MS] [--metrics MAX_DATA_POINTS] [--clock-behind-ms MS]
//   stall           --queue Q [--count N]
//   retry-later     --queue Q --name N --backoff-ms MS [--added-ms-ago MS] [--data JSON]
//   limits          --queue Q
//   job-status      --queue Q --id ID
//   obliterate      --queue Q [--force]
//   cancellable     --queue Q [--delay-ms MS] [--no-listener]
//   scheduler       --queue Q --id ID
//   upsert-scheduler --queue Q --id ID (--every MS | --pattern CRON) [--tz TZ] [--start-ms MS] [--name N]
//   flow            --queue Q [--children N] [--grandchildren M] [--mid-prefix P]
//
// Any subcommand also takes --deadline-ms MS: the whole run is aborted (exit
// code 2) after that long; by default 60 s, or --timeout-ms + 15 s if longer.
//
// See README.md in this directory for the BullMQ 6.7.0 behaviour that was
// observed with it.

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { FlowProducer, Queue, UnrecoverableError, Worker } from 'bullmq';
import IORedis from 'ioredis';
import { createRequire } from 'node:module';

// BullMQ's PostgreSQL store is published as CommonJS only; `pg` loads when it is first used.
const { createPostgresBackend } = createRequire(import.meta.url)('bullmq/dist/cjs/postgres');

// Keep stdout for the single JSON result: anything BullMQ or ioredis would
// print through console.log/info goes to stderr instead.
console.log = console.error;
console.info = console.error;

const STATES = [
  'waiting',
  'active',
  'prioritized',
  'delayed',
  'waiting-children',
  'paused',
  'completed',
  'failed',
];

// ---------------------------------------------------------------- arguments

const BOOLEAN_FLAGS = new Set(['asc', 'fail', 'progress', 'hash-tags', 'deferred-failure', 'no-listener']);

function parseArgs(argv) {
  const [command, ...rest] = argv;
  const flags = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    if (!arg.startsWith('--')) {
      throw new Error(`unexpected argument: ${arg}`);
    }
    const eq = arg.indexOf('=');
    if (eq !== -1) {
      flags[arg.slice(2, eq)] = arg.slice(eq + 1);
      continue;
    }
    const key = arg.slice(2);
    if (BOOLEAN_FLAGS.has(key)) {
      flags[key] = true;
      continue;
    }
    if (i + 1 >= rest.length) {
      throw new Error(`missing value for --${key}`);
    }
    flags[key] = rest[++i];
  }
  return { command, flags };
}

function required(flags, key) {
  const value = flags[key];
  if (value === undefined || value === true || value === '') {
    throw new Error(`--${key} is required`);
  }
  return value;
}

function intFlag(flags, key, fallback) {
  if (flags[key] === undefined) return fallback;
  const n = Number(flags[key]);
  if (!Number.isInteger(n) || n < 0) {
    throw new Error(`--${key} must be a non-negative integer`);
  }
  return n;
}

function jsonFlag(flags, key, fallback) {
  if (flags[key] === undefined) return fallback;
  try {
    return JSON.parse(flags[key]);
  } catch (err) {
    throw new Error(`--${key} is not valid JSON: ${err.message}`);
  }
}

// --------------------------------------------------------------- connection

// One Cluster client per process: BullMQ duplicates it where it needs a connection of its own
// (a worker's blocking one); it is closed with the rest (see closeAll).
// The backend factory rides along with the options under a symbol: BullMQ ignores it, and
// `{...opts}` copies it, so every object a subcommand builds uses the same store.
const BACKEND = Symbol('backend');

function newQueue(name, opts) {
  return new Queue(name, opts, opts[BACKEND]);
}

function newWorker(name, processor, opts) {
  return new Worker(name, processor, opts, opts[BACKEND]);
}

function newFlowProducer(opts) {
  return new FlowProducer(opts, opts[BACKEND]);
}

function baseOptions(flags) {
  if (flags.postgres !== undefined) {
    return {
      connection: { connectionString: flags.postgres, migrate: true },
      [BACKEND]: createPostgresBackend,
    };
  }
  if (flags.cluster !== undefined) {
    // A Redis Cluster: the queue's keys must share a slot (a hash tag in the prefix or name).
    const run = current();
    if (run.clusterClient === null) {
      const nodes = flags.cluster.split(',').map(hostPort => {
        const [host, port] = hostPort.split(':');
        return { host, port: Number(port) };
      });
      const client = new IORedis.Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } });
      run.clusterClient = client;
      run.opened.unshift({ close: () => client.quit() });
    }
    return { connection: run.clusterClient, prefix: flags.prefix ?? '{bull}' };
  }
  if (flags.sentinels !== undefined) {
    // Through Redis Sentinel: ioredis asks the sentinels for the master of --sentinel-name.
    const sentinels = flags.sentinels.split(',').map(hostPort => {
      const [host, port] = hostPort.split(':');
      return { host, port: Number(port) };
    });
    return {
      connection: { sentinels, name: required(flags, 'sentinel-name'), maxRetriesPerRequest: null },
      prefix: flags.prefix ?? 'bull',
    };
  }
  const url = flags.redis ?? process.env.BULLPEN_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
  return {
    // BullMQ 6 builds its own ioredis clients from these options (a Worker
    // needs a second, blocking connection, so a shared client is not used).
    connection: { url, maxRetriesPerRequest: null },
    prefix: flags.prefix ?? 'bull',
  };
}

// Every BullMQ object opened by a subcommand, closed before the result is
// printed so that the process can end by itself. In `serve` mode several
// subcommands run at once: each has its own list (and Cluster client).
const runs = new AsyncLocalStorage();
const processRun = { opened: [], clusterClient: null };

function current() {
  return runs.getStore() ?? processRun;
}

function track(obj) {
  current().opened.push(obj);
  obj.on?.('error', err => console.error(`[peer] ${obj.constructor.name} error:`, err?.message ?? err));
  return obj;
}

function untrack(obj) {
  const { opened } = current();
  opened.splice(opened.indexOf(obj), 1);
}

async function closeAll() {
  const { opened } = current();
  while (opened.length) {
    const obj = opened.pop();
    try {
      await obj.close();
    } catch (err) {
      console.error('[peer] close failed:', err?.message ?? err);
    }
  }
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function waitFor(what, predicate, timeoutMs, stepMs = 25) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(stepMs);
  }
}

// ----------------------------------------------------------------- scenario

// Builds one job in every state (several in most) in queue Q, plus a paused
// queue `Q-paused` and a child queue `Q-children` for a flow. Run it on a
// queue that does not exist yet: the ids are then the same on every run.
async function scenario(flags) {
  const name = required(flags, 'queue');
  const opts = baseOptions(flags);
  const childQueueName = `${name}-children`;
  const pausedQueueName = `${name}-paused`;

  const queue = track(newQueue(name, opts));
  await queue.waitUntilReady();

  // 1. completed and failed: processed by a real worker, before anything
  //    else is added, so that it takes only these jobs.
  const completed = [];
  completed.push((await queue.add('report', { month: '2024-01', rows: 3 })).id);
  completed.push((await queue.add('report', { month: '2024-02', rows: 5 }, { jobId: 'report-feb' })).id);

  const failOpts = { attempts: 3, backoff: { type: 'fixed', delay: 0 } };
  const failed = [];
  failed.push((await queue.add('charge-card', { card: '4242', amount: 1999 }, failOpts)).id);
  failed.push((await queue.add('charge-card', { card: '0000', amount: 50 }, { ...failOpts, jobId: 'charge-9' })).id);

  const worker = track(
    newWorker(
      name,
      async job => {
        if (job.name === 'charge-card') {
          await job.log(`attempt ${job.attemptsMade + 1}: charging card ${job.data.card}`);
          throw new Error(`card declined: ${job.data.card}`);
        }
        await job.updateProgress({ pct: 10, stage: 'queued' });
        await job.log('loading rows');
        await job.updateProgress({ pct: 60, stage: 'rendering' });
        await job.log(`rendered ${job.data.rows} rows`);
        await job.updateProgress({ pct: 100, stage: 'done' });
        await job.log('uploaded');
        return { ok: true, rows: job.data.rows, url: `https://reports.example/${job.data.month}.pdf` };
      },
      { ...opts, concurrency: 1 },
    ),
  );
  await waitFor(
    'completed and failed jobs',
    async () => {
      const c = await queue.getJobCounts('completed', 'failed');
      return c.completed === completed.length && c.failed === failed.length;
    },
    8000,
  );
  await worker.close();
  untrack(worker);

  // 2. active: fetched by a worker without a processor and never finished.
  //    The long lock keeps it active even while another worker checks for
  //    stalled jobs.
  const longRunning = await queue.add('long-running', { seconds: 3600 }, { jobId: 'long-1' });
  const fetcher = newWorker(name, null, { ...opts, autorun: false, lockDuration: 60 * 60 * 1000 });
  fetcher.on('error', err => console.error('[peer] fetcher error:', err?.message ?? err));
  const token = randomUUID();
  const activeJob = await fetcher.getNextJob(token, { block: false });
  if (!activeJob || activeJob.id !== longRunning.id) {
    throw new Error(`expected to fetch ${longRunning.id}, got ${activeJob?.id}`);
  }
  await activeJob.updateProgress({ pct: 40 });
  await activeJob.log('started');
  await fetcher.close();
  const active = [activeJob.id];

  // 3. waiting: plain jobs, custom ids, and a deduplicated pair.
  const waiting = [];
  waiting.push((await queue.add('send-email', { to: 'ada@example.com', subject: 'Welcome' })).id);
  waiting.push((await queue.add('process-order', { order: 42, total: 99.5 }, { jobId: 'order-42' })).id);
  waiting.push((await queue.add('process-order', { order: 43, total: 12 }, { jobId: 'order-43' })).id);
  const dedupFirst = await queue.add('sync-account', { account: 7 }, { deduplication: { id: 'dedup-1' } });
  const dedupSecond = await queue.add('sync-account', { account: 7, again: true }, { deduplication: { id: 'dedup-1' } });
  waiting.push(dedupFirst.id);

  // 4. prioritized (a lower number is a higher priority).
  const prioritized = [];
  prioritized.push((await queue.add('resize-image', { img: 'a.png' }, { priority: 10 })).id);
  prioritized.push((await queue.add('resize-image', { img: 'b.png' }, { priority: 1 })).id);
  prioritized.push((await queue.add('resize-image', { img: 'c.png' }, { priority: 5, jobId: 'img-c' })).id);

  // 5. delayed by one hour.
  const delayed = [];
  delayed.push((await queue.add('reminder', { user: 1 }, { delay: 60 * 60 * 1000 })).id);
  delayed.push((await queue.add('reminder', { user: 2 }, { delay: 2 * 60 * 60 * 1000, jobId: 'remind-2' })).id);

  // 6. a flow: the parent waits for two children left waiting in Q-children.
  const flowProducer = track(newFlowProducer(opts));
  const flow = await flowProducer.add({
    name: 'build-bundle',
    queueName: name,
    data: { bundle: 'release-1' },
    opts: { jobId: 'bundle-1' },
    children: [
      { name: 'compile', queueName: childQueueName, data: { part: 'css' }, opts: { jobId: 'compile-css' } },
      { name: 'compile', queueName: childQueueName, data: { part: 'js' }, opts: { jobId: 'compile-js' } },
    ],
  });
  const parentId = flow.job.id;
  const childIds = flow.children.map(child => child.job.id);

  // 7. a paused queue whose three jobs were added after pausing.
  const pausedQueue = track(newQueue(pausedQueueName, opts));
  await pausedQueue.pause();
  const pausedIds = [];
  for (let i = 1; i <= 3; i++) {
    pausedIds.push((await pausedQueue.add('paused-task', { n: i })).id);
  }

  // Check that everything is where it should be before reporting.
  const expect = {
    waiting,
    active,
    prioritized,
    delayed,
    'waiting-children': [parentId],
    completed,
    failed,
  };
  for (const [state, ids] of Object.entries(expect)) {
    for (const id of ids) {
      const got = await queue.getJobState(id);
      if (got !== state) throw new Error(`job ${id} is ${got}, expected ${state}`);
    }
  }
  const childQueue = track(newQueue(childQueueName, opts));
  for (const id of childIds) {
    const got = await childQueue.getJobState(id);
    if (got !== 'waiting') throw new Error(`child ${id} is ${got}, expected waiting`);
  }

  return {
    queue: name,
    prefix: opts.prefix,
    ids: {
      ...expect,
      'paused-queue': pausedQueueName,
      'paused-queue-jobs': pausedIds,
      'children-queue': childQueueName,
      children: childIds,
      flow: {
        parent: { queue: name, id: parentId },
        children: childIds.map(id => ({ queue: childQueueName, id })),
      },
      deduplication: { id: 'dedup-1', jobId: dedupFirst.id, secondAddReturned: dedupSecond.id },
      'long-running': longRunning.id,
    },
  };
}

// ------------------------------------------------------------------ inspect

async function inspect(flags) {
  const name = required(flags, 'queue');
  const asc = flags.asc === true;
  const queue = track(newQueue(name, baseOptions(flags)));
  await queue.waitUntilReady();

  // In 6.7.0, getJobCounts() with no argument returns exactly these keys:
  // active, completed, delayed, failed, prioritized, waiting, waiting-children
  // ('paused' is NOT among them). A paused queue keeps its jobs in the
  // 'wait' list (the queue's meta hash gets paused=1), so they are counted as
  // 'waiting', and 'paused' (the legacy paused list) is 0. See README.md.
  const counts = await queue.getJobCounts();
  const countsAll = await queue.getJobCounts(...STATES);
  const isPaused = await queue.isPaused();

  const jobs = {};
  for (const state of STATES) {
    jobs[state] = (await queue.getJobs([state], 0, -1, asc)).map(job => job.id);
  }

  const details = {};
  const ids = typeof flags.ids === 'string' ? flags.ids.split(',').filter(Boolean) : [];
  for (const id of ids) {
    const job = await queue.getJob(id);
    if (!job) {
      details[id] = null;
      continue;
    }
    const logs = await queue.getJobLogs(id);
    details[id] = {
      ...job.toJSON(),
      state: await job.getState(),
      logs: logs.logs,
      logsCount: logs.count,
    };
  }

  return { queue: name, counts, countsAll, isPaused, asc, jobs, details };
}

// ---------------------------------------------------------------------- add

async function add(flags) {
  const name = required(flags, 'queue');
  const jobName = required(flags, 'name');
  const data = jsonFlag(flags, 'data', {});
  const jobOpts = jsonFlag(flags, 'opts', undefined);
  const queue = track(newQueue(name, baseOptions(flags)));
  const job = await queue.add(jobName, data, jobOpts);
  return { id: job.id };
}

// C jobs named N through queue.addBulk, 1000 per call (a big queue in seconds, not minutes);
// every job gets the --data object with its index added as "i" (and with --cycle KEY=N, KEY
// set to i % N: N customers' jobs taking turns), and with --dedup-prefix P the
// deduplication id P<i> (no TTL: held while the job is not finished). --opts JSON: job options
// for every job (removeOnComplete...); --max-len-events N: the Queue's streams.events.maxLen,
// which it writes into the queue's meta hash and BullMQ trims the events stream to.
async function addBulk(flags) {
  const name = required(flags, 'queue');
  const jobName = required(flags, 'name');
  const count = intFlag(flags, 'count', 1);
  const data = jsonFlag(flags, 'data', {});
  const dedupPrefix = flags['dedup-prefix'];
  const jobOpts = jsonFlag(flags, 'opts', {});
  const maxLen = intFlag(flags, 'max-len-events', 0);
  const [cycleKey, cycleLength] = (flags.cycle ?? '').split('=');
  const cycled = (i) => (cycleKey ? { [cycleKey]: i % Number(cycleLength) } : {});
  const streams = maxLen ? { streams: { events: { maxLen } } } : {};
  const queue = track(newQueue(name, { ...baseOptions(flags), ...streams }));
  // The cap is written into the meta hash once the Queue is ready; a job added before would
  // set BullMQ's default cap there first.
  if (maxLen) await queue.getVersion();
  let added = 0;
  let first = null;
  let last = null;
  for (let start = 0; start < count; start += 1000) {
    const batch = [];
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const opts = dedupPrefix === undefined ? { ...jobOpts } : { ...jobOpts, deduplication: { id: `${dedupPrefix}${i}` } };
      batch.push({ name: jobName, data: { ...data, i, ...cycled(i) }, opts });
    }
    const jobs = await queue.addBulk(batch);
    first ??= jobs[0].id;
    last = jobs[jobs.length - 1].id;
    added += jobs.length;
  }
  return { added, first, last };
}

// N tenants' queues, t001-<service> ... (a multi-tenant application's shape), on one shared
// connection: tenant i's queues hold i % 4 waiting jobs, every K-th tenant's first queue one
// failed job (taken by a worker and failed, as BullMQ fails them), every K-th one paused.
const TENANTS_AT_ONCE = 25;

async function manyQueues(flags) {
  const count = intFlag(flags, 'count', 100);
  const services = (flags.services ?? 'mail,billing').split(',');
  const failedEvery = intFlag(flags, 'failed-every', 25);
  const pausedEvery = intFlag(flags, 'paused-every', 50);
  // --hash-tags: names {t001}-<service>, each tenant's queues in a slot of their own (Cluster).
  const tagged = flags['hash-tags'] === true;
  const { connection: options, prefix } = baseOptions(flags);
  const shared = options instanceof IORedis.Cluster;
  const connection = shared ? options : new IORedis(options.url, { maxRetriesPerRequest: null });
  const names = [];
  const seedTenant = async tenant => {
    const work = services.map(async (service, index) => {
      const id = `t${String(tenant).padStart(3, '0')}`;
      const name = tagged ? `{${id}}-${service}` : `${id}-${service}`;
      names.push(name);
      const queue = newQueue(name, { connection, prefix });
      const jobs = Array.from({ length: tenant % 4 }, (_, i) => ({ name: 'job', data: { tenant, i } }));
      if (jobs.length) await queue.addBulk(jobs);
      else await queue.waitUntilReady();
      if (index === 0 && tenant % failedEvery === 0) {
        await queue.add('doomed', { tenant });
        const worker = newWorker(name, null, { connection, prefix, autorun: false });
        const token = randomUUID();
        let job = await worker.getNextJob(token);
        while (job && job.name !== 'doomed') {
          await job.moveToCompleted('ok', token, false);
          job = await worker.getNextJob(token);
        }
        if (job) await job.moveToFailed(new Error(`tenant ${tenant} failed`), token, false);
        await worker.close();
      }
      if (tenant % pausedEvery === 0) await queue.pause();
    });
    await Promise.all(work);
  };
  try {
    // Tenants a few at a time: one after the other, 2,000 queues waited 13 s on round trips
    // (Redis and Node busy 3 s of them).
    for (let first = 1; first <= count; first += TENANTS_AT_ONCE) {
      const last = Math.min(count, first + TENANTS_AT_ONCE - 1);
      const batch = [];
      for (let tenant = first; tenant <= last; tenant++) batch.push(seedTenant(tenant));
      await Promise.all(batch);
    }
  } finally {
    if (!shared) await connection.quit();  // the Cluster client is closed with the rest
  }
  return { queues: names.length };
}

async function addRawHostile(flags) {
  const name = required(flags, 'queue');
  const queue = track(newQueue(name, baseOptions(flags)));
  const script = await queue.add('<script>alert("x")</script>', {
    html: '<img src=x onerror=alert(1)>',
    quote: '"\'`',
  });
  const big = await queue.add('big-payload', { blob: 'x'.repeat(5 * 1024 * 1024) });
  return { ids: { script: script.id, big: big.id }, names: { script: script.name, big: big.name } };
}

// Jobs whose name and data hold text cut inside an emoji (a lone surrogate), as a producer
// that truncates strings by UTF-16 length writes them.
async function addCutEmoji(flags) {
  const queue = track(newQueue(required(flags, 'queue'), baseOptions(flags)));
  const cut = 'party \u{1F389}'.slice(0, -1);
  const ids = [];
  for (let i = 0; i < intFlag(flags, 'count', 1); i += 1) {
    ids.push((await queue.add(`greet ${cut}`, { text: cut, nested: { note: cut } })).id);
  }
  return { ids, text: cut };
}

// --------------------------------------------------------------------- work

async function work(flags) {
  const name = required(flags, 'queue');
  const count = intFlag(flags, 'count', 1);
  const concurrency = Math.max(1, intFlag(flags, 'concurrency', 1));
  const timeoutMs = intFlag(flags, 'timeout-ms', 30000);
  const fail = flags.fail === true;
  // --fail-attempts N: each job's first N attempts fail, later ones succeed.
  const failAttempts = intFlag(flags, 'fail-attempts', 0);
  const progress = flags.progress === true;
  // --step-ms: report progress 25/50/75/100 with this pause between steps (a slow job to watch).
  const stepMs = intFlag(flags, 'step-ms', 0);
  // --delay-ms: each job takes this long before it completes or fails.
  const delayMs = intFlag(flags, 'delay-ms', 0);
  // --max-rate-limit-delay-ms: a rate-limited worker sleeps at most this long before it asks
  // again (BullMQ's maximumRateLimitDelay, 30 s by default, which also delays its close).
  const maxRateLimitDelay = intFlag(flags, 'max-rate-limit-delay-ms', 0);
  // --metrics N: the worker records BullMQ's per-minute metrics (metrics: { maxDataPoints: N }).
  const maxDataPoints = intFlag(flags, 'metrics', 0);
  // --clock-behind-ms MS: this worker's clock runs MS behind, so that the jobs it finishes are
  // stamped, and counted in BullMQ's metrics, in earlier minutes.
  const clockBehind = intFlag(flags, 'clock-behind-ms', 0);
  if (clockBehind) {
    const realNow = Date.now;
    Date.now = () => realNow() - clockBehind;
  }

  let finished = 0;
  let completed = 0;
  let failed = 0;
  let done;
  const allDone = new Promise(resolve => {
    done = resolve;
  });
  const finish = () => {
    finished += 1;
    if (finished >= count) done();
  };

  if (count === 0) done();

  const worker = track(
    newWorker(
      name,
      async job => {
        if (progress && stepMs > 0) {
          for (const pct of [25, 50, 75]) {
            await job.updateProgress({ pct, stage: 'working' });
            await job.log(`step ${pct}%`);
            await new Promise(resolve => setTimeout(resolve, stepMs));
          }
        } else if (progress) {
          await job.updateProgress({ pct: 50, stage: 'working' });
          await job.log(`working on ${job.id}`);
        }
        if (delayMs > 0) await new Promise(resolve => setTimeout(resolve, delayMs));
        if (fail) {
          // --fail: the job's own data.error message if it has one (for mixed failures).
          throw new Error(job.data?.error ?? `job ${job.id} failed on purpose`);
        }
        if (job.attemptsMade < failAttempts) {
          throw new Error(`attempt ${job.attemptsMade + 1} of job ${job.id} failed on purpose`);
        }
        if (progress) {
          await job.updateProgress({ pct: 100, stage: 'done' });
          await job.log(`finished ${job.id}`);
        }
        return { ok: true, id: job.id };
      },
      {
        ...baseOptions(flags),
        concurrency,
        ...(maxRateLimitDelay ? { maximumRateLimitDelay: maxRateLimitDelay } : {}),
        ...(maxDataPoints ? { metrics: { maxDataPoints } } : {}),
      },
    ),
  );
  // 'failed' fires on every failed attempt; a job with attempts left is
  // retried and is counted only once it finally completes or fails.
  worker.on('completed', () => {
    completed += 1;
    finish();
  });
  worker.on('failed', (job, err) => {
    const attempts = job?.opts?.attempts ?? 1;
    if (!job || job.attemptsMade >= attempts || err?.name === 'UnrecoverableError') {
      failed += 1;
      finish();
    }
  });

  let timer;
  const timedOut = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms (${finished}/${count} finished)`)), timeoutMs);
  });
  try {
    await Promise.race([allDone, timedOut]);
  } finally {
    clearTimeout(timer);
  }
  await worker.close();
  untrack(worker);
  return { processed: finished, completed, failed };
}

// -------------------------------------------------------------------- stall

// --count jobs taken by a worker that then stops without finishing them (as a crashed one
// does): its locks run out, and a second worker's stall check moves them back to wait
// (a "stalled" event each), then completes them.
async function stall(flags) {
  const name = required(flags, 'queue');
  const count = Math.max(1, intFlag(flags, 'count', 1));
  const queue = track(newQueue(name, baseOptions(flags)));
  const first = newWorker(name, () => new Promise(() => {}), {
    ...baseOptions(flags),
    concurrency: count,
    lockDuration: 1000,
    skipStalledCheck: true,
  });
  while ((await queue.getActiveCount()) < count) await sleep(20);
  await first.close(true);
  let stalled = 0;
  let completed = 0;
  let done;
  const allDone = new Promise(resolve => {
    done = resolve;
  });
  const second = track(
    newWorker(name, async () => ({ ok: true }), {
      ...baseOptions(flags),
      concurrency: count,
      lockDuration: 1000,
      stalledInterval: 300,
    }),
  );
  second.on('stalled', () => {
    stalled += 1;
  });
  second.on('completed', () => {
    completed += 1;
    if (completed >= count) done();
  });
  await allDone;
  return { stalled, completed };
}

// -------------------------------------------------------------------- strand

// --count jobs (named --name, data {n}) taken by a worker that then stops without finishing
// them, renewing their locks or checking for stalled jobs, as one killed mid-job: their locks
// run out (lockDuration 1 s) and, with no stalled check anywhere, they stay active for good.
// Answers their ids once every lock is gone. --deferred-failure then runs BullMQ's stalled
// check twice with maxStalledCount 0 (the first marks them, the second moves them back to
// wait, polled until it ran), so that each waits with a deferred failure ("job stalled more than allowable limit").
async function strand(flags) {
  const name = required(flags, 'queue');
  const count = Math.max(1, intFlag(flags, 'count', 1));
  const queue = track(newQueue(name, baseOptions(flags)));
  const jobs = [];
  for (let n = 0; n < count; n += 1) {
    jobs.push(await queue.add(flags.name ?? 'stranded', { n }));
  }
  const worker = newWorker(name, () => new Promise(() => {}), {
    ...baseOptions(flags),
    concurrency: count,
    lockDuration: 1000,
    skipStalledCheck: true,
    skipLockRenewal: true,
  });
  while ((await queue.getActiveCount()) < count) await sleep(20);
  await worker.close(true);
  const client = await queue.backend.client;
  const locked = async () => {
    for (const job of jobs) if (await client.exists(`${queue.toKey(job.id)}:lock`)) return true;
    return false;
  };
  await waitFor('the stranded jobs\' locks to expire', async () => !(await locked()), 15000);
  if (flags['deferred-failure'] === true) {
    const checker = track(
      newWorker(name, null, {
        ...baseOptions(flags),
        autorun: false,
        maxStalledCount: 0,
        stalledInterval: 100,
      }),
    );
    // A check within stalledInterval of the last one does nothing (its key in Redis says so).
    await checker.moveStalledJobsToWait();
    await waitFor(
      'the stalled check to move them',
      async () => {
        await checker.moveStalledJobsToWait();
        return (await queue.getActiveCount()) === 0;
      },
      5000,
      50,
    );
  }
  return { ids: jobs.map(job => job.id) };
}

// -------------------------------------------------------------- retry-later

// One job whose first attempt fails and whose retry waits --backoff-ms in the delayed set.
// --added-ms-ago backdates the job's timestamp, so that "timestamp + delay" (right for a job
// added with a delay) is visibly not when a retry runs: BullMQ counts a backoff from the failure.
async function retryLater(flags) {
  const name = required(flags, 'queue');
  const backoffMs = intFlag(flags, 'backoff-ms', 60 * 60 * 1000);
  const agoMs = intFlag(flags, 'added-ms-ago', 0);
  const opts = baseOptions(flags);
  const queue = track(newQueue(name, opts));
  const job = await queue.add(required(flags, 'name'), jsonFlag(flags, 'data', {}), {
    attempts: 2,
    backoff: { type: 'fixed', delay: backoffMs },
    timestamp: Date.now() - agoMs,
  });
  const worker = track(
    newWorker(
      name,
      async () => {
        throw new Error('first attempt fails on purpose');
      },
      { ...opts, concurrency: 1 },
    ),
  );
  let failedAt = 0;
  worker.on('failed', () => {
    failedAt = Date.now();
  });
  await waitFor('the retry to be delayed', async () => (await queue.getJobState(job.id)) === 'delayed', 15000);
  await worker.close();
  untrack(worker);
  const stored = await queue.getJob(job.id);
  return { id: job.id, timestamp: stored.timestamp, delay: stored.delay, failedAt };
}

// ------------------------------------------------------------------- limits

// The queue's global concurrency and rate limit as BullMQ reads them (null when not set), and
// the time left in the rate-limit window now in force (0 or less: none).
async function limits(flags) {
  const name = required(flags, 'queue');
  const queue = track(newQueue(name, baseOptions(flags)));
  return {
    concurrency: await queue.getGlobalConcurrency(),
    rateLimit: await queue.getGlobalRateLimit(),
    rateLimitTtl: await queue.getRateLimitTtl(),
  };
}

// -------------------------------------------------------------- cancellable

// A worker that runs one job for --delay-ms (30 s) unless it is cancelled, with the listener for
// Bullpen's cancel requests that docs/api.md describes (--no-listener: without it). Answers
// with the job as Node reads it once it ended.
async function cancellable(flags) {
  const name = required(flags, 'queue');
  const delayMs = intFlag(flags, 'delay-ms', 30000);
  const opts = baseOptions(flags);
  const retryAsked = new Map(); // job id -> whether the request lets its attempts retry it
  let ended;
  const jobEnded = new Promise(resolve => {
    ended = resolve;
  });
  const worker = track(
    newWorker(
      name,
      (job, token, signal) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve({ ok: true }), delayMs);
          signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            const reason = String(signal.reason);
            reject(retryAsked.get(job.id) ? new Error(reason) : new UnrecoverableError(reason));
          });
        }),
      { ...opts, concurrency: 1 },
    ),
  );
  worker.on('completed', job => ended(job.id));
  worker.on('failed', job => ended(job?.id));
  if (!flags['no-listener']) {
    // The recipe: one subscriber per process, on the channel of each queue it works.
    const subscriber = new IORedis(opts.connection.url, { maxRetriesPerRequest: null });
    current().opened.push({ close: () => subscriber.quit() });
    subscriber.on('message', (_channel, message) => {
      const request = JSON.parse(message);
      if (Date.now() > request.until) return; // Bullpen has answered already
      retryAsked.set(request.jobId, request.retry === true);
      worker.cancelJob(request.jobId, request.reason);
    });
    await subscriber.subscribe(`${opts.prefix}:${name}:bullpen:cancel`);
  }
  const jobId = await jobEnded;
  const queue = track(newQueue(name, opts));
  const job = await queue.getJob(jobId);
  return {
    id: jobId,
    state: await job.getState(),
    failedReason: job.failedReason ?? null,
    attemptsMade: job.attemptsMade,
  };
}

// --------------------------------------------------------------- job-status

// One job as BullMQ sees it: state, delay and pending children; { exists: false } when gone.
async function jobStatus(flags) {
  const name = required(flags, 'queue');
  const queue = track(newQueue(name, baseOptions(flags)));
  const job = await queue.getJob(required(flags, 'id'));
  if (!job) return { exists: false };
  return {
    exists: true,
    state: await job.getState(),
    delay: job.delay,
    timestamp: job.timestamp,
    dependencies: await job.getDependenciesCount(),
    attemptsMade: job.attemptsMade,
    failedReason: job.failedReason ?? null,
  };
}

// ---------------------------------------------------------------- obliterate

// Node's own queue.obliterate() (it pauses the queue first): every key of the queue is gone.
async function obliterate(flags) {
  const queue = track(newQueue(required(flags, 'queue'), baseOptions(flags)));
  await queue.obliterate({ force: Boolean(flags.force) });
  return { obliterated: true };
}

// ---------------------------------------------------------------- scheduler

// A job scheduler as Node BullMQ reads it (null when there is none), with the job of its next
// run (delayed, or waiting when due at once).
async function scheduler(flags) {
  const name = required(flags, 'queue');
  const queue = track(newQueue(name, baseOptions(flags)));
  const id = required(flags, 'id');
  const found = await queue.getJobScheduler(id);
  const pending = await queue.getJobs(['delayed', 'waiting', 'prioritized']);
  return {
    scheduler: found ?? null,
    nextJobs: pending.filter(job => job.repeatJobKey === id).map(job => job.id),
  };
}

// Creates or updates a job scheduler through BullMQ's own upsertJobScheduler, with no worker:
// an --every one's first job is made at once and waits (its run passes, untaken: overdue),
// unless --start-ms puts its first run later. Returns the scheduler and its next job's id.
async function upsertScheduler(flags) {
  const name = required(flags, 'queue');
  const queue = track(newQueue(name, baseOptions(flags)));
  const id = required(flags, 'id');
  const repeat = {};
  if (flags.every !== undefined) repeat.every = intFlag(flags, 'every', 0);
  if (flags.pattern !== undefined) repeat.pattern = flags.pattern;
  if (flags.tz !== undefined) repeat.tz = flags.tz;
  if (flags['start-ms'] !== undefined) repeat.startDate = intFlag(flags, 'start-ms', 0);
  const job = await queue.upsertJobScheduler(id, repeat, {
    name: flags.name ?? id,
    data: { scheduler: id },
  });
  return { id, nextJob: job ? job.id : null, scheduler: await queue.getJobScheduler(id) };
}

// --------------------------------------------------------------------- flow

// A three-level flow across three queues (FlowProducer): a root in Q, --children (default 2)
// in Q-mid (under --mid-prefix when given), each with --grandchildren (default 2) in Q-leaf.
// Returns the ids, level by level.
async function flow(flags) {
  const name = required(flags, 'queue');
  const children = intFlag(flags, 'children', 2);
  const grandchildren = intFlag(flags, 'grandchildren', 2);
  const producer = track(newFlowProducer(baseOptions(flags)));
  const tree = await producer.add({
    name: 'root',
    queueName: name,
    data: { level: 0 },
    children: Array.from({ length: children }, (_, i) => ({
      name: `mid-${i}`,
      queueName: `${name}-mid`,
      ...(flags['mid-prefix'] ? { prefix: flags['mid-prefix'] } : {}),
      data: { level: 1, i },
      children: Array.from({ length: grandchildren }, (_, j) => ({
        name: `leaf-${i}-${j}`,
        queueName: `${name}-leaf`,
        data: { level: 2, i, j },
      })),
    })),
  });
  return {
    root: tree.job.id,
    mid: (tree.children ?? []).map(child => child.job.id),
    leaf: (tree.children ?? []).map(child => (child.children ?? []).map(leaf => leaf.job.id)),
  };
}

// --------------------------------------------------------------- bench-work

// For bench/worker: one Worker with a no-op processor on jobs already in Q, at --concurrency
// (and with --limiter-max/--limiter-duration, BullMQ's limiter). Runs until --count jobs
// completed, or for --duration-ms; reports how many, how long and the CPU this process used.
async function benchWork(flags) {
  const name = required(flags, 'queue');
  const count = intFlag(flags, 'count', 0);
  const durationMs = intFlag(flags, 'duration-ms', 0);
  if (!count && !durationMs) throw new Error('--count or --duration-ms is required');
  const opts = {
    ...baseOptions(flags),
    concurrency: Math.max(1, intFlag(flags, 'concurrency', 1)),
    autorun: false,
  };
  const limiterMax = intFlag(flags, 'limiter-max', 0);
  if (limiterMax) opts.limiter = { max: limiterMax, duration: intFlag(flags, 'limiter-duration', 1000) };

  let processed = 0;
  let finish;
  const finished = new Promise(resolve => {
    finish = resolve;
  });
  const worker = track(newWorker(name, async () => null, opts));
  worker.on('completed', () => {
    processed += 1;
    if (count && processed >= count) finish();
  });
  await worker.waitUntilReady();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  worker.run().catch(err => console.error('[peer] bench worker:', err?.message ?? err));
  const timer = durationMs ? setTimeout(finish, durationMs) : null;
  await finished;
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  if (timer) clearTimeout(timer);
  await worker.close();
  untrack(worker);
  return { processed, elapsed_ms: elapsedMs, cpu_ms: (cpu.user + cpu.system) / 1000 };
}

// --------------------------------------------------------------------- main

const COMMANDS = {
  scenario,
  inspect,
  add,
  'add-bulk': addBulk,
  'add-raw-hostile': addRawHostile,
  'add-cut-emoji': addCutEmoji,
  'many-queues': manyQueues,
  work,
  'retry-later': retryLater,
  stall,
  strand,
  limits,
  'job-status': jobStatus,
  obliterate,
  cancellable,
  scheduler,
  'upsert-scheduler': upsertScheduler,
  flow,
  'bench-work': benchWork,
};

function emit(doc) {
  return new Promise((resolve, reject) => {
    process.stdout.write(`${JSON.stringify(doc)}\n`, err => (err ? reject(err) : resolve()));
  });
}

function commandOf(command) {
  const run = COMMANDS[command];
  if (!run) {
    throw new Error(`unknown subcommand ${JSON.stringify(command)}; expected one of ${Object.keys(COMMANDS).join(', ')}`);
  }
  return run;
}

// Watchdog: ioredis retries an unreachable server forever, so bound the
// whole run (default 60 s, or the work timeout plus 15 s if longer).
function deadlineOf(flags) {
  return intFlag(flags, 'deadline-ms', Math.max(60000, intFlag(flags, 'timeout-ms', 30000) + 15000));
}

async function main() {
  const { command, flags } = parseArgs(process.argv.slice(2));
  const run = commandOf(command);
  const deadlineMs = deadlineOf(flags);
  setTimeout(() => {
    console.error(`[peer] error: ${command} did not finish within ${deadlineMs} ms (is Redis reachable?)`);
    process.exit(2);
  }, deadlineMs).unref();
  const result = await run(flags);
  await closeAll();
  await emit(result);
}

// ------------------------------------------------------------------- serve

// `serve`: one long-lived process runs subcommands sent as JSON lines on stdin
// ({"id", "argv": [subcommand, ...flags]}) and answers each with one line
// ({"id", "ok": true, "result"} or {"id", "ok": false, "error", "timedOut"}).
// Loading BullMQ costs most of a one-shot run's time; a test suite that runs
// hundreds of subcommands loads it once. Subcommands run concurrently, each
// with its own BullMQ objects, closed when it ends, its deadline passes or it fails.
async function serveOne(request) {
  const { command, flags } = parseArgs(request.argv);
  const run = commandOf(command);
  const deadlineMs = deadlineOf(flags);
  let timer;
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => {
      const err = new Error(`${command} did not finish within ${deadlineMs} ms (is Redis reachable?)`);
      err.timedOut = true;
      reject(err);
    }, deadlineMs);
  });
  try {
    return await Promise.race([run(flags), deadline]);
  } finally {
    clearTimeout(timer);
    await Promise.race([closeAll(), sleep(2000)]);
  }
}

function serve() {
  // A stray rejection inside one subcommand's BullMQ objects must not end the others.
  process.on('unhandledRejection', err => console.error('[peer] unhandled rejection:', err?.stack ?? err));
  process.on('uncaughtException', err => console.error('[peer] uncaught exception:', err?.stack ?? err));
  const lines = createInterface({ input: process.stdin });
  lines.on('line', line => {
    if (!line.trim()) return;
    let request;
    try {
      request = JSON.parse(line);
    } catch (err) {
      console.error(`[peer] not a request: ${line.slice(0, 200)}`);
      return;
    }
    runs.run({ opened: [], clusterClient: null }, () =>
      serveOne(request).then(
        result => emit({ id: request.id, ok: true, result }),
        err => {
          console.error(`[peer] error: ${err?.stack ?? err}`);
          return emit({ id: request.id, ok: false, error: String(err?.stack ?? err), timedOut: !!err?.timedOut });
        },
      ),
    );
  });
  lines.on('close', () => process.exit(0));
}

if (process.argv[2] === 'serve') {
  serve();
} else {
  main().then(
    () => process.exit(0),
    async err => {
      console.error(`[peer] error: ${err?.stack ?? err}`);
      await Promise.race([closeAll(), sleep(2000)]);
      process.exit(1);
    },
  );
}
