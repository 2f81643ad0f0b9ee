#!/usr/bin/env node
// Serves Bull Board on named queues (those of a flow), for bench/flow: the same server as
// bullboard.mjs, with the queues given by name instead of bench-00..NN.
//
//   node bullboard_flow.mjs --redis redis://127.0.0.1:6379/0 --prefix bull --port 3000 --names a,b,c

import { parseArgs } from 'node:util';
import express from 'express';
import { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';

const { values: args } = parseArgs({
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/0' },
    prefix: { type: 'string', default: 'bull' },
    port: { type: 'string', default: '3000' },
    host: { type: 'string', default: '127.0.0.1' },
    names: { type: 'string' },
  },
});

const connection = { url: args.redis, maxRetriesPerRequest: null };
const queues = args.names
  .split(',')
  .map((name) => new Queue(name, { connection, prefix: args.prefix }));
await Promise.all(queues.map((q) => q.waitUntilReady()));

const serverAdapter = new ExpressAdapter();
serverAdapter.setBasePath('/');
createBullBoard({
  queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: true })),
  serverAdapter,
});
const app = express();
app.disable('x-powered-by');
app.use('/', serverAdapter.getRouter());
const server = app.listen(Number(args.port), args.host, () => {
  process.stderr.write(`bull board listening on http://${args.host}:${args.port}/\n`);
});

async function stop() {
  server.close();
  await Promise.allSettled(queues.map((q) => q.close()));
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
