package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// eventBridgeLimit is the largest event EventBridge delivers: 256 KB ("PutEvents": "The entry size ... cannot exceed
// 256 KB", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html).
const eventBridgeLimit = 256 * 1024

// atTheLimit is event padded in its detail to EventBridge's largest event.
func atTheLimit(t *testing.T, event string) string {
	t.Helper()
	pad := `,"padding":""`
	i := strings.LastIndex(event, "}}")
	out := event[:i] + pad[:len(pad)-1] + strings.Repeat("p", eventBridgeLimit-len(event)-len(pad)) + `"` + event[i:]
	if len(out) != eventBridgeLimit {
		t.Fatalf("the padded event has %d bytes", len(out))
	}
	return out
}

// TestASealedRecordReachesKarpenterOnce, with the archive in the S3 stand-in and in moto's S3: A's events reach the
// dead-letter queue (one at EventBridge's 256 KB limit), an operator of the bus's account (a principal of
// redrive.principals) runs make requeue, which opens the redrive role's session with its name as the source identity
// the role requires, and asks the router to take the DLQ in: both are sealed and archived; the small one is kept in
// the quarantine, the large one, which does not fit a queue's 256 KiB with the quarantine's attributes, in the archive
// only, its line saying so. Sent back, the small one's first delivery fails (beta's queue answers 500 once) and the
// same message, received again, is delivered once. The large one, sent live, reaches beta byte for byte. Whoever holds the redrive role then sends the record again three ways, from the quarantine's
// copy read before make requeue deleted it, from the archive's copy, and with those attributes by hand once more: none
// reaches beta; each is refused as replayed, kept, counted. The router logged every message the redrive role sent
// with its SenderId, role ID and session, and STS recorded the session's source identity.
func TestASealedRecordReachesKarpenterOnce(t *testing.T) {
	for _, moto := range []bool{false, true} {
		t.Run(map[bool]string{false: "s3stub", true: "moto"}[moto], func(t *testing.T) {
			b := sendersBusOn(t, "", map[string]string{}, moto)
			ctx := context.Background()
			once, large := spotAs(memberA, aInstance, "once"), atTheLimit(t, spotAs(memberA, aInstance, "large"))
			sendTo(t, b.As(memberA, harness.ForwarderRoleName), b.DLQ, once, large)
			if out := b.requeueAs(t, "", "-from", "dlq", "-send"); !strings.Contains(out, "asked the router to seal") {
				t.Fatalf("requeue said:\n%s", out)
			}
			b.drain()
			redrive := b.As(sqsemu.Account, harness.RedriveRoleName)
			held, err := redrive.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(b.Quarantine), MaxNumberOfMessages: 10,
				MessageAttributeNames: []string{"All"}})
			if err != nil || len(held.Messages) != 1 || !strings.Contains(aws.ToString(held.Messages[0].Body), `"once"`) {
				t.Fatalf("the quarantine holds %d messages (%v), want the small one kept", len(held.Messages), err)
			}
			archivedOnly := 0
			for _, l := range b.Out.Lines() {
				if l["msg"] == contract.LogKeptInArchiveOnly && l[contract.LogEventID] == "large" && l[contract.LogArchivedOnly] == true {
					archivedOnly++
				}
			}
			if archivedOnly != 1 {
				t.Errorf("%d lines say the large event was kept in the archive only, want 1", archivedOnly)
			}
			if n := len(archived(t, b)); n != 2 {
				t.Errorf("the archive holds %d records, want both events'", n)
			}
			for _, m := range held.Messages { // read, then left to make requeue
				if _, err := redrive.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(b.Quarantine),
					ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
					t.Fatal(err)
				}
			}
			var fromQuarantine types.Message
			for _, m := range held.Messages {
				if strings.Contains(aws.ToString(m.Body), `"once"`) {
					fromQuarantine = m
				}
			}
			var fromArchive archive.Entry
			for _, e := range archived(t, b) {
				if e.EventID == "once" {
					fromArchive = e
				}
			}
			if fromArchive.Seal == "" || fromArchive.PublicKey == "" {
				t.Fatalf("the archive's record %+v: want it sealed, with its public key", fromArchive)
			}

			b.SQS.SetFault(harness.QueueOf("beta"), &sqsemu.Fault{Status: 500, Code: "InternalError", Times: 1})
			if out := b.requeueAs(t, "", "-reason", string(contract.ReasonDeadLettered), "-send"); !strings.Contains(out, "sent back to the central queue: 1") {
				t.Fatalf("requeue said:\n%s", out)
			}
			b.drain()
			if got := b.received("beta"); len(got) != 1 || !slicesHave(got, once) {
				t.Fatalf("beta received %d messages, want the record once", len(got))
			}
			sendTo(t, b.As(memberA, harness.ForwarderRoleName), b.Central, large)
			b.drain()
			if got := b.received("beta"); len(got) != 1 || !slicesHave(got, large) {
				t.Fatalf("beta received %d messages, want the event at EventBridge's limit, whole", len(got))
			}

			// Whoever holds the redrive role replays the record three ways.
			mallory := b.As(sqsemu.Account, harness.RedriveRoleName) // a session of the role, as sendTo's SenderId gives it
			quarantined := map[string]types.MessageAttributeValue{contract.AttrRequeuedFrom: {DataType: aws.String("String"), StringValue: aws.String("quarantine")}}
			rec, seal := sealing.ReadKept(aws.ToString(fromQuarantine.Body), func(k string) string { return aws.ToString(fromQuarantine.MessageAttributes[k].StringValue) })
			rec.SentBack(quarantined, seal)
			archivedCopy := map[string]types.MessageAttributeValue{}
			fromArchive.Record.SentBack(archivedCopy, fromArchive.Seal)
			for _, attrs := range []map[string]types.MessageAttributeValue{quarantined, archivedCopy, quarantined} {
				if _, err := mallory.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(b.Central), MessageBody: aws.String(once),
					MessageAttributes: attrs}); err != nil {
					t.Fatal(err)
				}
			}
			b.drain()
			if got := b.received("beta"); len(got) != 0 {
				t.Fatalf("beta received %d messages more: a sealed record was delivered twice", len(got))
			}
			if n := b.Metric(contract.MetricReplayed, "", ""); n != 3 {
				t.Errorf("Replayed = %v, want the three replays", n)
			}
			replayed := 0
			for _, e := range archived(t, b) {
				if e.Record.Reason == string(contract.ReasonReplayed) {
					replayed++
				}
			}
			if replayed != 3 {
				t.Errorf("the archive holds %d records kept as replayed, want 3", replayed)
			}
			if keys, err := b.ArchiveKeys(ctx); err != nil || countPrefix(keys, archive.DeliveredPrefix) != 1 {
				t.Errorf("the ledger holds %d deliveries (%v), want the record delivered", countPrefix(keys, archive.DeliveredPrefix), err)
			}

			sessions := map[string]int{}
			redriveID := b.IAM.ID(sqsemu.Account, harness.RedriveRoleName)
			for _, l := range b.Out.Lines() {
				if l["msg"] == contract.LogSentBack && l[contract.LogRoleID] == redriveID && l[contract.LogSender] == fmt.Sprint(redriveID, ":", l[contract.LogSession]) {
					sessions[fmt.Sprint(l[contract.LogSession])]++
				}
			}
			// The operator's record (received twice: its first delivery failed), and the three replays.
			if fmt.Sprint(sessions) != "map[stub:2 stub-session:3]" {
				t.Errorf("sent-back lines by session %v, want the operator's session (2) and the replays' (3)", sessions)
			}
			if si := b.STS.SourceIdentity(caller.SessionKey(sqsemu.Account, redriveID, "stub")); si != "stub" {
				t.Errorf("the operator's session of the redrive role has source identity %q, want its name", si)
			}
		})
	}
}

func slicesHave(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func countPrefix(keys []string, prefix string) int {
	n := 0
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// TestRequeuesOwnDuplicatesNeverAlarm, the compiled router and make requeue as an operator runs it: a record the
// quarantine holds twice (its send retried after a timeout that had in fact delivered it) is sent back once, and
// delivered once; left in the quarantine after its delivery (make requeue's delete failed), the next run finds it in
// the ledger and removes it, never sending it again. Neither copy reaches Karpenter twice, and the replay alarm's
// metric stays at zero.
func TestRequeuesOwnDuplicatesNeverAlarm(t *testing.T) {
	b := sendersBusOn(t, "", map[string]string{}, false)
	ctx := context.Background()
	sendTo(t, b.As(memberA, harness.ForwarderRoleName), b.DLQ, spotAs(memberA, aInstance, "dup"))
	if out := b.requeueAs(t, "", "-from", "dlq", "-send"); !strings.Contains(out, "asked the router to seal") {
		t.Fatalf("requeue said:\n%s", out)
	}
	b.drain()
	// The quarantine's copy, sent again as the router's retried send would.
	router := b.As(sqsemu.Account, harness.RouterRoleName)
	redrive := b.As(sqsemu.Account, harness.RedriveRoleName)
	held, err := redrive.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(b.Quarantine), MaxNumberOfMessages: 10,
		MessageAttributeNames: []string{"All"}})
	if err != nil || len(held.Messages) != 1 {
		t.Fatalf("the quarantine holds %d messages (%v), want the record", len(held.Messages), err)
	}
	kept := held.Messages[0]
	if _, err := router.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(b.Quarantine), MessageBody: kept.Body,
		MessageAttributes: kept.MessageAttributes}); err != nil {
		t.Fatal(err)
	}
	if _, err := redrive.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(b.Quarantine),
		ReceiptHandle: kept.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	out := b.requeueAs(t, "", "-reason", string(contract.ReasonDeadLettered), "-send")
	if !strings.Contains(out, "sent back to the central queue: 1") || !strings.Contains(out, "not sent twice") {
		t.Fatalf("requeue of a record held twice said:\n%s", out)
	}
	b.drain()
	if got := b.received("beta"); len(got) != 1 {
		t.Fatalf("beta received %d messages, want the record once", len(got))
	}
	// The copy left behind: the next run finds the record delivered and removes it.
	out = b.requeueAs(t, "", "-reason", string(contract.ReasonDeadLettered), "-send")
	if !strings.Contains(out, "delivered before") || !strings.Contains(out, "sent back to the central queue: 0") {
		t.Fatalf("requeue of a record delivered before said:\n%s", out)
	}
	b.drain()
	if got := b.received("beta"); len(got) != 0 {
		t.Errorf("beta received %d messages more: a record delivered twice", len(got))
	}
	if n := b.Metric(contract.MetricReplayed, "", ""); n != 0 {
		t.Errorf("Replayed = %v: requeue's own duplicates tripped the replay alarm", n)
	}
	if left, err := redrive.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(b.Quarantine), MaxNumberOfMessages: 10}); err != nil ||
		len(left.Messages) != 0 {
		t.Errorf("the quarantine holds %d messages after the second run (%v), want none", len(left.Messages), err)
	}
}
