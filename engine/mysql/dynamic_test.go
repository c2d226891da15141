package mysql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// Verdict.DynamicSQL says when a text runs SQL assembled at run time,
// whatever the policy decides about it: the relay then cannot know
// whether the session's character set changed (SET NAMES gbk spelt
// CONCAT('SET NA','MES gbk')) and reads the session's later text as in an
// unknown one. A literal text's facts are its own.
func TestVerdictDynamicSQL(t *testing.T) {
	p, err := engine.ParsePolicy([]byte("on_parse_error: allow\nrules: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(p, Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sql  string
		want bool
	}{
		{"EXECUTE IMMEDIATE CONCAT('SET NA','MES gbk')", true},
		{"execute immediate @q", true},
		{"EXECUTE IMMEDIATE 'SET NA' 'MES gbk'", true},
		{"EXECUTE IMMEDIATE x'534554204e414d45532067626b'", true},
		{"PREPARE s FROM @q", true},
		{"PREPARE s FROM CONCAT('SET NA','MES gbk')", true},
		{"select 1; execute immediate concat('set na', 'mes gbk')", true},
		{"EXECUTE IMMEDIATE 'SELECT 1'", false},
		{"PREPARE s FROM 'SELECT 1'", false},
		{"SET NAMES gbk", false},
		{"select concat('a', 'b')", false},
	} {
		if got := e.Judge([]byte(tc.sql), nil).DynamicSQL; got != tc.want {
			t.Errorf("%q: DynamicSQL %v, want %v", tc.sql, got, tc.want)
		}
	}
}
