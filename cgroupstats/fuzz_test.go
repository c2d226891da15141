package cgroupstats

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParsers feeds every file of the fixture trees to every parser: none
// may panic, whatever the input.
func FuzzParsers(f *testing.F) {
	err := filepath.WalkDir("testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(path, "fuzz") {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil {
			f.Add(string(b))
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ParseCPUStat(strings.NewReader(in))
		NrThrottled([]byte(in))
		parseCPUMax(strings.NewReader(in))
		parseCFSQuota(strings.NewReader(in))
		parseSingleUint(strings.NewReader(in))
		parsePressure(strings.NewReader(in))
		parseSchedstat(strings.NewReader(in))
		Locate(strings.NewReader(in), strings.NewReader(in), "/")
		unescapeMount(in)
	})
}
