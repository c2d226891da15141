package main

// fwctl's offline commands for every protocol of the table: the shipped
// default policies and the deploy/ examples validate, policy default
// prints each protocol's, check and learn offline pick the protocol from
// --protocol, a log or the policy, and what learn offline makes of a log
// is a policy that protocol accepts and that allows the learned
// statements.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/sqlfw/sqlfw/engine"
	"github.com/sqlfw/sqlfw/protocol"
)

// shippedPolicies are the default policies in the tree, by protocol.
var shippedPolicies = map[string]string{
	"postgres": "../../engine/pgsql/default_policy.yaml",
	"mysql":    "../../engine/mysql/default_policy.yaml",
}

func TestShippedPoliciesValidate(t *testing.T) {
	if len(protocol.All()) != len(shippedPolicies) {
		t.Fatalf("%d protocols, %d shipped policies: name each protocol's here", len(protocol.All()), len(shippedPolicies))
	}
	for _, p := range protocol.All() {
		t.Run(p.Name, func(t *testing.T) {
			path := shippedPolicies[p.Name]
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			// with --protocol, after the file as before it
			for _, args := range [][]string{{"validate", "--protocol", p.Name, path}, {"validate", path, "--protocol", p.Name}} {
				out.Reset()
				errb.Reset()
				if rc := policyCmd(args, &out, &errb); rc != 0 || !strings.Contains(out.String(), "valid for "+p.Name+" (") {
					t.Errorf("policy %v: rc %d\n%s%s", args, rc, out.String(), errb.String())
				}
			}
			// without: valid, for this protocol among others
			out.Reset()
			if rc := policyCmd([]string{"validate", path}, &out, &errb); rc != 0 || !strings.Contains(out.String(), ": valid for ") || !strings.Contains(out.String(), p.Name) {
				t.Errorf("policy validate %s: rc %d\n%s%s", path, rc, out.String(), errb.String())
			}
			// policy default prints the file the tree ships
			out.Reset()
			if rc := policyCmd([]string{"default", "--protocol", p.Name}, &out, &errb); rc != 0 || !bytes.Equal(out.Bytes(), text) {
				t.Errorf("policy default --protocol %s: rc %d, not %s (%d bytes, want %d)", p.Name, rc, path, out.Len(), len(text))
			}
		})
	}
}

// MySQL's default policy names MySQL's objects (event): PostgreSQL's
// dialect refuses it, and fwctl says so while validating it for MySQL;
// with --protocol postgres it is an error, with --json the protocols that
// accept it are listed.
func TestPolicyValidateChoosesProtocol(t *testing.T) {
	my := shippedPolicies["mysql"]
	var out, errb bytes.Buffer
	if rc := policyCmd([]string{"validate", my}, &out, &errb); rc != 0 ||
		!strings.Contains(out.String(), "valid for mysql (") || !strings.Contains(out.String(), `not for postgres: `) || !strings.Contains(out.String(), `"event"`) {
		t.Errorf("validate %s: rc %d\n%s%s", my, rc, out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if rc := policyCmd([]string{"validate", "--protocol", "postgres", my}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), `unknown postgresql object type "event"`) {
		t.Errorf("validate --protocol postgres %s: rc %d\n%s%s", my, rc, out.String(), errb.String())
	}
	out.Reset()
	cur.json = true
	defer func() { cur.json = false }()
	rc := policyCmd([]string{"validate", my}, &out, &errb)
	var v validJSON
	if err := json.Unmarshal(out.Bytes(), &v); rc != 0 || err != nil || !v.Valid || strings.Join(v.Protocols, ",") != "mysql" {
		t.Errorf("--json validate %s: rc %d, %+v, %v", my, rc, v, err)
	}
	out.Reset()
	if rc := policyCmd([]string{"validate", "--protocol", "oracle", my}, &out, &errb); rc != 2 {
		t.Errorf("--protocol oracle: rc %d", rc)
	}
	cur.json = false
	out.Reset()
	if rc := policyCmd([]string{"default", "--protocol", "oracle"}, &out, &errb); rc != 2 {
		t.Errorf("default --protocol oracle: rc %d", rc)
	}
	// a policy no protocol accepts names each one's objection
	dir := t.TempDir()
	none := filepath.Join(dir, "none.yaml")
	os.WriteFile(none, []byte("rules:\n  - {id: a, action: deny, match: {objects: [event]}}\n  - {id: b, action: deny, match: {objects: [foreign_table]}}\n"), 0o644)
	errb.Reset()
	if rc := policyCmd([]string{"validate", none}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "no protocol accepts it: postgres: ") || !strings.Contains(errb.String(), "; mysql: ") {
		t.Errorf("validate a policy for none: rc %d\n%s", rc, errb.String())
	}
}

// The deploy/ examples: each configuration validates with the real table,
// and the Kubernetes ConfigMap's policy validates for the protocol of the
// database that names it (--config).
func TestDeployExamplesValidate(t *testing.T) {
	var out, errb bytes.Buffer
	if rc := configCmd([]string{"validate", "../../deploy/sqlfwd.yaml"}, &out, &errb); rc != 0 {
		t.Errorf("config validate deploy/sqlfwd.yaml: rc %d\n%s%s", rc, out.String(), errb.String())
	}
	b, err := os.ReadFile("../../deploy/kubernetes/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil || cm.Data["sqlfwd.yaml"] == "" || cm.Data["policy.yaml"] == "" {
		t.Fatalf("configmap: %v, keys %d", err, len(cm.Data))
	}
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	cfg := filepath.Join(dir, "sqlfwd.yaml")
	if !strings.Contains(cm.Data["sqlfwd.yaml"], "/etc/sqlfw/policy.yaml") {
		t.Fatal("the ConfigMap's configuration no longer names /etc/sqlfw/policy.yaml")
	}
	os.WriteFile(pol, []byte(cm.Data["policy.yaml"]), 0o644)
	// pod_listen differs per node: the DaemonSet passes --pod-listen
	text := strings.ReplaceAll(cm.Data["sqlfwd.yaml"], "/etc/sqlfw/policy.yaml", pol)
	if !strings.Contains(text, "\n  pods: true") {
		t.Fatal("the ConfigMap's configuration no longer sets intercept.pods")
	}
	text = strings.Replace(text, "\n  pods: true", "\n  pods: true\n  pod_listen: 10.244.0.1:15432", 1)
	os.WriteFile(cfg, []byte(text), 0o644)
	out.Reset()
	if rc := configCmd([]string{"validate", cfg}, &out, &errb); rc != 0 {
		t.Errorf("config validate (the ConfigMap's): rc %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	if rc := policyCmd([]string{"validate", "--config", cfg, pol}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "valid for postgres (") {
		t.Errorf("policy validate --config (the ConfigMap's): rc %d\n%s%s", rc, out.String(), errb.String())
	}
	// --config for a policy no database of it names is an error
	errb.Reset()
	if rc := policyCmd([]string{"validate", "--config", cfg, shippedPolicies["mysql"]}, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "no database's policy is") {
		t.Errorf("--config, a policy it does not name: rc %d\n%s", rc, errb.String())
	}
	// and a MySQL database's policy takes MySQL's dialect from the configuration
	my := filepath.Join(dir, "my.yaml")
	os.WriteFile(my, []byte("databases:\n  - {name: shop, protocol: mysql, listen: '127.0.0.1:3307', upstream: '127.0.0.1:3306', policy: "+shippedPolicies["mysql"]+"}\n"), 0o644)
	out.Reset()
	if rc := policyCmd([]string{"validate", "--config", my, shippedPolicies["mysql"]}, &out, &errb); rc != 0 || !strings.Contains(out.String(), "valid for mysql (") {
		t.Errorf("policy validate --config (mysql): rc %d\n%s%s", rc, out.String(), errb.String())
	}
	out.Reset()
	if rc := configCmd([]string{"validate", my}, &out, &errb); rc != 0 {
		t.Errorf("config validate (a mysql database with MySQL's default policy): rc %d\n%s%s", rc, out.String(), errb.String())
	}
}

// check takes the protocol from --protocol, a log, or the one protocol
// that accepts --policy: MySQL's default policy judges with MySQL's
// dialect without --protocol (`x` is MySQL's quoting, "x" a string there).
func TestCheckChoosesProtocol(t *testing.T) {
	my := shippedPolicies["mysql"]
	dir := t.TempDir()
	// a policy both protocols accept, and a MySQL database that uses it
	generic, cfg := filepath.Join(dir, "generic.yaml"), filepath.Join(dir, "sqlfwd.yaml")
	os.WriteFile(generic, []byte("rules:\n  - {id: no-unfiltered-writes, action: deny, reason: every row, match: {kind: [update, delete], without_where: true}}\n"), 0o644)
	os.WriteFile(cfg, []byte("databases:\n  - {name: shop, protocol: mysql, listen: '127.0.0.1:3307', upstream: '127.0.0.1:3306', policy: "+generic+"}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"--policy", my, "DELETE FROM `orders`"}, 1, "rule:       no-unfiltered-writes"},
		{[]string{"--policy", my, "--sql-mode", "ANSI_QUOTES", "SELECT 1"}, 0, "verdict:    allow"},
		{[]string{"--policy", my, "--standard-conforming-strings", "off", "SELECT 1"}, 2, "not a setting of protocol mysql (it is for --protocol postgres)"},
		{[]string{"--protocol", "postgres", "--sql-mode", "ANSI_QUOTES", "SELECT 1"}, 2, "not a setting of protocol postgres (it is for --protocol mysql)"},
		{[]string{"--protocol", "postgres", "--policy", my, "SELECT 1"}, 2, `unknown postgresql object type "event"`},
		{[]string{"--protocol", "mysql", "--pg-log", "x.log"}, 2, "--pg-log is a log of protocol postgres"},
		{[]string{"--protocol", "mysql", "--client-encoding", "gbk", "SELECT 1"}, 0, "verdict:    allow"},
		{[]string{"--client-encoding", "nonesuch", "SELECT 1"}, 2, `client_encoding: "nonesuch" is not an encoding PostgreSQL knows`},
		// the configuration's database that uses the policy says mysql:
		// `x` is a quoted name there, "x" a string, so this is a plain
		// DELETE without WHERE
		{[]string{"--config", "CONFIG", "--policy", "GENERIC", "DELETE FROM `t`"}, 1, "rule:       no-unfiltered-writes"},
		{[]string{"--config", "CONFIG", "SELECT 1"}, 2, "give --policy too"},
		{[]string{"--config", "CONFIG", "--policy", my, "SELECT 1"}, 2, "no database's policy is"},
	} {
		for i, a := range tc.args {
			tc.args[i] = strings.NewReplacer("CONFIG", cfg, "GENERIC", generic).Replace(a)
		}
		var out, errb bytes.Buffer
		rc := check(tc.args, &out, &errb)
		if rc != tc.rc || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("check %q: rc %d\n%s%s\nwant rc %d and %q", tc.args, rc, out.String(), errb.String(), tc.rc, tc.want)
		}
	}
}

// learn offline on each protocol's server log fingerprints with that
// protocol's dialect; the fragment it prints is a policy the protocol
// accepts (fwctl policy validate --protocol), and fwctl check with it
// allows each learned statement by a learned rule.
func TestLearnOfflineFromLogs(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		protocol, flag, log string
		stmts               []string // statements of the log, as check judges them
		otherLiteral        string   // one of them with other literals: the same shape
		user, database      string   // of the session that sent otherLiteral's
	}{
		{"mysql", "--mysql-log", myLogMariaDB,
			[]string{"create database if not exists logt", "select\n  2", "delete from orders where id = ?", "delete from t"},
			"delete from orders where id = 99", "app", "shop"},
		{"postgres", "--pg-log", learnPGLog,
			[]string{"SELECT name FROM items WHERE id = 1", "UPDATE items SET name = 'x' WHERE id = 2"},
			"SELECT name FROM items WHERE id = 42", "shop", "app"},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			log := filepath.Join(dir, tc.protocol+".log")
			os.WriteFile(log, []byte(tc.log), 0o644)
			var out, errb bytes.Buffer
			if rc := learn([]string{"offline", tc.flag, log}, &out, &errb); rc != 0 || !strings.Contains(errb.String(), "("+tc.protocol+")") {
				t.Fatalf("learn offline %s: rc %d\n%s%s", tc.flag, rc, out.String(), errb.String())
			}
			frag := filepath.Join(dir, tc.protocol+"-learned.yaml")
			os.WriteFile(frag, out.Bytes(), 0o644)
			var vout, verr bytes.Buffer
			if rc := policyCmd([]string{"validate", "--protocol", tc.protocol, frag}, &vout, &verr); rc != 0 {
				t.Fatalf("policy validate --protocol %s of the learned fragment: rc %d\n%s%s\n%s", tc.protocol, rc, vout.String(), verr.String(), out.String())
			}
			// the learned rules decide the learned statements, per the
			// log's user and database, each an allow
			stmts, err := readItems("", "", map[string]string{"--pg-log": log}[tc.flag], map[string]string{"--mysql-log": log}[tc.flag])
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, st := range stmts {
				got = append(got, st.SQL)
				judgeLearned(t, tc.protocol, frag, st.User, st.Database, st.SQL)
			}
			if strings.Join(got, "|") != strings.Join(tc.stmts, "|") {
				t.Errorf("the log's statements %q, want %q", got, tc.stmts)
			}
			judgeLearned(t, tc.protocol, frag, tc.user, tc.database, tc.otherLiteral)
			// and a statement of a shape it never saw is no learned rule's
			var cout, cerr bytes.Buffer
			check([]string{"--protocol", tc.protocol, "--policy", frag, "--json", "--user", tc.user, "--database", tc.database, "SELECT secret FROM vault"}, &cout, &cerr)
			if strings.Contains(cout.String(), engine.LearnedRulePrefix) {
				t.Errorf("an unseen statement matched a learned rule: %s", cout.String())
			}
		})
	}
	// a log read as another protocol's is refused, not fingerprinted
	var out, errb bytes.Buffer
	if rc := learn([]string{"offline", "--protocol", "postgres", "--mysql-log", filepath.Join(dir, "mysql.log")}, &out, &errb); rc != 2 {
		t.Errorf("learn offline --protocol postgres --mysql-log: rc %d", rc)
	}
}

// judgeLearned checks that the policy at frag allows sql, in user's
// session in database, by a learned rule.
func judgeLearned(t *testing.T, proto, frag, user, database, sql string) {
	t.Helper()
	var out, errb bytes.Buffer
	rc := check([]string{"--protocol", proto, "--policy", frag, "--json", "--user", user, "--database", database, sql}, &out, &errb)
	var v struct {
		Action string `json:"action"`
		Rule   string `json:"rule"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); rc != 0 || err != nil || v.Action != "allow" || !strings.HasPrefix(v.Rule, engine.LearnedRulePrefix) {
		t.Errorf("check %q as %s@%s with the learned policy: rc %d, %s%s; want an allow by a learned rule", sql, user, database, rc, out.String(), errb.String())
	}
}

// A PostgreSQL server log (log_line_prefix '%m [%p] user=%u,db=%d ').
const learnPGLog = "2026-12-02 08:00:00.000 UTC [10] user=shop,db=app LOG:  statement: SELECT name FROM items WHERE id = 1\n" +
	"2026-12-02 08:00:00.100 UTC [10] user=shop,db=app LOG:  statement: UPDATE items SET name = 'x' WHERE id = 2\n"
