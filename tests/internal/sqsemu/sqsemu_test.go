package sqsemu

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// TestAMessageIsItsBodyAndItsAttributes: through the AWS SDK, as SQS does and goaws does not, a message over its
// queue's MaximumMessageSize, its attributes counted with its body (name, data type and value each), is refused: a
// SendMessage with InvalidParameterValue, a batch's entry alone in its Failed list; one at the size is taken; a batch
// over 1 MiB in all is refused whole (BatchRequestTooLong).
func TestAMessageIsItsBodyAndItsAttributes(t *testing.T) {
	ctx := context.Background()
	s := Start()
	url, err := s.CreateQueue(ctx, "small", map[string]string{"MaximumMessageSize": "1024"})
	if err != nil {
		t.Fatal(err)
	}
	c := s.Client()
	attr := map[string]types.MessageAttributeValue{"kib-reason": {DataType: aws.String("String"), StringValue: aws.String("unparseable")}}
	attrBytes := len("kib-reason") + len("String") + len("unparseable")
	at, over := strings.Repeat("a", 1024-attrBytes), strings.Repeat("o", 1024-attrBytes+1)
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &at, MessageAttributes: attr}); err != nil {
		t.Errorf("a message at its queue's size: %v", err)
	}
	var api smithy.APIError
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &url, MessageBody: &over, MessageAttributes: attr}); !errors.As(err, &api) ||
		api.ErrorCode() != "InvalidParameterValue" {
		t.Errorf("a message a byte over its queue's size, attributes counted: %v, want InvalidParameterValue", err)
	}
	out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("at"), MessageBody: &at, MessageAttributes: attr}, {Id: aws.String("over"), MessageBody: &over, MessageAttributes: attr},
	}})
	if err != nil || len(out.Successful) != 1 || aws.ToString(out.Successful[0].Id) != "at" || len(out.Failed) != 1 ||
		aws.ToString(out.Failed[0].Id) != "over" || aws.ToString(out.Failed[0].Code) != "InvalidParameterValue" || !out.Failed[0].SenderFault {
		t.Errorf("a batch with an entry over: %+v, %v; want that entry alone failed", out, err)
	}
	big, err := s.CreateQueue(ctx, "big", nil)
	if err != nil {
		t.Fatal(err)
	}
	half := strings.Repeat("h", 1<<19)
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &big, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("1"), MessageBody: &half}, {Id: aws.String("2"), MessageBody: &half, MessageAttributes: attr},
	}})
	if !errors.As(err, &api) || api.ErrorCode() != "BatchRequestTooLong" {
		t.Errorf("a batch over 1 MiB in all: %v, want BatchRequestTooLong", err)
	}
}
