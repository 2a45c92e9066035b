// Package contract checks the bus against one version of Karpenter, with that version's own code: its
// parser reads every event the router forwards as the router does, it knows no event the bus does not carry, its
// chart, rendered with Helm's engine, receives the values the component passes, and the controller policy the
// stack grants for it covers what its source calls and its getting-started template grants, and no more. Each
// module under tests/karpenter/ runs it against the version its go.mod pins (docs/clusters.md, "Karpenter versions").
package contract

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	kp "github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

// Run runs the whole contract against the Karpenter this test binary was built with, from the working directory
// of a module under tests/karpenter/ (its go.mod pins the version; its testdata holds the version's template).
func Run(t *testing.T) {
	v, s, dir := version(t)
	t.Run("parser agrees with the router", func(t *testing.T) { parserAgrees(t, v) })
	t.Run("every parser's event is carried", func(t *testing.T) { everyParserCarried(t) })
	t.Run("chart receives the bus's values", func(t *testing.T) { chartReceivesValues(t, s, dir) })
	t.Run("controller policy covers the version", func(t *testing.T) { policyCoversVersion(t, s, dir) })
	t.Run("Kubernetes versions are the version's own", func(t *testing.T) { kubernetesRange(t, v, dir) })
}

// version is the Karpenter this module pins, which must be one the bus supports: parsed, as its module
// version, and where its module is.
func version(t testing.TB) (v karpenter.Version, s, dir string) {
	t.Helper()
	s, dir, err := kp.Pinned(".")
	if err != nil {
		t.Fatal(err)
	}
	if v, err = karpenter.Parse(s); err != nil {
		t.Fatal(err)
	}
	if !v.Supported() {
		t.Fatalf("Karpenter %s is outside the supported range %s: update router/karpenter with the matrix", v, karpenter.Range())
	}
	return v, s, dir
}

// root is the repository's root: the directory above the working one that holds Pulumi.yaml.
func root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "Pulumi.yaml")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no Pulumi.yaml above the working directory")
		}
		dir = parent
	}
}
