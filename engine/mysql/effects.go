package mysql

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/sqlfw/sqlfw/engine"
)

// What a statement makes a MySQL or MariaDB server do, in the effect names
// PostgreSQL's dialect uses too (engine/vocab.go), so that one policy names
// them once.

// funcEffects are the effects of calling a function by name.
var funcEffects = map[string]engine.EffectSet{
	"load_file": engine.EffReadsServerFile, // reads any file the server may (secure_file_priv)
	// lib_mysqludf_sys, the UDF library exploit kits install.
	"sys_exec": engine.EffRunsProgram,
	"sys_eval": engine.EffRunsProgram,
}

// credentialTables hold password hashes (mysql.user is a view over
// mysql.global_priv in MariaDB) or replication passwords.
var credentialTables = map[string]bool{
	"user":             true,
	"global_priv":      true,
	"password_history": true,
	// password_reuse_check's hashes of every account's earlier passwords
	"password_reuse_check_history": true,
	"slave_master_info":            true,
	"servers":                      true, // CREATE SERVER's options: FEDERATED and CONNECT passwords
	// The logs as tables (log_output = TABLE): every statement's text, the
	// passwords of CREATE USER, ALTER USER and SET PASSWORD in clear.
	"general_log": true,
	"slow_log":    true,
	// Who may do what, and the code that runs as whom: the privilege
	// tables name every account and what it holds (the target list of a
	// takeover), mysql.proc every routine's body and DEFINER. A utility
	// statement on them (LOCK TABLES mysql.proc READ, which mysqldump
	// sends; CHECK TABLE) returns none of it: privilegeTables.
	"tables_priv":   true,
	"columns_priv":  true,
	"procs_priv":    true,
	"proxies_priv":  true,
	"roles_mapping": true,
	"proc":          true,
	"event":         true, // every event's body and DEFINER, as mysql.proc
}

// privilegeTables are the credentialTables a utility statement may name
// without reading them.
var privilegeTables = map[string]bool{
	"tables_priv": true, "columns_priv": true, "procs_priv": true, "proxies_priv": true,
	"roles_mapping": true, "proc": true, "event": true,
}

// loggingSettings are the variables that switch the server's own logging,
// binary logging or auditing, or change what it records.
var loggingSettings = map[string]bool{
	"general_log": true, "slow_query_log": true, "log_output": true, "sql_log_off": true,
	"sql_log_bin": true, "long_query_time": true, "min_examined_row_limit": true,
	"log_slow_admin_statements": true, "log_slow_filter": true, "log_slow_rate_limit": true,
	"log_slow_verbosity": true, "log_error_verbosity": true, "log_warnings": true,
	"binlog_format": true, "log_bin_trust_function_creators": true,
}

// fileSettings are the variables whose value is a server file the server
// then writes: SET GLOBAL general_log_file = '/var/www/shell.php' with
// general_log on writes the statements that follow into it.
var fileSettings = map[string]bool{
	"general_log_file": true, "slow_query_log_file": true, "server_audit_file_path": true,
	"audit_log_file": true,
}

// setting records one SET assignment: the name of a system variable, and
// the effects of setting it.
func setting(st *engine.StmtFacts, va *ast.VariableAssignment) {
	if !va.IsSystem {
		return // a user variable (@x) or SET NAMES / CHARACTER SET
	}
	name := strings.ToLower(va.Name)
	global := va.IsGlobal || va.IsInstance
	if scope, rest, ok := strings.Cut(name, "."); ok && (scope == "persist" || scope == "persist_only") {
		// TiDB reads MySQL 8's @@persist.x and @@persist_only.x as a
		// name with a dot (NEW.a in a trigger, r.a of a ROW variable,
		// are too, and set no server variable; the key caches'
		// structured variables, hot_cache.key_buffer_size, take SET
		// GLOBAL)
		global, name = true, rest
	}
	if global {
		// SET GLOBAL, SET @@global.x: the server's configuration, for
		// every session (as ALTER SYSTEM is PostgreSQL's)
		st.Kinds |= 1 << engine.KindAlterSystem
	}
	st.Settings = append(st.Settings, name)
	switch {
	case fileSettings[name]:
		st.Effects |= engine.EffWritesServerFile
	case loggingSettings[name], strings.HasPrefix(name, "server_audit"), strings.HasPrefix(name, "audit_log"),
		strings.HasPrefix(name, "performance_schema"):
		st.Effects |= engine.EffDisablesLogging
	}
}

// serverProcedures are the procedures MariaDB installs in its own schemas
// (mysql, and sys from 10.6) that build SQL from their arguments and
// PREPARE it, SQL SECURITY INVOKER: a CALL runs, with the caller's
// privileges, what the CALL's text does not say. sys.execute_prepared_stmt
// runs any statement (CALL sys.execute_prepared_stmt('GRANT ALL ON *.* TO
// x')); create_synonym_db makes a view of every table of a schema, mysql's
// too, under another name; mysql.DropGeometryColumn runs ALTER TABLE
// schema.table DROP column for any table. (sys's performance_schema
// switches are callEffects', currentdb.go.)
var serverProcedures = map[string]bool{
	"mysql.addgeometrycolumn": true, "mysql.dropgeometrycolumn": true,
	"sys.execute_prepared_stmt": true, "sys.create_synonym_db": true, "sys.diagnostics": true,
	"sys.statement_performance_analyzer": true, "sys.ps_trace_thread": true,
	"sys.ps_trace_statement_digest": true, "sys.ps_truncate_all_tables": true,
	"sys.ps_setup_reset_to_default": true, "sys.table_exists": true,
}

// serverCall: a CALL of one of serverProcedures, named schema.p or p in a
// session whose current database is schema (db), is dynamic SQL. The
// walker marks an unqualified CALL as depending on the database.
func serverCall(st *engine.StmtFacts, x *ast.CallStmt, db string) {
	if x.Procedure == nil {
		return
	}
	schema := x.Procedure.Schema.L
	if schema == "" {
		schema = db
	}
	if serverProcedures[schema+"."+x.Procedure.FnName.L] {
		st.DynamicSQL = true
	}
}

// dangerousPrivs are privileges that hand out control of the server at any
// level: SUPER, FILE (server files), PROCESS, RELOAD, SHUTDOWN, CREATE
// USER and GRANT OPTION.
var dangerousPrivs = map[mysql.PrivilegeType]bool{
	mysql.SuperPriv: true, mysql.FilePriv: true, mysql.ProcessPriv: true, mysql.ReloadPriv: true,
	mysql.ShutdownPriv: true, mysql.CreateUserPriv: true, mysql.GrantPriv: true,
}

// statementEffects adds what the whole statement does.
func statementEffects(st *engine.StmtFacts, s ast.StmtNode) {
	statementEffectsIn(st, s, "")
}

// statementEffectsIn is statementEffects in a session whose current
// database is db ("": an application's, or none; currentdb.go).
func statementEffectsIn(st *engine.StmtFacts, s ast.StmtNode, db string) {
	tableEffects(st)
	switch x := s.(type) {
	case *ast.ShowStmt:
		switch {
		case x.Tp == ast.ShowCreateUser:
			st.Effects |= engine.EffReadsCredentials // shows the authentication string
		case x.Tp == ast.ShowGrants && x.User != nil && !x.User.CurrentUser:
			// MariaDB shows another account's password hash (IDENTIFIED
			// BY PASSWORD '*...', IDENTIFIED VIA ... USING '...'); a role
			// cannot be told from an account by its name.
			st.Effects |= engine.EffReadsCredentials
		}
	case *ast.ShutdownStmt, *ast.RestartStmt:
		st.Effects |= engine.EffSignalsServer
	case *ast.KillStmt:
		// KILL QUERY is how JDBC's Statement.cancel() and other drivers
		// cancel a statement of their own; KILL [CONNECTION] ends a session.
		if !x.Query {
			st.Effects |= engine.EffSignalsServer
		}
	case *ast.FlushStmt:
		// FLUSH TABLES (without a read lock) closes and reopens tables;
		// FLUSH STATUS resets the status counters (SHOW STATUS) to zero:
		// neither signals the server, flushes logs or privileges or
		// locks. Logs, privileges, hosts (which unblocks hosts the
		// server blocked), a global read lock do.
		if (x.Tp != ast.FlushTables && x.Tp != ast.FlushStatus) || x.ReadLock {
			st.Effects |= engine.EffSignalsServer
		}
	case *ast.GrantStmt:
		st.Effects |= grantEffects(x, db)
	case *ast.RevokeStmt:
		st.Effects |= revokeEffects(x, db)
	case *ast.RevokeRoleStmt:
		// What a role holds is not in the text: revoking it may take
		// control of the server from its administrator.
		st.Effects |= engine.EffGrantsPrivilege
	case *ast.CallStmt:
		st.Effects |= callEffects(x, db)
		serverCall(st, x, db)
	case *ast.DropDatabaseStmt:
		// DROP DATABASE mysql removes every account and grant (for the
		// next start or FLUSH PRIVILEGES), sys its procedures and views.
		if useDatabase(x.Name.O) != "" {
			st.Effects |= engine.EffWritesCatalog
		}
	case *ast.AlterDatabaseStmt:
		name := x.Name.O
		if x.AlterDefaultDatabase || name == "" {
			name = db // ALTER DATABASE options: the current database's
		}
		if name != "" && useDatabase(name) != "" {
			st.Effects |= engine.EffWritesCatalog
		}
	case *ast.GrantProxyStmt:
		st.Effects |= engine.EffGrantsPrivilege // lets a user act as another
	case *ast.GrantRoleStmt:
		for _, r := range x.Roles {
			st.Roles = append(st.Roles, strings.ToLower(r.Username))
		}
		// What a role holds is not in the text: it may be anything.
		st.Effects |= engine.EffGrantsPrivilege
	case *ast.SetRoleStmt:
		if x.SetRoleOpt != ast.SetRoleNone {
			// Takes up the privileges of a role (or of the default roles),
			// which the text does not say.
			st.Effects |= engine.EffGrantsPrivilege
		}
	case *ast.SetDefaultRoleStmt:
		// The roles an account's sessions start with, for its next login.
		st.Effects |= engine.EffGrantsPrivilege
	case *ast.CreateViewStmt:
		if x.Definer != nil && !x.Definer.CurrentUser && x.Security != ast.SecurityInvoker {
			// DEFINER = another account, SQL SECURITY DEFINER (the
			// default): whoever queries the view reads as that account.
			// (SQL SECURITY INVOKER: as the one who queries it, as
			// unparsed.go's recognizer has it.)
			st.Effects |= engine.EffChangesIdentity
		}
	case *ast.CreateTableStmt:
		tableOptions(st, x.Options)
		partitionOptions(st, x.Partition, nil)
	case *ast.AlterTableStmt:
		for _, sp := range x.Specs {
			tableOptions(st, sp.Options)
			partitionOptions(st, sp.Partition, sp.PartDefinitions)
		}
	}
}

// tableEffects adds what the statement's tables make it do: read or write
// the server's own schemas.
func tableEffects(st *engine.StmtFacts) {
	for i := range st.Tables {
		t := &st.Tables[i]
		switch {
		case t.Schema == "mysql" && credentialTables[t.Name] && !(st.Kind == engine.KindUtility && privilegeTables[t.Name] && !t.Write):
			st.Effects |= engine.EffReadsCredentials
			if t.Write {
				st.Effects |= engine.EffWritesCatalog
			}
		case t.Schema == "mysql" && t.Write:
			st.Effects |= engine.EffWritesCatalog // grant tables, proc, plugin, servers, ...
		case t.Schema == "performance_schema" && t.Write && (strings.HasPrefix(t.Name, "setup_") ||
			strings.HasPrefix(t.Name, "events_") || strings.Contains(t.Name, "summary")):
			// switches instrumentation off (setup_*), or empties the
			// history and summaries of what ran (TRUNCATE
			// events_statements_history), as sys.ps_truncate_all_tables
			st.Effects |= engine.EffDisablesLogging
		case (t.Schema == "information_schema" || t.Schema == "sys") && t.Write:
			st.Effects |= engine.EffWritesCatalog
		}
	}
}

// partitionOptions: each partition and subpartition has table options of
// its own (DATA DIRECTORY, ENGINE).
func partitionOptions(st *engine.StmtFacts, p *ast.PartitionOptions, defs []*ast.PartitionDefinition) {
	if p != nil {
		defs = append(defs, p.Definitions...)
	}
	for _, d := range defs {
		if d == nil {
			continue
		}
		tableOptions(st, d.Options)
		for _, sub := range d.Sub {
			if sub != nil {
				tableOptions(st, sub.Options)
			}
		}
	}
}

// tableOptions: engines that reach other servers or server files, and
// table files placed in a chosen directory.
func tableOptions(st *engine.StmtFacts, opts []*ast.TableOption) {
	for _, o := range opts {
		switch o.Tp {
		case ast.TableOptionEngine:
			switch strings.ToLower(o.StrValue) {
			case "federated", "federatedx", "spider":
				st.Effects |= engine.EffOpensConnection
			case "connect":
				// MariaDB's CONNECT: tables over files (CSV, XML, ...) and
				// remote servers (MYSQL, ODBC).
				st.Effects |= engine.EffOpensConnection | engine.EffReadsServerFile | engine.EffWritesServerFile
			}
		case ast.TableOptionConnection:
			st.Effects |= engine.EffOpensConnection
		case ast.TableOptionDataDirectory, ast.TableOptionIndexDirectory:
			st.Effects |= engine.EffWritesServerFile
		}
	}
}
