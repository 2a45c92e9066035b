package cluster

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestReleaseMatchesTheSDK reads pulumi-kubernetes' own helm/v3 source (the version go.mod pins) and checks that
// release declares what its NewRelease would: the same resource type, Compat set to "true", and every input
// under the SDK's field name, tag and type, its required ones included.
func TestReleaseMatchesTheSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/pulumi/pulumi-kubernetes/sdk/v4").Output()
	if err != nil {
		t.Fatalf("finding pulumi-kubernetes' source: %v", err)
	}
	file := filepath.Join(strings.TrimSpace(string(out)), "go", "kubernetes", "helm", "v3", "release.go")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}

	type field struct{ name, typ string }
	sdk := map[string]field{} // by tag
	var required []string
	var registers, compat bool
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.TypeSpec:
			st, ok := n.Type.(*ast.StructType)
			if !ok || n.Name.Name != "releaseArgs" {
				return true
			}
			for _, fl := range st.Fields.List {
				if fl.Tag == nil || len(fl.Names) != 1 {
					continue
				}
				tagText, _ := strconv.Unquote(fl.Tag.Value)
				tag := reflect.StructTag(tagText).Get("pulumi")
				var typ strings.Builder
				_ = printer.Fprint(&typ, fset, fl.Type)
				sdk[tag] = field{fl.Names[0].Name, typ.String()}
				if _, ptr := fl.Type.(*ast.StarExpr); !ptr && !strings.HasPrefix(typ.String(), "map[") && !strings.HasPrefix(typ.String(), "[]") {
					required = append(required, tag)
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "RegisterResource" && len(n.Args) > 0 {
				if lit, ok := n.Args[0].(*ast.BasicLit); ok && lit.Value == strconv.Quote(releaseType) {
					registers = true
				}
			}
		case *ast.AssignStmt:
			var lhs, rhs strings.Builder
			_ = printer.Fprint(&lhs, fset, n.Lhs[0])
			_ = printer.Fprint(&rhs, fset, n.Rhs[0])
			compat = compat || lhs.String() == "args.Compat" && rhs.String() == `pulumi.StringPtr("true")`
		}
		return true
	})
	if len(sdk) == 0 || !registers || !compat {
		t.Fatalf("%s: releaseArgs has %d tagged fields, registers %s: %t, sets Compat \"true\": %t", file, len(sdk), releaseType, registers, compat)
	}

	ours := reflect.TypeOf(releaseInputs{})
	set := map[string]bool{}
	for i := range ours.NumField() {
		f := ours.Field(i)
		tag := f.Tag.Get("pulumi")
		set[tag] = true
		typ := strings.ReplaceAll(f.Type.String(), "interface {}", "interface{}")
		if want, ok := sdk[tag]; !ok || want.name != f.Name || want.typ != typ {
			t.Errorf("input %s %s `pulumi:%q`: the SDK has %+v (found: %t)", f.Name, typ, tag, want, ok)
		}
		if _, ok := reflect.TypeOf(releaseArgs{}).FieldByName(f.Name); !ok {
			t.Errorf("releaseArgs has no input for %s", f.Name)
		}
	}
	for _, tag := range required {
		if !set[tag] {
			t.Errorf("the SDK requires %q, which release does not set", tag)
		}
	}
}
