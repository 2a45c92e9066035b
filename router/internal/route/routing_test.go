package route

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

func TestEveryKindReachesItsOwner(t *testing.T) {
	owners := map[string]string{
		"i-0a1b2c3d4e5f60001": "alpha", "i-0a1b2c3d4e5f60002": "beta", "i-0a1b2c3d4e5f60003": "gamma",
		"i-0a1b2c3d4e5f60004": "alpha", "i-0a1b2c3d4e5f60005": "beta", "i-0a1b2c3d4e5f60006": "gamma",
		"i-0a1b2c3d4e5f60007": "alpha",
	}
	h := newHarness(owners, "alpha", "beta", "gamma")
	spotB, rebalance, term := fixture(t, "spot-interruption.json"), fixture(t, "rebalance-recommendation.json"), fixture(t, "state-change-terminated.json")
	stopping, health, capres := fixture(t, "state-change-stopping.json"), fixture(t, "health-scheduled-change.json"), fixture(t, "capacity-reservation-interruption.json")
	resp := h.handle(t, spotB, rebalance, term, stopping, health, capres)
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v, want none", failedIDs(resp))
	}
	want := map[string][]string{
		"alpha": {spotB, stopping, capres},
		"beta":  {rebalance, health},
		"gamma": {term, health},
	}
	for cluster, bodies := range want {
		got := h.received(cluster)
		slices.Sort(got)
		slices.Sort(bodies)
		if !slices.Equal(got, bodies) {
			t.Errorf("%s received %d bodies, want %d, byte for byte:\n got %q\nwant %q", cluster, len(got), len(bodies), got, bodies)
		}
	}
	if got := h.metric(t, contract.DimCluster, "gamma", contract.MetricForwarded); got != 2 {
		t.Errorf("Forwarded{Cluster=gamma} = %v, want 2", got)
	}
	if got := h.metric(t, contract.DimKind, "scheduled_change", contract.MetricReceived); got != 1 {
		t.Errorf("Received{Kind=scheduled_change} = %v, want 1", got)
	}
}

func TestHealthEventReachesEachOwningClusterOnce(t *testing.T) {
	a1, a2, b1, none := instance(1), instance(2), instance(3), instance(4)
	h := newHarness(map[string]string{a1: "a", a2: "a", b1: "b", none: ""}, "a", "b")
	health := `{"version":"0","id":"h","detail-type":"AWS Health Event","source":"aws.health","account":"` + account +
		`","time":"2026-11-21T12:00:00Z","region":"` + region + `","resources":[],"detail":{"service":"EC2",` +
		`"eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"` + a1 + `"},{"entityValue":"` + b1 +
		`"},{"entityValue":"` + a2 + `"},{"entityValue":"` + none + `"},{"entityValue":"` + a1 + `"}]}}`
	if resp := h.handle(t, health); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v", failedIDs(resp))
	}
	for _, c := range []string{"a", "b"} {
		if got := h.received(c); len(got) != 1 || got[0] != health {
			t.Errorf("cluster %s received %d copies, want exactly 1 unchanged", c, len(got))
		}
	}
}

func TestDrops(t *testing.T) {
	owned, untagged, unknown, orphan, badTag, loop := instance(1), instance(2), instance(3), instance(4), instance(5), instance(6)
	owners := map[string]string{owned: "a", untagged: "", orphan: "no-queue-cluster", badTag: "not/a cluster", loop: "central"}
	pending := strings.Replace(fixture(t, "state-change-terminated.json"), `"terminated"`, `"pending"`, 1)
	tests := []struct {
		name, body string
		reason     contract.Reason
	}{
		{"not JSON", "not json", contract.ReasonUnparseable},
		{"no instance id", strings.Replace(spot(owned), `"instance-id":"`+owned+`",`, "", 1), contract.ReasonUnparseable},
		{"pending state", pending, contract.ReasonNotInterruption},
		{"other source", strings.Replace(spot(owned), `"aws.ec2"`, `"aws.s3"`, 1), contract.ReasonNotInterruption},
		{"untagged instance", spot(untagged), contract.ReasonNoOwner},
		{"instance unknown to EC2", spot(unknown), contract.ReasonNoOwner},
		{"owner without a queue", spot(orphan), contract.ReasonNoQueue},
		{"owner tag no cluster can have", spot(badTag), contract.ReasonNoQueue},
		// Were a bus queue ever a cluster's, the router must not feed the bus its own output.
		{"owner whose queue is the bus's own", spot(loop), contract.ReasonNoQueue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(owners, "a", "central")
			// The good message in the same batch is forwarded regardless.
			resp := h.handle(t, tt.body, spot(owned))
			if len(resp.BatchItemFailures) != 0 {
				t.Fatalf("failures = %v, want none: a drop is acknowledged", failedIDs(resp))
			}
			if got := h.dropLogs(t); !slices.Equal(got["m0"], []string{string(tt.reason)}) || len(got) != 1 {
				t.Errorf("drop logs = %v, want m0 logged once with %s", got, tt.reason)
			}
			if got := h.metric(t, contract.DimReason, string(tt.reason), contract.MetricDropped); got != 1 {
				t.Errorf("Dropped{Reason=%s} = %v, want 1", tt.reason, got)
			}
			if got := h.received("a"); len(got) != 1 || got[0] != spot(owned) {
				t.Errorf("cluster a received %q, want only the good event", got)
			}
			if got := h.received("central"); len(got) != 0 {
				t.Errorf("the bus's own queue received %d events", len(got))
			}
		})
	}
}

func TestTransientFailuresRetryOnlyTheirMessages(t *testing.T) {
	a, b := instance(1), instance(2)
	owners := map[string]string{a: "a", b: "b"}
	throttle := &smithy.GenericAPIError{Code: "RequestLimitExceeded", Message: "slow down"}
	tests := []struct {
		name      string
		setup     func(h *harness)
		wantRetry []string
		wantA     int
	}{
		{"EC2 throttled", func(h *harness) { h.ec2.err = throttle }, []string{"m0", "m1", "m2"}, 0},
		{"queue b answers 500", func(h *harness) {
			h.sqs.sendErr[queuename.For(qprefix, "b")] = &smithy.GenericAPIError{Code: "InternalError", Fault: smithy.FaultServer}
		}, []string{"m1"}, 2},
		{"queue b throttled", func(h *harness) {
			h.sqs.sendErr[queuename.For(qprefix, "b")] = &smithy.GenericAPIError{Code: "RequestThrottled"}
		}, []string{"m1"}, 2},
		{"entry failed inside HTTP 200", func(h *harness) { h.sqs.failEntry[queuename.For(qprefix, "a")] = 1 }, []string{"m2"}, 1},
		{"queue b deleted after its URL was cached", func(h *harness) {
			h.prime(spot(b)) // caches b's URL
			h.sqs.sendErr[queuename.For(qprefix, "b")] = &sqstypes.QueueDoesNotExist{}
		}, []string{"m1"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(owners, "a", "b")
			tt.setup(h)
			resp := h.handle(t, spot(a), spot(b), strings.Replace(spot(a), `"ev-`, `"ev2-`, 1))
			if got := failedIDs(resp); !slices.Equal(got, tt.wantRetry) {
				t.Errorf("BatchItemFailures = %v, want %v", got, tt.wantRetry)
			}
			if got := len(h.received("a")); got != tt.wantA {
				t.Errorf("cluster a received %d, want %d", got, tt.wantA)
			}
			if got := h.metric(t, contract.DimBus, "test", contract.MetricRetried); got != float64(len(tt.wantRetry)) {
				t.Errorf("Retried = %v, want %d", got, len(tt.wantRetry))
			}
			if len(h.dropLogs(t)) != 0 {
				t.Errorf("a transient failure was logged as a drop")
			}
			// Each retried message, and only those, is brought back after a backoff on its own receive count.
			want := map[string]int{}
			for _, id := range tt.wantRetry {
				n, _ := strconv.Atoi(strings.TrimPrefix(id, "m"))
				want[fmt.Sprintf("rh%d", n)] = n + 1
			}
			if fmt.Sprint(h.redeliver.later) != fmt.Sprint(want) {
				t.Errorf("redelivered %v, want %v (receipt handle -> receive count)", h.redeliver.later, want)
			}
		})
	}
}

// TestRetryComesBackEvenWhenItsVisibilityCannotBeChanged: a failed ChangeMessageVisibility only delays the
// message to the queue's visibility timeout; it is still listed for redelivery, and the log says why it is late.
func TestRetryComesBackEvenWhenItsVisibilityCannotBeChanged(t *testing.T) {
	a := instance(1)
	h := newHarness(map[string]string{a: "a"}, "a")
	h.sqs.sendErr[queuename.For(qprefix, "a")] = errors.New("connection reset")
	h.redeliver.err = errors.New("throttled")
	if got := failedIDs(h.handle(t, spot(a))); !slices.Equal(got, []string{"m0"}) {
		t.Fatalf("BatchItemFailures = %v, want m0", got)
	}
	if !strings.Contains(h.logs.String(), `"redeliveryError":"throttled"`) {
		t.Errorf("the failed visibility change is not logged:\n%s", h.logs.String())
	}
}

func TestHealthEventRetriedWhenOneOwnerFails(t *testing.T) {
	a, b := instance(1), instance(2)
	h := newHarness(map[string]string{a: "a", b: "b"}, "a", "b")
	h.sqs.sendErr[queuename.For(qprefix, "b")] = errors.New("connection reset")
	health := `{"version":"0","id":"h","detail-type":"AWS Health Event","source":"aws.health","account":"` + account +
		`","time":"2026-11-21T12:00:00Z","region":"` + region + `","resources":[],"detail":{"service":"EC2",` +
		`"eventTypeCategory":"scheduledChange","affectedEntities":[{"entityValue":"` + a + `"},{"entityValue":"` + b + `"}]}}`
	resp := h.handle(t, health)
	if got := failedIDs(resp); !slices.Equal(got, []string{"m0"}) {
		t.Fatalf("BatchItemFailures = %v, want m0: one owner did not get it", got)
	}
}

func TestCallCounts(t *testing.T) {
	tests := []struct {
		name               string
		messages, clusters int
		wantEC2, wantURL   int
	}{
		{"100 over 5 clusters", 100, 5, 1, 5},
		{"7 over 1 cluster", 7, 1, 1, 1},
		{"250 over 3 clusters", 250, 3, 2, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			owners := map[string]string{}
			var bodies []string
			perCluster := make([]int, tt.clusters)
			for i := range tt.messages {
				id := instance(i + 1)
				owners[id] = fmt.Sprintf("c%d", i%tt.clusters)
				perCluster[i%tt.clusters]++
				bodies = append(bodies, spot(id))
			}
			want := 0
			for _, n := range perCluster {
				want += (n + 9) / 10 // ceil(n/10) SendMessageBatch calls per cluster
			}
			var names []string
			for c := range tt.clusters {
				names = append(names, fmt.Sprintf("c%d", c))
			}
			h := newHarness(owners, names...)
			if resp := h.handle(t, bodies...); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("failures: %v", failedIDs(resp))
			}
			if h.sqs.sends != want {
				t.Errorf("SendMessageBatch calls = %d, want sum of ceil(n/10) = %d", h.sqs.sends, want)
			}
			if h.ec2.calls != tt.wantEC2 {
				t.Errorf("DescribeInstances calls = %d, want %d (ceil(ids/200))", h.ec2.calls, tt.wantEC2)
			}
			if h.sqs.urlCalls != tt.wantURL {
				t.Errorf("GetQueueUrl calls = %d, want %d", h.sqs.urlCalls, tt.wantURL)
			}
			h.ec2.calls, h.sqs.sends, h.sqs.urlCalls = 0, 0, 0
			h.handle(t, bodies...)
			if h.ec2.calls != 0 || h.sqs.urlCalls != 0 || h.sqs.sends != want {
				t.Errorf("warm batch: DescribeInstances %d, GetQueueUrl %d, SendMessageBatch %d; want 0, 0, %d",
					h.ec2.calls, h.sqs.urlCalls, h.sqs.sends, want)
			}
		})
	}
}

func TestCancelledContextFailsTheBatch(t *testing.T) {
	h := newHarness(nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.r.Handle(ctx, batch(spot(instance(1)))); err == nil {
		t.Fatal("Handle with a cancelled context returned no error")
	}
}

func TestEmptyBatch(t *testing.T) {
	h := newHarness(nil)
	if resp := h.handle(t); len(resp.BatchItemFailures) != 0 || h.ec2.calls != 0 || h.sqs.sends != 0 {
		t.Fatalf("empty batch made calls or failed: %+v", resp)
	}
}
