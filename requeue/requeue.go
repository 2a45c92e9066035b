// Package requeue lists the messages of the bus's quarantine or dead-letter queue and sends them back to the central
// queue (make requeue, docs/operations.md, "Refused messages: the quarantine" and "DLQ not empty"), as the identity
// it runs as: the redrive role, the one role of the hub that may read the quarantine and send to the central queue
// besides the forwarders, which only the principals the stack names (redrive.principals) may assume.
//
// Sending back launders nothing: each message carries who first sent it and when (contract.AttrFirstSender,
// AttrFirstSent; the sender the router judged, kept in the quarantine's attributes), why it was kept and its first
// message ID, and the router's seal over all of it (contract.AttrSeal): the router judges it by that first sender,
// never by the redrive role, and believes it only when the seal verifies (docs/security.md, "What is sent back",
// "Sealed refusals"). Of what is selected:
//   - a proven forgery (and a canary one account put naming another's clusters, and what the redrive role sent
//     unsealed) is evidence: listed, never sent;
//   - a record whose seal does not verify (kept before seals existed, or with another key) is listed, never sent: the
//     router would refuse it;
//   - an unattributable message is sent only when the operator vouches for its event or its sender by name (-vouch
//     with -event or -sender), which the message carries (contract.AttrVouched, AttrVouchedBy: the caller's ARN);
//   - a sealed record a cluster queue received before (the archive's ledger, delivered/<digest>.json: a run that sent it
//     and could not delete it, or a copy sent there again) is not sent again, which the router would refuse as replayed
//     and alarm on: it is deleted from the quarantine, the archive keeps it; nor is one record sent twice in a run (two
//     copies of it in the quarantine); one whose ledger entry cannot be read, or a delete marker hides, stays where it is;
//   - the rest is sent, and the router delivers each only if its first sender speaks for its account now; what it
//     refuses comes back to the quarantine with its new reason.
//
// The dead-letter queue is listed here, never sent from here: what the redrive role reads there and sends would say
// of itself only what the redrive role claims. -from dlq -send asks the router instead (contract.AttrIntake) to seal
// the dead-letter queue's messages into the quarantine, with the sender the dead-letter queue holds, as
// dead_lettered; they are then sent back from the quarantine as any other kept message.
//
// The archive (-from archive) is listed: it is the evidence, kept after the quarantine lost it, and never sent from.
// Each record's seal is checked with the stack's seal key when it was made with it, with a former key's public key kept
// beside the records (keys/<key id>.pem) otherwise, never with the key a record carries alone: that key is whatever the
// record's writer chose. It is read by its versions, so that a record or a public key a delete marker hides (which only
// someone who lifted the archive's policy can place) is listed all the same, from its latest version, and warned of; an
// object that is no record of the archive is named and skipped. Every call to an archive, its ledger's included, names
// the bus's account (the outputs' account) as the bucket's owner.
//
// Why not StartMessageMoveTask: AWS does not document what SenderId and SentTimestamp a moved message keeps (a
// redrive makes "new messages with a new messageid, enqueueTime, and retention period", SQS developer guide,
// "Configure a dead-letter queue redrive"); the redrive role may not start one.
//
// A message is deleted from its queue only once the central queue took its copy, or the ledger says a cluster queue
// received its record; one not selected, not sent or not taken is made visible again at once. Nothing is lost if the
// command stops halfway: what it had not deleted comes back after the receive's visibility timeout.
package requeue

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/outputs"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// SQS is what the command calls of SQS.
type SQS interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// STS is what the command asks STS: who it runs as, and a session of the redrive role.
type STS interface {
	GetCallerIdentity(ctx context.Context, in *sts.GetCallerIdentityInput, optFns ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error)
	AssumeRole(ctx context.Context, in *sts.AssumeRoleInput, optFns ...func(*sts.Options)) (*sts.AssumeRoleOutput, error)
}

// S3 is what the command reads of the archives: which there are, their records and public keys by their versions (a
// delete marker hides none from it), and the ledger of the sealed records delivered.
type S3 interface {
	ListBuckets(ctx context.Context, in *s3.ListBucketsInput, optFns ...func(*s3.Options)) (*s3.ListBucketsOutput, error)
	ListObjectVersions(ctx context.Context, in *s3.ListObjectVersionsInput, optFns ...func(*s3.Options)) (*s3.ListObjectVersionsOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// Verifier checks the router's seal of a record (sealing.Sealer, of the stack's seal key).
type Verifier interface {
	Verify(ctx context.Context, rec sealing.Record, seal string) error
}

var (
	_ SQS      = (*sqs.Client)(nil)
	_ STS      = (*sts.Client)(nil)
	_ S3       = (*s3.Client)(nil)
	_ Verifier = (*sealing.Sealer)(nil)
)

// Clients are the AWS APIs the command calls. Seals, when set, checks each quarantine record's seal before it is
// sent (a record the router would refuse is not sent), and each archive record's made with the stack's key; S3 reads
// the archive, and its ledger before a sealed record is sent back. As, when set, gives the same clients acting
// with creds: the command run by a principal of redrive.principals opens a session of the redrive role (with its
// source identity) and goes on as it.
type Clients struct {
	SQS   SQS
	STS   STS
	Seals Verifier
	S3    S3
	As    func(creds aws.CredentialsProvider) Clients
}

// Outputs are the stack's outputs as the command reads them (pulumi stack output --json): the bus's region, its
// queues, the redrive role ("" when the stack names no one who may assume it), the archive, the prefix of every
// archive the bus has had (those of releases before 0.4.0, made one per deployment, too), the key the router seals
// with, and the bus's account, which owns its archives: every call to one names it (ExpectedBucketOwner), and
// without it the archive is not read.
type Outputs = outputs.Read

// ReadOutputs decodes the stack's outputs; one masked as a secret is left out.
func ReadOutputs(r io.Reader) (Outputs, error) {
	var o Outputs
	if _, err := outputs.Parse(r, &o); err != nil {
		return Outputs{}, fmt.Errorf("reading the stack's outputs (pulumi stack output --json): %w", err)
	}
	if missing := outputs.Empty(&o, &o.CentralQueueURL, &o.DeadLetterQueueURL, &o.QuarantineQueueURL); len(missing) > 0 {
		return Outputs{}, fmt.Errorf("the stack's outputs name no %s: is it a bus's stack, updated since the quarantine came?", strings.Join(missing, ", no "))
	}
	return o, nil
}

// What the command reads: the two queues, or the archive.
const (
	Quarantine = contract.RequeuedFromQuarantine
	DLQ        = contract.RequeuedFromDLQ
	Archive    = "archive"
)

// Options choose what the command does.
type Options struct {
	// From is Quarantine or DLQ.
	From string
	// Reasons, Accounts, EventIDs and Senders select messages (all, when empty): by the reason the router refused
	// them for (the quarantine's), the account their event names, their event's id, their first sender.
	Reasons, Accounts, EventIDs, Senders []string
	// Since lists only the archive's records of refused messages sent that day or later (the archive only); zero:
	// all.
	Since time.Time
	// Send sends the selected messages back to the central queue; otherwise they are only listed.
	Send bool
	// Vouch vouches for the events of EventIDs and the senders of Senders: the selected unattributable messages
	// they name are sent too, and the router delivers them on that word, which each message and its log record.
	Vouch bool
	// Visibility hides each received message from other readers while the command runs (1 minute unless set);
	// every message not sent back is made visible again when it ends.
	Visibility time.Duration
}

// Message is one message read, as listed.
type Message struct {
	ID, Reason, Account, EventID, Error, Body string
	// First is its ID where the router first refused it, and Seal the router's seal, both as the quarantine keeps them.
	First, Seal string
	// Sender and Sent are who first sent it and when (epoch milliseconds), which it carries when sent back;
	// FromDLQ, that sender is the dead-letter queue's.
	Sender, Sent string
	FromDLQ      bool
	// Status is what became of it: one of the Status constants, or "" (listed only).
	Status string
	// vouch is what was vouched for, "" nothing.
	vouch   string
	receipt string
	// record is what the message says of itself, which its seal covers.
	record sealing.Record
}

// What becomes of a selected message.
const (
	StatusEvidence   = "evidence: never sent back"
	StatusNeedsVouch = "unattributable: sent back only with VOUCH=1 and its EVENT= or SENDER="
	StatusSent       = "sent back"
	StatusVouched    = "sent back, vouched for"
	StatusNotTaken   = "not taken by the central queue: left where it was"
	StatusUnsealed   = "its seal does not verify: the router would refuse it, never sent back"
	// What the archive's ledger says of a sealed record about to be sent back (ledger.check).
	StatusDelivered    = "delivered before (the archive's ledger, delivered/<digest>.json): not sent again, removed from the quarantine (the archive keeps it)"
	StatusDuplicate    = "the same sealed record as a message sent back in this run: not sent twice, left in the quarantine"
	StatusLedgerHidden = "a delete marker hides its entry of the archive's ledger: not sent (the router would refuse it as ledger_hidden), left where it was"
	StatusLedgerUnread = "its delivery could not be read in the archive's ledger: not sent, left where it was"
)

// Report is what a run did.
type Report struct {
	Read, Selected, Sent, Evidence, NeedVouch, Unsealed int
	// Delivered, Duplicates, LedgerHidden and LedgerUnread count the sealed records not sent for what the archive's
	// ledger says (StatusDelivered, StatusDuplicate, StatusLedgerHidden, StatusLedgerUnread).
	Delivered, Duplicates, LedgerHidden, LedgerUnread int
	// Hidden and HiddenKeys count the archive's records and public keys a delete marker hides, read all the same;
	// Malformed its objects under refused/ that are no record of it, skipped.
	Hidden, HiddenKeys, Malformed int
	// Unread is about how many messages of the queue were in flight, not read by this run, when it ended: another
	// reader's, or an answer lost on its way, whose messages SQS hides for their visibility timeout all the same.
	Unread   int
	Messages []Message
}

// Run reads every message of the queue opts.From names, lists it to w, and, with opts.Send, sends the selected ones
// that may go back to the central queue, each with its first sender.
func Run(ctx context.Context, c Clients, out Outputs, opts Options, w io.Writer) (Report, error) {
	from := out.QuarantineQueueURL
	switch opts.From {
	case Quarantine, Archive:
	case DLQ:
		from = out.DeadLetterQueueURL
	default:
		return Report{}, fmt.Errorf("-from %q: want %s, %s or %s", opts.From, Quarantine, DLQ, Archive)
	}
	if opts.From == Archive && opts.Send {
		return Report{}, errors.New("the archive is the evidence: it is listed (-from archive), never sent from; send back from the quarantine")
	}
	if opts.Vouch && len(opts.EventIDs) == 0 && len(opts.Senders) == 0 {
		return Report{}, errors.New("VOUCH=1 (-vouch) vouches for the events or the senders named: set EVENT= or SENDER= (-event, -sender) too")
	}
	me, c, err := runAs(ctx, c, out, opts)
	if err != nil {
		return Report{}, err
	}
	switch {
	case opts.From == Archive:
		return listArchive(ctx, c, out, opts, w)
	case opts.From == DLQ && opts.Send:
		return Report{}, askIntake(ctx, c.SQS, out, me.arn, w)
	}
	var led *ledger
	if opts.Send {
		if led, err = newLedger(c, out); err != nil {
			return Report{}, err
		}
	}
	if opts.Visibility == 0 {
		opts.Visibility = time.Minute
	}
	var rep Report
	var keep []Message // received, neither sent nor delivered before: made visible again at the end
	defer func() { release(context.WithoutCancel(ctx), c.SQS, from, keep) }()
	// A short poll first, then, when it finds nothing, a long one: a short poll samples some of SQS's servers and
	// may answer empty while messages wait ("Amazon SQS short and long polling"), a long poll asks them all. Only an
	// empty long poll ends the reading.
	wait := int32(0)
	for {
		got, err := c.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
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
		var sending, delivered []Message
		for _, m := range got.Messages {
			msg := read(m, opts.From, me.roleID)
			rep.Read++
			if opts.selects(msg) {
				rep.Selected++
				opts.decide(&msg)
				if msg.Status == StatusSent || msg.Status == StatusVouched {
					unsealed(ctx, c.Seals, &msg)
				}
				if msg.Status == StatusSent || msg.Status == StatusVouched {
					led.check(ctx, &msg)
				}
				switch msg.Status {
				case StatusEvidence:
					rep.Evidence++
				case StatusNeedsVouch:
					rep.NeedVouch++
				case StatusUnsealed:
					rep.Unsealed++
				case StatusDelivered:
					rep.Delivered++
				case StatusDuplicate:
					rep.Duplicates++
				case StatusLedgerHidden:
					rep.LedgerHidden++
				case StatusLedgerUnread:
					rep.LedgerUnread++
				}
			}
			switch msg.Status {
			case StatusSent, StatusVouched:
				sending = append(sending, msg)
			case StatusDelivered:
				delivered = append(delivered, msg)
			default:
				keep = append(keep, msg)
			}
			rep.Messages = append(rep.Messages, msg)
		}
		sent, unsent, err := send(ctx, c.SQS, out.CentralQueueURL, opts.From, me.arn, sending)
		keep = append(keep, unsent...)
		for i := range rep.Messages {
			if slices.ContainsFunc(unsent, func(u Message) bool { return u.ID == rep.Messages[i].ID }) {
				rep.Messages[i].Status = StatusNotTaken
			}
		}
		rep.Sent += len(sent)
		// What the central queue took is deleted here even when it refused others: kept, it would be sent twice; what a
		// cluster queue received before, too: the router would refuse it as replayed, and the archive keeps it.
		if rerr := remove(ctx, c.SQS, from, slices.Concat(sent, delivered)); rerr != nil {
			return rep, errors.Join(err, rerr)
		}
		if err != nil {
			list(w, rep, opts)
			return rep, err
		}
	}
	rep.Unread = unread(ctx, c.SQS, from, len(keep), w)
	list(w, rep, opts)
	if led != nil && led.unread != nil {
		return rep, fmt.Errorf("%d sealed records left in the quarantine, not sent: the archive's ledger could not be read: %w", rep.LedgerUnread, led.unread)
	}
	return rep, nil
}

// unread counts the messages in flight in queue that this run did not read (it holds held of them): a queue read
// empty while others hide its messages is not an empty queue. SQS's count is approximate ("Available CloudWatch
// metrics for Amazon SQS": ApproximateNumberOfMessagesNotVisible), so this says "about".
func unread(ctx context.Context, client SQS, queue string, held int, w io.Writer) int {
	out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queue),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	if err != nil {
		fmt.Fprintf(w, "could not count the messages in flight that this run did not read (sqs:GetQueueAttributes): %v\n", err)
		return 0
	}
	n, err := strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	if err != nil {
		return 0
	}
	return max(n-held, 0)
}

// unsealed marks m, about to be sent, StatusUnsealed when seals says its seal does not verify: the router would refuse
// it. A seal that cannot be checked here (no verifier, its public key unread) is left to the router.
func unsealed(ctx context.Context, seals Verifier, m *Message) {
	if seals == nil {
		return
	}
	if err := seals.Verify(ctx, m.record, m.Seal); errors.Is(err, sealing.ErrNoSeal) || errors.Is(err, sealing.ErrBroken) {
		m.Status, m.vouch = StatusUnsealed, ""
	}
}

// askIntake asks the router, as the redrive role, to seal the dead-letter queue's messages into the quarantine
// (contract.AttrIntake): one request, which the router carries out within seconds; they are then sent back from the
// quarantine with their reason, dead_lettered.
func askIntake(ctx context.Context, client SQS, out Outputs, by string, w io.Writer) error {
	n := "its"
	if a, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(out.DeadLetterQueueURL),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameApproximateNumberOfMessages}}); err == nil {
		n = "about " + a.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)]
	}
	body := `{"intake":"dlq"}`
	got, err := client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(out.CentralQueueURL), Entries: []types.SendMessageBatchRequestEntry{{
		Id: aws.String("intake"), MessageBody: aws.String(body), MessageAttributes: map[string]types.MessageAttributeValue{
			contract.AttrIntake:    {DataType: aws.String("String"), StringValue: aws.String(contract.IntakeDLQ)},
			contract.AttrVouchedBy: {DataType: aws.String("String"), StringValue: aws.String(cmp.Or(by, "unknown"))},
		},
	}}})
	if err == nil && len(got.Successful) != 1 {
		err = errors.New("the central queue did not take it")
	}
	if err != nil {
		return fmt.Errorf("asking the router to take the dead-letter queue in: %w", err)
	}
	fmt.Fprintf(w, "asked the router to seal the dead-letter queue's %s messages into the quarantine, each with the sender the dead-letter "+
		"queue holds (reason %s); within seconds, send them back from there: make requeue REASON=%s SEND=1 (the router's log says %q "+
		"with how many it kept)\n", n, contract.ReasonDeadLettered, contract.ReasonDeadLettered, contract.LogDeadLettersTaken)
	return nil
}

func (o Options) selects(m Message) bool {
	in := func(set []string, v string) bool { return len(set) == 0 || slices.Contains(set, v) }
	return in(o.Reasons, m.Reason) && in(o.Accounts, m.Account) && in(o.EventIDs, m.EventID) && in(o.Senders, m.Sender)
}

// decide says what becomes of a selected message m: listed only, or sent, the proven forgeries never, the
// unattributable ones only when vouched for by name.
func (o Options) decide(m *Message) {
	switch {
	case o.Vouch && slices.Contains(o.EventIDs, m.EventID):
		m.vouch = contract.VouchEvent
	case o.Vouch && slices.Contains(o.Senders, m.Sender):
		m.vouch = contract.VouchSender
	}
	if !slices.Contains(contract.Vouchable, contract.Reason(m.Reason)) {
		m.vouch = "" // the router delivers on a vouch only what it kept for a reason one may vouch for
	}
	switch {
	case slices.Contains(contract.Evidence, contract.Reason(m.Reason)):
		m.Status = StatusEvidence
	case m.Reason == string(contract.ReasonUnattributable) && m.vouch == "":
		m.Status = StatusNeedsVouch
	case !o.Send:
	case m.vouch != "":
		m.Status = StatusVouched
	default:
		m.Status = StatusSent
	}
}

// read takes what the router wrote of why (the quarantine's attributes, which only it may write: sealing.ReadKept),
// and for a message of the DLQ what its body says and who sent it there, or, when the redrive role (roleID) sent it
// and it carries a first sender, what it says of its first sending (sealing.ReadSentBack).
func read(m types.Message, from, roleID string) Message {
	attr := func(k string) string { return aws.ToString(m.MessageAttributes[k].StringValue) }
	body := aws.ToString(m.Body)
	var ev struct{ ID, Account string }
	_ = json.Unmarshal([]byte(body), &ev) // what it names, when it is an event
	msg := Message{
		ID: aws.ToString(m.MessageId), Account: cmp.Or(attr(contract.AttrAccount), ev.Account), EventID: cmp.Or(attr(contract.AttrEventID), ev.ID),
		Error: attr(contract.AttrError), Body: body, receipt: aws.ToString(m.ReceiptHandle),
	}
	sender, sent := m.Attributes[string(types.MessageSystemAttributeNameSenderId)], m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)]
	redriven := roleID != "" && strings.HasPrefix(sender, roleID+":") && attr(contract.AttrFirstSender) != ""
	switch {
	case from == Quarantine:
		msg.record, msg.Seal = sealing.ReadKept(body, attr)
	case redriven: // sent back before, then dead-lettered: its first sender still
		msg.record, msg.Seal = sealing.ReadSentBack(body, ev.Account, attr)
	default:
		msg.record = sealing.Record{BodySHA256: sealing.BodyDigest(body), Account: ev.Account, FirstSender: sender, FirstSent: sent,
			Origin: contract.OriginDLQ}
	}
	msg.Reason = msg.record.Reason
	if msg.Reason == "" && from == DLQ {
		msg.Reason = cmp.Or(attr("ERROR_CODE"), "retries exhausted") // EventBridge's own delivery failures carry ERROR_CODE
	}
	msg.Sender, msg.Sent, msg.FromDLQ, msg.First = msg.record.FirstSender, msg.record.FirstSent, msg.record.Origin == contract.OriginDLQ, msg.record.MessageID
	return msg
}

var ids = [10]string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// attributes are what a message sent back carries: where it came from, what its seal covers with the seal
// (sealing.Record.SentBack), and the vouch.
func attributes(m Message, from, by string) map[string]types.MessageAttributeValue {
	str := func(v string) types.MessageAttributeValue {
		return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	a := map[string]types.MessageAttributeValue{contract.AttrRequeuedFrom: str(from)}
	m.record.SentBack(a, m.Seal)
	if m.vouch != "" {
		a[contract.AttrVouched] = str(m.vouch)
		if by != "" {
			a[contract.AttrVouchedBy] = str(by)
		}
	}
	return a
}

// send sends msgs to the central queue in one batch, each in its account's message group as the rules send them;
// it returns those SQS took and those it did not.
func send(ctx context.Context, client SQS, central, from, by string, msgs []Message) (sent, unsent []Message, err error) {
	if len(msgs) == 0 {
		return nil, nil, nil
	}
	entries := make([]types.SendMessageBatchRequestEntry, len(msgs))
	for i, m := range msgs {
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(ids[i]), MessageBody: aws.String(m.Body), MessageAttributes: attributes(m, from, by)}
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
	if len(unsent) > 0 {
		why := "SQS answered nothing for them"
		if len(out.Failed) > 0 {
			why = aws.ToString(out.Failed[0].Code) + ": " + aws.ToString(out.Failed[0].Message)
		}
		return sent, unsent, fmt.Errorf("the central queue refused %d of %d messages (%s); they stay where they were", len(unsent), len(msgs), why)
	}
	return sent, nil, nil
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
		return fmt.Errorf("deleting what was sent back, or delivered before, from %s (a sealed record left there is found delivered by the "+
			"next run, and removed): %w", from, err)
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
	fmt.Fprintln(tw, "MESSAGE\tREASON\tACCOUNT\tSENDER\tEVENT\tERROR\tSTATUS")
	for _, m := range rep.Messages {
		why := m.Error
		if len(why) > 120 {
			why = contract.TruncateUTF8(why, 120) + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Reason, m.Account, m.Sender, m.EventID, why, m.Status)
	}
	_ = tw.Flush()
	verb := "listed; -send sends the selected ones back"
	if opts.Send {
		verb = "sent back to the central queue: " + strconv.Itoa(rep.Sent)
	}
	fmt.Fprintf(w, "%d read from the %s, %d selected, %s\n", rep.Read, opts.From, rep.Selected, verb)
	if rep.Unread > 0 {
		fmt.Fprintf(w, "about %d more in flight, not read: another reader holds them, or an answer was lost on its way; they come back "+
			"when their visibility timeout ends (a minute after a run of this command): run it again then\n", rep.Unread)
	}
	if rep.Evidence > 0 {
		fmt.Fprintf(w, "%d proven forgeries or forbidden canaries kept as evidence: never sent back (docs/operations.md)\n", rep.Evidence)
	}
	if rep.NeedVouch > 0 {
		fmt.Fprintf(w, "%d unattributable: sent back only when you vouch for each, by EVENT= or SENDER= with VOUCH=1\n", rep.NeedVouch)
	}
	if rep.Unsealed > 0 {
		fmt.Fprintf(w, "%d whose seal does not verify (kept before the router sealed what it keeps, or with another key): never sent back; "+
			"the archive keeps what the router kept since (FROM=archive)\n", rep.Unsealed)
	}
	if rep.Delivered > 0 {
		fmt.Fprintf(w, "%d delivered before, as the archive's ledger says (delivered/<digest>.json): not sent again (the router would refuse each as "+
			"replayed), removed from the quarantine; the archive keeps each record\n", rep.Delivered)
	}
	if rep.Duplicates > 0 {
		fmt.Fprintf(w, "%d the same sealed record as another message sent back in this run: sent once, the copies left in the quarantine "+
			"(the next run finds the record delivered and removes them)\n", rep.Duplicates)
	}
	if rep.LedgerHidden > 0 {
		fmt.Fprintf(w, "WARNING: %d whose entry of the archive's ledger a delete marker hides: not sent (the router would refuse each as %s); "+
			"only someone who lifted the archive's policy can place one (docs/security.md, \"The archive\")\n", rep.LedgerHidden, contract.ReasonLedgerHidden)
	}
	if rep.LedgerUnread > 0 {
		fmt.Fprintf(w, "%d not sent, left in the quarantine: the archive's ledger could not be read (why below); run it again\n", rep.LedgerUnread)
	}
	if opts.Send && rep.Sent > 0 {
		fmt.Fprintln(w, "the router judges each by its first sender: what may not speak for its account now comes back to the quarantine")
	}
}
