package relay

// Why a TLS handshake failed, for the metrics (an operator's alert for an
// expired certificate is not one for a client speaking an old protocol).

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// TLSFailure is the cause of a failed TLS handshake.
type TLSFailure uint8

const (
	// TLSFailOther: none of the causes below.
	TLSFailOther TLSFailure = iota
	// TLSFailCertificate: a certificate was missing, expired, for another
	// name or from an unknown authority (either side's verification, or
	// the peer's alert saying so).
	TLSFailCertificate
	// TLSFailProtocol: no common version, cipher or application protocol
	// (ALPN), or bytes that are not TLS.
	TLSFailProtocol
	// TLSFailTimeout: the handshake did not finish in time.
	TLSFailTimeout
	// TLSFailClosed: the peer closed or reset the connection.
	TLSFailClosed
	// TLSFailRefused: the server declined TLS (PostgreSQL's 'N').
	TLSFailRefused
	// NumTLSFailures counts the causes.
	NumTLSFailures
)

var tlsFailureNames = [NumTLSFailures]string{"other", "certificate", "protocol", "timeout", "closed", "refused"}

func (f TLSFailure) String() string {
	if f < NumTLSFailures {
		return tlsFailureNames[f]
	}
	return "other"
}

// ErrTLSRefused is wrapped by a relay's error when the server declined TLS.
var ErrTLSRefused = errors.New("the database server does not accept TLS")

// ClassifyTLSError returns the cause of a failed handshake.
func ClassifyTLSError(err error) TLSFailure {
	var (
		cv      *tls.CertificateVerificationError
		alert   tls.AlertError
		record  tls.RecordHeaderError
		unknown x509.UnknownAuthorityError
		invalid x509.CertificateInvalidError
		host    x509.HostnameError
		ne      net.Error
	)
	switch {
	case err == nil:
		return TLSFailOther
	case errors.Is(err, ErrTLSRefused):
		return TLSFailRefused
	case errors.As(err, &cv), errors.As(err, &unknown), errors.As(err, &invalid), errors.As(err, &host):
		return TLSFailCertificate
	case errors.As(err, &alert):
		switch alert {
		case 42, 43, 44, 45, 46, 48, 116: // bad, unsupported, revoked, expired, unknown certificate; unknown CA; certificate required
			return TLSFailCertificate
		case 70, 71, 40, 47, 120: // protocol version, insufficient security, handshake failure, illegal parameter, no application protocol
			return TLSFailProtocol
		}
		return TLSFailOther
	case errors.As(err, &record):
		return TLSFailProtocol
	case errors.As(err, &ne) && ne.Timeout():
		return TLSFailTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, net.ErrClosed), errors.Is(err, syscall.EPIPE):
		return TLSFailClosed
	}
	return classifyTLSText(err.Error())
}

// classifyTLSText reads the causes crypto/tls reports only as text (its
// server side's "client didn't provide a certificate", the version and
// ALPN refusals).
func classifyTLSText(s string) TLSFailure {
	for _, c := range []struct {
		sub string
		f   TLSFailure
	}{
		{"certificate", TLSFailCertificate},
		{"protocol version", TLSFailProtocol},
		{"no application protocol", TLSFailProtocol},
		{"no cipher suite", TLSFailProtocol},
		{"unsupported", TLSFailProtocol},
		{"first record does not look like a TLS handshake", TLSFailProtocol},
	} {
		if strings.Contains(s, c.sub) {
			return c.f
		}
	}
	return TLSFailOther
}

// TLSFailCounter is the counter of a failed handshake's cause, on the
// client leg or the server leg (a relay also counts TLSClientFail or
// TLSServerFail).
func TLSFailCounter(serverLeg bool, err error) Counter {
	base := TLSClientFailBy
	if serverLeg {
		base = TLSServerFailBy
	}
	return base + Counter(ClassifyTLSError(err))
}
