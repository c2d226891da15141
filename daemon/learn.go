package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sqlfw/sqlfw/control"
	"github.com/sqlfw/sqlfw/engine"
)

// Learning a policy per application (docs/learn.md): fwctl learn start
// sets a Learner on a database's engine, which records every judged
// statement by the application identity of its session (engine.LearnBy);
// status and diff report it; promote appends the learned rules to the
// database's policy (config learned_policy) and rebuilds its engine. Only
// promote changes verdicts.

// learnState is a database's learning: the learner (nil: never started)
// and when it started, and the promoted learned policy.
type learnState struct {
	since    time.Time
	promoted *promotion
}

// promotion is a learned policy in force: the fragment's text and parse.
type promotion struct {
	frag   []byte
	policy *engine.Policy
	info   control.Promotion
}

// startLearning sets a new learner keyed by by on db's engine.
func (d *Daemon) startLearning(db *database, by engine.LearnBy) {
	l := engine.NewLearnerBy(db.protocol.Dialect, 0, by)
	db.learner.Store(l)
	db.learnMu.Lock()
	db.learn.since = time.Now()
	db.learnMu.Unlock()
	db.engine.Load().SetLearner(l)
	d.log.Info("learning started", "database", db.cfg.Name, "by", by.String())
}

// Learn starts (with a fresh learner keyed by by, "" the database's
// learn_by) or stops recording statements for a database's applications.
// What was learned stays for status, diff, export and promote after stop.
func (d *Daemon) Learn(name string, on bool, by string) error {
	db, err := d.database(name)
	if err != nil {
		return err
	}
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if !on {
		db.engine.Load().SetLearner(nil)
		d.log.Info("learning stopped", "database", db.cfg.Name)
		return nil
	}
	if by == "" {
		by = db.cfg.LearnBy
	}
	lb, err := engine.ParseLearnBy(by)
	if err != nil {
		return err
	}
	d.startLearning(db, lb)
	return nil
}

// learnOptions reads export options as the control socket passes them.
func learnOptions(form, drift, mode string, functions, includeDrift bool) (engine.ExportOptions, error) {
	o := engine.ExportOptions{Form: engine.LearnForm(form), Drift: drift, DriftMode: engine.Mode(mode), Functions: functions, IncludeDrift: includeDrift}
	switch o.Form {
	case "":
		o.Form = engine.FormScope
	case engine.FormScope, engine.FormFingerprints:
	default:
		return o, fmt.Errorf("form %q: want scope or fingerprints", form)
	}
	switch drift {
	case "deny", "log", "":
	default:
		return o, fmt.Errorf("drift %q: want deny or log", drift)
	}
	switch o.DriftMode {
	case "", engine.ModeDetect, engine.ModeMonitor, engine.ModeEnforce:
	default:
		return o, fmt.Errorf("mode %q: want detect, monitor or enforce", mode)
	}
	return o, nil
}

// LearnExport returns the policy fragment learnt for a database.
func (d *Daemon) LearnExport(name string, o engine.ExportOptions) ([]byte, error) {
	db, err := d.database(name)
	if err != nil {
		return nil, err
	}
	l := db.learner.Load()
	if l == nil {
		return nil, fmt.Errorf("database %s: nothing learnt (fwctl learn start first)", db.cfg.Name)
	}
	return l.ExportPolicy(o), nil
}

// LearnStatus reports a database's learning and learned policy.
func (d *Daemon) LearnStatus(name string) (control.LearnStatus, error) {
	db, err := d.database(name)
	if err != nil {
		return control.LearnStatus{}, err
	}
	st := control.LearnStatus{Database: db.cfg.Name, Protocol: db.cfg.Protocol, Learning: db.engine.Load().Learner() != nil, Drift: db.stats.drift.Load()}
	db.learnMu.Lock()
	ls := db.learn
	db.learnMu.Unlock()
	if l := db.learner.Load(); l != nil {
		r := l.Report()
		st.Report = &r
		st.Since = ls.since.UTC().Format(time.RFC3339)
	}
	if p := ls.promoted; p != nil {
		info := p.info
		st.Promoted = &info
	}
	return st, nil
}

// Promote makes a learned policy the database's: frag (an operator's
// reviewed fragment) or, when frag is empty, what was learned exported with
// o. The database's policy with the fragment's rules appended must build;
// then the engine is swapped, and the fragment is written to the database's
// learned_policy file (kept in memory only without one). Learning goes on,
// so that fwctl learn diff shows drift.
func (d *Daemon) Promote(name string, o engine.ExportOptions, frag []byte) (string, error) {
	db, err := d.database(name)
	if err != nil {
		return "", err
	}
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if len(frag) == 0 {
		l := db.learner.Load()
		if l == nil {
			return "", fmt.Errorf("database %s: nothing learnt (fwctl learn start first)", db.cfg.Name)
		}
		if o.Drift == "" {
			o.Drift = "deny"
		}
		frag = l.ExportPolicy(o)
	}
	fp, err := engine.ParsePolicy(frag)
	if err != nil {
		return "", fmt.Errorf("learned policy: %w", err)
	}
	eng, err := db.cfg.EngineWith(fp)
	if err != nil {
		return "", err
	}
	p := &promotion{frag: frag, policy: fp, info: control.Promotion{Form: string(o.Form), Drift: o.Drift, Mode: string(o.DriftMode), At: time.Now().UTC().Format(time.RFC3339), Rules: fp.Len()}}
	msg := ""
	if path := db.cfg.LearnedPolicy; path != "" {
		if err := writeFileAtomic(path, frag); err != nil {
			return "", fmt.Errorf("database %s: writing learned policy: %w", db.cfg.Name, err)
		}
		p.info.File = path
		msg = "written to " + path
	} else {
		msg = "kept in memory only: set learned_policy in the configuration to keep it across restarts"
	}
	eng.SetLearner(db.engine.Load().Learner())
	db.learnMu.Lock()
	db.learn.promoted = p
	db.learnMu.Unlock()
	db.setEngine(eng)
	d.log.Warn("learned policy promoted", "database", db.cfg.Name, "form", p.info.Form, "drift", p.info.Drift, "mode", p.info.Mode, "rules", p.info.Rules, "file", p.info.File)
	return fmt.Sprintf("promoted a learned policy of %d rules for %s (form %s, drift %s, mode %s): %s\n", fp.Len(), db.cfg.Name, orDash(p.info.Form), orDash(p.info.Drift), orDash(p.info.Mode), msg), nil
}

// Demote removes a database's learned policy (and its learned_policy
// file): its own policy alone judges again.
func (d *Daemon) Demote(name string) error {
	db, err := d.database(name)
	if err != nil {
		return err
	}
	d.reloadMu.Lock()
	defer d.reloadMu.Unlock()
	if path := db.cfg.LearnedPolicy; path != "" {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	db.learnMu.Lock()
	db.learn.promoted = nil
	db.learnMu.Unlock()
	eng, err := d.buildEngineOf(db)
	if err != nil {
		return err
	}
	eng.SetLearner(db.engine.Load().Learner())
	db.setEngine(eng)
	d.log.Warn("learned policy removed", "database", db.cfg.Name)
	return nil
}

// buildEngineOf builds db's engine from its configuration, with the
// learned policy promoted in memory when there is no learned_policy file.
func (d *Daemon) buildEngineOf(db *database) (*engine.Engine, error) {
	return d.buildEngineFor(db, db.policy())
}

// buildEngineFor is buildEngineOf with the policy file at path (a reload
// may name another).
func (d *Daemon) buildEngineFor(db *database, path string) (*engine.Engine, error) {
	dc := db.cfg
	dc.Policy = path
	db.learnMu.Lock()
	p := db.learn.promoted
	db.learnMu.Unlock()
	if p != nil && dc.LearnedPolicy == "" {
		return dc.EngineWith(p.policy)
	}
	return buildEngine(&dc)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o640); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// isDrift reports whether a verdict was decided by a learned policy's
// drift rule.
func isDrift(v *engine.Verdict) bool {
	return v.RuleID == engine.DriftRuleID
}
