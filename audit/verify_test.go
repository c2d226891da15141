package audit

import (
	"strings"
	"testing"
)

func TestParseAnchorsFormats(t *testing.T) {
	head := strings.Repeat("ab", 32)
	in := `time=2026-12-01T10:00:00Z level=INFO msg="audit chain head" seq=7 chain=sha256 head=` + head + "\n" +
		`{"time":"2026-12-01T10:00:01Z","level":"INFO","msg":"audit chain head","seq":9,"chain":"sha256","head":"` + head + `"}` + "\n" +
		`level=INFO msg="audit chain head" seq=11 sha256=` + head + "\n" +
		"level=INFO msg=other seq=3\n"
	a, err := ParseAnchors(strings.NewReader(in))
	if err != nil || len(a) != 3 || a[0].Seq != 7 || a[1].Seq != 9 || a[2].Seq != 11 || a[1].Line != 2 {
		t.Fatalf("got %+v, %v", a, err)
	}
	if _, err := ParseAnchors(strings.NewReader(`msg="audit chain head" seq=x` + "\n")); err == nil {
		t.Error("a malformed anchor line was accepted")
	}
}
