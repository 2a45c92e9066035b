package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is the path every module of the repository is named under, by its directory.
const module = "github.com/karpenter-interruption-bus/karpenter-interruption-bus"

// TestNoImportRunsBackUp: no package of any module of the repository imports a package above it (infra/offline/render
// importing infra, say): a package is built from those below it, and the root of a tree (infra, the program's
// mapping) depends on its parts, never the other way.
func TestNoImportRunsBackUp(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "build", "node_modules", "testdata", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		pkg := module
		if dir := filepath.ToSlash(filepath.Dir(path)); dir != "." {
			pkg += "/" + dir
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(pkg, p+"/") {
				t.Errorf("%s: package %s imports %s, a package above it", path, pkg, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Errorf("read %d Go files: want the whole repository", files)
	}
}
