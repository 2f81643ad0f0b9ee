#!/usr/bin/env node
// Serves Bull Board (the reference Node dashboard) on the benchmark queues, so
// the Bullpen benchmark can measure both dashboards against the same Redis.
//
//   node bullboard.mjs --redis redis://127.0.0.1:6379/0 --prefix bull --port 3000
//
// Bull Board is mounted at "/" with one BullMQAdapter per queue
// bench-00..bench-NN (or per name in --names-file, one a line), read-only,
// with its default UI options otherwise. --shared-connection gives every
// queue the same ioredis connection, as an application with thousands of
// queues would (by default each Queue opens its own).
// Its JSON API is then at /api/... (see bench/README.md for the exact URLs
// the UI polls).
//
// --postgres URL reads BullMQ 6's PostgreSQL store instead (Bull Board 9.3+):
// every Queue is built on createPostgresBackend over one shared pg.Pool (its
// search_path on BullMQ's schema, as BullMQ pins its own pools), so 200 queues
// need a few connections, not 200 pools. `pg` is not a dependency of
// bench/node: run it with NODE_PATH naming a node_modules that has it.

import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import IORedis from 'ioredis';
import express from 'express';
import { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';

const { values: args } = parseArgs({
  options: {
    redis: { type: 'string', default: 'redis://127.0.0.1:6379/0' },
    postgres: { type: 'string' },
    'pg-pool': { type: 'string', default: '10' },
    prefix: { type: 'string', default: 'bull' },
    port: { type: 'string', default: '3000' },
    host: { type: 'string', default: '127.0.0.1' },
    queues: { type: 'string', default: '20' },
    'names-file': { type: 'string' },
    'shared-connection': { type: 'boolean', default: false },
    // Bull Board asks Redis for the client list of every queue on each
    // overview request, to warn about queues without workers; this is its
    // default. --hide-workers turns it off (uiConfig.showWorkers = false).
    'hide-workers': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (args.help) {
  process.stderr.write(
    'usage: node bullboard.mjs [--redis URL | --postgres URL [--pg-pool 10]] [--prefix bull] [--port 3000] [--host 127.0.0.1]\n' +
      '                          [--queues 20 | --names-file FILE] [--shared-connection]\n' +
      '                          [--hide-workers]\n',
  );
  process.exit(0);
}

const names = args['names-file']
  ? readFileSync(args['names-file'], 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
  : Array.from({ length: Number.parseInt(args.queues, 10) }, (_, i) => `bench-${String(i).padStart(2, '0')}`);
const nQueues = names.length;
const port = Number.parseInt(args.port, 10);
const connection = args['shared-connection']
  ? new IORedis(args.redis, { maxRetriesPerRequest: null })
  : { url: args.redis, maxRetriesPerRequest: null };

function postgresQueues(url) {
  const require = createRequire(import.meta.url);
  const pg = require('pg');
  const { createPostgresBackend } = require('bullmq/dist/cjs/postgres');
  const pool = new pg.Pool({
    connectionString: url,
    max: Number.parseInt(args['pg-pool'], 10),
    options: '-c search_path=bullmq',
  });
  return names.map((name) => new Queue(name, { connection: pool }, createPostgresBackend));
}

const queues = args.postgres
  ? postgresQueues(args.postgres)
  : names.map((name) => new Queue(name, { connection, prefix: args.prefix }));
await Promise.all(queues.map((q) => q.waitUntilReady()));

const serverAdapter = new ExpressAdapter();
serverAdapter.setBasePath('/');
createBullBoard({
  queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: true })),
  serverAdapter,
  options: {
    uiConfig: args['hide-workers'] ? { showWorkers: false } : {},
  },
});

const app = express();
app.disable('x-powered-by');
app.use('/', serverAdapter.getRouter());

const server = app.listen(port, args.host, () => {
  process.stderr.write(`bull board listening on http://${args.host}:${port}/ (${nQueues} queues)\n`);
});
server.on('error', (err) => {
  process.stderr.write(`bull board: ${err.message}\n`);
  process.exit(1);
});

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  server.close();
  await Promise.allSettled(queues.map((q) => q.close()));
  if (args['shared-connection'] && !args.postgres) connection.disconnect();
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
