package config

import (
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
