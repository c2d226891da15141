package pgsql

// What a statement does to the session's search_path, by which the catalog
// resolves its unqualified names (engine/catalog.go, Session.SearchPath).
// The relay follows a plain SET search_path that runs on its own in an idle
// session; anything else that changes the path, or may, makes the path
// unknown to the engine, which then judges every schema's object of a name:
//
//	SET search_path = app, public      PathSet "app, public"
//	RESET search_path                  PathReset (the login role's default)
//	SET LOCAL search_path = app        PathUnknown (undone at COMMIT or ROLLBACK)
//	SELECT set_config('search_path', 'app', false)
//	SET ROLE r / SESSION AUTHORIZATION PathUnknown ($user is current_user)
//	RESET ALL, DISCARD ALL, DO, EXECUTE, dynamic SQL
//	SELECT f(), CALL p(), INSERT ...   PathMay (code the text does not show)

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// pathSettings are the settings that change how the path resolves.
var pathSettings = [...]string{"search_path", "role", "session_authorization", unknownSetting}

// pathChange fills f's PathChange, SetPath and PathMay for top-level
// statement n.
func pathChange(n *pg_query.Node, f *engine.StmtFacts) {
	if vs := n.GetVariableSetStmt(); vs != nil && strings.EqualFold(vs.Name, "search_path") && !vs.IsLocal {
		switch vs.Kind {
		case pg_query.VariableSetKind_VAR_SET_VALUE:
			if values, ok := constStrings(vs.Args); ok {
				if p, ok := pathValue(values); ok {
					f.PathChange, f.SetPath = engine.PathSet, p
					return
				}
			}
		case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
			f.PathChange = engine.PathReset
			return
		}
		f.PathChange = engine.PathUnknown
		return
	}
	if vs := n.GetVariableSetStmt(); vs != nil && vs.Kind == pg_query.VariableSetKind_VAR_RESET_ALL {
		f.PathChange = engine.PathUnknown
	}
	if d := n.GetDiscardStmt(); d != nil && d.Target == pg_query.DiscardMode_DISCARD_ALL {
		f.PathChange = engine.PathUnknown
	}
	for _, s := range f.Settings {
		for _, p := range pathSettings {
			if s == p {
				f.PathChange = engine.PathUnknown
			}
		}
	}
	if f.DynamicSQL || n.GetDoStmt() != nil || n.GetExecuteStmt() != nil || len(f.Languages) > 0 && f.Kind != engine.KindDDL {
		f.PathChange = engine.PathUnknown
	}
	if f.Kind == engine.KindCall || f.Kinds&(1<<engine.KindDDL) != 0 {
		f.PathMay = true
	}
	for _, t := range f.Tables {
		if t.Write && !t.CTE {
			f.PathMay = true
		}
	}
	for _, fn := range f.Funcs {
		if !builtinCall(fn) {
			f.PathMay = true
		}
	}
}

// builtinCall reports whether fn names a function of pg_catalog's, which
// changes no setting (set_config is read as the SET it is).
func builtinCall(fn engine.FuncRef) bool {
	return (fn.Schema == "" || fn.Schema == "pg_catalog") && isBuiltinFunc(fn.Name)
}

// pathValue is the value of SET search_path = values as the engine's
// Session.SearchPath holds it (each entry quoted as needed, ", " between),
// or false when an entry is one PostgreSQL would reject or the engine does
// not read (an empty name, a list inside one string).
func pathValue(values []string) (string, bool) {
	var b strings.Builder
	for i, v := range values {
		if v == "" || strings.ContainsAny(v, ",\"\x00") && v != "$user" {
			return "", false
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if v == "$user" || isPlainIdent(v) {
			b.WriteString(v)
			continue
		}
		b.WriteString(`"` + v + `"`)
	}
	return b.String(), true
}

func isPlainIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentPart(s[i]) || s[i] >= 'A' && s[i] <= 'Z' {
			return false
		}
	}
	return true
}

// SearchPathSet returns the path a text sets when it is one plain SET
// search_path (or RESET: engine.SearchPathDefault); false for anything
// else.
func (pgDialect) SearchPathSet(tf *engine.TextFacts) (string, bool) {
	if tf.ParseError || len(tf.Stmts) != 1 {
		return "", false
	}
	f := &tf.Stmts[0]
	switch {
	case f.PathMay:
		return "", false
	case f.PathChange == engine.PathSet:
		return f.SetPath, true
	case f.PathChange == engine.PathReset:
		return engine.SearchPathDefault, true
	}
	return "", false
}
