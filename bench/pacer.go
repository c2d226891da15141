package bench

import (
	"math"
	"math/rand/v2"
	"time"
)

// A Pacer yields the intended send times of successive requests, as offsets
// from the start of a cell. Offsets never decrease. A Pacer is used by one
// goroutine.
type Pacer interface {
	// Next returns the offset at which the next request is due.
	Next() time.Duration
	// Rate is the mean number of requests per second.
	Rate() float64
}

// NewPacer returns a constant pacer, or a Poisson one when poisson is set
// (seeded, so a schedule can be replayed).
func NewPacer(rate float64, poisson bool, seed uint64) Pacer {
	if poisson {
		return NewPoissonPacer(rate, seed)
	}
	return NewConstantPacer(rate)
}

// ConstantPacer schedules request i at i/rate exactly. The offset is computed
// from i each time rather than by adding intervals, so rounding never
// accumulates into drift.
type ConstantPacer struct {
	rate float64
	i    int64
}

// NewConstantPacer returns a pacer at rate requests per second.
func NewConstantPacer(rate float64) *ConstantPacer { return &ConstantPacer{rate: rate} }

// Next implements Pacer.
func (p *ConstantPacer) Next() time.Duration {
	d := DueAt(p.i, p.rate)
	p.i++
	return d
}

// Rate implements Pacer.
func (p *ConstantPacer) Rate() float64 { return p.rate }

// DueAt is the constant-rate due offset of request i: i/rate seconds.
func DueAt(i int64, rate float64) time.Duration {
	return time.Duration(math.Round(float64(i) * float64(time.Second) / rate))
}

// PoissonPacer schedules requests as a Poisson process: exponentially
// distributed gaps with mean 1/rate, from a seeded generator. The first
// request is due at 0.
type PoissonPacer struct {
	rate  float64
	rng   *rand.Rand
	t     float64 // seconds
	first bool
}

// NewPoissonPacer returns a Poisson pacer at rate requests per second.
func NewPoissonPacer(rate float64, seed uint64) *PoissonPacer {
	return &PoissonPacer{rate: rate, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), first: true}
}

// Next implements Pacer.
func (p *PoissonPacer) Next() time.Duration {
	if p.first {
		p.first = false
		return 0
	}
	p.t += p.rng.ExpFloat64() / p.rate
	return time.Duration(math.Round(p.t * float64(time.Second)))
}

// Rate implements Pacer.
func (p *PoissonPacer) Rate() float64 { return p.rate }
