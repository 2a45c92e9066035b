// Package lambdaesm plays Lambda's SQS event source mapping against a real SQS endpoint: it receives a batch,
// invokes the handler with the messages as Lambda presents them, deletes the successes, and leaves the
// reported failures for redelivery. A handler error, or a failure naming no message of the batch, fails the
// whole batch, as in Lambda.
package lambdaesm

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Handler is the Lambda handler signature for SQS batches with partial failures.
type Handler func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error)

// Mapping is one event source mapping: a queue, a batch size and a handler.
type Mapping struct {
	SQS       *sqs.Client
	QueueURL  string
	QueueARN  string
	BatchSize int
	Handler   Handler
}

// Result is what one invocation did.
type Result struct {
	Received, Deleted, Failed int
	Response                  events.SQSEventResponse
	Err                       error
}

// PollOnce receives up to BatchSize messages (in receives of at most 10) and, if there are any, invokes the
// handler once. Failed messages are made visible again at once, standing in for the visibility timeout so
// tests need not wait for it.
func (m Mapping) PollOnce(ctx context.Context) (Result, error) {
	var msgs []types.Message
	for len(msgs) < m.BatchSize {
		out, err := m.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &m.QueueURL, MaxNumberOfMessages: int32(min(10, m.BatchSize-len(msgs))),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		})
		if err != nil {
			return Result{}, fmt.Errorf("receiving from %s: %w", m.QueueURL, err)
		}
		if len(out.Messages) == 0 {
			break
		}
		msgs = append(msgs, out.Messages...)
	}
	if len(msgs) == 0 {
		return Result{}, nil
	}
	batch := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	byID := map[string]bool{}
	for i, msg := range msgs {
		id := aws.ToString(msg.MessageId)
		byID[id] = true
		batch.Records[i] = events.SQSMessage{
			MessageId: id, ReceiptHandle: aws.ToString(msg.ReceiptHandle), Body: aws.ToString(msg.Body),
			Md5OfBody: aws.ToString(msg.MD5OfBody), Attributes: msg.Attributes, EventSource: "aws:sqs",
			EventSourceARN: m.QueueARN, AWSRegion: "us-east-1",
		}
	}
	res := Result{Received: len(msgs)}
	res.Response, res.Err = m.Handler(ctx, batch)
	failed := map[string]bool{}
	wholeBatch := res.Err != nil
	for _, f := range res.Response.BatchItemFailures {
		if !byID[f.ItemIdentifier] {
			wholeBatch = true // Lambda treats an unknown or empty identifier as a failure of the batch
		}
		failed[f.ItemIdentifier] = true
	}
	var done []types.DeleteMessageBatchRequestEntry
	for i, msg := range msgs {
		id := aws.ToString(msg.MessageId)
		if wholeBatch || failed[id] {
			res.Failed++
			if _, err := m.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
				QueueUrl: &m.QueueURL, ReceiptHandle: msg.ReceiptHandle, VisibilityTimeout: 0,
			}); err != nil {
				return res, fmt.Errorf("releasing %s: %w", id, err)
			}
			continue
		}
		done = append(done, types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: msg.ReceiptHandle})
	}
	// Lambda deletes the successes in batches of up to 10.
	for start := 0; start < len(done); start += 10 {
		chunk := done[start:min(start+10, len(done))]
		out, err := m.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &m.QueueURL, Entries: chunk})
		if err != nil {
			return res, fmt.Errorf("deleting from %s: %w", m.QueueURL, err)
		}
		if len(out.Failed) > 0 {
			return res, fmt.Errorf("deleting from %s: %d entries failed", m.QueueURL, len(out.Failed))
		}
		res.Deleted += len(chunk)
	}
	return res, nil
}

// Drain polls until the queue is empty or maxPolls invocations have run, and returns every invocation's result.
func (m Mapping) Drain(ctx context.Context, maxPolls int) ([]Result, error) {
	var all []Result
	for range maxPolls {
		r, err := m.PollOnce(ctx)
		if err != nil {
			return all, err
		}
		if r.Received == 0 {
			return all, nil
		}
		all = append(all, r)
	}
	return all, nil
}
