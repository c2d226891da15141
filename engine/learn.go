package engine

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// DefaultLearnLimit bounds the fingerprints a Learner keeps.
const DefaultLearnLimit = 100000

// Learner records the statements an application sends, per (user, database)
// scope, as the dialect's fingerprints (PostgreSQL: pg_query's) with their
// normalized text (literals replaced by $1, $2, ...), and exports them as a policy fragment: allow
// rules with `fingerprints:` lists. It is safe for concurrent use.
//
// Statements that differ only in literals, IN-list length or VALUES row
// count share a fingerprint; that is what makes the allowlist stable, and
// why limit rules must come before it in a policy.
type Learner struct {
	dialect Dialect // for Record
	limit   int

	mu      sync.Mutex
	scopes  map[LearnScope]map[uint64]*learned
	total   int
	dropped uint64
}

// LearnScope is what learned statements are grouped by.
type LearnScope struct {
	User     string
	Database string
}

type learned struct {
	normalized string
	count      uint64
}

// NewLearner returns a learner that keeps at most limit fingerprints
// (0: DefaultLearnLimit); further new ones are counted as dropped.
func NewLearner(d Dialect, limit int) *Learner {
	if limit <= 0 {
		limit = DefaultLearnLimit
	}
	return &Learner{dialect: d, limit: limit, scopes: map[LearnScope]map[uint64]*learned{}}
}

// Record parses sql in the learner's dialect and records its statements for the session's scope.
// Texts the parser rejects are not recorded.
func (l *Learner) Record(sql string, s *Session) {
	d := l.dialect
	l.record(d, d.Analyze(sql, d.Prescan(sql, 0)), sql, s)
}

// record records the statements of text, whose facts d found.
func (l *Learner) record(d Dialect, tf *TextFacts, text string, s *Session) {
	if tf.ParseError || tf.Unparsed || len(tf.Stmts) == 0 {
		return
	}
	if s == nil {
		s = &noSession
	}
	prints := tf.fingerprints(d, text)
	sc := LearnScope{User: s.User, Database: s.Database}
	for i, fp := range prints {
		if fp == 0 {
			continue
		}
		l.mu.Lock()
		m := l.scopes[sc]
		if e, ok := m[fp]; ok {
			e.count++
			l.mu.Unlock()
			continue
		}
		full := l.total >= l.limit
		if full {
			l.dropped++
		}
		l.mu.Unlock()
		if full {
			continue
		}
		norm, err := d.Normalize(stmtText(text, &tf.Stmts[i]))
		if err != nil {
			continue
		}
		l.mu.Lock()
		if m = l.scopes[sc]; m == nil {
			m = map[uint64]*learned{}
			l.scopes[sc] = m
		}
		if e, ok := m[fp]; ok {
			e.count++
		} else if l.total < l.limit {
			m[fp] = &learned{normalized: norm, count: 1}
			l.total++
		}
		l.mu.Unlock()
	}
}

// Len returns the number of fingerprints recorded and of new ones dropped
// at the limit.
func (l *Learner) Len() (fingerprints int, dropped uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, l.dropped
}

// Export writes what was learned as a policy fragment (YAML): one allow
// rule per scope, each fingerprint followed by its normalized statement as
// a comment. Normalized text carries no literals. The fragment parses as a
// policy on its own; to enforce the allowlist, append a rule that denies
// everything else for the same scope (docs/policy.md shows one).
func (l *Learner) Export() []byte {
	l.mu.Lock()
	type entry struct {
		fp uint64
		learned
	}
	scopes := make([]LearnScope, 0, len(l.scopes))
	entries := map[LearnScope][]entry{}
	for sc, m := range l.scopes {
		scopes = append(scopes, sc)
		es := make([]entry, 0, len(m))
		for fp, e := range m {
			es = append(es, entry{fp, *e})
		}
		sort.Slice(es, func(i, j int) bool {
			if es[i].count != es[j].count {
				return es[i].count > es[j].count
			}
			return es[i].fp < es[j].fp
		})
		entries[sc] = es
	}
	total, dropped := l.total, l.dropped
	l.mu.Unlock()
	sort.Slice(scopes, func(i, j int) bool {
		if scopes[i].User != scopes[j].User {
			return scopes[i].User < scopes[j].User
		}
		return scopes[i].Database < scopes[j].Database
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Learned by sqlfw: %d statement fingerprints in %d scopes", total, len(scopes))
	if dropped > 0 {
		fmt.Fprintf(&b, " (%d more dropped at the limit)", dropped)
	}
	b.WriteString(".\n# Each entry is a statement fingerprint of the " + l.dialect.Name() + " dialect; the comment shows\n# the statement normalized (literals replaced by placeholders) and how often it was seen.\nrules:\n")
	if len(scopes) == 0 {
		b.WriteString("  []\n")
	}
	for i, sc := range scopes {
		fmt.Fprintf(&b, "  - id: %s\n    action: allow\n    reason: statement learned during learning mode\n", yamlQuote(fmt.Sprintf("learned-%d-%s@%s", i+1, sc.User, sc.Database)))
		if sc.User != "" {
			fmt.Fprintf(&b, "    users: [%s]\n", yamlQuote(sc.User))
		}
		if sc.Database != "" {
			fmt.Fprintf(&b, "    databases: [%s]\n", yamlQuote(sc.Database))
		}
		b.WriteString("    match:\n      fingerprints:\n")
		for _, e := range entries[sc] {
			fmt.Fprintf(&b, "        - \"%016x\" # %s (seen %d)\n", e.fp, oneLine(e.normalized, 200), e.count)
		}
	}
	return b.Bytes()
}

func yamlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// oneLine makes text fit on a comment line.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + " ..."
	}
	return s
}
