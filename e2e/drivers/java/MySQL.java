// One MySQL/MariaDB JDBC driver through sqlfwd, run from source:
// java -cp mariadb-java-client.jar MySQL.java mariadb (MariaDB
// Connector/J with useServerPrepStmts=true: COM_STMT_PREPARE and the binary
// protocol). e2e/drivers_test.go runs it and judges the lines it prints
// ("step value ...", see e2e/drivers/README.md); the program only reports
// what the driver did. Connection settings come from DRV_HOST, DRV_PORT,
// DRV_USER, DRV_PASSWORD, DRV_DB; the table to work in from DRV_TABLE and
// the procedure with two result sets from DRV_PROC. With DRV_CA (a CA
// certificate's file) the connection is TLS, the server's certificate
// verified against it.

import java.sql.*;
import java.util.*;
import javax.sql.DataSource;

public class MySQL {
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

    static void err(String step, SQLException e) {
        // Connector/J puts its connection id before the server's message
        out(step, e.getErrorCode(), e.getSQLState(), e.getMessage().replaceFirst("^\\(conn=\\d+\\) ", "").replace('\n', ' '));
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

    // q: a Statement (COM_QUERY); x: a PreparedStatement (server-side)
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

    // sets: the first column of the first row of every result set
    static String sets(Statement st, boolean has) throws SQLException {
        StringJoiner j = new StringJoiner(",");
        while (true) {
            if (has) {
                List<List<Object>> r = rows(st.getResultSet());
                if (!r.isEmpty()) j.add(String.valueOf(r.get(0).get(0)));
            } else if (st.getUpdateCount() == -1) {
                return j.toString();
            }
            has = st.getMoreResults();
        }
    }

    static long sum(List<List<Object>> rows) {
        long s = 0;
        for (List<Object> r : rows) s += ((Number) r.get(0)).longValue();
        return s;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1 || !args[0].equals("mariadb")) throw new IllegalArgumentException("usage: MySQL.java mariadb");
        String T = env("DRV_TABLE"), PROC = env("DRV_PROC");
        String url = "jdbc:mariadb://" + env("DRV_HOST") + ":" + env("DRV_PORT") + "/" + env("DRV_DB")
                + "?user=" + env("DRV_USER") + "&password=" + env("DRV_PASSWORD")
                + "&useServerPrepStmts=true&allowMultiQueries=true&maxPoolSize=1&useResetConnection=true&allowLocalInfile=true";
        String ca = System.getenv("DRV_CA");
        if (ca != null && !ca.isEmpty()) url += "&useSsl=true&serverSslCert=" + ca;
        // the driver's own pool: a connection given back is reset
        // (COM_RESET_CONNECTION, useResetConnection)
        Class<?> pc = Class.forName("org.mariadb.jdbc.MariaDbPoolDataSource");
        DataSource pool = (DataSource) pc.getConstructor(String.class).newInstance(url);
        c = pool.getConnection();
        out("connect", "ok", "binary");
        out("plain", q("select 41+1").get(0).get(0));
        q("create table " + T + " (id int primary key, v varchar(64))");
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
        out("in-tx", q("select count(*) from " + T).get(0).get(0));
        c.commit();
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
            out("multi", sets(st, st.execute("select 1 as a; select 2 as b")));
        }
        try (Statement st = c.createStatement()) {
            out("call", sets(st, st.execute("call " + PROC + "()")));
        }
        try (PreparedStatement st = c.prepareStatement("call " + PROC + "()")) {
            out("call-binary", sets(st, st.execute()));
        }

        // executeBatch of a prepared statement: MariaDB's bulk command
        // (COM_STMT_BULK_EXECUTE, useBulkStmts)
        try (PreparedStatement st = c.prepareStatement("insert into " + T + " (id, v) values (?, ?)")) {
            for (int i = 6; i <= 8; i++) {
                st.setInt(1, i);
                st.setString(2, "batch");
                st.addBatch();
            }
            int n = 0;
            for (int k : st.executeBatch()) n += k == Statement.SUCCESS_NO_INFO ? 1 : k;
            out("batch", n);
        }
        try (PreparedStatement st = c.prepareStatement("update " + T + " set v = ?")) {
            st.setString(1, "x");
            st.addBatch();
            st.setString(1, "y");
            st.addBatch();
            st.executeBatch();
            out("blocked-batch", "not blocked");
        } catch (SQLException e) {
            err("blocked-batch", e);
        }
        q("delete from " + T + " where id >= 6");

        List<List<Object>> big = q("select seq, repeat('x', 100) from seq_1_to_5000");
        out("big", big.size(), sum(big));
        List<List<Object>> bigx = x("select seq, repeat('x', 100) from seq_1_to_5000 where seq <= ?", 5000);
        out("big-binary", bigx.size(), sum(bigx));

        // a stream parameter: COM_STMT_SEND_LONG_DATA before the execute
        try (PreparedStatement st = c.prepareStatement("select length(?)")) {
            st.setBinaryStream(1, new java.io.ByteArrayInputStream(new byte[3 << 20]));
            List<List<Object>> r = rows(st.executeQuery());
            out("long-data", r.get(0).get(0));
        }
        // Statement.cancel: KILL QUERY on a connection of the driver's own
        try (Statement st = c.createStatement()) {
            new Thread(() -> {
                try {
                    Thread.sleep(500);
                    st.cancel();
                } catch (Exception e) {
                    out("cancel-error", e);
                }
            }).start();
            st.executeQuery("select sleep(5)");
            out("cancel", "not cancelled");
        } catch (SQLException e) {
            out("cancel", e.getErrorCode());
        }
        // LOAD DATA LOCAL INFILE
        java.nio.file.Path f = java.nio.file.Files.createTempFile("sqlfw-e2e", ".tsv");
        java.nio.file.Files.writeString(f, "100\tinfile\n101\tinfile\n");
        out("infile", c.createStatement().executeUpdate("load data local infile '" + f + "' into table " + T));
        java.nio.file.Files.delete(f);
        q("delete from " + T + " where v = 'infile'");

        q("set @sqlfw_e2e = 'kept'");
        c.close();
        c = pool.getConnection();
        out("reset", q("select cast(coalesce(@sqlfw_e2e, 'cleared') as char)").get(0).get(0));
        out("after-reset", x("select v from " + T + " where id = ?", 3).get(0).get(0));
        c.close();
        ((AutoCloseable) pool).close();
        out("done");
    }
}
