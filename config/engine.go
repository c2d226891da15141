package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// Engine reads and checks a database's policy and builds its engine (the
// embedded default policy when none is named) with its protocol's dialect.
func (dc *Database) Engine() (*engine.Engine, error) {
	if dc.Protocol == ProtocolMySQL {
		return dc.EngineOf(mysql.Dialect, mysql.DefaultPolicy())
	}
	return dc.EngineOf(pgsql.Dialect, pgsql.DefaultPolicy())
}

// EngineOf is Engine for a dialect and its default policy: the daemon calls
// it at start and on every reload with its protocol's (daemon/protocols.go).
func (dc *Database) EngineOf(dialect engine.Dialect, defaultPolicy *engine.Policy) (*engine.Engine, error) {
	return dc.EngineWith(dialect, defaultPolicy, nil)
}

// EngineWith is EngineOf with the learned rules of learned (a fragment
// fwctl learn promote made) appended to the policy's, instead of those of
// the LearnedPolicy file; nil reads the file.
func (dc *Database) EngineWith(dialect engine.Dialect, defaultPolicy *engine.Policy, learned *engine.Policy) (*engine.Engine, error) {
	pol := defaultPolicy
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
	eng, err := engine.New(pol, dialect, engine.Options{CacheBytes: dc.PolicyCacheBytes})
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
