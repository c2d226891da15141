package engine

// The parse bound (issue 26): a text is measured before it is parsed
// (Dialect.Prescan, linear and allocation-free), and one larger or more
// deeply nested than the engine parses is denied from those measures
// alone, whatever the policy says. A parse costs far more than its bytes:
// pg_query takes about 0.25 µs and 40 bytes of heap per byte of a bulk
// INSERT or an IN list, and the MySQL parser about 250 bytes of heap per
// byte of nested parentheses (docs/performance.md, "The parse bound"), so a
// policy without a limits rule, or one whose limits rule does not apply to
// a session, would otherwise let one 10 MB statement hold a core for
// seconds and gigabytes. A policy's own limits rule still decides first
// (judgeUnparsed), with its own reason; the bound decides only what no rule
// did, and never lets the text through unjudged.

const (
	// DefaultMaxParseBytes is the largest text parsed: the default
	// policies' own bytes limit, about a second of pg_query on a loaded
	// core for the costliest shapes measured (a bulk INSERT).
	DefaultMaxParseBytes = 4 << 20
	// DefaultMaxParseDepth is the deepest nesting of parentheses and
	// brackets parsed. PostgreSQL's own parser stops at about 10,000
	// levels; the default policies deny more than 128.
	DefaultMaxParseDepth = 1000
)

// ParseBoundRule is the RuleID of a verdict on a text beyond the bound.
const ParseBoundRule = "parse-bound"

// parseBound is the engine's bound, set from Options.
type parseBound struct{ bytes, depth int }

func newParseBound(o Options) parseBound {
	b := parseBound{bytes: o.MaxParseBytes, depth: o.MaxParseDepth}
	if b.bytes <= 0 {
		b.bytes = DefaultMaxParseBytes
	}
	if b.depth <= 0 {
		b.depth = DefaultMaxParseDepth
	}
	return b
}

// exceeded says which measure of lex is beyond the bound, or "".
func (b parseBound) exceeded(lex *LexStats) string {
	switch {
	case lex.Bytes > b.bytes:
		return limitText("bytes", lex.Bytes, b.bytes)
	case lex.MaxDepth > b.depth:
		return limitText("depth", lex.MaxDepth, b.depth)
	}
	return ""
}

// stopBytes is where the prescan of a text may stop: past the smallest
// bytes limit of any rule, or past the bound, the byte count alone decides.
func (e *Engine) stopBytes() int {
	if g := e.policy.guard.bytes; g > 0 && g < e.bound.bytes {
		return g
	}
	return e.bound.bytes
}

// prescan measures text for the pre-parse limits and the bound.
func (e *Engine) prescan(text string) LexStats {
	return e.dialect.Prescan(text, e.stopBytes())
}

// beyond reports whether a measured text is not parsed: a rule's limit or
// the bound is exceeded.
func (e *Engine) beyond(lex *LexStats) bool {
	return e.policy.beyondGuard(lex) || e.bound.exceeded(lex) != ""
}

// parseUnjudged is what becomes of an Unparsed text that no limit rule
// applying to the session decided: the bound's deny when the text is
// beyond it, else its facts, parsed after all (measured in full first: the
// prescan may have stopped at a rule's bytes limit).
func (e *Engine) parseUnjudged(tf *TextFacts, text string) (*TextFacts, Verdict, bool) {
	lex := tf.Lex
	if lex.Bytes > e.stopBytes() { // only the byte count was measured
		lex = e.dialect.Prescan(text, e.bound.bytes)
	}
	if m := e.bound.exceeded(&lex); m != "" {
		return nil, Verdict{Action: ActionDeny, RuleID: ParseBoundRule,
			Reason: "statement is larger or more deeply nested than the firewall parses (" + m + ")",
			Mode:   e.policy.mode, Statements: 1, ChangesPath: true}, false
	}
	tf = e.dialect.Analyze(text, lex)
	e.policy.precompute(e.dialect, tf, text)
	return tf, Verdict{}, true
}
