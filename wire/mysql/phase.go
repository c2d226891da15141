package mysql

// The response phase. After a command the server answers with one of:
//
//	OK | ERR                                   most commands
//	column-count, column-def…, [EOF], row…, EOF-or-OK | ERR
//	                                           a result set (COM_QUERY, COM_STMT_EXECUTE)
//	LOCAL INFILE request, (client: data…, empty packet), OK | ERR
//	PREPARE_OK, param-def…, [EOF], column-def…, [EOF] | ERR
//	                                           COM_STMT_PREPARE
//	column-def…, EOF-or-OK | ERR               COM_FIELD_LIST
//	row…, EOF-or-OK | ERR                      COM_STMT_FETCH
//	nothing                                    COM_QUIT, COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA
//
// [EOF] is absent under CLIENT_DEPRECATE_EOF, where the result set ends with
// an OK packet whose header is 0xfe. An OK or EOF with
// SERVER_MORE_RESULTS_EXISTS is followed by another result (multi-statements,
// stored procedures). Rows never start with 0xff, and start with 0xfe only
// when their first value is 16 MiB or longer, which makes the packet long: a
// relay therefore needs to look only at 0xfe and 0xff packets inside a
// result set (Want), and at every packet elsewhere.
//
// A COM_STMT_EXECUTE that opens a cursor ends after the column definitions
// with an EOF (or OK) whose status has SERVER_STATUS_CURSOR_EXISTS; its rows
// come with COM_STMT_FETCH. That form is tested from the documentation
// only: go-sql-driver/mysql opens no cursors.

import "fmt"

type phase uint8

const (
	phaseDone      phase = iota
	phaseFirst           // OK, ERR, LOCAL INFILE or a column count
	phaseDefs            // column definitions up to their EOF (no DEPRECATE_EOF)
	phaseRows            // rows up to the EOF-or-OK or ERR that ends them
	phaseFieldList       // column definitions up to EOF-or-OK
	phaseOne             // one packet, whatever it is
	phasePrepare         // PREPARE_OK or ERR
	phasePrepDefs        // the definitions after PREPARE_OK, counted
	phaseInfile          // the client uploads; then the server's OK or ERR
	phaseAuth            // authentication rounds, up to OK or ERR
	phaseBinlog          // binlog events (00 ...) up to EOF or ERR
)

var phaseNames = [...]string{"done", "first", "column definitions", "rows", "field list", "one packet",
	"prepare", "prepare definitions", "local infile", "authentication", "binlog events"}

var (
	wantAll = func() *[256]bool {
		var t [256]bool
		for i := range t {
			t[i] = true
		}
		return &t
	}()
	wantEnds = func() *[256]bool { var t [256]bool; t[HeaderEOF], t[HeaderERR] = true, true; return &t }()
)

// WantAll wants every packet (for the client leg, or a relay that reads
// everything).
var WantAll = wantAll

// Response follows the server's answer to one command at a time, from the
// packets a relay feeds it, and says when it is complete. It is a pure
// state machine: no I/O, no allocation. The zero value is idle; it is not
// safe for concurrent use.
type Response struct {
	caps   Caps
	phase  phase
	cmd    byte
	status uint16
	warn   uint16
	failed bool
	left   int
	prep   PrepareOK
	// results counts the results completed for the current command.
	results int
}

// NewResponse returns a Response for a connection with the negotiated
// capabilities caps (the client's flags; a server honours only those).
func NewResponse(caps Caps) *Response { return &Response{caps: caps} }

// SetCaps changes the capabilities (after the handshake response, or a
// COM_CHANGE_USER).
func (r *Response) SetCaps(caps Caps) { r.caps = caps }

// Begin starts following the response to command cmd, whose packet has
// been sent. It returns false for the commands the server does not answer
// (COM_QUIT, COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA); the Response is then
// done already.
func (r *Response) Begin(cmd byte) bool {
	r.cmd, r.failed, r.results, r.prep = cmd, false, 0, PrepareOK{}
	switch cmd {
	case ComQuit, ComStmtClose, ComStmtSendLongData:
		r.phase = phaseDone
		return false
	case ComQuery, ComStmtExecute, ComStmtBulkExecute, ComProcessInfo:
		r.phase = phaseFirst
	case ComStmtFetch:
		r.phase = phaseRows
	case ComFieldList:
		r.phase = phaseFieldList
	case ComStmtPrepare:
		r.phase = phasePrepare
	case ComChangeUser:
		r.phase = phaseAuth
	case ComBinlogDump, ComBinlogDumpGTID:
		// A replica's dump: events until the EOF of a non-blocking dump
		// (BINLOG_DUMP_NON_BLOCK) or an ERR; a blocking one never ends.
		r.phase = phaseBinlog
	default:
		// OK/ERR (COM_PING, COM_INIT_DB, COM_RESET_CONNECTION, …), EOF/ERR
		// (COM_SET_OPTION, COM_DEBUG), a string (COM_STATISTICS), or the
		// ERR of a command the server does not know.
		r.phase = phaseOne
	}
	return true
}

// BeginAuth starts following the authentication exchange after the
// client's handshake response: auth switches and plugin data up to the
// server's OK or ERR.
func (r *Response) BeginAuth() {
	r.cmd, r.failed, r.results, r.phase = 0, false, 0, phaseAuth
}

// Want returns the packets the Framer must hand over in the current phase
// (Framer.Next(r.Want())). The server leg's Framer should not want long
// packets (SetWantLong(false)).
func (r *Response) Want() *[256]bool {
	switch r.phase {
	case phaseDefs, phaseRows, phaseFieldList:
		return wantEnds
	}
	return wantAll
}

// Done reports whether the response is complete (or none is expected).
func (r *Response) Done() bool { return r.phase == phaseDone }

// Infile reports whether the server asked for a LOCAL INFILE upload: the
// client's data packets (up to an empty one) come next, then the server's
// OK or ERR.
func (r *Response) Infile() bool { return r.phase == phaseInfile }

// Status returns the status flags of the last OK or EOF seen
// (StatusInTrans, StatusAutocommit, …).
func (r *Response) Status() uint16 { return r.status }

// InTransaction reports whether the last status had SERVER_STATUS_IN_TRANS.
func (r *Response) InTransaction() bool { return r.status&StatusInTrans != 0 }

// Failed reports whether the last response ended with an ERR.
func (r *Response) Failed() bool { return r.failed }

// Prepared returns the PREPARE_OK of the last COM_STMT_PREPARE, and false
// when there was none (or it failed).
func (r *Response) Prepared() (PrepareOK, bool) {
	return r.prep, r.cmd == ComStmtPrepare && !r.failed && r.prep.StmtID != 0
}

// Results returns how many results (OK packets or result sets) the
// current command has produced so far.
func (r *Response) Results() int { return r.results }

func (r *Response) unexpected(p []byte) error {
	first := -1
	if len(p) > 0 {
		first = int(p[0])
	}
	return fmt.Errorf("%w: packet 0x%02x unexpected in the %s phase of %s", ErrFrame, first, phaseNames[r.phase], CommandName(r.cmd))
}

// Feed advances the state machine by one logical packet from the server
// (as Framer.Next returned it, headers included) and reports whether the
// response is now complete. A packet that cannot come where it came is an
// error: the relay has lost track and must close the connection.
func (r *Response) Feed(msg []byte) (done bool, err error) {
	if len(msg) < HeaderLen || len(msg) < HeaderLen+le24(msg) {
		return false, fmt.Errorf("%w: short packet", ErrFrame)
	}
	long := le24(msg) == MaxFragment
	p := FirstFragment(msg)
	if len(p) == 0 {
		if r.phase == phaseOne {
			r.phase = phaseDone
			return true, nil
		}
		if r.phase == phasePrepDefs || r.phase == phaseDefs || r.phase == phaseRows || r.phase == phaseFieldList {
			return r.skip()
		}
		return false, r.unexpected(p)
	}
	h := p[0]
	if h == HeaderERR && !long && r.phase != phasePrepDefs {
		return r.err(p)
	}
	switch r.phase {
	case phaseDone:
		return false, r.unexpected(p)
	case phaseFirst, phaseInfile:
		switch {
		case h == HeaderOK:
			return r.ok(p)
		case r.phase == phaseInfile:
			return false, r.unexpected(p)
		case h == HeaderInfile:
			r.phase = phaseInfile
			return false, nil
		}
		if _, _, err := ParseColumnCount(p, r.caps); err != nil {
			return false, err
		}
		if r.caps.Has(CapDeprecateEOF) {
			r.phase = phaseRows
		} else {
			r.phase = phaseDefs
		}
		return false, nil
	case phaseDefs:
		if h != HeaderEOF || long || len(p) >= eofMaxLen {
			return false, nil // a column definition
		}
		e, err := ParseEOF(p)
		if err != nil {
			return false, err
		}
		r.status, r.warn = e.Status, e.Warnings
		if e.Status&StatusCursorExists != 0 {
			// rows come with COM_STMT_FETCH
			r.results++
			r.phase = phaseDone
			return true, nil
		}
		r.phase = phaseRows
		return false, nil
	case phaseRows, phaseFieldList:
		if h != HeaderEOF || long {
			return false, nil // a row or definition
		}
		if err := r.end(p); err != nil {
			return false, err
		}
		if r.phase == phaseRows && r.status&StatusMoreResultsExist != 0 && r.status&StatusCursorExists == 0 {
			r.phase = phaseFirst
			return false, nil
		}
		r.phase = phaseDone
		return true, nil
	case phaseOne:
		switch h {
		case HeaderOK:
			if ok, err := ParseOK(p, r.caps); err == nil {
				r.status, r.warn = ok.Status, ok.Warnings
			}
		case HeaderEOF:
			if len(p) < eofMaxLen {
				_ = r.end(p)
			}
		}
		r.phase = phaseDone
		return true, nil
	case phaseBinlog:
		switch {
		case h == HeaderOK || long:
			return false, nil // an event
		case h == HeaderEOF && len(p) < eofMaxLen:
			r.phase = phaseDone
			return true, nil
		}
		return false, r.unexpected(p)
	case phasePrepare:
		if h != HeaderOK {
			return false, r.unexpected(p)
		}
		ok, err := ParsePrepareOK(p, r.caps)
		if err != nil {
			return false, err
		}
		r.prep, r.warn = ok, ok.Warnings
		r.left = 0
		if ok.Metadata {
			r.left = int(ok.Params) + int(ok.Columns)
		}
		if !r.caps.Has(CapDeprecateEOF) {
			if ok.Params > 0 && ok.Metadata {
				r.left++
			}
			if ok.Columns > 0 && ok.Metadata {
				r.left++
			}
		}
		if r.left == 0 {
			r.phase = phaseDone
			return true, nil
		}
		r.phase = phasePrepDefs
		return false, nil
	case phasePrepDefs:
		return r.skip()
	case phaseAuth:
		switch h {
		case HeaderOK:
			return r.ok(p)
		case AuthSwitchRequest, AuthMoreData:
			return false, nil
		}
		return false, r.unexpected(p)
	}
	return false, r.unexpected(p)
}

// skip counts one definition after PREPARE_OK.
func (r *Response) skip() (bool, error) {
	if r.phase != phasePrepDefs {
		return false, nil
	}
	r.left--
	if r.left <= 0 {
		r.phase = phaseDone
		return true, nil
	}
	return false, nil
}

func (r *Response) err(p []byte) (bool, error) {
	e, err := ParseErr(p)
	if err != nil {
		return false, err
	}
	if e.Code == ErrProgress && r.caps.Has(CapMariaDBProgress) && r.phase != phaseDone {
		return false, nil
	}
	r.failed = true
	r.phase = phaseDone
	return true, nil
}

func (r *Response) ok(p []byte) (bool, error) {
	ok, err := ParseOK(p, r.caps)
	if err != nil {
		return false, err
	}
	r.status, r.warn = ok.Status, ok.Warnings
	r.results++
	if r.phase != phaseAuth && ok.Status&StatusMoreResultsExist != 0 {
		r.phase = phaseFirst
		return false, nil
	}
	r.phase = phaseDone
	return true, nil
}

// end reads the 0xfe packet that ends a result set or a list of
// definitions: an EOF (5 bytes) or, under CLIENT_DEPRECATE_EOF, an OK (7
// bytes or more). The length decides, since a server may send a real EOF
// where a cursor was opened.
func (r *Response) end(p []byte) error {
	if len(p) >= 7 && r.caps.Has(CapDeprecateEOF) {
		ok, err := ParseOK(p, r.caps)
		if err != nil {
			return err
		}
		r.status, r.warn = ok.Status, ok.Warnings
	} else {
		e, err := ParseEOF(p)
		if err != nil {
			return err
		}
		r.status, r.warn = e.Status, e.Warnings
	}
	r.results++
	return nil
}
