package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/ec2stub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

const (
	memberC, memberD     = "555555555555", "666666666666"
	cInstance, dInstance = "i-0a1b2c3d4e5f61004", "i-0a1b2c3d4e5f61005"
)

// joiningBus is sendersBus with two accounts more, C (cluster delta) and D (cluster epsilon), that are not on the bus
// yet: their reader roles cannot be assumed (STS refuses them, as before their baseline is fixed); C's forwarder
// exists, D has no role at all. join puts them on the bus: their readers assumable, D's roles created.
func joiningBus(t *testing.T, org string) (b *bus, join func()) {
	t.Helper()
	b, stderr := routerBinaryWith(t, harness.Options{
		Clusters: []string{"alpha"}, Members: map[string][]string{memberA: {"beta"}, memberB: {"gamma"}, memberC: {"delta"}, memberD: {"epsilon"}},
		Organization: org, RetryDelay: time.Second,
		Env: map[string]string{"SENDER_ROLE_RECHECK": "1s", contract.EnvDeniedAccountTTL: "1s"},
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router stderr: %s", stderr.String())
		}
	})
	owner := func(c string) map[string]string { return map[string]string{"eks:eks-cluster-name": c} }
	b.EC2.PutIn(ec2stub.Account, hubInstance, owner("alpha"))
	b.EC2.PutIn(memberA, aInstance, owner("beta"))
	b.EC2.PutIn(memberB, bInstance, owner("gamma"))
	b.EC2.PutIn(memberC, cInstance, owner("delta"))
	b.EC2.PutIn(memberD, dInstance, owner("epsilon"))
	for _, m := range []string{memberC, memberD} {
		b.STS.Allow(harness.ReaderRole(m), sqsemu.Account, false)
	}
	b.IAM.Delete(memberD, harness.ReaderRoleName)
	b.IAM.Delete(memberD, harness.ForwarderRoleName)
	return b, func() {
		time.Sleep(1100 * time.Millisecond) // the router's memory of a refused reader role (DENIED_ACCOUNT_CACHE_TTL)
		b.IAM.Create(memberD, harness.ReaderRoleName)
		b.IAM.Create(memberD, harness.ForwarderRoleName)
		for _, m := range []string{memberC, memberD} {
			b.STS.Allow(harness.ReaderRole(m), sqsemu.Account, true)
		}
	}
}

// TestWhatIsSentBackIsJudgedByWhoFirstSentIt: with a member list and with organization.id, the recovery path
// launders nothing. Before accounts C and D are on the bus, A's forwarder plants an event naming C's instance and B's
// forwarder one naming D's; C's own forwarder sends C's genuine event. All three are kept as unknown_account, each
// with its sender, judged first. Once C and D join, the runbook's selection by reason sends the three back: C's
// genuine event reaches C's Karpenter; the planted ones are judged by who first sent them and refused again, A's a
// proven forgery (its forwarder is A's, and C's stood when it was sent), B's unattributable (D's forwarder was
// created after it was sent, and nothing ties B's role to an account yet); neither reaches a Karpenter, and a second
// send takes neither back.
func TestWhatIsSentBackIsJudgedByWhoFirstSentIt(t *testing.T) {
	for _, org := range []string{"", "o-a1b2c3d4e5"} {
		t.Run(map[string]string{"": "members", "o-a1b2c3d4e5": "organization"}[org], func(t *testing.T) {
			b, join := joiningBus(t, org)
			ctx := context.Background()
			plantC, plantD, cBefore := spotAs(memberC, cInstance, "plant-c"), spotAs(memberD, dInstance, "plant-d"), spotAs(memberC, cInstance, "c-before")
			if err := b.PublishAs(ctx, b.As(memberA, harness.ForwarderRoleName), plantC); err != nil {
				t.Fatal(err)
			}
			if err := b.PublishAs(ctx, b.As(memberB, harness.ForwarderRoleName), plantD); err != nil {
				t.Fatal(err)
			}
			if err := b.PublishAs(ctx, b.As(memberC, harness.ForwarderRoleName), cBefore); err != nil {
				t.Fatal(err)
			}
			b.drain()
			kept := b.quarantined(t)
			for id, sender := range map[string]string{"plant-c": memberA, "plant-d": memberB, "c-before": memberC} {
				k := kept[id]
				if k.reason != string(contract.ReasonUnknownAccount) || !strings.HasPrefix(k.sender, b.IAM.ID(sender, harness.ForwarderRoleName)+":") {
					t.Errorf("%s kept as %+v; want unknown_account with %s's forwarder as its sender", id, k, sender)
				}
			}
			b.publish(spotIn(memberA, aInstance)) // the router learns A's forwarder
			b.drain()
			if got := b.received("beta"); len(got) != 1 {
				t.Fatalf("beta received %d, want A's event", len(got))
			}

			join()
			out := b.requeueAs(t, harness.RedriveRoleName, "-reason", "unknown_account", "-send")
			if !strings.Contains(out, "3 read from the quarantine, 3 selected, sent back to the central queue: 3") {
				t.Errorf("requeue said:\n%s", out)
			}
			b.drain()
			if got := b.received("delta"); len(got) != 1 || got[0] != cBefore {
				t.Errorf("delta (C) received %q, want C's genuine event only", got)
			}
			if got := b.received("epsilon"); len(got) != 0 {
				t.Errorf("epsilon (D) received %q: an event planted before D joined was delivered as D's", got)
			}
			kept = b.quarantined(t)
			if k := kept["plant-c"]; k.reason != string(contract.ReasonForgedSender) || !strings.Contains(k.err, "is account "+memberA+"'s forwarder") &&
				!strings.Contains(k.err, "may not speak for account "+memberC) {
				t.Errorf("plant-c kept again as %+v, want a proven forgery", k)
			}
			if k := kept["plant-d"]; k.reason != string(contract.ReasonUnattributable) || !strings.HasPrefix(k.sender, b.IAM.ID(memberB, harness.ForwarderRoleName)+":") {
				t.Errorf("plant-d kept again as %+v, want unattributable with B's forwarder as its first sender", k)
			}
			out = b.requeueAs(t, harness.RedriveRoleName, "-send")
			if !strings.Contains(out, "sent back to the central queue: 0") {
				t.Errorf("a second send took something back:\n%s", out)
			}
			b.drain()
			if got := append(b.received("delta"), b.received("epsilon")...); len(got) != 0 {
				t.Errorf("C and D received %q after the second send", got)
			}
		})
	}
}

// TestTheHubsRulesThroughTheQueuePolicy: with centralQueue.hubDelivery queuePolicy the hub's rules deliver with no
// execution role: their messages' SenderId is no role's (the emulator stamps caller.ServiceSender, as a service's
// delivery), which the central queue's policy admits from the stack's own rules only, and the router takes for the
// hub's. A member's forwarder naming the hub stays a proven forgery; a role of the hub that is no sender of the bus
// is unattributable, kept, and delivered once vouched for by its sender.
func TestTheHubsRulesThroughTheQueuePolicy(t *testing.T) {
	b, stderr := routerBinaryWith(t, harness.Options{
		Clusters: []string{"alpha"}, Members: map[string][]string{memberA: {"beta"}}, RetryDelay: time.Second,
		HubDelivery: contract.HubDeliveryQueuePolicy, Env: map[string]string{"SENDER_ROLE_RECHECK": "1s"},
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("router stderr: %s", stderr.String())
		}
	})
	b.EC2.PutIn(ec2stub.Account, hubInstance, map[string]string{"eks:eks-cluster-name": "alpha"})
	b.EC2.PutIn(memberA, aInstance, map[string]string{"eks:eks-cluster-name": "beta"})
	ctx := context.Background()
	b.publish(spotIn(sqsemu.Account, hubInstance), spotIn(memberA, aInstance)) // the hub's as no role, A's as its forwarder
	b.drain()
	if got := b.received("alpha"); len(got) != 1 {
		t.Fatalf("alpha received %d of the hub's own event through the queue's policy, want 1", len(got))
	}
	if got := b.received("beta"); len(got) != 1 {
		t.Fatalf("beta received %d, want A's event", len(got))
	}
	if got := b.Metric(contract.MetricServiceSender, "", ""); got != 1 {
		t.Errorf("ServiceSender = %v, want the hub's one delivery", got)
	}
	other := b.IAM.Create(sqsemu.Account, "SomeOtherHubRole")
	if err := b.PublishAs(ctx, b.As(memberA, harness.ForwarderRoleName), spotAs(sqsemu.Account, hubInstance, "forged-hub")); err != nil {
		t.Fatal(err)
	}
	if err := b.PublishAs(ctx, b.As(sqsemu.Account, "SomeOtherHubRole"), spotAs(sqsemu.Account, hubInstance, "hub-role")); err != nil {
		t.Fatal(err)
	}
	b.drain()
	if got := b.received("alpha"); len(got) != 0 {
		t.Fatalf("alpha received %q from roles that are no sender of the hub", got)
	}
	kept := b.quarantined(t)
	if kept["forged-hub"].reason != string(contract.ReasonForgedSender) || kept["hub-role"].reason != string(contract.ReasonUnattributable) {
		t.Fatalf("kept %+v; want A's forwarder proven forged, the hub's other role unattributable", kept)
	}
	out := b.requeueAs(t, harness.RedriveRoleName, "-sender", other+":stub-session", "-vouch", "-send")
	if !strings.Contains(out, "sent back to the central queue: 1") {
		t.Errorf("requeue said:\n%s", out)
	}
	b.drain()
	if got := b.received("alpha"); len(got) != 1 || !strings.Contains(got[0], `"hub-role"`) {
		t.Errorf("alpha received %q, want the event vouched for by its sender", got)
	}
}

// TestWhatAnotherReaderHoldsIsSaid: make requeue run while another reader of the quarantine holds one of its three
// messages (as SQS hides the messages of an answer lost on its way) lists the two it can read and says the third is
// in flight and when it comes back, instead of taking the quarantine for holding two.
func TestWhatAnotherReaderHoldsIsSaid(t *testing.T) {
	b, _ := joiningBus(t, "")
	ctx := context.Background()
	for _, m := range []struct{ sender, event string }{
		{memberA, spotAs(memberC, cInstance, "plant-c")}, {memberB, spotAs(memberD, dInstance, "plant-d")}, {memberC, spotAs(memberC, cInstance, "c-before")},
	} {
		if err := b.PublishAs(ctx, b.As(m.sender, harness.ForwarderRoleName), m.event); err != nil {
			t.Fatal(err)
		}
	}
	b.drain()
	held, err := b.As(sqsemu.Account, harness.RedriveRoleName).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(b.Quarantine),
		MaxNumberOfMessages: 1, VisibilityTimeout: 60})
	if err != nil || len(held.Messages) != 1 {
		t.Fatalf("holding one message of the quarantine: %v, %d", err, len(held.Messages))
	}
	out := b.requeueAs(t, harness.RedriveRoleName)
	if !strings.Contains(out, "2 read from the quarantine") || !strings.Contains(out, "about 1 more in flight, not read") {
		t.Errorf("requeue said:\n%s", out)
	}
}
