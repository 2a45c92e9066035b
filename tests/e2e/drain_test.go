package e2e

import (
	"fmt"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
)

// TestABacklogIsDrainedByTheInvocationThatMetIt: with the defaults' batches of 10, the one invocation whose batch was
// full takes the rest of a 250-message backlog from goaws itself (DRAIN), in chunks: every event reaches its
// cluster's queue, the malformed body in the backlog is dropped and counted, and the central queue is left empty
// after a single invocation, which logs what it drained. With DRAIN=0 the same invocation routes its batch of 10
// and leaves the rest to the mapping.
func TestABacklogIsDrainedByTheInvocationThatMetIt(t *testing.T) {
	const events = 249
	for _, tc := range []struct {
		name  string
		drain string
		want  int // events delivered by the one invocation
	}{
		{"drain", "", events},
		{"no drain", "0", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{}
			if tc.drain != "" {
				env[contract.EnvDrain] = tc.drain
			}
			b := newBusWith(t, harness.Options{Clusters: []string{"alpha", "beta"}, BatchSize: 10, Env: env})
			var bodies []string
			for i := range events {
				id := fmt.Sprintf("i-0d%015d", i)
				b.EC2.Put(id, map[string]string{"eks:eks-cluster-name": []string{"alpha", "beta"}[i%2]})
				bodies = append(bodies, spotEvent(id))
			}
			// The malformed body is last, so that with no drain the first batch is all events.
			bodies = append(bodies, "{not an event")
			b.publish(bodies...)

			r := b.pollOnce()
			if r.Received != 10 || r.Failed != 0 {
				t.Fatalf("the invocation: %+v, want a full batch of 10, none failed", r)
			}
			got := len(b.received("alpha")) + len(b.received("beta"))
			if got != tc.want {
				t.Errorf("one invocation delivered %d events, want %d", got, tc.want)
			}
			left := b.consume(harness.CentralQueue)
			drained := 0
			for _, l := range b.Out.Lines() {
				if l["msg"] == contract.LogDrained {
					n, _ := l["received"].(float64)
					drained += int(n)
				}
			}
			if tc.drain == "0" {
				if len(left) != len(bodies)-10 || drained != 0 {
					t.Errorf("with no drain: %d messages left in the central queue, %d drained; want %d and none", len(left), drained, len(bodies)-10)
				}
				return
			}
			if len(left) != 0 || drained != len(bodies)-10 {
				t.Errorf("after the drain: %d messages left in the central queue, %d drained; want none and %d", len(left), drained, len(bodies)-10)
			}
			if n := b.Metric(contract.MetricDropped, contract.DimReason, string(contract.ReasonUnparseable)); n != 1 {
				t.Errorf("Dropped{Reason=unparseable} = %v, want the malformed body, once", n)
			}
		})
	}
}
