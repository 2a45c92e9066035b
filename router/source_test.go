package router

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSourceHasEveryPackage walks the module's directory: every Go file of a package the build needs (tests and
// testdata aside) must be in Source, or a package added later would be missing from the Lambda the provider builds.
func TestSourceHasEveryPackage(t *testing.T) {
	var want []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") || path == "go.mod" || path == "go.sum" {
			want = append(want, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 10 {
		t.Fatalf("found only %d files: is the test running in the module's root?", len(want))
	}
	for _, p := range want {
		embedded, err := fs.ReadFile(Source, p)
		if err != nil {
			t.Errorf("%s is not in Source: add its directory to the go:embed line of source.go", p)
			continue
		}
		onDisk, _ := os.ReadFile(p)
		if string(embedded) != string(onDisk) {
			t.Errorf("%s: Source holds another content", p)
		}
	}
	if _, err := fs.Stat(Source, strings.TrimPrefix(Main, "./")+"/main.go"); err != nil {
		t.Errorf("Main %s has no main.go in Source: %v", Main, err)
	}
}
