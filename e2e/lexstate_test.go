package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// TestLexState sends, through sqlfwd, statements that a standard reading
// (UTF-8, standard_conforming_strings on) takes for one string literal but
// the server, in the session's state, reads as a string plus a DELETE of a
// canary table, for every way the state can be reached: SET, set_config() in
// a SELECT, startup options, client_encoding at startup, role and database
// defaults made on the server, the extended protocol, and statements sent
// before the server confirmed a change. Each attempt carries a marker that
// must never appear in the server's statement log, and the canary keeps its
// rows. Benign statements under the same states carry markers that must
// appear, and return what the state makes of them (a\\b is a\b with the
// setting off), so the states are real and the test can fail.
//
// pgx itself refuses client-side interpolation (the simple protocol mode and
// EscapeString) unless client_encoding is UTF8 and
// standard_conforming_strings on; pgconn's Exec sends the bytes as given,
// which is what an application interpolating strings itself does.
func TestLexState(t *testing.T) {
	needSqlfwd(t)
	if pg.Log == "" {
		t.Skip("SQLFW_PG_LOG not set: start PostgreSQL with scripts/pg.sh start --log-statements")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	host, port := target(t)
	const canary = "e2e_lex_canary"
	freshTable(t, canary, 1, 2, 3)
	run := randomHex(t)
	var denied, passed []string
	deniedMark := func(what string) string {
		m := fmt.Sprintf("lexbad%s%d", run, len(denied))
		denied = append(denied, m+" ("+what+")")
		return m
	}
	passedMark := func(what string) string {
		m := fmt.Sprintf("lexok%s%d", run, len(passed))
		passed = append(passed, m+" ("+what+")")
		return m
	}
	// The shapes that hide "DELETE FROM canary" from a standard reading.
	scsOffAttack := func(m string) string { // several statements, simple Query
		return fmt.Sprintf(`SELECT '%s', 'x\''; DELETE FROM %s; --'`, m, canary)
	}
	scsOffOne := func(m string) string { // one statement, for Parse
		return fmt.Sprintf(`DELETE FROM %s WHERE id = 1 AND '%s' <> 'x\'' OR true --'`, canary, m)
	}
	// 0x95 0x5C is one SJIS character; to a standard reading its second
	// byte is the backslash that escapes the quote after it.
	sjisAttack := func(m string) string {
		return fmt.Sprintf("SELECT '%s', E'\x95\\'; DELETE FROM %s; --'", m, canary)
	}

	connect := func(t *testing.T, user, db, extra string, params map[string]string) *pgconn.PgConn {
		t.Helper()
		s := fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable connect_timeout=5 %s", host, port, user, db, extra)
		cfg, err := pgconn.ParseConfig(s)
		if err != nil {
			t.Fatalf("parsing %q: %v", s, err)
		}
		for k, v := range params {
			cfg.RuntimeParams[k] = v
		}
		pc, err := pgconn.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatalf("connecting through sqlfwd (%s %v): %v", s, params, err)
		}
		t.Cleanup(func() { pc.Close(context.Background()) })
		return pc
	}
	exec := func(t *testing.T, pc *pgconn.PgConn, sql string) {
		t.Helper()
		if _, err := pc.Exec(ctx, sql).ReadAll(); err != nil {
			t.Fatalf("input %q: %v", sql, err)
		}
	}
	// value runs a benign query whose last column is the value to check.
	value := func(t *testing.T, pc *pgconn.PgConn, sql, want string) {
		t.Helper()
		res, err := pc.Exec(ctx, sql).ReadAll()
		if err != nil {
			t.Fatalf("benign input %q: %v", sql, err)
		}
		last := res[len(res)-1]
		if len(last.Rows) != 1 {
			t.Fatalf("benign input %q: %d rows", sql, len(last.Rows))
		}
		row := last.Rows[0]
		if got := string(row[len(row)-1]); got != want {
			t.Fatalf("benign input %q: got %q, want %q (the session is not in the state the test set up)", sql, got, want)
		}
	}
	blocked := func(t *testing.T, pc *pgconn.PgConn, sql string) {
		t.Helper()
		_, err := pc.Exec(ctx, sql).ReadAll()
		checkDenied(t, sql, err)
	}
	scsOff := func(t *testing.T, pc *pgconn.PgConn, how string) {
		t.Helper()
		value(t, pc, fmt.Sprintf(`SELECT '%s', 'a\\b'`, passedMark(how)), `a\b`)
		blocked(t, pc, scsOffAttack(deniedMark(how)))
		res := pc.ExecParams(ctx, scsOffOne(deniedMark(how+", Parse")), nil, nil, nil, nil).Read()
		checkDenied(t, scsOffOne("(extended)"), res.Err)
	}
	sjis := func(t *testing.T, pc *pgconn.PgConn, how string) {
		t.Helper()
		blocked(t, pc, sjisAttack(deniedMark(how)))
		// 日本 in SJIS comes back as the same bytes
		value(t, pc, fmt.Sprintf("SELECT '%s', '\x93\xfa\x96\x7b'", passedMark(how)), "\x93\xfa\x96\x7b")
		value(t, pc, fmt.Sprintf("SELECT '%s', length('\x95\\')", passedMark(how)), "1")
	}

	t.Run("SET", func(t *testing.T) {
		pc := connect(t, pg.User, pg.Database, "", nil)
		exec(t, pc, "SET standard_conforming_strings = off")
		scsOff(t, pc, "SET")
	})
	t.Run("set_config in a SELECT", func(t *testing.T) {
		pc := connect(t, pg.User, pg.Database, "", nil)
		exec(t, pc, "SELECT set_config('standard_conforming_strings', 'off', false)")
		scsOff(t, pc, "set_config")
	})
	t.Run("startup options", func(t *testing.T) {
		pc := connect(t, pg.User, pg.Database, "options='-c standard_conforming_strings=off'", nil)
		scsOff(t, pc, "startup options")
	})
	t.Run("role default", func(t *testing.T) {
		role := "e2e_lex_role_scs"
		directExec(t, fmt.Sprintf("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN SUPERUSER; ALTER ROLE %s SET standard_conforming_strings = off", role, role, role))
		t.Cleanup(func() { directExec(t, "DROP ROLE IF EXISTS "+role) })
		pc := connect(t, role, pg.Database, "", nil)
		scsOff(t, pc, "ALTER ROLE")
	})
	t.Run("database default", func(t *testing.T) {
		db := "e2e_lex_db"
		directExec(t, "DROP DATABASE IF EXISTS "+db)
		directExec(t, "CREATE DATABASE "+db)
		t.Cleanup(func() { directExec(t, "DROP DATABASE IF EXISTS "+db+" WITH (FORCE)") })
		directExec(t, fmt.Sprintf("ALTER DATABASE %s SET standard_conforming_strings = off", db))
		pc := connect(t, pg.User, db, "", nil)
		exec(t, pc, fmt.Sprintf("CREATE TABLE %s (id int); INSERT INTO %s VALUES (1), (2), (3)", canary, canary))
		scsOff(t, pc, "ALTER DATABASE")
		value(t, pc, "SELECT count(*) FROM "+canary, "3")
	})
	t.Run("client_encoding at startup", func(t *testing.T) {
		pc := connect(t, pg.User, pg.Database, "", map[string]string{"client_encoding": "SJIS"})
		sjis(t, pc, "startup client_encoding")
		exec(t, pc, "SET standard_conforming_strings = off")
		blocked(t, pc, fmt.Sprintf("SELECT '%s', '\x95\\'; DELETE FROM %s; --'", deniedMark("SJIS and scs off"), canary))
	})
	t.Run("SET client_encoding", func(t *testing.T) {
		pc := connect(t, pg.User, pg.Database, "", nil)
		exec(t, pc, "SET client_encoding = 'SJIS'")
		sjis(t, pc, "SET client_encoding")
	})
	t.Run("client_encoding role default", func(t *testing.T) {
		role := "e2e_lex_role_sjis"
		directExec(t, fmt.Sprintf("DROP ROLE IF EXISTS %s; CREATE ROLE %s LOGIN SUPERUSER; ALTER ROLE %s SET client_encoding = 'SJIS'", role, role, role))
		t.Cleanup(func() { directExec(t, "DROP ROLE IF EXISTS "+role) })
		pc := connect(t, role, pg.Database, "", nil)
		sjis(t, pc, "ALTER ROLE client_encoding")
	})
	t.Run("psql with PGCLIENTENCODING=SJIS", func(t *testing.T) {
		// -c sends the text as one Query, as an application would; psql's
		// own lexer knows SJIS too, and would split a script at the ';'.
		args := func(sql string) []string {
			return []string{"-X", "-At", "-h", host, "-p", strconv.Itoa(port), "-U", pg.User, "-d", pg.Database, "-v", "VERBOSITY=verbose", "-c", sql}
		}
		env := []string{"PGCLIENTENCODING=SJIS"}
		attack := sjisAttack(deniedMark("psql SJIS"))
		if res := runTool(t, 60*time.Second, "", env, "psql", args(attack)...); res.Exit == 0 || !strings.Contains(res.Stderr, codeBlocked) {
			t.Errorf("psql -c %q with SJIS: want a 42501 error, got %s", attack, res)
		}
		benign := fmt.Sprintf("SELECT '%s', length('\x95\\')", passedMark("psql SJIS"))
		if res := runTool(t, 60*time.Second, "", env, "psql", args(benign)...); res.Exit != 0 || !strings.HasSuffix(strings.TrimSpace(res.Stdout), "|1") {
			t.Errorf("psql -c %q with SJIS: want the row ending |1, got %s", benign, res)
		}
	})
	t.Run("LATIN1 client", func(t *testing.T) {
		pc := connect(t, pg.User, pg.Database, "", map[string]string{"client_encoding": "LATIN1"})
		value(t, pc, fmt.Sprintf("SELECT '%s', 'caf\xe9'", passedMark("LATIN1")), "caf\xe9")
	})
	t.Run("pipelined extended, before the change is confirmed", func(t *testing.T) {
		pc := connect(t, pg.User, pg.Database, "", nil)
		m := deniedMark("pipelined Parse")
		p := pc.StartPipeline(ctx)
		p.SendQueryParams("SET standard_conforming_strings = off", nil, nil, nil, nil)
		p.SendQueryParams(scsOffOne(m), nil, nil, nil, nil)
		if err := p.Sync(); err != nil {
			t.Fatalf("sending the pipeline: %v", err)
		}
		got := drainPipeline(t, p, 3)
		if got[0] != "rows 0" || got[1] != "err "+codeBlocked || got[2] != "sync" {
			t.Errorf("pipeline [SET, %q, Sync]: got %q, want [rows 0, err %s, sync]", scsOffOne(m), got, codeBlocked)
		}
		if err := p.Close(); err != nil {
			t.Errorf("closing the pipeline: %v", err)
		}
	})
	t.Run("pipelined simple queries, before the change is confirmed", func(t *testing.T) {
		pc := connect(t, pg.User, pg.Database, "", nil)
		hc, err := pc.Hijack()
		if err != nil {
			t.Fatal(err)
		}
		defer hc.Conn.Close()
		m := deniedMark("pipelined Query")
		hc.Frontend.Send(&pgproto3.Query{String: "SET standard_conforming_strings = off"})
		hc.Frontend.Send(&pgproto3.Query{String: scsOffAttack(m)})
		if err := hc.Frontend.Flush(); err != nil {
			t.Fatal(err)
		}
		_ = hc.Conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		var got []string
		for ready := 0; ready < 2; {
			msg, err := hc.Frontend.Receive()
			if err != nil {
				t.Fatalf("reading the answers: %v (so far %q)", err, got)
			}
			switch x := msg.(type) {
			case *pgproto3.CommandComplete:
				got = append(got, string(x.CommandTag))
			case *pgproto3.ErrorResponse:
				got = append(got, "err "+x.Code)
			case *pgproto3.ReadyForQuery:
				ready++
			}
		}
		if len(got) != 2 || got[0] != "SET" || got[1] != "err "+codeBlocked {
			t.Errorf("pipelined [SET, %q]: got %q, want [SET, err %s]", scsOffAttack(m), got, codeBlocked)
		}
	})
	t.Run("one Query is lexed with the state at its start", func(t *testing.T) {
		// The server reads the whole message before the SET runs: the
		// string is one literal, no DELETE runs, and sqlfwd lets it pass.
		pc := connect(t, pg.User, pg.Database, "", nil)
		m := passedMark("same Query as the SET")
		sql := fmt.Sprintf(`SET standard_conforming_strings = off; SELECT '%s', 'x\''; DELETE FROM %s; --'`, m, canary)
		value(t, pc, sql, `x\'; DELETE FROM `+canary+`; --`)
		value(t, pc, fmt.Sprintf(`SELECT '%s', 'a\\b'`, passedMark("after the same-Query SET")), `a\b`)
	})
	t.Run("DO body lexed after a SET in the same Query", func(t *testing.T) {
		pc := connect(t, pg.User, pg.Database, "", nil)
		m := deniedMark("DO after SET")
		blocked(t, pc, fmt.Sprintf("SET standard_conforming_strings = off; DO $$ BEGIN PERFORM '%s', 'x\\''; DELETE FROM %s; PERFORM 1 --'\n; END $$", m, canary))
	})

	if got := directInts(t, "SELECT id FROM "+canary+" ORDER BY id"); len(got) != 3 {
		t.Errorf("canary %s has rows %v, want [1 2 3]: a hidden DELETE ran", canary, got)
	}
	log := serverLog(t)
	for _, d := range denied {
		m, _, _ := strings.Cut(d, " ")
		if strings.Contains(log, m) {
			t.Errorf("the server log holds the marker of a blocked attempt %s: PostgreSQL received it", d)
		}
	}
	for _, p := range passed {
		m, _, _ := strings.Cut(p, " ")
		if !strings.Contains(log, m) {
			t.Errorf("the server log lacks the marker of benign statement %s: it never reached PostgreSQL", p)
		}
	}
}

// TestLexStateEncodingTables checks the engine's conversion of every client
// encoding it reads against the server's own (convert_from), character by
// character: every valid two-byte sequence (three for EUC_JP's SS3, a
// sample of GB18030's four-byte ones) and every high byte of the
// single-byte encodings. Wherever both accept a text they must read the
// same characters: then the server turns no character the engine read as
// multibyte into a quote or backslash, and names in a policy match. Text
// only the server accepts is denied by sqlfwd (a false positive, counted);
// text only sqlfwd accepts is rejected by the server.
func TestLexStateEncodingTables(t *testing.T) {
	needPG(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Second)
	defer cancel()
	c := connect(t, ctx, dsn(pg.Host, pg.Port, pg.User, ""))
	var serverEnc string
	if err := c.QueryRow(ctx, "SHOW server_encoding").Scan(&serverEnc); err != nil {
		t.Fatal(err)
	}
	if serverEnc != "UTF8" {
		t.Skipf("server_encoding is %s, the comparison needs UTF8", serverEnc)
	}
	if _, err := c.Exec(ctx, `CREATE FUNCTION pg_temp.sqlfw_conv(b bytea, enc name) RETURNS text LANGUAGE plpgsql AS $$
BEGIN RETURN convert_from(b, enc); EXCEPTION WHEN others THEN RETURN NULL; END $$`); err != nil {
		t.Fatal(err)
	}
	pairs := func(leads, trails [2]int) [][]byte {
		var out [][]byte
		for a := leads[0]; a <= leads[1]; a++ {
			for b := trails[0]; b <= trails[1]; b++ {
				out = append(out, []byte{byte(a), byte(b)})
			}
		}
		return out
	}
	high := func() [][]byte {
		var out [][]byte
		for a := 0x80; a <= 0xff; a++ {
			out = append(out, []byte{byte(a)})
		}
		return out
	}
	seqs := map[string][][]byte{
		"SJIS":    append(pairs([2]int{0x80, 0xff}, [2]int{0x01, 0xff}), high()...),
		"BIG5":    pairs([2]int{0x80, 0xff}, [2]int{0x01, 0xff}),
		"GBK":     pairs([2]int{0x80, 0xff}, [2]int{0x01, 0xff}),
		"UHC":     pairs([2]int{0x80, 0xff}, [2]int{0x01, 0xff}),
		"GB18030": pairs([2]int{0x80, 0xff}, [2]int{0x01, 0xff}),
		"EUC_JP":  append(pairs([2]int{0x8e, 0xfe}, [2]int{0xa1, 0xfe}), pairs([2]int{0xa1, 0xfe}, [2]int{0x01, 0x7f})...),
		"EUC_KR":  pairs([2]int{0xa1, 0xfe}, [2]int{0xa1, 0xfe}),
		"EUC_CN":  pairs([2]int{0xa1, 0xfe}, [2]int{0xa1, 0xfe}),
	}
	for a := 0x81; a <= 0x84; a++ { // GB18030 four-byte sequences of the BMP
		for b := 0x30; b <= 0x39; b++ {
			for c := 0x81; c <= 0xfe; c++ {
				for d := 0x30; d <= 0x39; d++ {
					seqs["GB18030"] = append(seqs["GB18030"], []byte{byte(a), byte(b), byte(c), byte(d)})
				}
			}
		}
	}
	for c := 0xa1; c <= 0xfe; c += 7 { // EUC_JP SS3, sampled
		for d := 0xa1; d <= 0xfe; d++ {
			seqs["EUC_JP"] = append(seqs["EUC_JP"], []byte{0x8f, byte(c), byte(d)})
		}
	}
	for _, enc := range []string{"LATIN1", "LATIN2", "LATIN3", "LATIN4", "LATIN5", "LATIN6", "LATIN7", "LATIN8", "LATIN9", "LATIN10",
		"ISO_8859_5", "ISO_8859_6", "ISO_8859_7", "ISO_8859_8", "WIN1250", "WIN1251", "WIN1252", "WIN1253", "WIN1254",
		"WIN1255", "WIN1256", "WIN1257", "WIN1258", "WIN866", "WIN874", "KOI8R", "KOI8U"} {
		seqs[enc] = high()
	}
	for enc, list := range seqs {
		t.Run(enc, func(t *testing.T) {
			var got []*string
			if err := c.QueryRow(ctx, "SELECT array_agg(pg_temp.sqlfw_conv(x, $2) ORDER BY i) FROM unnest($1::bytea[]) WITH ORDINALITY AS u(x, i)", list, enc).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(list) {
				t.Fatalf("%d answers for %d sequences", len(got), len(list))
			}
			both, serverOnly, oursOnly, differ := 0, 0, 0, 0
			for i, seq := range list {
				server := got[i]
				ours, ok := pgsql.ClientTextToUTF8(enc, seq)
				switch {
				case ok && server != nil:
					both++
					if string(ours) != *server {
						differ++
						if differ <= 5 {
							t.Logf("%s %x: server %q, sqlfwd %q", enc, seq, *server, ours)
						}
					}
				case server != nil:
					serverOnly++
				case ok:
					oursOnly++
				}
			}
			t.Logf("%s: %d sequences; both accept %d (differ on %d), only the server %d (denied by sqlfwd), only sqlfwd %d (rejected by the server)", enc, len(list), both, differ, serverOnly, oursOnly)
			if differ > 0 {
				t.Errorf("%s: %d characters read differently by the server and sqlfwd", enc, differ)
			}
		})
	}
}
