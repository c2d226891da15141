package pg

import "fmt"

// MsgParameterStatus is the backend's report of a run-time parameter
// ('S': name and value, two zero-terminated strings), sent at startup for
// every reported parameter and again whenever one changes.
const MsgParameterStatus = 'S'

// ParameterStatusFields returns the name and value of a ParameterStatus
// message (header included). They alias msg.
func ParameterStatusFields(msg []byte) (name, value []byte, err error) {
	name, rest, ok := cstring(msg[HeaderLen:])
	if !ok {
		return nil, nil, fmt.Errorf("%w: ParameterStatus has an unterminated name", ErrFrame)
	}
	value, rest, ok = cstring(rest)
	if !ok || len(rest) != 0 {
		return nil, nil, fmt.Errorf("%w: ParameterStatus is not two zero-terminated strings", ErrFrame)
	}
	return name, value, nil
}
