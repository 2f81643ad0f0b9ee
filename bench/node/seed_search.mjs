#!/usr/bin/env node
// Seeds Redis with many queues of many jobs for the search benchmark (bench/search/):
// q0000 ... q<N-1>, each with M jobs added by BullMQ itself (Queue.addBulk, 1,000 a call),
// one in ten delayed by a day (a sorted set to scan as well as the wait list). Job data:
// {customer: "c-<k>", order: <i>, note: "..."}; exactly one job in every 100,000 belongs to
// customer "acme-42", so a search for it reads everything and finds a known few.
//
//   node seed_search.mjs --redis redis://127.0.0.1:6379/0 --queues 1000 --jobs 1000
//
// A JSON summary (queues, jobs, acme-42 jobs, seconds) goes to stdout.

import { parseArgs } from 'node:util';
import IORedis from 'ioredis';
import { Queue } from 'bullmq';

const { values: args } = parseArgs({
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/0' },
    prefix: { type: 'string', default: 'bull' },
    queues: { type: 'string', default: '1000' },
    jobs: { type: 'string', default: '1000' },
    inflight: { type: 'string', default: '8' },
  },
});

const NQUEUES = Number.parseInt(args.queues, 10);
const NJOBS = Number.parseInt(args.jobs, 10);
const INFLIGHT = Number.parseInt(args.inflight, 10);
const NOTE = 'order placed through the web shop; see the customer record for details';
const started = Date.now();
const connection = new IORedis(args.redis, { maxRetriesPerRequest: null });
let acme = 0;

async function seedQueue(index) {
  const queue = new Queue(`q${String(index).padStart(4, '0')}`, { connection, prefix: args.prefix });
  for (let start = 0; start < NJOBS; start += 1000) {
    const batch = [];
    for (let i = start; i < Math.min(NJOBS, start + 1000); i++) {
      const n = index * NJOBS + i;
      const customer = n % 100000 === 99999 ? 'acme-42' : `c-${n % 5000}`;
      if (customer === 'acme-42') acme += 1;
      batch.push({
        name: 'order',
        data: { customer, order: n, note: NOTE },
        opts: i % 10 === 9 ? { delay: 86400000 } : {},
      });
    }
    await queue.addBulk(batch);
  }
  await queue.close();
}

let next = 0;
async function lane() {
  while (next < NQUEUES) await seedQueue(next++);
}
await Promise.all(Array.from({ length: INFLIGHT }, lane));
await connection.quit();
process.stdout.write(
  JSON.stringify({
    queues: NQUEUES,
    jobs: NQUEUES * NJOBS,
    acme,
    seconds: (Date.now() - started) / 1000,
  }) + '\n',
);
