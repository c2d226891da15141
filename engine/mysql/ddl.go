package mysql

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfw/sqlfw/engine"
)

// objectNames are the object types a rule's `objects:` may name for MySQL:
// those classify gives, and those of the DDL TiDB's parser does not parse
// but the recognizer of such texts knows by its leading words
// (unparsed.go): functions, triggers, events, servers and plugins. Their
// statements are parse errors, so only a deny rule can name them.
var objectNames = []string{
	"database", "table", "view", "index", "sequence", "procedure", "user", "role",
	"function", "trigger", "event", "server", "plugin",
}

// classify returns a statement's kind, and for DDL and DCL its verb and
// object type. EXPLAIN ANALYZE is handled by the caller.
func classify(s ast.StmtNode) (engine.StmtKind, engine.DDLVerb, string) {
	switch x := s.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.DoStmt:
		// DO evaluates expressions like a SELECT that returns nothing.
		return engine.KindSelect, engine.VerbNone, ""
	case *ast.InsertStmt:
		return engine.KindInsert, engine.VerbNone, ""
	case *ast.UpdateStmt:
		return engine.KindUpdate, engine.VerbNone, ""
	case *ast.DeleteStmt:
		return engine.KindDelete, engine.VerbNone, ""
	case *ast.LoadDataStmt:
		// MySQL's COPY FROM.
		return engine.KindCopy, engine.VerbNone, ""
	case *ast.TruncateTableStmt:
		return engine.KindTruncate, engine.VerbNone, ""
	case *ast.CallStmt:
		return engine.KindCall, engine.VerbNone, ""
	case *ast.ExplainStmt, *ast.ExplainForStmt:
		return engine.KindExplain, engine.VerbNone, ""
	case *ast.SetStmt, *ast.SetRoleStmt, *ast.SetDefaultRoleStmt, *ast.SetResourceGroupStmt:
		return engine.KindSetStmt, engine.VerbNone, ""
	case *ast.BeginStmt, *ast.CommitStmt, *ast.RollbackStmt, *ast.SavepointStmt, *ast.ReleaseSavepointStmt:
		return engine.KindTransaction, engine.VerbNone, ""
	case *ast.AnalyzeTableStmt:
		return engine.KindAnalyze, engine.VerbNone, ""
	case *ast.OptimizeTableStmt:
		// OPTIMIZE TABLE rebuilds the table: MySQL's VACUUM FULL.
		return engine.KindVacuum, engine.VerbNone, ""

	case *ast.CreateDatabaseStmt:
		return engine.KindDDL, engine.VerbCreate, "database"
	case *ast.AlterDatabaseStmt:
		return engine.KindDDL, engine.VerbAlter, "database"
	case *ast.DropDatabaseStmt:
		return engine.KindDDL, engine.VerbDrop, "database"
	case *ast.CreateTableStmt:
		return engine.KindDDL, engine.VerbCreate, "table"
	case *ast.AlterTableStmt:
		return engine.KindDDL, engine.VerbAlter, "table"
	case *ast.DropTableStmt:
		if x.IsView {
			return engine.KindDDL, engine.VerbDrop, "view"
		}
		return engine.KindDDL, engine.VerbDrop, "table"
	case *ast.RenameTableStmt:
		return engine.KindDDL, engine.VerbAlter, "table"
	case *ast.CreateViewStmt:
		return engine.KindDDL, engine.VerbCreate, "view"
	case *ast.CreateIndexStmt:
		return engine.KindDDL, engine.VerbCreate, "index"
	case *ast.DropIndexStmt:
		return engine.KindDDL, engine.VerbDrop, "index"
	case *ast.CreateSequenceStmt:
		return engine.KindDDL, engine.VerbCreate, "sequence"
	case *ast.AlterSequenceStmt:
		return engine.KindDDL, engine.VerbAlter, "sequence"
	case *ast.DropSequenceStmt:
		return engine.KindDDL, engine.VerbDrop, "sequence"
	case *ast.ProcedureInfo:
		return engine.KindDDL, engine.VerbCreate, "procedure"
	case *ast.DropProcedureStmt:
		return engine.KindDDL, engine.VerbDrop, "procedure"

	case *ast.GrantStmt, *ast.GrantProxyStmt:
		return engine.KindDCL, engine.VerbGrant, "user"
	case *ast.GrantRoleStmt:
		return engine.KindDCL, engine.VerbGrant, "role"
	case *ast.RevokeStmt:
		return engine.KindDCL, engine.VerbRevoke, "user"
	case *ast.RevokeRoleStmt:
		return engine.KindDCL, engine.VerbRevoke, "role"
	case *ast.CreateUserStmt:
		if x.IsCreateRole {
			return engine.KindDCL, engine.VerbCreate, "role"
		}
		return engine.KindDCL, engine.VerbCreate, "user"
	case *ast.SetPwdStmt:
		if x.User == nil || x.User.CurrentUser {
			// SET PASSWORD = '...': the session's own account.
			return engine.KindDCL, engine.VerbAlter, ""
		}
		return engine.KindDCL, engine.VerbAlter, "user"
	case *ast.AlterUserStmt:
		if x.CurrentAuth != nil && len(x.Specs) == 0 {
			// ALTER USER USER() IDENTIFIED BY '...': the session's own
			// password, as SET PASSWORD = '...'.
			return engine.KindDCL, engine.VerbAlter, ""
		}
		return engine.KindDCL, engine.VerbAlter, "user"
	case *ast.RenameUserStmt:
		return engine.KindDCL, engine.VerbAlter, "user"
	case *ast.DropUserStmt:
		if x.IsDropRole {
			return engine.KindDCL, engine.VerbDrop, "role"
		}
		return engine.KindDCL, engine.VerbDrop, "user"
	}
	return engine.KindUtility, engine.VerbNone, ""
}
