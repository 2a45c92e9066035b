// Package sharing holds one test: that the Karpenter modules and the real pulumi-kubernetes provider the engine tests
// build (make kubernetes-provider) compile the Kubernetes packages they share once. Go's build cache shares a compiled
// package between two modules only when every module it depends on has the same version in both; one module a
// version apart (logr, cbor, x/net) recompiles the whole client-go tree: about 350 s of CPU in a cold make test
// (docs/tests.md, "What make test costs").
package sharing

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// closure is the path and version of every module that provides a package built by `go list args` in dir.
func closure(t *testing.T, dir string, args ...string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{end}}"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		var stderr []byte
		if errors.As(err, &exit) {
			stderr = exit.Stderr
		}
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr)
	}
	mods := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if path, version, ok := strings.Cut(line, " "); ok && version != "" {
			mods[path] = version
		}
	}
	return mods
}

func TestKubernetesPackagesCompiledOnce(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	modfile := filepath.Join(root, "build", "kubernetes", "go.mod")
	if _, err := os.Stat(modfile); err != nil {
		t.Fatalf("%v: make kubernetes-provider writes it (make test does, before these modules' tests)", err)
	}
	provider := closure(t, filepath.Join(root, "tests", "engine", "kubernetes"), "-modfile="+modfile, ".")
	for _, m := range []string{".", "v1.6"} {
		dir := filepath.Join("tests", "karpenter", m)
		karpenter := closure(t, filepath.Join(root, dir), "-test", "./...")
		var apart []string
		shared := 0
		for path, v := range karpenter {
			pv, ok := provider[path]
			if !ok {
				continue
			}
			shared++
			if pv != v {
				apart = append(apart, path+" "+v+" (the provider's "+pv+")")
			}
		}
		sort.Strings(apart)
		if shared < 50 {
			t.Errorf("%s shares %d modules with the provider: is the provider's module list read?", dir, shared)
		}
		if len(apart) > 0 {
			t.Errorf("%s builds %d of the modules it shares with the pulumi-kubernetes provider at other versions, so "+
				"each package above them is compiled twice; go get each at the provider's version in tests/karpenter:\n%s",
				dir, len(apart), strings.Join(apart, "\n"))
		}
	}
}

// TestModulesOfOneSideCompiledOnce: modules that build the same heavy trees agree on the version of every module both
// build, so Go's build cache compiles each package once in a make test: the suite's module and the module of the
// oldest Karpenter it runs (Karpenter v1.6's packages, and the AWS SDK services Karpenter uses), and the Pulumi CLI
// the engine tests build (sdkgen) beside the program and the engine tests (the Pulumi SDK, the AWS SDK's S3 and KMS,
// pulumi/pkg).
func TestModulesOfOneSideCompiledOnce(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cli := []string{"github.com/pulumi/pulumi/pkg/v3/cmd/pulumi", "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml"}
	for _, pair := range []struct {
		a, b         string
		argsA, argsB []string
	}{
		{"tests/karpenter", "tests/karpenter/v1.6", []string{"-test", "./..."}, []string{"-test", "./..."}},
		{"sdkgen", ".", cli, []string{"-test", "./..."}},
		{"sdkgen", "tests/engine", cli, []string{"-test", "./..."}},
	} {
		a := closure(t, filepath.Join(root, pair.a), pair.argsA...)
		b := closure(t, filepath.Join(root, pair.b), pair.argsB...)
		var apart []string
		shared := 0
		for path, v := range a {
			if bv, ok := b[path]; ok && !strings.HasPrefix(path, "github.com/karpenter-interruption-bus/") {
				shared++
				if bv != v {
					apart = append(apart, path+" "+v+" ("+pair.b+": "+bv+")")
				}
			}
		}
		sort.Strings(apart)
		if shared < 20 {
			t.Errorf("%s and %s share %d modules: is each list read?", pair.a, pair.b, shared)
		}
		if len(apart) > 0 {
			t.Errorf("%s builds %d of the modules it shares with %s at other versions, so each package above them is compiled "+
				"twice in a make test; go get each at one version in both:\n%s", pair.a, len(apart), pair.b, strings.Join(apart, "\n"))
		}
	}
}
