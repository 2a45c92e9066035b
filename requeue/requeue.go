// Package requeue lists the messages of the bus's quarantine or dead-letter queue and sends them back to the central
// queue (make requeue, docs/operations.md, "Refused messages: the quarantine" and "DLQ not empty"), as the identity
// it runs as: the redrive role, the one role of the hub the central queue takes messages of for any account.
//
// Why not StartMessageMoveTask: AWS does not document what SenderId and SentTimestamp a moved message keeps (a
// redrive makes "new messages with a new messageid, enqueueTime, and retention period", SQS developer guide,
// "Configure a dead-letter queue redrive"). SendMessage stamps its caller's ("ReceiveMessage", SenderId: "for an IAM
// role, the IAM role ID", https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ReceiveMessage.html),
// so a message sent back by this command is the redrive role's, whatever its first sender was: the router never
// refuses it for its sender, even when the forwarder that first sent it was created anew since.
//
// A message is deleted from its queue only once the central queue took its copy; one not selected, or not taken,
// is made visible again at once. Nothing is lost if the command stops halfway: what it had not deleted comes back
// after the receive's visibility timeout.
package requeue

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// SQS is what the command calls.
type SQS interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

var _ SQS = (*sqs.Client)(nil)

// Outputs are what the command reads of the stack's outputs (pulumi stack output --json).
type Outputs struct {
	Region             string `json:"region"`
	CentralQueueURL    string `json:"centralQueueUrl"`
	DeadLetterQueueURL string `json:"deadLetterQueueUrl"`
	QuarantineQueueURL string `json:"quarantineQueueUrl"`
}

// ReadOutputs decodes the stack's outputs.
func ReadOutputs(r io.Reader) (Outputs, error) {
	var o Outputs
	if err := json.NewDecoder(r).Decode(&o); err != nil {
		return Outputs{}, fmt.Errorf("reading the stack's outputs (pulumi stack output --json): %w", err)
	}
	if o.CentralQueueURL == "" || o.DeadLetterQueueURL == "" || o.QuarantineQueueURL == "" {
		return Outputs{}, fmt.Errorf("the stack's outputs name no centralQueueUrl, deadLetterQueueUrl or quarantineQueueUrl: is it a bus's stack, updated since the quarantine came?")
	}
	return o, nil
}

// The queues the command reads.
const (
	Quarantine = "quarantine"
	DLQ        = "dlq"
)

// Options choose what the command does.
type Options struct {
	// From is Quarantine or DLQ.
	From string
	// Reasons, Accounts and EventIDs select messages (all, when empty): by the reason the router refused them for
	// (the quarantine's), the account their event names, their event's id.
	Reasons, Accounts, EventIDs []string
	// Send sends the selected messages back to the central queue; otherwise they are only listed.
	Send bool
	// Visibility hides each received message from other readers while the command runs (1 minute unless set);
	// every message not sent back is made visible again when it ends.
	Visibility time.Duration
}

// Message is one message read, as listed.
type Message struct {
	ID, Reason, Account, Sender, EventID, Error, Body string
	receipt                                           string
}

// Report is what a run did.
type Report struct {
	Read, Selected, Sent int
	Messages             []Message
}

// Run reads every message of the queue opts.From names, lists it to w, and, with opts.Send, sends the selected ones
// back to the central queue.
func Run(ctx context.Context, client SQS, out Outputs, opts Options, w io.Writer) (Report, error) {
	from := out.QuarantineQueueURL
	switch opts.From {
	case Quarantine:
	case DLQ:
		from = out.DeadLetterQueueURL
	default:
		return Report{}, fmt.Errorf("-from %q: want %s or %s", opts.From, Quarantine, DLQ)
	}
	if opts.Visibility == 0 {
		opts.Visibility = time.Minute
	}
	var rep Report
	var keep []Message // received, not sent: made visible again at the end
	defer func() { release(context.WithoutCancel(ctx), client, from, keep) }()
	// A short poll first, then, when it finds nothing, a long one: a short poll samples some of SQS's servers and
	// may answer empty while messages wait ("Amazon SQS short and long polling"), a long poll asks them all. Only an
	// empty long poll ends the reading.
	wait := int32(0)
	for {
		got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(from), MaxNumberOfMessages: 10, WaitTimeSeconds: wait, VisibilityTimeout: int32(opts.Visibility.Seconds()),
			MessageAttributeNames:       []string{"All"},
			MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameSenderId, types.MessageSystemAttributeNameSentTimestamp},
		})
		if err != nil {
			return rep, fmt.Errorf("receiving from %s: %w", from, err)
		}
		if len(got.Messages) == 0 && wait > 0 {
			break
		}
		if len(got.Messages) == 0 {
			wait = 1
			continue
		}
		wait = 0
		var selected []Message
		for _, m := range got.Messages {
			msg := read(m)
			rep.Read++
			rep.Messages = append(rep.Messages, msg)
			if opts.selects(msg) {
				rep.Selected++
				selected = append(selected, msg)
			} else {
				keep = append(keep, msg)
			}
		}
		if !opts.Send {
			keep = append(keep, selected...)
			continue
		}
		sent, unsent, err := send(ctx, client, out.CentralQueueURL, from, selected)
		keep = append(keep, unsent...)
		if err != nil {
			return rep, err
		}
		rep.Sent += len(sent)
		if err := remove(ctx, client, from, sent); err != nil {
			return rep, err
		}
	}
	list(w, rep, opts)
	return rep, nil
}

func (o Options) selects(m Message) bool {
	in := func(set []string, v string) bool { return len(set) == 0 || slices.Contains(set, v) }
	return in(o.Reasons, m.Reason) && in(o.Accounts, m.Account) && in(o.EventIDs, m.EventID)
}

// read takes what the router wrote of why (the quarantine's attributes), and for a message of the DLQ what its body
// says.
func read(m types.Message) Message {
	attr := func(k string) string { return aws.ToString(m.MessageAttributes[k].StringValue) }
	msg := Message{
		ID: aws.ToString(m.MessageId), Reason: attr(contract.AttrReason), Account: attr(contract.AttrAccount),
		Sender: attr(contract.AttrSender), EventID: attr(contract.AttrEventID), Error: attr(contract.AttrError),
		Body: aws.ToString(m.Body), receipt: aws.ToString(m.ReceiptHandle),
	}
	if msg.Sender == "" {
		msg.Sender = m.Attributes[string(types.MessageSystemAttributeNameSenderId)]
	}
	if msg.Account == "" || msg.EventID == "" {
		var ev struct{ ID, Account string }
		if json.Unmarshal([]byte(msg.Body), &ev) == nil {
			msg.Account, msg.EventID = cmp.Or(msg.Account, ev.Account), cmp.Or(msg.EventID, ev.ID)
		}
	}
	if msg.Reason == "" {
		msg.Reason = cmp.Or(attr("ERROR_CODE"), "retries exhausted") // EventBridge's own delivery failures carry ERROR_CODE
	}
	return msg
}

var ids = [10]string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// send sends msgs to the central queue in one batch, each in its account's message group as the rules send them;
// it returns those SQS took and those it did not.
func send(ctx context.Context, client SQS, central, from string, msgs []Message) (sent, unsent []Message, err error) {
	if len(msgs) == 0 {
		return nil, nil, nil
	}
	entries := make([]types.SendMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.SendMessageBatchRequestEntry{
			Id: aws.String(ids[i]), MessageBody: aws.String(m.Body),
			MessageAttributes: map[string]types.MessageAttributeValue{
				contract.AttrRequeuedFrom: {DataType: aws.String("String"), StringValue: aws.String(from[strings.LastIndex(from, "/")+1:])},
			},
		}
		if contract.IsAccount(m.Account) {
			entries[i].MessageGroupId = aws.String(m.Account)
		}
	}
	out, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(central), Entries: entries})
	if err != nil {
		return nil, msgs, fmt.Errorf("sending back to %s: %w", central, err)
	}
	took := map[string]bool{}
	for _, s := range out.Successful {
		took[aws.ToString(s.Id)] = true
	}
	for i, m := range msgs {
		if took[ids[i]] {
			sent = append(sent, m)
		} else {
			unsent = append(unsent, m)
		}
	}
	if len(out.Failed) > 0 {
		f := out.Failed[0]
		return sent, unsent, fmt.Errorf("the central queue refused %d of %d messages (%s: %s); they stay where they were",
			len(out.Failed), len(msgs), aws.ToString(f.Code), aws.ToString(f.Message))
	}
	return sent, unsent, nil
}

func remove(ctx context.Context, client SQS, from string, msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(ids[i]), ReceiptHandle: aws.String(m.receipt)}
	}
	if _, err := client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(from), Entries: entries}); err != nil {
		return fmt.Errorf("deleting what was sent back from %s (sent twice, which Karpenter handles idempotently): %w", from, err)
	}
	return nil
}

// release makes msgs visible again at once; one that fails comes back after the visibility timeout.
func release(ctx context.Context, client SQS, from string, msgs []Message) {
	for _, m := range msgs {
		_, _ = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(from), ReceiptHandle: aws.String(m.receipt), VisibilityTimeout: 0})
	}
}

// list writes one line per message read, and what was done.
func list(w io.Writer, rep Report, opts Options) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MESSAGE\tREASON\tACCOUNT\tSENDER\tEVENT\tERROR")
	for _, m := range rep.Messages {
		why := m.Error
		if len(why) > 120 {
			why = why[:120] + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Reason, m.Account, m.Sender, m.EventID, why)
	}
	_ = tw.Flush()
	verb := "listed; -send sends the selected ones back"
	if opts.Send {
		verb = "sent back to the central queue: " + strconv.Itoa(rep.Sent)
	}
	fmt.Fprintf(w, "%d read from the %s, %d selected, %s\n", rep.Read, opts.From, rep.Selected, verb)
}
