// Package intake takes the bus's dead-letter queue into the quarantine when the redrive role asks
// (contract.AttrIntake, make requeue FROM=dlq SEND=1): each message is kept there as dead_lettered, sealed with the
// sender the dead-letter queue holds, then deleted from the dead-letter queue. make requeue then sends it back from
// the quarantine as any kept message, and the router judges it by that sender (docs/security.md, "Sealed refusals").
//
// Why the router and not make requeue: what the redrive role sends says of itself only what the router sealed. A
// dead-letter queue's message read by the redrive role and sent back with the sender it claims would let whoever holds
// the role name any account's forwarder; read by the router, its sender is the one SQS gives.
//
// A message the redrive role sent back before and that was dead-lettered since (its receives on the central queue
// exhausted) carries its seal: when it verifies, the sealed first sender is kept, not the redrive role's.
//
// Nothing is lost if the invocation ends halfway: what was kept and not deleted is kept again on the next request
// (the archive writes it once), what was not kept comes back to the dead-letter queue after the receive's visibility
// timeout.
package intake

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// SQS is what the intake calls of the dead-letter queue.
type SQS interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// Keeper keeps messages in the quarantine, sealed and archived (quarantine.Queue).
type Keeper interface {
	Keep(ctx context.Context, msgs []quarantine.Message) []error
}

// Verifier checks a seal (sealing.Sealer).
type Verifier interface {
	Verify(ctx context.Context, rec sealing.Record, seal string) error
}

var (
	_ SQS      = (*sqs.Client)(nil)
	_ Keeper   = (*quarantine.Queue)(nil)
	_ Verifier = (*sealing.Sealer)(nil)
)

// Options bound one intake.
type Options struct {
	// Max is the most messages one request takes (1,000 unless set): the rest wait for the next request.
	Max int
	// Reserve is the time left before the invocation's deadline at which no new batch is read (5 s unless set).
	Reserve time.Duration
	// Visibility hides each message received while it is kept (a minute unless set).
	Visibility time.Duration
	// Verifier checks the seal of a message sent back before; nil: none is believed.
	Verifier Verifier
}

// Intake takes one dead-letter queue in.
type Intake struct {
	sqs  SQS
	url  string
	keep Keeper
	opts Options
}

// New returns the intake of the dead-letter queue at url.
func New(client SQS, url string, keep Keeper, opts Options) *Intake {
	if opts.Max <= 0 {
		opts.Max = 1000
	}
	if opts.Reserve <= 0 {
		opts.Reserve = 5 * time.Second
	}
	if opts.Visibility <= 0 {
		opts.Visibility = time.Minute
	}
	return &Intake{sqs: client, url: url, keep: keep, opts: opts}
}

// Result is what one request took: Kept messages (deleted from the dead-letter queue), whether some were left (Max
// reached, or the invocation's time), and the event IDs (the message IDs of what is no event) of those of Kept that
// went to the archive only (quarantine.ErrArchivedOnly: too large for the quarantine with its attributes).
type Result struct {
	Kept         int
	More         bool
	ArchivedOnly []string
}

// Take reads the dead-letter queue until it answers empty, Max messages were kept, or the invocation's deadline is
// near; each message read is kept in the quarantine and deleted, or, not kept, made visible again.
func (in *Intake) Take(ctx context.Context) (Result, error) {
	var res Result
	wait := int32(0)
	for {
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < in.opts.Reserve {
			res.More = true
			return res, nil
		}
		if res.Kept >= in.opts.Max {
			res.More = true
			return res, nil
		}
		got, err := in.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(in.url), MaxNumberOfMessages: int32(min(10, in.opts.Max-res.Kept)), WaitTimeSeconds: wait,
			VisibilityTimeout: int32(in.opts.Visibility.Seconds()), MessageAttributeNames: []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSenderId, types.MessageSystemAttributeNameSentTimestamp},
		})
		if err != nil {
			return res, fmt.Errorf("receiving from the dead-letter queue: %w", err)
		}
		if len(got.Messages) == 0 {
			if wait > 0 {
				return res, nil
			}
			wait = 1 // a short poll samples some of SQS's servers: only an empty long poll ends the intake
			continue
		}
		wait = 0
		kept, archivedOnly, err := in.takeBatch(ctx, got.Messages)
		res.Kept += kept
		res.ArchivedOnly = append(res.ArchivedOnly, archivedOnly...)
		if err != nil {
			return res, err
		}
	}
}

// takeBatch keeps msgs, deletes what was kept (in the quarantine, or in the archive only) and releases the rest; it
// returns how many were kept and deleted, and which of those the archive only holds.
func (in *Intake) takeBatch(ctx context.Context, msgs []types.Message) (int, []string, error) {
	keep := make([]quarantine.Message, len(msgs))
	for i, m := range msgs {
		keep[i] = in.record(ctx, m)
	}
	errs := in.keep.Keep(ctx, keep)
	var kept []types.DeleteMessageBatchRequestEntry
	var archivedOnly []string
	var failed error
	for i, m := range msgs {
		if errors.Is(errs[i], quarantine.ErrArchivedOnly) {
			archivedOnly = append(archivedOnly, cmp.Or(keep[i].EventID, aws.ToString(m.MessageId)))
		} else if errs[i] != nil {
			failed = cmp.Or(failed, errs[i])
			_, _ = in.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(in.url), ReceiptHandle: m.ReceiptHandle})
			continue
		}
		kept = append(kept, types.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(len(kept))), ReceiptHandle: m.ReceiptHandle})
	}
	n := 0
	if len(kept) > 0 {
		out, err := in.sqs.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(in.url), Entries: kept})
		if err != nil {
			return 0, nil, fmt.Errorf("deleting from the dead-letter queue what the quarantine kept (kept again next time, archived once): %w", err)
		}
		n = len(out.Successful)
	}
	if failed != nil {
		return n, archivedOnly, fmt.Errorf("keeping dead-lettered messages: %w", failed)
	}
	return n, archivedOnly, nil
}

// record is what the quarantine keeps of m: its sender as the dead-letter queue holds it, or, when the redrive role
// sent it back before and its seal verifies, the first sender sealed then.
func (in *Intake) record(ctx context.Context, m types.Message) quarantine.Message {
	attr := func(k string) string { return aws.ToString(m.MessageAttributes[k].StringValue) }
	body := aws.ToString(m.Body)
	var ev struct{ ID, Account string }
	_ = json.Unmarshal([]byte(body), &ev) // what it names, when it is an event
	k := quarantine.Message{
		Body: m.Body, Reason: contract.ReasonDeadLettered, Account: ev.Account, EventID: ev.ID,
		Sender: m.Attributes[string(types.MessageSystemAttributeNameSenderId)], Sent: m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)],
		MessageID: aws.ToString(m.MessageId), FromDLQ: true, Err: why(attr),
	}
	if sealed, seal := sealing.ReadSentBack(body, ev.Account, attr); seal != "" && in.opts.Verifier != nil &&
		in.opts.Verifier.Verify(ctx, sealed, seal) == nil {
		k.Sender, k.Sent, k.FromDLQ, k.MessageID = sealed.FirstSender, sealed.FirstSent, sealed.Origin == contract.OriginDLQ, sealed.MessageID
	}
	k.Refused = aws.ToString(m.MessageId)
	return k
}

// why is why a message is in the dead-letter queue: EventBridge's ERROR_CODE and ERROR_MESSAGE when it could not
// deliver it ("Using dead-letter queues to process undelivered events in EventBridge",
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html), or its receives on the central queue ran
// out.
func why(attr func(string) string) error {
	if code := attr("ERROR_CODE"); code != "" {
		return errors.New(strings.TrimSpace("EventBridge could not deliver it to the central queue: " + code + ": " + attr("ERROR_MESSAGE")))
	}
	return errors.New("its receives on the central queue ran out (centralQueue.maxReceiveCount): the router could not forward it")
}

// Requested reports whether rec asks for an intake of the dead-letter queue.
func Requested(rec *events.SQSMessage) bool {
	v := rec.MessageAttributes[contract.AttrIntake].StringValue
	return v != nil && *v == contract.IntakeDLQ
}
