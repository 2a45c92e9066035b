package route

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/canary"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// canaryLogs returns the clusters of the "canary forwarded" log lines, by event id.
func (h *harness) canaryLogs(t *testing.T) map[string][]string {
	t.Helper()
	return h.logsOf(t, contract.LogCanaryForwarded, contract.LogEventID, contract.LogCluster)
}

func TestCanaryReachesTheNamedClustersWithoutLookup(t *testing.T) {
	h := newHarness(map[string]string{}, "alpha", "beta", "gamma")
	canary := fixture(t, "canary.json") // for alpha and beta
	if resp := h.handle(t, canary); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v", failedIDs(resp))
	}
	for cluster, want := range map[string]int{"alpha": 1, "beta": 1, "gamma": 0} {
		got := h.received(cluster)
		if len(got) != want || (want == 1 && got[0] != canary) {
			t.Errorf("%s received %q, want %d unchanged canary", cluster, got, want)
		}
		if m := h.metric(t, contract.DimCluster, cluster, contract.MetricCanaryForwarded); m != float64(want) {
			t.Errorf("CanaryForwarded{Cluster=%s} = %v, want %d", cluster, m, want)
		}
		if m := h.metric(t, contract.DimCluster, cluster, contract.MetricForwarded); m != 0 {
			t.Errorf("Forwarded{Cluster=%s} = %v: a canary is not an interruption", cluster, m)
		}
	}
	if h.ec2.calls != 0 {
		t.Errorf("%d DescribeInstances calls for a canary, want none", h.ec2.calls)
	}
	if got := h.canaryLogs(t)["7f7a0a6e-5c1e-4b0b-9d55-1b2a6a8c0c01"]; !slices.Equal(got, []string{"alpha", "beta"}) && !slices.Equal(got, []string{"beta", "alpha"}) {
		t.Errorf("canary log lines for %v, want one for alpha and one for beta", got)
	}
	if m := h.metric(t, contract.DimKind, string(contract.KindCanary), contract.MetricReceived); m != 1 {
		t.Errorf("Received{Kind=canary} = %v, want 1", m)
	}
}

func TestCanaryDrops(t *testing.T) {
	canary := fixture(t, "canary.json")
	tests := []struct {
		name, body string
		reason     contract.Reason // "" when forwarded
		received   int             // by alpha
	}{
		{"a cluster not on the bus", strings.Replace(canary, `["alpha","beta"]`, `["gamma"]`, 1), contract.ReasonNoQueue, 0},
		{"one cluster on the bus, one not", strings.Replace(canary, `["alpha","beta"]`, `["gamma","alpha"]`, 1), "", 1},
		{"another bus's", strings.Replace(canary, `"bus":"kib-test"`, `"bus":"kib-other"`, 1), contract.ReasonNotInterruption, 0},
		{"a name no queue can bear", strings.Replace(canary, `["alpha","beta"]`, `["a b"]`, 1), contract.ReasonUnparseable, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(map[string]string{}, "alpha")
			if resp := h.handle(t, tt.body); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("failures = %v, want none: a canary is never retried for want of a queue", failedIDs(resp))
			}
			want := map[string][]string{}
			if tt.reason != "" {
				want["m0"] = []string{string(tt.reason)}
			}
			if got := h.dropLogs(t); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("drop logs = %v, want %v", got, want)
			}
			if got := h.received("alpha"); len(got) != tt.received {
				t.Errorf("alpha received %d canaries, want %d", len(got), tt.received)
			}
			if h.ec2.calls != 0 {
				t.Errorf("%d DescribeInstances calls for a canary, want none", h.ec2.calls)
			}
		})
	}
}

// TestCanaryOfAnotherAccount: a canary may name clusters of another account only when it was put in the hub's own
// account (where make verify runs); put in a member, or, on a bus of one account, anywhere, it is dropped as
// canary_forbidden, logged and counted, and reaches nobody.
func TestCanaryOfAnotherAccount(t *testing.T) {
	naming := func(putIn, to string) string {
		c := strings.Replace(fixture(t, "canary.json"), `"account":"`+account+`"`, `"account":"`+putIn+`"`, 1)
		c = strings.Replace(c, `["alpha","beta"]`, `["gamma"]`, 1)
		return strings.Replace(c, `"bus":"kib-test",`, `"bus":"kib-test","account":"`+to+`",`, 1)
	}
	h := accountsHarness(t, &fakeEC2{}, &fakeEC2{}, &fakeEC2{}, "gamma")
	bodies := []string{naming(memberA, memberB), naming(memberB, account), naming(account, memberB)}
	if resp := h.handle(t, bodies...); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v", failedIDs(resp))
	}
	if got := h.sqs.byURL["https://sqs/"+memberB+"/"+queuename.For(qprefix, "gamma")]; !slices.Equal(got, []string{bodies[2]}) {
		t.Errorf("member B's gamma received %d canaries, want the hub's only", len(got))
	}
	if got := h.sqs.byURL["https://sqs/"+account+"/"+queuename.For(qprefix, "gamma")]; len(got) != 0 {
		t.Errorf("the hub's gamma received %d canaries put in member B", len(got))
	}
	want := map[string][]string{"m0": {string(contract.ReasonCanaryForbidden)}, "m1": {string(contract.ReasonCanaryForbidden)}}
	if got := h.dropLogs(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("drops = %v, want %v", got, want)
	}
	if got := h.metric(t, contract.DimReason, string(contract.ReasonCanaryForbidden), contract.MetricDropped); got != 2 {
		t.Errorf("Dropped{Reason=canary_forbidden} = %v, want 2", got)
	}

	// A bus of one account (no hub): a canary naming another account is forbidden too.
	single := newHarness(map[string]string{}, "gamma")
	if resp := single.handle(t, naming(account, memberB)); len(resp.BatchItemFailures) != 0 {
		t.Fatal("retried")
	}
	if got := single.dropLogs(t)["m0"]; !slices.Equal(got, []string{string(contract.ReasonCanaryForbidden)}) {
		t.Errorf("single-account bus: drop = %v, want canary_forbidden", got)
	}
}

// TestCanaryRateLimitKey: the limit is per cluster queue, keyed on the cluster's own account (the account the
// canary names) and the cluster, not on the account the canary was put in: a canary put in the hub naming member
// B's gamma and one put in B naming its own gamma share a slot. A failed delivery gives back that same slot, so the
// retry goes through whichever account put the canary.
func TestCanaryRateLimitKey(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 10, 0, time.UTC)
	naming := func(putIn, to string) string {
		c := strings.Replace(fixture(t, "canary.json"), `"account":"`+account+`"`, `"account":"`+putIn+`"`, 1)
		c = strings.Replace(c, `["alpha","beta"]`, `["gamma"]`, 1)
		return strings.Replace(c, `"bus":"kib-test",`, `"bus":"kib-test","account":"`+to+`",`, 1)
	}
	gammaB := "https://sqs/" + memberB + "/" + queuename.For(qprefix, "gamma")

	h := accountsHarness(t, &fakeEC2{}, &fakeEC2{}, &fakeEC2{}, "gamma")
	h.r.canaries = canary.NewLimiter(30*time.Second, 100, func() time.Time { return now })
	h.handle(t, naming(account, memberB))
	h.handle(t, naming(memberB, memberB))
	if got := len(h.sqs.byURL[gammaB]); got != 1 {
		t.Errorf("member B's gamma received %d canaries in one interval (one put in the hub, one in B), want 1", got)
	}

	h = accountsHarness(t, &fakeEC2{}, &fakeEC2{}, &fakeEC2{}, "gamma")
	h.r.canaries = canary.NewLimiter(30*time.Second, 100, func() time.Time { return now })
	h.sqs.sendErr = map[string]error{queuename.For(qprefix, "gamma"): &smithy.GenericAPIError{Code: "ServiceUnavailable"}}
	if resp := h.handle(t, naming(account, memberB)); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("a failed canary delivery was not retried: %v", failedIDs(resp))
	}
	h.sqs.sendErr = nil
	if resp := h.handle(t, naming(account, memberB)); len(resp.BatchItemFailures) != 0 || len(h.sqs.byURL[gammaB]) != 1 {
		t.Errorf("the retry of a canary put in the hub for member B was held back: B's gamma received %d, failures %v",
			len(h.sqs.byURL[gammaB]), failedIDs(resp))
	}
}

// TestCanaryRateLimit: one canary per cluster per interval reaches its queue; the excess is dropped as
// canary_rate_limited and counted; another cluster, or the same cluster once the interval has passed, is not held
// back; a canary naming a held-back cluster and a free one reaches the free one; a failed delivery gives its slot
// back, so its retry is delivered.
func TestCanaryRateLimit(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 10, 0, time.UTC)
	h := newHarness(map[string]string{}, "alpha", "beta")
	h.r.canaries = canary.NewLimiter(30*time.Second, 100, func() time.Time { return now })
	forCluster := func(cs string) string { return strings.Replace(fixture(t, "canary.json"), `["alpha","beta"]`, cs, 1) }
	alpha := forCluster(`["alpha"]`)

	h.handle(t, alpha, alpha, alpha)
	if got := len(h.received("alpha")); got != 1 {
		t.Fatalf("alpha received %d of 3 canaries in one interval, want 1", got)
	}
	if got := h.metric(t, contract.DimReason, string(contract.ReasonCanaryRateLimited), contract.MetricDropped); got != 2 {
		t.Errorf("Dropped{Reason=canary_rate_limited} = %v, want 2", got)
	}
	h.handle(t, forCluster(`["alpha","beta"]`))
	if len(h.received("alpha")) != 1 || len(h.received("beta")) != 1 {
		t.Errorf("alpha and beta received %d and %d, want 1 each: beta was free", len(h.received("alpha")), len(h.received("beta")))
	}
	now = now.Add(30 * time.Second)
	h.handle(t, alpha)
	if got := len(h.received("alpha")); got != 2 {
		t.Errorf("after the interval alpha received %d in all, want 2", got)
	}

	h.sqs.sendErr = map[string]error{queuename.For(qprefix, "beta"): &smithy.GenericAPIError{Code: "ServiceUnavailable"}}
	now = now.Add(time.Minute)
	if resp := h.handle(t, forCluster(`["beta"]`)); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("a failed canary delivery was not retried: %v", failedIDs(resp))
	}
	h.sqs.sendErr = nil
	if resp := h.handle(t, forCluster(`["beta"]`)); len(resp.BatchItemFailures) != 0 || len(h.received("beta")) != 2 {
		t.Errorf("the retry of a failed canary was held back: beta received %d, failures %v", len(h.received("beta")), failedIDs(resp))
	}

	// An event's failed delivery gives back no canary's token: only a canary's own does.
	now = now.Add(time.Minute)
	h.handle(t, alpha)
	h.ec2.owners[instance(7)] = "alpha"
	h.sqs.sendErr = map[string]error{queuename.For(qprefix, "alpha"): &smithy.GenericAPIError{Code: "ServiceUnavailable"}}
	if resp := h.handle(t, spot(instance(7))); len(resp.BatchItemFailures) != 1 {
		t.Fatalf("a failed delivery was not retried: %v", failedIDs(resp))
	}
	h.sqs.sendErr = nil
	before := len(h.received("alpha"))
	h.handle(t, alpha)
	if got := len(h.received("alpha")); got != before {
		t.Errorf("alpha received a second canary in one interval after an event's delivery to it failed: its token was given back")
	}
}
