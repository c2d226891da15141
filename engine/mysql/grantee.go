package mysql

// A GRANT that creates its grantee.
//
// On MariaDB (and MySQL before 8.0) a GRANT to an account that does not
// exist creates it, without a password, unless the session's sql_mode
// holds NO_AUTO_CREATE_USER (the server's default, also in TRADITIONAL,
// ORACLE and MAXDB):
//
//	SET sql_mode = ''; GRANT SELECT ON app.* TO newu@'%'
//
// makes an account newu that logs in from anywhere with no password. The
// facts of such a GRANT say so (engine.StmtFacts.CreatesGrantee), and the
// engine judges it also as the CREATE USER it then is (GranteeCreation):
//
//   - GranteeMay for every GRANT of privileges to an account other than
//     CURRENT_USER: it creates the account when the session's sql_mode,
//     which the relay follows (relay/mysql lexstate.go), lets it;
//   - GranteeCreated when the mode it runs under is set in its own text:
//     after a SET of sql_mode earlier in the same message, inside a body
//     that sets sql_mode (a procedure runs with the mode of its CREATE, and
//     its own SET holds for what follows in it), or under SET STATEMENT
//     sql_mode = x FOR, unless x is a literal that holds NO_AUTO_CREATE_USER
//     (then GranteeNever).
//
// A GRANT with IDENTIFIED creates or alters the account whatever the mode,
// and is grants_privilege (currentdb.go grantEffects).

import (
	"slices"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// GranteeCreation is the facts of the account a GRANT creates: those of
// CREATE USER (ddl.go), which no-account-management denies.
func (myDialect) GranteeCreation() engine.StmtFacts {
	return engine.StmtFacts{Kind: engine.KindDCL, Kinds: 1 << engine.KindDCL, Verb: engine.VerbCreate, Object: "user"}
}

// mayCreateGrantee reports whether a GRANT of privileges names an account
// that may not exist: any but CURRENT_USER.
func mayCreateGrantee(x *ast.GrantStmt) bool {
	for _, u := range x.Users {
		if u.User != nil && !u.User.CurrentUser {
			return true
		}
	}
	return false
}

// grantees makes the GRANTs of a text's statements that run under an
// sql_mode set in the text itself GranteeCreated: a statement that sets
// sql_mode itself (a body, SET STATEMENT), or one after a statement that
// does.
func grantees(sts []engine.StmtFacts) {
	set := false
	for i := range sts {
		st := &sts[i]
		own := setsMode(st)
		if st.CreatesGrantee == engine.GranteeMay && (set || own) {
			st.CreatesGrantee = engine.GranteeCreated
		}
		set = set || own
	}
}

// setsMode reports whether a statement's facts set sql_mode.
func setsMode(st *engine.StmtFacts) bool {
	return slices.Contains(st.Settings, "sql_mode")
}

// statementGrantee is the GRANT of SET STATEMENT settings FOR statement
// judged under the sql_mode the settings give it: GranteeNever when they
// set it to a literal that holds NO_AUTO_CREATE_USER, GranteeCreated when
// they set it otherwise. settings is the text between STATEMENT and FOR.
func statementGrantee(st *engine.StmtFacts, settings string) {
	if st.CreatesGrantee != engine.GranteeMay || !setsMode(st) {
		return
	}
	if keepsNoAutoCreate(settings) {
		st.CreatesGrantee = engine.GranteeNever
		return
	}
	st.CreatesGrantee = engine.GranteeCreated
}

// keepsNoAutoCreate reports whether every assignment of sql_mode in a
// SET's list of settings is a string literal whose modes hold
// NO_AUTO_CREATE_USER.
func keepsNoAutoCreate(text string) bool {
	return sqlModeLiterals(text, func(m mode) bool { return m.noAutoCreate })
}
