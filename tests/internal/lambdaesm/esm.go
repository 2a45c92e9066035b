// Package lambdaesm plays Lambda's SQS event source mapping against a real SQS endpoint: it receives a batch,
// invokes the handler with the messages as Lambda presents them, deletes the successes, and leaves the
// reported failures alone, in flight until their visibility timeout ends (as the handler may have changed it).
// A handler error, or a failure naming no message of the batch, fails the whole batch, as in Lambda. Unlike
// Lambda, which long-polls with several pollers, it receives only when asked to (PollOnce, Drain).
package lambdaesm

import (
	"context"
	"fmt"
	"strconv"
	"time"

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
// handler once.
func (m Mapping) PollOnce(ctx context.Context) (Result, error) {
	return m.PollWindow(ctx, 0)
}

// PollWindow is PollOnce with Lambda's batching window (MaximumBatchingWindowInSeconds): once a first message is
// in hand it keeps receiving until the batch is full or window has passed since the poll began, then invokes.
func (m Mapping) PollWindow(ctx context.Context, window time.Duration) (Result, error) {
	deadline := time.Now().Add(window)
	var msgs []types.Message
	for len(msgs) < m.BatchSize {
		out, err := m.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &m.QueueURL, MaxNumberOfMessages: int32(min(10, m.BatchSize-len(msgs))),
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"}, // Lambda's records carry every message attribute
		})
		if err != nil {
			return Result{}, fmt.Errorf("receiving from %s: %w", m.QueueURL, err)
		}
		msgs = append(msgs, out.Messages...)
		if len(out.Messages) > 0 {
			continue
		}
		if len(msgs) == 0 || !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case <-time.After(min(50*time.Millisecond, time.Until(deadline))):
		}
	}
	if len(msgs) == 0 {
		return Result{}, nil
	}
	return m.invoke(ctx, msgs)
}

// invoke hands msgs to the handler as one batch and deletes what it did not report failed.
func (m Mapping) invoke(ctx context.Context, msgs []types.Message) (Result, error) {
	batch := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	byID := map[string]bool{}
	for i, msg := range msgs {
		id := aws.ToString(msg.MessageId)
		byID[id] = true
		batch.Records[i] = events.SQSMessage{
			MessageId: id, ReceiptHandle: aws.ToString(msg.ReceiptHandle), Body: aws.ToString(msg.Body),
			Md5OfBody: aws.ToString(msg.MD5OfBody), Attributes: msg.Attributes, EventSource: "aws:sqs",
			EventSourceARN: m.QueueARN, AWSRegion: "us-east-1", MessageAttributes: recordAttributes(msg.MessageAttributes),
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

// Drain polls until the queue holds no message, visible or in flight, or maxPolls invocations have run, and
// returns every invocation's result. Messages in flight are waited for, as Lambda's pollers would receive them
// when they come back, until ctx ends.
func (m Mapping) Drain(ctx context.Context, maxPolls int) ([]Result, error) {
	var all []Result
	for len(all) < maxPolls {
		r, err := m.PollOnce(ctx)
		if err != nil {
			return all, err
		}
		if r.Received > 0 {
			all = append(all, r)
			continue
		}
		left, err := m.Left(ctx)
		if err != nil || left == 0 {
			return all, err
		}
		select {
		case <-ctx.Done():
			return all, fmt.Errorf("%d messages still in flight: %w", left, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return all, nil
}

// Left is how many messages the queue holds, visible or in flight.
func (m Mapping) Left(ctx context.Context) (int, error) {
	out, err := m.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &m.QueueURL, AttributeNames: []types.QueueAttributeName{
		types.QueueAttributeNameApproximateNumberOfMessages, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	}})
	if err != nil {
		return 0, fmt.Errorf("reading the attributes of %s: %w", m.QueueURL, err)
	}
	visible, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	hidden, _ := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return visible + hidden, nil
}

// recordAttributes are a message's attributes as Lambda's SQS record gives them (messageAttributes: stringValue,
// binaryValue, dataType).
func recordAttributes(in map[string]types.MessageAttributeValue) map[string]events.SQSMessageAttribute {
	if len(in) == 0 {
		return nil
	}
	out := make(map[string]events.SQSMessageAttribute, len(in))
	for k, v := range in {
		out[k] = events.SQSMessageAttribute{DataType: aws.ToString(v.DataType), StringValue: v.StringValue, BinaryValue: v.BinaryValue}
	}
	return out
}
