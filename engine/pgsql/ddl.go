package pgsql

import (
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// objectName turns pg_query's OBJECT_FOREIGN_TABLE into "foreign_table".
func objectName(t pg_query.ObjectType) string {
	return strings.ToLower(strings.TrimPrefix(t.String(), "OBJECT_"))
}

// ddlInfo classifies a DDL or DCL statement by verb and object type
// ("table", "function", "role", ...: PostgreSQL's ObjectType names in lower
// case). Statements that are neither get verbNone and "".
func ddlInfo(n *pg_query.Node) (engine.DDLVerb, string) {
	switch s := n.Node.(type) {
	case *pg_query.Node_CreateStmt:
		return engine.VerbCreate, "table"
	case *pg_query.Node_CreateTableAsStmt:
		return engine.VerbCreate, objectName(s.CreateTableAsStmt.Objtype)
	case *pg_query.Node_ViewStmt:
		return engine.VerbCreate, "view"
	case *pg_query.Node_IndexStmt:
		return engine.VerbCreate, "index"
	case *pg_query.Node_CreateSeqStmt:
		return engine.VerbCreate, "sequence"
	case *pg_query.Node_AlterSeqStmt:
		return engine.VerbAlter, "sequence"
	case *pg_query.Node_CreateSchemaStmt:
		return engine.VerbCreate, "schema"
	case *pg_query.Node_CreateFunctionStmt:
		if s.CreateFunctionStmt.IsProcedure {
			return engine.VerbCreate, "procedure"
		}
		return engine.VerbCreate, "function"
	case *pg_query.Node_AlterFunctionStmt:
		return engine.VerbAlter, objectName(s.AlterFunctionStmt.Objtype)
	case *pg_query.Node_CreateTrigStmt:
		return engine.VerbCreate, "trigger"
	case *pg_query.Node_CreateEventTrigStmt:
		return engine.VerbCreate, "event_trigger"
	case *pg_query.Node_AlterEventTrigStmt:
		return engine.VerbAlter, "event_trigger"
	case *pg_query.Node_CreateExtensionStmt:
		return engine.VerbCreate, "extension"
	case *pg_query.Node_AlterExtensionStmt, *pg_query.Node_AlterExtensionContentsStmt:
		return engine.VerbAlter, "extension"
	case *pg_query.Node_CreatePlangStmt:
		return engine.VerbCreate, "language"
	case *pg_query.Node_CreateRoleStmt:
		return engine.VerbCreate, "role"
	case *pg_query.Node_AlterRoleStmt, *pg_query.Node_AlterRoleSetStmt:
		return engine.VerbAlter, "role"
	case *pg_query.Node_DropRoleStmt:
		return engine.VerbDrop, "role"
	case *pg_query.Node_GrantRoleStmt:
		if s.GrantRoleStmt.IsGrant {
			return engine.VerbGrant, "role"
		}
		return engine.VerbRevoke, "role"
	case *pg_query.Node_GrantStmt:
		if s.GrantStmt.IsGrant {
			return engine.VerbGrant, objectName(s.GrantStmt.Objtype)
		}
		return engine.VerbRevoke, objectName(s.GrantStmt.Objtype)
	case *pg_query.Node_AlterDefaultPrivilegesStmt:
		if a := s.AlterDefaultPrivilegesStmt.Action; a != nil && !a.IsGrant {
			return engine.VerbRevoke, "defacl"
		}
		return engine.VerbGrant, "defacl"
	case *pg_query.Node_ReassignOwnedStmt, *pg_query.Node_DropOwnedStmt:
		return engine.VerbAlter, "role"
	case *pg_query.Node_CreatedbStmt:
		return engine.VerbCreate, "database"
	case *pg_query.Node_AlterDatabaseStmt, *pg_query.Node_AlterDatabaseSetStmt, *pg_query.Node_AlterDatabaseRefreshCollStmt:
		return engine.VerbAlter, "database"
	case *pg_query.Node_DropdbStmt:
		return engine.VerbDrop, "database"
	case *pg_query.Node_CreateTableSpaceStmt:
		return engine.VerbCreate, "tablespace"
	case *pg_query.Node_DropTableSpaceStmt:
		return engine.VerbDrop, "tablespace"
	case *pg_query.Node_AlterTableSpaceOptionsStmt:
		return engine.VerbAlter, "tablespace"
	case *pg_query.Node_DropStmt:
		return engine.VerbDrop, objectName(s.DropStmt.RemoveType)
	case *pg_query.Node_AlterTableStmt:
		return engine.VerbAlter, objectName(s.AlterTableStmt.Objtype)
	case *pg_query.Node_RenameStmt:
		return engine.VerbAlter, objectName(s.RenameStmt.RenameType)
	case *pg_query.Node_AlterOwnerStmt:
		return engine.VerbAlter, objectName(s.AlterOwnerStmt.ObjectType)
	case *pg_query.Node_AlterObjectSchemaStmt:
		return engine.VerbAlter, objectName(s.AlterObjectSchemaStmt.ObjectType)
	case *pg_query.Node_CommentStmt:
		return engine.VerbComment, objectName(s.CommentStmt.Objtype)
	case *pg_query.Node_SecLabelStmt:
		return engine.VerbComment, objectName(s.SecLabelStmt.Objtype)
	case *pg_query.Node_DefineStmt:
		return engine.VerbCreate, objectName(s.DefineStmt.Kind)
	case *pg_query.Node_CompositeTypeStmt, *pg_query.Node_CreateEnumStmt, *pg_query.Node_CreateRangeStmt:
		return engine.VerbCreate, "type"
	case *pg_query.Node_AlterEnumStmt:
		return engine.VerbAlter, "type"
	case *pg_query.Node_CreateDomainStmt:
		return engine.VerbCreate, "domain"
	case *pg_query.Node_AlterDomainStmt:
		return engine.VerbAlter, "domain"
	case *pg_query.Node_RuleStmt:
		return engine.VerbCreate, "rule"
	case *pg_query.Node_CreatePolicyStmt:
		return engine.VerbCreate, "policy"
	case *pg_query.Node_AlterPolicyStmt:
		return engine.VerbAlter, "policy"
	case *pg_query.Node_CreateForeignTableStmt:
		return engine.VerbCreate, "foreign_table"
	case *pg_query.Node_ImportForeignSchemaStmt:
		return engine.VerbCreate, "foreign_table"
	case *pg_query.Node_CreateFdwStmt:
		return engine.VerbCreate, "fdw"
	case *pg_query.Node_AlterFdwStmt:
		return engine.VerbAlter, "fdw"
	case *pg_query.Node_CreateForeignServerStmt:
		return engine.VerbCreate, "foreign_server"
	case *pg_query.Node_AlterForeignServerStmt:
		return engine.VerbAlter, "foreign_server"
	case *pg_query.Node_CreateUserMappingStmt:
		return engine.VerbCreate, "user_mapping"
	case *pg_query.Node_AlterUserMappingStmt:
		return engine.VerbAlter, "user_mapping"
	case *pg_query.Node_DropUserMappingStmt:
		return engine.VerbDrop, "user_mapping"
	case *pg_query.Node_CreatePublicationStmt:
		return engine.VerbCreate, "publication"
	case *pg_query.Node_AlterPublicationStmt:
		return engine.VerbAlter, "publication"
	case *pg_query.Node_CreateSubscriptionStmt:
		return engine.VerbCreate, "subscription"
	case *pg_query.Node_AlterSubscriptionStmt:
		return engine.VerbAlter, "subscription"
	case *pg_query.Node_DropSubscriptionStmt:
		return engine.VerbDrop, "subscription"
	case *pg_query.Node_CreateCastStmt:
		return engine.VerbCreate, "cast"
	case *pg_query.Node_CreateConversionStmt:
		return engine.VerbCreate, "conversion"
	case *pg_query.Node_CreateStatsStmt:
		return engine.VerbCreate, "statistic_ext"
	case *pg_query.Node_CreateTransformStmt:
		return engine.VerbCreate, "transform"
	case *pg_query.Node_CreateAmStmt:
		return engine.VerbCreate, "access_method"
	case *pg_query.Node_CreateOpClassStmt:
		return engine.VerbCreate, "opclass"
	case *pg_query.Node_CreateOpFamilyStmt:
		return engine.VerbCreate, "opfamily"
	case *pg_query.Node_RefreshMatViewStmt:
		return engine.VerbRefresh, "matview"
	case *pg_query.Node_TruncateStmt:
		return engine.VerbNone, "table"
	}
	name := string(n.ProtoReflect().WhichOneof(nodeOneof).Message().Name())
	switch {
	case strings.HasPrefix(name, "Create"):
		return engine.VerbCreate, ""
	case strings.HasPrefix(name, "Alter"):
		return engine.VerbAlter, ""
	case strings.HasPrefix(name, "Drop"):
		return engine.VerbDrop, ""
	}
	return engine.VerbNone, ""
}

// isDCL reports whether a top-level statement manages privileges or roles.
func isDCL(n *pg_query.Node) bool {
	switch n.Node.(type) {
	case *pg_query.Node_GrantStmt, *pg_query.Node_GrantRoleStmt, *pg_query.Node_AlterDefaultPrivilegesStmt,
		*pg_query.Node_CreateRoleStmt, *pg_query.Node_AlterRoleStmt, *pg_query.Node_AlterRoleSetStmt,
		*pg_query.Node_DropRoleStmt, *pg_query.Node_ReassignOwnedStmt, *pg_query.Node_DropOwnedStmt:
		return true
	}
	return false
}

// objectNames are PostgreSQL's object types (OBJECT_* in lower case), in
// order.
var objectNames = func() []string {
	var out []string
	for v := range pg_query.ObjectType_name {
		if v > 0 {
			out = append(out, objectName(pg_query.ObjectType(v)))
		}
	}
	sort.Strings(out)
	return out
}()
