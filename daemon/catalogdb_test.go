package daemon

import "testing"

func TestWithDBName(t *testing.T) {
	for _, tc := range []struct{ dsn, want string }{
		{"host=/run/postgresql user=sqlfw_catalog dbname=shop", "host=/run/postgresql user=sqlfw_catalog dbname=shop dbname='b'"},
		{"postgres://sqlfw_catalog@127.0.0.1:5432/shop?sslmode=disable", "postgres://sqlfw_catalog@127.0.0.1:5432/b?sslmode=disable"},
		{"postgresql://u:pw@h/shop?dbname=shop&sslmode=disable", "postgresql://u:pw@h/b?sslmode=disable"},
	} {
		got, err := withDBName(tc.dsn, "b")
		if err != nil || got != tc.want {
			t.Errorf("withDBName(%q): %q, %v; want %q", tc.dsn, got, err, tc.want)
		}
	}
	if got, _ := withDBName("user=x", `it's\`); got != `user=x dbname='it\'s\\'` {
		t.Errorf("quoting: %q", got)
	}
	if _, err := withDBName("postgres://u:secret@h/%zz", "b"); err == nil || contains(err.Error(), "secret") {
		t.Errorf("a bad URL: %v, want an error without the password", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
