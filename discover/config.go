package discover

// A server's own account of where it listens: its command line
// (/proc/PID/cmdline, readable by every user) and the configuration files
// it reads, where sqlfwd can read them. MariaDB/MySQL: --port/-P and
// --socket/-S, then my.cnf's server groups ([client-server], [server],
// [mysqld], [mariadb], [mariadbd] and their versioned forms) in
// /etc/my.cnf and /etc/mysql/my.cnf with their !include and !includedir
// (unless --no-defaults; --defaults-file replaces them,
// --defaults-extra-file adds one). PostgreSQL: -p, -k and -c name=value
// (or --name=value), then config_file or DATADIR/postgresql.conf with
// include, include_if_exists and include_dir. Where a source that exists
// cannot be read, the account is incomplete and the built-in defaults
// (Debian's: 3306 and /run/mysqld/mysqld.sock, 5432 and
// /var/run/postgresql) are not assumed.

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// serverConfig is where a server's configuration says it listens.
type serverConfig struct {
	ports   []uint16
	sockets []string
	// complete: every source was read (the defaults were applied)
	complete bool
}

func (c serverConfig) hasPort(p uint16) bool   { return slices.Contains(c.ports, p) }
func (c serverConfig) hasSocket(s string) bool { return slices.Contains(c.sockets, filepath.Clean(s)) }

// Debian's built-in defaults.
const (
	mysqlDefaultPort   = 3306
	mysqlDefaultSocket = "/run/mysqld/mysqld.sock"
	pgDefaultPort      = 5432
	pgDefaultSocketDir = "/var/run/postgresql"
)

func readServerConfig(procRoot string, pid int, proto Protocol) serverConfig {
	b, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return serverConfig{}
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	switch proto {
	case MySQL:
		return mysqlConfig(args[1:])
	case Postgres:
		return pgConfig(args[1:])
	}
	return serverConfig{}
}

// optArgs walks argv: for each option it calls f with the option's name
// (dashes kept, "=value" cut) and its value (the "=value", the rest of a
// short option, or the next argument when takesArg says so).
func optArgs(args []string, takesArg func(name string) bool, f func(name, value string)) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, eq := strings.Cut(a, "=")
		if !strings.HasPrefix(a, "--") && strings.HasPrefix(a, "-") && len(a) > 2 {
			name, value, eq = a[:2], a[2:], true
		}
		if !eq && takesArg(name) && i+1 < len(args) {
			i++
			value = args[i]
		}
		f(name, value)
	}
}

func mysqlConfig(args []string) serverConfig {
	var port, socket string
	noDefaults := false
	files := []string{"/etc/my.cnf", "/etc/mysql/my.cnf"}
	var extra []string
	norm := func(n string) string {
		n = strings.ReplaceAll(strings.TrimPrefix(n, "--"), "_", "-")
		return strings.TrimPrefix(n, "loose-")
	}
	optArgs(args, func(n string) bool {
		return n == "-P" || n == "-S" || norm(n) == "port" || norm(n) == "socket"
	}, func(name, value string) {
		switch {
		case name == "-P" || norm(name) == "port":
			port = value
		case name == "-S" || norm(name) == "socket":
			socket = value
		case norm(name) == "no-defaults":
			noDefaults = true
		case norm(name) == "defaults-file":
			files = []string{value}
		case norm(name) == "defaults-extra-file":
			extra = append(extra, value)
		}
	})
	complete := true
	if !noDefaults {
		var cport, csocket string
		r := &cnfReader{seen: map[string]bool{}}
		for _, f := range append(files, extra...) {
			r.read(f, func(group, key, value string) {
				if !mysqlServerGroup(group) {
					return
				}
				switch strings.ReplaceAll(key, "_", "-") {
				case "port":
					cport = value
				case "socket":
					csocket = value
				}
			})
		}
		complete = !r.incomplete
		if port == "" {
			port = cport
		}
		if socket == "" {
			socket = csocket
		}
	}
	var c serverConfig
	if n, err := strconv.ParseUint(port, 10, 16); err == nil && n > 0 {
		c.ports = []uint16{uint16(n)}
	} else if port == "" && complete {
		c.ports = []uint16{mysqlDefaultPort}
	}
	if socket != "" {
		c.sockets = []string{filepath.Clean(socket)}
	} else if complete {
		c.sockets = []string{mysqlDefaultSocket}
	}
	c.complete = complete
	return c
}

// mysqlServerGroup: the option groups mariadbd reads.
func mysqlServerGroup(g string) bool {
	switch g {
	case "client-server", "server", "mysqld", "mariadb", "mariadbd":
		return true
	}
	for _, p := range []string{"mysqld-", "mariadb-", "mariadbd-"} {
		if rest, ok := strings.CutPrefix(g, p); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			return true
		}
	}
	return false
}

// cnfReader reads my.cnf files with their includes; incomplete records a
// file that exists but could not be read.
type cnfReader struct {
	seen       map[string]bool
	incomplete bool
}

func (r *cnfReader) read(path string, f func(group, key, value string)) {
	if r.seen[path] || len(r.seen) > 64 {
		return
	}
	r.seen[path] = true
	b, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.incomplete = true
		}
		return
	}
	group := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case strings.HasPrefix(line, "!includedir"):
			dir := strings.TrimSpace(strings.TrimPrefix(line, "!includedir"))
			ents, err := os.ReadDir(dir)
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					r.incomplete = true
				}
				continue
			}
			for _, e := range ents { // sorted by name, as the server reads them
				if n := e.Name(); strings.HasSuffix(n, ".cnf") {
					r.read(filepath.Join(dir, n), f)
				}
			}
		case strings.HasPrefix(line, "!include"):
			r.read(strings.TrimSpace(strings.TrimPrefix(line, "!include")), f)
		case line[0] == '[':
			group = strings.ToLower(strings.TrimSpace(strings.Trim(line, "[]")))
		default:
			k, v, _ := strings.Cut(line, "=")
			if i := strings.Index(v, " #"); i >= 0 {
				v = v[:i]
			}
			f(group, strings.ToLower(strings.TrimSpace(k)), unquote(strings.TrimSpace(v)))
		}
	}
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}

func pgConfig(args []string) serverConfig {
	set := map[string]string{}
	dataDir := ""
	optArgs(args, func(n string) bool {
		return n == "-p" || n == "-k" || n == "-c" || n == "-D"
	}, func(name, value string) {
		switch {
		case name == "-p":
			set["port"] = value
		case name == "-k":
			set["unix_socket_directories"] = value
		case name == "-D":
			dataDir = value
		case name == "-c" || strings.HasPrefix(name, "--"):
			k, v, ok := strings.Cut(value, "=")
			if strings.HasPrefix(name, "--") {
				k, v, ok = strings.TrimPrefix(name, "--"), value, true
			}
			if ok {
				set[strings.ToLower(strings.ReplaceAll(k, "-", "_"))] = v
			}
		}
	})
	file := set["config_file"]
	if file == "" && dataDir != "" {
		file = filepath.Join(dataDir, "postgresql.conf")
	}
	complete := false
	conf := map[string]string{}
	if file != "" {
		r := &pgConfReader{}
		r.read(file, conf, true)
		complete = !r.incomplete
	}
	for k, v := range set {
		conf[k] = v
	}
	var c serverConfig
	port, hasPort := conf["port"]
	n, err := strconv.ParseUint(port, 10, 16)
	switch {
	case hasPort && err == nil && n > 0:
		c.ports = []uint16{uint16(n)}
	case !hasPort && complete:
		c.ports = []uint16{pgDefaultPort}
	}
	dirs, hasDirs := conf["unix_socket_directories"]
	if !hasDirs && complete {
		dirs, hasDirs = pgDefaultSocketDir, true
	}
	if hasDirs {
		for _, d := range strings.Split(dirs, ",") {
			d = strings.TrimSpace(d)
			if d == "" || d[0] == '@' {
				continue
			}
			for _, p := range c.ports {
				c.sockets = append(c.sockets, filepath.Join(d, ".s.PGSQL."+strconv.Itoa(int(p))))
			}
		}
	}
	sort.Strings(c.sockets)
	c.complete = complete
	return c
}

// pgConfReader reads postgresql.conf with its includes.
type pgConfReader struct {
	depth      int
	incomplete bool
}

func (r *pgConfReader) read(path string, into map[string]string, must bool) {
	if r.depth > 10 {
		return
	}
	r.depth++
	defer func() { r.depth-- }()
	b, err := os.ReadFile(path)
	if err != nil {
		if must || !errors.Is(err, fs.ErrNotExist) {
			r.incomplete = true
		}
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := pgConfLine(sc.Text())
		if !ok {
			continue
		}
		rel := func(p string) string {
			if filepath.IsAbs(p) {
				return p
			}
			return filepath.Join(filepath.Dir(path), p)
		}
		switch k {
		case "include":
			r.read(rel(v), into, true)
		case "include_if_exists":
			r.read(rel(v), into, false)
		case "include_dir":
			dir := rel(v)
			ents, err := os.ReadDir(dir)
			if err != nil {
				r.incomplete = true
				continue
			}
			for _, e := range ents {
				if n := e.Name(); strings.HasSuffix(n, ".conf") && !strings.HasPrefix(n, ".") {
					r.read(filepath.Join(dir, n), into, true)
				}
			}
		default:
			into[k] = v
		}
	}
}

// pgConfLine reads "name = value # comment" (the = is optional; a value
// may be single-quoted with ” for a quote).
func pgConfLine(line string) (string, string, bool) {
	line = strings.TrimSpace(line)
	if line == "" || line[0] == '#' {
		return "", "", false
	}
	i := strings.IndexFunc(line, func(r rune) bool { return r == ' ' || r == '\t' || r == '=' })
	if i <= 0 {
		return "", "", false
	}
	k := strings.ToLower(line[:i])
	rest := strings.TrimLeft(line[i:], " \t")
	rest = strings.TrimLeft(strings.TrimPrefix(rest, "="), " \t")
	if strings.HasPrefix(rest, "'") {
		var v strings.Builder
		for j := 1; j < len(rest); j++ {
			if rest[j] == '\'' {
				if j+1 < len(rest) && rest[j+1] == '\'' {
					v.WriteByte('\'')
					j++
					continue
				}
				return k, v.String(), true
			}
			v.WriteByte(rest[j])
		}
		return k, v.String(), true
	}
	if j := strings.IndexAny(rest, " \t#"); j >= 0 {
		rest = rest[:j]
	}
	return k, rest, true
}
