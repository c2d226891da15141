package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqlfw/sqlfw/engine"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		wantErr string // substring; "" means valid
		check   func(t *testing.T, c *Config)
	}{
		{
			name: "minimal gets defaults",
			yaml: "databases:\n  - protocol: postgres\n    listen: 127.0.0.1:6432\n    upstream: 127.0.0.1:5432\n",
			check: func(t *testing.T, c *Config) {
				db := c.Databases[0]
				if db.Mode != ModeEnforce || db.Name != "db0" || c.DrainTimeout != DefaultDrainTimeout ||
					c.ControlSocket != DefaultControlSocket || db.MaxMessageBytes != 1<<20 || db.ConnectTimeout != DefaultConnectTimeout {
					t.Errorf("defaults not filled: %+v %+v", c, db)
				}
			},
		},
		{
			name: "durations and mode",
			yaml: "drain_timeout: 3s\ndatabases:\n  - name: a\n    protocol: postgres\n    listen: 127.0.0.1:1\n    upstream: db:5432\n    mode: detect\n    connect_timeout: 250ms\n",
			check: func(t *testing.T, c *Config) {
				if c.DrainTimeout != 3*time.Second || c.Databases[0].Mode != ModeDetect || c.Databases[0].ConnectTimeout != 250*time.Millisecond {
					t.Errorf("got %+v", c)
				}
			},
		},
		{name: "unknown key", yaml: "databses: []\n", wantErr: "databses"},
		{name: "empty", yaml: "", wantErr: "empty"},
		{name: "no databases", yaml: "log_level: info\n", wantErr: "no databases"},
		{
			name: "discovery alone",
			yaml: "discovery: {enabled: true}\n",
			check: func(t *testing.T, c *Config) {
				if !c.Discovery.Enabled || c.Discovery.Interval != DefaultDiscoveryInterval || len(c.Databases) != 0 {
					t.Errorf("discovery %+v, databases %d: want enabled every %s, none configured", c.Discovery, len(c.Databases), DefaultDiscoveryInterval)
				}
			},
		},
		{
			name: "unix socket alone",
			yaml: "databases:\n  - {protocol: mysql, intercept: app-host, unix_socket: /run/mysqld/mysqld.sock}\n",
			check: func(t *testing.T, c *Config) {
				if db := c.Databases[0]; db.Upstream != "" || !db.UnixOnly() {
					t.Errorf("database %+v: want no upstream, UnixOnly", db)
				}
			},
		},
		{name: "discovery interval too short", yaml: "discovery: {enabled: true, interval: 10ms}\n", wantErr: "discovery.interval 10ms is below 100ms"},
		{name: "bad mode", yaml: "databases:\n  - protocol: postgres\n    listen: 127.0.0.1:1\n    upstream: x:1\n    mode: block\n", wantErr: "mode \"block\""},
		{name: "missing upstream", yaml: "databases:\n  - protocol: postgres\n    listen: 127.0.0.1:1\n", wantErr: "upstream"},
		{name: "unix socket without intercept or upstream", yaml: "databases:\n  - {protocol: mysql, unix_socket: /run/mysqld/mysqld.sock}\n", wantErr: "upstream"},
		{name: "unix-only with protect", yaml: "databases:\n  - {protocol: mysql, intercept: app-host, unix_socket: /run/mysqld/mysqld.sock, protect: ['127.0.0.1:3306']}\n", wantErr: "upstream"},
		{name: "unix-only with listen", yaml: "databases:\n  - {protocol: mysql, intercept: app-host, unix_socket: /run/mysqld/mysqld.sock, listen: '127.0.0.1:1'}\n", wantErr: "upstream"},
		{name: "unsupported protocol", yaml: "databases:\n  - protocol: oracle\n    listen: 127.0.0.1:1\n    upstream: x:1\n", wantErr: "oracle"},
		{
			name: "pods",
			yaml: "intercept: {pods: true, pod_listen: '10.244.0.1:6433'}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: '10.0.0.5:5432'}\n",
			check: func(t *testing.T, c *Config) {
				if !c.Intercept.Pods || c.Intercept.PodListen != "10.244.0.1:6433" {
					t.Errorf("intercept %+v, want pods on 10.244.0.1:6433", c.Intercept)
				}
			},
		},
		{
			name: "splice_upstream",
			yaml: "intercept: {splice_upstream: [/sys/fs/cgroup/unified/db]}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: '127.0.0.1:5432'}\n",
			check: func(t *testing.T, c *Config) {
				if len(c.Intercept.SpliceUpstream) != 1 || !*c.Intercept.Sockmap {
					t.Errorf("intercept = %+v", c.Intercept)
				}
			},
		},
		{name: "splice_upstream without sockmap", yaml: "intercept: {sockmap: false, splice_upstream: [/x]}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: 'x:1'}\n", wantErr: "splice_upstream needs sockmap"},
		{name: "splice_upstream with fastpath", yaml: "intercept: {fastpath: true, splice_upstream: [/x]}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: 'x:1'}\n", wantErr: "splice_upstream and fastpath exclude each other"},
		{name: "pods without pod_listen", yaml: "intercept: {pods: true}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: 'x:1'}\n", wantErr: "pods needs pod_listen"},
		{name: "pod_listen without pods", yaml: "intercept: {pod_listen: '10.0.0.1:1'}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: 'x:1'}\n", wantErr: "pods is not"},
		{name: "loopback pod_listen", yaml: "intercept: {pods: true, pod_listen: '127.0.0.1:6433'}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: 'x:1'}\n", wantErr: "loopback is its own"},
		{name: "wildcard pod_listen", yaml: "intercept: {pods: true, pod_listen: '[::]:6433'}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: 'x:1'}\n", wantErr: "wildcard"},
		{
			name: "dual-stack pod_listen",
			yaml: "intercept: {pods: true, pod_listen: '10.244.0.1:6433, [fd00::1]:6433'}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: '10.0.0.5:5432'}\n",
			check: func(t *testing.T, c *Config) {
				if aps, err := c.Intercept.PodListeners(); err != nil || len(aps) != 2 {
					t.Errorf("PodListeners() = %v, %v; want two", aps, err)
				}
			},
		},
		{name: "two IPv4 pod listeners", yaml: "intercept: {pods: true, pod_listen: '10.0.0.1:1,10.0.0.2:1'}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: 'x:1'}\n", wantErr: "one family"},
		{name: "pod_listen not an IP", yaml: "intercept: {pods: true, pod_listen: 'node:6433'}\ndatabases:\n  - {protocol: postgres, intercept: app-host, upstream: 'x:1'}\n", wantErr: "want an IP address"},
		{
			// each database its own protocol's, from the table (protocols_test.go)
			name: "each protocol gets its defaults",
			yaml: "databases:\n  - {protocol: mysql, listen: '127.0.0.1:3307', upstream: '127.0.0.1:3306'}\n  - {protocol: postgres, listen: '127.0.0.1:5433', upstream: '127.0.0.1:5432'}\n  - {protocol: mysql, listen: '127.0.0.1:3308', upstream: '127.0.0.1:3306', max_message_bytes: 4096, buffer_bytes: 1024}\n",
			check: func(t *testing.T, c *Config) {
				for i, want := range []struct {
					protocol string
					max, buf int
				}{{"mysql", 2 << 20, 8192}, {"postgres", 1 << 20, 4096}, {"mysql", 4096, 1024}} {
					if db := c.Databases[i]; db.Protocol != want.protocol || db.MaxMessageBytes != want.max || db.BufferBytes != want.buf || db.Mode != ModeEnforce {
						t.Errorf("databases[%d]: defaults not filled: %+v, want %+v", i, db, want)
					}
				}
			},
		},
		{
			name: "mysql with tls",
			yaml: "databases:\n  - {protocol: mysql, listen: '127.0.0.1:1', upstream: 'x:1', tls: {cert: c, key: k, require: true}, upstream_tls: {mode: verify-full}}\n",
			check: func(t *testing.T, c *Config) {
				if db := c.Databases[0]; db.TLS == nil || !db.TLS.Require || db.UpstreamTLS == nil || db.UpstreamTLS.Mode != UpstreamTLSVerifyFull {
					t.Errorf("tls %+v upstream_tls %+v, want both legs", db.TLS, db.UpstreamTLS)
				}
			},
		},
		{name: "mysql with a bad upstream_tls mode", yaml: "databases:\n  - {protocol: mysql, listen: '127.0.0.1:1', upstream: 'x:1', upstream_tls: {mode: sometimes}}\n", wantErr: "upstream_tls.mode"},
		{
			name: "mysql allows replication commands",
			yaml: "databases:\n  - {protocol: mysql, listen: '127.0.0.1:1', upstream: 'x:1', allow_commands: [COM_BINLOG_DUMP, com_register_slave]}\n",
			check: func(t *testing.T, c *Config) {
				if got := c.Databases[0].AllowCommands; len(got) != 2 {
					t.Errorf("allow_commands %v, want two", got)
				}
			},
		},
		{name: "mysql allows a command that is SQL", yaml: "databases:\n  - {protocol: mysql, listen: '127.0.0.1:1', upstream: 'x:1', allow_commands: [COM_SHUTDOWN]}\n", wantErr: "allow_commands \"COM_SHUTDOWN\""},
		{name: "mysql allows an unknown command", yaml: "databases:\n  - {protocol: mysql, listen: '127.0.0.1:1', upstream: 'x:1', allow_commands: [binlog]}\n", wantErr: "allow_commands \"binlog\""},
		{name: "postgres allows commands", yaml: "databases:\n  - {protocol: postgres, listen: '127.0.0.1:1', upstream: 'x:1', allow_commands: [COM_BINLOG_DUMP]}\n", wantErr: "protocol postgres has no commands to allow"},
		{name: "duplicate listen", yaml: "databases:\n  - {protocol: postgres, listen: '127.0.0.1:1', upstream: 'x:1'}\n  - {protocol: postgres, listen: '127.0.0.1:1', upstream: 'x:2'}\n", wantErr: "used twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.yaml))
			if err == nil {
				err = c.Normalize()
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("config:\n%s\ngot error %v, want one containing %q", tt.yaml, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("config:\n%s\nunexpected error %v", tt.yaml, err)
			}
			tt.check(t, c)
		})
	}
}

func TestExampleConfigIsValid(t *testing.T) {
	b, err := os.ReadFile("../deploy/sqlfwd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Normalize(); err != nil {
		t.Fatal(err)
	}
}

// Check builds both legs' TLS for either protocol: a certificate that
// loads, the upstream's CA, tls.require only with a certificate; only
// PostgreSQL's client leg names an ALPN protocol.
func TestCheckTLS(t *testing.T) {
	dir := t.TempDir()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "db.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"db.test"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	cert, keyPath := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	for _, tc := range []struct {
		name, protocol, tls, wantErr string
		alpn                         []string
	}{
		{"mysql, both legs", "mysql", fmt.Sprintf("tls: {cert: %s, key: %s, client_ca: %s, require: true}, upstream_tls: {mode: verify-full, ca: %s, server_name: db.test}", cert, keyPath, cert, cert), "", nil},
		{"postgres, both legs", "postgres", fmt.Sprintf("tls: {cert: %s, key: %s}, upstream_tls: {mode: verify-ca, ca: %s}", cert, keyPath, cert), "", []string{"postgresql"}},
		{"mysql, require without a certificate", "mysql", "tls: {require: true}", "tls.require needs tls.cert", nil},
		{"mysql, a missing key", "mysql", fmt.Sprintf("tls: {cert: %s, key: %s}", cert, filepath.Join(dir, "none")), "tls:", nil},
		{"mysql, a CA that is not PEM", "mysql", fmt.Sprintf("upstream_tls: {mode: verify-full, ca: %s}", keyPath), "no PEM certificate", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(fmt.Sprintf("databases:\n  - {protocol: %s, listen: '127.0.0.1:1', upstream: '127.0.0.1:2', %s}\n", tc.protocol, tc.tls)))
			if err != nil {
				t.Fatal(err)
			}
			err = c.Check()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Check: %v, want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			server, client, err := c.Databases[0].BuildTLS()
			if err != nil || server == nil || client == nil {
				t.Fatalf("BuildTLS: %v, %v, %v; want both legs", server, client, err)
			}
			if !slices.Equal(server.NextProtos, tc.alpn) {
				t.Errorf("client leg ALPN %q, want %q", server.NextProtos, tc.alpn)
			}
		})
	}
}

// TestMaxParseBytes: a database's max_parse_bytes is the bound its engine
// parses to - a longer text is denied as parse-bound whatever the policy -
// the default is the engine's, and a bound below 1 KiB is refused.
func TestMaxParseBytes(t *testing.T) {
	text := []byte("SELECT '" + strings.Repeat("x", 3000) + "'")
	for _, tc := range []struct {
		key  string
		want string // the verdict's rule, "" allowed
	}{
		{"", ""},
		{"    max_parse_bytes: 2048\n", engine.ParseBoundRule},
		{"    max_parse_bytes: 8192\n", ""},
	} {
		c, err := Parse([]byte("databases:\n  - protocol: postgres\n    listen: 127.0.0.1:6432\n    upstream: 127.0.0.1:5432\n" + tc.key))
		if err == nil {
			err = c.Normalize()
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.key, err)
		}
		if tc.key == "" && c.Databases[0].MaxParseBytes != engine.DefaultMaxParseBytes {
			t.Errorf("default max_parse_bytes %d, want %d", c.Databases[0].MaxParseBytes, engine.DefaultMaxParseBytes)
		}
		eng, err := c.Databases[0].Engine()
		if err != nil {
			t.Fatal(err)
		}
		v := eng.Judge(text, &engine.Session{User: "app", Database: "app"})
		if v.RuleID != tc.want || (tc.want != "") != (v.Action == engine.ActionDeny) {
			t.Errorf("%q: 3,009-byte SELECT: %+v, want rule %q", tc.key, v, tc.want)
		}
	}
	c, err := Parse([]byte("databases:\n  - protocol: postgres\n    listen: 127.0.0.1:6432\n    upstream: 127.0.0.1:5432\n    max_parse_bytes: 100\n"))
	if err == nil {
		err = c.Normalize()
	}
	if err == nil || !strings.Contains(err.Error(), "max_parse_bytes 100 is below 1024") {
		t.Errorf("max_parse_bytes 100: %v, want refused", err)
	}
}
