"""One PostgreSQL driver of Python through sqlfwd: python3 pg.py DRIVER with
DRIVER psycopg2, psycopg (psycopg 3) or asyncpg.

e2e/drivers_test.go runs it and judges the lines it prints ("step value
...", see e2e/drivers/README.md); the program only reports what the driver
did. Connection settings come from DRV_HOST, DRV_PORT, DRV_USER,
DRV_PASSWORD, DRV_DB; the table (id int primary key, v text, made by the
test) from DRV_TABLE; with DRV_CA (a CA certificate's file) the connection
is TLS, the server's certificate verified against it. psycopg2 interpolates parameters in the client;
psycopg 3 with prepare=True and asyncpg use named server-side statements.
"""

import asyncio
import os
import sys

E = os.environ
T = E["DRV_TABLE"]
CONN = dict(host=E["DRV_HOST"], port=int(E["DRV_PORT"]), user=E["DRV_USER"], password=E["DRV_PASSWORD"])
LIBPQ_TLS = dict(sslmode="verify-full", sslrootcert=E["DRV_CA"]) if E.get("DRV_CA") else dict(sslmode="disable")


def out(*a):
    print(*a, flush=True)


class Sync:
    """psycopg2 and psycopg 3 behind one interface: q runs a text with no
    parameters (the simple query protocol, several statements allowed) and
    returns the rows of each statement, x one statement with parameters."""

    def __init__(self, driver):
        self.driver = driver
        if driver == "psycopg2":
            import psycopg2

            self.c = psycopg2.connect(dbname=E["DRV_DB"], **CONN, **LIBPQ_TLS)
            self.Error = psycopg2.Error
            self.ph = "%s"
        else:
            import psycopg

            self.c = psycopg.connect(dbname=E["DRV_DB"], **CONN, **LIBPQ_TLS)
            self.Error = psycopg.Error
            self.ph = "%s"
        self.c.autocommit = True

    def code(self, e):
        return e.pgcode if self.driver == "psycopg2" else e.sqlstate

    def q(self, s):
        cur = self.c.cursor()
        if self.driver == "psycopg2":
            # psycopg2 returns only the last statement's result
            cur.execute(s)
            return [cur.fetchall() if cur.description else []]
        # psycopg 3: a text without parameters goes as one simple Query;
        # nextset walks its results
        cur.execute(s, prepare=False)
        res = []
        while True:
            res.append(cur.fetchall() if cur.description else [])
            if not cur.nextset():
                return res

    def x(self, s, p):
        cur = self.c.cursor()
        if self.driver == "psycopg2":
            cur.execute(s, p)
        else:
            cur.execute(s, p, prepare=True)
        return cur.fetchall() if cur.description else []


def run_sync(driver):
    c = Sync(driver)
    out("connect", "ok")
    out("plain", c.q("select 41+1")[0][0][0])
    for row in [(1, "one"), (2, "two"), (3, "three")]:
        c.x(f"insert into {T} (id, v) values (%s, %s)", row)
    out("prepared", c.x(f"select v from {T} where id = %s", (2,))[0][0])

    c.q("begin")
    c.x(f"insert into {T} (id, v) values (%s, %s)", (4, "four"))
    try:
        c.q(f"delete from {T}")
        out("blocked", "not blocked")
    except c.Error as e:
        out("blocked", c.code(e), str(e).strip().split("\n")[0])
    try:
        c.q("select 1")
        out("in-tx", "ran")
    except c.Error as e:
        out("in-tx", c.code(e))
    c.q("rollback")

    try:
        c.x(f"update {T} set v = %s", ("x",))
        out("blocked-prepare", "not blocked")
    except c.Error as e:
        out("blocked-prepare", c.code(e), str(e).strip().split("\n")[0])
    try:
        c.q(f"insert into {T} values (5, 'five'); delete from {T}")
        out("blocked-multi", "not blocked")
    except c.Error as e:
        out("blocked-multi", c.code(e), str(e).strip().split("\n")[0])
    out("after", c.q(f"select count(*) from {T}")[0][0][0])

    if driver == "psycopg2":
        # one result per execute: two executes
        out("multi", ",".join(str(c.q(s)[0][0][0]) for s in ("select 1", "select 2")))
    else:
        out("multi", ",".join(str(r[0][0]) for r in c.q("select 1 as a; select 2 as b")))

    big = c.q("select g, repeat('x', 100) from generate_series(1, 5000) g")[0]
    out("big", len(big), sum(r[0] for r in big))
    bigx = c.x("select g, repeat('x', 100) from generate_series(1, %s::int) g", (5000,))
    out("big-binary", len(bigx), sum(r[0] for r in bigx))

    if driver == "psycopg":
        # pipeline mode: several statements sent before one Sync; a blocked
        # one fails there and the pipeline's later statements are skipped
        import psycopg

        try:
            with c.c.pipeline():
                cur = c.c.cursor()
                cur.execute(f"insert into {T} (id, v) values (%s, %s)", (6, "six"), prepare=True)
                cur.execute(f"delete from {T}", prepare=True)
                cur.execute(f"insert into {T} (id, v) values (%s, %s)", (7, "seven"), prepare=True)
            out("pipeline", "not blocked")
        except psycopg.Error as e:
            out("pipeline", e.sqlstate, str(e).strip().split("\n")[0])
        out("after-pipeline", c.q(f"select count(*) from {T}")[0][0][0])

    if driver == "psycopg":
        import threading
        import time

        # COPY in and out
        cur = c.c.cursor()
        with cur.copy(f"copy {T} (id, v) from stdin") as cp:
            for i in range(1000, 2000):
                cp.write_row((i, "copy"))
        n = 0
        with cur.copy(f"copy (select id from {T} where v = 'copy') to stdout") as cp:
            for _ in cp.rows():
                n += 1
        c.q(f"delete from {T} where v = 'copy'")
        out("copy", n)
        # a notification from another session arrives on this one
        got = []
        c.c.add_notify_handler(lambda nt: got.append(nt.payload))
        c.q(f"listen {T}")
        other = psycopg.connect(dbname=E["DRV_DB"], autocommit=True, **CONN, **LIBPQ_TLS)
        other.execute(f"notify {T}, 'hello'")
        other.close()
        time.sleep(0.2)
        c.q("select 1")
        out("notify", ",".join(got))
        # a CancelRequest (a connection of its own through sqlfwd) stops
        # the running statement
        threading.Timer(0.5, c.c.cancel).start()
        try:
            c.q("select pg_sleep(5)")
            out("cancel", "not cancelled")
        except psycopg.Error as e:
            out("cancel", e.sqlstate)

    # DISCARD ALL, what a pool sends between clients: settings and prepared
    # statements are gone (psycopg 3 forgets its own on seeing it)
    c.q("set application_name = 'sqlfw_e2e_kept'")
    c.q("discard all")
    out("reset", c.q("select case when current_setting('application_name') = 'sqlfw_e2e_kept' then 'kept' else 'cleared' end")[0][0][0])
    out("after-reset", c.x(f"select v from {T} where id = %s", (3,))[0][0])
    c.c.close()
    out("done")


async def run_asyncpg():
    import asyncpg

    import ssl

    tls = ssl.create_default_context(cafile=E["DRV_CA"]) if E.get("DRV_CA") else False
    pool = await asyncpg.create_pool(database=E["DRV_DB"], min_size=1, max_size=1, ssl=tls, **CONN)
    c = await pool.acquire()
    out("connect", "ok")
    out("plain", await c.fetchval("select 41+1"))
    # asyncpg prepares every statement with arguments under a name
    for row in [(1, "one"), (2, "two"), (3, "three")]:
        await c.execute(f"insert into {T} (id, v) values ($1, $2)", *row)
    out("prepared", await c.fetchval(f"select v from {T} where id = $1", 2))

    await c.execute("begin")
    await c.execute(f"insert into {T} (id, v) values ($1, $2)", 4, "four")
    try:
        await c.execute(f"delete from {T}")  # no arguments: a simple Query
        out("blocked", "not blocked")
    except asyncpg.PostgresError as e:
        out("blocked", e.sqlstate, str(e).split("\n")[0])
    try:
        await c.execute("select 1")
        out("in-tx", "ran")
    except asyncpg.PostgresError as e:
        out("in-tx", e.sqlstate)
    await c.execute("rollback")

    try:
        await c.execute(f"update {T} set v = $1", "x")
        out("blocked-prepare", "not blocked")
    except asyncpg.PostgresError as e:
        out("blocked-prepare", e.sqlstate, str(e).split("\n")[0])
    try:
        await c.execute(f"insert into {T} values (5, 'five'); delete from {T}")
        out("blocked-multi", "not blocked")
    except asyncpg.PostgresError as e:
        out("blocked-multi", e.sqlstate, str(e).split("\n")[0])
    out("after", await c.fetchval(f"select count(*) from {T}"))
    # execute() of a text without arguments runs every statement in it and
    # returns no rows: the two values come back through a table
    await c.execute(f"insert into {T} values (101, 'multi'); insert into {T} values (102, 'multi')")
    got = await c.fetch(f"select id - 100 as n from {T} where v = 'multi' order by id")
    await c.execute(f"delete from {T} where v = 'multi'")
    out("multi", ",".join(str(r["n"]) for r in got))

    big = await c.fetch("select g, repeat('x', 100) from generate_series(1, 5000) g")
    out("big", len(big), sum(r[0] for r in big))
    bigx = await c.fetch("select g, repeat('x', 100) from generate_series(1, $1::int) g", 5000)
    out("big-binary", len(bigx), sum(r[0] for r in bigx))
    # a cursor fetching in chunks (portal with a row limit), in a transaction
    n = 0
    async with c.transaction():
        async for r in c.cursor("select g from generate_series(1, $1::int) g", 5000, prefetch=500):
            n += r[0]
    out("cursor", n)
    # COPY in through copy_records_to_table
    res = await c.copy_records_to_table(T, records=[(1000 + i, "copy") for i in range(1000)], columns=["id", "v"])
    await c.execute(f"delete from {T} where v = 'copy'")
    out("copy", res.split()[-1])
    # a timeout: asyncpg sends a CancelRequest and the connection goes on
    try:
        await c.fetch("select pg_sleep(5)", timeout=0.5)
        out("cancel", "not cancelled")
    except asyncio.TimeoutError:
        out("cancel", "57014")

    # the pool's reset on release (RESET ALL, CLOSE ALL, UNLISTEN *, advisory
    # unlocks), then the same connection again
    await c.execute("set application_name = 'sqlfw_e2e_kept'")
    await pool.release(c)
    c = await pool.acquire()
    kept = await c.fetchval("select current_setting('application_name')")
    out("reset", "kept" if kept == "sqlfw_e2e_kept" else "cleared")
    out("after-reset", await c.fetchval(f"select v from {T} where id = $1", 3))
    await pool.release(c)
    await pool.close()
    out("done")


def main():
    driver = sys.argv[1]
    if driver == "asyncpg":
        asyncio.run(run_asyncpg())
    elif driver in ("psycopg2", "psycopg"):
        run_sync(driver)
    else:
        raise SystemExit("unknown driver " + driver)


main()
