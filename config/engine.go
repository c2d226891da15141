package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/sqlfw/sqlfw/engine"
)

// Engine reads and checks a database's policy and builds its engine (the
// embedded default policy when none is named) with its protocol's dialect
// (the protocol table's entry): the daemon calls it at start and on every
// reload.
func (dc *Database) Engine() (*engine.Engine, error) {
	return dc.EngineWith(nil)
}

// EngineWith is Engine with the learned rules of learned (a fragment
// fwctl learn promote made) appended to the policy's, instead of those of
// the LearnedPolicy file; nil reads the file.
func (dc *Database) EngineWith(learned *engine.Policy) (*engine.Engine, error) {
	proto, err := dc.protocolEntry()
	if err != nil {
		return nil, fmt.Errorf("database %s: %w", dc.Name, err)
	}
	dialect := proto.Dialect
	pol := proto.DefaultPolicy()
	if dc.Policy != "" {
		text, err := os.ReadFile(dc.Policy)
		if err != nil {
			return nil, fmt.Errorf("database %s: reading policy: %w", dc.Name, err)
		}
		pol, err = engine.ParsePolicy(text)
		if err != nil {
			return nil, fmt.Errorf("database %s: policy %s: %w", dc.Name, dc.Policy, err)
		}
	}
	if learned == nil && dc.LearnedPolicy != "" {
		text, err := os.ReadFile(dc.LearnedPolicy)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("database %s: reading learned policy: %w", dc.Name, err)
		default:
			if learned, err = engine.ParsePolicy(text); err != nil {
				return nil, fmt.Errorf("database %s: learned policy %s: %w", dc.Name, dc.LearnedPolicy, err)
			}
		}
	}
	if learned != nil {
		var err error
		if pol, err = pol.With(learned); err != nil {
			return nil, fmt.Errorf("database %s: learned policy: %w", dc.Name, err)
		}
	}
	eng, err := engine.New(pol, dialect, engine.Options{CacheBytes: dc.PolicyCacheBytes, MaxParseBytes: dc.MaxParseBytes})
	if err != nil {
		return nil, fmt.Errorf("database %s: building engine: %w", dc.Name, err)
	}
	return eng, nil
}

// Check is what sqlfwd --check-config and fwctl config validate do:
// Normalize, then build every database's engine and TLS configurations.
// It reads the files the configuration names and opens nothing else.
func (c *Config) Check() error {
	if err := c.Normalize(); err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			return err // each problem FILE:LINE:COLUMN already
		}
		return fmt.Errorf("invalid configuration: %w", err)
	}
	for i := range c.Databases {
		dc := &c.Databases[i]
		if _, err := dc.Engine(); err != nil {
			return err
		}
		if _, _, err := dc.BuildTLS(); err != nil {
			return err
		}
	}
	return nil
}
