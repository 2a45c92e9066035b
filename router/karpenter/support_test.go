package karpenter

import (
	"strings"
	"testing"
	"time"
)

func TestSupportWarning(t *testing.T) {
	tests := []struct {
		version, on string
		want        []string // each must be in the warning; none: no warning
		not         []string
	}{
		{"1.15.1", "2026-11-26", nil, nil},
		{"1.15.1", "2030-01-01", nil, nil}, // the newest line: until the table knows of 1.16
		{"1.14.3", "2026-11-26", nil, nil},
		{"1.14.1", "2026-11-26", nil, nil},
		{"1.9.3", "2026-11-26", nil, nil},
		{"1.6.3", "2026-11-26", []string{"Karpenter 1.6.3 is out of Karpenter's support since 2026-07-14", "LTS line", "2025-07-14",
			"1.15.1 (the newest release, until 1.16 is published)", "1.14.3 (LTS, until 2027-07-10)", "1.9.3 (LTS, until 2027-02-06)",
			"karpenter.version", PolicyURL}, nil},
		{"1.13.0", "2026-11-26", []string{"since 2026-07-10", "a regular release", "1.9.3", "1.14.3", "1.15.1"}, nil},
		{"1.8.2", "2026-11-26", []string{"since 2026-02-06"}, nil},
		{"1.9.3", "2026-12-08", []string{"leaves Karpenter's support on 2027-02-06, in 60 days", "1.14.3", "1.15.1"}, []string{"1.9.3 (LTS"}},
		{"1.9.0", "2027-02-05", []string{"on 2027-02-06, in 1 day ("}, nil},
		{"1.9.3", "2027-02-06", []string{"out of Karpenter's support since 2027-02-06", "1.14.3", "1.15.1"}, []string{"1.9.3 (LTS"}},
		{"1.14.3", "2027-08-01", []string{"since 2027-07-10", "1.15.1"}, []string{"1.9.3", "1.14.3 (LTS"}},
	}
	for _, tt := range tests {
		v, err := Parse(tt.version)
		if err != nil {
			t.Fatal(err)
		}
		on, err := time.Parse(time.DateOnly, tt.on)
		if err != nil {
			t.Fatal(err)
		}
		got := SupportWarning(v, on)
		if (got == "") != (tt.want == nil) {
			t.Errorf("%s on %s: warning %q, want one: %t", tt.version, tt.on, got, tt.want != nil)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s on %s: %q does not say %q", tt.version, tt.on, got, w)
			}
		}
		for _, w := range tt.not {
			if strings.Contains(got, w) {
				t.Errorf("%s on %s: %q says %q", tt.version, tt.on, got, w)
			}
		}
	}
}

// TestLinesCoverWhatTheBusSupports: every minor version the bus supports has its line, in order, and every line
// supported today names the patch the bus tests, which belongs to it: a warning may point users there.
func TestLinesCoverWhatTheBusSupports(t *testing.T) {
	ls := Lines()
	for i, v := range Minors() {
		if i >= len(ls) || ls[i].Major != v.Major || ls[i].Minor != v.Minor {
			t.Fatalf("line %d: %v, want %d.%d (every supported minor version, oldest first)", i, ls, v.Major, v.Minor)
		}
		if i > 0 && !ls[i].Released.After(ls[i-1].Released) {
			t.Errorf("%s released %s, not after %s", ls[i], ls[i].Released, ls[i-1])
		}
	}
	if len(ls) != len(Minors()) {
		t.Errorf("%d lines for %d supported minor versions", len(ls), len(Minors()))
	}
	for _, l := range SupportedLines(time.Now()) {
		if l.Tested.Major != l.Major || l.Tested.Minor != l.Minor || !l.Tested.Supported() {
			t.Errorf("line %s is supported but its newest patch is %v", l, l.Tested)
		}
	}
	if d, ok := ls[len(ls)-1].End(); ok {
		t.Errorf("the newest line ends on %s: it is supported until the next minor version is published", d)
	}
	if v, _ := Parse(Default); !must(LineOf(v)).SupportedAt(time.Now()) {
		t.Errorf("the default, %s, is out of Karpenter's support", Default)
	}
}

func must(l Line, ok bool) Line {
	if !ok {
		panic("no line")
	}
	return l
}
