package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// TestLiveEventsNeverWaitOnAStalledArchive, the compiled router against the S3 stand-in and local-kms: a sealed
// record sent back by make requeue waits in the central queue beside live events of the hub and of member A, and S3
// and KMS stop answering (a brownout longer than the invocation). In the one invocation that takes them all, the
// live events reach their clusters' queues, where Karpenter reads them; the invocation returns in time with the sealed
// record retried alone. Once S3 and KMS answer again, the record is delivered, once, and recorded in the ledger:
// nothing is lost. The live events' latency through the brownout is logged (docs/performance.md).
func TestLiveEventsNeverWaitOnAStalledArchive(t *testing.T) {
	b := sendersBusOn(t, "", map[string]string{}, false)
	ctx := context.Background()
	record := spotAs(memberA, aInstance, "kept")
	sendTo(t, b.As(memberA, harness.ForwarderRoleName), b.DLQ, record)
	if out := b.requeueAs(t, "", "-from", "dlq", "-send"); !strings.Contains(out, "asked the router to seal") {
		t.Fatalf("requeue said:\n%s", out)
	}
	b.drain()
	if out := b.requeueAs(t, "", "-reason", string(contract.ReasonDeadLettered), "-send"); !strings.Contains(out, "sent back to the central queue: 1") {
		t.Fatalf("requeue said:\n%s", out)
	}
	liveHub, liveA := spotAs(sqsemu.Account, hubInstance, "live-hub"), spotAs(memberA, aInstance, "live-a")
	sendTo(t, b.As(sqsemu.Account, harness.ForwarderRoleName), b.Central, liveHub)
	sendTo(t, b.As(memberA, harness.ForwarderRoleName), b.Central, liveA)

	resumeS3, resumeKMS := b.S3.Stall(), b.kms.Stall()
	defer resumeS3()
	defer resumeKMS()
	began := time.Now()
	res, err := b.ESM.PollOnce(ctx)
	if err != nil || res.Received != 3 {
		t.Fatalf("the invocation received %d messages (%v), want the record and both live events in one batch", res.Received, err)
	}
	if res.Err != nil || res.Failed != 1 || res.Deleted != 2 {
		t.Fatalf("the invocation: %+v; want the two live events done and the sealed record retried alone", res)
	}
	lag := map[string]time.Duration{}
	for _, c := range []struct{ queue, account, body string }{{harness.QueueOf("alpha"), sqsemu.Account, liveHub}, {harness.QueueOf("beta"), memberA, liveA}} {
		for _, m := range karpenterReads(t, b, c.account, c.queue) {
			if aws.ToString(m.Body) != c.body {
				t.Errorf("%s received %s during the brownout, want the live event alone", c.queue, aws.ToString(m.Body))
			}
			sent, _ := strconv.ParseInt(m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64)
			lag[c.queue] = time.UnixMilli(sent).Sub(began)
		}
		if _, ok := lag[c.queue]; !ok {
			t.Errorf("%s received nothing while S3 and KMS stalled: the live event waited on the evidence path", c.queue)
		}
	}
	t.Logf("S3 and KMS stalled: the live events reached their queues %v after the invocation began; the invocation returned after %v",
		lag, time.Since(began).Round(time.Millisecond))
	// Not a speed goal but an order: every live event was sent before the router gave up on its first call to S3 or
	// KMS (the evidence deadline), so none waited on the evidence path, whatever the machine's speed.
	gaveUp := b.S3.GaveUp()
	if k := b.kms.GaveUp(); gaveUp.IsZero() || (!k.IsZero() && k.Before(gaveUp)) {
		gaveUp = k
	}
	if gaveUp.IsZero() {
		t.Fatal("the router never gave up on a stalled call to S3 or KMS: the stall held nothing")
	}
	for queue, d := range lag {
		// SentTimestamp is in milliseconds: a send in the same millisecond as the first give-up is not after it.
		if sent := began.Add(d); sent.After(gaveUp.Truncate(time.Millisecond)) {
			t.Errorf("%s received its live event %v after the router first gave up on S3 or KMS: it waited on the evidence path",
				queue, sent.Sub(gaveUp).Round(time.Millisecond))
		}
	}

	resumeS3()
	resumeKMS()
	b.drain()
	if got := b.received("beta"); len(got) != 1 || got[0] != record {
		t.Fatalf("beta received %d messages once S3 and KMS answered, want the sealed record once", len(got))
	}
	if keys, err := b.ArchiveKeys(ctx); err != nil || countPrefix(keys, archive.DeliveredPrefix) != 1 {
		t.Errorf("the ledger holds %d deliveries (%v), want the record's", countPrefix(keys, archive.DeliveredPrefix), err)
	}
}

// karpenterReads receives every message of queue in account, as Karpenter does, and deletes it.
func karpenterReads(t *testing.T, b *bus, account, queue string) []types.Message {
	t.Helper()
	ctx := context.Background()
	c := b.SQS.ClientIn(account)
	u, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(queue)})
	if err != nil {
		t.Fatal(err)
	}
	var out []types.Message
	for {
		got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: u.QueueUrl, MaxNumberOfMessages: 10,
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSentTimestamp}})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Messages) == 0 {
			return out
		}
		for _, m := range got.Messages {
			out = append(out, m)
			if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: u.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
}
