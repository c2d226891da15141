package engine

// The shape cache. Bulk INSERT ... VALUES texts differ only in their
// literals, so the exact-text cache never hits and each one was parsed
// (about 13 ms of CPU for 1,000 rows). A dialect that is a Shaper keys such
// a text by its shape (the text with each literal no rule reads replaced by
// a marker of its token class) and says, on the first parse, whether the
// facts hold for every text of that shape; engine/pgsql/shape.go says why
// that is sound for PostgreSQL. Conditions on the text itself (byte and
// list limits) are still evaluated on each text; fingerprints are reused,
// as they ignore constants.

import (
	"slices"
	"sync"
	"sync/atomic"
)

// template is the shape-cache entry made from tf: the statement facts
// without the text-dependent parts (matched rules, the statement's place
// in its text), and the fingerprints, which ignore constants.
func (tf *TextFacts) template() *TextFacts {
	t := &TextFacts{Stmts: slices.Clone(tf.Stmts), shaped: true, prints: tf.prints}
	for i := range t.Stmts {
		st := &t.Stmts[i]
		st.matched, st.Loc, st.Length = nil, 0, 0
		st.InDatabase = cloneInDatabase(st.InDatabase)
		st.AsUser = cloneAsUser(st.AsUser)
	}
	return t
}

// cloneAsUser is cloneInDatabase for the per-user facts.
func cloneAsUser(in []UserFacts) []UserFacts {
	if in == nil {
		return nil
	}
	out := slices.Clone(in)
	for i := range out {
		out[i].Facts.matched = nil
		out[i].Facts.InDatabase = cloneInDatabase(out[i].Facts.InDatabase)
	}
	return out
}

// cloneInDatabase copies the per-database facts without their matched
// rules, so that precomputing an instance does not write to a template.
func cloneInDatabase(in []DatabaseFacts) []DatabaseFacts {
	if in == nil {
		return nil
	}
	out := slices.Clone(in)
	for i := range out {
		out[i].Facts.matched = nil
	}
	return out
}

// instance returns facts for a text of t's shape measured as lex; the
// caller precomputes the rules on the text.
func (t *TextFacts) instance(lex LexStats) *TextFacts {
	tf := &TextFacts{Stmts: slices.Clone(t.Stmts), Lex: lex, shaped: true}
	for i := range tf.Stmts {
		tf.Stmts[i].InDatabase = cloneInDatabase(tf.Stmts[i].InDatabase)
		tf.Stmts[i].AsUser = cloneAsUser(tf.Stmts[i].AsUser)
	}
	if prints := t.prints; prints != nil {
		tf.printOnce.Do(func() { tf.prints = prints })
	}
	return tf
}

// analyzeShaped analyses a text through the shape cache: a hit reuses the
// facts of an earlier text of the same shape, a miss parses and, when the
// dialect finds the literals inert, adds the shape. nil means the text has
// no shape; analyse it the ordinary way.
func (e *Engine) analyzeShaped(text string, lex LexStats, k *shapeKey) *TextFacts {
	if !k.done {
		e.scanShape(k, text)
	}
	if !e.keyOf(k, text) {
		return nil
	}
	key := k.key
	t, h, hit := e.shapes.get(key)
	if hit {
		tf := t.instance(lex)
		e.policy.precompute(e.dialect, tf, text)
		return tf
	}
	tf, inert := e.shaper.AnalyzeShape(text, lex)
	e.policy.precompute(e.dialect, tf, text)
	if inert {
		tf.shaped = true
		if e.shapeSeen.admit(h) {
			t := tf.template()
			t.shared = e.sharedFacts(t, tf, text)
			if ps, ok := e.shaper.(PrescanStabler); ok && t.shared != nil {
				t.stableLex = ps.PrescanStable(text)
			}
			t.shapeKey = string(key)
			if e.matcher != nil {
				t.shapePieces = ShapePieces(t.shapeKey)
			}
			e.shapes.put(h, t.shapeKey, t)
		}
	}
	return tf
}

// keyBuf holds one shape key and its spans between statements.
type keyBuf struct {
	b     []byte
	spans []ShapeSpan
}

var keyBufs = sync.Pool{New: func() any { return new(keyBuf) }}

// release returns b to the pool unless one huge text grew it.
func (b *keyBuf) release() {
	if cap(b.b) <= 256<<10 && cap(b.spans) <= 16<<10 {
		keyBufs.Put(b)
	}
}

// doorkeeper admits a shape to the cache the second time it is seen, so
// that shapes which never repeat (a literal kept in the key that differs
// every time) do not evict the ones that do. It remembers one hash per
// slot; a collision costs a shape one more parse, never a wrong hit.
type doorkeeper []atomic.Uint64

func newDoorkeeper() doorkeeper { return make(doorkeeper, 4096) }

func (d doorkeeper) admit(h uint64) bool {
	s := &d[h&uint64(len(d)-1)]
	if s.Load() == h {
		return true
	}
	s.Store(h)
	return false
}
