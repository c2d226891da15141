"""One MySQL/MariaDB driver of Python through sqlfwd: python3 mysql.py DRIVER
with DRIVER pymysql (PyMySQL) or mysqldb (mysqlclient, on libmariadb).

e2e/drivers_test.go runs it and judges the lines it prints ("step value
...", see e2e/drivers/README.md); the program only reports what the driver
did. Connection settings come from DRV_HOST, DRV_PORT, DRV_USER,
DRV_PASSWORD, DRV_DB (with DRV_SOCKET, the server's unix socket instead of
the address); the table to work in from DRV_TABLE and the procedure with two
result sets from DRV_PROC. With DRV_CA (a CA certificate's file) the
connection is TLS, the server's certificate verified against it. Neither driver has server-side prepared
statements: parameters are interpolated by the client (text protocol).
"""

import os
import sys

E = os.environ
T = E["DRV_TABLE"]
PROC = E["DRV_PROC"]
SOCKET = {"unix_socket": E["DRV_SOCKET"]} if E.get("DRV_SOCKET") else {}
if E.get("DRV_CA"):
    SOCKET["ssl"] = {"ca": E["DRV_CA"], "check_hostname": True}


def out(*a):
    print(*a, flush=True)


# sqlstate returns the SQLSTATE of the last error where the driver keeps
# it (mysqlclient: mysql_sqlstate()); PyMySQL reads it off the ERR packet
# and drops it, so there the application sees the number and the message.
sqlstate = lambda: "-"


def err(step, e):
    errno, msg = e.args[0], e.args[1] if len(e.args) > 1 else ""
    out(step, errno, sqlstate(), str(msg).replace("\n", " "))


def open_(driver):
    if driver == "pymysql":
        import pymysql
        from pymysql.constants import CLIENT

        c = pymysql.connect(host=E["DRV_HOST"], port=int(E["DRV_PORT"]), user=E["DRV_USER"],
                            password=E["DRV_PASSWORD"], database=E["DRV_DB"],
                            client_flag=CLIENT.MULTI_STATEMENTS, autocommit=True, **SOCKET)

        def reset():
            # PyMySQL has no reset of its own; what a pool does with it
            # (SQLAlchemy's reset on return) is a rollback, which keeps
            # session variables
            c.rollback()
            return "none"
        return c, reset, pymysql.Error
    if driver == "mysqldb":
        import MySQLdb
        from MySQLdb.constants import CLIENT

        c = MySQLdb.connect(host=E["DRV_HOST"], port=int(E["DRV_PORT"]), user=E["DRV_USER"],
                            password=E["DRV_PASSWORD"], database=E["DRV_DB"],
                            client_flag=CLIENT.MULTI_STATEMENTS | CLIENT.MULTI_RESULTS, **SOCKET)
        c.autocommit(True)
        global sqlstate
        sqlstate = c.sqlstate

        def reset():
            # COM_CHANGE_USER to the same user: the session starts anew
            c.change_user(E["DRV_USER"], E["DRV_PASSWORD"], E["DRV_DB"])
            return None
        return c, reset, MySQLdb.Error
    raise SystemExit("unknown driver " + driver)


def main():
    c, reset, Error = open_(sys.argv[1])
    cur = c.cursor()

    def q(s, p=None):
        cur.execute(s, p)
        return cur.fetchall()

    def sets(s):
        # every result set of a text with several statements, or of CALL
        cur.execute(s)
        res = []
        while True:
            if cur.description:
                res.append(cur.fetchall())
            if not cur.nextset():
                return res

    out("connect", "ok", "text")
    out("plain", q("select 41+1")[0][0])
    q(f"create table {T} (id int primary key, v varchar(64))")
    for row in [(1, "one"), (2, "two"), (3, "three")]:
        q(f"insert into {T} (id, v) values (%s, %s)", row)
    out("prepared", q(f"select v from {T} where id = %s", (2,))[0][0])

    q("begin")
    q(f"insert into {T} (id, v) values (%s, %s)", (4, "four"))
    try:
        q(f"delete from {T}")
        out("blocked", "not blocked")
    except Error as e:
        err("blocked", e)
    out("in-tx", q(f"select count(*) from {T}")[0][0])
    q("commit")

    try:
        q(f"update {T} set v = %s", ("x",))
        out("blocked-prepare", "not blocked")
    except Error as e:
        err("blocked-prepare", e)
    try:
        sets(f"insert into {T} values (5, 'five'); delete from {T}")
        out("blocked-multi", "not blocked")
    except Error as e:
        err("blocked-multi", e)
    out("after", q(f"select count(*) from {T}")[0][0])

    out("multi", ",".join(str(r[0][0]) for r in sets("select 1 as a; select 2 as b")))
    out("call", ",".join(str(r[0][0]) for r in sets(f"call {PROC}()")))

    big = q("select seq, repeat('x', 100) from seq_1_to_5000")
    out("big", len(big), sum(int(r[0]) for r in big))

    q("set @sqlfw_e2e = 'kept'")
    what = reset()
    cur = c.cursor()
    v = q("select coalesce(@sqlfw_e2e, 'cleared')")[0][0]
    out("reset", what or (v.decode() if isinstance(v, bytes) else v))
    out("after-reset", q(f"select v from {T} where id = %s", (3,))[0][0])
    c.close()
    out("done")


main()
