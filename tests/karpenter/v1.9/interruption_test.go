package versiontest

import (
	"path/filepath"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/judge"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/v1.9/interruption"
)

// TestInterruptionController: Karpenter v1.9's own interruption controller, one per cluster behind the router
// binary, acts on exactly the instances of its cluster.
func TestInterruptionController(t *testing.T) {
	router, err := harness.BuildRouter(filepath.Join("..", "..", "..", "router"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	judge.Run(t, interruption.Build, router)
}
