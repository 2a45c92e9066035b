package route

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

const (
	memberA = "222222222222"
	memberB = "333333333333"
	unknown = "444444444444"
)

func spotIn(acct, id string) string {
	return strings.Replace(spot(id), `"account":"`+account+`"`, `"account":"`+acct+`"`, 1)
}

// accountsHarness is a router for the bus's account and two members, each with its own EC2.
func accountsHarness(t *testing.T, hub, a, b *fakeEC2, clusters ...string) *harness {
	t.Helper()
	h := &harness{ec2: hub, sqs: newSQS(clusters...), logs: &bytes.Buffer{}, emf: &bytes.Buffer{}, redeliver: &fakeRedeliverer{later: map[string]int{}}}
	opts := owner.Options{CacheSize: 1000, OwnerTTL: time.Hour, NoOwnerTTL: time.Hour}
	h.r = New(
		accounts.New(owner.New(hub, opts), accounts.Options{
			ReaderRole: func(account string) string {
				return map[string]string{memberA: "reader-a", memberB: "reader-b"}[account]
			},
			NewResolver: func(role string) (accounts.Resolver, error) {
				return map[string]accounts.Resolver{"reader-a": owner.New(a, opts), "reader-b": owner.New(b, opts)}[role], nil
			},
		}),
		forward.New(h.sqs, forward.Options{CacheSize: 100, URLTTL: time.Hour, MissingTTL: time.Hour}),
		Options{
			QueuePrefix: qprefix, Bus: "kib-test", Hub: account, Accounts: []string{account, memberA, memberB}, SendConcurrency: 4,
			Redeliverer: h.redeliver, Metrics: metrics.NewWriter(h.emf, "NS", "test"), Log: testLogger(h.logs),
			Now: func() time.Time { return time.Date(2026, 11, 21, 12, 0, 10, 0, time.UTC) },
		})
	return h
}

// TestMemberAccounts: each event is looked up in its own account's EC2 and forwarded to the owning cluster's
// queue in that account; a canary of a member reaches the queue in that member; an event of an account not on
// the bus is dropped as unknown_account without any lookup.
func TestMemberAccounts(t *testing.T) {
	hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
	a := &fakeEC2{owners: map[string]string{instance(2): "beta"}}
	b := &fakeEC2{owners: map[string]string{instance(3): "gamma", instance(2): "wrong"}}
	h := accountsHarness(t, hub, a, b, "alpha", "beta", "gamma")
	canary := strings.Replace(fixture(t, "canary.json"), `"account":"`+account+`"`, `"account":"`+memberA+`"`, 1)
	canary = strings.Replace(canary, `["alpha","beta"]`, `["beta"]`, 1)
	// verify, run in the bus's account, names the account of a member's cluster in its canary.
	fromHub := strings.Replace(strings.Replace(fixture(t, "canary.json"), `["alpha","beta"]`, `["gamma"]`, 1), `"bus":"kib-test",`, `"bus":"kib-test","account":"`+memberB+`",`, 1)
	toStranger := strings.Replace(fromHub, `"account":"`+memberB+`"`, `"account":"`+unknown+`"`, 1)
	bodies := []string{spotIn(account, instance(1)), spotIn(memberA, instance(2)), spotIn(memberB, instance(3)), spotIn(unknown, instance(4)), canary, fromHub, toStranger}
	if resp := h.handle(t, bodies...); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures = %v", failedIDs(resp))
	}
	want := map[string][]string{
		"https://sqs/" + account + "/" + queuename.For(qprefix, "alpha"): {bodies[0]},
		"https://sqs/" + memberA + "/" + queuename.For(qprefix, "beta"):  {bodies[1], canary},
		"https://sqs/" + memberB + "/" + queuename.For(qprefix, "gamma"): {bodies[2], fromHub},
	}
	if fmt.Sprint(h.sqs.byURL) != fmt.Sprint(want) {
		t.Errorf("deliveries = %v\nwant %v", h.sqs.byURL, want)
	}
	for name, f := range map[string]*fakeEC2{"hub": hub, "member A": a, "member B": b} {
		if f.calls != 1 {
			t.Errorf("%s's EC2 answered %d calls, want 1", name, f.calls)
		}
	}
	if got := h.dropLogs(t); fmt.Sprint(got) != fmt.Sprint(map[string][]string{"m3": {string(contract.ReasonUnknownAccount)}, "m6": {string(contract.ReasonUnknownAccount)}}) {
		t.Errorf("drops = %v, want the unknown account's event only", got)
	}
	if got := h.metric(t, contract.DimReason, string(contract.ReasonUnknownAccount), contract.MetricDropped); got != 2 {
		t.Errorf("Dropped{Reason=unknown_account} = %v", got)
	}
}

// TestMemberFailuresStayTheirs: a member whose EC2 throttles (or whose role cannot be assumed) gets its events
// retried, never dropped, while the other accounts' are forwarded; lookups run in parallel, so a slow account
// does not hold up the others (member B's lookup waits for the hub's: run one after the other, B first, it
// would wait out its guard and fail).
func TestMemberFailuresStayTheirs(t *testing.T) {
	hubDone := make(chan struct{})
	hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
	var once sync.Once
	a := &fakeEC2{owners: map[string]string{instance(2): "beta"}, err: &smithy.GenericAPIError{Code: "RequestLimitExceeded"}}
	b := &fakeEC2{owners: map[string]string{instance(3): "gamma"}}
	b.before = func() {
		select {
		case <-hubDone:
		case <-time.After(10 * time.Second):
			b.mu.Lock()
			b.err = errors.New("the hub's lookup never ran while member B's waited")
			b.mu.Unlock()
		}
	}
	hub.before = func() { once.Do(func() { close(hubDone) }) }
	h := accountsHarness(t, hub, a, b, "alpha", "beta", "gamma")
	resp := h.handle(t, spotIn(memberB, instance(3)), spotIn(memberA, instance(2)), spotIn(account, instance(1)))
	if got := failedIDs(resp); !slices.Equal(got, []string{"m1"}) {
		t.Fatalf("retried = %v, want member A's event only", got)
	}
	for _, c := range []string{"alpha", "gamma"} {
		if len(h.received(c)) != 1 {
			t.Errorf("%s received %d events, want 1", c, len(h.received(c)))
		}
	}
	if len(h.dropLogs(t)) != 0 {
		t.Errorf("drops = %v, want none: a failed lookup is retried", h.dropLogs(t))
	}
}

// TestLookupsInFlightAreBounded: the accounts' DescribeInstances calls run at once, but never more than
// SEND_CONCURRENCY of them: the figure EC2's quota and the sizing model count on (docs/performance.md).
func TestLookupsInFlightAreBounded(t *testing.T) {
	const accountsN, limit = 12, 3
	var mu sync.Mutex
	inFlight, most := 0, 0
	track := func() {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		time.Sleep(20 * time.Millisecond) // holds the call open, so the others would pile up if unbounded
		mu.Lock()
		inFlight--
		mu.Unlock()
	}
	ec2s := map[string]*fakeEC2{}
	var bodies []string
	for i := range accountsN {
		acct := fmt.Sprintf("%012d", 500000000000+i)
		ec2s["reader-"+acct] = &fakeEC2{owners: map[string]string{instance(100 + i): "alpha"}, before: track}
		bodies = append(bodies, spotIn(acct, instance(100+i)))
	}
	opts := owner.Options{CacheSize: 1000, OwnerTTL: time.Hour, NoOwnerTTL: time.Hour}
	h := &harness{ec2: &fakeEC2{}, sqs: newSQS("alpha"), logs: &bytes.Buffer{}, emf: &bytes.Buffer{}, redeliver: &fakeRedeliverer{later: map[string]int{}}}
	h.r = New(
		accounts.New(owner.New(h.ec2, opts), accounts.Options{
			ReaderRole:  func(a string) string { return "reader-" + a },
			NewResolver: func(role string) (accounts.Resolver, error) { return owner.New(ec2s[role], opts), nil },
		}),
		forward.New(h.sqs, forward.Options{CacheSize: 100, URLTTL: time.Hour, MissingTTL: time.Hour}),
		Options{QueuePrefix: qprefix, Bus: "kib-test", Hub: account, SendConcurrency: limit, Metrics: metrics.NewWriter(h.emf, "NS", "test"),
			Log: testLogger(h.logs)})
	if resp := h.handle(t, bodies...); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failedIDs(resp))
	}
	for role, f := range ec2s {
		if f.calls != 1 {
			t.Errorf("%s: %d DescribeInstances, want 1", role, f.calls)
		}
	}
	if most > limit || most < 2 {
		t.Errorf("%d lookups in flight at most, want 2 to SEND_CONCURRENCY (%d): bounded, and in parallel", most, limit)
	}
}
