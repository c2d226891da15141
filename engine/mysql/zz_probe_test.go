package mysql

import (
	"bufio"
	"fmt"
	"os"
	"testing"

	"github.com/sqlfw/sqlfw/engine"
)

func TestZZProbe(t *testing.T) {
	in := os.Getenv("ZZIN")
	if in == "" {
		in = "/tmp/syntax-probe/in.sql"
	}
	f, _ := os.Open(in)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if os.Getenv("ZZNUL") != "" {
		sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
			for i, c := range data {
				if c == 0 {
					return i + 1, data[:i], nil
				}
			}
			if atEOF && len(data) > 0 {
				return len(data), data, nil
			}
			return 0, nil, nil
		})
	}
	for sc.Scan() {
		s := sc.Text()
		tf := analyze(s, engine.LexStats{})
		ok := "OK  "
		if tf.ParseError {
			ok = "FAIL"
		}
		d := ""
		for _, st := range tf.Stmts {
			d += fmt.Sprintf(" [%v %v %s k=%b eff=%v tabs=%v unf=%b]", st.Kind, st.Verb, st.Object, st.Kinds, st.Effects, st.Tables, st.Unfiltered)
		}
		if os.Getenv("ZZV") == "" {
			d = ""
		}
		t.Logf("%s %q%s", ok, s, d)
	}
}
