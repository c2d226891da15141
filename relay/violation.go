package relay

import "log/slog"

// ServerMalformed counts a message from the server that sqlfw cannot read
// (what: the protocol's word for one, "message", "packet", "greeting")
// and logs that it ends the session.
func (l *Legs) ServerMalformed(log *slog.Logger, what string, err error) {
	l.Obs.Count(ProtocolErrors, 1)
	log.Error("closing connection: malformed "+what+" from the server", "err", err)
}

// ClientViolation counts a message from the client that breaks the
// protocol and logs that it ends the session; the protocol then tells the
// client in its own words.
func (l *Legs) ClientViolation(log *slog.Logger, err error) {
	l.Obs.Count(ProtocolErrors, 1)
	log.Warn("closing connection: protocol violation from client", "err", err)
}
