#!/usr/bin/env node
// Fills BullMQ 6's PostgreSQL store (migrating its schema, as an application's BullMQ would) for
// the Postgres-beside-Bull-Board benchmark.
//
//   NODE_PATH=../../tests/interop/node_modules \
//     node seed_postgres.mjs --postgres postgresql://user@host:5432/db --queues 20 --failed 3000
//
// Queues pg-000..pg-NNN get --waiting jobs each, added by Queue.addBulk; pg-000 also gets
// --failed jobs that a Worker fails (attempts 1, an Error thrown from two calls deep, so each
// keeps a real stack trace). Every write is BullMQ's own. `pg` is not a dependency of
// bench/node: NODE_PATH names a node_modules that has it (the interop peer's).
// A JSON summary goes to stdout.

import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { Queue, Worker } from 'bullmq';

const require = createRequire(import.meta.url);
const { createPostgresBackend } = require('bullmq/dist/cjs/postgres');

const { values: args } = parseArgs({
  options: {
    postgres: { type: 'string' },
    queues: { type: 'string', default: '20' },
    waiting: { type: 'string', default: '10' },
    failed: { type: 'string', default: '3000' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (args.help || !args.postgres) {
  process.stderr.write(
    'usage: node seed_postgres.mjs --postgres URL [--queues 20] [--waiting 10] [--failed 3000]\n',
  );
  process.exit(args.help ? 0 : 2);
}

const started = Date.now();
const names = Array.from({ length: Number(args.queues) }, (_, i) => `pg-${String(i).padStart(3, '0')}`);
// One pool-owning backend per queue, closed as soon as its jobs are in: a few connections at a
// time, whatever the number of queues.
const opts = { connection: { connectionString: args.postgres, migrate: true, max: 2 } };
const first = new Queue(names[0], opts, createPostgresBackend);
await first.waitUntilReady(); // the migrations, once, before the other queues connect
await first.close();
for (let i = 0; i < names.length; i += 10) {
  await Promise.all(
    names.slice(i, i + 10).map(async (name) => {
      const queue = new Queue(name, opts, createPostgresBackend);
      const jobs = Array.from({ length: Number(args.waiting) }, (_, n) => ({
        name: 'job',
        data: { n, queue: name },
      }));
      await queue.addBulk(jobs);
      await queue.close();
    }),
  );
}

const failing = Number(args.failed);
if (failing > 0) {
  const queue = new Queue(names[0], opts, createPostgresBackend);
  for (let n = 0; n < failing; n += 1000) {
    const size = Math.min(1000, failing - n);
    await queue.addBulk(
      Array.from({ length: size }, (_, k) => ({
        name: 'charge',
        data: { order: n + k, customer: `c-${(n + k) % 97}` },
        opts: { attempts: 1 },
      })),
    );
  }
  const charge = (job) => {
    throw new Error(`card declined for order ${job.data.order}`);
  };
  let done = 0;
  await new Promise((resolve) => {
    const worker = new Worker(
      names[0],
      async (job) => charge(job),
      { connection: { connectionString: args.postgres, max: 4 }, concurrency: 50 },
      createPostgresBackend,
    );
    worker.on('failed', () => {
      done += 1;
      if (done >= failing) worker.close().then(resolve);
    });
  });
  const counts = await queue.getJobCounts('failed', 'wait');
  await queue.close();
  process.stdout.write(`${JSON.stringify({ queues: names.length, counts, seconds: (Date.now() - started) / 1000 })}\n`);
} else {
  process.stdout.write(`${JSON.stringify({ queues: names.length, seconds: (Date.now() - started) / 1000 })}\n`);
}
