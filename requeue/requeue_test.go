package requeue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

const (
	central, quarantine, dlq = "https://sqs/central", "https://sqs/quarantine", "https://sqs/dlq"
	redriveARN               = "arn:aws:iam::111111111111:role/kib-prod-redrive-eu-west-1"
	redriveID                = "AROAREDRIVE000000001"
	operatorARN              = "arn:aws:sts::111111111111:assumed-role/kib-prod-redrive-eu-west-1/alice"
)

var stackOuts = func() Outputs {
	var o Outputs
	o.Region, o.CentralQueueURL, o.QuarantineQueueURL, o.DeadLetterQueueURL, o.RedriveRoleARN = "eu-west-1", central, quarantine, dlq, redriveARN
	o.Account = "111111111111"
	return o
}()

// fakeSQS holds each queue's messages, hands them out once (one receive returns them all), and records what was
// sent, deleted and released; the central queue fails the entries whose body is in refuse, and answers neither way
// for those in silent.
type fakeSQS struct {
	queues         map[string][]types.Message
	given          map[string]bool
	sent           []types.SendMessageBatchRequestEntry
	deleted        []string // receipt handles
	released       []string
	refuse, silent map[string]bool
	receives       []string // "<wait>/<visibility>" of each ReceiveMessage
	// undeletable: DeleteMessageBatch fails.
	undeletable bool
	// hidden are messages in flight that no receive returns: another reader's, or those of an answer lost.
	hidden int
}

func newSQS(queue string, msgs ...types.Message) *fakeSQS {
	for i := range msgs {
		msgs[i].ReceiptHandle = aws.String("rh-" + aws.ToString(msgs[i].MessageId))
	}
	return &fakeSQS{queues: map[string][]types.Message{queue: msgs}, given: map[string]bool{}, refuse: map[string]bool{}, silent: map[string]bool{}}
}

func (f *fakeSQS) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q := aws.ToString(in.QueueUrl)
	f.receives = append(f.receives, fmt.Sprintf("%d/%d", in.WaitTimeSeconds, in.VisibilityTimeout))
	if f.given[q] {
		return &sqs.ReceiveMessageOutput{}, nil
	}
	f.given[q] = true
	return &sqs.ReceiveMessageOutput{Messages: f.queues[q]}, nil
}

func (f *fakeSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	if aws.ToString(in.QueueUrl) != central {
		return nil, fmt.Errorf("sent to %s", aws.ToString(in.QueueUrl))
	}
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		switch body := aws.ToString(e.MessageBody); {
		case f.refuse[body]:
			out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InvalidParameterValue"), Message: aws.String("stub")})
		case f.silent[body]:
		default:
			f.sent = append(f.sent, e)
			out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id})
		}
	}
	return out, nil
}

func (f *fakeSQS) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	if f.undeletable {
		return nil, errors.New("AccessDenied: sqs:DeleteMessage")
	}
	for _, e := range in.Entries {
		f.deleted = append(f.deleted, aws.ToString(e.ReceiptHandle))
	}
	return &sqs.DeleteMessageBatchOutput{}, nil
}

func (f *fakeSQS) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	if in.VisibilityTimeout == 0 {
		f.released = append(f.released, aws.ToString(in.ReceiptHandle))
	}
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

// GetQueueAttributes counts, as ApproximateNumberOfMessagesNotVisible, what was given and neither deleted nor
// released yet, and the hidden ones; as ApproximateNumberOfMessages, what the queue holds.
func (f *fakeSQS) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	n := f.hidden
	if q := aws.ToString(in.QueueUrl); f.given[q] {
		n += len(f.queues[q]) - len(f.deleted) - len(f.released)
	}
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{"ApproximateNumberOfMessagesNotVisible": strconv.Itoa(n),
		"ApproximateNumberOfMessages": strconv.Itoa(len(f.queues[aws.ToString(in.QueueUrl)]))}}, nil
}

// whoami answers GetCallerIdentity as the session of arn, whose role's unique ID is roleID; it refuses AssumeRole.
type whoami struct{ arn, roleID string }

func (w whoami) GetCallerIdentity(context.Context, *sts.GetCallerIdentityInput, ...func(*sts.Options)) (*sts.GetCallerIdentityOutput, error) {
	return &sts.GetCallerIdentityOutput{Arn: aws.String(w.arn), UserId: aws.String(w.roleID + ":alice"), Account: aws.String("111111111111")}, nil
}

func (w whoami) AssumeRole(context.Context, *sts.AssumeRoleInput, ...func(*sts.Options)) (*sts.AssumeRoleOutput, error) {
	return nil, errors.New("AccessDenied")
}

var operator = whoami{operatorARN, redriveID}

// kept is a message of the quarantine as the router writes one.
func kept(id string, reason contract.Reason, sender, sent, event string) types.Message {
	str := func(v string) types.MessageAttributeValue {
		return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	return types.Message{
		MessageId: aws.String(id), Body: aws.String(`{"id":"` + event + `","account":"222222222222"}`),
		Attributes: map[string]string{"SenderId": "AROAROUTER0000000001:router", "SentTimestamp": "1800000000000"},
		MessageAttributes: map[string]types.MessageAttributeValue{
			contract.AttrReason: str(string(reason)), contract.AttrAccount: str("222222222222"), contract.AttrSender: str(sender),
			contract.AttrSent: {DataType: aws.String("Number"), StringValue: aws.String(sent)}, contract.AttrEventID: str(event),
		},
	}
}

func sentEvents(f *fakeSQS) []string {
	var out []string
	for _, e := range f.sent {
		out = append(out, aws.ToString(e.MessageAttributes[contract.AttrFirstSender].StringValue)+"/"+eventOf(aws.ToString(e.MessageBody)))
	}
	slices.Sort(out)
	return out
}

func eventOf(body string) string {
	_, rest, _ := strings.Cut(body, `"id":"`)
	id, _, _ := strings.Cut(rest, `"`)
	return id
}

// TestOnlyWhatMayGoBackIsSent: of everything selected, the proven forgeries and forbidden canaries are listed as
// evidence and never sent, the unattributable ones are sent only when vouched for by event or by sender, the rest
// is sent; each carries its first sender and time, and a vouch who gave it; what is not sent is released, never
// deleted, and only what the central queue took is deleted.
func TestOnlyWhatMayGoBackIsSent(t *testing.T) {
	f := newSQS(quarantine,
		kept("m1", contract.ReasonForgedSender, "AROAA:s", "1700000000001", "forged"),
		kept("m2", contract.ReasonCanaryForbidden, "AROAA:s", "1700000000002", "canary"),
		kept("m3", contract.ReasonUnattributable, "AROAOLD:s", "1700000000003", "old"),
		kept("m4", contract.ReasonUnattributable, "AROAOLD:s", "1700000000004", "old-vouched"),
		kept("m5", contract.ReasonUnattributable, "AROAOTHER:s", "1700000000005", "by-sender"),
		kept("m6", contract.ReasonUnknownAccount, "AROAC:s", "1700000000006", "joined"),
		kept("m7", contract.ReasonUnparseable, "AROAC:s", "1700000000007", "garbled"),
	)
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{
		From: Quarantine, EventIDs: nil, Senders: nil, Send: true,
	}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if got := sentEvents(f); fmt.Sprint(got) != "[AROAC:s/garbled AROAC:s/joined]" {
		t.Errorf("sent %v, want only the unknown account's and the unparseable one", got)
	}
	if rep.Evidence != 2 || rep.NeedVouch != 3 || rep.Sent != 2 {
		t.Errorf("evidence %d, needing a vouch %d, sent %d; want 2, 3, 2", rep.Evidence, rep.NeedVouch, rep.Sent)
	}
	for _, want := range []string{"2 proven forgeries or forbidden canaries kept as evidence", "3 unattributable: sent back only when you vouch", StatusEvidence} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("the listing does not say %q:\n%s", want, w.String())
		}
	}
	if fmt.Sprint(f.deleted) != "[rh-m6 rh-m7]" || len(f.released) != 5 {
		t.Errorf("deleted %v, released %v; want the two sent deleted, the five others released", f.deleted, f.released)
	}
	e := f.sent[0]
	for k, want := range map[string]string{contract.AttrFirstSender: "AROAC:s", contract.AttrFirstSent: "1700000000006", contract.AttrRequeuedFrom: "quarantine"} {
		if got := aws.ToString(e.MessageAttributes[k].StringValue); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if _, ok := e.MessageAttributes[contract.AttrVouched]; ok {
		t.Error("a message nobody vouched for carries a vouch")
	}

	// Vouched for, by event and by sender: those two go, with the vouch and who gave it; the forgery named never.
	f = newSQS(quarantine,
		kept("m1", contract.ReasonForgedSender, "AROAA:s", "1700000000001", "forged"),
		kept("m3", contract.ReasonUnattributable, "AROAOLD:s", "1700000000003", "old"),
		kept("m4", contract.ReasonUnattributable, "AROAOLD:s", "1700000000004", "old-vouched"),
		kept("m5", contract.ReasonUnattributable, "AROAOTHER:s", "1700000000005", "by-sender"),
	)
	w.Reset()
	if _, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{
		From: Quarantine, Reasons: []string{"unattributable_sender", "forged_sender"}, EventIDs: nil, Send: true, Vouch: true,
		Senders: []string{"AROAOTHER:s", "AROAA:s"},
	}, &w); err != nil {
		t.Fatal(err)
	}
	if got := sentEvents(f); fmt.Sprint(got) != "[AROAOTHER:s/by-sender]" {
		t.Errorf("vouched for by sender: sent %v, want the one of that sender, not the forgery", got)
	}
	f = newSQS(quarantine,
		kept("m1", contract.ReasonForgedSender, "AROAA:s", "1700000000001", "forged"),
		kept("m4", contract.ReasonUnattributable, "AROAOLD:s", "1700000000004", "old-vouched"),
	)
	if _, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{
		From: Quarantine, EventIDs: []string{"old-vouched", "forged"}, Send: true, Vouch: true,
	}, &w); err != nil {
		t.Fatal(err)
	}
	if got := sentEvents(f); fmt.Sprint(got) != "[AROAOLD:s/old-vouched]" {
		t.Fatalf("vouched for by event: sent %v, want that event only", got)
	}
	a := f.sent[0].MessageAttributes
	if aws.ToString(a[contract.AttrVouched].StringValue) != contract.VouchEvent || aws.ToString(a[contract.AttrVouchedBy].StringValue) != operatorARN {
		t.Errorf("vouch %q by %q, want %q by %s", aws.ToString(a[contract.AttrVouched].StringValue), aws.ToString(a[contract.AttrVouchedBy].StringValue), contract.VouchEvent, operatorARN)
	}
}

// TestWhatTheCentralQueueDidNotTakeStays: an entry the central queue refused, or answered nothing for, is neither
// deleted nor counted as sent: it is released at once, and the run says so.
func TestWhatTheCentralQueueDidNotTakeStays(t *testing.T) {
	msgs := []types.Message{
		kept("m1", contract.ReasonUnknownAccount, "AROAC:s", "1", "a"),
		kept("m2", contract.ReasonUnknownAccount, "AROAC:s", "2", "b"),
		kept("m3", contract.ReasonUnknownAccount, "AROAC:s", "3", "c"),
	}
	f := newSQS(quarantine, msgs...)
	f.refuse[aws.ToString(msgs[1].Body)], f.silent[aws.ToString(msgs[2].Body)] = true, true
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: Quarantine, Send: true}, &w)
	if err == nil || !strings.Contains(err.Error(), "refused 2 of 3") {
		t.Errorf("error %v, want the two not taken named", err)
	}
	if rep.Sent != 1 || fmt.Sprint(f.deleted) != "[rh-m1]" || fmt.Sprint(f.released) != "[rh-m2 rh-m3]" {
		t.Errorf("sent %d, deleted %v, released %v; want 1, m1, m2 and m3", rep.Sent, f.deleted, f.released)
	}
	statuses := map[string]string{}
	for _, m := range rep.Messages {
		statuses[m.ID] = m.Status
	}
	if statuses["m1"] != StatusSent || statuses["m2"] != StatusNotTaken || statuses["m3"] != StatusNotTaken {
		t.Errorf("statuses %v, want m1 sent, m2 and m3 not taken", statuses)
	}
	if !strings.Contains(err.Error(), "InvalidParameterValue") {
		t.Errorf("error %v does not name what the central queue answered", err)
	}
	f = newSQS(quarantine, kept("m4", contract.ReasonUnknownAccount, "AROAC:s", "4", "d"))
	f.silent[aws.ToString(f.queues[quarantine][0].Body)] = true
	if _, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: Quarantine, Send: true}, &w); err == nil || !strings.Contains(err.Error(), "SQS answered nothing") {
		t.Errorf("an entry answered neither way: %v", err)
	}
}

// TestItRunsAsTheRedriveRole: without a redrive role (no redrive.principals) the quarantine cannot be read nor
// anything sent, and the command names the key; run as another identity, it names the role to assume; the
// dead-letter queue can be listed by anyone.
func TestItRunsAsTheRedriveRole(t *testing.T) {
	none := stackOuts
	none.RedriveRoleARN = ""
	for _, tt := range []struct {
		name string
		out  Outputs
		who  whoami
		opts Options
		want string
	}{
		{"no redrive role, the quarantine", none, operator, Options{From: Quarantine}, "set redrive.principals"},
		{"no redrive role, sending the DLQ", none, operator, Options{From: DLQ, Send: true}, "set redrive.principals"},
		{"another identity", stackOuts, whoami{"arn:aws:sts::111111111111:assumed-role/Admin/bob", "AROAADMIN"}, Options{From: Quarantine}, "aws sts assume-role --role-arn " + redriveARN},
		{"another identity, the archive", stackOuts, whoami{"arn:aws:sts::111111111111:assumed-role/Admin/bob", "AROAADMIN"}, Options{From: Archive}, "not the stack's redrive role"},
		{"another identity, sending", stackOuts, whoami{"arn:aws:sts::111111111111:assumed-role/Admin/bob", "AROAADMIN"}, Options{From: DLQ, Send: true}, "not the stack's redrive role"},
		{"vouching for nothing named", stackOuts, operator, Options{From: Quarantine, Vouch: true, Send: true}, "set EVENT= or SENDER="},
		{"no redrive role, listing the DLQ", none, whoami{}, Options{From: DLQ}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(context.Background(), Clients{SQS: newSQS(dlq), STS: tt.who}, tt.out, tt.opts, &bytes.Buffer{})
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestTheDLQsFirstSender: listed, a message of the dead-letter queue shows the sender SQS gives it there, marked as the
// DLQ's; one the redrive role sent back before (its own ID) shows the first sender it was sent with; one a forwarder
// set those attributes on shows its own.
func TestTheDLQsFirstSender(t *testing.T) {
	plain := types.Message{MessageId: aws.String("d1"), Body: aws.String(`{"id":"ev-1","account":"222222222222"}`),
		Attributes: map[string]string{"SenderId": "AROAFORWARDERA:events", "SentTimestamp": "1700000000000"}}
	again := types.Message{MessageId: aws.String("d2"), Body: aws.String(`{"id":"ev-2","account":"222222222222"}`),
		Attributes: map[string]string{"SenderId": redriveID + ":alice", "SentTimestamp": "1800000000000"},
		MessageAttributes: map[string]types.MessageAttributeValue{
			contract.AttrFirstSender: {DataType: aws.String("String"), StringValue: aws.String("AROAFIRST:s")},
			contract.AttrFirstSent:   {DataType: aws.String("Number"), StringValue: aws.String("1600000000000")},
		}}
	forged := again
	forged.MessageId, forged.Body = aws.String("d3"), aws.String(`{"id":"ev-3","account":"222222222222"}`)
	forged.Attributes = map[string]string{"SenderId": "AROAFORWARDERA:events", "SentTimestamp": "1800000000000"} // a forwarder setting the attributes itself
	f := newSQS(dlq, plain, again, forged)
	rep, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: DLQ}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range rep.Messages {
		got[m.EventID] = fmt.Sprintf("%s %s %t", m.Sender, m.Sent, m.FromDLQ)
	}
	want := map[string]string{"ev-1": "AROAFORWARDERA:events 1700000000000 true", "ev-2": "AROAFIRST:s 1600000000000 false",
		"ev-3": "AROAFORWARDERA:events 1800000000000 true"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("first senders %v, want %v", got, want)
	}
	if len(f.sent) != 0 || len(f.deleted) != 0 {
		t.Errorf("a listing sent %d and deleted %d", len(f.sent), len(f.deleted))
	}
}

// TestTheDLQIsSentBackThroughTheRouter: -from dlq -send reads nothing of the dead-letter queue and sends nothing of it:
// it asks the router, as the redrive role, to seal it into the quarantine (one kib-intake request to the central
// queue, saying who asked), and says how to send those back. The central queue not taking the request is an error.
func TestTheDLQIsSentBackThroughTheRouter(t *testing.T) {
	f := newSQS(dlq, types.Message{MessageId: aws.String("d1"), Body: aws.String(`{"id":"ev-1"}`)})
	var w bytes.Buffer
	if _, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: DLQ, Send: true}, &w); err != nil {
		t.Fatal(err)
	}
	if len(f.receives) != 0 || len(f.sent) != 1 || len(f.deleted) != 0 {
		t.Fatalf("%d receives, %d sent, %d deleted; want one request, nothing read", len(f.receives), len(f.sent), len(f.deleted))
	}
	a := f.sent[0].MessageAttributes
	if aws.ToString(a[contract.AttrIntake].StringValue) != contract.IntakeDLQ || aws.ToString(a[contract.AttrVouchedBy].StringValue) != operatorARN {
		t.Errorf("the request carries %v, want kib-intake dlq and who asked", a)
	}
	if !strings.Contains(w.String(), "REASON=dead_lettered SEND=1") || !strings.Contains(w.String(), "dead-letter queue's about 1 messages") {
		t.Errorf("it does not say how many it asked for, and how to send them back:\n%s", w.String())
	}
	f = newSQS(dlq)
	f.refuse[`{"intake":"dlq"}`] = true
	if _, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: DLQ, Send: true}, &w); err == nil {
		t.Error("a request the central queue refused was taken for asked")
	}
}

// sealer verifies the seals of the bodies in good, and fails others as broken (or all with err).
type sealer struct {
	good map[string]bool
	err  error
}

func (s sealer) Verify(_ context.Context, rec sealing.Record, seal string) error {
	switch {
	case s.err != nil:
		return s.err
	case seal == "":
		return sealing.ErrNoSeal
	case !s.good[rec.BodySHA256]:
		return sealing.ErrBroken
	}
	return nil
}

// TestWhatIsSentBackCarriesItsSeal: a record sent back carries its seal, the reason it was kept and its first message
// ID, which its seal covers; one whose seal does not verify here (kept before seals, or tampered) is never sent, and
// said so; a seal that cannot be checked here is left to the router; a vouch is carried only for a reason one may vouch
// for; what the redrive role sent unsealed is evidence.
func TestWhatIsSentBackCarriesItsSeal(t *testing.T) {
	withSeal := func(m types.Message, seal, first string) types.Message {
		m.MessageAttributes[contract.AttrSeal] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(seal)}
		m.MessageAttributes[contract.AttrMessageID] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(first)}
		return m
	}
	good := withSeal(kept("m1", contract.ReasonUnknownAccount, "AROAC:s", "1", "good"), "c2VhbA==", "first-1")
	legacy := kept("m2", contract.ReasonUnknownAccount, "AROAC:s", "2", "legacy")
	broken := withSeal(kept("m3", contract.ReasonUnknownAccount, "AROAC:s", "3", "broken"), "YnJva2Vu", "first-3")
	dead := withSeal(kept("m4", contract.ReasonDeadLettered, "AROAOLD:s", "4", "dead"), "c2VhbA==", "first-4")
	unsealedOne := withSeal(kept("m5", contract.ReasonUnsealed, redriveID+":mallory", "5", "made-up"), "c2VhbA==", "first-5")
	seals := sealer{good: map[string]bool{}}
	for _, m := range []types.Message{good, dead, unsealedOne} {
		seals.good[sealing.BodyDigest(aws.ToString(m.Body))] = true
	}
	f := newSQS(quarantine, good, legacy, broken, dead, unsealedOne)
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: f, STS: operator, Seals: seals}, stackOuts, Options{From: Quarantine, Send: true, Vouch: true,
		EventIDs: []string{"dead", "good", "broken"}}, &w) // a vouch for what does not verify sends nothing
	if err != nil {
		t.Fatal(err)
	}
	if got := sentEvents(f); fmt.Sprint(got) != "[AROAC:s/good AROAOLD:s/dead]" {
		t.Fatalf("sent %v, want the two whose seal verifies", got)
	}
	if rep.Unsealed != 1 || rep.Evidence != 0 {
		t.Errorf("counted %d unsealed, %d evidence among the selected, want the vouched one that does not verify", rep.Unsealed, rep.Evidence)
	}
	for _, e := range f.sent {
		a := e.MessageAttributes
		first, reason := aws.ToString(a[contract.AttrMessageID].StringValue), aws.ToString(a[contract.AttrReason].StringValue)
		_, vouched := a[contract.AttrVouched]
		switch eventOf(aws.ToString(e.MessageBody)) {
		case "good":
			if aws.ToString(a[contract.AttrSeal].StringValue) != "c2VhbA==" || first != "first-1" || reason != "unknown_account" || !vouched {
				t.Errorf("good sent with %v", a)
			}
		case "dead":
			if first != "first-4" || reason != "dead_lettered" || vouched {
				t.Errorf("dead sent with %v: no vouch applies to dead_lettered", a)
			}
		}
	}
	f = newSQS(quarantine, good, legacy, broken, unsealedOne)
	w.Reset()
	rep, err = Run(context.Background(), Clients{SQS: f, STS: operator, Seals: seals}, stackOuts, Options{From: Quarantine, Send: true}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unsealed != 2 || rep.Evidence != 1 || rep.Sent != 1 || !strings.Contains(w.String(), "2 whose seal does not verify") || !strings.Contains(w.String(), StatusUnsealed) {
		t.Errorf("unsealed %d, evidence %d, sent %d; want 2, 1 (made up), 1:\n%s", rep.Unsealed, rep.Evidence, rep.Sent, w.String())
	}
	f = newSQS(quarantine, legacy)
	rep, err = Run(context.Background(), Clients{SQS: f, STS: operator, Seals: sealer{err: errors.New("kms:GetPublicKey denied")}}, stackOuts,
		Options{From: Quarantine, Send: true}, &w)
	if err != nil || rep.Sent != 1 {
		t.Errorf("a seal that cannot be checked here: sent %d, %v; want it left to the router", rep.Sent, err)
	}
}

// TestWhatIsReadAndListed: the command reads until a long poll finds nothing (a short poll first), hiding what it
// reads a minute by default; it takes a message's account and event from the router's attributes, else from its
// body, and a DLQ message's reason from EventBridge's ERROR_CODE, else "retries exhausted"; it counts what it read
// and selected, marks each message's fate, cuts long errors in the listing, and prints the closing lines only when
// they say something.
func TestWhatIsReadAndListed(t *testing.T) {
	long := strings.Repeat("e", 121)
	withOrigin := kept("q1", contract.ReasonUnknownAccount, "AROAC:s", "1", "from-dlq")
	withOrigin.MessageAttributes[contract.AttrOrigin] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(contract.OriginDLQ)}
	withOrigin.MessageAttributes[contract.AttrError] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(long)}
	plain := kept("q2", contract.ReasonUnknownAccount, "AROAC:s", "2", "plain")
	plain.MessageAttributes[contract.AttrAccount] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String("444444444444")}
	plain.MessageAttributes[contract.AttrError] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(strings.Repeat("s", 120))}
	f := newSQS(quarantine, withOrigin, plain)
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: Quarantine, Accounts: []string{"444444444444"}, Send: true}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(f.receives) != "[0/60 0/60 1/60]" {
		t.Errorf("receives (wait/visibility) %v, want a short poll, another, then a long one, each hiding a minute", f.receives)
	}
	if rep.Read != 2 || rep.Selected != 1 || rep.Sent != 1 {
		t.Errorf("read %d, selected %d, sent %d; want 2, 1, 1", rep.Read, rep.Selected, rep.Sent)
	}
	if got := sentEvents(f); fmt.Sprint(got) != "[AROAC:s/plain]" {
		t.Errorf("sent %v, want the one naming 444444444444 by its attribute", got)
	}
	if _, ok := f.sent[0].MessageAttributes[contract.AttrOrigin]; ok {
		t.Error("a message judged in the central queue was sent back marked as the DLQ's")
	}
	statuses := map[string]string{}
	for _, m := range rep.Messages {
		statuses[m.ID] = m.Status
	}
	if statuses["q1"] != "" || statuses["q2"] != StatusSent {
		t.Errorf("statuses %v, want q1 listed only, q2 sent", statuses)
	}
	out := w.String()
	if !strings.Contains(out, strings.Repeat("e", 120)+"…") || strings.Contains(out, long) || !strings.Contains(out, strings.Repeat("s", 120)+" ") ||
		strings.Contains(out, strings.Repeat("s", 120)+"…") {
		t.Errorf("the listing does not cut the 121-byte error alone:\n%s", out)
	}
	for _, absent := range []string{"kept as evidence", "unattributable: sent back only", "needs", "whose seal does not verify"} {
		if strings.Contains(out, absent) {
			t.Errorf("the listing says %q with nothing of it:\n%s", absent, out)
		}
	}
	if !strings.Contains(out, "the router judges each by its first sender") {
		t.Errorf("the listing does not say what becomes of what was sent:\n%s", out)
	}

	// Sent back from the quarantine with its DLQ origin, it keeps it.
	f = newSQS(quarantine, withOrigin)
	if _, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: Quarantine, Send: true, Visibility: 30 * time.Second}, &w); err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(f.sent[0].MessageAttributes[contract.AttrOrigin].StringValue); got != contract.OriginDLQ || f.receives[0] != "0/30" {
		t.Errorf("kib-origin %q, first receive %s; want dlq, and the visibility asked", got, f.receives[0])
	}

	// Listing only: nothing sent, no closing line about it.
	f = newSQS(quarantine, plain)
	w.Reset()
	if _, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: Quarantine}, &w); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(w.String(), "the router judges each") || len(f.sent) != 0 {
		t.Errorf("a listing sent %d or speaks of sending:\n%s", len(f.sent), w.String())
	}
}

// TestWhatIsInFlightUnreadIsSaid: messages of the queue in flight that no receive returned (another reader's, or
// those of an answer lost on its way, which SQS hides as it hides any received message) are counted and said, with
// when they come back; the run's own, and none, say nothing.
func TestWhatIsInFlightUnreadIsSaid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		hidden int
		want   int
	}{
		{"two hidden besides the two read", 2, 2},
		{"only the run's own in flight", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newSQS(quarantine, kept("q1", contract.ReasonUnknownAccount, "AROAC:s", "1", "a"), kept("q2", contract.ReasonUnknownAccount, "AROAC:s", "2", "b"))
			f.hidden = tc.hidden
			var w bytes.Buffer
			rep, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: Quarantine}, &w)
			if err != nil {
				t.Fatal(err)
			}
			said := strings.Contains(w.String(), fmt.Sprintf("about %d more in flight, not read", tc.want)) && strings.Contains(w.String(), "run it again then")
			if rep.Read != 2 || rep.Unread != tc.want || said != (tc.want > 0) || (tc.want == 0 && strings.Contains(w.String(), "in flight")) {
				t.Errorf("read %d, unread %d; want 2, %d, said so only then:\n%s", rep.Read, rep.Unread, tc.want, w.String())
			}
		})
	}
}

// TestTheDLQsReasonsAndEvents: a DLQ message's reason is EventBridge's ERROR_CODE, else "retries exhausted", and its
// account and event come from its body; a quarantine message without a reason keeps none.
func TestTheDLQsReasonsAndEvents(t *testing.T) {
	eb := types.Message{MessageId: aws.String("d1"), Body: aws.String(`{"id":"ev-1","account":"222222222222"}`),
		Attributes:        map[string]string{"SenderId": "AIDAEVENTBRIDGE", "SentTimestamp": "1"},
		MessageAttributes: map[string]types.MessageAttributeValue{"ERROR_CODE": {DataType: aws.String("String"), StringValue: aws.String("NO_PERMISSIONS")}}}
	moved := types.Message{MessageId: aws.String("d2"), Body: aws.String(`not json`), Attributes: map[string]string{"SenderId": "AROAX:s", "SentTimestamp": "2"}}
	rep, err := Run(context.Background(), Clients{SQS: newSQS(dlq, eb, moved), STS: operator}, stackOuts, Options{From: DLQ}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Message{}
	for _, m := range rep.Messages {
		got[m.ID] = m
	}
	if m := got["d1"]; m.Reason != "NO_PERMISSIONS" || m.Account != "222222222222" || m.EventID != "ev-1" || !m.FromDLQ {
		t.Errorf("EventBridge's dead letter read as %+v", m)
	}
	if m := got["d2"]; m.Reason != "retries exhausted" || m.Account != "" || m.EventID != "" {
		t.Errorf("a moved message with no JSON body read as %+v", m)
	}
	// A kept message missing one of the two attributes takes it from its body.
	noAccount, noEvent := kept("qa", contract.ReasonUnparseable, "AROAC:s", "1", "ev-a"), kept("qe", contract.ReasonUnparseable, "AROAC:s", "1", "ev-e")
	delete(noAccount.MessageAttributes, contract.AttrAccount)
	delete(noEvent.MessageAttributes, contract.AttrEventID)
	noAccount.Body, noEvent.Body = aws.String(`{"id":"ev-a","account":"555555555555"}`), aws.String(`{"id":"ev-body","account":"555555555555"}`)
	rep, err = Run(context.Background(), Clients{SQS: newSQS(quarantine, noAccount, noEvent), STS: operator}, stackOuts, Options{From: Quarantine}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Messages {
		if m.ID == "qa" && m.Account != "555555555555" || m.ID == "qe" && (m.EventID != "ev-body" || m.Account != "222222222222") {
			t.Errorf("%s read as account %s, event %s: a missing attribute is taken from the body, a present one kept", m.ID, m.Account, m.EventID)
		}
	}
	noReason := kept("q", "", "AROAC:s", "1", "ev")
	delete(noReason.MessageAttributes, contract.AttrReason)
	rep, err = Run(context.Background(), Clients{SQS: newSQS(quarantine, noReason), STS: operator}, stackOuts, Options{From: Quarantine}, &bytes.Buffer{})
	if err != nil || rep.Messages[0].Reason != "" {
		t.Errorf("a quarantine message with no reason read as %q, %v", rep.Messages[0].Reason, err)
	}
}

// TestASendOfNothingSaysNothingOfTheRouter: a send that sends nothing back (only evidence selected) does not say the
// router will judge what was sent.
func TestASendOfNothingSaysNothingOfTheRouter(t *testing.T) {
	var w bytes.Buffer
	f := newSQS(quarantine, kept("m1", contract.ReasonForgedSender, "AROAA:s", "1", "forged"))
	if _, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, Options{From: Quarantine, Send: true}, &w); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(w.String(), "the router judges each") || !strings.Contains(w.String(), "sent back to the central queue: 0") {
		t.Errorf("listing:\n%s", w.String())
	}
}

// TestReadOutputs: the stack's outputs name the three queues, or the command says what is missing before it reads.
func TestReadOutputs(t *testing.T) {
	for _, tc := range []struct{ name, in, err string }{
		{"a bus's stackOuts", `{"region":"eu-west-1","centralQueueUrl":"c","deadLetterQueueUrl":"d","quarantineQueueUrl":"q"}`, ""},
		{"no central queue", `{"deadLetterQueueUrl":"d","quarantineQueueUrl":"q"}`, "name no centralQueueUrl:"},
		{"no dead-letter queue", `{"centralQueueUrl":"c","quarantineQueueUrl":"q"}`, "name no deadLetterQueueUrl:"},
		{"no quarantine (a stack from before it)", `{"centralQueueUrl":"c","deadLetterQueueUrl":"d"}`, "updated since the quarantine came"},
		{"not JSON", `centralQueueUrl`, "pulumi stack output --json"},
		{"outputs it does not need are secrets", `{"region":"eu-west-1","centralQueueUrl":"c","deadLetterQueueUrl":"d","quarantineQueueUrl":"q",` +
			`"clusters":"[secret]","canaryIntervalSeconds":"[secret]","ruleArns":"[secret]"}`, ""},
		{"a queue it needs a secret", `{"centralQueueUrl":"[secret]","deadLetterQueueUrl":"d","quarantineQueueUrl":"q"}`, "name no centralQueueUrl:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := ReadOutputs(strings.NewReader(tc.in))
			switch {
			case tc.err == "" && (err != nil || o.CentralQueueURL != "c" || o.DeadLetterQueueURL != "d" || o.QuarantineQueueURL != "q" || o.Region != "eu-west-1"):
				t.Errorf("read %+v, %v; want the stackOuts", o, err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("err = %v, want one saying %q", err, tc.err)
			}
		})
	}
}

// TestSelectingIsNoVouch: selecting messages by SENDER= or EVENT= without VOUCH=1 vouches for nothing: the
// unattributable ones selected stay, needing a vouch, and what is sent carries none.
func TestSelectingIsNoVouch(t *testing.T) {
	for name, opts := range map[string]Options{
		"by sender": {From: Quarantine, Send: true, Senders: []string{"AROAOLD:s"}},
		"by event":  {From: Quarantine, Send: true, EventIDs: []string{"old", "joined"}},
	} {
		t.Run(name, func(t *testing.T) {
			f := newSQS(quarantine,
				kept("m1", contract.ReasonUnattributable, "AROAOLD:s", "1700000000001", "old"),
				kept("m2", contract.ReasonUnknownAccount, "AROAOLD:s", "1700000000002", "joined"),
			)
			var w bytes.Buffer
			rep, err := Run(context.Background(), Clients{SQS: f, STS: operator}, stackOuts, opts, &w)
			if err != nil {
				t.Fatal(err)
			}
			if got := sentEvents(f); fmt.Sprint(got) != "[AROAOLD:s/joined]" || rep.NeedVouch != 1 {
				t.Errorf("sent %v, %d needing a vouch; want only the unknown account's, the unattributable one waiting for VOUCH=1", got, rep.NeedVouch)
			}
			for _, e := range f.sent {
				if _, ok := e.MessageAttributes[contract.AttrVouched]; ok {
					t.Errorf("%s carries a vouch nobody gave", eventOf(aws.ToString(e.MessageBody)))
				}
			}
		})
	}
}
