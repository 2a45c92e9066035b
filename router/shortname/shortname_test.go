package shortname

import (
	"strings"
	"testing"
)

// The expected hash was computed independently: printf %s "<full name>" | sha256sum | cut -c1-8.
func TestFit(t *testing.T) {
	tests := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"within the limit", "short", 64, "short"},
		{"exactly the limit", strings.Repeat("a", 80), 80, strings.Repeat("a", 80)},
		{"one over", "kib-" + strings.Repeat("a", 77), 80, "kib-" + strings.Repeat("a", 67) + "-2ea21fd5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fit(tt.in, tt.limit); got != tt.want {
				t.Errorf("Fit(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
			}
		})
	}
}

func TestFitKeepsLongNamesDistinct(t *testing.T) {
	a, b := Fit(strings.Repeat("x", 99)+"a", 64), Fit(strings.Repeat("x", 99)+"b", 64)
	if a == b || len(a) != 64 || len(b) != 64 {
		t.Fatalf("Fit gave %q and %q: want two distinct 64-character names", a, b)
	}
}
