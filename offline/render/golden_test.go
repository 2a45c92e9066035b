package render

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/dev.golden.json from the current render")

// TestRenderIsGolden pins the whole render of Pulumi.dev.yaml: every resource, its parent, account and inputs.
// A change to what the program declares shows in the golden file's diff, reviewed with the pull request; the
// component package (provider/) runs the same components, and this is what shows that it did not change the
// program. Rewrite it with: go test ./offline/render/ -run TestRenderIsGolden -update
func TestRenderIsGolden(t *testing.T) {
	_, buf := renderDev(t)
	golden := filepath.Join("testdata", "dev.golden.json")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("the render of Pulumi.dev.yaml differs from %s from line %d:\n got: %s\nwant: %s\n(-update rewrites it, for a change meant to alter the program)", golden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("the render of Pulumi.dev.yaml has %d lines, %s %d", len(gl), golden, len(wl))
	}
}
