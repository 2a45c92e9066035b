package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/requeue"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// kept is one message of the quarantine, as the requeue command reads it.
type kept struct{ reason, account, sender, err string }

// quarantined lists the quarantine, as the redrive role, without taking anything out of it: event id -> why.
func (b *bus) quarantined(t *testing.T) map[string]kept {
	t.Helper()
	rep, err := requeue.Run(context.Background(), requeue.Clients{SQS: b.As(sqsemu.Account, harness.RedriveRoleName), STS: b.STSAs(sqsemu.Account, harness.RedriveRoleName)},
		b.outputs(), requeue.Options{From: requeue.Quarantine}, &bytes.Buffer{})
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
	var o requeue.Outputs
	o.Region, o.CentralQueueURL, o.DeadLetterQueueURL, o.QuarantineQueueURL = sqsemu.Region, b.Central, b.DLQ, b.Quarantine
	o.RedriveRoleARN, o.ArchiveBucket, o.ArchiveBucketPrefix = harness.RedriveRoleARN, harness.ArchiveBucket, harness.NamePrefix+"-archive-"
	o.SealKeyARN, o.Account = b.Settings.SealKey, sqsemu.Account
	return o
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
	out, err := b.tryRequeueAs(t, roleName, args...)
	if err != nil {
		t.Fatalf("requeue %v: %v\n%s", args, err, out)
	}
	return out
}

// tryRequeueAs is requeueAs, returning what the command printed (stdout and stderr) and how it ended.
func (b *bus) tryRequeueAs(t *testing.T, roleName string, args ...string) (string, error) {
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
	o := b.outputs()
	outputs, _ := json.Marshal(map[string]string{
		"region": o.Region, "centralQueueUrl": o.CentralQueueURL, "deadLetterQueueUrl": o.DeadLetterQueueURL, "quarantineQueueUrl": o.QuarantineQueueURL,
		"redriveRoleArn": o.RedriveRoleARN, "archiveBucket": o.ArchiveBucket, "archiveBucketPrefix": o.ArchiveBucketPrefix, "sealKeyArn": o.SealKeyARN,
		"account": o.Account,
	})
	key := caller.SessionKey(sqsemu.Account, b.IAM.ID(sqsemu.Account, roleName), "stub-session")
	if roleName == "" { // an operator of the bus's account, a principal of redrive.principals: the command assumes the role
		key = caller.AccessKey(sqsemu.Account, false)
	}
	cmd := exec.Command(requeueBuild.bin, args...)
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+key,
		"AWS_SECRET_ACCESS_KEY=stub", "AWS_SESSION_TOKEN=stub", "AWS_ENDPOINT_URL_SQS="+b.SQS.URL, "AWS_ENDPOINT_URL_STS="+b.STS.URL,
		"AWS_ENDPOINT_URL_S3="+b.S3URL(), "AWS_ENDPOINT_URL_KMS="+b.kms.URL, "AWS_REGION="+sqsemu.Region,
		// The SDK's default retries, as an operator has them (the harness turns them off for the router): goaws may
		// close a kept-alive connection under a long poll.
		"AWS_MAX_ATTEMPTS=3")
	cmd.Stdin = bytes.NewReader(outputs)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
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
// in the quarantine with why (its reason, the account it claims, its sender, the error), and read there by the
// runbook's command; a proven forgery is evidence, which the command never sends back:
//   - forgeries (A's forwarder naming B and the hub) stay, counted and alarmed on;
//   - the hub's rules delivering with a role-shaped SenderId that is not the hub's forwarder (should EventBridge ever
//     stamp another role than the target's RoleArn), or a sender that is no role (a delivery through the queue's
//     policy alone), are proven not to be the hub's forwarder: refused, counted in the same invocation (the
//     forged-senders alarm, 1 of 1 periods of one minute, fires in the first minute), and kept; the way out is
//     centralQueue.hubDelivery (TestTheHubsRulesThroughTheQueuePolicy).
func TestNothingRefusedIsLost(t *testing.T) {
	for _, org := range []string{"", "o-a1b2c3d4e5"} {
		t.Run(map[string]string{"": "members", "o-a1b2c3d4e5": "organization"}[org], func(t *testing.T) {
			b := sendersBus(t, org, map[string]string{})
			ctx := context.Background()
			forgedB, forgedHub := spotAs(memberB, bInstance, "forged-b"), spotAs(sqsemu.Account, hubInstance, "forged-hub")
			stamped, unstamped := spotAs(sqsemu.Account, hubInstance, "eventbridge-role"), spotAs(sqsemu.Account, hubInstance, "eventbridge-no-role")
			b.IAM.Create(sqsemu.Account, "AWSServiceRoleForEventBridgeStub")
			time.Sleep(time.Second) // IAM gives a role's creation to the second: the messages are sent after it
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

			// The runbook: list the quarantine as the redrive role; then send everything back: nothing goes.
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
			out := b.requeueAs(t, harness.RedriveRoleName, "-send")
			if !strings.Contains(out, "4 read from the quarantine, 4 selected, sent back to the central queue: 0") ||
				!strings.Contains(out, "4 proven forgeries or forbidden canaries kept as evidence") {
				t.Errorf("requeue said:\n%s", out)
			}
			out = b.requeueAs(t, harness.RedriveRoleName, "-event", "forged-b,forged-hub", "-vouch", "-send")
			if !strings.Contains(out, "sent back to the central queue: 0") {
				t.Errorf("vouching for the forgeries sent some back:\n%s", out)
			}
			b.drain()
			for _, c := range []string{"alpha", "gamma"} {
				if got := b.received(c); len(got) != 0 {
					t.Fatalf("%s received %q: a proven forgery was sent back", c, got)
				}
			}
			if rest := b.quarantined(t); len(rest) != 4 {
				t.Errorf("the quarantine holds %d after the sends, want the 4 forgeries as evidence", len(rest))
			}
		})
	}
}

// TestAGenuineEventSentBackIsDelivered: A's event reaches the DLQ under A's forwarder, whose role is then deleted
// and created again (a new unique ID) before the router ever learned the old one. make requeue FROM=dlq SEND=1 asks
// the router to take the DLQ in: it seals both messages into the quarantine as dead_lettered, each with the sender the
// DLQ holds, and the DLQ is empty. Sent back from there, the event of A's standing forwarder is delivered with no vouch;
// the other carries its first sender, A's former forwarder, which IAM no longer knows and which sent it before the new
// one was created: the router cannot attribute it, keeps it (sealed again, as unattributable), and delivers it once the
// operator vouches for the event by name, logging who did.
func TestAGenuineEventSentBackIsDelivered(t *testing.T) {
	b := sendersBus(t, "", map[string]string{})
	sendTo(t, b.As(memberA, harness.ForwarderRoleName), b.DLQ, spotAs(memberA, aInstance, "dlq-old")) // its receives exhausted: SQS moved it, first sender and all
	time.Sleep(time.Second)                                                                           // IAM gives a role's creation to the second
	if old, fresh := b.IAM.ID(memberA, harness.ForwarderRoleName), b.IAM.Create(memberA, harness.ForwarderRoleName); old == fresh {
		t.Fatal("the re-created role has its old ID")
	}
	time.Sleep(time.Second)
	sendTo(t, b.As(memberA, harness.ForwarderRoleName), b.DLQ, spotAs(memberA, aInstance, "dlq-current"))
	b.publish(spotIn(memberA, aInstance))
	b.drain() // the router has learned A's forwarder as it stands
	if got := b.received("beta"); len(got) != 1 {
		t.Fatalf("beta received %d, want A's event", len(got))
	}

	out := b.requeueAs(t, harness.RedriveRoleName, "-from", "dlq")
	if !strings.Contains(out, "2 read from the dlq, 2 selected, listed") || !strings.Contains(out, "dlq-old") {
		t.Errorf("requeue listing the DLQ said:\n%s", out)
	}
	out = b.requeueAs(t, harness.RedriveRoleName, "-from", "dlq", "-send")
	if !strings.Contains(out, "asked the router to seal the dead-letter queue's about 2 messages into the quarantine") {
		t.Errorf("requeue said:\n%s", out)
	}
	b.drain()
	kept := b.quarantined(t)
	if kept["dlq-old"].reason != string(contract.ReasonDeadLettered) || kept["dlq-current"].reason != string(contract.ReasonDeadLettered) {
		t.Fatalf("the quarantine holds %+v, want both dead_lettered", kept)
	}
	if got := b.Metric(contract.MetricDeadLettered, "", ""); got != 2 {
		t.Errorf("DeadLettered = %v, want 2", got)
	}
	out = b.requeueAs(t, harness.RedriveRoleName, "-reason", "dead_lettered", "-send")
	if !strings.Contains(out, "2 read from the quarantine, 2 selected, sent back to the central queue: 2") {
		t.Errorf("requeue said:\n%s", out)
	}
	b.drain()
	if got := b.received("beta"); len(got) != 1 || !strings.Contains(got[0], `"dlq-current"`) {
		t.Fatalf("beta received %q: want the event of the standing forwarder, and not the one whose first sender cannot be attributed", got)
	}
	k := b.quarantined(t)["dlq-old"]
	if k.reason != string(contract.ReasonUnattributable) || !strings.HasPrefix(k.sender, "AROA") {
		t.Fatalf("the unattributable event kept as %+v, want unattributable_sender with its first sender", k)
	}
	out = b.requeueAs(t, harness.RedriveRoleName, "-send")
	if !strings.Contains(out, "1 unattributable: sent back only when you vouch") || !strings.Contains(out, "sent back to the central queue: 0") {
		t.Errorf("requeue without a vouch said:\n%s", out)
	}
	out = b.requeueAs(t, harness.RedriveRoleName, "-event", "dlq-old", "-vouch", "-send")
	if !strings.Contains(out, "sent back to the central queue: 1") {
		t.Errorf("requeue vouching said:\n%s", out)
	}
	b.drain()
	if got := b.received("beta"); len(got) != 1 || !strings.Contains(got[0], `"dlq-old"`) {
		t.Fatalf("beta received %q, want the vouched event", got)
	}
	var vouched []map[string]any
	for _, l := range b.Out.Lines() {
		if l["msg"] == contract.LogVouched {
			vouched = append(vouched, l)
		}
	}
	if len(vouched) != 1 || vouched[0][contract.LogVouch] != contract.VouchEvent || !strings.Contains(fmt.Sprint(vouched[0][contract.LogVouchedBy]), ":assumed-role/"+harness.RedriveRoleName+"/") {
		t.Errorf("vouch lines %v, want one naming the event vouched for and the operator", vouched)
	}
	if got := b.Metric(contract.MetricForgedSender, "", ""); got != 0 {
		t.Errorf("ForgedSender = %v: a genuine event was taken for a proven forgery", got)
	}
}

// sealedBack are the attributes make requeue sends body back with when the router kept it for reason, first sent by
// first at firstSent, first refused as message msgID: sealed as the router seals, with the bus's key, as a session of
// the router's role (the one principal the key lets sign).
func (b *bus) sealedBack(t *testing.T, body string, reason contract.Reason, first string, firstSent time.Time, msgID string) map[string]string {
	t.Helper()
	var ev struct{ Account string }
	_ = json.Unmarshal([]byte(body), &ev)
	rec := sealing.Record{BodySHA256: sealing.BodyDigest(body), Account: ev.Account, Reason: string(reason), FirstSender: first,
		FirstSent: strconv.FormatInt(firstSent.UnixMilli(), 10), MessageID: msgID}
	router := b.kms.Client(caller.SessionKey(sqsemu.Account, b.IAM.ID(sqsemu.Account, harness.RouterRoleName), "router"))
	seal, err := sealing.New(router, b.Settings.SealKey).Seal(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{contract.AttrRequeuedFrom: contract.RequeuedFromQuarantine, contract.AttrFirstSender: first,
		contract.AttrFirstSent: rec.FirstSent, contract.AttrReason: string(reason), contract.AttrMessageID: msgID, contract.AttrSeal: seal}
}
