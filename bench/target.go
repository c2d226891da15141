package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A Target is one way to reach the database: directly, through sqlfwd,
// through HAProxy. One line of config each:
//
//	name addr [key=value ...]
//	direct  127.0.0.1:5432 version="PostgreSQL 15.18" pause_pidfile=/tmp/pg/data/postmaster.pid
//	sqlfwd  127.0.0.1:6432 start="exec bin/sqlfwd --listen ..." cpu_cgroup=/sys/fs/cgroup/cpu/b
//	haproxy 127.0.0.1:7432 start="exec haproxy -db -f /tmp/h.cfg" version="HAProxy 2.6"
//
// Values with spaces are double-quoted Go strings. Keys:
//
//	version        free text recorded in the results
//	start          shell command the harness runs (and owns) before the run;
//	               it must stay in the foreground ("exec daemon ..."), the
//	               harness waits until addr accepts connections
//	stop           shell command run after the run; without it the harness
//	               sends SIGTERM to the process group it started
//	cpu_pidfile    read CPU use from /proc/PID/stat of the pid in this file
//	cpu_cgroup     read CPU use and throttling from this cgroup v1 cpu dir
//	cpu_acct       its cpuacct dir, when cpuacct is mounted separately
//	pause_pidfile  the server to pause for the generator self-check
//	sslmode        the clients' sslmode for this target (libpq's
//	               names: disable, require, verify-ca, verify-full; the
//	               default is disable)
//	sslrootcert    the CA file verify-ca and verify-full check against
//
// The target named "direct" is the baseline every other one is compared to.
// Without a cpu_* key, a target the harness starts is measured by the pid
// of its start command.
type Target struct {
	Name, Addr, Version   string
	Start, Stop           string
	CPUPIDFile, CPUCgroup string
	CPUAcct               string
	PausePIDFile          string
	SSLMode, SSLRootCert  string

	cmd *exec.Cmd
}

// Baseline is the name of the target every other one is compared to.
const Baseline = "direct"

// ParseTargets reads target lines; blank lines and # comments are skipped.
func ParseTargets(r io.Reader) ([]*Target, error) {
	var out []*Target
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		t, err := parseTargetLine(line)
		if err != nil {
			return nil, fmt.Errorf("targets line %d: %w", n, err)
		}
		if seen[t.Name] {
			return nil, fmt.Errorf("targets line %d: duplicate target %q", n, t.Name)
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !seen[Baseline] {
		return nil, fmt.Errorf("targets: no target named %q (the baseline)", Baseline)
	}
	return out, nil
}

func parseTargetLine(line string) (*Target, error) {
	toks, err := splitTokens(line)
	if err != nil {
		return nil, err
	}
	if len(toks) < 2 {
		return nil, errors.New("want: name addr [key=value ...]")
	}
	t := &Target{Name: toks[0], Addr: toks[1]}
	if _, _, err := net.SplitHostPort(t.Addr); err != nil {
		return nil, fmt.Errorf("address %q: %w", t.Addr, err)
	}
	for _, kv := range toks[2:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value", kv)
		}
		switch k {
		case "version":
			t.Version = v
		case "start":
			t.Start = v
		case "stop":
			t.Stop = v
		case "cpu_pidfile":
			t.CPUPIDFile = v
		case "cpu_cgroup":
			t.CPUCgroup = v
		case "cpu_acct":
			t.CPUAcct = v
		case "pause_pidfile":
			t.PausePIDFile = v
		case "sslmode":
			switch v {
			case "disable", "allow", "prefer", "require", "verify-ca", "verify-full":
			default:
				return nil, fmt.Errorf("sslmode %q: want one of libpq's (disable, require, verify-ca, verify-full, …)", v)
			}
			t.SSLMode = v
		case "sslrootcert":
			t.SSLRootCert = v
		default:
			return nil, fmt.Errorf("unknown key %q", k)
		}
	}
	return t, nil
}

// splitTokens splits on spaces; key="quoted value" keeps its spaces.
func splitTokens(s string) ([]string, error) {
	var out []string
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return out, nil
		}
		var tok strings.Builder
		for s != "" && s[0] != ' ' && s[0] != '\t' {
			if s[0] == '"' {
				q, err := strconv.QuotedPrefix(s)
				if err != nil {
					return nil, fmt.Errorf("bad quoted value: %w", err)
				}
				v, _ := strconv.Unquote(q)
				tok.WriteString(v)
				s = s[len(q):]
				continue
			}
			tok.WriteByte(s[0])
			s = s[1:]
		}
		out = append(out, tok.String())
	}
}

// Owned reports whether the harness starts this target.
func (t *Target) Owned() bool { return t.Start != "" }

// Up starts an owned target and waits (at most timeout) for its address to
// accept connections; for other targets it only checks the address.
func (t *Target) Up(ctx context.Context, logw io.Writer, timeout time.Duration) error {
	if t.Start != "" && t.cmd == nil {
		cmd := exec.Command("sh", "-c", t.Start)
		cmd.Stdout, cmd.Stderr = logw, logw
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("starting target %s: %w", t.Name, err)
		}
		t.cmd = cmd
	}
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", t.Addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("target %s at %s not accepting connections: %w", t.Name, t.Addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Down stops what Up started: the stop command if there is one, then
// SIGTERM (and after 5 s SIGKILL) to the process group the harness created.
func (t *Target) Down(logw io.Writer) error {
	var first error
	if t.Stop != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		cmd := exec.CommandContext(ctx, "sh", "-c", t.Stop)
		cmd.Stdout, cmd.Stderr = logw, logw
		first = cmd.Run()
		cancel()
	}
	if t.cmd == nil {
		return first
	}
	pgid := t.cmd.Process.Pid
	done := make(chan struct{})
	go func() { t.cmd.Wait(); close(done) }()
	syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-done
	}
	t.cmd = nil
	return first
}

// Meter returns the target's CPU meter, or nil when it has none.
func (t *Target) Meter(proc string) (CPUMeter, string, error) {
	switch {
	case t.CPUCgroup != "":
		return CgroupV1CPU{Dir: t.CPUCgroup, AcctDir: t.CPUAcct}, "cgroup " + t.CPUCgroup, nil
	case t.CPUPIDFile != "":
		pid, err := ReadPIDFile(t.CPUPIDFile)
		if err != nil {
			return nil, "", fmt.Errorf("target %s cpu_pidfile: %w", t.Name, err)
		}
		return ProcCPU{Proc: proc, PID: pid}, "pid " + strconv.Itoa(pid), nil
	case t.cmd != nil:
		return ProcCPU{Proc: proc, PID: t.cmd.Process.Pid}, "pid " + strconv.Itoa(t.cmd.Process.Pid), nil
	}
	return nil, "", nil
}

// Pauser returns the self-check pauser of the target's server, if any.
func (t *Target) Pauser(proc string) (Pauser, error) {
	if t.PausePIDFile == "" {
		return nil, nil
	}
	pid, err := ReadPIDFile(t.PausePIDFile)
	if err != nil {
		return nil, fmt.Errorf("target %s pause_pidfile: %w", t.Name, err)
	}
	if _, err := os.Stat(fmt.Sprintf("%s/%d", proc, pid)); err != nil {
		return nil, fmt.Errorf("target %s: server pid %d not running", t.Name, pid)
	}
	return &ProcessPauser{Proc: proc, PID: pid}, nil
}
