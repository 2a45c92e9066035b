package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/harness"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
)

// TestNoQueueMakesTheBusItsDeadLetters: a queue of the hub cannot make the quarantine or the central queue its
// dead-letter queue (so nothing moves messages there, made-up kib-* attributes and all, but the router and the bus's
// senders), and only the central queue may make the DLQ its own: the queues' RedriveAllowPolicy, as the stack
// declares them, enforced by the emulator as SQS does (sqsemu's redrive). A queue with no RedriveAllowPolicy still
// takes any queue of its account, as SQS's default does: the stand-in refuses only what SQS refuses.
func TestNoQueueMakesTheBusItsDeadLetters(t *testing.T) {
	b := newBus(t)
	ctx := context.Background()
	client := b.SQS.Client()
	arn := func(q string) string { return "arn:aws:sqs:" + sqsemu.Region + ":" + sqsemu.Account + ":" + q }
	redrive := func(target string) map[string]string {
		return map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + arn(target) + `","maxReceiveCount":"1"}`}
	}
	for _, target := range []string{harness.QuarantineQueue, harness.CentralQueue, harness.DeadLetterQueue} {
		_, err := b.SQS.CreateQueue(ctx, "mallory-"+target, redrive(target))
		if err == nil || !strings.Contains(err.Error(), "InvalidParameterValue") || !strings.Contains(err.Error(), "RedriveAllowPolicy") {
			t.Errorf("a queue of the hub made %s its dead-letter queue at creation: %v", target, err)
		}
	}
	plain, err := b.SQS.CreateQueue(ctx, "mallory-plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(plain), Attributes: redrive(harness.QuarantineQueue)}); err == nil {
		t.Error("an existing queue of the hub made the quarantine its dead-letter queue")
	}
	if _, err := b.SQS.CreateQueue(ctx, "open-target", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(plain), Attributes: redrive("open-target")}); err != nil {
		t.Errorf("a queue with no RedriveAllowPolicy refused a source of its account, which SQS allows: %v", err)
	}
	if _, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(b.Central), Attributes: redrive(harness.DeadLetterQueue)}); err != nil {
		t.Errorf("the central queue may not make the DLQ its dead-letter queue: %v", err)
	}
}
