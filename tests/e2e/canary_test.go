package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/handler"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/lambdaesm"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// canaryEvent is a canary of this bus, as EventBridge delivers one put in account putIn naming clusters of
// account to ("" for putIn's own).
func canaryEvent(id, putIn, to string, clusters ...string) string {
	detail := contract.CanaryDetail{Bus: harness.NamePrefix, Account: to, Clusters: clusters}
	ev := map[string]any{
		"version": "0", "id": id, "detail-type": contract.DetailTypeCanary, "source": contract.SourceCanary, "account": putIn,
		"time": "2026-11-23T12:00:00Z", "region": sqsemu.Region, "resources": []string{}, "detail": json.RawMessage(detail.JSON()),
	}
	b, _ := json.Marshal(ev)
	return string(b)
}

// TestCanaryFlood: 1,000 canaries naming one cluster, put as fast as PutEvents allows, reach its queue once per
// canary interval per router instance: the interval is an hour here, so exactly once for one instance and twice
// for two (Lambda runs up to maximumConcurrency instances, each with its own memory: docs/operations.md, "Heartbeat"). The
// rest are dropped as canary_rate_limited and counted; a spot warning for the same cluster in the middle of the
// flood is forwarded.
func TestCanaryFlood(t *testing.T) {
	for _, instances := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d router instances", instances), func(t *testing.T) {
			// No drain: the batches must go to the instances in turn, not all to the first that drains the queue.
			b := newBusWith(t, harness.Options{Clusters: []string{"alpha"}, BatchSize: 100, Env: map[string]string{contract.EnvCanaryInterval: "1h", contract.EnvDrain: "0"}})
			b.EC2.Put("i-0a1b2c3d4e5f60001", map[string]string{"eks:eks-cluster-name": "alpha"})
			// Each instance is a router built from the same environment, as Lambda starts them; batches go to
			// them in turn.
			handlers := []lambdaesm.Handler{b.ESM.Handler}
			for range instances - 1 {
				h, err := handler.FromEnv(context.Background(), func(k string) string { return b.RouterEnv()[k] }, b.Out)
				if err != nil {
					t.Fatal(err)
				}
				handlers = append(handlers, lambdaesm.Handler(h))
			}
			var bodies []string
			for i := range 1000 {
				bodies = append(bodies, canaryEvent(fmt.Sprintf("flood-%04d", i), sqsemu.Account, "", "alpha"))
				if i == 500 {
					bodies = append(bodies, spotEvent("i-0a1b2c3d4e5f60001"))
				}
			}
			b.publish(bodies...)
			invocations := 0
			for {
				esm := b.ESM
				esm.Handler = handlers[invocations%len(handlers)]
				r, err := esm.PollOnce(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if r.Received == 0 {
					break
				}
				invocations++
				if r.Failed != 0 {
					t.Fatalf("invocation %d: %d messages failed", invocations, r.Failed)
				}
			}
			got := b.received("alpha")
			canaries, spot := 0, 0
			for _, body := range got {
				if body == bodies[501] {
					spot++
				} else {
					canaries++
				}
			}
			if canaries != instances || spot != 1 {
				t.Errorf("alpha received %d canaries and %d spot warnings from %d invocations, want %d and 1", canaries, spot, invocations, instances)
			}
			if got := b.Metric(contract.MetricDropped, contract.DimReason, string(contract.ReasonCanaryRateLimited)); got != float64(1000-instances) {
				t.Errorf("Dropped{Reason=canary_rate_limited} = %v, want %d", got, 1000-instances)
			}
			if got := b.Metric(contract.MetricCanaryForwarded, contract.DimCluster, "alpha"); got != float64(instances) {
				t.Errorf("CanaryForwarded{Cluster=alpha} = %v, want %d", got, instances)
			}
		})
	}
}

// TestCanaryAcrossAccounts: a canary put in member A naming a cluster of member B never reaches B's queue
// (dropped as canary_forbidden); one put in the hub naming it does (make verify's); one put in A naming A's own
// cluster does (A's heartbeat).
func TestCanaryAcrossAccounts(t *testing.T) {
	b := newBusWith(t, harness.Options{Members: map[string][]string{memberA: {"beta"}, memberB: {"gamma"}}})
	fromA := canaryEvent("a-names-b", memberA, memberB, "gamma")
	fromHub := canaryEvent("hub-names-b", sqsemu.Account, memberB, "gamma")
	own := canaryEvent("a-names-a", memberA, "", "beta")
	b.publish(fromA, fromHub, own)
	b.drain()
	if got := b.received("gamma"); len(got) != 1 || got[0] != fromHub {
		t.Errorf("member B's gamma received %d canaries, want the hub's only", len(got))
	}
	if got := b.received("beta"); len(got) != 1 || got[0] != own {
		t.Errorf("member A's beta received %d canaries, want its own account's", len(got))
	}
	if d := b.dropReasons()["a-names-b"]; len(d) != 1 || d[0] != string(contract.ReasonCanaryForbidden) {
		t.Errorf("member A's canary for B: drops %v, want canary_forbidden", d)
	}
	if got := b.Metric(contract.MetricDropped, contract.DimReason, string(contract.ReasonCanaryForbidden)); got != 1 {
		t.Errorf("Dropped{Reason=canary_forbidden} = %v, want 1", got)
	}
}
