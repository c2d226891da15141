package pg

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	wire "github.com/sqlfw/sqlfw/wire/pg"
)

// BenchmarkSessionExtendedInsert* measure a bulk INSERT through the daemon
// as the open-loop benchmark's insert-1000 sends it (Parse of the unnamed
// statement, Bind, Execute, Sync), its text new on every call (the first
// row's id changes): a shape hit in the engine, and the relay's framing of
// a message of 30 KB (under the framer's 32 KiB buffer) and of 90 KB (over
// it). Nothing here asserts a timing.
func BenchmarkSessionExtendedInsert1000(b *testing.B) { benchInsert(b, 1000) }
func BenchmarkSessionExtendedInsert3000(b *testing.B) { benchInsert(b, 3000) }

func benchInsert(b *testing.B, rows int) {
	res := cannedResult(0)
	fs := newFakeServer(b, res)
	_, addr := startProxy(b, fs.Addr(), modeEnforce)
	rc := dialRaw(b, addr)
	rc.Startup()
	_ = rc.Conn.SetDeadline(time.Time{})
	var sb strings.Builder
	sb.WriteString("INSERT INTO bench_ins (a, b, c) VALUES ")
	for i := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "(%d, %d, 'row-%d')", 100000+i, 700000+i*7, 10000+i)
	}
	sql := "INSERT INTO bench_ins (a, b, c) VALUES (1000000000" + sb.String()[len("INSERT INTO bench_ins (a, b, c) VALUES (100000"):]
	msg := wire.AppendParse(nil, "", sql)
	at := 5 + 1 + len("INSERT INTO bench_ins (a, b, c) VALUES (") // type, length, the unnamed name's NUL
	msg = wire.AppendBind(msg, "", "")
	msg = wire.AppendExecute(msg, "")
	msg = append(msg, 'S', 0, 0, 0, 4)
	reply := 5 + 5 + len(res) // ParseComplete, BindComplete, the result with its ReadyForQuery
	buf := make([]byte, reply)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		strconv.AppendInt(msg[at:at], 1_000_000_000+int64(i%1_000_000_000), 10)
		if _, err := rc.Conn.Write(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(rc.Conn, buf); err != nil {
			b.Fatal(err)
		}
		if buf[0] != wire.MsgParseComplete {
			b.Fatalf("reply %q", buf[:min(len(buf), 64)])
		}
	}
}
