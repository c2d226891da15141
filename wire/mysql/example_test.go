package mysql_test

import (
	"bytes"
	"fmt"

	"github.com/sqlfw/sqlfw/wire/mysql"
)

// A relay's server leg: frame the response to a command with the Framer,
// look only at the packets the Response wants, forward everything, and stop
// when the response is complete.
func ExampleResponse() {
	// what MariaDB answers to "select 1" under CLIENT_DEPRECATE_EOF
	var server []byte
	seq := 1
	for _, p := range [][]byte{
		{1}, // one column
		append([]byte{3}, "def\x00\x00\x00\x011\x00\x0c\x3f\x00\x01\x00\x00\x00\x08\x81\x00\x00\x00\x00"...),
		{1, '1'},                 // the row
		{0xfe, 0, 0, 2, 0, 0, 0}, // OK: end of the result set, autocommit
	} {
		server, seq = mysql.AppendPacket(server, seq, p)
	}

	caps := mysql.CapProtocol41 | mysql.CapDeprecateEOF | mysql.CapTransactions
	fr := mysql.NewFramer(bytes.NewReader(server), 0, 0, 0)
	fr.SetWantLong(false)
	r := mysql.NewResponse(caps)
	r.Begin(mysql.ComQuery)
	fr.Expect(1) // the command was sequence id 0
	var client bytes.Buffer
	seen := 0
	for !r.Done() {
		if err := fr.Fill(); err != nil {
			fmt.Println(err)
			return
		}
		for !r.Done() {
			m, err := fr.Next(r.Want())
			if err != nil || m == nil {
				break
			}
			seen++
			r.Feed(m)
			client.Write(fr.TakeBefore(m))
			client.Write(m)
		}
		client.Write(fr.Take())
	}
	fmt.Println("complete:", r.Done(), "packets looked at:", seen, "forwarded whole:", bytes.Equal(client.Bytes(), server))

	// A blocked command is answered with an ERR that continues its ids.
	var reply []byte
	reply = mysql.AppendErr(reply, 1, 1142, "42000", "sqlfw: statement denied by rule no-delete")
	e, _ := mysql.ParseErr(mysql.FirstFragment(reply))
	fmt.Printf("ERR %d #%s %s (sequence id %d)\n", e.Code, e.SQLState, e.Message, mysql.Seq(reply))
	// Output:
	// complete: true packets looked at: 2 forwarded whole: true
	// ERR 1142 #42000 sqlfw: statement denied by rule no-delete (sequence id 1)
}
