package daemon

// The limits the daemon keeps across sessions (docs/design.md, "Faults and
// abuse"): all sessions together hold at most max_buffered_bytes for client
// messages read whole to be judged (bufferBudget, lent to every session as
// relay.Env's Budget), and max_connections and max_client_connections
// bound the clients (admit, relay.Env's Admit).

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sqlfw/sqlfw/relay"
)

// budgetWait is how long a session waits for buffer memory to come free.
const budgetWait = time.Second

// bufferBudget is the memory all sessions' framers may hold beyond their
// initial buffers (relay.Budget).
type bufferBudget struct {
	max  int64
	mu   sync.Mutex
	used int64
	// freed is closed and replaced whenever memory is released, waking
	// every waiter to try again.
	freed chan struct{}
	wait  time.Duration
}

func newBufferBudget(max int64) *bufferBudget {
	if max <= 0 {
		max = DefaultMaxBufferedBytes
	}
	return &bufferBudget{max: max, freed: make(chan struct{}), wait: budgetWait}
}

var errBudgetSpent = errors.New("all sessions together hold the configured max_buffered_bytes")

// Reserve takes n bytes, waiting up to b.wait for them to come free.
func (b *bufferBudget) Reserve(n int) error {
	var deadline *time.Timer
	for {
		b.mu.Lock()
		if b.used+int64(n) <= b.max {
			b.used += int64(n)
			b.mu.Unlock()
			if deadline != nil {
				deadline.Stop()
			}
			return nil
		}
		freed := b.freed
		b.mu.Unlock()
		if int64(n) > b.max {
			return fmt.Errorf("%w (%d bytes, the message needs %d more)", errBudgetSpent, b.max, n)
		}
		if deadline == nil {
			deadline = time.NewTimer(b.wait)
		}
		select {
		case <-freed:
		case <-deadline.C:
			return fmt.Errorf("%w (%d bytes) for %v", errBudgetSpent, b.max, b.wait)
		}
	}
}

// Release gives back n bytes.
func (b *bufferBudget) Release(n int) {
	b.mu.Lock()
	b.used -= int64(n)
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// inUse reports the bytes reserved now.
func (b *bufferBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// admit counts a new client connection against max_connections and
// max_client_connections (relay.Env's Admit). A *relay.Refusal says why a
// client may not go on; the session tells it in its protocol's words.
func (d *Daemon) admit(db *database) (release func(), err error) {
	// Admitted sessions are counted, as PostgreSQL counts backends: a
	// connection that has not sent its startup message yet (a health
	// probe, a CancelRequest, a client still negotiating TLS) holds no
	// slot, or it could refuse a real client.
	n := d.clients.Add(1)
	active := db.admitted.Add(1)
	var why string
	maxAll, maxDB := d.maxClients.Load(), db.maxConns.Load() // a reload may change them
	switch {
	case maxAll > 0 && n > maxAll:
		why = fmt.Sprintf("sqlfw: too many clients already (max_client_connections %d)", maxAll)
	case maxDB > 0 && active > maxDB:
		why = fmt.Sprintf("sqlfw: too many clients already for database %s (max_connections %d)", db.cfg.Name, maxDB)
	}
	if why != "" {
		d.clients.Add(-1)
		db.admitted.Add(-1)
		db.stats.connLimited.Add(1)
		return nil, &relay.Refusal{Reason: relay.TooManyConnections, Msg: why}
	}
	return func() { d.clients.Add(-1); db.admitted.Add(-1) }, nil
}
