package config

import (
	"os"
	"strings"
	"testing"
	"time"
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
					c.ControlSocket != DefaultControlSocket || db.MaxMessageBytes != 64<<20 || db.ConnectTimeout != DefaultConnectTimeout {
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
		{name: "bad mode", yaml: "databases:\n  - protocol: postgres\n    listen: 127.0.0.1:1\n    upstream: x:1\n    mode: block\n", wantErr: "mode \"block\""},
		{name: "missing upstream", yaml: "databases:\n  - protocol: postgres\n    listen: 127.0.0.1:1\n", wantErr: "upstream"},
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
			name: "mysql gets its defaults",
			yaml: "databases:\n  - {protocol: mysql, listen: '127.0.0.1:3307', upstream: '127.0.0.1:3306'}\n",
			check: func(t *testing.T, c *Config) {
				if db := c.Databases[0]; db.Protocol != ProtocolMySQL || db.MaxMessageBytes != 64<<20 || db.BufferBytes != 32<<10 || db.Mode != ModeEnforce {
					t.Errorf("defaults not filled: %+v", db)
				}
			},
		},
		{name: "mysql with tls", yaml: "databases:\n  - {protocol: mysql, listen: '127.0.0.1:1', upstream: 'x:1', tls: {cert: c, key: k}}\n", wantErr: "not supported for protocol mysql yet"},
		{name: "mysql with upstream_tls", yaml: "databases:\n  - {protocol: mysql, listen: '127.0.0.1:1', upstream: 'x:1', upstream_tls: {mode: require}}\n", wantErr: "not supported for protocol mysql yet"},
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
