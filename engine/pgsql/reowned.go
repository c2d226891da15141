package pgsql

// Statements that change who runs stored code without showing the code
// (engine.StmtFacts.Reowned): the code did not change, its runner did, so
// its definition, from the catalog, is judged again as the new runner.
//
//	ALTER FUNCTION f() SECURITY DEFINER     f's body, as f's owner
//	ALTER FUNCTION f() OWNER TO dba         f's body, as dba (also PROCEDURE, ROUTINE)
//	ALTER VIEW v OWNER TO dba               v's query, as dba (also ALTER TABLE v OWNER TO)
//	CREATE [EVENT] TRIGGER ... EXECUTE FUNCTION f()   f's body, as whoever fires it (its owner if SECURITY DEFINER)

import (
	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// reowned fills f.Reowned for top-level statement n.
func reowned(n *pg_query.Node, f *engine.StmtFacts) {
	switch {
	case n.GetAlterFunctionStmt() != nil:
		a := n.GetAlterFunctionStmt()
		for _, act := range a.Actions {
			d := act.GetDefElem()
			if d == nil || d.Defname != "security" || d.Arg == nil || !d.Arg.GetBoolean().GetBoolval() {
				continue
			}
			if schema, name, ok := routineName(a.Func); ok {
				f.Reowned = append(f.Reowned, engine.Reowned{Kind: engine.CatalogRoutine, Schema: schema, Name: name})
			}
		}
	case n.GetAlterOwnerStmt() != nil:
		a := n.GetAlterOwnerStmt()
		switch a.ObjectType {
		case pg_query.ObjectType_OBJECT_FUNCTION, pg_query.ObjectType_OBJECT_PROCEDURE, pg_query.ObjectType_OBJECT_ROUTINE:
			if schema, name, ok := routineName(a.Object.GetObjectWithArgs()); ok {
				r := engine.Reowned{Kind: engine.CatalogRoutine, Schema: schema, Name: name}
				r.To, r.ToSession = newOwner(a.Newowner)
				f.Reowned = append(f.Reowned, r)
			}
		}
	case n.GetCreateTrigStmt() != nil || n.GetCreateEventTrigStmt() != nil:
		fn := n.GetCreateTrigStmt().GetFuncname()
		if n.GetCreateEventTrigStmt() != nil {
			fn = n.GetCreateEventTrigStmt().GetFuncname()
		}
		if schema, name, ok := routineName(&pg_query.ObjectWithArgs{Objname: fn}); ok {
			f.Reowned = append(f.Reowned, engine.Reowned{Kind: engine.CatalogRoutine, Schema: schema, Name: name, Fires: true})
		}
	case n.GetAlterTableStmt() != nil:
		a := n.GetAlterTableStmt()
		if a.Relation == nil {
			return
		}
		for _, c := range a.Cmds {
			if cmd := c.GetAlterTableCmd(); cmd != nil && cmd.Subtype == pg_query.AlterTableType_AT_ChangeOwner {
				r := engine.Reowned{Kind: engine.CatalogView, Schema: a.Relation.Schemaname, Name: a.Relation.Relname}
				r.To, r.ToSession = newOwner(cmd.Newowner)
				f.Reowned = append(f.Reowned, r)
			}
		}
	}
}

// routineName is the schema and name an ALTER names a routine by.
func routineName(o *pg_query.ObjectWithArgs) (string, string, bool) {
	if o == nil || len(o.Objname) == 0 || len(o.Objname) > 2 {
		return "", "", false
	}
	name := o.Objname[len(o.Objname)-1].GetString_().GetSval()
	schema := ""
	if len(o.Objname) == 2 {
		schema = o.Objname[0].GetString_().GetSval()
	}
	return schema, name, name != ""
}

// newOwner is the role an OWNER TO names; session is true for
// CURRENT_USER, SESSION_USER and CURRENT_ROLE.
func newOwner(r *pg_query.RoleSpec) (string, bool) {
	if r == nil {
		return "", true
	}
	if r.Roletype == pg_query.RoleSpecType_ROLESPEC_CSTRING {
		return r.Rolename, false
	}
	return "", true
}
