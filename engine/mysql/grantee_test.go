package mysql

import (
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

// TestCreatesGrantee: which statements hold a GRANT that may create its
// grantee, and which run it under an sql_mode their own text sets.
func TestCreatesGrantee(t *testing.T) {
	may, created, never := engine.GranteeMay, engine.GranteeCreated, engine.GranteeNever
	for _, tc := range []struct {
		sql  string
		want []engine.GranteeCreation // per statement
	}{
		{"GRANT SELECT ON app.* TO newu@'%'", []engine.GranteeCreation{may}},
		{"GRANT SELECT ON app.* TO CURRENT_USER", []engine.GranteeCreation{never}},
		{"GRANT SELECT ON app.* TO CURRENT_USER, u", []engine.GranteeCreation{may}},
		{"GRANT r TO u", []engine.GranteeCreation{never}},
		{"REVOKE SELECT ON app.* FROM u", []engine.GranteeCreation{never}},
		{"SELECT 1; GRANT SELECT ON app.* TO u", []engine.GranteeCreation{never, may}},
		{"SET sql_mode = ''; GRANT SELECT ON app.* TO u", []engine.GranteeCreation{never, created}},
		{"SET max_statement_time = 1; GRANT SELECT ON app.* TO u", []engine.GranteeCreation{never, may}},
		{"GRANT SELECT ON app.* TO u; SET sql_mode = ''", []engine.GranteeCreation{may, never}},
		{"SET STATEMENT sql_mode = '' FOR GRANT SELECT ON app.* TO u", []engine.GranteeCreation{created}},
		{"SET STATEMENT sql_mode = 'TRADITIONAL' FOR GRANT SELECT ON app.* TO u", []engine.GranteeCreation{never}},
		{"SET STATEMENT sql_mode = 'ORACLE' FOR GRANT SELECT ON app.* TO u", []engine.GranteeCreation{never}},
		{"SET STATEMENT sql_mode = 'no_auto_create_user,ansi' FOR GRANT SELECT ON app.* TO u", []engine.GranteeCreation{never}},
		{"SET STATEMENT sql_mode = @v FOR GRANT SELECT ON app.* TO u", []engine.GranteeCreation{created}},
		{"SET STATEMENT sql_mode := 'TRADITIONAL' FOR GRANT SELECT ON app.* TO u", []engine.GranteeCreation{created}},
		{"SET STATEMENT max_statement_time = 1 FOR GRANT SELECT ON app.* TO u", []engine.GranteeCreation{may}},
		{"CREATE PROCEDURE p() GRANT SELECT ON app.* TO u", []engine.GranteeCreation{may}},
		{"CREATE PROCEDURE p() BEGIN SET sql_mode = ''; GRANT SELECT ON app.* TO u; END", []engine.GranteeCreation{created}},
		{"PREPARE s FROM 'GRANT SELECT ON app.* TO u'", []engine.GranteeCreation{may}},
		{"EXECUTE IMMEDIATE 'GRANT SELECT ON app.* TO u'", []engine.GranteeCreation{may}},
	} {
		tf := analyze(tc.sql, engine.LexStats{})
		var got []engine.GranteeCreation
		for _, st := range tf.Stmts {
			got = append(got, st.CreatesGrantee)
		}
		if len(got) < len(tc.want) {
			t.Errorf("%q: got %v (parse error %v), want %v", tc.sql, got, tf.ParseError, tc.want)
			continue
		}
		for i := range tc.want {
			if got[i] != tc.want[i] {
				t.Errorf("%q: got %v (parse error %v), want %v", tc.sql, got, tf.ParseError, tc.want)
				break
			}
		}
	}
}
