package daemon

import (
	"crypto/tls"

	"github.com/sqlfw/sqlfw/config"
	"github.com/sqlfw/sqlfw/engine"
)

// The configuration lives in config/ (which fwctl config validate uses
// without the daemon); the daemon knows it under these names.
type (
	Config        = config.Config
	Database      = config.Database
	Intercept     = config.Intercept
	AuditConfig   = config.AuditConfig
	Discovery     = config.Discovery
	TLSConfig     = config.TLSConfig
	UpstreamTLS   = config.UpstreamTLS
	CatalogConfig = config.CatalogConfig
	Mode          = config.Mode
)

const (
	ModeEnforce = config.ModeEnforce
	ModeMonitor = config.ModeMonitor
	ModeDetect  = config.ModeDetect

	InterceptOff     = config.InterceptOff
	InterceptAppHost = config.InterceptAppHost
	InterceptDBHost  = config.InterceptDBHost

	DefaultMark               = config.DefaultMark
	DefaultControlSocket      = config.DefaultControlSocket
	DefaultPinDir             = config.DefaultPinDir
	DefaultDrainTimeout       = config.DefaultDrainTimeout
	DefaultControlIdleTimeout = config.DefaultControlIdleTimeout
	DefaultConnectTimeout     = config.DefaultConnectTimeout
	DefaultStartupTimeout     = config.DefaultStartupTimeout
	DefaultServerReplyTimeout = config.DefaultServerReplyTimeout
	DefaultAuthTimeout        = config.DefaultAuthTimeout
	DefaultMaxBufferedBytes   = config.DefaultMaxBufferedBytes

	upstreamTLSPrefer = config.UpstreamTLSPrefer
)

// ParseConfig reads a YAML configuration (config.Parse).
func ParseConfig(text []byte) (*Config, error) { return config.Parse(text) }

// ParseConfigFile parses a configuration file's content, its errors as
// FILE:LINE:COLUMN: message (config.ParseFile).
func ParseConfigFile(path string, text []byte) (*Config, error) { return config.ParseFile(path, text) }

// LoadConfig reads and parses a configuration file (config.Load).
func LoadConfig(path string) (*Config, error) { return config.Load(path) }

// buildEngine reads and checks a database's policy and builds its engine
// with its protocol's dialect and default policy (the protocol table's).
func buildEngine(dc *Database) (*engine.Engine, error) { return dc.Engine() }

// buildTLS reads the certificates of a database's TLS settings.
func buildTLS(dc *Database) (server, client *tls.Config, err error) { return dc.BuildTLS() }
