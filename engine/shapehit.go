package engine

// A shape hit without a parse, a copy or an allocation (issue 26). A text
// the exact-text cache does not hold is looked up by its shape before it
// is copied or parsed: against the hinted entries' keys first (read in
// place, shapehint.go), else by the key built from the literals the
// dialect finds (Shaper.ShapeSpans, into a pooled buffer). An entry made
// from text A lends every text B of its shape one TextFacts, matched
// against the policy once (its shared facts), when what the rules read of
// a text is provably the same for A and B:
//
//   - the statement facts: the dialect's AnalyzeShape said so (inert: the
//     facts read no replaced literal's value), and the facts hold nothing
//     that is worked out from the text later (SQL-level operations, bare
//     parameters, stored code): sharedFacts refuses those;
//   - the pre-parse measures: B is prescanned like any text, and its
//     measures must equal A's but for Bytes; else B takes the ordinary
//     path. Where the dialect showed, when the entry was made, that its
//     prescan reads each of A's replaced literals as its own tokens from
//     code (PrescanStabler: then the prescan reads B as A but inside those
//     tokens, which add nothing but tokens to its measures), B's measures
//     are A's and the prescan is skipped. Bytes itself decides nothing
//     here: a text above the smallest bytes limit of any rule, or the
//     parse bound, is not parsed (beyond), so neither A nor B exceeds a
//     bytes limit, and no reason carries a byte count;
//   - the fingerprints ignore constants (FuzzShapeSound checks it), and
//     are taken from A with its statements' places, once.
//
// The shared facts keep A's Lex.Bytes: nothing reads the byte count of
// facts that were parsed once the rules are matched.

import "unsafe"

// sharedFacts returns the facts an entry made from the inert text A (its
// facts tf, its template t) lends every text of its shape, or nil when
// some fact of A is worked out from A's own text after matching.
func (e *Engine) sharedFacts(t, tf *TextFacts, text string) *TextFacts {
	if tf.SQLOps != nil || tf.ParseError || tf.Unparsed {
		return nil
	}
	for i := range tf.Stmts {
		st := &tf.Stmts[i]
		if len(st.BareParams) > 0 || st.ParamWrite || len(st.Bodies) > 0 {
			return nil
		}
	}
	prints := tf.fingerprints(e.dialect, text)
	s := t.instance(tf.Lex)
	s.printOnce.Do(func() { s.prints = prints })
	e.policy.precompute(e.dialect, s, text)
	return s
}

// shapeKey is the shape of one text, kept from the lookup to the parse on
// a miss so that the text is scanned once.
type shapeKey struct {
	buf   *keyBuf
	spans []ShapeSpan // the literals the key replaces
	key   []byte      // the key, once keyOf built it
	ok    bool        // the text has a shape: spans (and key, once built) hold it
	keyed bool        // keyOf ran
	done  bool        // the scan ran
}

func (k *shapeKey) release() {
	if k.buf != nil {
		k.buf.b, k.buf.spans = k.key[:0], k.spans[:0]
		k.buf.release()
		k.buf = nil
	}
}

// scan fills k with the spans of text's shape.
func (e *Engine) scanShape(k *shapeKey, text string) {
	k.done = true
	// A key is at most twice its text; a text whose key could never be
	// cached is not worth a shape, nor its buffer.
	if e.shapes.tooBig(len(text) / 2) {
		return
	}
	k.buf = keyBufs.Get().(*keyBuf)
	k.key = k.buf.b[:0]
	k.spans, k.ok = e.shaper.ShapeSpans(k.buf.spans[:0], text)
	k.ok = k.ok && len(k.spans) > 0
}

// keyOf builds k's key from its spans (once) and reports whether it is
// one the shape cache could hold.
func (e *Engine) keyOf(k *shapeKey, text string) bool {
	if k.ok && !k.keyed {
		k.keyed = true
		k.key = AppendShapeKey(k.key[:0], text, k.spans)
		if e.shapes.tooBig(len(k.key)) {
			k.ok = false
		}
	}
	return k.ok
}

// hinted returns the hinted entry of text's shape, or nil: one of the two
// hints of its pair whose key is the text's (shapehint.go), read against
// the text by the dialect's MatchShape, else compared with the text's
// spans (keyIs; they are left in k).
func (e *Engine) hinted(text string, k *shapeKey) *TextFacts {
	i := e.hints.pair(text)
	for j := i; j < i+2; j++ {
		t := e.hints.slots[j].Load()
		switch {
		case t == nil:
		case e.matcher != nil:
			if e.matcher.MatchShape(t.shapeKey, t.shapePieces, text) {
				return t
			}
		default:
			if !k.done {
				e.scanShape(k, text)
			}
			if !k.ok {
				return nil
			}
			if keyIs(t.shapeKey, text, k.spans) {
				return t
			}
		}
	}
	return nil
}

// shapeHit returns the shared facts of a shape entry for sql, or nil: no
// shape, no entry, no shared facts, or measures other than the entry's.
// It fills k for the caller's parse on a miss.
func (e *Engine) shapeHit(sql []byte, k *shapeKey) *TextFacts {
	if len(sql) == 0 {
		return nil
	}
	// The scan and the prescan read sql in place: neither keeps the text
	// (spans are offsets, a key is built in k's buffer), and sql does not
	// change during the call (Judge's contract).
	text := unsafe.String(unsafe.SliceData(sql), len(sql))
	if e.shapes.tooBig(len(text) / 2) {
		return nil // as scanShape: no entry has such a key
	}
	t := e.hinted(text, k)
	if t == nil {
		if !k.done {
			e.scanShape(k, text)
		}
		if !e.keyOf(k, text) {
			return nil
		}
		var hit bool
		t, _, hit = e.shapes.get(k.key)
		if !hit || t.shared == nil {
			return nil
		}
		e.hints.set(text, t)
	}
	if t.stableLex {
		// The prescan would measure what it measured in the entry's text
		// (PrescanStabler), but for the byte count.
		lex := t.shared.Lex
		lex.Bytes = len(text)
		if e.beyond(&lex) {
			return nil
		}
		return t.shared
	}
	lex := e.prescan(text)
	if e.beyond(&lex) {
		return nil
	}
	if want := t.shared.Lex; lex.MaxList != want.MaxList || lex.MaxDepth != want.MaxDepth || lex.CommentTrick != want.CommentTrick {
		return nil
	}
	return t.shared
}
