package engine

import (
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"
)

// objectName turns pg_query's OBJECT_FOREIGN_TABLE into "foreign_table".
func objectName(t pg_query.ObjectType) string {
	return strings.ToLower(strings.TrimPrefix(t.String(), "OBJECT_"))
}

// ddlInfo classifies a DDL or DCL statement by verb and object type
// ("table", "function", "role", ...: PostgreSQL's ObjectType names in lower
// case). Statements that are neither get verbNone and "".
func ddlInfo(n *pg_query.Node) (DDLVerb, string) {
	switch s := n.Node.(type) {
	case *pg_query.Node_CreateStmt:
		return VerbCreate, "table"
	case *pg_query.Node_CreateTableAsStmt:
		return VerbCreate, objectName(s.CreateTableAsStmt.Objtype)
	case *pg_query.Node_ViewStmt:
		return VerbCreate, "view"
	case *pg_query.Node_IndexStmt:
		return VerbCreate, "index"
	case *pg_query.Node_CreateSeqStmt:
		return VerbCreate, "sequence"
	case *pg_query.Node_AlterSeqStmt:
		return VerbAlter, "sequence"
	case *pg_query.Node_CreateSchemaStmt:
		return VerbCreate, "schema"
	case *pg_query.Node_CreateFunctionStmt:
		if s.CreateFunctionStmt.IsProcedure {
			return VerbCreate, "procedure"
		}
		return VerbCreate, "function"
	case *pg_query.Node_AlterFunctionStmt:
		return VerbAlter, objectName(s.AlterFunctionStmt.Objtype)
	case *pg_query.Node_CreateTrigStmt:
		return VerbCreate, "trigger"
	case *pg_query.Node_CreateEventTrigStmt:
		return VerbCreate, "event_trigger"
	case *pg_query.Node_AlterEventTrigStmt:
		return VerbAlter, "event_trigger"
	case *pg_query.Node_CreateExtensionStmt:
		return VerbCreate, "extension"
	case *pg_query.Node_AlterExtensionStmt, *pg_query.Node_AlterExtensionContentsStmt:
		return VerbAlter, "extension"
	case *pg_query.Node_CreatePlangStmt:
		return VerbCreate, "language"
	case *pg_query.Node_CreateRoleStmt:
		return VerbCreate, "role"
	case *pg_query.Node_AlterRoleStmt, *pg_query.Node_AlterRoleSetStmt:
		return VerbAlter, "role"
	case *pg_query.Node_DropRoleStmt:
		return VerbDrop, "role"
	case *pg_query.Node_GrantRoleStmt:
		if s.GrantRoleStmt.IsGrant {
			return VerbGrant, "role"
		}
		return VerbRevoke, "role"
	case *pg_query.Node_GrantStmt:
		if s.GrantStmt.IsGrant {
			return VerbGrant, objectName(s.GrantStmt.Objtype)
		}
		return VerbRevoke, objectName(s.GrantStmt.Objtype)
	case *pg_query.Node_AlterDefaultPrivilegesStmt:
		if a := s.AlterDefaultPrivilegesStmt.Action; a != nil && !a.IsGrant {
			return VerbRevoke, "defacl"
		}
		return VerbGrant, "defacl"
	case *pg_query.Node_ReassignOwnedStmt, *pg_query.Node_DropOwnedStmt:
		return VerbAlter, "role"
	case *pg_query.Node_CreatedbStmt:
		return VerbCreate, "database"
	case *pg_query.Node_AlterDatabaseStmt, *pg_query.Node_AlterDatabaseSetStmt, *pg_query.Node_AlterDatabaseRefreshCollStmt:
		return VerbAlter, "database"
	case *pg_query.Node_DropdbStmt:
		return VerbDrop, "database"
	case *pg_query.Node_CreateTableSpaceStmt:
		return VerbCreate, "tablespace"
	case *pg_query.Node_DropTableSpaceStmt:
		return VerbDrop, "tablespace"
	case *pg_query.Node_AlterTableSpaceOptionsStmt:
		return VerbAlter, "tablespace"
	case *pg_query.Node_DropStmt:
		return VerbDrop, objectName(s.DropStmt.RemoveType)
	case *pg_query.Node_AlterTableStmt:
		return VerbAlter, objectName(s.AlterTableStmt.Objtype)
	case *pg_query.Node_RenameStmt:
		return VerbAlter, objectName(s.RenameStmt.RenameType)
	case *pg_query.Node_AlterOwnerStmt:
		return VerbAlter, objectName(s.AlterOwnerStmt.ObjectType)
	case *pg_query.Node_AlterObjectSchemaStmt:
		return VerbAlter, objectName(s.AlterObjectSchemaStmt.ObjectType)
	case *pg_query.Node_CommentStmt:
		return VerbComment, objectName(s.CommentStmt.Objtype)
	case *pg_query.Node_SecLabelStmt:
		return VerbComment, objectName(s.SecLabelStmt.Objtype)
	case *pg_query.Node_DefineStmt:
		return VerbCreate, objectName(s.DefineStmt.Kind)
	case *pg_query.Node_CompositeTypeStmt, *pg_query.Node_CreateEnumStmt, *pg_query.Node_CreateRangeStmt:
		return VerbCreate, "type"
	case *pg_query.Node_AlterEnumStmt:
		return VerbAlter, "type"
	case *pg_query.Node_CreateDomainStmt:
		return VerbCreate, "domain"
	case *pg_query.Node_AlterDomainStmt:
		return VerbAlter, "domain"
	case *pg_query.Node_RuleStmt:
		return VerbCreate, "rule"
	case *pg_query.Node_CreatePolicyStmt:
		return VerbCreate, "policy"
	case *pg_query.Node_AlterPolicyStmt:
		return VerbAlter, "policy"
	case *pg_query.Node_CreateForeignTableStmt:
		return VerbCreate, "foreign_table"
	case *pg_query.Node_ImportForeignSchemaStmt:
		return VerbCreate, "foreign_table"
	case *pg_query.Node_CreateFdwStmt:
		return VerbCreate, "fdw"
	case *pg_query.Node_AlterFdwStmt:
		return VerbAlter, "fdw"
	case *pg_query.Node_CreateForeignServerStmt:
		return VerbCreate, "foreign_server"
	case *pg_query.Node_AlterForeignServerStmt:
		return VerbAlter, "foreign_server"
	case *pg_query.Node_CreateUserMappingStmt:
		return VerbCreate, "user_mapping"
	case *pg_query.Node_AlterUserMappingStmt:
		return VerbAlter, "user_mapping"
	case *pg_query.Node_DropUserMappingStmt:
		return VerbDrop, "user_mapping"
	case *pg_query.Node_CreatePublicationStmt:
		return VerbCreate, "publication"
	case *pg_query.Node_AlterPublicationStmt:
		return VerbAlter, "publication"
	case *pg_query.Node_CreateSubscriptionStmt:
		return VerbCreate, "subscription"
	case *pg_query.Node_AlterSubscriptionStmt:
		return VerbAlter, "subscription"
	case *pg_query.Node_DropSubscriptionStmt:
		return VerbDrop, "subscription"
	case *pg_query.Node_CreateCastStmt:
		return VerbCreate, "cast"
	case *pg_query.Node_CreateConversionStmt:
		return VerbCreate, "conversion"
	case *pg_query.Node_CreateStatsStmt:
		return VerbCreate, "statistic_ext"
	case *pg_query.Node_CreateTransformStmt:
		return VerbCreate, "transform"
	case *pg_query.Node_CreateAmStmt:
		return VerbCreate, "access_method"
	case *pg_query.Node_CreateOpClassStmt:
		return VerbCreate, "opclass"
	case *pg_query.Node_CreateOpFamilyStmt:
		return VerbCreate, "opfamily"
	case *pg_query.Node_RefreshMatViewStmt:
		return VerbRefresh, "matview"
	case *pg_query.Node_TruncateStmt:
		return VerbNone, "table"
	}
	name := string(n.ProtoReflect().WhichOneof(nodeOneof).Message().Name())
	switch {
	case strings.HasPrefix(name, "Create"):
		return VerbCreate, ""
	case strings.HasPrefix(name, "Alter"):
		return VerbAlter, ""
	case strings.HasPrefix(name, "Drop"):
		return VerbDrop, ""
	}
	return VerbNone, ""
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
