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
