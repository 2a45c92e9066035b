package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// raw is a JSON value, undecoded and uncopied: a field whose type is checked only for the kinds that read it.
// It keeps every occurrence of a repeated key, because encoding/json decodes each of them into the field, and a
// wrong-typed one fails Karpenter's parse even when the last one is fine.
type raw struct {
	first []byte
	more  [][]byte // later occurrences, only when the key repeats
}

// UnmarshalJSON implements json.Unmarshaler.
func (r *raw) UnmarshalJSON(b []byte) error {
	if r.first == nil {
		r.first = b
	} else {
		r.more = append(r.more, b)
	}
	return nil
}

// token decodes r as encoding/json decodes a string field: occurrence by occurrence, null leaving the value as
// it was, any other type an error. Absent or null gives nil.
func (r *raw) token() (token, error) {
	var t token
	if r.first == nil {
		return nil, nil
	}
	if err := t.UnmarshalJSON(r.first); err != nil {
		return nil, fmt.Errorf("%s: %w", r.first, err)
	}
	for _, b := range r.more {
		if err := t.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("%s: %w", b, err)
		}
	}
	return t, nil
}

// decode decodes every occurrence of r into v in turn, as encoding/json would; absent leaves v as it is.
func (r *raw) decode(v any) error {
	if r.first == nil {
		return nil
	}
	if err := json.Unmarshal(r.first, v); err != nil {
		return err
	}
	for _, b := range r.more {
		if err := json.Unmarshal(b, v); err != nil {
			return err
		}
	}
	return nil
}

// stringsOrNull reports the first of rs that is not decodable as a string field.
func stringsOrNull(rs ...*raw) error {
	for _, r := range rs {
		if _, err := r.token(); err != nil {
			return err
		}
	}
	return nil
}
