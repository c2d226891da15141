package corpora

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoad reads a small tree of each corpus's layout (written here, not
// copied from any corpus) and checks what comes out of each.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(path, body string) {
		t.Helper()
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("li/data/sqli-x.txt", "# comment\n1%27+OR+%271%27%3D%271\n\n")
	write("li/data/false_positives.txt", "# c\nO%27Reilly\n")
	write("crs/tests/regression/tests/REQUEST-942-APPLICATION-ATTACK-SQLI/942100.yaml", `
tests:
  - test_id: 1
    stages:
      - input:
          uri: "/get?a=1%20UNION%20SELECT%201&b=x"
          data: "var=2 AND 1=1"
        output:
          log:
            expect_ids: [942100]
  - test_id: 2
    stages:
      - input:
          data: "var=Sam's%20shop"
        output:
          log:
            no_expect_ids: [942100]
`)
	write("patt/SQL Injection/Intruder/list.txt", "' OR 1=1 -- \n")
	write("wf/Injections/SQL.txt", "a' or 'a'='a\n")
	write("sm/boundaries.xml", `<root>
<boundary><level>1</level><clause>1</clause><where>1</where><ptype>2</ptype><prefix>'</prefix><suffix> AND '[RANDSTR]'='[RANDSTR]</suffix></boundary>
<boundary><level>5</level><clause>1</clause><where>1</where><ptype>1</ptype><prefix>)</prefix><suffix></suffix></boundary>
</root>`)
	write("sm/payloads/t.xml", `<root>
<test><title>t</title><level>1</level><clause>1</clause><vector>AND [INFERENCE]</vector>
<request><payload>AND [RANDNUM]=[RANDNUM]</payload></request><details><dbms>MySQL</dbms></details></test>
<test><title>oracle</title><level>1</level><clause>1</clause><vector>AND 1=1</vector>
<request><payload>AND 2=2</payload></request><details><dbms>Oracle</dbms></details></test>
</root>`)
	write("dict", "apple\nbanana's\n")
	p, b, err := Load(Sources{Sqlmap: filepath.Join(dir, "sm"), Wfuzz: filepath.Join(dir, "wf"), Libinjection: filepath.Join(dir, "li"),
		CRS: filepath.Join(dir, "crs"), PATT: filepath.Join(dir, "patt"), Dict: filepath.Join(dir, "dict")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range p {
		got = append(got, x.Source+": "+x.Text+" ("+x.File+")")
	}
	want := []string{
		"sqlmap: 1' AND 4817=4817 AND 'qzvj'='qzvj (payloads/t.xml)",
		"sqlmap: 1' AND ASCII(SUBSTRING((SELECT value FROM secrets LIMIT 1),1,1))>64 AND 'qzvj'='qzvj (payloads/t.xml)",
		"wfuzz: a' or 'a'='a (Injections/SQL.txt)",
		"libinjection: 1' OR '1'='1 (sqli-x.txt)",
		"crs: 1 UNION SELECT 1 (942100.yaml)",
		"crs: x (942100.yaml)",
		"crs: 2 AND 1=1 (942100.yaml)",
		"patt: ' OR 1=1 --  (list.txt)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("payloads:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	has := map[string]bool{}
	for _, x := range b {
		has[x] = true
	}
	for _, w := range []string{"O'Reilly", "Sam's shop", "apple", "banana's", "O'Brien"} {
		if !has[w] {
			t.Errorf("benign inputs lack %q", w)
		}
	}
	// A corpus named but empty is an error, not a smaller measure.
	write("empty/Injections/SQL.txt", "\n")
	if _, _, err := Load(Sources{Wfuzz: filepath.Join(dir, "empty")}); err == nil {
		t.Error("an empty corpus loaded without an error")
	}
}
