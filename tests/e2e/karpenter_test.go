package e2e

import (
	"testing"

	kv "github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

// The end-to-end tests and the demo read what the bus forwards as the Karpenter the stack installs by default.
func TestKarpenterIsTheDefault(t *testing.T) {
	version, dir, err := karpenter.Pinned(".")
	if err != nil {
		t.Fatal(err)
	}
	if version != kv.Default {
		t.Errorf("tests/go.mod pins Karpenter %s (%s), the stack installs %s by default", version, dir, kv.Default)
	}
}
