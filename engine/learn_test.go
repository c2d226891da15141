package engine

import (
	"strconv"
	"strings"
	"testing"
)

// The learner's memory is bounded: a shape keeps at most maxNormalized
// bytes of its text, and past maxBytes new shapes are dropped.
func TestLearnBytesBounded(t *testing.T) {
	l := NewLearnerBy(testDialect{}, 0, LearnByUser)
	s := &Session{User: "app"}
	l.Record("SELECT "+strings.Repeat("f(1) + ", 20000)+"1", s)
	for _, a := range l.apps {
		for _, e := range a.prints {
			if len(e.normalized) > maxNormalized+4 {
				t.Errorf("a shape keeps %d bytes of text", len(e.normalized))
			}
		}
	}
	l = NewLearnerBy(testDialect{}, 0, LearnByUser)
	l.maxBytes = 10000
	for i := 0; i < 1000; i++ {
		l.Record("SELECT "+strconv.Itoa(i)+strings.Repeat(" + 1", 20), s)
	}
	n, dropped := l.Len()
	if l.bytes > l.maxBytes+2000 || dropped == 0 || n == 0 || n >= 1000 {
		t.Errorf("bound 10000 bytes: %d shapes, %d dropped, %d bytes", n, dropped, l.bytes)
	}
}
