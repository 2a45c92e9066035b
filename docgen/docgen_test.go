package docgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/docgen"
)

// TestDocumentsAreCurrent: every generated block of the committed documents is what the code says now (make docs
// rewrites them).
func TestDocumentsAreCurrent(t *testing.T) {
	root := ".."
	files, err := docgen.Documents(root)
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		blocks += strings.Count(string(b), "<!-- generated:")
		want, err := docgen.Apply(string(b))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if want != string(b) {
			t.Errorf("%s: a generated block differs from the code: run make docs and commit the result", f)
		}
	}
	for _, bl := range docgen.Blocks {
		if n := countBlock(t, root, files, bl.Name); n == 0 {
			t.Errorf("no document holds the generated block %s", bl.Name)
		}
	}
	if blocks == 0 {
		t.Error("no generated block in any document")
	}
}

func countBlock(t *testing.T, root string, files []string, name string) int {
	t.Helper()
	n := 0
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(root, f))
		n += strings.Count(string(b), "<!-- generated:"+name+" -->")
	}
	return n
}

func TestApplyRefusesBadMarkers(t *testing.T) {
	for _, text := range []string{
		"<!-- generated:nothing -->\nx\n<!-- /generated:nothing -->\n",
		"<!-- generated:karpenter-versions -->\nx\n",
		"<!-- generated:karpenter-versions -->\nx\n<!-- /generated:other -->\n",
	} {
		if _, err := docgen.Apply(text); err == nil {
			t.Errorf("Apply accepted %q", text)
		}
	}
}
