// Command gen writes the schema and Terraform mapping the provider embeds, from its module's schema.json and
// terraform-mapping.json, the schema's version set to VERSION: what the provider's own generate.go writes
// (cmd/pulumi-resource-kubernetes/generate.go, which needs a checkout).
//
// It also writes, in the directory OUT, a copy of the provider's Go SDK module (sdk/v4) whose yaml/v2 kinds.go has
// RegisterResource reduced to its default case, and a go.mod that is this module's but for a replace of the SDK by the
// copy, to build with (go build -modfile; go build -overlay may not replace files of the module cache). Each of its 200 typed cases calls ctx.RegisterResource with the kind's type token, the
// name, the properties and the options, into a typed struct of one of 67 API groups' packages; the default case makes
// the same call into an untyped one. The calls the provider's yaml/v2 components make to the engine are the same; the
// 67 packages, two thirds of the provider's cold compile (measured: docs/tests.md, "The real pulumi-kubernetes
// provider"), are not compiled. Nothing this project runs uses yaml/v2 components.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	version := os.Getenv("VERSION")
	if version == "" {
		return fmt.Errorf("VERSION is not set")
	}
	provider, err := moduleDir("github.com/pulumi/pulumi-kubernetes/provider/v4")
	if err != nil {
		return err
	}
	src := filepath.Join(provider, "cmd", "pulumi-resource-kubernetes")
	var schema map[string]any
	if err := readJSON(filepath.Join(src, "schema.json"), &schema); err != nil {
		return err
	}
	schema["version"] = version
	var mapping any
	if err := readJSON(filepath.Join(src, "terraform-mapping.json"), &mapping); err != nil {
		return err
	}
	for name, v := range map[string]any{"schema-embed.json": schema, "terraform-mapping-embed.json": mapping} {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			return err
		}
	}
	sdk, err := moduleDir("github.com/pulumi/pulumi-kubernetes/sdk/v4")
	if err != nil {
		return err
	}
	return reducedSDK(sdk, os.Getenv("OUT"))
}

// reducedSDK copies the SDK module at dir into out/sdk, reduces its kinds.go, and writes out/go.mod and out/go.sum.
func reducedSDK(dir, out string) error {
	if out == "" {
		return fmt.Errorf("OUT is not set")
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	copyDir := filepath.Join(out, "sdk")
	if err := os.RemoveAll(copyDir); err != nil {
		return err
	}
	if err := os.CopyFS(copyDir, os.DirFS(dir)); err != nil {
		return fmt.Errorf("copying the SDK: %w", err)
	}
	kinds := filepath.Join(copyDir, "go", "kubernetes", "yaml", "v2", "kinds.go")
	if err := os.Chmod(kinds, 0o644); err != nil { // the module cache's files are read-only, and so their copies
		return err
	}
	if err := reduce(kinds); err != nil {
		return err
	}
	mod, err := os.ReadFile("go.mod")
	if err != nil {
		return err
	}
	mod = append(mod, []byte("\nreplace github.com/pulumi/pulumi-kubernetes/sdk/v4 => "+copyDir+"\n")...)
	if err := os.WriteFile(filepath.Join(out, "go.mod"), mod, 0o644); err != nil {
		return err
	}
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "go.sum"), sum, 0o644)
}

func moduleDir(path string) (string, error) {
	// go mod download -json gives the directory, downloading the module first: go list -m gives an empty Dir for a
	// module not yet in the module cache (a new machine's first make test).
	out, err := exec.Command("go", "mod", "download", "-json", path).Output()
	if err != nil {
		return "", fmt.Errorf("finding the module %s: %w", path, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("finding the module %s: %w", path, err)
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("finding the module %s: %s (no directory)", path, m.Error)
	}
	return m.Dir, nil
}

// reduce rewrites kinds.go with RegisterResource's default case only, without the imports only the others used.
func reduce(kinds string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, kinds, nil, parser.ParseComments)
	if err != nil {
		return err
	}
	var reduced bool
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "RegisterResource" {
			continue
		}
		for _, st := range fn.Body.List {
			sw, ok := st.(*ast.SwitchStmt)
			if !ok {
				continue
			}
			for _, c := range sw.Body.List {
				if cc := c.(*ast.CaseClause); cc.List == nil {
					sw.Body.List, reduced = []ast.Stmt{cc}, true
				}
			}
		}
	}
	if !reduced {
		return fmt.Errorf("%s: no RegisterResource with a default case: the SDK changed, see gen's doc", kinds)
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.IMPORT {
			continue
		}
		var keep []ast.Spec
		for _, sp := range g.Specs {
			is := sp.(*ast.ImportSpec)
			path, _ := strconv.Unquote(is.Path.Value)
			local := filepath.Base(path)
			if is.Name != nil {
				local = is.Name.Name
			}
			if used[local] {
				keep = append(keep, is)
			}
		}
		g.Specs = keep
	}
	f.Imports = nil
	f.Comments = nil
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, f); err != nil {
		return err
	}
	return os.WriteFile(kinds, b.Bytes(), 0o644)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
