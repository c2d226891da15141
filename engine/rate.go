package engine

import (
	"hash/maphash"
	"sync"
)

// DefaultRateKeys bounds the token buckets an engine keeps.
const DefaultRateKeys = 65536

// rateSpec is a compiled `rate:` condition: a token bucket per rule and
// per session key (the fields listed in `per:`).
type rateSpec struct {
	perSec float64
	burst  float64
	keys   []string
}

func compileRate(y *yamlRate) (*rateSpec, error) {
	rs := &rateSpec{perSec: y.PerSecond}
	if y.PerMinute != 0 {
		if y.PerSecond != 0 {
			return nil, errEither("per_second", "per_minute")
		}
		rs.perSec = y.PerMinute / 60
	}
	if rs.perSec <= 0 {
		return nil, errNeeds("per_second or per_minute > 0")
	}
	rs.burst = float64(y.Burst)
	if rs.burst <= 0 {
		rs.burst = max(1, rs.perSec)
	}
	for _, k := range y.Per {
		rs.keys = append(rs.keys, string(k))
	}
	if len(rs.keys) == 0 {
		rs.keys = []string{"user", "database", "client_addr"}
	}
	return rs, nil
}

type rateErr string

func (e rateErr) Error() string { return string(e) }

func errEither(a, b string) error { return rateErr("set " + a + " or " + b + ", not both") }
func errNeeds(what string) error  { return rateErr("needs " + what) }

// rateTable holds the buckets. Memory is bounded: at the limit, buckets
// that have refilled (idle keys) are dropped first, then arbitrary ones; a
// dropped key starts again with a full bucket.
type rateTable struct {
	mu      sync.Mutex
	seed    maphash.Seed
	max     int
	buckets map[rateKey]bucket
}

type rateKey struct {
	rule int32
	h    uint64
}

type bucket struct {
	tokens float64
	last   int64 // unix nanoseconds of the last update
}

func newRateTable(max int) *rateTable {
	if max <= 0 {
		max = DefaultRateKeys
	}
	return &rateTable{seed: maphash.MakeSeed(), max: max, buckets: map[rateKey]bucket{}}
}

// over takes a token for the session's key and reports whether there was
// none (the rate is exceeded). Without Session.At it reports false.
func (rt *rateTable) over(rule int32, rs *rateSpec, s *Session) bool {
	if rt == nil || s.At.IsZero() {
		return false
	}
	var h maphash.Hash
	h.SetSeed(rt.seed)
	for _, k := range rs.keys {
		switch k {
		case "user":
			h.WriteString(s.User)
		case "database":
			h.WriteString(s.Database)
		case "application":
			h.WriteString(s.Application)
		case "client_addr":
			b := s.ClientAddr.Unmap().As16()
			h.Write(b[:])
		case "comm":
			h.WriteString(s.Process.Comm)
		case "cgroup":
			h.WriteString(s.Process.Cgroup)
		case "uid":
			u := s.Process.UID
			h.WriteByte(byte(u))
			h.WriteByte(byte(u >> 8))
			h.WriteByte(byte(u >> 16))
			h.WriteByte(byte(u >> 24))
		}
		h.WriteByte(0)
	}
	key := rateKey{rule: rule, h: h.Sum64()}
	now := s.At.UnixNano()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	b, ok := rt.buckets[key]
	if !ok {
		if len(rt.buckets) >= rt.max {
			rt.evict(now, rs)
		}
		b = bucket{tokens: rs.burst, last: now}
	} else if now > b.last {
		b.tokens = min(rs.burst, b.tokens+float64(now-b.last)/1e9*rs.perSec)
		b.last = now
	}
	if b.tokens < 1 {
		rt.buckets[key] = b
		return true
	}
	b.tokens--
	rt.buckets[key] = b
	return false
}

// evict frees an eighth of the table. Called with mu held.
func (rt *rateTable) evict(now int64, rs *rateSpec) {
	target := rt.max - rt.max/8 - 1
	// Idle first: a bucket untouched for burst/rate seconds is full again.
	idle := int64(rs.burst / rs.perSec * 1e9)
	for k, b := range rt.buckets {
		if len(rt.buckets) <= target {
			return
		}
		if now-b.last >= idle {
			delete(rt.buckets, k)
		}
	}
	for k := range rt.buckets {
		if len(rt.buckets) <= target {
			return
		}
		delete(rt.buckets, k)
	}
}

func (rt *rateTable) len() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return len(rt.buckets)
}
