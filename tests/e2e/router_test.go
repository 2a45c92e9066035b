package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/karpenter"
)

// Instances of the fixtures and how each is tagged: every owner tag the router knows, and one instance no
// cluster owns.
var fixtureTags = map[string]map[string]string{
	"i-0a1b2c3d4e5f60001": {"eks:eks-cluster-name": "alpha", "karpenter.sh/nodepool": "default"},
	"i-0a1b2c3d4e5f60002": {"kubernetes.io/cluster/beta": "owned"},
	"i-0a1b2c3d4e5f60003": {"eks:cluster-name": "gamma", "eks:nodegroup-name": "system"},
	"i-0a1b2c3d4e5f60004": {"Name": "bastion"},
	"i-0a1b2c3d4e5f60005": {"eks:eks-cluster-name": "alpha"},
	"i-0a1b2c3d4e5f60006": {"eks:eks-cluster-name": "beta"},
	"i-0a1b2c3d4e5f60007": {"eks:eks-cluster-name": "gamma"},
}

func (b *bus) tagFixtures() {
	for id, tags := range fixtureTags {
		b.EC2.Put(id, tags)
	}
}

// TestEveryKindReachesTheRightKarpenter sends one event of each kind through the whole path and checks, with
// Karpenter's own parser, what each cluster's queue holds.
func TestEveryKindReachesTheRightKarpenter(t *testing.T) {
	b := newBus(t, "alpha", "beta", "gamma")
	b.tagFixtures()
	spot, rebalance := fixture(t, "spot-interruption.json"), fixture(t, "rebalance-recommendation.json")
	terminated, stopping := fixture(t, "state-change-terminated.json"), fixture(t, "state-change-stopping.json")
	health, capres := fixture(t, "health-scheduled-change.json"), fixture(t, "capacity-reservation-interruption.json")
	pending := strings.Replace(strings.Replace(terminated, `"terminated"`, `"pending"`, 1), "3e5527d7", "pending0", 1)
	b.publish(spot, rebalance, terminated, stopping, health, capres, pending, "garbage")
	b.drain()

	want := map[string][]string{"alpha": {spot, health}, "beta": {rebalance, health}, "gamma": {terminated, capres}}
	// Karpenter as the stack installs it by default (v1.15.1, the module's) parses each forwarded body as below;
	// what older versions make of them is the contract tests' (tests/karpenter/).
	wantKarpenter := map[string]karpenter.Parsed{
		spot:       {Kind: "spot_interrupted", InstanceIDs: []string{"i-0a1b2c3d4e5f60001"}},
		rebalance:  {Kind: "rebalance_recommendation", InstanceIDs: []string{"i-0a1b2c3d4e5f60002"}},
		terminated: {Kind: "instance_terminated", InstanceIDs: []string{"i-0a1b2c3d4e5f60003"}},
		health:     {Kind: "scheduled_change", InstanceIDs: []string{"i-0a1b2c3d4e5f60005", "i-0a1b2c3d4e5f60006"}},
		capres:     {Kind: "capacity_reservation_interrupted", InstanceIDs: []string{"i-0a1b2c3d4e5f60007"}},
	}
	for cluster, bodies := range want {
		slices.Sort(bodies)
		got := b.received(cluster)
		if !slices.Equal(got, bodies) {
			t.Errorf("%s's queue holds %d bodies, want %d byte for byte:\n got %q\nwant %q", cluster, len(got), len(bodies), got, bodies)
		}
		for _, body := range got {
			p, err := karpenter.Parse(body)
			if err != nil {
				t.Errorf("Karpenter cannot parse what %s received: %v", cluster, err)
				continue
			}
			if w := wantKarpenter[body]; p.Kind != w.Kind || !slices.Equal(p.InstanceIDs, w.InstanceIDs) {
				t.Errorf("Karpenter reads %s's message as %+v, want %+v", cluster, p, w)
			}
		}
	}
	if left := b.consume(harness.CentralQueue); len(left) != 0 {
		t.Errorf("central queue still holds %d messages", len(left))
	}
	wantDrops := map[string][]string{
		"4e5527d7-bb36-4607-3370-4164db56a40e": {"no_owner"}, // the untagged bastion
		"pending0-bb36-4607-3370-4164db56a40e": {"not_interruption"},
		"garbage":                              {"unparseable"},
	}
	if got := b.dropReasons(); fmt.Sprint(got) != fmt.Sprint(wantDrops) {
		t.Errorf("drops = %v, want each logged once: %v", got, wantDrops)
	}
	for _, m := range []struct {
		name, dim, val string
		want           float64
	}{
		{contract.MetricReceived, "", "", 8}, {contract.MetricForwarded, "", "", 6}, {contract.MetricDropped, "", "", 3},
		{contract.MetricRetried, "", "", 0}, {contract.MetricForwarded, contract.DimCluster, "alpha", 2},
		{contract.MetricDropped, contract.DimReason, "no_owner", 1}, {contract.MetricReceived, contract.DimKind, "scheduled_change", 1},
		{contract.MetricReceived, contract.DimKind, "unknown", 2},
	} {
		if got := b.Metric(m.name, m.dim, m.val); got != m.want {
			t.Errorf("metric %s{%s=%s} = %v, want %v", m.name, m.dim, m.val, got, m.want)
		}
	}
}

// TestFaults injects one fault at a time into a stream of events for three clusters and checks that nothing is
// lost (each event forwarded, or dropped with a reason) and nothing reaches a wrong cluster.
func TestFaults(t *testing.T) {
	const perCluster = 12
	clusters := []string{"alpha", "beta", "gamma"}
	tests := []struct {
		name  string
		fault func(b *bus)
		// after the first invocation, before the rest
		midRun    func(t *testing.T, b *bus)
		wantRetry bool
		// gammaDropped: gamma's events end dropped as no_queue rather than forwarded
		gammaDropped bool
	}{
		{name: "no fault"},
		{name: "cluster queue answers 500", wantRetry: true, fault: func(b *bus) {
			b.SQS.SetFault(harness.QueueOf("beta"), &sqsemu.Fault{Status: 500, Code: "InternalError", Times: 2})
		}},
		{name: "cluster queue throttled", wantRetry: true, fault: func(b *bus) {
			b.SQS.SetFault(harness.QueueOf("beta"), &sqsemu.Fault{Status: 400, Code: "RequestThrottled", Times: 2})
		}},
		{name: "batch entry failed inside HTTP 200", wantRetry: true, fault: func(b *bus) {
			b.SQS.SetFault(harness.QueueOf("alpha"), &sqsemu.Fault{FailEntry: 2, Times: 1})
		}},
		{name: "EC2 throttled", wantRetry: true, fault: func(b *bus) { b.EC2.Throttle(1) }},
		{name: "cluster queue deleted mid-run", wantRetry: true, gammaDropped: true, midRun: func(t *testing.T, b *bus) {
			if err := b.DeleteQueue(context.Background(), harness.QueueOf("gamma")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBus(t, clusters...)
			owner := map[string]string{} // instance -> cluster
			var events []string
			for i := range perCluster * len(clusters) {
				id := fmt.Sprintf("i-%017x", i+1)
				c := clusters[i%len(clusters)]
				owner[id] = c
				b.EC2.Put(id, map[string]string{"eks:eks-cluster-name": c})
				events = append(events, spotEvent(id))
			}
			// Every gamma event goes in the second half, after the first invocation; the first batch warms
			// gamma's URL cache.
			b.publish(events[:10]...)
			if tt.fault != nil {
				tt.fault(b)
			}
			first := b.pollOnce()
			// Read what the first invocation delivered before any queue is deleted.
			got := map[string][]string{}
			for _, c := range clusters {
				got[c] = b.received(c)
			}
			if tt.midRun != nil {
				tt.midRun(t, b)
			}
			b.publish(events[10:]...)
			rest := b.drain()
			retried := first.Failed
			for _, r := range rest {
				retried += r.Failed
			}
			if tt.wantRetry != (retried > 0) {
				t.Errorf("messages redelivered = %d; want some: %t", retried, tt.wantRetry)
			}

			forwarded := map[string]string{} // instance -> cluster whose queue holds its event
			for _, c := range clusters {
				if !tt.gammaDropped || c != "gamma" {
					got[c] = append(got[c], b.received(c)...)
				}
				for _, body := range got[c] {
					p, err := karpenter.Parse(body)
					if err != nil || p.Kind != "spot_interrupted" || len(p.InstanceIDs) != 1 {
						t.Fatalf("Karpenter reads %s's message as %+v, %v", c, p, err)
					}
					id := p.InstanceIDs[0]
					if owner[id] != c {
						t.Errorf("event of %s (owned by %s) reached %s", id, owner[id], c)
					}
					if prev, dup := forwarded[id]; dup {
						t.Errorf("event of %s reached %s twice (first %s)", id, c, prev)
					}
					forwarded[id] = c
				}
			}
			drops := b.dropReasons()
			for id, c := range owner {
				_, fwd := forwarded[id]
				reasons := drops["ev-"+id]
				switch {
				case tt.gammaDropped && c == "gamma" && !fwd:
					// Gamma's events sent after its queue vanished are dropped as no_queue, once each.
					if !slices.Equal(reasons, []string{"no_queue"}) {
						t.Errorf("event of %s (gamma): not forwarded, drop reasons %v, want [no_queue]", id, reasons)
					}
				case !fwd:
					t.Errorf("event of %s (owned by %s) was lost: not forwarded, drop reasons %v", id, c, reasons)
				case len(reasons) > 0:
					t.Errorf("event of %s was forwarded and also dropped (%v)", id, reasons)
				}
			}
			if left := b.consume(harness.CentralQueue); len(left) != 0 {
				t.Errorf("central queue still holds %d messages", len(left))
			}
		})
	}
}

func spotEvent(id string) string {
	return `{"version":"0","id":"ev-` + id + `","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2",` +
		`"account":"` + sqsemu.Account + `","time":"2026-11-21T12:00:00Z","region":"us-east-1","resources":["arn:aws:ec2:us-east-1:` +
		sqsemu.Account + `:instance/` + id + `"],"detail":{"instance-id":"` + id + `","instance-action":"terminate"}}`
}
