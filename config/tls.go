package config

// The TLS sections of a database (docs/config.md, "TLS"): the files they
// name and how they build crypto/tls configurations. The handshakes on
// both legs are daemon/tls.go's.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
)

// TLSConfig is the client leg of a database.
type TLSConfig struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
	// ClientCA, when set, requires client certificates signed by it.
	ClientCA string `yaml:"client_ca"`
	// Require refuses clients that do not ask for TLS.
	Require bool `yaml:"require"`
}

// UpstreamTLS is the server leg of a database.
type UpstreamTLS struct {
	// Mode: disable (default), prefer, require, verify-ca or verify-full.
	Mode string `yaml:"mode"`
	// CA verifies the server's certificate (default: the system pool).
	CA string `yaml:"ca"`
	// ServerName is the name verify-full checks (default: the upstream's
	// host).
	ServerName string `yaml:"server_name"`
	// AllowClearPassword lets a TLS client's clear-text password (PostgreSQL's
	// password method, mysql_clear_password, …) cross a plaintext server leg
	// to an upstream off this host; by default such an authentication is
	// refused (docs/config.md, "TLS").
	AllowClearPassword bool `yaml:"allow_clear_password"`
}

// Upstream TLS modes.
const (
	UpstreamTLSDisable    = "disable"
	UpstreamTLSPrefer     = "prefer"
	UpstreamTLSRequire    = "require"
	UpstreamTLSVerifyCA   = "verify-ca"
	UpstreamTLSVerifyFull = "verify-full"
)

// Check reports a mode that is not one of them.
func (u *UpstreamTLS) Check() error {
	switch u.Mode {
	case "", UpstreamTLSDisable, UpstreamTLSPrefer, UpstreamTLSRequire, UpstreamTLSVerifyCA, UpstreamTLSVerifyFull:
		return nil
	}
	return fmt.Errorf("upstream_tls.mode %q: want disable, prefer, require, verify-ca or verify-full", u.Mode)
}

// BuildTLS reads the certificates of a database's TLS settings and builds
// the configurations of its client leg (server; nil: no TLS) and its
// server leg (client; nil: disable). A reload calls it again.
func (dc *Database) BuildTLS() (server, client *tls.Config, err error) {
	if t := dc.TLS; t != nil && (t.Cert != "" || t.Key != "") {
		cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, nil, fmt.Errorf("database %s: tls: %w", dc.Name, err)
		}
		server = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		// the protocol's ALPN names (PostgreSQL 17's direct TLS names its
		// protocol; MySQL clients send none, and a server that lists
		// protocols refuses a client that offers others)
		proto, err := dc.protocolEntry()
		if err != nil {
			return nil, nil, fmt.Errorf("database %s: %w", dc.Name, err)
		}
		server.NextProtos = slices.Clone(proto.ALPN)
		if t.ClientCA != "" {
			pool, err := readPool(t.ClientCA)
			if err != nil {
				return nil, nil, fmt.Errorf("database %s: tls.client_ca: %w", dc.Name, err)
			}
			server.ClientCAs, server.ClientAuth = pool, tls.RequireAndVerifyClientCert
		}
	} else if dc.TLS != nil && dc.TLS.Require {
		return nil, nil, fmt.Errorf("database %s: tls.require needs tls.cert and tls.key", dc.Name)
	}
	if u := dc.UpstreamTLS; u != nil && u.Mode != "" && u.Mode != UpstreamTLSDisable {
		client = &tls.Config{MinVersion: tls.VersionTLS12}
		if u.CA != "" {
			pool, err := readPool(u.CA)
			if err != nil {
				return nil, nil, fmt.Errorf("database %s: upstream_tls.ca: %w", dc.Name, err)
			}
			client.RootCAs = pool
		}
		client.ServerName = u.ServerName
		if client.ServerName == "" {
			if host, _, err := net.SplitHostPort(dc.Upstream); err == nil {
				client.ServerName = host
			}
		}
		switch u.Mode {
		case UpstreamTLSPrefer, UpstreamTLSRequire:
			// encryption without authentication, as libpq's require
			client.InsecureSkipVerify = true
		case UpstreamTLSVerifyCA:
			// the chain, not the name
			roots := client.RootCAs
			client.InsecureSkipVerify = true
			client.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
				return verifyChain(raw, roots)
			}
		}
	}
	return server, client, nil
}

func readPool(path string) (*x509.CertPool, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, errors.New("no PEM certificate in " + path)
	}
	return pool, nil
}

func verifyChain(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("the server sent no certificate")
	}
	certs := make([]*x509.Certificate, len(raw))
	for i, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return err
		}
		certs[i] = c
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := certs[0].Verify(opts)
	return err
}
