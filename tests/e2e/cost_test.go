package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
)

// TestCostModel counts, at the emulator, the requests an interruption event costs with the bus and with
// per-cluster rules, at 1, 10 and 100 clusters. The bus's cost must not grow with the fleet; the per-cluster
// setup's grows linearly. The README's cost table comes from this test's log (go test -run CostModel -v).
func TestCostModel(t *testing.T) {
	for _, n := range []int{1, 10, 100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c, err := harness.MeasureCost(context.Background(), n, 100, 10)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("N=%d: bus %.2f requests/event %v + %d DescribeInstances; per-cluster rules %.2f requests/event %v",
				n, c.BusPerEvent(), c.Bus, c.DescribeInstances, c.PerClusterPerEvent(), c.PerCluster)
			// 1 send to the central queue, ~1 batched forward, 1 Karpenter delete, plus receives amortised over
			// batches and one GetQueueUrl per cluster: a constant, not a function of N.
			if got := c.BusPerEvent(); got > 4.5 {
				t.Errorf("bus: %.2f requests per event at N=%d, want <= 4.5 whatever N", got, n)
			}
			// Every event reaches N queues and is received and deleted N times.
			if got, floor := c.PerClusterPerEvent(), 2*float64(n); got < floor {
				t.Errorf("per-cluster rules: %.2f requests per event at N=%d, want >= %.0f", got, n, floor)
			}
			if c.Bus["SendMessage"] != c.Events {
				t.Errorf("bus: %d SendMessage for %d events, want one each (EventBridge to the central queue)", c.Bus["SendMessage"], c.Events)
			}
		})
	}
}
