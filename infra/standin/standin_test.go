package standin_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/standin"
)

// TestMarksAreOfEveryFormAndHeld: each mark is of the form the inputs it stands in take (a name, twelve digits,
// hexadecimal), two previews draw different marks, what holds one is held, and the nth input's marks are told apart
// and still held.
func TestMarksAreOfEveryFormAndHeld(t *testing.T) {
	m, other := standin.New(), standin.New()
	if m == other {
		t.Fatalf("two previews drew the same marks %v", m)
	}
	for _, tt := range []struct {
		mark string
		re   *regexp.Regexp
	}{
		{m.Text, regexp.MustCompile(`^[a-z][a-z0-9]{9}$`)},
		{m.Whole, regexp.MustCompile(`^[a-z][a-z0-9]{9}$`)},
		{m.Digits, regexp.MustCompile(`^[0-9]{12}$`)},
		{m.Hex, regexp.MustCompile(`^[0-9a-f]{17}$`)},
	} {
		if !tt.re.MatchString(tt.mark) {
			t.Errorf("mark %q is not of the form %s", tt.mark, tt.re)
		}
	}
	for _, s := range []string{"kib-prod_" + m.Text, "arn:aws:iam::" + m.Digits + ":root", "vpc-" + m.Hex, m.Whole, m.Nth(3).Text, m.Nth(40).Whole} {
		if !m.Holds(s) {
			t.Errorf("%q holds no mark of %v", s, m)
		}
	}
	for _, s := range []string{"kib-prod_blue", "", "arn:aws:iam::123456789012:root"} {
		if m.Holds(s) {
			t.Errorf("%q holds a mark of %v", s, m)
		}
	}
	if (standin.Marks{}).Holds("anything") {
		t.Error("no marks hold something")
	}
	if !m.HoldsWhole("["+m.Nth(2).Whole+"]") || m.HoldsWhole(m.Text) || (standin.Marks{}).HoldsWhole("x") {
		t.Error("HoldsWhole tells the whole-list mark wrong")
	}
	// Of one width: the first input's mark is held by no other's (1 by 11, were they 1 and 11).
	for _, n := range []int{1, 11, 37, 1295} {
		if got := len(m.Nth(n).Text); got != len(m.Text)+3 {
			t.Errorf("Nth(%d).Text is %d long, want %d", n, got, len(m.Text)+3)
		}
		if n != 1 && strings.Contains(m.Nth(n).Text, m.Nth(1).Text) {
			t.Errorf("Nth(%d) %s holds Nth(1) %s", n, m.Nth(n).Text, m.Nth(1).Text)
		}
	}
	if a, b := m.Nth(1), m.Nth(2); a.Text == b.Text || a.Whole == b.Whole || a.Digits != m.Digits || a.Hex != m.Hex {
		t.Errorf("Nth(1) %v, Nth(2) %v", a, b)
	}
}
