package engine

// A Dialect is what the engine knows of one database's SQL: how its server
// reads a message's text, how to measure and parse it, and how to fill the
// facts (vocab.go) that rules read. It is the plug between this package,
// which never parses SQL, and a dialect package (engine/pgsql), which
// imports this one and hands New a value, the way image/png registers with
// image. A Dialect must be safe for concurrent use and hold no per-session
// state: whatever a session changes about reading its text is in
// Session.Lex, and the facts of a text depend on the text alone, because
// they are cached by it. What a statement does in the session's current
// database is such a fact too: the dialect fills its facts in each database
// where they differ (StmtFacts.InDatabase), and the engine applies the one
// of Session.Database on each call.
type Dialect interface {
	// Name names the dialect in errors ("postgresql").
	Name() string
	// Read returns the text the server lexes when a session in lexing
	// state l sends sql: sql itself, without allocating, when l does not
	// change its reading. When the reading cannot be known it returns ok
	// false and the rule id and literal-free reason of a deny. Facts are
	// cached by the text Read returns, never by sql.
	Read(sql []byte, l *LexState) (text []byte, ruleID, reason string, ok bool)
	// Prescan measures text before it is parsed (LexStats), cheaply
	// enough for texts the parser would be slow on. Once stopBytes > 0
	// and len(text) > stopBytes it may return only Bytes.
	Prescan(text string, stopBytes int) LexStats
	// Analyze parses text and fills the facts of every statement in it,
	// keeping lex (Prescan's measures) in the result. Text the parser
	// rejects gets ParseError and a ParseReason without its literals, and
	// in Stmts what the dialect is sure its statements do nonetheless
	// (engine/mysql unparsed.go), which only a deny rule may act on.
	Analyze(text string, lex LexStats) *TextFacts
	// Fingerprint identifies a statement up to its literal values (the
	// text of one StmtFacts: Loc, Length); 0 when it has none.
	Fingerprint(stmt string) uint64
	// Normalize returns the statement with its literals replaced by
	// placeholders, for the learner.
	Normalize(stmt string) (string, error)
	// Objects lists the object types a rule's `objects:` may name.
	Objects() []string
	// Fills reports whether the dialect fills the facts that the match
	// key (as policies spell it: "kind", "copy", "dynamic_sql") reads. A
	// policy whose rule uses a key the dialect cannot fill is refused, so
	// that a rule never silently matches nothing.
	Fills(key string) bool
}

// A Shaper is a Dialect that can say when the facts of one text hold for
// every text that differs from it only in literal values: bulk INSERT ...
// VALUES texts, which never repeat exactly. The engine then caches facts by
// the text's shape as well as by its exact text.
type Shaper interface {
	// ShapeSpans appends to spans, in text order, the literals a rule
	// never reads, each with its token class: the text's shape key is the
	// text with each span replaced by a NUL and its class (ShapeKey). ok
	// is false when the text has no shape worth a cache entry, or holds a
	// NUL byte (so that no kept byte can forge a marker).
	ShapeSpans(spans []ShapeSpan, text string) (_ []ShapeSpan, ok bool)
	// AnalyzeShape is Analyze for a text that has a shape; inert reports
	// that its facts hold for every text of that shape.
	AnalyzeShape(text string, lex LexStats) (_ *TextFacts, inert bool)
}

// A ShapeMatcher is a Shaper that can tell whether a text's shape key is a
// given one without finding the text's spans first: it reads the text
// against the key, the kept bytes compared and each marker's literal read
// as one of its class (shapehint.go: the hinted entry's key).
type ShapeMatcher interface {
	// MatchShape reports whether text's shape key (ShapeSpans) is key,
	// whose markers end pieces (ShapePieces).
	MatchShape(key string, pieces []ShapePiece, text string) bool
}

// A PrescanStabler is a Shaper that can tell, for a text whose shape is
// inert, that its Prescan reads every literal the shape replaces as one
// whole token from outside any comment, string or dollar quote. The
// prescan's measures (list sizes, nesting, comment tricks) of every text
// of that shape are then the text's own but for Bytes, so a shape hit
// skips the prescan (shapehit.go).
type PrescanStabler interface {
	PrescanStable(text string) bool
}

// A Starter is a Dialect whose connections set session parameters before
// the first statement (PostgreSQL's StartupMessage).
type Starter interface {
	// StartupSQL returns the statements the parameters amount to, judged
	// like any other, or the rule id and reason of a deny when what they
	// set cannot be told.
	StartupSQL(params [][2]string) (sqls []string, ruleID, reason string)
}

// A GranteeCreator is a Dialect whose GRANT may create the account it
// grants to when that account does not exist (MySQL 5.7 and MariaDB under
// an sql_mode without NO_AUTO_CREATE_USER; StmtFacts.CreatesGrantee).
// GranteeCreation is the facts of that account's creation (MySQL's CREATE
// USER), which the engine judges beside the GRANT's own when the session
// may create it (LexState.AutoCreateUser): matched against the policy once,
// when the engine is made.
type GranteeCreator interface {
	GranteeCreation() StmtFacts
}

// A Fastpather is a Dialect whose protocol can call a function by id,
// without SQL text (PostgreSQL's FunctionCall message).
type Fastpather interface {
	// Fastpath returns the rule id and reason of a deny for a call of
	// function fn, or "", "" when the call is allowed.
	Fastpath(fn uint32) (ruleID, reason string)
}

// A CatalogReader is a Dialect that can read what a database's own objects
// do from its catalog (catalog.go): the queries a monitoring role runs, and
// the catalog their answers make.
type CatalogReader interface {
	// CatalogQueries are run in order on one connection; every column is
	// read as text (NULL as "").
	CatalogQueries() []CatalogQuery
	// BuildCatalog makes the catalog from each query's rows (rows[i] is
	// CatalogQueries()[i]'s).
	BuildCatalog(rows [][][]string, o CatalogOptions) *Catalog
}

// CatalogQuery is one query of CatalogReader.
type CatalogQuery struct {
	Name string // what it reads, for errors ("views")
	SQL  string
}
