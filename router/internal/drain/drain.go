// Package drain takes, after an invocation's batch, what else waits in the central queue, and routes it in the same
// invocation. Why: a batching window makes a lone event wait ("If you're using a batch window and your SQS queue
// contains very low traffic, Lambda might wait for up to 20 seconds before invoking your function", "Using Lambda with
// Amazon SQS", https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html), and no window allows batches of at most 10
// ("when you set BatchSize to a value greater than 10, you must set MaximumBatchingWindowInSeconds to at least 1",
// CreateEventSourceMapping): a burst in batches of 10 needs a hundred times the invocations of batches of 1,000, which
// standard mode does not start ("five concurrent invocations", then "up to 300 more instances per minute"). So the
// mapping takes batches of 10 with no window, which routes a lone event at once, and an invocation whose batch was full
// (a backlog waits) receives more itself, chunks of up to contract.DrainChunk, each routed as one batch, for as long as
// the queue gives some and the invocation has time.
//
// What it does as Lambda's poller would: receives with every system and message attribute, and the queue's visibility
// timeout; deletes what was routed (forwarded, dropped or kept), and leaves a message its router retries where the
// router's redelivery put it (its visibility changed to its backoff). What it does not: stop receiving when the
// function is throttled, which it never is (it runs inside an invocation).
package drain

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/deadline"
)

// SQS is what the drain calls of the central queue.
type SQS interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

var _ SQS = (*sqs.Client)(nil)

// Handler routes one batch, as the router's Handle does: the messages it could not route are listed for redelivery.
type Handler func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error)

// Options shape a Drainer.
type Options struct {
	// Max is the most messages one invocation takes beyond its batch.
	Max int
	// Chunk is how many it gathers before routing them (contract.DrainChunk unless set).
	Chunk int
	// Receivers are the ReceiveMessage calls in flight at once (10 unless set).
	Receivers int
	// Reserve is what the drain leaves of the invocation: it starts no chunk with less left (10 s unless set).
	Reserve time.Duration
}

// Drainer drains one queue.
type Drainer struct {
	sqs    SQS
	url    string
	handle Handler
	opts   Options
}

// New returns the drain of the queue at url, routing each chunk with handle.
func New(client SQS, url string, handle Handler, opts Options) *Drainer {
	if opts.Chunk <= 0 {
		opts.Chunk = contract.DrainChunk
	}
	if opts.Receivers <= 0 {
		opts.Receivers = 10
	}
	if opts.Reserve <= 0 {
		opts.Reserve = 10 * time.Second
	}
	return &Drainer{sqs: client, url: url, handle: handle, opts: opts}
}

// Result is what one drain did: the messages it received, routed and deleted, and left for redelivery.
type Result struct {
	Received, Deleted, Retried int
}

// Wraps reports whether a batch of n messages calls for a drain: a full receive, which says more may wait.
func Wraps(n int) bool { return n >= contract.MaxReceive }

// Drain receives and routes chunks until the queue gives none, Max messages were taken, or less than Reserve of the
// invocation is left; each record carries the event source (its ARN and region) of like, a record of the batch. An
// error is the queue's (a receive or a delete that failed as a whole): what was received and not deleted comes back
// after its visibility timeout, as a message Lambda's poller received and lost would.
func (d *Drainer) Drain(ctx context.Context, like events.SQSMessage) (Result, error) {
	ctx, cancel := deadline.Returning(ctx)
	defer cancel()
	var res Result
	for res.Received < d.opts.Max {
		if end, ok := ctx.Deadline(); ok && time.Until(end) < d.opts.Reserve {
			return res, nil
		}
		msgs, err := d.receive(ctx, min(d.opts.Chunk, d.opts.Max-res.Received))
		res.Received += len(msgs)
		if len(msgs) > 0 {
			deleted, retried, herr := d.route(ctx, msgs, like)
			res.Deleted += deleted
			res.Retried += retried
			err = joinErr(err, herr)
		}
		if err != nil {
			return res, err
		}
		if len(msgs) == 0 {
			return res, nil
		}
	}
	return res, nil
}

func joinErr(a, b error) error {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return fmt.Errorf("%w; %w", a, b)
}

// receive gathers up to n messages, Receivers calls at a time, until a round of calls brings none or n are in hand.
func (d *Drainer) receive(ctx context.Context, n int) ([]types.Message, error) {
	var out []types.Message
	for len(out) < n {
		need := n - len(out)
		calls := min(d.opts.Receivers, (need+contract.MaxReceive-1)/contract.MaxReceive)
		got := make([][]types.Message, calls)
		errs := make([]error, calls)
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() {
				r, err := d.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
					QueueUrl: aws.String(d.url), MaxNumberOfMessages: int32(min(contract.MaxReceive, need-i*contract.MaxReceive)),
					MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
					MessageAttributeNames:       []string{"All"},
				})
				if err != nil {
					errs[i] = fmt.Errorf("receiving from %s: %w", d.url, err)
					return
				}
				got[i] = r.Messages
			})
		}
		wg.Wait()
		// Every message handed out is routed, a failed call's siblings' too: one left out would be invisible for
		// the visibility timeout, routed by no one.
		round := 0
		for i := range calls {
			out = append(out, got[i]...)
			round += len(got[i])
		}
		var err error
		for _, e := range errs {
			err = joinErr(err, e)
		}
		if err != nil {
			return out, err
		}
		if round == 0 {
			break
		}
	}
	return out, nil
}

// route hands msgs to the router as one batch, as Lambda presents a batch, and deletes what it did not list for
// redelivery.
func (d *Drainer) route(ctx context.Context, msgs []types.Message, like events.SQSMessage) (deleted, retried int, err error) {
	batch := events.SQSEvent{Records: make([]events.SQSMessage, len(msgs))}
	for i, m := range msgs {
		batch.Records[i] = Record(m, like.EventSourceARN, like.AWSRegion)
	}
	// The chunk's routing ends deleteReserve ahead of the drain, whatever it meets: what it routed is then deleted in
	// time.
	hctx, cancel := deadline.Before(ctx, deleteReserve, 10)
	defer cancel()
	resp, err := d.handle(hctx, batch)
	if err != nil {
		return 0, 0, fmt.Errorf("routing %d messages taken from %s: %w", len(msgs), d.url, err) // all come back after their visibility
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var done []types.DeleteMessageBatchRequestEntry
	for i, m := range msgs {
		if failed[aws.ToString(m.MessageId)] {
			retried++
			continue
		}
		done = append(done, types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
	}
	// Deleted Receivers calls at a time: a chunk of a thousand takes a hundred.
	calls := (len(done) + contract.MaxReceive - 1) / contract.MaxReceive
	counts := make([]int, calls)
	errs := make([]error, calls)
	sem := make(chan struct{}, d.opts.Receivers)
	var wg sync.WaitGroup
	for i := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			chunk := done[i*contract.MaxReceive : min((i+1)*contract.MaxReceive, len(done))]
			out, derr := d.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(d.url), Entries: chunk})
			if derr != nil {
				// Routed and not deleted: received again after its visibility timeout, and routed again, which
				// Karpenter takes idempotently.
				errs[i] = fmt.Errorf("deleting what was routed from %s: %w", d.url, derr)
				return
			}
			counts[i] = len(out.Successful)
		})
	}
	wg.Wait()
	for i := range calls {
		deleted += counts[i]
		err = joinErr(err, errs[i])
	}
	return deleted, retried, err
}

// deleteReserve is what a chunk's routing leaves of the drain: the time to delete what it routed (or a tenth of what
// is left, when that is less).
const deleteReserve = 2 * time.Second

// Record is m as Lambda's event source mapping presents a record of the queue of arn in region.
func Record(m types.Message, arn, region string) events.SQSMessage {
	attrs := map[string]events.SQSMessageAttribute{}
	for k, v := range m.MessageAttributes {
		attrs[k] = events.SQSMessageAttribute{StringValue: v.StringValue, BinaryValue: v.BinaryValue, DataType: aws.ToString(v.DataType)}
	}
	return events.SQSMessage{
		MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
		Md5OfBody: aws.ToString(m.MD5OfBody), Attributes: m.Attributes, MessageAttributes: attrs, EventSource: "aws:sqs",
		EventSourceARN: arn, AWSRegion: region,
	}
}
