// Package standin gives the values that stand, at a preview, for a component's inputs unknown there: each holds a
// mark no real value holds, so that whatever is made from it (a name, an ARN, a policy) still holds the mark, and
// the resource monitor between the component and the engine turns it unknown (provider/unknownmonitor). The
// component then registers, at the preview, exactly the children the update will, with unknown values where
// they depend on unknown inputs.
package standin

import (
	"crypto/rand"
	"strconv"
	"strings"
)

// Marks are one preview's marks. Text is lower-case letters and digits, starting with a letter, so it is a
// valid name of every kind the configuration takes (a cluster, an IAM role, a Kubernetes namespace, a tag);
// Whole stands for a list or map wholly unknown (a list holding it, a map keyed by it, is unknown as a whole);
// Digits is an account ID's twelve digits; Hex a hexadecimal ID's digits (a VPC's).
type Marks struct {
	Text, Whole, Digits, Hex string
}

// New is a preview's marks, drawn at random: no argument's value holds one.
func New() Marks {
	return Marks{Text: "kib" + draw(lower, 7), Whole: "kiw" + draw(lower, 7), Digits: "9" + draw("0123456789", 11), Hex: draw("0123456789abcdef", 17)}
}

const lower = "abcdefghijklmnopqrstuvwxyz0123456789"

func draw(alphabet string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// Nth are m's marks for the nth unknown input: its own text marks (m's, with a suffix), so that what is made of
// it is told from what is made of another, and still held by m (Holds).
func (m Marks) Nth(n int) Marks {
	suffix := strconv.FormatInt(int64(n), 36)
	suffix = strings.Repeat("0", max(0, 3-len(suffix))) + suffix // of one width: no input's mark holds another's
	return Marks{Text: m.Text + suffix, Whole: m.Whole + suffix, Digits: m.Digits, Hex: m.Hex}
}

// Holds says whether s holds one of m's marks: s stands for, or is made from, an unknown value.
func (m Marks) Holds(s string) bool {
	if m == (Marks{}) {
		return false
	}
	return strings.Contains(s, m.Text) || strings.Contains(s, m.Whole) || strings.Contains(s, m.Digits) || strings.Contains(s, m.Hex)
}

// HoldsWhole says whether s holds the mark of a list or map wholly unknown.
func (m Marks) HoldsWhole(s string) bool {
	return m.Whole != "" && strings.Contains(s, m.Whole)
}
