package version

import "testing"

func TestFromModule(t *testing.T) {
	for _, tt := range []struct{ stamped, want string }{
		{"v1.2.3", "1.2.3"},
		{"v1.3.0-rc.1", "1.3.0-rc.1"},
		{"(devel)", Dev},
		{"", Dev},
		{"v0.0.0-20261124031500-0123456789ab", Dev},   // a pseudo-version: no tag
		{"v1.2.4-0.20261124031500-0123456789ab", Dev}, // commits after v1.2.3
		{"v1.2.3+dirty", Dev},                         // a tagged checkout with changes
	} {
		if got := fromModule(tt.stamped); got != tt.want {
			t.Errorf("fromModule(%q) = %q, want %q", tt.stamped, got, tt.want)
		}
	}
}

func TestTagWins(t *testing.T) {
	old := tag
	defer func() { tag = old }()
	tag = "v2.0.1"
	if got := Version(); got != "2.0.1" {
		t.Errorf("Version() = %q with the release build's tag v2.0.1", got)
	}
}
