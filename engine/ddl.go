package engine

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"
)

// ddlVerb is what a DDL or DCL statement does to its object, as rules name
// it in `verbs:`.
type ddlVerb uint8

const (
	verbNone ddlVerb = iota
	verbCreate
	verbAlter
	verbDrop
	verbGrant
	verbRevoke
	verbComment
	verbRefresh
	numVerbs
)

var verbNames = [numVerbs]string{
	verbNone:    "",
	verbCreate:  "create",
	verbAlter:   "alter",
	verbDrop:    "drop",
	verbGrant:   "grant",
	verbRevoke:  "revoke",
	verbComment: "comment",
	verbRefresh: "refresh",
}

// objectName turns pg_query's OBJECT_FOREIGN_TABLE into "foreign_table".
func objectName(t pg_query.ObjectType) string {
	return strings.ToLower(strings.TrimPrefix(t.String(), "OBJECT_"))
}

// ddlInfo classifies a DDL or DCL statement by verb and object type
// ("table", "function", "role", ...: PostgreSQL's ObjectType names in lower
// case). Statements that are neither get verbNone and "".
func ddlInfo(n *pg_query.Node) (ddlVerb, string) {
	switch s := n.Node.(type) {
	case *pg_query.Node_CreateStmt:
		return verbCreate, "table"
	case *pg_query.Node_CreateTableAsStmt:
		return verbCreate, objectName(s.CreateTableAsStmt.Objtype)
	case *pg_query.Node_ViewStmt:
		return verbCreate, "view"
	case *pg_query.Node_IndexStmt:
		return verbCreate, "index"
	case *pg_query.Node_CreateSeqStmt:
		return verbCreate, "sequence"
	case *pg_query.Node_AlterSeqStmt:
		return verbAlter, "sequence"
	case *pg_query.Node_CreateSchemaStmt:
		return verbCreate, "schema"
	case *pg_query.Node_CreateFunctionStmt:
		if s.CreateFunctionStmt.IsProcedure {
			return verbCreate, "procedure"
		}
		return verbCreate, "function"
	case *pg_query.Node_AlterFunctionStmt:
		return verbAlter, objectName(s.AlterFunctionStmt.Objtype)
	case *pg_query.Node_CreateTrigStmt:
		return verbCreate, "trigger"
	case *pg_query.Node_CreateEventTrigStmt:
		return verbCreate, "event_trigger"
	case *pg_query.Node_AlterEventTrigStmt:
		return verbAlter, "event_trigger"
	case *pg_query.Node_CreateExtensionStmt:
		return verbCreate, "extension"
	case *pg_query.Node_AlterExtensionStmt, *pg_query.Node_AlterExtensionContentsStmt:
		return verbAlter, "extension"
	case *pg_query.Node_CreatePlangStmt:
		return verbCreate, "language"
	case *pg_query.Node_CreateRoleStmt:
		return verbCreate, "role"
	case *pg_query.Node_AlterRoleStmt, *pg_query.Node_AlterRoleSetStmt:
		return verbAlter, "role"
	case *pg_query.Node_DropRoleStmt:
		return verbDrop, "role"
	case *pg_query.Node_GrantRoleStmt:
		if s.GrantRoleStmt.IsGrant {
			return verbGrant, "role"
		}
		return verbRevoke, "role"
	case *pg_query.Node_GrantStmt:
		if s.GrantStmt.IsGrant {
			return verbGrant, objectName(s.GrantStmt.Objtype)
		}
		return verbRevoke, objectName(s.GrantStmt.Objtype)
	case *pg_query.Node_AlterDefaultPrivilegesStmt:
		if a := s.AlterDefaultPrivilegesStmt.Action; a != nil && !a.IsGrant {
			return verbRevoke, "defacl"
		}
		return verbGrant, "defacl"
	case *pg_query.Node_ReassignOwnedStmt, *pg_query.Node_DropOwnedStmt:
		return verbAlter, "role"
	case *pg_query.Node_CreatedbStmt:
		return verbCreate, "database"
	case *pg_query.Node_AlterDatabaseStmt, *pg_query.Node_AlterDatabaseSetStmt, *pg_query.Node_AlterDatabaseRefreshCollStmt:
		return verbAlter, "database"
	case *pg_query.Node_DropdbStmt:
		return verbDrop, "database"
	case *pg_query.Node_CreateTableSpaceStmt:
		return verbCreate, "tablespace"
	case *pg_query.Node_DropTableSpaceStmt:
		return verbDrop, "tablespace"
	case *pg_query.Node_AlterTableSpaceOptionsStmt:
		return verbAlter, "tablespace"
	case *pg_query.Node_DropStmt:
		return verbDrop, objectName(s.DropStmt.RemoveType)
	case *pg_query.Node_AlterTableStmt:
		return verbAlter, objectName(s.AlterTableStmt.Objtype)
	case *pg_query.Node_RenameStmt:
		return verbAlter, objectName(s.RenameStmt.RenameType)
	case *pg_query.Node_AlterOwnerStmt:
		return verbAlter, objectName(s.AlterOwnerStmt.ObjectType)
	case *pg_query.Node_AlterObjectSchemaStmt:
		return verbAlter, objectName(s.AlterObjectSchemaStmt.ObjectType)
	case *pg_query.Node_CommentStmt:
		return verbComment, objectName(s.CommentStmt.Objtype)
	case *pg_query.Node_SecLabelStmt:
		return verbComment, objectName(s.SecLabelStmt.Objtype)
	case *pg_query.Node_DefineStmt:
		return verbCreate, objectName(s.DefineStmt.Kind)
	case *pg_query.Node_CompositeTypeStmt, *pg_query.Node_CreateEnumStmt, *pg_query.Node_CreateRangeStmt:
		return verbCreate, "type"
	case *pg_query.Node_AlterEnumStmt:
		return verbAlter, "type"
	case *pg_query.Node_CreateDomainStmt:
		return verbCreate, "domain"
	case *pg_query.Node_AlterDomainStmt:
		return verbAlter, "domain"
	case *pg_query.Node_RuleStmt:
		return verbCreate, "rule"
	case *pg_query.Node_CreatePolicyStmt:
		return verbCreate, "policy"
	case *pg_query.Node_AlterPolicyStmt:
		return verbAlter, "policy"
	case *pg_query.Node_CreateForeignTableStmt:
		return verbCreate, "foreign_table"
	case *pg_query.Node_ImportForeignSchemaStmt:
		return verbCreate, "foreign_table"
	case *pg_query.Node_CreateFdwStmt:
		return verbCreate, "fdw"
	case *pg_query.Node_AlterFdwStmt:
		return verbAlter, "fdw"
	case *pg_query.Node_CreateForeignServerStmt:
		return verbCreate, "foreign_server"
	case *pg_query.Node_AlterForeignServerStmt:
		return verbAlter, "foreign_server"
	case *pg_query.Node_CreateUserMappingStmt:
		return verbCreate, "user_mapping"
	case *pg_query.Node_AlterUserMappingStmt:
		return verbAlter, "user_mapping"
	case *pg_query.Node_DropUserMappingStmt:
		return verbDrop, "user_mapping"
	case *pg_query.Node_CreatePublicationStmt:
		return verbCreate, "publication"
	case *pg_query.Node_AlterPublicationStmt:
		return verbAlter, "publication"
	case *pg_query.Node_CreateSubscriptionStmt:
		return verbCreate, "subscription"
	case *pg_query.Node_AlterSubscriptionStmt:
		return verbAlter, "subscription"
	case *pg_query.Node_DropSubscriptionStmt:
		return verbDrop, "subscription"
	case *pg_query.Node_CreateCastStmt:
		return verbCreate, "cast"
	case *pg_query.Node_CreateConversionStmt:
		return verbCreate, "conversion"
	case *pg_query.Node_CreateStatsStmt:
		return verbCreate, "statistic_ext"
	case *pg_query.Node_CreateTransformStmt:
		return verbCreate, "transform"
	case *pg_query.Node_CreateAmStmt:
		return verbCreate, "access_method"
	case *pg_query.Node_CreateOpClassStmt:
		return verbCreate, "opclass"
	case *pg_query.Node_CreateOpFamilyStmt:
		return verbCreate, "opfamily"
	case *pg_query.Node_RefreshMatViewStmt:
		return verbRefresh, "matview"
	case *pg_query.Node_TruncateStmt:
		return verbNone, "table"
	}
	name := string(n.ProtoReflect().WhichOneof(nodeOneof).Message().Name())
	switch {
	case strings.HasPrefix(name, "Create"):
		return verbCreate, ""
	case strings.HasPrefix(name, "Alter"):
		return verbAlter, ""
	case strings.HasPrefix(name, "Drop"):
		return verbDrop, ""
	}
	return verbNone, ""
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

func init() {
	objectNameSet = map[string]struct{}{}
	for v := range pg_query.ObjectType_name {
		if v > 0 {
			objectNameSet[objectName(pg_query.ObjectType(v))] = struct{}{}
		}
	}
}
