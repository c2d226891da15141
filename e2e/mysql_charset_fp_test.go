package e2e

import (
	"strings"
	"testing"
)

// TestMySQLCharsetWithoutTracking: mysqltest (MariaDB's test client) does
// not ask for session tracking, so the server never says which client
// character set a SET left; sqlfwd read every such SET but the one simple
// SET NAMES form as "unknown" and then denied all non-ASCII text
// (client-charset-unsupported in main.ctype_cp932 and main.ctype_latin1).
// The sequence those tests send must run and reach the server, in the
// character set the server uses; a gbk 0x5c or latin1 0xA0 trick after
// such a SET is still denied, and a character set taken from a variable
// still denies non-ASCII text, with its reason.
func TestMySQLCharsetWithoutTracking(t *testing.T) {
	my := mariadbEnv(t)
	d := mysqlDaemon(t, my)
	table := "e2e_csfp_" + randomHex(t)
	direct := myDB(t, my, my.addr(), true)
	if _, err := direct.Exec("create table " + table + " (id int, v varchar(40) character set utf8mb4)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("drop table " + table) })
	const sessionTrack = 1 << 23
	var benign, attacks []string
	for _, tc := range []struct {
		name string
		caps uint32
		// off turns session tracking off on the connection
		off bool
	}{
		{"client without CLIENT_SESSION_TRACK", rawCaps, false},
		{"session_track_system_variables turned off", rawCaps | sessionTrack, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := "csfp_" + randomHex(t)
			if _, err := direct.Exec("delete from " + table + " where id > 0"); err != nil {
				t.Fatal(err)
			}
			r := dialRaw(t, d.addr)
			r.caps = tc.caps
			r.write(r.handshake(my.User, "", my.Database, 45))
			r.auth("")
			if tc.off {
				r.exec("SET session_track_system_variables=''")
			}
			// main.ctype_cp932's and main.ctype_latin1's sequence, each
			// statement marked
			steps := []string{
				"SET @old_character_set_client_" + m + "= @@character_set_client",
				"SET @old_character_set_connection_" + m + "= @@character_set_connection;",
				"INSERT INTO " + table + " VALUES (1, 'é " + m + "')",
				"SET character_set_client= 'utf8' /* " + m + " */;",
				"INSERT INTO " + table + " VALUES (2, 'ｶｶ " + m + "');",
				"SET NAMES latin1 /* " + m + " */;",
				"INSERT INTO " + table + " VALUES (3, 'caf\xe9 " + m + "')",
				"SET NAMES utf8, character_set_connection=latin1 /* " + m + " */",
				"INSERT INTO " + table + " VALUES (4, '\xc3\xbc " + m + "')",
				"SET CHARACTER SET gbk /* " + m + " */",
				// (CHARACTER SET takes the connection's from the database)
				"SET character_set_connection = utf8mb4 /* " + m + " */",
				"INSERT INTO " + table + " VALUES (5, '\xc4\xe3\xba\xc3 " + m + "')",
			}
			for _, s := range steps {
				r.exec(s)
				benign = append(benign, s)
			}
			got, err := direct.Query("select v from " + table + " order by id")
			if err != nil {
				t.Fatal(err)
			}
			var vs []string
			for got.Next() {
				var v string
				if err := got.Scan(&v); err != nil {
					t.Fatal(err)
				}
				vs = append(vs, strings.TrimSuffix(v, " "+m))
			}
			got.Close()
			if want := "é|ｶｶ|café|ü|你好"; strings.Join(vs, "|") != want {
				t.Errorf("rows as the server stored them: %q, want %q", strings.Join(vs, "|"), want)
			}
			// after SET CHARACTER SET gbk: a trail byte 0x5c hides a quote
			a := "delete from " + table + " where id = '\xbf\\' or 1=1 -- " + m + "_gbk'"
			attacks = append(attacks, m+"_gbk")
			r.write(rawQuery(a))
			wantRawBlocked(t, "gbk 0x5c", r.result(), "")
			// after SET NAMES latin1; : 0xA0 is a space to the server
			r.exec("SET NAMES latin1;")
			a = "update " + table + " set id = 9 where b\xe9\xa0or(1) /* " + m + "_latin1 */"
			attacks = append(attacks, m+"_latin1")
			r.write(rawQuery(a))
			wantRawBlocked(t, "latin1 0xA0", r.result(), "")
			// back to the saved value: a variable's, which sqlfw cannot know
			r.exec("SET @@character_set_client= @old_character_set_client_" + m + ";")
			r.write(rawQuery("INSERT INTO " + table + " VALUES (6, 'é " + m + "_unknown')"))
			attacks = append(attacks, m+"_unknown")
			wantRawBlocked(t, "non-ASCII after a character set from a variable", r.result(), "client-charset-unsupported")
			r.write(rawQuery("select count(*) from " + table + " where id < 9"))
			if got := r.result(); got != "5" {
				t.Errorf("rows after the attempts: %q, want 5", got)
			}
		})
	}
	// every spelling of a change to gbk sqlfwd now reads: the 0x5c trick
	// behind it is denied (SET CHAR SET was not even seen as a change)
	for _, set := range []string{
		"SET CHAR SET gbk", "set @@session.character_set_client = 'gbk';", "SET /* x */ NAMES gbk -- y\n;",
		"SET @x = 1, NAMES gbk", "SET character_set_client := `gbk`", "SET LOCAL character_set_client = \"gbk\"",
	} {
		t.Run(set, func(t *testing.T) {
			m := "csfp_" + randomHex(t)
			if _, err := direct.Exec("delete from " + table + " where id > 0"); err != nil {
				t.Fatal(err)
			}
			if _, err := direct.Exec("insert into " + table + " values (1, 'a'), (2, 'b')"); err != nil {
				t.Fatal(err)
			}
			r := dialRaw(t, d.addr)
			r.write(r.handshake(my.User, "", my.Database, 45))
			r.auth("")
			r.exec(set)
			r.write(rawQuery("select @@character_set_client"))
			if got := r.result(); got != "gbk" {
				t.Fatalf("%s: the server's character set is %q, want gbk", set, got)
			}
			attacks = append(attacks, m)
			r.write(rawQuery("delete from " + table + " where id = '\xbf\\' or 1=1 -- " + m + "'"))
			wantRawBlocked(t, set+": gbk 0x5c", r.result(), "")
			r.write(rawQuery("select count(*) from " + table))
			if got := r.result(); got != "2" {
				t.Errorf("rows after the attempt: %q, want 2", got)
			}
		})
	}
	log := generalLog(t, my)
	for _, s := range benign {
		// (the server logs a statement without its ";")
		if !strings.Contains(log, strings.TrimSuffix(s, ";")) {
			t.Errorf("not in the general log: %q", s)
		}
	}
	mustNotReach(t, my, attacks...)
}
