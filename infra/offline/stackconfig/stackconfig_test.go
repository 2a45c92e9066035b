package stackconfig

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "Pulumi.x.yaml")
	err := os.WriteFile(path, []byte(`config:
  aws:region: eu-west-1
  karpenter-interruption-bus:clusters:
    - name: alpha
    - name: beta
      mode: existing-role
  karpenter-interruption-bus:router:
    batchSize: 50
  karpenter-interruption-bus:dashboard: true
  karpenter-interruption-bus:token:
    secure: AAABAxyz
  queuePrefix: q-
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Load(path, "karpenter-interruption-bus")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"aws:region":                             "eu-west-1",
		"karpenter-interruption-bus:clusters":    `[{"name":"alpha"},{"mode":"existing-role","name":"beta"}]`,
		"karpenter-interruption-bus:router":      `{"batchSize":50}`,
		"karpenter-interruption-bus:dashboard":   "true",
		"karpenter-interruption-bus:token":       Secret,
		"karpenter-interruption-bus:queuePrefix": "q-",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d keys, want %d: %v", len(got), len(want), got)
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), "p"); err == nil {
		t.Fatal("want an error for a missing file")
	}
}
