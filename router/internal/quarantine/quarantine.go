// Package quarantine keeps the messages the router refuses (contract.QuarantineReasons) in the bus's quarantine
// queue instead of deleting them: the body byte for byte, and why it was refused in message attributes
// (contract.AttrReason, ...), so an operator can read it and send it back (cmd/requeue, docs/operations.md).
//
// A message is kept when SendMessageBatch accepted its entry; an entry SQS failed, or a call that failed, leaves it
// unkept, and the router retries it rather than delete it: a refusal never loses a message, and it never waits on
// another (the router sends to the quarantine while it sends the batch's deliveries).
package quarantine

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// SQS is the one call the quarantine makes.
type SQS interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

var _ SQS = (*sqs.Client)(nil)

// Message is a refused message and why.
type Message struct {
	Body   *string
	Reason contract.Reason
	Err    error
	// Account is the account the event names ("" when the body is no event); Sender and Sent are the SenderId and
	// SentTimestamp (epoch milliseconds, as SQS gives it) the router judged: the message's in the central queue, or
	// the first sender of a message sent back; MessageID its ID there, EventID its event's id.
	Account, Sender, Sent, MessageID, EventID string
	// FromDLQ: Sender is the one the dead-letter queue held (contract.AttrOrigin).
	FromDLQ bool
}

// Queue keeps messages in one SQS queue.
type Queue struct {
	sqs SQS
	url string
}

// New returns the quarantine at url.
func New(client SQS, url string) *Queue { return &Queue{sqs: client, url: url} }

// maxEntries is SendMessageBatch's entry limit; maxBytes, its limit on the sum of the entries' sizes (bodies and
// attributes: "SendMessageBatch", https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html).
const maxEntries, maxBytes = 10, 1 << 20

var entryIDs = [maxEntries]string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// Keep sends each message to the quarantine and returns one error per message: nil when SQS took it.
func (q *Queue) Keep(ctx context.Context, msgs []Message) []error {
	errs := make([]error, len(msgs))
	for start := 0; start < len(msgs); {
		end, size := start, 0
		for end < len(msgs) && end-start < maxEntries {
			n := entrySize(msgs[end])
			if end > start && size+n > maxBytes {
				break
			}
			size += n
			end++
		}
		q.send(ctx, msgs[start:end], errs[start:end])
		start = end
	}
	return errs
}

func (q *Queue) send(ctx context.Context, msgs []Message, errs []error) {
	entries := make([]types.SendMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(entryIDs[i]), MessageBody: m.Body, MessageAttributes: attributes(m)}
	}
	out, err := q.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("keeping the message in the quarantine: %w", err)
		}
		return
	}
	for i := range errs {
		errs[i] = errors.New("keeping the message in the quarantine: SQS answered nothing for its entry")
	}
	for _, s := range out.Successful {
		if i, err := strconv.Atoi(aws.ToString(s.Id)); err == nil && i < len(errs) {
			errs[i] = nil
		}
	}
	for _, f := range out.Failed {
		if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i < len(errs) {
			errs[i] = fmt.Errorf("keeping the message in the quarantine: %s: %s", aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
}

// attributes are the message attributes saying why m was refused; empty values are left out (SQS refuses them).
func attributes(m Message) map[string]types.MessageAttributeValue {
	reason := ""
	if m.Err != nil {
		reason = contract.TruncateUTF8(m.Err.Error(), contract.MaxAttrError)
	}
	out := map[string]types.MessageAttributeValue{}
	for name, v := range map[string]string{
		contract.AttrReason: string(m.Reason), contract.AttrError: reason, contract.AttrAccount: m.Account,
		contract.AttrSender: m.Sender, contract.AttrMessageID: m.MessageID, contract.AttrEventID: m.EventID,
		contract.AttrOrigin: map[bool]string{true: contract.OriginDLQ}[m.FromDLQ],
	} {
		if v != "" {
			out[name] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	if m.Sent != "" {
		out[contract.AttrSent] = types.MessageAttributeValue{DataType: aws.String("Number"), StringValue: aws.String(m.Sent)}
	}
	return out
}

// entrySize is what SQS counts of an entry against the batch's size: its body, and each attribute's name, type and
// value.
func entrySize(m Message) int {
	n := len(aws.ToString(m.Body))
	for k, v := range attributes(m) {
		n += len(k) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue))
	}
	return n
}
