package pgsql

import (
	"slices"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

func TestStartupOptions(t *testing.T) {
	tests := []struct {
		in   string
		want [][2]string
		ok   bool
	}{
		{"", nil, true},
		{"-c log_statement=none", [][2]string{{"log_statement", "none"}}, true},
		{"-clog_statement=none  --search-path=a,pg_catalog", [][2]string{{"log_statement", "none"}, {"search_path", "a,pg_catalog"}}, true},
		{`-c application_name=a\ b`, [][2]string{{"application_name", "a b"}}, true},
		{"-c Session-Preload-Libraries=x", [][2]string{{"session_preload_libraries", "x"}}, true},
		{"-c", nil, false},
		{"-c novalue", nil, false},
		{"-B 100", nil, false},
		{"log_statement=none", nil, false},
	}
	for _, tt := range tests {
		got, ok := startupOptions(tt.in)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("startupOptions(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// A `_pq_.` key is a protocol extension the server never applies as a
// setting (its test is case-sensitive); any other spelling is a setting.
func TestStartupSQLProtocolExtensions(t *testing.T) {
	got, rule, _ := pgDialect{}.StartupSQL([][2]string{{"_pq_.a", "1"}, {"_PQ_.b", "2"}, {"_pq_", "3"}, {"options", "-c _pq_.c=4"}})
	want := []string{`SET "_pq_.b" TO '2'`, `SET "_pq_" TO '3'`, `SET "_pq_.c" TO '4'`}
	if rule != "" || !slices.Equal(got, want) {
		t.Errorf("StartupSQL = %q (%s), want %q", got, rule, want)
	}
}

func TestJudgeStartup(t *testing.T) {
	e, err := engine.New(DefaultPolicy(), Dialect, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := &engine.Session{User: "app", Database: "app"}
	tests := []struct {
		name   string
		params [][2]string
		want   string // rule id, "" for allow
	}{
		{"ordinary", [][2]string{{"user", "app"}, {"database", "app"}, {"application_name", "psql"}, {"client_encoding", "UTF8"}, {"DateStyle", "ISO"}, {"extra_float_digits", "3"}}, ""},
		{"lexing settings are the session layer's", [][2]string{{"options", "-c client_encoding=SJIS -c standard_conforming_strings=off"}}, ""},
		{"ordinary options", [][2]string{{"options", "-c statement_timeout=5s -c search_path=tenant_1,public"}}, ""},
		{"logging off in options", [][2]string{{"options", "-c log_statement=none"}}, "no-logging-changes"},
		{"logging off as a key", [][2]string{{"log_min_messages", "panic"}}, "no-logging-changes"},
		{"preload library", [][2]string{{"options", "--session-preload-libraries=/tmp/x.so"}}, "no-code-loading"},
		{"search_path shadowing", [][2]string{{"options", `-c search_path=public,pg_catalog`}}, "no-name-shadowing"},
		{"identity", [][2]string{{"options", "-c session_authorization=postgres"}}, "no-identity-switch"},
		{"role", [][2]string{{"role", "pg_read_server_files"}}, "no-identity-switch"},
		{"quote in value", [][2]string{{"options", `-c log_statement=x'\ OR\ '1`}}, "no-logging-changes"},
		{"unreadable options", [][2]string{{"options", "-B 100"}}, startupRuleID},
		{"a protocol extension is no setting", [][2]string{{"_pq_.test_ext", "on"}, {"_pq_.log_statement", "none"}}, ""},
		{"an extension's name in options is a setting", [][2]string{{"options", "-c _pq_.x=1 -c log_statement=none"}}, "no-logging-changes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := e.JudgeStartup(tt.params, s)
			got := ""
			if v.Action.Denies() {
				got = v.RuleID
			}
			if got != tt.want {
				t.Errorf("JudgeStartup(%q) = %v %s (%s), want %q", tt.params, v.Action, v.RuleID, v.Reason, tt.want)
			}
		})
	}
}
