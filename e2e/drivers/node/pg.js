// One PostgreSQL driver of Node.js through sqlfwd: node pg.js DRIVER with
// DRIVER pg (node-postgres) or postgres (Postgres.js). e2e/drivers_test.go
// runs it and judges the lines it prints ("step value ...", see
// e2e/drivers/README.md); the program only reports what the driver did.
// Connection settings come from DRV_HOST, DRV_PORT, DRV_USER, DRV_PASSWORD,
// DRV_DB; the table (id int primary key, v text, made by the test) from
// DRV_TABLE. With DRV_CA (a CA certificate's file) the connection is TLS,
// the server's certificate verified against it.
'use strict';

const fs = require('fs');

const env = (k) => {
  if (!process.env[k]) throw new Error(k + ' not set');
  return process.env[k];
};
const cfg = {
  host: env('DRV_HOST'), port: Number(env('DRV_PORT')), user: env('DRV_USER'),
  password: env('DRV_PASSWORD'), database: env('DRV_DB'),
};
if (process.env.DRV_CA) cfg.ssl = { ca: fs.readFileSync(process.env.DRV_CA), rejectUnauthorized: true };
const T = env('DRV_TABLE');
const out = (...a) => console.log(a.join(' '));
const err = (step, e) => out(step, e.code ?? '-', String(e.message).replace(/\n/g, ' '));

// Each driver behind one small interface: q (simple query protocol, several
// statements allowed), x (extended protocol with a named, server-side
// prepared statement) and end.
async function open(driver) {
  switch (driver) {
    case 'pg': {
      const { Client } = require('pg');
      const c = new Client(cfg);
      await c.connect();
      let n = 0;
      const names = new Map();
      return {
        // node-postgres sends a text without values as one simple Query
        q: async (s) => {
          const r = await c.query(s);
          return (Array.isArray(r) ? r : [r]).map((x) => x.rows);
        },
        // a name per text: Parse once under that name, then Bind/Execute
        x: async (s, p) => {
          if (!names.has(s)) names.set(s, 'drv' + n++);
          return (await c.query({ name: names.get(s), text: s, values: p })).rows;
        },
        forget: () => names.clear(),
        end: () => c.end(),
      };
    }
    case 'postgres': {
      const postgres = require('postgres');
      // prepare: true (the default) names every statement and reuses it
      const sql = postgres({ ...cfg, max: 1, prepare: true, onnotice: () => {} });
      return {
        q: async (s) => {
          const r = await sql.unsafe(s).simple();
          return r.length && Array.isArray(r[0]) ? r.map((x) => [...x]) : [[...r]];
        },
        x: async (s, p) => [...(await sql.unsafe(s, p, { prepare: true }))],
        forget: () => {},
        end: () => sql.end(),
      };
    }
  }
  throw new Error('unknown driver ' + driver);
}

const first = (rows) => Object.values(rows[0])[0];

async function main() {
  const c = await open(process.argv[2]);
  out('connect', 'ok');
  out('plain', first((await c.q('select 41+1 as n'))[0]));
  for (const [id, v] of [[1, 'one'], [2, 'two'], [3, 'three']]) {
    await c.x(`insert into ${T} (id, v) values ($1, $2)`, [id, v]);
  }
  out('prepared', first(await c.x(`select v from ${T} where id = $1`, [2])));

  await c.q('begin');
  await c.x(`insert into ${T} (id, v) values ($1, $2)`, [4, 'four']);
  try {
    await c.q(`delete from ${T}`);
    out('blocked', 'not blocked');
  } catch (e) { err('blocked', e); }
  // the transaction is aborted, as after any error in PostgreSQL
  try {
    await c.q('select 1');
    out('in-tx', 'ran');
  } catch (e) { out('in-tx', e.code); }
  await c.q('rollback');

  try {
    await c.x(`update ${T} set v = $1`, ['x']);
    out('blocked-prepare', 'not blocked');
  } catch (e) { err('blocked-prepare', e); }
  try {
    await c.q(`insert into ${T} values (5, 'five'); delete from ${T}`);
    out('blocked-multi', 'not blocked');
  } catch (e) { err('blocked-multi', e); }
  out('after', first((await c.q(`select count(*)::int from ${T}`))[0]));

  out('multi', (await c.q('select 1 as a; select 2 as b')).map(first).join(','));

  const sum = (rows) => rows.reduce((s, r) => s + Number(r.seq), 0);
  const big = (await c.q("select g as seq, repeat('x', 100) as pad from generate_series(1, 5000) g"))[0];
  out('big', big.length, sum(big));
  const bigx = await c.x("select g as seq, repeat('x', 100) as pad from generate_series(1, $1::int) g", [5000]);
  out('big-binary', bigx.length, sum(bigx));

  // DISCARD ALL, what a pool sends between clients: session settings and
  // prepared statements are gone, and new ones work
  await c.q("set application_name = 'sqlfw_e2e_kept'");
  await c.q('discard all');
  c.forget();
  out('reset', first((await c.q("select case when current_setting('application_name') = 'sqlfw_e2e_kept' then 'kept' else 'cleared' end"))[0]));
  out('after-reset', first(await c.x(`select v from ${T} where id = $1 and true`, [3])));
  await c.end();
  out('done');
}

main().catch((e) => { console.error('fatal:', e); process.exit(1); });
