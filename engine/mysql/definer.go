package mysql

// DEFINER = the session's own user.
//
// A view, routine, trigger or event created with DEFINER = an account other
// than CURRENT_USER runs with that account's privileges (no-definer-views:
// changes_identity). mariadb-dump writes every such object with the account
// that defined it, DEFINER=`root`@`localhost`, so a DBA's reload as that
// account names the account it runs as: the same as CURRENT_USER. definers
// gives such a statement a second set of facts, those of the same text with
// each DEFINER = account read as DEFINER = CURRENT_USER, which the engine
// applies when the session's user is the account's user name
// (engine.StmtFacts.AsUser). Example: in a session of user root,
//
//	CREATE DEFINER=`root`@`localhost` TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW ...
//
// is judged as CREATE DEFINER=CURRENT_USER TRIGGER ...; in a session of user
// app it keeps changes_identity.
//
// What is not covered: the host part. The engine knows the user name the
// session logged in with, not the account (user@host) the server matched
// it to, so DEFINER = 'root'@'localhost' counts as the session's own also
// for a root that the server matched as 'root'@'%'. Naming another
// account's host as DEFINER needs SET USER (SUPER) on the server, and only
// matters where two accounts share a user name with different privileges.

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// ownGrants gives SHOW GRANTS FOR an account, which reads credentials
// (MariaDB shows the account's password hash), the facts of SHOW GRANTS
// FOR CURRENT_USER in a session of that account's user name (AsUser): an
// application that names its own account reads nothing it does not hold.
// The host part is not compared, as for DEFINER above.
func ownGrants(st *engine.StmtFacts, s ast.StmtNode) {
	x, ok := s.(*ast.ShowStmt)
	if !ok || x.Tp != ast.ShowGrants || x.User == nil || x.User.CurrentUser || st.Effects&engine.EffReadsCredentials == 0 {
		return
	}
	f := detached(*st)
	f.Effects &^= engine.EffReadsCredentials
	st.AsUser = []engine.UserFacts{{User: x.User.Username, Facts: f}}
}

// definers fills AsUser for the statements of tf whose changes_identity
// comes from DEFINER clauses that all name one user.
func definers(text string, lex engine.LexStats, tf *engine.TextFacts) {
	if tf.ParseError || !slices.ContainsFunc(tf.Stmts, func(st engine.StmtFacts) bool { return st.Effects&engine.EffChangesIdentity != 0 }) {
		return
	}
	user, asCurrent, ok := definerUser(text)
	if !ok {
		return
	}
	var alt *engine.TextFacts
	parse(asCurrent, func(stmts []ast.StmtNode, err error) {
		alt = stmtFacts(asCurrent, lex, stmts, err)
	})
	if alt.ParseError || len(alt.Stmts) != len(tf.Stmts) {
		return
	}
	for i := range tf.Stmts {
		st, f := &tf.Stmts[i], alt.Stmts[i]
		if st.Effects&engine.EffChangesIdentity == 0 || f.Effects&engine.EffChangesIdentity != 0 || f.Kind != st.Kind {
			continue
		}
		// Located in the text as read; the texts differ in the accounts.
		f.Loc, f.Length, f.PrevKinds = st.Loc, st.Length, st.PrevKinds
		st.AsUser = []engine.UserFacts{{User: user, Facts: f}}
	}
}

// definerUser finds the DEFINER = account clauses of text (tokens as
// prescan reads them: bare words, in any case, with comments between) and
// returns the one user name they all name, and text with each account
// replaced by CURRENT_USER. ok is false when there is none, when they name
// more than one user, or when a name is not plain (a quoted name with an
// escape in it).
func definerUser(text string) (user, asCurrent string, ok bool) {
	var b strings.Builder
	done := 0
	for t, more := nextToken(text, 0); more; t, more = nextToken(text, t.hi) {
		if !t.is(text, "definer") {
			continue
		}
		eq, more := nextToken(text, t.hi)
		if !more || eq.kind != '=' {
			continue
		}
		u, more := nextToken(text, eq.hi)
		if !more {
			return "", "", false
		}
		if u.is(text, "current_user") {
			continue
		}
		name, plain := accountPart(text, u)
		if !plain || user != "" && name != user {
			return "", "", false
		}
		user = name
		end := u.hi
		if at, more := nextToken(text, u.hi); more && at.kind == '@' && at.lo == u.hi {
			h, more := nextToken(text, at.hi)
			if !more || h.lo != at.hi {
				return "", "", false
			}
			if _, plain := accountPart(text, h); !plain {
				return "", "", false
			}
			end = h.hi
		}
		b.WriteString(text[done:u.lo])
		b.WriteString("CURRENT_USER")
		done = end
		t.hi = end
	}
	if user == "" {
		return "", "", false
	}
	b.WriteString(text[done:])
	return user, b.String(), true
}

// accountPart is the user or host name token t stands for: a bare word, or
// a `quoted`, 'quoted' or "quoted" name without escapes or doubled quotes.
func accountPart(text string, t token) (string, bool) {
	s := text[t.lo:t.hi]
	switch t.kind {
	case tokWord:
		return s, true
	case tokIdent, tokString:
		if len(s) < 2 || s[len(s)-1] != s[0] {
			return "", false
		}
		inner := s[1 : len(s)-1]
		if inner == "" || strings.ContainsAny(inner, "\\'\"`") {
			return "", false
		}
		return inner, true
	}
	return "", false
}
