package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sqlfw/sqlfw/wire/pg"
)

// Mode says what a deny verdict does.
type Mode string

const (
	// ModeEnforce blocks denied statements.
	ModeEnforce Mode = "enforce"
	// ModeMonitor lets every statement through and logs the denied ones.
	ModeMonitor Mode = "monitor"
	// ModeDetect lets every statement through and reports what enforce
	// would have done, with the evaluation time.
	ModeDetect Mode = "detect"
)

// Config is sqlfwd's configuration: global settings and the databases it
// protects. docs/config.md documents every key.
type Config struct {
	LogLevel      string        `yaml:"log_level"`
	LogFormat     string        `yaml:"log_format"`
	ControlSocket string        `yaml:"control_socket"`
	DrainTimeout  time.Duration `yaml:"drain_timeout"`
	Databases     []Database    `yaml:"databases"`
}

// Database is one protected database: where clients come in, where the
// server is, and the policy that judges its statements.
type Database struct {
	Name     string `yaml:"name"`
	Protocol string `yaml:"protocol"`
	Listen   string `yaml:"listen"`
	Upstream string `yaml:"upstream"`
	// Policy is a policy file; empty means the embedded default policy.
	Policy string `yaml:"policy"`
	Mode   Mode   `yaml:"mode"`
	// MaxMessageBytes bounds a client message held whole to be judged.
	MaxMessageBytes int `yaml:"max_message_bytes"`
	// BufferBytes is the relay buffer per direction and connection.
	BufferBytes    int           `yaml:"buffer_bytes"`
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// StartupTimeout bounds the time a client may take to send its
	// startup packet.
	StartupTimeout time.Duration `yaml:"startup_timeout"`
	// PolicyCacheBytes bounds the engine's cache of analysed statements.
	PolicyCacheBytes int64 `yaml:"policy_cache_bytes"`
}

// Defaults.
const (
	DefaultControlSocket  = "/run/sqlfw/control.sock"
	DefaultDrainTimeout   = 30 * time.Second
	DefaultConnectTimeout = 5 * time.Second
	DefaultStartupTimeout = 10 * time.Second
)

// ParseConfig reads a YAML configuration. Unknown keys are errors.
func ParseConfig(text []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(text))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("configuration is empty")
		}
		return nil, fmt.Errorf("parsing configuration: %w", err)
	}
	return &c, nil
}

// LoadConfig reads and parses a configuration file.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading configuration: %w", err)
	}
	c, err := ParseConfig(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Normalize fills defaults and checks the configuration. It reports every
// problem it finds, not only the first.
func (c *Config) Normalize() error {
	var errs []error
	if c.LogLevel == "" {
		c.LogLevel = "info"
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("log_level %q: want debug, info, warn or error", c.LogLevel))
	}
	if c.LogFormat == "" {
		c.LogFormat = "auto"
	}
	switch c.LogFormat {
	case "auto", "text", "json":
	default:
		errs = append(errs, fmt.Errorf("log_format %q: want auto, text or json", c.LogFormat))
	}
	if c.ControlSocket == "" {
		c.ControlSocket = DefaultControlSocket
	}
	if c.DrainTimeout == 0 {
		c.DrainTimeout = DefaultDrainTimeout
	}
	if len(c.Databases) == 0 {
		errs = append(errs, errors.New("no databases configured"))
	}
	names := map[string]bool{}
	listens := map[string]bool{}
	for i := range c.Databases {
		db := &c.Databases[i]
		if db.Name == "" {
			db.Name = fmt.Sprintf("db%d", i)
		}
		where := fmt.Sprintf("databases[%d] (%s)", i, db.Name)
		if names[db.Name] {
			errs = append(errs, fmt.Errorf("%s: duplicate name", where))
		}
		names[db.Name] = true
		if db.Protocol == "" {
			errs = append(errs, fmt.Errorf("%s: protocol is required (postgres)", where))
		} else if db.Protocol != "postgres" {
			errs = append(errs, fmt.Errorf("%s: protocol %q is not supported yet (postgres)", where, db.Protocol))
		}
		if err := checkHostPort(db.Listen); err != nil {
			errs = append(errs, fmt.Errorf("%s: listen: %w", where, err))
		} else if listens[db.Listen] && !strings.HasSuffix(db.Listen, ":0") {
			errs = append(errs, fmt.Errorf("%s: listen %s is used twice", where, db.Listen))
		}
		listens[db.Listen] = true
		if err := checkHostPort(db.Upstream); err != nil {
			errs = append(errs, fmt.Errorf("%s: upstream: %w", where, err))
		}
		if db.Mode == "" {
			db.Mode = ModeEnforce
		}
		switch db.Mode {
		case ModeEnforce, ModeMonitor, ModeDetect:
		default:
			errs = append(errs, fmt.Errorf("%s: mode %q: want enforce, monitor or detect", where, db.Mode))
		}
		if db.MaxMessageBytes == 0 {
			db.MaxMessageBytes = pg.DefaultMaxMessage
		} else if db.MaxMessageBytes < 1024 {
			errs = append(errs, fmt.Errorf("%s: max_message_bytes %d is below 1024", where, db.MaxMessageBytes))
		}
		if db.BufferBytes == 0 {
			db.BufferBytes = pg.DefaultBufferSize
		} else if db.BufferBytes < 512 {
			errs = append(errs, fmt.Errorf("%s: buffer_bytes %d is below 512", where, db.BufferBytes))
		}
		if db.ConnectTimeout == 0 {
			db.ConnectTimeout = DefaultConnectTimeout
		}
		if db.StartupTimeout == 0 {
			db.StartupTimeout = DefaultStartupTimeout
		}
	}
	return errors.Join(errs...)
}

func checkHostPort(s string) error {
	if s == "" {
		return errors.New("address is required (host:port)")
	}
	if _, _, err := net.SplitHostPort(s); err != nil {
		return err
	}
	return nil
}
