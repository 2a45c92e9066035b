package contract

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
)

// VersionFile is where Karpenter's source bounds the Kubernetes versions its controller accepts (MinK8sVersion,
// MaxK8sVersion): outside them it fails with "karpenter is not compatible with kubernetes version".
const VersionFile = "pkg/providers/version/version.go"

// kubernetesRange checks the Kubernetes versions the bus's preflight and configuration accept for Karpenter v
// (router/karpenter) against the bounds in v's own source.
func kubernetesRange(t *testing.T, v karpenter.Version, moduleDir string) {
	path := filepath.Join(moduleDir, VersionFile)
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	bounds := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && len(vs.Values) == 1 {
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				bounds[vs.Names[0].Name], _ = strconv.Unquote(lit.Value)
			}
		}
		return true
	})
	minor := func(name string) int {
		n, err := karpenter.KubernetesMinor(bounds[name])
		if err != nil {
			t.Fatalf("%s: %s: %v", VersionFile, name, err)
		}
		return n
	}
	want := karpenter.KubernetesRange{Min: minor("MinK8sVersion"), Max: minor("MaxK8sVersion")}
	if got, ok := v.Kubernetes(); !ok || got != want {
		t.Errorf("router/karpenter says Karpenter %s runs on Kubernetes %v, its source (%s) says %v", v, got, VersionFile, want)
	}
}
