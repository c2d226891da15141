package mysql

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseBulk(t *testing.T) {
	ll := []byte{TypeLongLong, 0}
	str := []byte{TypeVarString, 0}
	one := []byte{IndicatorNone, 1, 0, 0, 0, 0, 0, 0, 0}
	head := func(flags byte, rest ...byte) []byte {
		return append([]byte{ComStmtBulkExecute, 7, 0, 0, 0, flags, 0}, rest...)
	}
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, tc := range []struct {
		name   string
		p      []byte
		params int
		bound  []byte
		rows   int // -1: malformed
	}{
		{"one row", head(0x80, cat(ll, one)...), 1, nil, 1},
		{"two rows, NULL second", head(0x80, cat(ll, one, []byte{IndicatorNull})...), 1, nil, 2},
		{"DEFAULT and IGNORE", head(0x80, cat(ll, ll, []byte{IndicatorDefault, IndicatorIgnore})...), 2, nil, 1},
		{"a string row", head(0x80, cat(str, []byte{IndicatorNone, 2, 'a', 'b'})...), 1, nil, 1},
		{"types bound before", head(0, one...), 1, ll, 1},
		{"no types, none bound", head(0, one...), 1, nil, -1},
		{"types cut short", head(0x80, TypeLongLong), 1, nil, -1},
		{"no rows", head(0x80, ll...), 1, nil, -1},
		{"a value cut short", head(0x80, cat(ll, one[:5])...), 1, nil, -1},
		{"a row cut short", head(0x80, cat(ll, ll, one)...), 2, nil, -1},
		{"an unknown indicator", head(0x80, cat(ll, []byte{4})...), 1, nil, -1},
		{"a string longer than the packet", head(0x80, cat(str, []byte{IndicatorNone, 9, 'a'})...), 1, nil, -1},
		{"no parameters", head(0x80), 0, nil, -1},
		{"not a bulk command", []byte{ComStmtExecute, 7, 0, 0, 0, 0x80, 0}, 1, nil, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bk, err := ParseBulk(tc.p, tc.params, tc.bound)
			if tc.rows < 0 {
				if err == nil {
					t.Fatalf("ParseBulk(% x): no error, want one", tc.p)
				}
				return
			}
			if err != nil || bk.Rows != tc.rows {
				t.Fatalf("ParseBulk(% x): %d rows, %v; want %d rows", tc.p, bk.Rows, err, tc.rows)
			}
			n := 0
			bk.Each(func(r BulkRow) bool {
				for i := 0; i < r.Len(); i++ {
					r.Param(i)
				}
				n++
				return true
			})
			if n != tc.rows {
				t.Errorf("Each gave %d rows, want %d", n, tc.rows)
			}
		})
	}
	bk, _ := ParseBulk(head(0x80, cat(ll, str, []byte{IndicatorNull, IndicatorNone, 1, 'x'}, one, []byte{IndicatorDefault})...), 2, nil)
	var got []string
	bk.Each(func(r BulkRow) bool {
		for i := 0; i < 2; i++ {
			typ, _, v, null, def := r.Param(i)
			switch {
			case null:
				got = append(got, "NULL")
			case def:
				got = append(got, "DEFAULT")
			case typ == TypeLongLong:
				got = append(got, string('0'+v[0]))
			default:
				got = append(got, string(v[1:]))
			}
		}
		return true
	})
	if want := "NULL x 1 DEFAULT"; strings.Join(got, " ") != want {
		t.Errorf("rows: %q, want %q", strings.Join(got, " "), want)
	}
}

// FuzzParseBulk: no block panics the reader or its rows.
func FuzzParseBulk(f *testing.F) {
	f.Add([]byte{ComStmtBulkExecute, 7, 0, 0, 0, 0x80, 0, TypeLongLong, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}, 1)
	f.Add([]byte{ComStmtBulkExecute, 7, 0, 0, 0, 0x80, 0, TypeVarString, 0, TypeLong, 0x80, 0, 3, 'a', 'b', 'c', 1}, 2)
	f.Fuzz(func(t *testing.T, p []byte, params int) {
		if params < 0 || params > 64 {
			return
		}
		bk, err := ParseBulk(p, params, nil)
		if err != nil {
			return
		}
		bk.Each(func(r BulkRow) bool {
			for i := -1; i <= r.Len(); i++ {
				r.Param(i)
			}
			return true
		})
	})
}
