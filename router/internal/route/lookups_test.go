package route

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
)

// resolverFunc is a Resolver of a function.
type resolverFunc func(ctx context.Context, account, region string, ids []string) map[string]owner.Owner

func (f resolverFunc) Resolve(ctx context.Context, account, region string, ids []string) map[string]owner.Owner {
	return f(ctx, account, region, ids)
}

// TestOnlyEventsAreLookedUp: the owners are looked up for the instances of the events only, once per account and
// region: a canary names its clusters and an intake request names nothing, so neither is looked up.
func TestOnlyEventsAreLookedUp(t *testing.T) {
	h := newHarness(nil, "alpha")
	var asked []string
	h.r.owners = resolverFunc(func(_ context.Context, account, region string, ids []string) map[string]owner.Owner {
		asked = append(asked, fmt.Sprint(account, "/", region, ids))
		return map[string]owner.Owner{instance(1): {Cluster: "alpha"}}
	})
	canaryElsewhere := strings.Replace(strings.Replace(fixture(t, "canary.json"), `["alpha","beta"]`, `["alpha"]`, 1), region, "eu-west-1", 1)
	in := batch(spot(instance(1)), canaryElsewhere)
	in.Records = append(in.Records, intakeRequest(idRedrive+":op", time.Now()))
	if _, err := h.r.Handle(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprint(account, "/", region, []string{instance(1)}); fmt.Sprint(asked) != "["+want+"]" {
		t.Errorf("looked up %q, want only %q", asked, want)
	}
}

// TestDropLinesSayWhatWasDropped: each drop's line names what it can of the message: an event's id, kind and
// instances; a body that is no interruption, its event's id; an unparseable one, the start of its body; a refusal
// on the sender (forged, unattributable, unknown account), the sender and the account; nothing of a sender
// otherwise.
func TestDropLinesSayWhatWasDropped(t *testing.T) {
	hub := &fakeEC2{owners: map[string]string{instance(1): ""}}
	a := &fakeEC2{owners: map[string]string{instance(2): "beta"}}
	h := accountsHarness(t, hub, a, &fakeEC2{}, "beta")
	h.r.senders = &fakeSenders{results: map[string]sender.Result{
		"AROAA:s": {Verdict: sender.Genuine},
		"AROAX:s": {Verdict: sender.Forged, Err: errors.New("forged")},
		"AROAU:s": {Verdict: sender.Unattributable, Err: errors.New("unattributable")},
		"AROAN:s": {Verdict: sender.NotOnBus, Err: errors.New("not on the bus")},
	}}
	running := strings.Replace(fixture(t, "state-change-terminated.json"), `"terminated"`, `"running"`, 1)
	bodies := []string{spot(instance(1)), running, "not json at all", spotIn(memberA, instance(2)), spotIn(memberA, instance(2)), spotIn(memberA, instance(2))}
	in := batch(bodies...)
	for i, s := range []string{"AROAA:s", "AROAA:s", "AROAA:s", "AROAX:s", "AROAU:s", "AROAN:s"} {
		in.Records[i].Attributes[sender.Attribute] = s
	}
	if _, err := h.r.Handle(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ key, want string }{
		{contract.LogEventID, "map[m0:[ev-" + instance(1) + "] m1:[3e5527d7-bb36-4607-3370-4164db56a40e] m2:[] m3:[ev-" + instance(2) + "] m4:[ev-" + instance(2) + "] m5:[ev-" + instance(2) + "]]"},
		{"kind", "map[m0:[spot_interruption] m1:[] m2:[] m3:[spot_interruption] m4:[spot_interruption] m5:[spot_interruption]]"},
		{"instances", "map[m0:[[" + instance(1) + "]] m1:[] m2:[] m3:[[" + instance(2) + "]] m4:[[" + instance(2) + "]] m5:[[" + instance(2) + "]]]"},
		{"bodyPrefix", "map[m0:[] m1:[] m2:[not json at all] m3:[] m4:[] m5:[]]"},
		{contract.LogSender, "map[m0:[] m1:[] m2:[] m3:[AROAX:s] m4:[AROAU:s] m5:[AROAN:s]]"},
		{"account", "map[m0:[] m1:[] m2:[] m3:[" + memberA + "] m4:[" + memberA + "] m5:[" + memberA + "]]"},
	} {
		if got := fmt.Sprint(h.logsOf(t, contract.LogMessageDropped, "messageId", c.key)); got != c.want {
			t.Errorf("drop lines' %s: %s, want %s", c.key, got, c.want)
		}
	}
}
