package pg

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sqlfw/sqlfw/engine"
)

func paramStatus(name, value string) []byte {
	b, _ := (&pgproto3.ParameterStatus{Name: name, Value: value}).Encode(nil)
	return b
}

// TestLexTracker plays a session's messages through the tracker: the state
// is unconfirmed until every message that may execute has its
// ReadyForQuery, and then it is what the server reported.
func TestLexTracker(t *testing.T) {
	var tr lexTracker
	tr.init()
	want := func(step string, st engine.LexState) {
		t.Helper()
		if got := tr.state(); got != st {
			t.Fatalf("%s: state %+v, want %+v", step, got, st)
		}
	}
	want("before startup ends", engine.LexState{Unconfirmed: true})
	tr.parameterStatus(paramStatus("client_encoding", "SJIS"))
	tr.parameterStatus(paramStatus("standard_conforming_strings", "on"))
	tr.parameterStatus(paramStatus("application_name", "x"))
	tr.readyForQuery() // startup
	want("after startup", engine.LexState{ClientEncoding: "SJIS"})

	// Query 1: SET standard_conforming_strings = off, pipelined with Query 2.
	tr.sent(0)
	want("query 2, sent before query 1's answer", engine.LexState{ClientEncoding: "SJIS", Unconfirmed: true})
	tr.sent(1)
	tr.parameterStatus(paramStatus("standard_conforming_strings", "off"))
	tr.readyForQuery() // query 1
	want("after query 1, query 2 outstanding", engine.LexState{ClientEncoding: "SJIS", NonStandardStrings: true, Unconfirmed: true})
	tr.readyForQuery() // query 2
	want("after query 2", engine.LexState{ClientEncoding: "SJIS", NonStandardStrings: true})

	// Extended protocol: Parse, Bind, Execute, Parse, Sync; the second
	// Parse is lexed after the Execute ran.
	want("first parse", engine.LexState{ClientEncoding: "SJIS", NonStandardStrings: true})
	tr.sent(2) // Bind
	tr.sent(2) // Execute
	want("second parse, same batch", engine.LexState{ClientEncoding: "SJIS", NonStandardStrings: true, Unconfirmed: true})
	tr.parameterStatus(paramStatus("client_encoding", "UTF8"))
	tr.readyForQuery() // the Sync
	want("after the sync", engine.LexState{ClientEncoding: "UTF8", NonStandardStrings: true})

	// A malformed report changes nothing.
	tr.parameterStatus([]byte{'S', 0, 0, 0, 5, 'x'})
	want("after a malformed report", engine.LexState{ClientEncoding: "UTF8", NonStandardStrings: true})
}
