package relay

import (
	"time"

	"github.com/sqlfw/sqlfw/engine"
)

// The judge-and-observe step every relay takes for a statement, around
// its own call of the engine (Judge, JudgeFastpath...):
//
//	eng := env.Engine() // a reload swaps it; a statement is judged by the engine it loaded
//	j := relay.StartJudging(eng, meter, &sess)
//	v := eng.Judge(sql, &sess)
//	j.End(meter, obs, &v, typ)

// Judging is one evaluation under way.
type Judging struct {
	cpu0 int64
	t0   time.Time
}

// StartJudging starts the meter's evaluation timer for a statement eng
// is about to judge in sess; sess.At is set when eng's policy reads the
// clock.
func StartJudging(eng *engine.Engine, m Meter, sess *engine.Session) Judging {
	j := Judging{cpu0: m.EvalStart()}
	j.t0 = time.Now()
	if eng.Policy().UsesTime() {
		sess.At = j.t0
	}
	return j
}

// End stops the timer and reports v, the verdict of a message of type typ,
// to obs.
func (j Judging) End(m Meter, obs SessionObserver, v *engine.Verdict, typ byte) {
	el := time.Since(j.t0)
	m.EvalEnd(j.cpu0, el)
	obs.Judged(*v, typ, j.t0, el)
}
