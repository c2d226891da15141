package pgsql

// Effects: what a statement makes the server do, whatever the syntax that
// asks for it. The walker (facts.go) records syntax facts (functions named,
// tables written, settings changed, roles granted, ...); effectsOf maps them
// to a small vocabulary that rules name in `effects:`, so one rule covers
// every way of reaching a capability. Example: pg_read_file reached through
// a call, `CREATE OPERATOR ... (PROCEDURE = pg_read_file)`, a regproc string
// 'pg_read_file'::regproc or a file_fdw table's filename option all carry
// reads_server_file. docs/policy.md lists each effect's sources.

import (
	"math"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v5"

	"github.com/sqlfw/sqlfw/engine"
)

// longSleepSeconds: a statement that sleeps longer in total holds a
// connection (and its locks) for no application purpose.
const longSleepSeconds = 5

// funcEffects: functions that have an effect wherever they are named
// (any schema: a same-named function elsewhere is as suspect).
var funcEffects = map[string]engine.EffectSet{
	// core (pg_catalog)
	"pg_read_file":              engine.EffReadsServerFile,
	"pg_read_binary_file":       engine.EffReadsServerFile,
	"pg_ls_dir":                 engine.EffReadsServerFile,
	"pg_stat_file":              engine.EffReadsServerFile,
	"pg_ls_logdir":              engine.EffReadsServerFile,
	"pg_ls_waldir":              engine.EffReadsServerFile,
	"pg_ls_tmpdir":              engine.EffReadsServerFile,
	"pg_ls_archive_statusdir":   engine.EffReadsServerFile,
	"pg_ls_logicalsnapdir":      engine.EffReadsServerFile,
	"pg_ls_logicalmapdir":       engine.EffReadsServerFile,
	"pg_ls_replslotdir":         engine.EffReadsServerFile,
	"pg_hba_file_rules":         engine.EffReadsServerFile,
	"pg_ident_file_mappings":    engine.EffReadsServerFile,
	"pg_show_all_file_settings": engine.EffReadsServerFile,
	"lo_import":                 engine.EffReadsServerFile,
	"lo_export":                 engine.EffWritesServerFile,
	// adminpack
	"pg_file_read":   engine.EffReadsServerFile,
	"pg_file_length": engine.EffReadsServerFile,
	"pg_logdir_ls":   engine.EffReadsServerFile,
	"pg_file_write":  engine.EffWritesServerFile,
	"pg_file_rename": engine.EffWritesServerFile,
	"pg_file_unlink": engine.EffWritesServerFile,
	"pg_file_sync":   engine.EffWritesServerFile,
	// signals to server processes
	"pg_terminate_backend":           engine.EffSignalsServer,
	"pg_cancel_backend":              engine.EffSignalsServer,
	"pg_reload_conf":                 engine.EffSignalsServer,
	"pg_rotate_logfile":              engine.EffSignalsServer,
	"pg_promote":                     engine.EffSignalsServer,
	"pg_log_backend_memory_contexts": engine.EffSignalsServer,
	// pageinspect: raw pages of any relation, pg_authid's included
	"get_raw_page": engine.EffReadsCredentials,
}

// credentialColumns: the column of each credential catalog that holds the
// secret. Reading it, a star or the whole row (or COPY of the table) reads
// credentials; psql's \du and \deu read the other columns.
var credentialColumns = map[string]string{
	"pg_authid":        "rolpassword",
	"pg_shadow":        "passwd",
	"pg_user_mapping":  "umoptions",
	"pg_user_mappings": "umoptions",
}

// infoSchemaCredentials: information_schema's views of user mappings,
// which show the options (a password among them) to their owner.
var infoSchemaCredentials = map[string]string{
	"user_mapping_options": "option_value",
	"_pg_user_mappings":    "umoptions",
}

// tableEffects: relations whose reading has an effect.
var tableEffects = map[string]engine.EffectSet{
	"pg_hba_file_rules":      engine.EffReadsServerFile,
	"pg_ident_file_mappings": engine.EffReadsServerFile,
	"pg_file_settings":       engine.EffReadsServerFile,
}

// untrustedLanguages: CREATE FUNCTION / DO in these languages runs arbitrary
// code in the server process ("internal" aliases any built-in C function).
var untrustedLanguages = map[string]struct{}{
	"c": {}, "internal": {}, "plperlu": {}, "plpythonu": {}, "plpython2u": {}, "plpython3u": {},
	"pltclu": {}, "plsh": {}, "pljavau": {}, "plr": {},
}

// extensionEffects: what an extension hands out once created.
var extensionEffects = map[string]engine.EffectSet{
	"adminpack":    engine.EffReadsServerFile | engine.EffWritesServerFile,
	"file_fdw":     engine.EffReadsServerFile | engine.EffRunsProgram,
	"dblink":       engine.EffOpensConnection,
	"postgres_fdw": engine.EffOpensConnection,
	"plperlu":      engine.EffLoadsCode,
	"plpythonu":    engine.EffLoadsCode,
	"plpython2u":   engine.EffLoadsCode,
	"plpython3u":   engine.EffLoadsCode,
	"pltclu":       engine.EffLoadsCode,
	"plsh":         engine.EffLoadsCode,
	"pageinspect":  engine.EffReadsCredentials, // raw pages of any relation, pg_authid's included
}

// settingEffects: parameters whose change has an effect whatever the value.
// search_path and role depend on the value (walker.setting).
var settingEffects = map[string]engine.EffectSet{
	"session_preload_libraries": engine.EffLoadsCode,
	"local_preload_libraries":   engine.EffLoadsCode,
	"shared_preload_libraries":  engine.EffLoadsCode,
	"dynamic_library_path":      engine.EffLoadsCode,
	"jit_provider":              engine.EffLoadsCode,
	"archive_library":           engine.EffLoadsCode,
	"archive_command":           engine.EffRunsProgram,
	"restore_command":           engine.EffRunsProgram,
	"ssl_passphrase_command":    engine.EffRunsProgram,
	"allow_system_table_mods":   engine.EffWritesCatalog,
	"lo_compat_privileges":      engine.EffGrantsPrivilege,
	"logging_collector":         engine.EffDisablesLogging,
	"event_source":              engine.EffDisablesLogging,
	"track_activities":          engine.EffDisablesLogging, // empties pg_stat_activity's query column
	"pg_stat_statements.track":  engine.EffDisablesLogging,
	"session_authorization":     engine.EffChangesIdentity,
}

// settingPrefixEffects: families of parameters (log_statement,
// log_min_duration_statement, log_min_messages, ..., syslog_facility,
// pgaudit.log, ...).
var settingPrefixEffects = []struct {
	prefix string
	eff    engine.EffectSet
}{
	{"log_", engine.EffDisablesLogging},
	{"syslog_", engine.EffDisablesLogging},
	{"pgaudit.", engine.EffDisablesLogging},
}

// unknownSetting stands for a parameter whose name is not in the text
// (set_config(name, ...) with a computed name): it could be any of them.
const unknownSetting = "?"

// privilegedRoles: roles whose membership hands out control of the server.
// A custom superuser role cannot be known from the text: list it in a
// granted_roles rule (docs/policy.md).
var privilegedRoles = map[string]struct{}{
	"pg_execute_server_program": {}, "pg_read_server_files": {}, "pg_write_server_files": {},
	"pg_read_all_data": {}, "pg_write_all_data": {}, "pg_signal_backend": {},
	"pg_monitor": {}, "pg_read_all_settings": {}, "pg_read_all_stats": {}, "pg_checkpoint": {},
	"pg_create_subscription": {}, "pg_use_reserved_connections": {},
	// the bootstrap superuser's usual name and managed services' admin roles
	"postgres": {}, "rds_superuser": {}, "rdsadmin": {}, "azure_pg_admin": {}, "azuresu": {},
	"cloudsqlsuperuser": {}, "alloydbsuperuser": {},
}

func isPrivilegedRole(name string) bool {
	_, ok := privilegedRoles[name]
	return ok
}

// effectsOf adds the effects that follow from the recorded facts to what
// the walker found directly (f.effects).
func effectsOf(f *engine.StmtFacts) engine.EffectSet {
	e := f.Effects
	for i := range f.Funcs {
		fn := &f.Funcs[i]
		e |= funcEffects[fn.Name]
		if strings.HasPrefix(fn.Name, "dblink") {
			e |= engine.EffOpensConnection
		}
	}
	if f.Copy&engine.CopyProgram != 0 {
		e |= engine.EffRunsProgram
	}
	if f.Copy&engine.CopyFile != 0 {
		if f.CopyDir&engine.CopyFrom != 0 {
			e |= engine.EffReadsServerFile
		}
		if f.CopyDir&engine.CopyTo != 0 {
			e |= engine.EffWritesServerFile
		}
	}
	for _, l := range f.Languages {
		if _, ok := untrustedLanguages[l]; ok {
			e |= engine.EffLoadsCode
		}
	}
	for _, x := range f.Extensions {
		e |= extensionEffects[x]
	}
	for _, r := range f.Roles {
		if isPrivilegedRole(r) {
			e |= engine.EffGrantsPrivilege
		}
	}
	if f.RoleAttrs&(engine.RoleSuperuser|engine.RoleBypassRLS|engine.RoleReplication|engine.RoleCreateRole) != 0 {
		e |= engine.EffGrantsPrivilege
	}
	for i := range f.Tables {
		t := &f.Tables[i]
		if t.CTE {
			continue
		}
		if t.Schema != "" && t.Schema != "pg_catalog" {
			if t.Schema == "information_schema" {
				if t.Write {
					e |= engine.EffWritesCatalog
				}
				if col, ok := infoSchemaCredentials[t.Name]; ok && readsColumn(f, t, col) {
					e |= engine.EffReadsCredentials
				}
			}
			continue
		}
		e |= tableEffects[t.Name]
		if col, ok := credentialColumns[t.Name]; ok && readsColumn(f, t, col) {
			e |= engine.EffReadsCredentials
		}
		if t.Write && isCatalog(t.Schema, t.Name) {
			e |= engine.EffWritesCatalog
		}
	}
	return e
}

// readsColumn reports whether the statement may read column col of t: by
// name (unqualified, or qualified by t's name or alias), through a star or
// a whole-row reference, or by a COPY of the table itself.
func readsColumn(f *engine.StmtFacts, t *engine.TableRef, col string) bool {
	if f.Kind == engine.KindCopy && f.CopyDir&engine.CopyTo != 0 {
		return true
	}
	for i := range f.Cols {
		c := &f.Cols[i]
		if c.Qual != "" && c.Qual != t.Name && c.Qual != t.Alias {
			continue
		}
		if c.Name == col || c.Name == "*" {
			return true
		}
		if c.Qual == "" && (c.Name == t.Name || (t.Alias != "" && c.Name == t.Alias)) {
			return true
		}
	}
	return false
}

func settingEffect(name string) engine.EffectSet {
	if name == unknownSetting {
		return engine.EffUnnamedSetting | engine.EffLoadsCode | engine.EffDisablesLogging | engine.EffChangesResolution | engine.EffChangesIdentity
	}
	e := settingEffects[name]
	for _, p := range settingPrefixEffects {
		if strings.HasPrefix(name, p.prefix) {
			e |= p.eff
		}
	}
	return e
}

// setting records a parameter the statement sets to a value (not RESET or
// DEFAULT), with the value when the text gives it (known false: computed at
// run time), and its effects.
func (w *walker) setting(name string, values []string, known bool) {
	f := w.f
	f.Settings = engine.AppendUnique(f.Settings, name)
	f.Effects |= settingEffect(name)
	switch name {
	case "search_path":
		if !known || searchPathShadows(values) {
			f.Effects |= engine.EffChangesResolution
		}
	case "role":
		if known {
			for _, v := range values {
				if isPrivilegedRole(strings.ToLower(v)) {
					f.Effects |= engine.EffChangesIdentity
				}
			}
		}
	}
}

// searchPathShadows reports whether a search_path puts a schema before
// pg_catalog, so that its functions, operators and tables win over the
// built-ins. Without an explicit pg_catalog entry PostgreSQL searches it
// first (and pg_temp is never searched for functions or operators).
func searchPathShadows(values []string) bool {
	var entries []string
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' {
				p = strings.ReplaceAll(p[1:len(p)-1], `""`, `"`)
			} else {
				p = strings.ToLower(p)
			}
			if p != "" {
				entries = append(entries, p)
			}
		}
	}
	for _, p := range entries {
		switch p {
		case "pg_catalog":
			return false
		case "pg_temp":
			continue
		}
		if slices.Contains(entries, "pg_catalog") {
			return true
		}
		return false
	}
	return false
}

// isBuiltinFunc and isBuiltinOp: names pg_catalog defines (builtin_names.go).
func isBuiltinFunc(name string) bool {
	_, ok := slices.BinarySearch(builtinFuncs, name)
	return ok
}

func isBuiltinOp(name string) bool {
	_, ok := slices.BinarySearch(builtinOps, name)
	return ok
}

// funcValuedDefs are the DefElem names under which CREATE OPERATOR,
// AGGREGATE, TYPE, RANGE TYPE, TEXT SEARCH PARSER/TEMPLATE, ALTER OPERATOR
// and ALTER TYPE name a function the server will call.
var funcValuedDefs = map[string]struct{}{
	"procedure": {}, "function": {}, "restrict": {}, "join": {},
	"sfunc": {}, "finalfunc": {}, "combinefunc": {}, "serialfunc": {}, "deserialfunc": {},
	"msfunc": {}, "minvfunc": {}, "mfinalfunc": {},
	"input": {}, "output": {}, "receive": {}, "send": {}, "typmod_in": {}, "typmod_out": {},
	"analyze": {}, "subscript": {}, "canonical": {}, "subtype_diff": {},
	"start": {}, "gettoken": {}, "end": {}, "lextypes": {}, "headline": {}, "init": {}, "lexize": {},
	"handler": {}, "validator": {}, "inline": {},
}

// funcDefs records the functions named in a definition list.
func (w *walker) funcDefs(defs []*pg_query.Node) {
	for _, d := range defs {
		de := d.GetDefElem()
		if de == nil {
			continue
		}
		if _, ok := funcValuedDefs[strings.ToLower(de.Defname)]; ok {
			w.funcName(nameParts(de.Arg))
		}
	}
}

// nameParts returns the String parts of a name however the grammar wrapped
// it: a TypeName, a List of String, a String, an ObjectWithArgs.
func nameParts(n *pg_query.Node) []*pg_query.Node {
	switch x := n.GetNode().(type) {
	case *pg_query.Node_TypeName:
		return x.TypeName.Names
	case *pg_query.Node_List:
		return x.List.Items
	case *pg_query.Node_String_:
		return []*pg_query.Node{n}
	case *pg_query.Node_ObjectWithArgs:
		return x.ObjectWithArgs.Objname
	}
	return nil
}

// regprocName records the function a constant names through a regproc or
// regprocedure cast ('pg_read_file'::regproc, 'pg_catalog.f(text)'::regprocedure)
// or to_regproc/to_regprocedure: a reference the server resolves, and that
// CREATE OPERATOR, UPDATE pg_operator or dynamic SQL can turn into a call.
func (w *walker) regprocName(s string) {
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	parts := splitQualified(strings.TrimSpace(s))
	switch len(parts) {
	case 0:
	case 1:
		w.addFunc("", parts[0])
	default:
		w.addFunc(parts[len(parts)-2], parts[len(parts)-1])
	}
}

// namesFunction reports whether a cast reads its constant as a function
// name (regproc, regprocedure): the facts then depend on the value, so such
// a constant is not inert for the shape cache (shape.go).
func namesFunction(tc *pg_query.TypeCast) bool {
	if tc == nil || tc.TypeName == nil || len(tc.TypeName.Names) == 0 {
		return false
	}
	switch strings.ToLower(tc.TypeName.Names[len(tc.TypeName.Names)-1].GetString_().GetSval()) {
	case "regproc", "regprocedure":
		return true
	}
	return false
}

// splitQualified splits a.b."C" into its parts, unquoting quoted ones and
// lower-casing the others, as PostgreSQL reads an identifier.
func splitQualified(s string) []string {
	var out []string
	for len(s) > 0 {
		var part string
		if s[0] == '"' {
			var b strings.Builder
			i := 1
			for ; i < len(s); i++ {
				if s[i] == '"' {
					if i+1 < len(s) && s[i+1] == '"' {
						b.WriteByte('"')
						i++
						continue
					}
					break
				}
				b.WriteByte(s[i])
			}
			part = b.String()
			s = s[min(i+1, len(s)):]
		} else {
			j := strings.IndexByte(s, '.')
			if j < 0 {
				j = len(s)
			}
			part = strings.ToLower(strings.TrimSpace(s[:j]))
			s = s[j:]
		}
		out = append(out, strings.ToLower(part))
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, ".") {
			s = s[1:]
		}
	}
	return out
}

// sleepCall judges one call of a sleep function: one whose running or
// length depends on data is a time probe; a constant one adds its duration.
func (w *walker) sleepCall(name string, args []*pg_query.Node) {
	f := w.f
	if w.flags&(inPredicate|inConditional) != 0 {
		f.TimeProbe = true
	}
	if len(args) == 0 {
		return
	}
	lit, kind := constValue(args[0])
	switch kind {
	case constNone:
		// A computed duration (pg_sleep(ascii(substr(...)))) carries data.
		f.TimeProbe = true
		return
	case constParam:
		f.Effects |= engine.EffLongSleep
		return
	}
	var secs float64
	ok := false
	switch name {
	case "pg_sleep":
		v, err := strconv.ParseFloat(strings.TrimSpace(lit), 64)
		secs, ok = v, err == nil
	case "pg_sleep_for":
		secs, ok = intervalSeconds(lit)
	}
	// pg_sleep_until is relative to the server's clock: not ok. NaN and
	// infinities are no length either.
	if math.IsNaN(secs) || math.IsInf(secs, 0) {
		ok = false
	} else {
		f.SleepSeconds += max(secs, 0)
	}
	if !ok || f.SleepSeconds > longSleepSeconds {
		f.Effects |= engine.EffLongSleep
	}
}

type constKind uint8

const (
	constNone    constKind = iota // computed
	constLiteral                  // a literal
	constParam                    // a bind parameter: known only at run time
)

// constValue returns a literal's text (through casts and a unary minus).
func constValue(n *pg_query.Node) (string, constKind) {
	for range 8 {
		switch x := n.GetNode().(type) {
		case *pg_query.Node_TypeCast:
			n = x.TypeCast.Arg
			continue
		case *pg_query.Node_AConst:
			c := x.AConst
			switch v := c.Val.(type) {
			case *pg_query.A_Const_Ival:
				return strconv.Itoa(int(v.Ival.Ival)), constLiteral
			case *pg_query.A_Const_Fval:
				return v.Fval.Fval, constLiteral
			case *pg_query.A_Const_Sval:
				return v.Sval.Sval, constLiteral
			}
			return "", constNone
		case *pg_query.Node_AExpr:
			a := x.AExpr
			if a.Lexpr == nil && len(a.Name) == 1 && a.Name[0].GetString_().GetSval() == "-" {
				s, k := constValue(a.Rexpr)
				return "-" + s, k
			}
		case *pg_query.Node_ParamRef:
			return "", constParam
		}
		return "", constNone
	}
	return "", constNone
}

var intervalUnits = map[string]float64{
	"us": 1e-6, "usec": 1e-6, "usecs": 1e-6, "microsecond": 1e-6, "microseconds": 1e-6,
	"ms": 1e-3, "msec": 1e-3, "msecs": 1e-3, "millisecond": 1e-3, "milliseconds": 1e-3,
	"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
	"m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
	"h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
	"d": 86400, "day": 86400, "days": 86400,
	"w": 604800, "week": 604800, "weeks": 604800,
}

// intervalSeconds reads the common interval spellings ('5 seconds',
// '1 hour 2 min', '00:00:30', '1.5'); anything else is not ok (and is taken
// to be long).
func intervalSeconds(s string) (float64, bool) {
	s = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "@")))
	if s == "" {
		return 0, false
	}
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) > 3 {
			return 0, false
		}
		total := 0.0
		for _, p := range parts {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil || v < 0 {
				return 0, false
			}
			total = total*60 + v
		}
		if len(parts) == 2 { // hh:mm
			total *= 60
		}
		return total, true
	}
	fields := strings.Fields(s)
	total := 0.0
	for i := 0; i < len(fields); i++ {
		num := fields[i]
		unit := ""
		// "5s" / "10min": the unit glued to the number
		j := 0
		for j < len(num) && (num[j] >= '0' && num[j] <= '9' || num[j] == '.' || num[j] == '-' || num[j] == '+') {
			j++
		}
		num, unit = num[:j], num[j:]
		v, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, false
		}
		if unit == "" && i+1 < len(fields) {
			i++
			unit = fields[i]
		}
		mult := 1.0
		if unit != "" {
			m, ok := intervalUnits[unit]
			if !ok {
				return 0, false
			}
			mult = m
		}
		total += v * mult
	}
	return total, true
}

// loneSleep reports whether a statement is a bare SELECT of constant sleeps
// and constants (SELECT pg_sleep(0.5)): the one shape in which whether and
// how long it sleeps cannot depend on data. A WHERE, FROM, LIMIT, CTE,
// set operation or DO block around a sleep can decide both.
func loneSleep(n *pg_query.Node) bool {
	s := n.GetSelectStmt()
	if s == nil || s.Op != pg_query.SetOperation_SETOP_NONE || s.WithClause != nil || len(s.FromClause) > 0 ||
		s.WhereClause != nil || s.HavingClause != nil || len(s.GroupClause) > 0 || s.LimitCount != nil ||
		s.LimitOffset != nil || len(s.DistinctClause) > 0 || len(s.ValuesLists) > 0 || s.IntoClause != nil ||
		len(s.WindowClause) > 0 || len(s.SortClause) > 0 || len(s.LockingClause) > 0 {
		return false
	}
	for _, t := range s.TargetList {
		v := t.GetResTarget().GetVal()
		if _, k := constValue(v); k == constLiteral {
			continue
		}
		fc := v.GetFuncCall()
		if fc == nil {
			return false
		}
		if _, name := lastTwo(fc.Funcname); !isSleep(name) {
			return false
		}
		for _, a := range fc.Args {
			if _, k := constValue(a); k == constNone {
				return false
			}
		}
	}
	return true
}

// loneSleepWords are the only words a DO block that is nothing but sleeps
// contains (DO $$ BEGIN PERFORM pg_sleep(1); END $$). Anything else (IF,
// LOOP, a condition, a variable) can decide whether and how long it sleeps.
var loneSleepWords = map[string]struct{}{
	"begin": {}, "end": {}, "perform": {}, "select": {}, "execute": {}, "pg_catalog": {},
	"pg_sleep": {}, "pg_sleep_for": {}, "pg_sleep_until": {}, "interval": {}, "numeric": {}, "text": {},
}

// loneSleepDo reports whether a PL/pgSQL DO block holds only sleeps
// (constant EXECUTE strings are judged as statements by body.go).
func loneSleepDo(n *pg_query.Node) bool {
	d := n.GetDoStmt()
	if d == nil {
		return false
	}
	body := ""
	for _, a := range d.Args {
		if de := a.GetDefElem(); de != nil {
			switch de.Defname {
			case "as":
				body = de.Arg.GetString_().GetSval()
			case "language":
				if strings.ToLower(de.Arg.GetString_().GetSval()) != "plpgsql" {
					return false
				}
			}
		}
	}
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '\'':
			for i++; i < len(body); i++ {
				if body[i] == '\'' {
					if i+1 < len(body) && body[i+1] == '\'' {
						i++
						continue
					}
					break
				}
			}
			i++
		case c == '-' && i+1 < len(body) && body[i+1] == '-', c == '/' && i+1 < len(body) && body[i+1] == '*', c == '$', c == '"':
			return false // comments, nested dollar quotes, quoted names: not the plain shape
		case isIdentStart(c):
			j := i
			for j < len(body) && isIdentPart(body[j]) {
				j++
			}
			if _, ok := loneSleepWords[strings.ToLower(body[i:j])]; !ok {
				return false
			}
			i = j
		case c >= '0' && c <= '9', c == '.', c == '(', c == ')', c == ';', c == ',', c == ':', c == ' ', c == '\t', c == '\n', c == '\r':
			i++
		default:
			return false
		}
	}
	return true
}

// sleeps reports whether the statement calls a sleep function.
func sleeps(f *engine.StmtFacts) bool {
	for i := range f.Funcs {
		if isSleep(f.Funcs[i].Name) {
			return true
		}
	}
	return false
}

// call looks at the arguments of calls whose effect depends on them.
func (w *walker) call(n *pg_query.FuncCall) {
	if len(n.Funcname) == 0 {
		return
	}
	name := strings.ToLower(n.Funcname[len(n.Funcname)-1].GetString_().GetSval())
	switch {
	case isSleep(name):
		w.sleepCall(name, n.Args)
	case name == "set_config":
		// set_config(name, value, is_local) is SET inside an expression.
		if len(n.Args) == 0 {
			return
		}
		setting, k := constValue(n.Args[0])
		if named, ok := w.settingRows[n]; ok {
			setting, k = named, constLiteral
		}
		if k != constLiteral {
			w.setting(unknownSetting, nil, false)
			return
		}
		var values []string
		known := false
		if len(n.Args) > 1 {
			var v string
			v, k = constValue(n.Args[1])
			values, known = []string{v}, k == constLiteral
		}
		w.setting(strings.ToLower(strings.TrimSpace(setting)), values, known)
	case name == "table_to_xml" || name == "table_to_xmlschema" || name == "table_to_xml_and_xmlschema":
		// body.go records the table a constant argument names; the
		// function returns all of its columns.
		w.addColumn(engine.ColRef{Name: "*"})
	case name == "to_regproc" || name == "to_regprocedure" || name == "regproc" || name == "regprocedure":
		if len(n.Args) > 0 {
			if s, k := constValue(n.Args[0]); k == constLiteral {
				w.regprocName(s)
			}
		}
	}
}

// settingRow handles pg_dump's idiom SELECT set_config(name, 'v', false)
// FROM pg_settings WHERE name = 'x': the column name is 'x' in every row the
// call sees, so the call sets x.
func (w *walker) settingRow(s *pg_query.SelectStmt) {
	if len(s.FromClause) != 1 || s.WhereClause == nil {
		return
	}
	rv := s.FromClause[0].GetRangeVar()
	if rv == nil || strings.ToLower(rv.Relname) != "pg_settings" || (rv.Schemaname != "" && strings.ToLower(rv.Schemaname) != "pg_catalog") {
		return
	}
	qual := ""
	if rv.Alias != nil {
		qual = strings.ToLower(rv.Alias.Aliasname)
	}
	isName := func(n *pg_query.Node) bool {
		f := n.GetColumnRef().GetFields()
		switch len(f) {
		case 1:
			return strings.ToLower(f[0].GetString_().GetSval()) == "name"
		case 2:
			q := strings.ToLower(f[0].GetString_().GetSval())
			return (q == "pg_settings" || (qual != "" && q == qual)) && strings.ToLower(f[1].GetString_().GetSval()) == "name"
		}
		return false
	}
	a := s.WhereClause.GetAExpr()
	if a == nil || a.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(a.Name) != 1 || a.Name[0].GetString_().GetSval() != "=" || !isName(a.Lexpr) {
		return
	}
	want, k := constValue(a.Rexpr)
	if k != constLiteral {
		return
	}
	for _, t := range s.TargetList {
		fc := t.GetResTarget().GetVal().GetFuncCall()
		if fc == nil || len(fc.Args) == 0 || !isName(fc.Args[0]) {
			continue
		}
		if _, name := lastTwo(fc.Funcname); name == "set_config" {
			if w.settingRows == nil {
				w.settingRows = map[*pg_query.FuncCall]string{}
			}
			w.settingRows[fc] = want
		}
	}
}

// constStrings returns the values of SET's arguments, or known false when
// one is not a literal.
func constStrings(args []*pg_query.Node) ([]string, bool) {
	out := make([]string, 0, len(args))
	for _, a := range args {
		s, k := constValue(a)
		if k != constLiteral {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// with registers the CTEs of a WITH clause. A parent is visited before its
// children, so a set operation's arms see every CTE in scope.
func (w *walker) with(wc *pg_query.WithClause) {
	if wc == nil {
		return
	}
	for _, c := range wc.Ctes {
		if cte := c.GetCommonTableExpr(); cte != nil && cte.Ctequery != nil {
			name := strings.ToLower(cte.Ctename)
			w.cteDefs[name] = append(w.cteDefs[name], cte.Ctequery)
			delete(w.cteMemo, name)
		}
	}
}

// selectInto: SELECT ... INTO creates a table (as does EXPLAIN ANALYZE of it).
func selectInto(n *pg_query.Node) bool {
	if e := n.GetExplainStmt(); e != nil && e.Query != nil {
		n = e.Query
	}
	s := n.GetSelectStmt()
	return s != nil && s.IntoClause != nil
}

// visitEffects records the facts of statements that name functions outside
// call syntax, or whose effect is in their options.
func (w *walker) visitEffects(m any) {
	f := w.f
	switch n := m.(type) {
	case *pg_query.DefineStmt:
		w.funcDefs(n.Definition)
		schema, name := lastTwo(n.Defnames)
		switch {
		case schema == "pg_catalog":
			f.Effects |= engine.EffWritesCatalog
		case schema == "pg_temp":
		case n.Kind == pg_query.ObjectType_OBJECT_OPERATOR && isBuiltinOp(name),
			n.Kind == pg_query.ObjectType_OBJECT_AGGREGATE && isBuiltinFunc(name):
			// public.=(text, text) or public.sum(int) wins over pg_catalog's
			// where its argument types match better.
			f.Effects |= engine.EffChangesResolution
		}
	case *pg_query.CreateRangeStmt:
		w.funcDefs(n.Params)
	case *pg_query.AlterOperatorStmt:
		w.funcDefs(n.Options)
		if n.Opername != nil {
			w.catalogName(n.Opername.Objname, false)
		}
	case *pg_query.AlterTypeStmt:
		w.funcDefs(n.Options)
		w.catalogName(n.TypeName, false)
	case *pg_query.CreateCastStmt:
		if n.Func != nil {
			w.funcName(n.Func.Objname)
		}
	case *pg_query.CreateTransformStmt:
		if n.Fromsql != nil {
			w.funcName(n.Fromsql.Objname)
		}
		if n.Tosql != nil {
			w.funcName(n.Tosql.Objname)
		}
	case *pg_query.CreateOpClassItem:
		if n.Itemtype == 2 && n.Name != nil { // OPCLASS_ITEM_FUNCTION
			w.funcName(n.Name.Objname)
		}
	case *pg_query.CreateConversionStmt:
		w.funcName(n.FuncName)
		if n.Def {
			// CREATE DEFAULT CONVERSION: every session with that client
			// encoding converts its text through the function.
			f.Effects |= engine.EffChangesResolution
		}
	case *pg_query.CreateAmStmt:
		w.funcName(n.HandlerName)
	case *pg_query.CreateFdwStmt:
		w.funcDefs(n.FuncOptions)
	case *pg_query.AlterFdwStmt:
		w.funcDefs(n.FuncOptions)
	case *pg_query.CreateForeignTableStmt:
		w.fdwOptions(n.Options)
	case *pg_query.AlterTableCmd:
		if n.Subtype == pg_query.AlterTableType_AT_GenericOptions {
			w.fdwOptions(n.Def.GetList().GetItems())
		}
	case *pg_query.CreateForeignServerStmt:
		// A file_fdw server exists for tables that read files or run
		// programs; any other server for tables on another server.
		if strings.ToLower(n.Fdwname) == "file_fdw" {
			f.Effects |= engine.EffReadsServerFile | engine.EffRunsProgram
		} else {
			f.Effects |= engine.EffOpensConnection
		}
	case *pg_query.CreateSubscriptionStmt, *pg_query.ImportForeignSchemaStmt:
		f.Effects |= engine.EffOpensConnection
	case *pg_query.AlterSubscriptionStmt:
		if n.Conninfo != "" {
			f.Effects |= engine.EffOpensConnection
		}
	case *pg_query.LoadStmt:
		f.Effects |= engine.EffLoadsCode
	case *pg_query.CreateTableSpaceStmt:
		// The server creates its directories under the location given.
		f.Effects |= engine.EffWritesServerFile
	case *pg_query.CreatePLangStmt:
		// A language with its own handler: CREATE TRUSTED LANGUAGE x
		// HANDLER plperlu_call_handler hands an untrusted language to every
		// user under a new name.
		if len(n.Plhandler) > 0 {
			f.Effects |= engine.EffLoadsCode
		}
	case *pg_query.CreateExtensionStmt:
		for _, o := range n.Options {
			// plpgsql lives there already (old dumps say so).
			if d := o.GetDefElem(); d != nil && d.Defname == "schema" && strings.ToLower(d.Arg.GetString_().GetSval()) == "pg_catalog" && strings.ToLower(n.Extname) != "plpgsql" {
				f.Effects |= engine.EffWritesCatalog
			}
		}
	case *pg_query.AlterRoleStmt:
		// A password, LOGIN or validity set on postgres or a predefined
		// role lets whoever knows it log in as that role.
		if n.Role != nil && isPrivilegedRole(strings.ToLower(n.Role.Rolename)) {
			for _, o := range n.Options {
				if d := o.GetDefElem(); d != nil && (d.Defname == "password" || d.Defname == "canlogin" || d.Defname == "validUntil") {
					f.Effects |= engine.EffGrantsPrivilege
				}
			}
		}
	case *pg_query.GrantStmt:
		w.granted(n)
	case *pg_query.AlterOwnerStmt:
		w.catalogObjects(n.Object)
		if n.ObjectType == pg_query.ObjectType_OBJECT_FUNCTION || n.ObjectType == pg_query.ObjectType_OBJECT_PROCEDURE || n.ObjectType == pg_query.ObjectType_OBJECT_ROUTINE {
			w.funcName(nameParts(n.Object))
		}
	case *pg_query.AlterFunctionStmt:
		if n.Func != nil {
			w.catalogName(n.Func.Objname, true)
		}
	case *pg_query.RenameStmt:
		w.catalogObjects(n.Object)
		if routine(n.RenameType) && isBuiltinFunc(strings.ToLower(n.Newname)) ||
			n.RenameType == pg_query.ObjectType_OBJECT_OPERATOR && isBuiltinOp(n.Newname) {
			f.Effects |= engine.EffChangesResolution // renamed into a built-in's name
		}
	case *pg_query.AlterObjectSchemaStmt:
		w.catalogObjects(n.Object)
		if ns := strings.ToLower(n.Newschema); ns != "pg_temp" && ns != "pg_catalog" {
			_, name := lastTwo(nameParts(n.Object))
			if routine(n.ObjectType) && isBuiltinFunc(name) || n.ObjectType == pg_query.ObjectType_OBJECT_OPERATOR && isBuiltinOp(name) {
				f.Effects |= engine.EffChangesResolution // moved next to the callers
			}
		}
		if strings.ToLower(n.Newschema) == "pg_catalog" {
			f.Effects |= engine.EffWritesCatalog
		}
	}
}

func routine(t pg_query.ObjectType) bool {
	switch t {
	case pg_query.ObjectType_OBJECT_FUNCTION, pg_query.ObjectType_OBJECT_PROCEDURE, pg_query.ObjectType_OBJECT_ROUTINE, pg_query.ObjectType_OBJECT_AGGREGATE:
		return true
	}
	return false
}

// createdFunc: CREATE FUNCTION in pg_catalog writes the catalog; one named
// like a built-in elsewhere can win over it (CVE-2018-1058's shape:
// public.lower(varchar) is a better match for lower(varchar_column) than
// pg_catalog.lower(text)). pg_temp functions are never found unqualified.
func (w *walker) createdFunc(parts []*pg_query.Node) {
	schema, name := lastTwo(parts)
	switch {
	case schema == "pg_catalog":
		w.f.Effects |= engine.EffWritesCatalog
	case schema == "pg_temp":
	case isBuiltinFunc(name):
		w.f.Effects |= engine.EffChangesResolution
	}
}

func lastTwo(parts []*pg_query.Node) (schema, name string) {
	if len(parts) == 0 {
		return "", ""
	}
	name = strings.ToLower(parts[len(parts)-1].GetString_().GetSval())
	if len(parts) >= 2 {
		schema = strings.ToLower(parts[len(parts)-2].GetString_().GetSval())
	}
	return schema, name
}

// catalogObjects marks DDL on objects in pg_catalog or information_schema
// (or on those schemas) as a catalog write.
func (w *walker) catalogObjects(objs ...*pg_query.Node) {
	for _, o := range objs {
		switch x := o.GetNode().(type) {
		case *pg_query.Node_String_:
			// a schema, language, role, ... named by itself
			if s := strings.ToLower(x.String_.Sval); s == "pg_catalog" || s == "information_schema" {
				w.f.Effects |= engine.EffWritesCatalog
			}
		default:
			w.catalogName(nameParts(o), true)
		}
	}
}

// catalogName: a qualified name in a catalog schema; with bare, also an
// unqualified pg_* name, which an ALTER or DROP finds in pg_catalog first.
func (w *walker) catalogName(parts []*pg_query.Node, bare bool) {
	if len(parts) == 0 {
		return
	}
	schema, name := lastTwo(parts)
	if (schema != "" && isCatalog(schema, name)) || (bare && schema == "" && len(parts) == 1 && strings.HasPrefix(name, "pg_")) {
		w.f.Effects |= engine.EffWritesCatalog
	}
}

// fdwOptions: file_fdw's options read a file or run a program when the
// foreign table is read; any wrapper may take them the same way.
func (w *walker) fdwOptions(opts []*pg_query.Node) {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil || d.Defaction == pg_query.DefElemAction_DEFELEM_DROP {
			continue
		}
		switch strings.ToLower(d.Defname) {
		case "program":
			w.f.Effects |= engine.EffRunsProgram
		case "filename":
			w.f.Effects |= engine.EffReadsServerFile
		}
	}
}

// granted: GRANT on objects of pg_catalog hands out server internals;
// GRANT EXECUTE names the functions it hands out.
func (w *walker) granted(n *pg_query.GrantStmt) {
	if !n.IsGrant {
		return
	}
	fn := n.Objtype == pg_query.ObjectType_OBJECT_FUNCTION || n.Objtype == pg_query.ObjectType_OBJECT_PROCEDURE || n.Objtype == pg_query.ObjectType_OBJECT_ROUTINE
	for _, o := range n.Objects {
		switch x := o.GetNode().(type) {
		case *pg_query.Node_String_:
			// ALL ... IN SCHEMA s, SCHEMA s
			if s := strings.ToLower(x.String_.Sval); (s == "pg_catalog" || s == "information_schema") && n.Objtype != pg_query.ObjectType_OBJECT_SCHEMA {
				w.f.Effects |= engine.EffGrantsPrivilege
			}
		case *pg_query.Node_RangeVar:
			if probesCatalog(strings.ToLower(x.RangeVar.Schemaname), strings.ToLower(x.RangeVar.Relname)) {
				w.f.Effects |= engine.EffGrantsPrivilege
			}
		case *pg_query.Node_ObjectWithArgs:
			if fn {
				w.funcName(x.ObjectWithArgs.Objname)
			}
			if schema, name := lastTwo(x.ObjectWithArgs.Objname); isCatalog(schema, name) {
				w.f.Effects |= engine.EffGrantsPrivilege
			}
		}
	}
}

// roleMembership records the roles a CREATE ROLE ... IN ROLE r grants to the
// new role, and, for ALTER GROUP g ADD USER u (group != ""), g.
func (w *walker) roleMembership(opts []*pg_query.Node, group string) {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch {
		case group == "" && d.Defname == "addroleto":
			for _, r := range d.Arg.GetList().GetItems() {
				if rs := r.GetRoleSpec(); rs != nil {
					w.f.Roles = engine.AppendUnique(w.f.Roles, strings.ToLower(rs.Rolename))
				}
			}
		case group != "" && d.Defname == "rolemembers":
			w.f.Roles = engine.AppendUnique(w.f.Roles, group)
		}
	}
}
