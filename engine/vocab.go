package engine

// The fact vocabulary: what a Dialect fills for each statement and rules
// read (match.go). Names are the policy language's (docs/policy.md); a
// dialect fills what its syntax can express and says which keys it cannot
// (Dialect.Fills). Effects that dialects share have one name, so that one
// policy serves both: reading a server file is EffReadsServerFile whether
// PostgreSQL's COPY ... FROM a file or pg_read_file() did it.

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// StmtKind is the coarse class of a statement, as rules name it in `kind:`.
type StmtKind uint8

const (
	KindUtility     StmtKind = iota // anything not listed below (SHOW, LOCK, PREPARE, LISTEN, CHECKPOINT, ...)
	KindSelect                      // SELECT, VALUES, TABLE
	KindInsert                      // INSERT
	KindUpdate                      // UPDATE
	KindDelete                      // DELETE
	KindMerge                       // MERGE
	KindTruncate                    // TRUNCATE
	KindCopy                        // COPY
	KindDDL                         // CREATE, ALTER, DROP, COMMENT, ... (not roles or privileges: see kindDCL)
	KindSetStmt                     // SET, RESET
	KindTransaction                 // BEGIN, COMMIT, ROLLBACK, SAVEPOINT, ...
	KindCall                        // CALL
	KindDo                          // DO
	KindExplain                     // EXPLAIN (EXPLAIN ANALYZE takes its statement's kind, plus this bit)
	KindAlterSystem                 // ALTER SYSTEM (writes postgresql.auto.conf); MySQL's SET GLOBAL / PERSIST: the server's configuration
	KindDCL                         // GRANT, REVOKE, CREATE/ALTER/DROP ROLE, ALTER DEFAULT PRIVILEGES, REASSIGN/DROP OWNED
	KindVacuum                      // VACUUM (also VACUUM ANALYZE)
	KindAnalyze                     // ANALYZE
	NumKinds
)

var kindNames = [NumKinds]string{
	KindUtility:     "utility",
	KindSelect:      "select",
	KindInsert:      "insert",
	KindUpdate:      "update",
	KindDelete:      "delete",
	KindMerge:       "merge",
	KindTruncate:    "truncate",
	KindCopy:        "copy",
	KindDDL:         "ddl",
	KindSetStmt:     "set",
	KindTransaction: "transaction",
	KindCall:        "call",
	KindDo:          "do",
	KindExplain:     "explain",
	KindAlterSystem: "alter_system",
	KindDCL:         "dcl",
	KindVacuum:      "vacuum",
	KindAnalyze:     "analyze",
}

func (k StmtKind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// KindSet is a bit set of stmtKind.
type KindSet uint32

func (s KindSet) Has(k StmtKind) bool { return s&(1<<k) != 0 }

// CopyTarget is a bit set of where a COPY reads from or writes to.
type CopyTarget uint8

const (
	CopyStdio   CopyTarget = 1 << iota // FROM STDIN / TO STDOUT: data travels over the connection
	CopyFile                           // a file on the database server
	CopyProgram                        // a shell command run by the database server
)

// CopyDirection is a bit set: COPY FROM (into a table) and/or COPY TO.
type CopyDirection uint8

const (
	CopyFrom CopyDirection = 1 << iota
	CopyTo
)

// Role attributes a CREATE/ALTER ROLE grants (role_attributes:).
const (
	RoleSuperuser uint8 = 1 << iota
	RoleBypassRLS
	RoleReplication
	RoleCreateRole
	RoleCreateDB
)

// RoleAttr returns the Role* bit of a role attribute as policies name it
// ("superuser"), or 0.
func RoleAttr(name string) uint8 { return roleAttrNames[name] }

var roleAttrNames = map[string]uint8{
	"superuser":   RoleSuperuser,
	"bypassrls":   RoleBypassRLS,
	"replication": RoleReplication,
	"createrole":  RoleCreateRole,
	"createdb":    RoleCreateDB,
}

// TableRef is one relation a statement names. Names are lower-cased.
type TableRef struct {
	Schema string // "" when the statement did not qualify the name
	Name   string
	Alias  string // "" without AS alias
	Write  bool
	CTE    bool // the name is a WITH query in scope where it is read, not a relation
}

// FuncRef is one function a statement calls. Names are lower-cased.
type FuncRef struct {
	Schema string // "" when unqualified
	Name   string
}

// ColRef is one column reference: qual is the table name or alias that
// qualifies it ("" when unqualified); name is "*" for a star.
type ColRef struct {
	Qual string
	Name string
}

// StmtFacts is what rules look at for one statement. It depends only on the
// statement text, so it is cached by text; rules add the session each time.
type StmtFacts struct {
	Kind  StmtKind // the top-level statement's kind (EXPLAIN ANALYZE: its statement's)
	Kinds KindSet  // kind plus every data-modifying statement nested inside (CTE, EXPLAIN, PREPARE, RULE, DO body)
	// PrevKinds holds the top-level kinds of the statements before this one
	// in the same message (for stacked-statement rules).
	PrevKinds KindSet
	// Unfiltered holds kindUpdate and/or kindDelete when an UPDATE or
	// DELETE without WHERE, or with an always-true WHERE, occurs anywhere.
	Unfiltered KindSet
	// LimitedWhole holds kindUpdate and/or kindDelete when an UPDATE or
	// DELETE would be Unfiltered but for a LIMIT of a few rows (a
	// dialect's choice: engine/mysql writes.go). The dialect makes it
	// Unfiltered when the write is nested (a routine body, a PREPARE
	// text) or repeated in one message; rules do not read it.
	LimitedWhole KindSet
	Copy         CopyTarget
	CopyDir      CopyDirection
	Verb         DDLVerb
	Object       string // DDL/DCL object type, "" otherwise
	RoleAttrs    uint8

	Tautology    bool // an OR with an always-true arm in WHERE/HAVING/ON
	CatalogUnion bool // a set operation mixing system-catalog and other arms
	TimeProbe    bool // a sleep whose running or length depends on data, or next to a table read
	// Probes is which extraction probes the statement has the shape of
	// (ProbeSet; engine/mysql probes.go).
	Probes ProbeSet
	// Effects is what the statement makes the server do (effects.go).
	Effects EffectSet
	// SleepSeconds sums the constant durations of its sleeps.
	SleepSeconds float64

	// DynamicSQL: SQL text assembled at run time is run (EXECUTE of a
	// variable, a non-constant query_to_xml or dblink argument; body.go).
	DynamicSQL bool
	// Unparsed says why code the statement carries (a body, SQL text in a
	// string) could not be analysed; "" when all of it was.
	Unparsed string
	// CodeList and CodeDepth are the largest list and deepest nesting of
	// code in strings (bodies, EXECUTE text), which the prescan of the
	// message does not look into (body.go).
	CodeList, CodeDepth int32

	Joins, UnionArms, CTEs int32
	BoolTerms              int32 // operands of AND/OR plus CASE arms (limits.go)
	SeriesRows             int64 // rows of the largest constant generator; unboundedRows: no end
	StringBytes            int64 // bytes repeat/lpad/rpad build from a constant count

	Tables     []TableRef
	Funcs      []FuncRef
	Cols       []ColRef
	Languages  []string // CREATE FUNCTION / DO / CREATE LANGUAGE
	Extensions []string // CREATE EXTENSION
	Settings   []string // SET / RESET / ALTER SYSTEM parameter names
	Roles      []string // roles granted by GRANT role TO ...
	CTENames   []string // WITH names: references to them are not relations

	// Loc and Length locate the statement in the message text (Length 0:
	// to the end), for fingerprints.
	Loc, Length int32

	// BareParams are the statement's parameters (?) that stand alone as a
	// condition, which the value bound at execution decides (bound.go);
	// BareWhere holds kindUpdate and/or kindDelete when such a condition
	// is an UPDATE's or DELETE's whole WHERE, BareOr is set when it is an
	// arm of an OR.
	BareParams []BareParam
	BareWhere  KindSet
	BareOr     bool
	// ParamWrite is set when the statement writes rows that a condition
	// of its parameters may decide as the same for every row (MySQL:
	// DELETE FROM t WHERE ? = 1, ... WHERE name LIKE ?): an execution is
	// judged with its values in place (bound.go).
	ParamWrite bool

	// InDatabase holds what the statement does instead when the session's
	// current database (Session.Database, compared without case) is one of
	// these: the database its unqualified names then resolve in (MySQL:
	// USE mysql; SELECT * FROM user). The facts above hold in every other
	// database, and with none selected. A dialect fills an entry only where
	// it differs from them; the engine applies the one for the session on
	// each call (DatabaseFacts.of).
	InDatabase []DatabaseFacts

	// CreatesGrantee says whether the statement is, or holds, a GRANT that
	// creates its grantee when the account does not exist: GranteeMay,
	// when the session's sql_mode lets it (LexState.AutoCreateUser);
	// GranteeCreated, whatever the session's mode (an sql_mode set earlier
	// in the same text or body, or by SET STATEMENT ... FOR). The engine
	// then judges the statement also as the account creation
	// (GranteeCreator).
	CreatesGrantee GranteeCreation

	// AsUser holds what the statement does instead when the session's user
	// (Session.User, compared exactly, as the server compares user names)
	// is one of these: MySQL's DEFINER = that user names the session's own
	// account, as CURRENT_USER does. A dialect fills an entry only where it
	// differs; an entry's facts have InDatabase entries of their own. The
	// engine applies both on each call (asUser, then inDatabase).
	AsUser []UserFacts

	// Bodies is the code the statement stores for later runs (a function's
	// body, a view's query, a trigger's action), each with what it does
	// when it runs; the engine judges each like a statement, in the user
	// it runs as (body.go).
	Bodies []Body
	// NotNullWhere lists the UPDATEs and DELETEs whose condition is true
	// for every row when the columns named are NOT NULL (WHERE id IS NOT
	// NULL): unfiltered when the database's catalog says they are
	// (catalog.go). Without a catalog they are judged as filtered.
	NotNullWhere []NotNullCond
	// UnknownObject says why an object the statement uses could not be
	// resolved or read through the database's catalog ("" when every one
	// could, or without a catalog): the fact unknown_object (catalog.go).
	UnknownObject string
	// PathChange is what the statement itself does to PostgreSQL's
	// search_path (a plain SET, RESET, or anything else that changes it or
	// may: set_config, SET LOCAL, SET ROLE, RESET ALL, DO, dynamic SQL);
	// SetPath the value a PathSet sets. PathMay says that it runs code the
	// text does not show (a routine that is not a built-in, a write that
	// may fire triggers and rules, DDL that may fire event triggers), which
	// may change it: the catalog, when in force, tells (catalog.go).
	PathChange PathChange
	SetPath    string
	PathMay    bool
	// Reowned lists stored code whose runner the statement changes
	// without showing the code (PostgreSQL's ALTER FUNCTION ... SECURITY
	// DEFINER, ALTER FUNCTION/PROCEDURE/ROUTINE/VIEW ... OWNER TO): with a
	// catalog, its definition is judged as the role it will run as; an
	// object the catalog does not hold is unknown_object (catalog.go).
	Reowned []Reowned

	// matched lists, in policy order, the rules whose conditions on the
	// text hold; scope, time and rate are checked per call.
	matched []ruleMatch
	// via is the chain of objects the catalog followed, for reasons.
	via string
}

// Reowned is one object of StmtFacts.Reowned.
type Reowned struct {
	Kind         CatalogKind // CatalogRoutine, or CatalogView for a relation that may be one
	Schema, Name string
	// To is the new owner, or "" for the routine's owner as the catalog
	// knows it (SECURITY DEFINER); ToSession: the session's own user
	// (OWNER TO CURRENT_USER, SESSION_USER, CURRENT_ROLE).
	To        string
	ToSession bool
	// Fires: the statement makes a trigger or event trigger run the
	// routine from now on (CREATE TRIGGER / CREATE EVENT TRIGGER ...
	// EXECUTE FUNCTION f), as whoever fires it, or its owner when it is
	// SECURITY DEFINER.
	Fires bool
}

// PathChange is what a statement does to PostgreSQL's search_path.
type PathChange uint8

const (
	PathKept    PathChange = iota // leaves it as it is
	PathSet                       // SET [SESSION] search_path to the constant list StmtFacts.SetPath
	PathReset                     // RESET search_path, SET search_path TO DEFAULT: the login role's default
	PathUnknown                   // changes it, or may, to a value the engine does not follow
)

// GranteeCreation is whether a GRANT creates its grantee
// (StmtFacts.CreatesGrantee). The larger value wins when facts merge.
type GranteeCreation uint8

const (
	GranteeNever   GranteeCreation = iota // no GRANT that could create an account
	GranteeMay                            // when the session's sql_mode lets it (LexState.AutoCreateUser)
	GranteeCreated                        // whatever the session's sql_mode
)

// creates reports whether the GRANT of f creates its grantee in a session
// in lexing state l.
func (f *StmtFacts) creates(l *LexState) bool {
	return f.CreatesGrantee == GranteeCreated || f.CreatesGrantee == GranteeMay && l.mayAutoCreate()
}

// DatabaseFacts is the facts of a statement when the session's current
// database is Database.
type DatabaseFacts struct {
	Database string // lower-cased
	Facts    StmtFacts
}

// UserFacts is the facts of a statement when the session's user is User.
type UserFacts struct {
	User  string
	Facts StmtFacts
}

// asUser returns the facts of st in a session of user u: an AsUser entry's,
// or st itself. It does not allocate.
func (st *StmtFacts) asUser(u string) *StmtFacts {
	for i := range st.AsUser {
		if st.AsUser[i].User == u {
			return &st.AsUser[i].Facts
		}
	}
	return st
}

// inDatabase returns the facts of st in a session whose current database
// is db: an InDatabase entry's, or st itself. It does not allocate.
func (st *StmtFacts) inDatabase(db string) *StmtFacts {
	if db == "" {
		return st
	}
	for i := range st.InDatabase {
		if strings.EqualFold(st.InDatabase[i].Database, db) {
			return &st.InDatabase[i].Facts
		}
	}
	return st
}

// ruleMatch is one rule whose static conditions a statement satisfies.
// reason is the rule's reason, with measured values for limit rules.
type ruleMatch struct {
	rule   int32
	reason string
}

// TextFacts is the analysis of one protocol message's SQL text. A Dialect's
// Analyze fills Stmts, ParseError, ParseReason, Lex and SQLOps; the rest is
// the engine's.
type TextFacts struct {
	// Stmts: the facts of each statement. With ParseError, the facts the
	// dialect is certain of in some of them (a lower bound: deny rules
	// only act on them), or none.
	Stmts      []StmtFacts
	ParseError bool
	// ParseReason is literal-free: it carries the cursor position only.
	ParseReason string
	// Lex holds the measures taken before parsing (bytes, list size,
	// nesting) and the comment check.
	Lex LexStats
	// Unparsed is set when a pre-parse measure exceeds a limit of the
	// policy: the text was not parsed, Stmts is empty.
	Unparsed bool
	// shaped: the facts came from, or went into, the shape cache
	// (shapes.go); such a text is cached by its exact text only once it
	// repeats.
	shaped bool
	// shared: in a shape-cache entry (a template), the facts matched once
	// that every text of the shape is judged by (shapehit.go); nil when
	// the entry lends none.
	shared *TextFacts
	// stableLex: in a shape-cache entry, the dialect's prescan reads the
	// entry's text so that every text of its shape measures alike but for
	// Bytes (PrescanStabler): a hit takes shared.Lex, not a prescan.
	stableLex bool
	// shapeKey: in a shape-cache entry, its key (the same string the
	// cache holds), which a hinted hit compares (shapehint.go).
	shapeKey string
	// shapePieces: the markers of shapeKey (ShapePieces), for a
	// ShapeMatcher.
	shapePieces []ShapePiece
	// SQLOps: what the text does to named session objects (PostgreSQL:
	// engine/pgsql sqlprepare.go).
	SQLOps []SQLOp

	// marks, fixed and verdict are set with the matched rules (fixed.go):
	// the verdict's text-only fields, and the verdict itself when the text
	// is judged alike in every session.
	marks   marks
	fixed   bool
	verdict Verdict

	// bound: the facts with every bare parameter's condition always true
	// (bound.go), made at most once.
	boundOnce sync.Once
	bound     *TextFacts
	// unknown: the facts of a ParamWrite's text with values not known
	// (bound.go valuesFacts), made at most once.
	unknownOnce sync.Once
	unknown     *TextFacts

	// cat: the statements' facts through the database's catalog, for the
	// catalog generation they were made with (catalog.go).
	cat atomic.Pointer[catMemo]

	// Fingerprints are computed at most once per text, when a policy or a
	// learner first needs them.
	printOnce sync.Once
	prints    []uint64 // per statement; 0 when the statement could not be fingerprinted
}

// fingerprints returns the fingerprint of each statement by d.
func (tf *TextFacts) fingerprints(d Dialect, text string) []uint64 {
	tf.printOnce.Do(func() {
		out := make([]uint64, len(tf.Stmts))
		for i := range tf.Stmts {
			st := &tf.Stmts[i]
			out[i] = d.Fingerprint(stmtText(text, st))
		}
		tf.prints = out
	})
	return tf.prints
}

// fingerprintsOf is fingerprints for the text sql, converted to a string
// only when they are not known yet.
func (tf *TextFacts) fingerprintsOf(d Dialect, sql []byte) []uint64 {
	tf.printOnce.Do(func() {
		text := string(sql)
		out := make([]uint64, len(tf.Stmts))
		for i := range tf.Stmts {
			out[i] = d.Fingerprint(stmtText(text, &tf.Stmts[i]))
		}
		tf.prints = out
	})
	return tf.prints
}

// stmtText cuts one statement out of the message text.
func stmtText(text string, st *StmtFacts) string {
	lo := int(st.Loc)
	if lo < 0 || lo > len(text) {
		return text
	}
	hi := len(text)
	if st.Length > 0 && lo+int(st.Length) <= len(text) {
		hi = lo + int(st.Length)
	}
	return text[lo:hi]
}

// DDLVerb is what a DDL or DCL statement does to its object, as rules name
// it in `verbs:`.
type DDLVerb uint8

const (
	VerbNone DDLVerb = iota
	VerbCreate
	VerbAlter
	VerbDrop
	VerbGrant
	VerbRevoke
	VerbComment
	VerbRefresh
	NumVerbs
)

var verbNames = [NumVerbs]string{
	VerbNone:    "",
	VerbCreate:  "create",
	VerbAlter:   "alter",
	VerbDrop:    "drop",
	VerbGrant:   "grant",
	VerbRevoke:  "revoke",
	VerbComment: "comment",
	VerbRefresh: "refresh",
}

// EffectSet is a bit set of effects.
type EffectSet uint32

const (
	EffReadsServerFile   EffectSet = 1 << iota // reads or lists files of the database server
	EffWritesServerFile                        // writes, renames or removes files of the database server
	EffRunsProgram                             // runs a shell command on the database server
	EffLoadsCode                               // loads a shared library or runs code in an untrusted language
	EffGrantsPrivilege                         // hands out (MySQL: or revokes) superuser-like power: privileged roles, role attributes, rights on pg_catalog
	EffWritesCatalog                           // changes pg_catalog / information_schema directly
	EffDisablesLogging                         // changes the server's own logging or auditing
	EffChangesResolution                       // makes a name resolve to something else: search_path, shadowing built-ins
	EffOpensConnection                         // connects from the server to another server
	EffReadsCredentials                        // reads password hashes or user-mapping options
	EffChangesIdentity                         // switches the session's user (SET SESSION AUTHORIZATION, SET ROLE to a privileged role)
	EffSignalsServer                           // terminates or cancels sessions, reloads the configuration, rotates logs
	EffLongSleep                               // sleeps longer than longSleepSeconds, or for a duration not known from the text
	EffUnnamedSetting                          // sets a parameter whose name is computed at run time (set_config(expr, ...))
	NumEffects           = iota
)

var effectNames = [NumEffects]string{
	"reads_server_file",
	"writes_server_file",
	"runs_program",
	"loads_code",
	"grants_privilege",
	"writes_catalog",
	"disables_logging",
	"changes_resolution",
	"opens_connection",
	"reads_credentials",
	"changes_identity",
	"signals_server",
	"long_sleep",
	"sets_unnamed_setting",
}

func (s EffectSet) String() string {
	var out []string
	for i := 0; i < NumEffects; i++ {
		if s&(1<<i) != 0 {
			out = append(out, effectNames[i])
		}
	}
	return strings.Join(out, ",")
}

// ProbeSet is a bit set of the shapes of an injected extraction step, as
// rules name them in `probes:`. A dialect that fills them says so in
// Fills("probes").
type ProbeSet uint8

const (
	// ProbeCatalog: a system catalog or schema read embedded in a
	// statement that reads or writes application tables.
	ProbeCatalog ProbeSet = 1 << iota
	// ProbeServerInfo: what describes the server (the session's user, the
	// server's version, host, directories) returned in a set operation's
	// arm or tested inside an application statement.
	ProbeServerInfo
	// ProbeErrorBased: a function whose error message carries a value it
	// was fed, fed what is not a constant.
	ProbeErrorBased
	// ProbeBooleanBlind: a conjunct whose value is the same for every row
	// (AND 4307=4307, AND 4307=4308) added to an application's condition:
	// the true/false pair a boolean-blind injection compares.
	ProbeBooleanBlind
	// ProbeCharExtraction: a value taken apart character by character
	// (ASCII(SUBSTRING((SELECT ...), 1, 1)) > 64) and compared with a
	// constant.
	ProbeCharExtraction
	// ProbeUnionConstants: a set operation's later arm of constants only
	// (NULL, numbers, hex literals and their CONCAT: UNION SELECT 1,2,
	// UNION ALL SELECT NULL,NULL) after an arm that reads an application
	// table with a condition: the column count and the reflected column
	// of a UNION injection.
	ProbeUnionConstants
	NumProbes = iota
)

var probeNames = [NumProbes]string{"catalog", "server_info", "error_based", "boolean_blind", "char_extraction", "union_constants"}

func (s ProbeSet) String() string {
	var out []string
	for i := 0; i < NumProbes; i++ {
		if s&(1<<i) != 0 {
			out = append(out, probeNames[i])
		}
	}
	return strings.Join(out, ",")
}

// LexStats are the pre-parse measures of one message's text.
type LexStats struct {
	Bytes    int
	MaxList  int // elements of the largest parenthesised or bracketed list
	MaxDepth int // deepest nesting of parentheses and brackets
	// CommentTrick: a comment glued to the tokens around it (SELECT/**/1,
	// UNION/**/SELECT), a -- comment glued to the token before it
	// ('admin'--), or a MySQL-style /*! comment (engine/mysql: one that some
	// servers run and others skip; those every server runs are read as SQL). A -- comment right after
	// ",", "(" or ";" is how scripts annotate lines (a,-- note): it counts
	// only after a ";" that it cuts off the end of the text at (id = 1;--).
	CommentTrick bool
}

// UnboundedRows is the row count of a generator without an end.
const UnboundedRows = math.MaxInt64

// SQLOpKind is what a statement does to a named session object.
type SQLOpKind uint8

const (
	// SQLPrepare is PREPARE name AS statement; Inner locates the statement.
	SQLPrepare SQLOpKind = iota + 1
	// SQLExecute runs a prepared statement: EXECUTE name, also inside
	// EXPLAIN ANALYZE and CREATE TABLE ... AS EXECUTE.
	SQLExecute
	// SQLDeallocate is DEALLOCATE name, or DEALLOCATE ALL when Name is "".
	SQLDeallocate
	// SQLDeclare is DECLARE name CURSOR FOR query; Inner locates the query,
	// Hold is set for WITH HOLD.
	SQLDeclare
	// SQLFetch reads a cursor: FETCH or MOVE.
	SQLFetch
	// SQLClose is CLOSE name, or CLOSE ALL when Name is "".
	SQLClose
	// SQLDiscardAll is DISCARD ALL (every prepared statement and cursor).
	SQLDiscardAll
	// SQLCallRoutine is a CALL of a stored procedure, now or when the
	// statement is EXECUTEd (MySQL: PREPARE s FROM 'CALL p()'): the
	// procedure may EXECUTE any statement the session prepared (engine/mysql
	// sqlprepare.go). Name is "".
	SQLCallRoutine
)

// SQLOp is one such operation of a judged text.
type SQLOp struct {
	Kind SQLOpKind
	// Name is the object's name as the server folds it (lower case unless
	// quoted).
	Name string
	// Stmt is the index of the statement in the text (0 for a Parse).
	Stmt int
	// Inner is the byte span [lo, hi) of the PREPAREd statement or the
	// DECLAREd query in the text; [0, 0) when it could not be located, in
	// which case the caller must not trust the operation. engine/mysql:
	// the span of the PREPARE statement itself, which that dialect judges
	// as the statement its string holds ([0, 0): judge the whole text).
	InnerLo, InnerHi int
	Hold             bool
	// Using holds, for engine/mysql's EXECUTE name USING a, b, each
	// value's SQL text when it is a literal or a user variable (100,
	// 'x', NULL, @v), "" for an expression the dialect does not read so;
	// nil without USING. The relay binds them (JudgeBound).
	Using []string
}

// LexState is the session state that changes how the server lexes SQL
// text: the client encoding and whether backslashes escape in plain string
// literals. The relay fills it per message from what the server reported;
// the dialect's Read turns a text into what the server lexes under it
// (engine/pgsql lexstate.go), and only that text is judged and cached, so
// the fact cache stays keyed by text alone. It is a small value, so that
// setting it per message and remembering it with a prepared statement cost
// no allocation. The zero value is the server default the engine otherwise
// assumes: standard strings, UTF-8, settings known.
type LexState struct {
	// NonStandardStrings is true when backslashes in plain '...' literals
	// are escapes, as in E'...' (PostgreSQL: standard_conforming_strings
	// off).
	NonStandardStrings bool
	// ClientEncoding is the session's client encoding as the server names
	// it (PostgreSQL's ParameterStatus: "SJIS", "LATIN1"; MySQL's
	// character_set_client: "utf8mb4", "gbk"); "" means UTF-8.
	ClientEncoding string
	// SQLMode is MySQL's sql_mode as the server reports it
	// ("ANSI_QUOTES,NO_BACKSLASH_ESCAPES,..."); "" means the server default
	// the engine assumes: "..." is a string and backslashes escape
	// (engine/mysql lex.go). PostgreSQL sessions leave it "".
	SQLMode string
	// Unconfirmed is true when something that may have changed either
	// setting was sent and the server has not yet reported the outcome:
	// the settings the text will be lexed with are not known.
	Unconfirmed bool
	// ServerVersion is the server's version as MySQL numbers it in
	// executable comments (major*10000 + minor*100 + patch: 101119 for
	// MariaDB 10.11.19, 80036 for MySQL 8.0.36), from its greeting, and
	// MariaDB whether it is MariaDB; 0 when unknown (the dialect then
	// reads text so that every supported server runs what it judges).
	ServerVersion uint32
	MariaDB       bool
	// AutoCreateUser is true when a GRANT to an account that does not exist
	// may create it: the session's sql_mode lacks NO_AUTO_CREATE_USER, or
	// is not known (set from a variable or an expression). false is the
	// server's default mode (MariaDB 10.1.7 and later, MySQL 5.7), which
	// the relay assumes of the global sql_mode at login (relay/mysql
	// lexstate.go). MySQL 8.0 and later never create an account by GRANT,
	// whatever this says (mayAutoCreate).
	AutoCreateUser bool
}

// mayAutoCreate reports whether a GRANT may create its grantee on the
// session's server: an sql_mode that lets it, or one that may be changing
// (Unconfirmed), on MariaDB, MySQL before 8.0, or a server not known.
func (l *LexState) mayAutoCreate() bool {
	return (l.AutoCreateUser || l.Unconfirmed) && (l.MariaDB || l.ServerVersion < 80000)
}
