// The PostgreSQL JDBC driver (pgjdbc) through sqlfwd, run from source:
// java -cp postgresql.jar PG.java pgjdbc, with prepareThreshold=1 (named
// server-side statements from the first execution). e2e/drivers_test.go
// runs it and judges the lines it prints ("step value ...", see
// e2e/drivers/README.md); the program only reports what the driver did.
// Connection settings come from DRV_HOST, DRV_PORT, DRV_USER, DRV_PASSWORD,
// DRV_DB; the table (id int primary key, v text, made by the test) from
// DRV_TABLE; with DRV_CA (a CA certificate's file) the connection is TLS,
// the server's certificate verified against it. pgjdbc speaks only the extended protocol: a text of several
// statements goes as several Parse/Bind/Execute before one Sync.

import java.sql.*;
import java.util.*;

public class PG {
    static String env(String k) {
        String v = System.getenv(k);
        if (v == null || v.isEmpty()) throw new IllegalStateException(k + " not set");
        return v;
    }

    static void out(Object... a) {
        StringJoiner j = new StringJoiner(" ");
        for (Object o : a) j.add(String.valueOf(o));
        System.out.println(j);
    }

    // pgjdbc's message is "ERROR: <message>" and, on more lines, details
    static void err(String step, SQLException e) {
        out(step, e.getSQLState(), e.getMessage().split("\n")[0].replaceFirst("^ERROR: ", ""));
    }

    static Connection c;

    static List<List<Object>> rows(ResultSet r) throws SQLException {
        List<List<Object>> res = new ArrayList<>();
        int n = r.getMetaData().getColumnCount();
        while (r.next()) {
            List<Object> row = new ArrayList<>();
            for (int i = 1; i <= n; i++) row.add(r.getObject(i));
            res.add(row);
        }
        return res;
    }

    static List<List<Object>> q(String s) throws SQLException {
        try (Statement st = c.createStatement()) {
            return st.execute(s) ? rows(st.getResultSet()) : List.of();
        }
    }

    static List<List<Object>> x(String s, Object... p) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(s)) {
            for (int i = 0; i < p.length; i++) st.setObject(i + 1, p[i]);
            return st.execute() ? rows(st.getResultSet()) : List.of();
        }
    }

    static long sum(List<List<Object>> rows) {
        long s = 0;
        for (List<Object> r : rows) s += ((Number) r.get(0)).longValue();
        return s;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].equals("pgjdbc")) throw new IllegalArgumentException("usage: PG.java pgjdbc");
        String T = env("DRV_TABLE");
        Properties p = new Properties();
        p.setProperty("user", env("DRV_USER"));
        p.setProperty("password", env("DRV_PASSWORD"));
        p.setProperty("prepareThreshold", "1");
        String ca = System.getenv("DRV_CA");
        if (ca != null && !ca.isEmpty()) {
            p.setProperty("sslmode", "verify-full");
            p.setProperty("sslrootcert", ca);
        } else {
            p.setProperty("sslmode", "disable");
        }
        c = DriverManager.getConnection("jdbc:postgresql://" + env("DRV_HOST") + ":" + env("DRV_PORT") + "/" + env("DRV_DB"), p);
        out("connect", "ok");
        out("plain", q("select 41+1").get(0).get(0));
        x("insert into " + T + " (id, v) values (?, ?)", 1, "one");
        x("insert into " + T + " (id, v) values (?, ?)", 2, "two");
        x("insert into " + T + " (id, v) values (?, ?)", 3, "three");
        out("prepared", x("select v from " + T + " where id = ?", 2).get(0).get(0));

        c.setAutoCommit(false);
        x("insert into " + T + " (id, v) values (?, ?)", 4, "four");
        try {
            q("delete from " + T);
            out("blocked", "not blocked");
        } catch (SQLException e) {
            err("blocked", e);
        }
        try {
            q("select 1");
            out("in-tx", "ran");
        } catch (SQLException e) {
            out("in-tx", e.getSQLState());
        }
        c.rollback();
        c.setAutoCommit(true);

        try {
            x("update " + T + " set v = ?", "x");
            out("blocked-prepare", "not blocked");
        } catch (SQLException e) {
            err("blocked-prepare", e);
        }
        try {
            q("insert into " + T + " values (5, 'five'); delete from " + T);
            out("blocked-multi", "not blocked");
        } catch (SQLException e) {
            err("blocked-multi", e);
        }
        out("after", q("select count(*) from " + T).get(0).get(0));

        try (Statement st = c.createStatement()) {
            StringJoiner j = new StringJoiner(",");
            for (boolean has = st.execute("select 1 as a; select 2 as b"); has || st.getUpdateCount() != -1; has = st.getMoreResults()) {
                if (has) j.add(String.valueOf(rows(st.getResultSet()).get(0).get(0)));
            }
            out("multi", j);
        }

        List<List<Object>> big = q("select g, repeat('x', 100) from generate_series(1, 5000) g");
        out("big", big.size(), sum(big));
        List<List<Object>> bigx = x("select g, repeat('x', 100) from generate_series(1, ?::int) g", 5000);
        out("big-binary", bigx.size(), sum(bigx));
        // a fetch size inside a transaction: a portal read 500 rows at a
        // time (Execute with a row limit, PortalSuspended)
        c.setAutoCommit(false);
        try (PreparedStatement st = c.prepareStatement("select g from generate_series(1, ?::int) g")) {
            st.setFetchSize(500);
            st.setInt(1, 5000);
            long n = 0;
            try (ResultSet r = st.executeQuery()) {
                while (r.next()) n += r.getLong(1);
            }
            out("cursor", n);
        }
        c.commit();
        c.setAutoCommit(true);

        // a query timeout: pgjdbc sends a CancelRequest on a connection of
        // its own
        try (Statement st = c.createStatement()) {
            st.setQueryTimeout(1);
            st.execute("select pg_sleep(5)");
            out("cancel", "not cancelled");
        } catch (SQLException e) {
            out("cancel", e.getSQLState());
        }

        // DISCARD ALL, what a pool sends between clients; pgjdbc notices
        // it and forgets its server-side statements
        q("set application_name = 'sqlfw_e2e_kept'");
        q("discard all");
        out("reset", q("select case when current_setting('application_name') = 'sqlfw_e2e_kept' then 'kept' else 'cleared' end").get(0).get(0));
        out("after-reset", x("select v from " + T + " where id = ?", 3).get(0).get(0));
        c.close();
        out("done");
    }
}
