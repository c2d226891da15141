package engine

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

// factCache maps statement text to its facts. It is keyed by a hash of the
// text, but a hit also compares the full text: two texts with the same hash
// never share facts, so a collision can cost a re-parse, never a bypass.
//
// It is bounded by an estimate of the bytes it holds and evicts with CLOCK
// per shard: a hit only sets a reference bit (under the shard's read lock),
// so hits do not serialise on a write lock and do not allocate.
type factCache struct {
	hash   func([]byte) uint64 // replaceable by tests to force collisions
	shards []cacheShard
	mask   uint64
}

type cacheShard struct {
	mu    sync.RWMutex
	index map[uint64]int32 // hash → position in slots
	slots []cacheSlot
	hand  int
	used  int64
	limit int64
	_     [40]byte // keep neighbouring shards' locks off one cache line
}

type cacheSlot struct {
	hash  uint64
	text  string
	facts *TextFacts
	size  int64
	ref   atomic.Bool
}

// Sizes used to estimate what an entry costs beyond its text; they need only
// be roughly right, the bound is on the estimate.
const (
	entryOverhead = 160 // slot, map entry, textFacts header
	stmtOverhead  = 96
	refOverhead   = 40
)

func newFactCache(limit int64) *factCache {
	n := 16
	if limit < 1<<20 {
		n = 1
	}
	seed := maphash.MakeSeed()
	c := &factCache{
		hash:   func(b []byte) uint64 { return maphash.Bytes(seed, b) },
		shards: make([]cacheShard, n),
		mask:   uint64(n - 1),
	}
	for i := range c.shards {
		c.shards[i].index = make(map[uint64]int32)
		c.shards[i].limit = limit / int64(n)
	}
	return c
}

// tooBig reports whether a text of n bytes could never be cached, so that
// hashing it can be skipped.
func (c *factCache) tooBig(n int) bool { return int64(n) > c.shards[0].limit/4 }

func (c *factCache) shard(h uint64) *cacheShard {
	// The low bits pick the map bucket; the high bits pick the shard.
	return &c.shards[(h>>56)&c.mask]
}

// get returns the facts cached for exactly this text.
func (c *factCache) get(text []byte) (*TextFacts, uint64, bool) {
	h := c.hash(text)
	s := c.shard(h)
	s.mu.RLock()
	i, ok := s.index[h]
	if ok {
		sl := &s.slots[i]
		if sl.text == string(text) {
			f := sl.facts
			if !sl.ref.Load() {
				sl.ref.Store(true)
			}
			s.mu.RUnlock()
			return f, h, true
		}
	}
	s.mu.RUnlock()
	return nil, h, false
}

// put stores facts for text under hash h (from get). An entry with the same
// hash but another text is replaced.
func (c *factCache) put(h uint64, text string, f *TextFacts) {
	size := entrySize(text, f)
	s := c.shard(h)
	if size > s.limit/4 {
		return // one huge text must not flush the shard
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.index[h]; ok {
		sl := &s.slots[i]
		if sl.text == text {
			return // another goroutine got here first
		}
		s.used -= sl.size
		sl.text, sl.facts, sl.size = text, f, size
		sl.ref.Store(false)
		s.used += size
		s.evict(int(i))
		return
	}
	for s.used+size > s.limit && len(s.slots) > 0 {
		s.evict(-1)
	}
	s.index[h] = int32(len(s.slots))
	s.slots = append(s.slots, cacheSlot{hash: h, text: text, facts: f, size: size})
	s.used += size
}

// evict runs the CLOCK hand until used fits the limit, sparing slot keep.
// Called with mu held for writing.
func (s *cacheShard) evict(keep int) {
	for s.used > s.limit || keep < 0 {
		if len(s.slots) == 0 || (len(s.slots) == 1 && keep == 0) {
			return
		}
		if s.hand >= len(s.slots) {
			s.hand = 0
		}
		sl := &s.slots[s.hand]
		if s.hand == keep || sl.ref.Load() {
			sl.ref.Store(false)
			s.hand++
			continue
		}
		s.used -= sl.size
		delete(s.index, sl.hash)
		last := len(s.slots) - 1
		if s.hand != last {
			moved := &s.slots[last]
			sl.hash, sl.text, sl.facts, sl.size = moved.hash, moved.text, moved.facts, moved.size
			sl.ref.Store(moved.ref.Load())
			s.index[sl.hash] = int32(s.hand)
			if keep == last {
				keep = s.hand
			}
		}
		s.slots[last] = cacheSlot{}
		s.slots = s.slots[:last]
		if keep < 0 {
			return // one slot freed for a new entry
		}
	}
}

func entrySize(text string, f *TextFacts) int64 {
	n := int64(entryOverhead + len(text) + len(f.ParseReason))
	for i := range f.Stmts {
		st := &f.Stmts[i]
		n += stmtOverhead
		for _, t := range st.Tables {
			n += refOverhead + int64(len(t.Schema)+len(t.Name))
		}
		for _, fn := range st.Funcs {
			n += refOverhead + int64(len(fn.Schema)+len(fn.Name))
		}
		for _, c := range st.Cols {
			n += refOverhead + int64(len(c.Qual)+len(c.Name))
		}
		n += int64(len(st.matched)) * refOverhead
		n += bodiesSize(st.Bodies)
		for j := range st.InDatabase {
			d := &st.InDatabase[j].Facts
			n += stmtOverhead + int64(len(d.Tables)+len(d.matched))*refOverhead
		}
		for j := range st.AsUser {
			u := &st.AsUser[j].Facts
			n += stmtOverhead + int64(len(st.AsUser[j].User)) + int64(len(u.Tables)+len(u.matched))*refOverhead
			for k := range u.InDatabase {
				d := &u.InDatabase[k].Facts
				n += stmtOverhead + int64(len(d.Tables)+len(d.matched))*refOverhead
			}
		}
	}
	return n
}

// bodiesSize estimates the memory of stored code's facts (body.go).
func bodiesSize(bodies []Body) int64 {
	var n int64
	for i := range bodies {
		b := &bodies[i].Facts
		n += stmtOverhead + int64(len(bodies[i].Of)+len(bodies[i].RunsAs)+len(b.Unparsed))
		n += int64(len(b.Tables)+len(b.Funcs)+len(b.Cols)+len(b.matched)) * refOverhead
		n += bodiesSize(b.Bodies)
	}
	return n
}

// len reports the number of cached entries and their estimated bytes.
func (c *factCache) len() (entries int, bytes int64) {
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.RLock()
		entries += len(s.slots)
		bytes += s.used
		s.mu.RUnlock()
	}
	return entries, bytes
}
