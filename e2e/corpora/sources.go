package corpora

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Payload is one attack input from a public corpus.
type Payload struct {
	Text   string
	Source string // corpus name: sqlmap, wfuzz, libinjection, crs, patt
	File   string // the file in the corpus it comes from
}

// found is a payload text and the file it came from.
type found struct{ text, file string }

func foundIn(file string, texts []string) []found {
	out := make([]found, len(texts))
	for i, t := range texts {
		out[i] = found{t, file}
	}
	return out
}

// Sources names where the corpora are on this machine; an empty field
// leaves that corpus out.
type Sources struct {
	Sqlmap       string // sqlmap's data/xml directory (Debian: /usr/share/sqlmap/data/xml)
	Wfuzz        string // wfuzz's wordlist directory (Debian: /usr/share/wfuzz/wordlist)
	Libinjection string // a checkout of github.com/client9/libinjection
	CRS          string // a checkout of github.com/coreruleset/coreruleset
	PATT         string // a checkout of github.com/swisskyrepo/PayloadsAllTheThings
	Dict         string // a word list, one word a line (Debian wamerican: /usr/share/dict/american-english)
}

// Names lists the corpora s uses, for the report.
func (s Sources) Names() []string {
	var out []string
	for _, p := range [][2]string{{"sqlmap", s.Sqlmap}, {"wfuzz", s.Wfuzz}, {"libinjection", s.Libinjection}, {"crs", s.CRS}, {"patt", s.PATT}, {"dict", s.Dict}} {
		if p[1] != "" {
			out = append(out, p[0]+"="+p[1])
		}
	}
	return out
}

// Load reads every payload and benign input of the corpora s names,
// deduplicated and in a fixed order. A named corpus that yields nothing is
// an error: a moved file must not silently shrink the measure.
func Load(s Sources) (payloads []Payload, benign []string, err error) {
	seen := map[string]bool{}
	addP := func(src string, fs []found) {
		for _, f := range fs {
			t := strings.TrimRight(f.text, "\r\n")
			if strings.TrimSpace(t) == "" || len(t) > 4000 || seen[t] {
				continue
			}
			seen[t] = true
			payloads = append(payloads, Payload{t, src, f.file})
		}
	}
	type loader struct {
		name, dir string
		f         func(string) ([]found, []string, error)
	}
	for _, ld := range []loader{
		{"sqlmap", s.Sqlmap, loadSqlmap},
		{"wfuzz", s.Wfuzz, loadWfuzz},
		{"libinjection", s.Libinjection, loadLibinjection},
		{"crs", s.CRS, loadCRS},
		{"patt", s.PATT, loadPATT},
	} {
		if ld.dir == "" {
			continue
		}
		p, b, err := ld.f(ld.dir)
		if err != nil {
			return nil, nil, fmt.Errorf("%s (%s): %w", ld.name, ld.dir, err)
		}
		if len(p) == 0 {
			return nil, nil, fmt.Errorf("%s (%s): no payloads found", ld.name, ld.dir)
		}
		addP(ld.name, p)
		benign = append(benign, b...)
	}
	if s.Dict != "" {
		b, err := dictBenign(s.Dict)
		if err != nil {
			return nil, nil, err
		}
		benign = append(benign, b...)
	}
	benign = append(benign, generatedBenign()...)
	bs := map[string]bool{}
	out := benign[:0]
	for _, b := range benign {
		if strings.TrimSpace(b) != "" && !bs[b] && len(b) <= 500 {
			bs[b] = true
			out = append(out, b)
		}
	}
	return payloads, out, nil
}

// lines returns a file's non-empty lines that do not start with '#'
// (hash: whether '#' lines are comments in this corpus).
func lines(path string, hash bool) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		t := sc.Text()
		if strings.TrimSpace(t) == "" || (hash && strings.HasPrefix(t, "#")) {
			continue
		}
		out = append(out, t)
	}
	return out, sc.Err()
}

// loadWfuzz reads Injections/SQL.txt.
func loadWfuzz(dir string) ([]found, []string, error) {
	p, err := lines(filepath.Join(dir, "Injections", "SQL.txt"), false)
	return foundIn("Injections/SQL.txt", p), nil, err
}

// loadLibinjection reads data/sqli-*.txt (URL-encoded user input, '#'
// comments) as payloads and data/false_positives.txt as benign inputs.
func loadLibinjection(dir string) ([]found, []string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "data", "sqli-*.txt"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	var p []found
	var b []string
	for _, f := range files {
		ls, err := lines(f, true)
		if err != nil {
			return nil, nil, err
		}
		for _, l := range ls {
			p = append(p, found{unescapeQuery(l), filepath.Base(f)})
		}
	}
	if ls, err := lines(filepath.Join(dir, "data", "false_positives.txt"), true); err == nil {
		for _, l := range ls {
			b = append(b, unescapeQuery(l))
		}
	}
	return p, b, nil
}

func unescapeQuery(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// loadPATT reads the payload lists of "SQL Injection/Intruder" (one a line).
func loadPATT(dir string) ([]found, []string, error) {
	ents, err := os.ReadDir(filepath.Join(dir, "SQL Injection", "Intruder"))
	if err != nil {
		return nil, nil, err
	}
	var p []found
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		ls, err := lines(filepath.Join(dir, "SQL Injection", "Intruder", e.Name()), false)
		if err != nil {
			return nil, nil, err
		}
		p = append(p, foundIn(e.Name(), ls)...)
	}
	return p, nil, nil
}

// loadCRS reads the REQUEST-942 (SQL injection) regression tests: the
// parameter values of each test's body and query string. A test that
// expects a 942 rule to match gives payloads; one that expects none
// (no_expect_ids) gives benign inputs.
func loadCRS(dir string) ([]found, []string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "tests", "regression", "tests", "REQUEST-942-*", "*.yaml"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	type stage struct {
		Input struct {
			URI  string `yaml:"uri"`
			Data any    `yaml:"data"`
		} `yaml:"input"`
		Output struct {
			Log struct {
				Expect   []int `yaml:"expect_ids"`
				NoExpect []int `yaml:"no_expect_ids"`
			} `yaml:"log"`
		} `yaml:"output"`
	}
	var doc struct {
		Tests []struct {
			Stages []stage `yaml:"stages"`
		} `yaml:"tests"`
	}
	var p []found
	var b []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		doc.Tests = nil
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, t := range doc.Tests {
			for _, st := range t.Stages {
				var vals []string
				if i := strings.IndexByte(st.Input.URI, '?'); i >= 0 {
					vals = append(vals, formValues(st.Input.URI[i+1:])...)
				}
				switch d := st.Input.Data.(type) {
				case string:
					vals = append(vals, formValues(d)...)
				case []any:
					var parts []string
					for _, x := range d {
						parts = append(parts, fmt.Sprint(x))
					}
					vals = append(vals, formValues(strings.Join(parts, "\n"))...)
				}
				switch {
				case len(st.Output.Log.Expect) > 0:
					p = append(p, foundIn(filepath.Base(f), vals)...)
				case len(st.Output.Log.NoExpect) > 0:
					b = append(b, vals...)
				}
			}
		}
	}
	return p, b, nil
}

// formValues returns the values of an application/x-www-form-urlencoded
// string (a part without '=' is a value), decoded.
func formValues(s string) []string {
	var out []string
	for _, part := range strings.Split(strings.TrimSpace(s), "&") {
		if part == "" {
			continue
		}
		if i := strings.IndexByte(part, '='); i >= 0 {
			part = part[i+1:]
		}
		out = append(out, unescapeQuery(part))
	}
	return out
}

// sqlmap's payload files: each test's detection payload and its
// extraction vector, placed after each boundary's prefix and before its
// suffix as sqlmap sends them (value, prefix, payload, comment, suffix).
type sqlmapTest struct {
	Title   string `xml:"title"`
	Level   int    `xml:"level"`
	Clause  string `xml:"clause"`
	Vector  string `xml:"vector"`
	Request struct {
		Payload string `xml:"payload"`
		Comment string `xml:"comment"`
		Char    string `xml:"char"`
		Columns string `xml:"columns"`
	} `xml:"request"`
	Details struct {
		DBMS []string `xml:"dbms"`
	} `xml:"details"`
}

type sqlmapBoundary struct {
	Level  int    `xml:"level"`
	Clause string `xml:"clause"`
	PType  int    `xml:"ptype"`
	Prefix string `xml:"prefix"`
	Suffix string `xml:"suffix"`
}

// sqlmapMaxLevel bounds tests and boundaries as sqlmap's --level does.
const sqlmapMaxLevel = 3

func loadSqlmap(dir string) ([]found, []string, error) {
	var bs struct {
		B []sqlmapBoundary `xml:"boundary"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "boundaries.xml"))
	if err != nil {
		return nil, nil, err
	}
	if err := xml.Unmarshal(raw, &bs); err != nil {
		return nil, nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "payloads", "*.xml"))
	if err != nil {
		return nil, nil, err
	}
	sort.Strings(files)
	var out []found
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		var ts struct {
			T []sqlmapTest `xml:"test"`
		}
		if err := xml.Unmarshal(raw, &ts); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", f, err)
		}
		for _, t := range ts.T {
			if t.Level > sqlmapMaxLevel || !sqlmapForUs(t.Details.DBMS) {
				continue
			}
			var bodies []string
			if t.Request.Columns != "" {
				bodies = unionBodies(t.Request.Char)
			} else {
				bodies = []string{t.Request.Payload}
				if t.Vector != t.Request.Payload {
					bodies = append(bodies, t.Vector)
				}
			}
			for _, b := range bs.B {
				if b.Level > sqlmapMaxLevel || (b.PType != 1 && b.PType != 2 && b.PType != 6) || !clausesMeet(t.Clause, b.Clause) {
					continue
				}
				for _, body := range bodies {
					if strings.TrimSpace(body) == "" {
						continue
					}
					v := "1" + b.Prefix + " " + body
					if t.Request.Comment != "" {
						v += t.Request.Comment
					}
					v += b.Suffix
					out = append(out, found{sqlmapFill(v), "payloads/" + filepath.Base(f)})
				}
			}
		}
	}
	return out, nil, nil
}

// sqlmapForUs keeps tests for MySQL, PostgreSQL or any DBMS.
func sqlmapForUs(dbms []string) bool {
	if len(dbms) == 0 {
		return true
	}
	for _, d := range dbms {
		if d == "MySQL" || d == "PostgreSQL" {
			return true
		}
	}
	return false
}

// clausesMeet reports whether two of sqlmap's clause lists share one (0
// is "always").
func clausesMeet(a, b string) bool {
	as := strings.Split(a, ",")
	for _, x := range strings.Split(b, ",") {
		x = strings.TrimSpace(x)
		for _, y := range as {
			y = strings.TrimSpace(y)
			if x == y || x == "0" || y == "0" {
				return true
			}
		}
	}
	return false
}

// unionBodies are sqlmap's UNION query forms for one to three columns and
// the two-column forms its extraction sends (a delimited value of the
// secrets table, of the server's user and version).
func unionBodies(char string) []string {
	if char == "" || char == "[CHAR]" {
		char = "NULL"
	}
	var out []string
	cols := []string{}
	for n := 1; n <= 3; n++ {
		cols = append(cols, char)
		out = append(out, "UNION ALL SELECT "+strings.Join(cols, ","))
	}
	for _, v := range []string{"value FROM secrets", "version()", "current_user", "user()", "database()"} {
		expr, from := v, ""
		if i := strings.Index(v, " FROM "); i >= 0 {
			expr, from = v[:i], v[i:]
		}
		out = append(out, "UNION ALL SELECT CONCAT('[DELIMITER_START]',"+expr+",'[DELIMITER_STOP]'),NULL"+from)
	}
	return out
}

// sqlmapFill replaces sqlmap's template markers with values of the kind
// sqlmap puts there.
func sqlmapFill(s string) string {
	r := strings.NewReplacer(
		"[RANDNUM]", "4817", "[RANDNUM1]", "5290", "[RANDNUM2]", "6104", "[RANDNUM3]", "7321", "[RANDNUM4]", "8436", "[RANDNUM5]", "9552",
		"[RANDSTR]", "qzvj", "[RANDSTR1]", "hwpk", "[RANDSTR2]", "tsnx",
		"[SLEEPTIME]", "5", "[DELAYED]", "5",
		"[INFERENCE]", "ASCII(SUBSTRING((SELECT value FROM secrets LIMIT 1),1,1))>64",
		"[QUERY]", "SELECT value FROM secrets LIMIT 1",
		"[DELIMITER_START]", "qkvxq", "[DELIMITER_STOP]", "qpzbq",
		"[ORIGVALUE]", "1", "[ORIGINAL]", "1",
		"[GENERIC_SQL_COMMENT]", "-- -", "[CHAR]", "NULL",
		"[SPACE_REPLACE]", " ", "[DOLLAR_REPLACE]", "$", "[AT_REPLACE]", "@", "[HASH_REPLACE]", "#",
		"[UNION]", "UNION ALL SELECT NULL",
	)
	return r.Replace(s)
}

// dictBenign takes every 60th word of a word list and the words with an
// apostrophe (every 20th), capitalised words as names.
func dictBenign(path string) ([]string, error) {
	ws, err := lines(path, false)
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("%s: no words", path)
	}
	var out []string
	apos := 0
	for i, w := range ws {
		switch {
		case strings.Contains(w, "'"):
			if apos%20 == 0 {
				out = append(out, w)
			}
			apos++
		case i%60 == 0:
			out = append(out, w)
		}
	}
	// Two-word names and short phrases with quotes, from the same list.
	for i := 0; i+7 < len(ws) && len(out) < 4000; i += 97 {
		a, b, c := ws[i], ws[i+3], ws[i+7]
		switch (i / 97) % 6 {
		case 0:
			out = append(out, strings.Title(a)+" "+strings.Title(b)) //nolint:staticcheck // ASCII words
		case 1:
			out = append(out, a+"."+b+"@example.com")
		case 2:
			out = append(out, "the "+a+"'s "+b+" -- and "+c)
		case 3:
			out = append(out, `"`+a+`" or "`+b+`"`)
		case 4:
			out = append(out, a+" & "+b+"; "+c+"!")
		case 5:
			out = append(out, "I'd like "+a+", not "+b+" (or "+c+")")
		}
	}
	return out, nil
}

// generatedBenign are numbers, dates, names with apostrophes and free text
// that real forms carry, built without any corpus.
func generatedBenign() []string {
	var out []string
	for _, n := range []string{"0", "1", "7", "42", "100", "2024", "65535", "4294967296", "-1", "-17", "3.14", "0.5", "1e3", "007", "12345678901234"} {
		out = append(out, n)
	}
	for i := 1; i <= 300; i += 7 {
		out = append(out, fmt.Sprint(i*37))
	}
	months := []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	for i := 0; i < 60; i++ {
		d, m, y := i%28+1, i%12+1, 1990+i
		out = append(out, fmt.Sprintf("%04d-%02d-%02d", y, m, d), fmt.Sprintf("%02d/%02d/%04d", d, m, y),
			fmt.Sprintf("%s %d, %d", months[m-1], d, y), fmt.Sprintf("%04d-%02d-%02d %02d:%02d:00", y, m, d, i%24, i%60))
	}
	for _, s := range []string{
		"O'Brien", "O'Neil", "D'Angelo", "Mary-Jane", "Jean-Luc Picard", "Zoë", "José Álvarez", "Nguyễn", "Müller",
		"don't", "it's", "rock 'n' roll", "5 o'clock", "the '90s", "he said \"hello\"", "a 'quoted' word",
		"select your plan", "Order by phone", "drop us a line", "Union Street 5", "Insert coin", "update me",
		"Delete my account please", "and/or", "1 or 2", "null", "none", "true", "false", "N/A", "-", "--", "#1 fan",
		"50% off", "C:\\Users\\me", "back\\slash", "a;b;c", "semi;colon", "x = y", "1=1 is maths", "me@example.org",
		"first.last+tag@mail.example.com", "https://example.com/?q=a&b=c", "+44 20 7946 0958", "(555) 123-4567",
		"SW1A 1AA", "10115 Berlin", "P.O. Box 42", "What's up?", "Ain't no sunshine", "Rock & Roll", "AT&T",
		"100% cotton", "size: 10\"", "6'2\"", "#hashtag", "/* not a comment */", "-- just dashes", "C++", "C#",
		"I'm here; are you?", "Tom's Diner", "Let's go!", "L'Oréal", "Shaquille O'Neal", "Sinéad O'Connor",
	} {
		out = append(out, s)
	}
	return out
}
