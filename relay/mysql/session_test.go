package mysql

import (
	"testing"

	wire "github.com/sqlfw/sqlfw/wire/mysql"
)

const inTx = wire.StatusInTrans

func TestSession(t *testing.T) {
	blocked := func(seq int, sub string) step { return expectErr(seq, errBlocked, "42000", sub) }
	for _, tc := range []struct {
		name           string
		server, client []step
	}{
		{"allowed query relayed, quit",
			[]step{expect(query("select 1")), send(resultSet(autocommit)), expect(pkt(0, wire.ComQuit)), expectClosed()},
			[]step{send(query("select 1")), expect(resultSet(autocommit)), send(pkt(0, wire.ComQuit))}},
		{"blocked query answered and never sent; the connection keeps working",
			[]step{expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query("delete from t")), blocked(1, "sqlfw: statement blocked by rule no-delete"),
				send(query("select 1")), expect(resultSet(autocommit))}},
		{"a transaction stays open around a block",
			[]step{expect(query("begin")), send(ok(1, autocommit|inTx)), expect(query("commit")), send(ok(1, autocommit))},
			[]step{send(query("begin")), expect(ok(1, autocommit|inTx)), send(query("delete from t")), blocked(1, "no-delete"),
				send(query("commit")), expect(ok(1, autocommit))}},
		{"multi-statement with one denied: one ERR, nothing sent",
			[]step{expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query("select 1; delete from t; select 2")), blocked(1, "none of the 3 statements"),
				send(query("select 1")), expect(resultSet(autocommit))}},
		{"pipelined: the ERR comes after the answer it follows",
			[]step{expect(query("select 1")), expect(query("select 2")), send(resultSet(autocommit)), send(resultSet(autocommit))},
			[]step{send(query("select 1"), query("delete from t"), query("select 2")),
				expect(resultSet(autocommit)), blocked(1, "no-delete"), expect(resultSet(autocommit))}},
		{"one byte at a time",
			[]step{expect(query("select 1")), sendBytewise(resultSet(autocommit))},
			[]step{sendBytewise(query("delete from t")), blocked(1, "no-delete"), sendBytewise(query("select 1")), expect(resultSet(autocommit))}},
		{"deny_and_close: the ERR, then the connection closes",
			[]step{expectClosed()},
			[]step{send(query("drop table t")), blocked(1, "closing the connection"), expectClosed()}},
		{"replication commands are refused",
			[]step{expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))},
			[]step{send(pkt(0, wire.ComBinlogDump, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0)), blocked(1, "COM_BINLOG_DUMP is not relayed"),
				send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))}},
		{"LOAD DATA LOCAL: the file request and the upload relayed",
			[]step{expect(query("load data local infile 'x' into table t")), send(pktS(1, wire.HeaderInfile, "x")),
				expect(pktS(2, 'a', "\tb\n")), expect(pkt(3)), send(ok(4, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query("load data local infile 'x' into table t")), expect(pktS(1, wire.HeaderInfile, "x")),
				send(pktS(2, 'a', "\tb\n"), pkt(3)), expect(ok(4, autocommit)),
				send(query("select 1")), expect(resultSet(autocommit))}},
		{"LOAD DATA LOCAL: a progress report after the upload (the mariadb CLI's)",
			[]step{expect(query("load data local infile 'x' into table t")), send(pktS(1, wire.HeaderInfile, "x")),
				expect(pktS(2, 'a', "\tb\n")), expect(pkt(3)), send(progress(4), ok(5, autocommit)),
				expect(query("select 1")), send(resultSet(autocommit))},
			[]step{send(query("load data local infile 'x' into table t")), expect(pktS(1, wire.HeaderInfile, "x")),
				send(pktS(2, 'a', "\tb\n"), pkt(3)), expect(progress(4)), expect(ok(5, autocommit)),
				send(query("select 1")), expect(resultSet(autocommit))}},
		{"malformed command closes the connection",
			[]step{expectClosed()},
			[]step{send(pkt(0, 0x77)), expectErr(1, errMalformed, "HY000", "malformed"), expectClosed()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			srv, cli := login()
			h.run(t, append(srv, tc.server...), append(cli, tc.client...))
		})
	}
}

// Replication commands named in allow_commands are relayed, a dump's
// events followed to its EOF; the others stay refused.
func TestAllowCommands(t *testing.T) {
	h := newHarness(t)
	h.Env.AllowCommands = []string{"COM_REGISTER_SLAVE", "com_binlog_dump"}
	srv, cli := login()
	register := pkt(0, wire.ComRegisterSlave, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	dump := pkt(0, wire.ComBinlogDump, 4, 0, 0, 0, 1, 0, 2, 0, 0, 0) // BINLOG_DUMP_NON_BLOCK
	event := func(seq int) []byte {
		return pkt(seq, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0, 0x13, 0, 0, 0, 0, 0, 0, 0, 0x20, 0)
	}
	eof := pkt(3, 0xfe, 0, 0, 2, 0)
	h.run(t, append(srv,
		expect(register), send(ok(1, autocommit)),
		expect(dump), send(event(1), event(2), eof),
		expect(pkt(0, wire.ComPing)), send(ok(1, autocommit))),
		append(cli,
			send(register), expect(ok(1, autocommit)),
			send(dump), expect(append(append(event(1), event(2)...), eof...)),
			send(pkt(0, wire.ComBinlogDumpGTID, 0, 0, 0, 0)), expectErr(1, errBlocked, "42000", "COM_BINLOG_DUMP_GTID is not relayed"),
			send(pkt(0, wire.ComPing)), expect(ok(1, autocommit))))
}
