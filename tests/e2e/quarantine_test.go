package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/requeue"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter"
)

// kept is one message of the quarantine, as the requeue command reads it.
type kept struct{ reason, account, sender, err string }

// quarantined lists the quarantine, as the redrive role, without taking anything out of it: event id -> why.
func (b *bus) quarantined(t *testing.T) map[string]kept {
	t.Helper()
	rep, err := requeue.Run(context.Background(), b.As(sqsemu.Account, harness.RedriveRoleName), b.outputs(), requeue.Options{From: requeue.Quarantine}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]kept{}
	for _, m := range rep.Messages {
		out[m.EventID] = kept{m.Reason, m.Account, m.Sender, m.Error}
	}
	return out
}

// outputs are the stack outputs the requeue command reads.
func (b *bus) outputs() requeue.Outputs {
	return requeue.Outputs{Region: sqsemu.Region, CentralQueueURL: b.Central, DeadLetterQueueURL: b.DLQ, QuarantineQueueURL: b.Quarantine}
}

var requeueBuild struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// requeueAs runs cmd/requeue, built from the repository as make requeue runs it, with the stack's outputs on stdin
// and the credentials of a session of role roleName of the hub: what an operator runs after assuming it.
func (b *bus) requeueAs(t *testing.T, roleName string, args ...string) string {
	t.Helper()
	requeueBuild.once.Do(func() {
		requeueBuild.bin = filepath.Join(os.TempDir(), "kib-requeue-e2e")
		build := exec.Command("go", "build", "-o", requeueBuild.bin, "./cmd/requeue")
		build.Dir = filepath.Join("..", "..")
		requeueBuild.out, requeueBuild.err = build.CombinedOutput()
	})
	if requeueBuild.err != nil {
		t.Fatalf("building cmd/requeue: %v\n%s", requeueBuild.err, requeueBuild.out)
	}
	outputs, _ := json.Marshal(map[string]string{
		"region": sqsemu.Region, "centralQueueUrl": b.Central, "deadLetterQueueUrl": b.DLQ, "quarantineQueueUrl": b.Quarantine,
	})
	cmd := exec.Command(requeueBuild.bin, args...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+caller.SessionKey(sqsemu.Account, b.IAM.ID(sqsemu.Account, roleName), "operator"),
		"AWS_SECRET_ACCESS_KEY=stub", "AWS_SESSION_TOKEN=stub", "AWS_ENDPOINT_URL_SQS="+b.SQS.URL, "AWS_REGION="+sqsemu.Region,
		// The SDK's default retries, as an operator has them (the harness turns them off for the router): goaws may
		// close a kept-alive connection under a long poll.
		"AWS_MAX_ATTEMPTS=3")
	cmd.Stdin = bytes.NewReader(outputs)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("requeue %v: %v\n%s%s", args, err, o.String(), e.String())
	}
	return o.String()
}

// sendTo puts bodies on queue url as client: what SQS itself does when it moves a message (to the DLQ after its
// last receive, or back by StartMessageMoveTask keeping its first sender).
func sendTo(t *testing.T, client *sqs.Client, url string, bodies ...string) {
	t.Helper()
	for _, body := range bodies {
		if _, err := client.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNothingRefusedIsLost: with a member list and with organization.id, every message the router refuses is kept
// in the quarantine with why (its reason, the account it claims, its sender, the error), read there by the runbook's
// command, and sent back by it as the redrive role, through the router, to its cluster's Karpenter, which parses it:
//   - forgeries (A's forwarder naming B and the hub) stay, counted and alarmed on, until an operator sends them;
//   - the hub's rules delivering with a role-shaped SenderId that is not the hub's forwarder (should EventBridge ever
//     stamp another role than the target's RoleArn) are refused, counted in the same invocation (the forged-senders
//     alarm, 1 of 1 periods of one minute, fires in the first minute), and sent back without loss;
//   - a sender that is no role (a delivery through the queue's policy alone, whose SenderId AWS does not document) is
//     refused the same way, never lost.
func TestNothingRefusedIsLost(t *testing.T) {
	for _, org := range []string{"", "o-a1b2c3d4e5"} {
		t.Run(map[string]string{"": "members", "o-a1b2c3d4e5": "organization"}[org], func(t *testing.T) {
			b := sendersBus(t, org, map[string]string{})
			ctx := context.Background()
			forgedB, forgedHub := spotAs(memberB, bInstance, "forged-b"), spotAs(sqsemu.Account, hubInstance, "forged-hub")
			stamped, unstamped := spotAs(sqsemu.Account, hubInstance, "eventbridge-role"), spotAs(sqsemu.Account, hubInstance, "eventbridge-no-role")
			b.IAM.Create(sqsemu.Account, "AWSServiceRoleForEventBridgeStub")
			if err := b.PublishAs(ctx, b.As(memberA, harness.ForwarderRoleName), forgedB, forgedHub); err != nil {
				t.Fatal(err)
			}
			if err := b.PublishAs(ctx, b.As(sqsemu.Account, "AWSServiceRoleForEventBridgeStub"), stamped); err != nil {
				t.Fatal(err)
			}
			if err := b.PublishAs(ctx, b.SQS.Client(), unstamped); err != nil { // no credentials: caller.ServiceSender
				t.Fatal(err)
			}
			first := b.pollOnce()
			if first.Failed != 0 {
				t.Errorf("the batch with four refusals retried %d messages, want none: a refusal never holds the batch", first.Failed)
			}
			b.drain()
			if got := b.Metric(contract.MetricForgedSender, "", ""); got != 4 {
				t.Errorf("ForgedSender = %v, want 4 (the alarm fires on the first)", got)
			}
			if got := b.Metric(contract.MetricQuarantined, "", ""); got != 4 {
				t.Errorf("Quarantined = %v, want 4", got)
			}
			for _, c := range []string{"alpha", "gamma"} {
				if got := b.received(c); len(got) != 0 {
					t.Fatalf("%s received %q before anyone sent anything back", c, got)
				}
			}

			// The runbook: list the quarantine as the redrive role.
			listing := b.requeueAs(t, harness.RedriveRoleName)
			aRole := b.IAM.ID(memberA, harness.ForwarderRoleName)
			for _, want := range []string{"forged-b", "forged-hub", "eventbridge-role", "eventbridge-no-role", "forged_sender", memberB, aRole + ":", caller.ServiceSender,
				"4 read from the quarantine, 4 selected, listed"} {
				if !strings.Contains(listing, want) {
					t.Errorf("the listing does not say %q:\n%s", want, listing)
				}
			}
			kept := b.quarantined(t)
			if k := kept["eventbridge-role"]; k.reason != string(contract.ReasonForgedSender) || k.account != sqsemu.Account ||
				!strings.Contains(k.err, "may not speak for account "+sqsemu.Account) {
				t.Errorf("the role-shaped delivery kept as %+v", k)
			}

			// The two the operator finds genuine (the hub's rules) are sent back, the forgeries stay.
			out := b.requeueAs(t, harness.RedriveRoleName, "-event", "eventbridge-role,eventbridge-no-role", "-send")
			if !strings.Contains(out, "4 read from the quarantine, 2 selected, sent back to the central queue: 2") {
				t.Errorf("requeue said:\n%s", out)
			}
			b.drain()
			got := b.received("alpha")
			if len(got) != 2 || !strings.Contains(strings.Join(got, ""), `"eventbridge-role"`) || !strings.Contains(strings.Join(got, ""), `"eventbridge-no-role"`) {
				t.Fatalf("alpha received %q, want both events sent back", got)
			}
			for _, body := range got {
				if p, err := karpenter.Parse(body); err != nil || p.Kind != "spot_interrupted" {
					t.Errorf("Karpenter reads a sent-back message as %+v, %v", p, err)
				}
			}
			if rest := b.quarantined(t); len(rest) != 2 || rest["forged-b"].reason == "" || rest["forged-hub"].reason == "" {
				t.Errorf("the quarantine holds %+v after the send, want the two forgeries only", rest)
			}
			if got := b.received("gamma"); len(got) != 0 {
				t.Errorf("gamma received %q: a forgery reached B's Karpenter", got)
			}
		})
	}
}

// TestARedriveNeverRefusesAGenuineEvent: A's event reaches the DLQ under A's forwarder, whose role is then deleted
// and created again (a new unique ID) before the redrive. Sent back by the requeue command as the redrive role, it is
// forwarded, whatever its first sender; moved by a StartMessageMoveTask that keeps its first sender (or stamps one
// that is no role), which AWS does not document either way, it is refused but kept, and the requeue command sends it
// on: in every case beta's Karpenter gets it, and nothing is lost.
func TestARedriveNeverRefusesAGenuineEvent(t *testing.T) {
	b := sendersBus(t, "", map[string]string{})
	oldA := b.As(memberA, harness.ForwarderRoleName)
	viaCommand, keptSender, noRole := spotAs(memberA, aInstance, "dlq-command"), spotAs(memberA, aInstance, "move-kept"), spotAs(memberA, aInstance, "move-no-role")
	sendTo(t, oldA, b.DLQ, viaCommand) // its receives exhausted: SQS moved it, first sender and all
	b.publish(spotIn(memberA, aInstance))
	b.drain() // the router has learned A's forwarder
	if got := b.received("beta"); len(got) != 1 {
		t.Fatalf("beta received %d, want A's event", len(got))
	}
	if old, fresh := b.IAM.ID(memberA, harness.ForwarderRoleName), b.IAM.Create(memberA, harness.ForwarderRoleName); old == fresh {
		t.Fatal("the re-created role has its old ID")
	}

	out := b.requeueAs(t, harness.RedriveRoleName, "-from", "dlq", "-send")
	if !strings.Contains(out, "1 read from the dlq, 1 selected, sent back to the central queue: 1") || !strings.Contains(out, "dlq-command") {
		t.Errorf("requeue said:\n%s", out)
	}
	b.drain()
	if got := b.received("beta"); len(got) != 1 || !strings.Contains(got[0], `"dlq-command"`) {
		t.Fatalf("beta received %q, want the redriven event", got)
	}
	if got := b.Metric(contract.MetricForgedSender, "", ""); got != 0 {
		t.Errorf("ForgedSender = %v: the redrive was refused", got)
	}

	// A move task that keeps the first sender (A's deleted forwarder) or stamps a sender that is no role.
	sendTo(t, oldA, b.Central, keptSender)
	sendTo(t, b.SQS.Client(), b.Central, noRole)
	b.drain()
	if got := b.received("beta"); len(got) != 0 {
		t.Fatalf("beta received %q from senders the router cannot attribute", got)
	}
	if kept := b.quarantined(t); len(kept) != 2 || kept["move-kept"].reason != string(contract.ReasonForgedSender) || kept["move-no-role"].account != memberA {
		t.Fatalf("the quarantine holds %+v, want both moved messages", kept)
	}
	b.requeueAs(t, harness.RedriveRoleName, "-reason", "forged_sender", "-account", memberA, "-send")
	b.drain()
	if got := b.received("beta"); len(got) != 2 {
		t.Errorf("beta received %q, want both moved events once sent back", got)
	}
	if kept := b.quarantined(t); len(kept) != 0 {
		t.Errorf("the quarantine still holds %+v", kept)
	}
}
