package corpora

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/sqlfw/sqlfw/engine"
	mydialect "github.com/sqlfw/sqlfw/engine/mysql"
	"github.com/sqlfw/sqlfw/engine/pgsql"
)

// sourcesFromEnv names the corpora: SQLFW_CORPORA_<NAME> for each, else
// the Debian packages' paths when they are installed (sqlmap, wfuzz,
// wamerican). SQLFW_CORPORA_<NAME>=none leaves one out.
func sourcesFromEnv() Sources {
	pick := func(env, def string) string {
		v, ok := os.LookupEnv(env)
		switch {
		case v == "none":
			return ""
		case ok && v != "":
			return v
		}
		if def != "" {
			if _, err := os.Stat(def); err == nil {
				return def
			}
		}
		return ""
	}
	return Sources{
		Sqlmap:       pick("SQLFW_CORPORA_SQLMAP", "/usr/share/sqlmap/data/xml"),
		Wfuzz:        pick("SQLFW_CORPORA_WFUZZ", "/usr/share/wfuzz/wordlist"),
		Libinjection: pick("SQLFW_CORPORA_LIBINJECTION", ""),
		CRS:          pick("SQLFW_CORPORA_CRS", ""),
		PATT:         pick("SQLFW_CORPORA_PATT", ""),
		Dict:         pick("SQLFW_CORPORA_DICT", "/usr/share/dict/american-english"),
	}
}

// TestCorpora is the measure (make corpora; scripts/corpora.sh). It needs
// the servers scripts/test.sh starts (SQLFW_PG_*, SQLFW_MY_*) and the
// corpora (sourcesFromEnv). It fails on any false positive, and on a block
// rate below the floor testdata/floors.tsv records for the corpora used.
// SQLFW_CORPORA_OUT=FILE writes the report's tables there and FILE.tsv
// every injection's verdict.
func TestCorpora(t *testing.T) {
	src := sourcesFromEnv()
	if src.Sqlmap == "" && src.Wfuzz == "" && src.Libinjection == "" && src.CRS == "" && src.PATT == "" {
		t.Skip("no corpus found: run scripts/deps.sh (sqlmap, wfuzz) or set SQLFW_CORPORA_*")
	}
	if src.Dict == "" {
		t.Fatal("no word list for the benign inputs: run scripts/deps.sh (wamerican) or set SQLFW_CORPORA_DICT")
	}
	payloads, benign, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("corpora: %s: %d payloads, %d benign inputs", strings.Join(src.Names(), " "), len(payloads), len(benign))
	ctx := context.Background()
	// The two servers are measured at the same time.
	type outcome struct {
		r   *Result
		err error
	}
	var pgOut, myOut chan outcome
	if os.Getenv("SQLFW_PG_PORT") != "" {
		pgOut = make(chan outcome, 1)
		go func() { r, err := measurePG(ctx, t, payloads, benign); pgOut <- outcome{r, err} }()
	} else {
		t.Log("SQLFW_PG_PORT not set: PostgreSQL left out")
	}
	if os.Getenv("SQLFW_MY_PORT") != "" {
		myOut = make(chan outcome, 1)
		go func() { r, err := measureMy(ctx, t, payloads, benign); myOut <- outcome{r, err} }()
	} else {
		t.Log("SQLFW_MY_PORT not set: MariaDB left out")
	}
	var rs []*Result
	for _, ch := range []chan outcome{pgOut, myOut} {
		if ch == nil {
			continue
		}
		o := <-ch
		if o.err != nil {
			t.Fatal(o.err)
		}
		rs = append(rs, o.r)
	}
	if len(rs) == 0 {
		t.Skip("no server: run through scripts/test.sh or scripts/corpora.sh")
	}

	var sb strings.Builder
	Report(&sb, rs, 25)
	t.Log("\n" + sb.String())
	if out := os.Getenv("SQLFW_CORPORA_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(out + ".tsv")
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		WriteTSV(w, rs)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}

	for _, r := range rs {
		if len(r.Benign) < 2000 {
			t.Errorf("%s: only %d benign statements judged (want at least 2000)", r.Protocol, len(r.Benign))
		}
		for _, c := range r.FalsePositives() {
			t.Errorf("%s: false positive in slot %s, rule %s: %q", r.Protocol, c.Slot, c.RuleID, c.Payload)
		}
		if r.BenignUnparsed > 0 {
			t.Errorf("%s: %d benign statements the server does not parse (the placement is wrong)", r.Protocol, r.BenignUnparsed)
		}
	}
	checkFloors(t, src, rs)
	if out := os.Getenv("SQLFW_CORPORA_FLOORS"); out != "" {
		if err := os.WriteFile(out, []byte(floorLines(src, rs)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// floorLines are floors.tsv lines for the rates of rs: each measured rate
// less one case or one point, whichever is more, so that one payload
// judged differently under a loaded server does not fail the test.
func floorLines(src Sources, rs []*Result) string {
	set := corporaSet(src)
	var b strings.Builder
	line := func(proto, table, key string, t Tally) {
		if t.Total == 0 {
			return
		}
		slack := 100 / float64(t.Total)
		if slack < 1 {
			slack = 1
		}
		min := t.Rate() - slack
		if min < 0 {
			min = 0
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%.1f\n", set, proto, table, key, float64(int(min*10))/10)
	}
	for _, r := range rs {
		fmt.Fprintf(&b, "%s\t%s\tkept\tall\t%d\n", set, r.Protocol, r.Kept*9/10)
		line(r.Protocol, "total", "all", r.Total())
		shapes := r.By(func(c Case) string { return c.Shape })
		for _, k := range ShapeOrder {
			if t := shapes[k]; t != nil {
				line(r.Protocol, "shape", k, *t)
			}
		}
		slots := r.By(func(c Case) string { return c.Slot })
		for _, s := range Slots {
			if t := slots[s.Name]; t != nil {
				line(r.Protocol, "slot", s.Name, *t)
			}
		}
	}
	return b.String()
}

// corporaSet is the sorted names of the corpora src uses.
func corporaSet(src Sources) string {
	var names []string
	for _, n := range src.Names() {
		names = append(names, strings.SplitN(n, "=", 2)[0])
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// measurePG measures on the PostgreSQL of SQLFW_PG_*.
func measurePG(ctx context.Context, t *testing.T, payloads []Payload, benign []string) (*Result, error) {
	host := os.Getenv("SQLFW_PG_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	user := os.Getenv("SQLFW_PG_USER")
	if user == "" {
		user = "postgres"
	}
	conn := fmt.Sprintf("host=%s port=%s user=%s dbname=postgres sslmode=disable", host, os.Getenv("SQLFW_PG_PORT"), user)
	p, err := NewPGParser(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer p.Close()
	var version string
	if err := p.c.QueryRow(ctx, "SHOW server_version").Scan(&version); err != nil {
		return nil, err
	}
	eng, err := engine.New(pgsql.DefaultPolicy(), pgsql.Dialect, engine.Options{})
	if err != nil {
		return nil, err
	}
	srvs, err := connections(ctx, p, 2)
	if err != nil {
		return nil, err
	}
	defer closeAll(srvs[1:])
	start := time.Now()
	r, err := Measure(ctx, "postgres", srvs, eng, &engine.Session{User: "app", Database: Database, Application: "app"}, payloads, benign)
	if err != nil {
		return nil, err
	}
	t.Logf("postgres: measured in %v", time.Since(start).Round(time.Second))
	r.Server = "PostgreSQL " + strings.Fields(version)[0]
	return r, nil
}

// measureMy measures on the MariaDB of SQLFW_MY_*.
func measureMy(ctx context.Context, t *testing.T, payloads []Payload, benign []string) (*Result, error) {
	cfg := gomysql.NewConfig()
	cfg.User, cfg.Net = os.Getenv("SQLFW_MY_USER"), "tcp"
	if cfg.User == "" {
		cfg.User = "root"
	}
	host := os.Getenv("SQLFW_MY_HOST")
	if host == "" {
		host = "127.0.0.1"
	}
	cfg.Addr = net.JoinHostPort(host, os.Getenv("SQLFW_MY_PORT"))
	p, err := NewMyParser(ctx, cfg.FormatDSN())
	if err != nil {
		return nil, fmt.Errorf("mysql: %w", err)
	}
	defer p.Close()
	eng, err := engine.New(mydialect.DefaultPolicy(), mydialect.Dialect, engine.Options{})
	if err != nil {
		return nil, err
	}
	sess := &engine.Session{User: "app", Database: Database, Application: "app", Lex: engine.LexState{
		SQLMode: p.SQLMode, ServerVersion: versionID(p.Version), MariaDB: strings.Contains(p.Version, "MariaDB")}}
	srvs, err := connections(ctx, p, 4)
	if err != nil {
		return nil, err
	}
	defer closeAll(srvs[1:])
	start := time.Now()
	r, err := Measure(ctx, "mysql", srvs, eng, sess, payloads, benign)
	if err != nil {
		return nil, err
	}
	t.Logf("mysql: measured in %v", time.Since(start).Round(time.Second))
	slow := 0
	var slowTexts []string
	for _, s := range srvs {
		slow += s.(*MyParser).Slow
		slowTexts = append(slowTexts, s.(*MyParser).SlowTexts...)
	}
	for i, x := range slowTexts {
		if i == 3 {
			t.Logf("mysql: ... %d more slow prepares", len(slowTexts)-i)
			break
		}
		t.Logf("mysql: slow prepare: %.160s", x)
	}
	t.Logf("mysql: %d prepares stopped by max_statement_time or their deadline (counted as accepted)", slow)
	r.Server = "MariaDB " + strings.SplitN(p.Version, "-", 2)[0]
	return r, nil
}

// connections returns p and n-1 more connections like it.
func connections(ctx context.Context, p Parser, n int) ([]Parser, error) {
	out := []Parser{p}
	for len(out) < n {
		q, err := p.Another(ctx)
		if err != nil {
			closeAll(out[1:])
			return nil, err
		}
		out = append(out, q)
	}
	return out, nil
}

func closeAll(ps []Parser) {
	for _, p := range ps {
		p.Close()
	}
}

// checkFloors compares the block rates with testdata/floors.tsv: lines of
// corpora-set, protocol, table (total, shape, slot), key, minimum percent.
// The corpora set is the sorted names of the corpora used ("dict,sqlmap,
// wfuzz"); floors of other sets do not apply. floorLines writes the lines
// from a run (SQLFW_CORPORA_FLOORS=FILE).
func checkFloors(t *testing.T, src Sources, rs []*Result) {
	set := corporaSet(src)
	raw, err := os.ReadFile(filepath.Join("testdata", "floors.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	bad, applied, err := floorViolations(string(raw), set, rs)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("corpora set %q: %d floors checked", set, applied)
}

// floorViolations checks rs against the floors (floors.tsv's text) of the
// corpora set. The "kept" table's floor is a count of injections: a
// measure that keeps far fewer than it did (a broken server check) fails
// rather than showing every rate at 100%.
func floorViolations(floors, set string, rs []*Result) (bad []string, applied int, err error) {
	for i, line := range strings.Split(floors, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			return nil, 0, fmt.Errorf("floors.tsv:%d: want 5 tab-separated fields", i+1)
		}
		if f[0] != set {
			continue
		}
		min, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			return nil, 0, fmt.Errorf("floors.tsv:%d: %v", i+1, err)
		}
		for _, r := range rs {
			if r.Protocol != f[1] {
				continue
			}
			applied++
			var got Tally
			switch f[2] {
			case "kept":
				if float64(r.Kept) < min {
					bad = append(bad, fmt.Sprintf("%s: %d injections kept, fewer than the recorded %.0f", r.Protocol, r.Kept, min))
				}
				continue
			case "total":
				got = r.Total()
			case "shape":
				if p := r.By(func(c Case) string { return c.Shape })[f[3]]; p != nil {
					got = *p
				}
			case "slot":
				if p := r.By(func(c Case) string { return c.Slot })[f[3]]; p != nil {
					got = *p
				}
			default:
				return nil, 0, fmt.Errorf("floors.tsv:%d: unknown table %q", i+1, f[2])
			}
			if got.Rate()+1e-9 < min {
				bad = append(bad, fmt.Sprintf("%s %s %s: blocked %s, below the recorded floor %.1f%%", r.Protocol, f[2], f[3], got, min))
			}
		}
	}
	return bad, applied, nil
}

// versionID numbers a MariaDB version as executable comments do (10.11.6
// is 101106).
func versionID(v string) uint32 {
	var parts [3]uint32
	n := 0
	for _, c := range v {
		switch {
		case c >= '0' && c <= '9':
			parts[n] = parts[n]*10 + uint32(c-'0')
		case c == '.' && n < 2:
			n++
		default:
			return parts[0]*10000 + parts[1]*100 + parts[2]
		}
	}
	return parts[0]*10000 + parts[1]*100 + parts[2]
}
