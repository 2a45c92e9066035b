package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"unsafe"
)

// token is a JSON string decoded without copying: it aliases the input, which Parse never modifies. Like a Go
// string field under encoding/json, it accepts a string or null and rejects any other JSON type, so the
// envelope stays exactly as strict as Karpenter's typed structs. nil means absent or null; a present ""
// is empty but not nil.
type token []byte

var errNotString = errors.New("not a JSON string")

// UnmarshalJSON implements json.Unmarshaler. encoding/json has already checked that b is one valid JSON value.
func (t *token) UnmarshalJSON(b []byte) error {
	switch {
	case b[0] == 'n': // null leaves the field as it was, as for a Go string
		return nil
	case b[0] != '"':
		return errNotString
	case bytes.IndexByte(b, '\\') >= 0: // escapes: rare in AWS events, let encoding/json unquote
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*t = token(s)
	default:
		*t = b[1 : len(b)-1 : len(b)-1]
	}
	return nil
}

// String returns the token as a string sharing its memory: the input is immutable for the event's lifetime.
func (t token) String() string {
	if len(t) == 0 {
		return ""
	}
	return unsafe.String(&t[0], len(t))
}
