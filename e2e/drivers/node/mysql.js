// One MySQL/MariaDB driver of Node.js through sqlfwd: node mysql.js DRIVER
// with DRIVER mysql2, mariadb or mysql. e2e/drivers_test.go runs it and
// judges the lines it prints ("step value ...", see e2e/drivers/README.md);
// the program only reports what the driver did. Connection settings come
// from DRV_HOST, DRV_PORT, DRV_USER, DRV_PASSWORD, DRV_DB; the table to
// work in from DRV_TABLE and the procedure with two result sets from
// DRV_PROC. With DRV_CA (a CA certificate's file) the connection is TLS,
// the server's certificate verified against it.
'use strict';

const fs = require('fs');

const env = (k) => {
  if (!process.env[k]) throw new Error(k + ' not set');
  return process.env[k];
};
const cfg = {
  host: env('DRV_HOST'), port: Number(env('DRV_PORT')), user: env('DRV_USER'),
  password: env('DRV_PASSWORD'), database: env('DRV_DB'), multipleStatements: true,
};
if (process.env.DRV_CA) cfg.ssl = { ca: fs.readFileSync(process.env.DRV_CA), rejectUnauthorized: true };
const T = env('DRV_TABLE');
const PROC = env('DRV_PROC');
const out = (...a) => console.log(a.join(' '));
// err prints what the driver surfaced for a failed statement.
const err = (step, e) => {
  out(step, e.errno ?? '-', e.sqlState ?? e.sqlstate ?? '-', String(e.sqlMessage ?? e.text ?? e.message).replace(/\n/g, ' '));
};

// Each driver behind the same small interface: q (text protocol), x
// (server-side prepared statement, binary protocol, where the driver has
// one), reset (the driver's connection reset) and end.
async function open(driver) {
  switch (driver) {
    case 'mysql2': {
      const mysql = require('mysql2/promise');
      const pool = mysql.createPool({
        ...cfg, connectionLimit: 1, resetOnRelease: true,
        flags: ['+LOCAL_FILES'], infileStreamFactory: (p) => fs.createReadStream(p),
      });
      let c = await pool.getConnection();
      return {
        binary: true,
        q: async (s, p) => (await c.query(s, p))[0],
        x: async (s, p) => (await c.execute(s, p))[0],
        // released to the pool, which resets it (COM_RESET_CONNECTION),
        // and taken again
        reset: async () => { c.release(); c = await pool.getConnection(); },
        end: async () => { c.release(); await pool.end(); },
      };
    }
    case 'mariadb': {
      const mariadb = require('mariadb');
      const pool = mariadb.createPool({ ...cfg, connectionLimit: 1, resetAfterUse: true, permitLocalInfile: true });
      let c = await pool.getConnection();
      return {
        binary: true,
        q: (s, p) => c.query(s, p),
        x: (s, p) => c.execute(s, p),
        reset: async () => { await c.reset(); await c.release(); c = await pool.getConnection(); },
        // COM_STMT_BULK_EXECUTE: one prepared statement, every row's
        // parameters in one command
        batch: (s, rows) => c.batch(s, rows),
        end: async () => { await c.release(); await pool.end(); },
      };
    }
    case 'mysql': {
      // the old driver: text protocol only, parameters interpolated by
      // the client; its reset is COM_CHANGE_USER
      const mysql = require('mysql');
      const c = mysql.createConnection(cfg);
      const call = (f) => new Promise((res, rej) => f((e, r) => (e ? rej(e) : res(r))));
      await call((cb) => c.connect(cb));
      const q = (s, p) => call((cb) => c.query(s, p ?? [], cb));
      return {
        binary: false,
        q, x: q,
        reset: () => call((cb) => c.changeUser({ user: cfg.user, password: cfg.password, database: cfg.database }, cb)),
        end: () => call((cb) => c.end(cb)),
      };
    }
  }
  throw new Error('unknown driver ' + driver);
}

const first = (rows) => Object.values(rows[0])[0];

async function main() {
  const driver = process.argv[2];
  const c = await open(driver);
  out('connect', 'ok', c.binary ? 'binary' : 'text');
  out('plain', first(await c.q('select 41+1 as n')));
  await c.q(`create table ${T} (id int primary key, v varchar(64))`);
  for (const [id, v] of [[1, 'one'], [2, 'two'], [3, 'three']]) {
    await c.x(`insert into ${T} (id, v) values (?, ?)`, [id, v]);
  }
  out('prepared', first(await c.x(`select v from ${T} where id = ?`, [2])));

  await c.q('begin');
  await c.x(`insert into ${T} (id, v) values (?, ?)`, [4, 'four']);
  try {
    await c.q(`delete from ${T}`);
    out('blocked', 'not blocked');
  } catch (e) { err('blocked', e); }
  out('in-tx', first(await c.q(`select count(*) from ${T}`)));
  await c.q('commit');

  try {
    await c.x(`update ${T} set v = ?`, ['x']);
    out('blocked-prepare', 'not blocked');
  } catch (e) { err('blocked-prepare', e); }
  try {
    await c.q(`insert into ${T} values (5, 'five'); delete from ${T}`);
    out('blocked-multi', 'not blocked');
  } catch (e) { err('blocked-multi', e); }
  out('after', first(await c.q(`select count(*) from ${T}`)));

  const multi = await c.q('select 1 as a; select 2 as b');
  out('multi', multi.filter(Array.isArray).map(first).join(','));
  const call = await c.q(`call ${PROC}()`);
  out('call', call.filter(Array.isArray).map(first).join(','));
  if (c.binary) {
    const callx = await c.x(`call ${PROC}()`);
    out('call-binary', callx.filter(Array.isArray).map(first).join(','));
  }

  if (driver === 'mariadb') {
    // pipelining (the default): the three commands are sent before any
    // answer comes back; sqlfw's ERR for the middle one must come in its
    // place among the server's answers
    const r = await Promise.allSettled([c.q('select 1 as a'), c.q(`delete from ${T}`), c.x('select ? as a', [3])]);
    out('pipeline', r.map((x) => (x.status === 'fulfilled' ? first(x.value) : x.reason.errno)).join(','));
    const b = await c.batch(`insert into ${T} (id, v) values (?, ?)`, [[6, 'six'], [7, 'seven'], [8, 'eight']]);
    out('batch', b.affectedRows);
    try {
      await c.batch(`update ${T} set v = ?`, [['x'], ['y']]);
      out('blocked-batch', 'not blocked');
    } catch (e) { err('blocked-batch', e); }
    await c.q(`delete from ${T} where id >= 6`);
  }

  if (driver !== 'mysql') {
    // LOAD DATA LOCAL INFILE: the server asks for the file, the driver
    // sends it
    const f = require('os').tmpdir() + `/sqlfw-e2e-${T}.tsv`;
    fs.writeFileSync(f, '100\tinfile\n101\tinfile\n');
    const r = await c.q(`load data local infile '${f}' into table ${T}`);
    fs.unlinkSync(f);
    out('infile', r.affectedRows);
    await c.q(`delete from ${T} where v = 'infile'`);
  }

  const sum = (rows) => rows.reduce((s, r) => s + Number(r.seq), 0);
  const big = await c.q("select seq, repeat('x', 100) as pad from seq_1_to_5000");
  out('big', big.length, sum(big));
  if (c.binary) {
    const bigx = await c.x("select seq, repeat('x', 100) as pad from seq_1_to_5000 where seq <= ?", [5000]);
    out('big-binary', bigx.length, sum(bigx));
  }

  await c.q("set @sqlfw_e2e = 'kept'");
  await c.reset();
  out('reset', first(await c.q('select coalesce(@sqlfw_e2e, \'cleared\') as v')));
  out('after-reset', first(await c.x(`select v from ${T} where id = ?`, [3])));
  await c.end();
  out('done');
}

main().catch((e) => { console.error('fatal:', e); process.exit(1); });
