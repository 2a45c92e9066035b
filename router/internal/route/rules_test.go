package route

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/event"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/intake"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
)

// is reports whether o is the outcome of verdict v and reason r whose error says want ("" anything).
func is(o outcome, v verdict, r contract.Reason, want string) bool {
	if o.verdict != v || o.reason != r {
		return false
	}
	return want == "" || (o.err != nil && strings.Contains(o.err.Error(), want))
}

func TestClassify(t *testing.T) {
	canary := func(bus string) string {
		return `{"version":"0","id":"c1","detail-type":"` + contract.DetailTypeCanary + `","source":"` + contract.SourceCanary +
			`","account":"` + account + `","time":"2026-11-21T12:00:00Z","region":"` + region + `","resources":[],` +
			`"detail":{"bus":"` + bus + `","clusters":["alpha"]}}`
	}
	running := strings.Replace(fixture(t, "state-change-terminated.json"), `"terminated"`, `"running"`, 1)
	intakeAsk := events.SQSMessage{Body: `{"intake":"dlq"}`, MessageAttributes: map[string]events.SQSMessageAttribute{
		contract.AttrIntake: {DataType: "String", StringValue: aws.String(contract.IntakeDLQ)}}}
	otherAsk := events.SQSMessage{Body: `{"intake":"dlq"}`, MessageAttributes: map[string]events.SQSMessageAttribute{
		contract.AttrIntake: {DataType: "String", StringValue: aws.String("everything")}}}
	for _, c := range []struct {
		name   string
		rec    events.SQSMessage
		kind   kind
		v      verdict
		reason contract.Reason
		why    string
	}{
		{"a spot warning", events.SQSMessage{Body: spot(instance(1))}, anEvent, pending, "", ""},
		{"an instance starting", events.SQSMessage{Body: running}, anEvent, dropped, contract.ReasonNotInterruption, "not an interruption"},
		{"no JSON", events.SQSMessage{Body: "not json"}, anEvent, dropped, contract.ReasonUnparseable, ""},
		{"a canary of this bus", events.SQSMessage{Body: canary("kib-test")}, anEvent, pending, "", ""},
		{"a canary of another bus", events.SQSMessage{Body: canary("kib-other")}, anEvent, dropped, contract.ReasonNotInterruption, `"kib-other"`},
		{"an intake request", intakeAsk, anIntake, pending, "", ""},
		{"an intake of something else", otherAsk, anEvent, dropped, contract.ReasonNotInterruption, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, _, o := classify(&c.rec, "kib-test")
			if k != c.kind || !is(o, c.v, c.reason, c.why) {
				t.Errorf("classified as %d, %+v; want %d, %s %s saying %q", k, o, c.kind, c.v, c.reason, c.why)
			}
		})
	}
}

func TestAdmit(t *testing.T) {
	const member, stranger = "222222222222", "999999999999"
	ev := func(acct string) event.Event { return event.Event{Kind: contract.KindSpotInterruption, Account: acct} }
	canaryIn := func(in, to string) event.Event { return event.Event{Kind: contract.KindCanary, Account: in, To: to} }
	bus := gate{hub: account, accounts: []string{account, member}}
	for _, c := range []struct {
		name   string
		g      gate
		ev     event.Event
		reason contract.Reason // "" admitted
	}{
		{"an event of the hub", bus, ev(account), ""},
		{"an event of a member", bus, ev(member), ""},
		{"an event of an account not on the bus", bus, ev(stranger), contract.ReasonUnknownAccount},
		{"any account on a bus that lists none", gate{}, ev(stranger), ""},
		{"a canary of a member for itself", bus, canaryIn(member, member), ""},
		{"a canary of the hub for a member", bus, canaryIn(account, member), ""},
		{"a canary of a member for the hub", bus, canaryIn(member, account), contract.ReasonCanaryForbidden},
		{"a canary for an account not on the bus", bus, canaryIn(account, stranger), contract.ReasonUnknownAccount},
		{"a canary put in an account not on the bus", bus, canaryIn(stranger, member), contract.ReasonUnknownAccount},
		{"a canary naming another account on a bus of one account", gate{}, canaryIn(member, stranger), contract.ReasonCanaryForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := c.g.admit(c.ev)
			want := pending
			if c.reason != "" {
				want = dropped
			}
			if !is(o, want, c.reason, "") {
				t.Errorf("admit: %+v, want %s %s", o, want, c.reason)
			}
		})
	}
}

func TestOwned(t *testing.T) {
	i1, i2, i3 := instance(1), instance(2), instance(3)
	known := map[string]owner.Owner{i1: {Cluster: "alpha"}, i2: {Cluster: "beta"}, i3: {}}
	denied := map[string]owner.Owner{i1: {Err: fmt.Errorf("%w: reader role refused", accounts.ErrUnknownAccount)}}
	throttled := map[string]owner.Owner{i1: {Cluster: "alpha"}, i2: {Err: errors.New("RequestLimitExceeded")}}
	ev := func(ids ...string) event.Event {
		return event.Event{Kind: contract.KindScheduledChange, InstanceIDs: ids}
	}
	for _, c := range []struct {
		name     string
		ev       event.Event
		known    map[string]owner.Owner
		clusters string
		v        verdict
		reason   contract.Reason
	}{
		{"one owner", ev(i1), known, "[alpha]", pending, ""},
		{"each owner once, in order", ev(i2, i1, i2, i3), known, "[beta alpha]", pending, ""},
		{"no owner tag", ev(i3), known, "[]", dropped, contract.ReasonNoOwner},
		{"an instance EC2 does not know", ev(instance(9)), known, "[]", dropped, contract.ReasonNoOwner},
		{"an owner not known now", ev(i1, i2), throttled, "[alpha]", retried, ""},
		{"an account whose instances cannot be read", ev(i1), denied, "[]", dropped, contract.ReasonUnknownAccount},
		{"a canary names its clusters", event.Event{Kind: contract.KindCanary, Clusters: []string{"a", "b"}}, nil, "[a b]", pending, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			clusters, o := owned(c.ev, c.known, nil)
			if fmt.Sprint(clusters) != c.clusters || !is(o, c.v, c.reason, "") {
				t.Errorf("owned: %v, %+v; want %s, %s %s", clusters, o, c.clusters, c.v, c.reason)
			}
		})
	}
}

func TestQueueOfAndDestination(t *testing.T) {
	n := naming{prefix: qprefix, busQueues: []string{qprefix + "central"}}
	for cluster, want := range map[string]string{"alpha": qprefix + "alpha", "not/a cluster": "owner tag value", "central": "bus's own queue"} {
		q := n.queueOf(cluster)
		if got := fmt.Sprint(q.name, q.err); !strings.Contains(got, want) {
			t.Errorf("queueOf(%q) = %q, want %q", cluster, got, want)
		}
	}
	spotEv := event.Event{Kind: contract.KindSpotInterruption, Account: "222222222222", Region: region}
	canaryEv := event.Event{Kind: contract.KindCanary, Account: account, To: "222222222222", Region: region}
	want := forward.Queue{Account: "222222222222", Region: region, Name: "q"}
	if got := destination(spotEv, "q"); got != want {
		t.Errorf("an event goes to %+v, want its own account's %+v", got, want)
	}
	if got := destination(canaryEv, "q"); got != want {
		t.Errorf("a canary goes to %+v, want the account it names, %+v", got, want)
	}
}

func TestDelivered(t *testing.T) {
	noQueue, throttled := fmt.Errorf("queue q: %w", forward.ErrNoQueue), errors.New("ThrottlingException")
	for _, c := range []struct {
		name    string
		sent    int
		noQueue error
		failed  error
		limited []string
		v       verdict
		reason  contract.Reason
		why     string
	}{
		{"every queue took it", 2, nil, nil, nil, forwarded, "", ""},
		{"some owner has no queue", 1, noQueue, nil, nil, forwarded, "", "does not exist"},
		{"a delivery to try again", 1, nil, throttled, nil, retried, "", "Throttling"},
		{"no queue took it, one to try again", 0, noQueue, throttled, nil, retried, "", "Throttling"},
		{"no owner has a queue", 0, noQueue, nil, nil, dropped, contract.ReasonNoQueue, "does not exist"},
		{"a canary held back", 0, nil, nil, []string{"alpha"}, dropped, contract.ReasonCanaryRateLimited, "[alpha]"},
		{"a canary held back where there is no queue", 0, noQueue, nil, []string{"alpha"}, dropped, contract.ReasonNoQueue, ""},
		{"a canary delivered to one, held back from another", 1, nil, nil, []string{"beta"}, forwarded, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if o := delivered(c.sent, c.noQueue, c.failed, c.limited); !is(o, c.v, c.reason, c.why) {
				t.Errorf("delivered: %+v, want %s %s saying %q", o, c.v, c.reason, c.why)
			}
		})
	}
}

func TestKeptOutcome(t *testing.T) {
	forged := drop(contract.ReasonForgedSender, errors.New("sender X may not speak for it"))
	if o := keptOutcome(forged, nil); o.verdict != quarantined || o.reason != contract.ReasonForgedSender || !errors.Is(o.err, forged.err) {
		t.Errorf("kept: %+v, want quarantined as forged_sender with its cause", o)
	}
	if o := keptOutcome(forged, errors.New("SQS unavailable")); !is(o, retried, "", "refused as forged_sender (sender X may not speak for it), and SQS unavailable") {
		t.Errorf("not kept: %+v, want retried, saying both why it was refused and why it was not kept", o)
	}
	if o := keptOutcome(forged, fmt.Errorf("keeping: %w", quarantine.ErrArchivedOnly)); !is(o, quarantined, contract.ReasonForgedSender, "kept in the archive only") ||
		!errors.Is(o.err, forged.err) {
		t.Errorf("kept in the archive only: %+v, want quarantined, saying both why and where", o)
	}
}

func TestIntakeOutcome(t *testing.T) {
	took := intake.Result{Kept: 3}
	for _, c := range []struct {
		name       string
		can, isRR  bool
		redriveErr error
		takeErr    error
		v          verdict
		why        string
	}{
		{"the redrive role asks", true, true, nil, nil, taken, ""},
		{"another sender asks", true, false, nil, nil, dropped, "sent by AROAX:s, not the redrive role"},
		{"IAM cannot tell", true, false, errors.New("sts down"), nil, retried, "sts down"},
		{"the intake failed", true, true, nil, errors.New("quarantine refused"), retried, "(3 kept before): quarantine refused"},
		{"no intake here", false, true, nil, nil, dropped, "DEAD_LETTER_QUEUE_URL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := intakeOutcome(c.can, "AROAX:s", c.isRR, c.redriveErr, took, c.takeErr)
			reason := contract.Reason("")
			if c.v == dropped {
				reason = contract.ReasonNotInterruption
			}
			if !is(o, c.v, reason, c.why) {
				t.Errorf("%+v, want %s saying %q", o, c.v, c.why)
			}
		})
	}
}
