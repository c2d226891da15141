package mysql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestSetSQLMode: what a statement leaves the session's
// NO_AUTO_CREATE_USER at, read as the server reads it (issue 21).
func TestSetSQLMode(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want engine.GrantMode
	}{
		{"SET sql_mode = ''", engine.GrantCreates},
		{"set sql_mode=''", engine.GrantCreates},
		{"SET SESSION sql_mode = 'STRICT_TRANS_TABLES,NO_ZERO_DATE'", engine.GrantCreates},
		{"SET LOCAL sql_mode = 'ANSI'", engine.GrantCreates},
		{"SET @@sql_mode := ''", engine.GrantCreates},
		{"SET @@session.sql_mode = 'MSSQL';", engine.GrantCreates},
		{"SET @@LOCAL.SQL_MODE = \"\"", engine.GrantCreates},
		{"SET `sql_mode` = ''", engine.GrantCreates},
		{"SET sql_mode = ANSI", engine.GrantCreates},
		{"SET NAMES utf8, sql_mode = ''", engine.GrantCreates},
		{"SET sql_mode = 'NO_AUTO_CREATE_USER_X'", engine.GrantCreates},
		{"SET sql_mode = 'TRADITIONAL', sql_mode = ''", engine.GrantCreates},
		{"SET sql_mode = 'NO_AUTO_CREATE_USER'", engine.GrantKept},
		{"SET sql_mode = 'no_auto_create_user '", engine.GrantKept},
		{"SET sql_mode = 'STRICT_TRANS_TABLES,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION'", engine.GrantKept},
		{"SET sql_mode = TRADITIONAL", engine.GrantKept},
		{"SET sql_mode = 'ORACLE'", engine.GrantKept},
		{"SET sql_mode = 'maxdb'", engine.GrantKept},
		{"SET sql_mode = DEFAULT", engine.GrantKept},
		{"SET /* x */ sql_mode = 'TRADITIONAL' -- y", engine.GrantKept},
		// no change to the session's
		{"SET @old_sql_mode = @@sql_mode", engine.GrantSame},
		{"SET GLOBAL sql_mode = ''", engine.GrantSame},
		{"SET @@global.sql_mode = ''", engine.GrantSame},
		{"SET NAMES gbk", engine.GrantSame},
		{"SET max_statement_time = 10", engine.GrantSame},
		// unknown
		{"SET sql_mode = @old_sql_mode", engine.GrantUnknown},
		{"SET sql_mode = @@global.sql_mode", engine.GrantUnknown},
		{"SET sql_mode = (SELECT '')", engine.GrantUnknown},
		{"SET sql_mode = CONCAT(@@sql_mode, ',ANSI')", engine.GrantUnknown},
		{"SET sql_mode = 0", engine.GrantUnknown},
		{"SET sql_mode = 536870912", engine.GrantUnknown},
		{"SET sql_mode = 'TRADITIONAL' ''", engine.GrantUnknown},
		{"SET sql_mode = _latin1'TRADITIONAL'", engine.GrantUnknown},
		{"SET sql_mode = 'TRADITIONAL\\'", engine.GrantUnknown},
		{"SET GLOBAL x = 1, sql_mode = ''", engine.GrantUnknown},
		{"SET sql_mode = ''; SELECT 1", engine.GrantUnknown},
		{"SET STATEMENT sql_mode = '' FOR SELECT 1", engine.GrantUnknown},
		{"SET sql_mode = /*!40101 '' */ 'TRADITIONAL'", engine.GrantUnknown},
		{"SET\xa0sql_mode\xa0=\xa0''", engine.GrantUnknown},
		{"EXECUTE IMMEDIATE 'SET sql_mode = \"\"'", engine.GrantCreates}, // the SET it runs (immediateText)
		{"execute  immediate 'SET sql_mode = TRADITIONAL';", engine.GrantKept},
		{"EXECUTE IMMEDIATE /* c */ 'SET @@session.sql_mode = DEFAULT'", engine.GrantKept},
		{"EXECUTE IMMEDIATE 'SET GLOBAL sql_mode = \"\"'", engine.GrantSame},
		{"EXECUTE IMMEDIATE 'SET sql_mode = @m'", engine.GrantUnknown},
		{"EXECUTE IMMEDIATE 'SET sql_mode = ''TRADITIONAL'''", engine.GrantUnknown}, // doubled quotes: not read
		{"EXECUTE IMMEDIATE 'SET sql_mode = \\'TRADITIONAL\\''", engine.GrantUnknown},
		{"EXECUTE IMMEDIATE \"SET sql_mode = 'TRADITIONAL'\"", engine.GrantUnknown}, // a name under ANSI_QUOTES
		{"EXECUTE IMMEDIATE 'SET sql_mode = \"\"' USING 1", engine.GrantUnknown},
		{"EXECUTE IMMEDIATE 'SET sql_mode = TRADITIONAL'; SET sql_mode = ''", engine.GrantUnknown},
		{"EXECUTE IMMEDIATE CONCAT('SET sql_mode = ', '\"\"')", engine.GrantUnknown},
		{"EXECUTE IMMEDIATE 'SET sql_mode = TRADITIONAL' 'x'", engine.GrantUnknown},
		{"/*!40101 SET sql_mode = '' */", engine.GrantUnknown},
		{"BEGIN NOT ATOMIC SET sql_mode = ''; END", engine.GrantUnknown},
	} {
		if got := namesMode([]byte(tc.sql)); got != tc.want {
			t.Errorf("namesMode(%q) = %d, want %d", tc.sql, got, tc.want)
		}
	}
	// a text that cannot set a variable changes nothing
	for _, sql := range []string{"SELECT @@sql_mode", "select @@SESSION.sql_mode, @@GLOBAL.sql_mode", "SHOW VARIABLES LIKE 'sql_mode'"} {
		if got := namesMode([]byte(sql)); got != engine.GrantSame {
			t.Errorf("namesMode(%q) = %d, want GrantSame", sql, got)
		}
	}
}

// TestSetCharset: the client character set a SET statement leaves the
// session in, read as the server reads it ("" unchanged).
func TestSetCharset(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"SET NAMES gbk", "gbk"},
		{"SET NAMES latin1;", "latin1"},
		{"set names 'utf8' collate 'utf8_general_ci' ; ", "utf8"},
		{"SET NAMES `sjis` COLLATE sjis_bin", "sjis"},
		{"SET /* a */ NAMES -- b\n gbk # c", "gbk"},
		{"SET\vNAMES\vgbk", "gbk"},
		{"SET NAMES utf8, character_set_connection=latin1;", "utf8"},
		{"SET character_set_connection=latin1, NAMES gbk", "gbk"},
		{"SET CHARACTER SET big5", "big5"},
		{"SET CHAR SET gbk", "gbk"},
		{"SET CHARSET 'cp932';", "cp932"},
		{"SET character_set_client= 'utf8';", "utf8"},
		{"SET character_set_client := gbk", "gbk"},
		{"SET SESSION character_set_client = \"gbk\"", "gbk"},
		{"SET local `character_set_client` = gbk", "gbk"},
		{"SET @@character_set_client=gbk", "gbk"},
		{"SET @@SESSION.character_set_client = GBK", "gbk"},
		{"SET @@local.CHARACTER_SET_CLIENT = gbk", "gbk"},
		{"SET @a = 1, character_set_client = gbk, @b = 'x y'", "gbk"},
		{"SET NAMES gbk, character_set_client = latin1", "latin1"},
		// no change
		{"SET @old_character_set_client= @@character_set_client", ""},
		{"SET @old_character_set_connection= @@session.character_set_connection;", ""},
		{"SET @test_character_set= 'latin1';", ""},
		{"SET character_set_connection= 'utf8'", ""},
		{"SET character_set_results = NULL, collation_connection = utf8_bin", ""},
		{"SET GLOBAL character_set_client = gbk", ""},
		{"SET @@global.character_set_client = gbk", ""},
		// unknown: a value sqlfw cannot know, or a text it does not read
		{"SET character_set_client = @old", engine.CharsetUnknown},
		{"SET @@character_set_client= @old_character_set_client;", engine.CharsetUnknown},
		{"SET character_set_client = DEFAULT", engine.CharsetUnknown},
		{"SET NAMES DEFAULT", engine.CharsetUnknown},
		{"SET CHARACTER SET DEFAULT", engine.CharsetUnknown},
		{"SET character_set_client = 28", engine.CharsetUnknown},
		{"SET character_set_client = @@character_set_server", engine.CharsetUnknown},
		{"SET character_set_client = CONCAT('g','bk')", engine.CharsetUnknown},
		{"SET character_set_client = 'gb' 'k'", engine.CharsetUnknown},
		{"SET character_set_client = _latin1'gbk'", engine.CharsetUnknown},
		{"SET character_set_client = 'gbk\\'", engine.CharsetUnknown},
		{"SET GLOBAL x = 1, character_set_client = gbk", engine.CharsetUnknown},
		{"SET @@global.x = 1, character_set_client = gbk", engine.CharsetUnknown},
		{"SET @a = CONCAT('a', 'b'), character_set_client = gbk", engine.CharsetUnknown},
		{"SET @a = (SELECT 1), NAMES gbk", engine.CharsetUnknown},
		{"SET NAMES gbk; SET NAMES latin1", engine.CharsetUnknown},
		{"SET NAMES gbk; SELECT 1", engine.CharsetUnknown},
		{"SET NAMES /*!40101 gbk */ latin1", engine.CharsetUnknown},
		{"SET NAMES /*M!100000 gbk */ latin1", engine.CharsetUnknown},
		{"SET NAMES /* gbk", engine.CharsetUnknown},
		{"SET NAMES --x\n gbk", engine.CharsetUnknown},
		{"SET\xa0NAMES\xa0gbk", engine.CharsetUnknown},
		{"SET NAMES gbk\x00", engine.CharsetUnknown},
		{"SET STATEMENT character_set_client = gbk FOR SELECT 1", engine.CharsetUnknown},
		{"SET @@ character_set_client = gbk", engine.CharsetUnknown},
		{"SET x.character_set_client = gbk", engine.CharsetUnknown},
		{"EXECUTE IMMEDIATE 'SET NAMES gbk'", "gbk"}, // the SET it runs (immediateText)
		{"EXECUTE IMMEDIATE 'SET character_set_client = @c'", engine.CharsetUnknown},
		{"EXECUTE IMMEDIATE 'SET character_set_client = ''gbk'''", engine.CharsetUnknown},
		{"EXECUTE IMMEDIATE \"SET NAMES gbk\"", engine.CharsetUnknown},
		{"EXECUTE IMMEDIATE 'SET NAMES gbk'; SELECT 1", engine.CharsetUnknown},
		{"/*!40101 SET NAMES gbk */", engine.CharsetUnknown},
	} {
		if got := namesCharset([]byte(tc.sql)); got != tc.want {
			t.Errorf("namesCharset(%q) = %q, want %q", tc.sql, got, tc.want)
		}
	}
	// not about the character set: unchanged, as before
	for _, sql := range []string{"SELECT names FROM t", "CREATE TABLE t (a char(10));", "SELECT character_length('x')"} {
		if got := namesCharset([]byte(sql)); got != "" {
			t.Errorf("namesCharset(%q) = %q, want \"\"", sql, got)
		}
	}
}

func TestUseSchema(t *testing.T) {
	for in, want := range map[string]string{"USE shop": "shop", "use\vshop\f;\v": "shop", " USE `a``b`;": "a`b", "USE\tx1$": "x1$", "use INFORMATION_Schema": "information_schema"} {
		if got, ok := readUse([]byte(in)); !ok || got != want {
			t.Errorf("readUse(%q) = %q, %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"USE", "USE ", "USE x y", "USE ``", "USE `x", "USE /**/x", "USEx", "SET STATEMENT a=1 FOR USE x"} {
		if got, ok := readUse([]byte(in)); ok {
			t.Errorf("readUse(%q) = %q, want no USE read", in, got)
		}
	}
}
