package version

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestTagWins(t *testing.T) {
	old := tag
	defer func() { tag = old }()
	tag = "v2.0.1"
	if got := Version(); got != "2.0.1" {
		t.Errorf("Version() = %q with the release build's tag v2.0.1", got)
	}
}

// TestBuilds builds a program printing Version the two ways the provider is built: as Pulumi's Go language host
// builds a git package (-buildvcs=false -trimpath: Dev, whatever the checkout's tags) and as the release does
// (the tag stamped with -ldflags).
func TestBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds twice")
	}
	dir := t.TempDir()
	for _, tt := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"the Go language host's build", []string{"-buildvcs=false", "-trimpath"}, Dev},
		{"the release build", []string{"-trimpath", "-ldflags", "-X github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/version.tag=v1.4.2"}, "1.4.2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			bin := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-"))
			args := append(append([]string{"build"}, tt.flags...), "-o", bin, "./testdata/printversion")
			if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
				t.Fatalf("go %v: %v\n%s", args, err, out)
			}
			out, err := exec.Command(bin).Output()
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("%s reports %q, want %q", tt.name, out, tt.want)
			}
		})
	}
}
