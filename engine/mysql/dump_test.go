package mysql

import (
	"os"
	"strings"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestJudgeDumpFile judges the statements of a mysqldump/mariadb-dump file
// with the default policy, split as the mariadb client splits them
// (DELIMITER lines honoured), and logs those denied: how docs/policy.md's
// "Known not to parse" was measured. It runs only when SQLFW_MYSQL_DUMP
// names a file:
//
//	SQLFW_MYSQL_DUMP=dump.sql go test -run TestJudgeDumpFile -v ./engine/mysql
func TestJudgeDumpFile(t *testing.T) {
	path := os.Getenv("SQLFW_MYSQL_DUMP")
	if path == "" {
		t.Skip("SQLFW_MYSQL_DUMP names no dump file")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	delim := ";"
	var cur strings.Builder
	n, denied := 0, 0
	for _, line := range strings.Split(string(b), "\n") {
		if d, ok := strings.CutPrefix(line, "DELIMITER "); ok {
			delim = strings.TrimSpace(d)
			continue
		}
		if cur.Len() == 0 && (strings.HasPrefix(line, "--") || strings.TrimSpace(line) == "") {
			continue
		}
		cur.WriteString(line + "\n")
		if !strings.HasSuffix(strings.TrimSpace(line), delim) {
			continue
		}
		stmt := strings.TrimSuffix(strings.TrimSpace(cur.String()), delim)
		cur.Reset()
		n++
		if v := e.Judge([]byte(stmt), nil); v.Action.Denies() {
			denied++
			t.Logf("denied by %s (%s):\n%.200s", v.RuleID, v.Reason, stmt)
		}
	}
	t.Logf("%d statements, %d denied", n, denied)
}
