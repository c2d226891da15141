package daemon

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
)

// ConfigSource is where a daemon's configuration came from, so that a
// reload reads it again: a broken file is refused whole, the keys that can
// change live are applied, the others are named as needing a restart.
type ConfigSource struct {
	// Path of the configuration file.
	Path string
	// Load turns the file's bytes into a normalized configuration, with
	// the command-line settings that override the file applied again.
	Load func([]byte) (*Config, error)
	// Level is the logger's level; log_level changes it live (nil: the
	// level is not changed by a reload).
	Level *slog.LevelVar
	// AbsentAtStart: there was no file at Path when sqlfwd started, so it
	// protects what discovery finds. A file written there since is
	// checked by a reload (a broken one is refused, as any) but in force
	// only after a restart: going from discovery's databases to the
	// file's is not a change a reload makes.
	AbsentAtStart bool
}

// absentNeedsRestart is what a reload says of a file written since a
// start without one.
const absentNeedsRestart = "the whole file (sqlfwd started without it and protects what discovery finds)"

// ReloadResult is what a successful reload changed.
type ReloadResult struct {
	// Applied names the configuration keys changed live, with their new
	// values ("log_level=debug", "databases[pg].mode=monitor"): log_level,
	// max_client_connections, and each configured database's mode, policy
	// (the file) and max_connections.
	Applied []string
	// NeedRestart names the keys whose new value in the file is not in
	// force until sqlfwd restarts.
	NeedRestart []string
}

// String is the reply of fwctl reload.
func (r ReloadResult) String() string {
	s := "reloaded: policies and certificates re-read"
	if len(r.Applied) > 0 {
		s += "; applied: " + strings.Join(r.Applied, ", ")
	}
	if len(r.NeedRestart) > 0 {
		s += "; changed in the file but in force only after a restart of sqlfwd: " + strings.Join(r.NeedRestart, ", ")
	}
	return s
}

// liveKeys are the configuration keys a reload applies (besides the
// contents of the policy, learned-policy and certificate files, which it
// always re-reads).
var liveKeys = map[string]bool{"log_level": true, "mode": true, "policy": true, "max_client_connections": true, "max_connections": true}

// SetConfigSource tells the daemon where its configuration came from;
// initial is the content it was started with (its checksum is the one in
// force). Call it before Start.
func (d *Daemon) SetConfigSource(src ConfigSource, initial []byte) error {
	if src.AbsentAtStart {
		d.src = &src
		none := "" // no file content in force
		d.cfgSum.Store(&none)
		return nil
	}
	c, err := src.Load(initial)
	if err != nil {
		return err
	}
	d.src = &src
	d.inForce = c
	sum := sha256Hex(initial)
	d.cfgSum.Store(&sum)
	return nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// fileSHA256 is the SHA-256 of a file's content, "" when it cannot be read.
func fileSHA256(path string) string {
	if path == "" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return sha256Hex(b)
}

// configDiff compares the configuration in force with the one read from
// the file: the live keys that changed, and the other keys that changed.
// Databases are matched by name; discovered ones are not configured and
// not compared.
func configDiff(old, cur *Config) (live, restart []string) {
	ov, nv := reflect.ValueOf(old).Elem(), reflect.ValueOf(cur).Elem()
	t := ov.Type()
	for i := 0; i < t.NumField(); i++ {
		key := yamlKey(t.Field(i))
		if key == "" || key == "databases" {
			continue
		}
		if !reflect.DeepEqual(ov.Field(i).Interface(), nv.Field(i).Interface()) {
			if liveKeys[key] {
				live = append(live, key)
			} else {
				restart = append(restart, key)
			}
		}
	}
	byName := map[string]*Database{}
	for i := range old.Databases {
		byName[old.Databases[i].Name] = &old.Databases[i]
	}
	seen := map[string]bool{}
	for i := range cur.Databases {
		n := &cur.Databases[i]
		seen[n.Name] = true
		o := byName[n.Name]
		if o == nil {
			restart = append(restart, fmt.Sprintf("databases[%s] (added)", n.Name))
			continue
		}
		ov, nv := reflect.ValueOf(o).Elem(), reflect.ValueOf(n).Elem()
		t := ov.Type()
		for j := 0; j < t.NumField(); j++ {
			key := yamlKey(t.Field(j))
			if key == "" || reflect.DeepEqual(ov.Field(j).Interface(), nv.Field(j).Interface()) {
				continue
			}
			k := fmt.Sprintf("databases[%s].%s", n.Name, key)
			if liveKeys[key] {
				live = append(live, k)
			} else {
				restart = append(restart, k)
			}
		}
	}
	for i := range old.Databases {
		if !seen[old.Databases[i].Name] {
			restart = append(restart, fmt.Sprintf("databases[%s] (removed)", old.Databases[i].Name))
		}
	}
	return live, restart
}

func yamlKey(f reflect.StructField) string {
	tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if tag == "-" || !f.IsExported() {
		return ""
	}
	return tag
}
