package intake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// fakeDLQ holds messages, answering each receive with up to its MaxNumberOfMessages of those not yet received; it
// records the waits asked, the deletes and the releases. Like SQS, it refuses a DeleteMessageBatch of no entries
// (AWS.SimpleQueueService.EmptyBatchRequest, "The batch request doesn't contain any entries": the DeleteMessageBatch
// page of the Amazon SQS API Reference, Errors); what SQS checks that it does not: the receipt handles' validity,
// more than 10 entries, duplicate IDs.
type fakeDLQ struct {
	msgs      []types.Message
	next      int
	waits     []int32
	deleted   []string
	released  []string
	deleteErr error
}

func (f *fakeDLQ) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	f.waits = append(f.waits, in.WaitTimeSeconds)
	end := min(len(f.msgs), f.next+int(in.MaxNumberOfMessages))
	out := &sqs.ReceiveMessageOutput{Messages: f.msgs[f.next:end]}
	f.next = end
	return out, nil
}

func (f *fakeDLQ) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	if f.deleteErr != nil {
		return nil, f.deleteErr
	}
	if len(in.Entries) == 0 {
		return nil, &types.EmptyBatchRequest{Message: aws.String("The batch request doesn't contain any entries.")}
	}
	out := &sqs.DeleteMessageBatchOutput{}
	for _, e := range in.Entries {
		f.deleted = append(f.deleted, aws.ToString(e.ReceiptHandle))
		out.Successful = append(out.Successful, types.DeleteMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

func (f *fakeDLQ) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	f.released = append(f.released, aws.ToString(in.ReceiptHandle))
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

// keeper keeps what it is given, failing the messages whose body is "fail", keeping in the archive only those whose
// body starts with "large".
type keeper struct{ kept []quarantine.Message }

func (k *keeper) Keep(_ context.Context, msgs []quarantine.Message) []error {
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		if aws.ToString(m.Body) == "fail" {
			errs[i] = errors.New("the quarantine refused it")
			continue
		}
		if strings.HasPrefix(aws.ToString(m.Body), "large") {
			errs[i] = fmt.Errorf("keeping: %w", quarantine.ErrArchivedOnly)
			continue
		}
		k.kept = append(k.kept, m)
	}
	return errs
}

// verifier verifies the seal "good" only.
type verifier struct{}

func (verifier) Verify(_ context.Context, _ sealing.Record, seal string) error {
	if seal == "good" {
		return nil
	}
	return sealing.ErrBroken
}

func dlqMessage(id, body, sender string, attrs map[string]string) types.Message {
	m := types.Message{MessageId: aws.String(id), ReceiptHandle: aws.String("rh-" + id), Body: aws.String(body),
		Attributes: map[string]string{"SenderId": sender, "SentTimestamp": "1763726400000"}, MessageAttributes: map[string]types.MessageAttributeValue{}}
	for k, v := range attrs {
		m.MessageAttributes[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	return m
}

// TestTakeKeepsEachWithTheSenderTheDLQHolds: each message is kept as dead_lettered with the dead-letter queue's
// SenderId and SentTimestamp, marked as the dead-letter queue's, named by its ID, with why it is there (EventBridge's
// error, or its receives ran out); one the redrive role sent back before whose seal verifies keeps its sealed first
// sender, one whose seal does not is kept with the sender the dead-letter queue holds; what was kept is deleted, what
// was not is released; the intake ends only on an empty long poll.
func TestTakeKeepsEachWithTheSenderTheDLQHolds(t *testing.T) {
	ev := `{"id":"e-1","account":"222222222222"}`
	f := &fakeDLQ{msgs: []types.Message{
		dlqMessage("d1", ev, "AIDAEVENTBRIDGE:x", map[string]string{"ERROR_CODE": "NO_PERMISSIONS", "ERROR_MESSAGE": "denied"}),
		dlqMessage("d2", ev, "AROAFWD:s", nil),
		dlqMessage("d3", ev, "AROAREDRIVE:op", map[string]string{contract.AttrSeal: "good", contract.AttrFirstSender: "AROAOLD:s",
			contract.AttrFirstSent: "1700000000000", contract.AttrMessageID: "first-id", contract.AttrReason: "unknown_account"}),
		dlqMessage("d4", ev, "AROAREDRIVE:op", map[string]string{contract.AttrSeal: "forged", contract.AttrFirstSender: "AROAB:s"}),
		dlqMessage("d5", "fail", "AROAFWD:s", nil),
	}}
	k := &keeper{}
	res, err := New(f, "https://sqs/dlq", k, Options{Verifier: verifier{}}).Take(context.Background())
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("%v; want the one the quarantine refused named", err)
	}
	if res.Kept != 4 || fmt.Sprint(f.deleted) != "[rh-d1 rh-d2 rh-d3 rh-d4]" || fmt.Sprint(f.released) != "[rh-d5]" {
		t.Fatalf("kept %d, deleted %v, released %v", res.Kept, f.deleted, f.released)
	}
	got := map[string]quarantine.Message{}
	for _, m := range k.kept {
		got[m.Refused] = m
	}
	for id, w := range map[string]struct {
		sender, sent, first, why string
		fromDLQ                  bool
	}{
		"d1": {"AIDAEVENTBRIDGE:x", "1763726400000", "d1", "NO_PERMISSIONS: denied", true},
		"d2": {"AROAFWD:s", "1763726400000", "d2", "receives on the central queue ran out", true},
		"d3": {"AROAOLD:s", "1700000000000", "first-id", "receives on the central queue ran out", false}, // sealed: the central queue's sender
		"d4": {"AROAREDRIVE:op", "1763726400000", "d4", "receives", true},
	} {
		m := got[id]
		if m.Reason != contract.ReasonDeadLettered || m.Sender != w.sender || m.Sent != w.sent || m.MessageID != w.first || m.FromDLQ != w.fromDLQ ||
			m.Account != "222222222222" || m.EventID != "e-1" || !strings.Contains(m.Err.Error(), w.why) {
			t.Errorf("%s kept as %+v; want dead_lettered from the DLQ by %s at %s, first %s, saying %q", id, m, w.sender, w.sent, w.first, w.why)
		}
	}

	f = &fakeDLQ{msgs: []types.Message{dlqMessage("x", ev, "AROAFWD:s", nil)}}
	if res, err := New(f, "u", &keeper{}, Options{}).Take(context.Background()); err != nil || res.Kept != 1 || res.More {
		t.Fatalf("%+v, %v", res, err)
	}
	if fmt.Sprint(f.waits) != "[0 0 1]" {
		t.Errorf("waits %v, want short polls until one is empty, then one long poll", f.waits)
	}
}

// TestTakeIsBounded: it takes at most Max messages, and reads no new batch once the invocation's deadline is within
// Reserve, saying more are left; a delete that fails is an error (what was kept is kept again next time).
func TestTakeIsBounded(t *testing.T) {
	var msgs []types.Message
	for i := range 25 {
		msgs = append(msgs, dlqMessage(fmt.Sprint(i), "{}", "AROAFWD:s", nil))
	}
	f := &fakeDLQ{msgs: msgs}
	res, err := New(f, "u", &keeper{}, Options{Max: 12}).Take(context.Background())
	if err != nil || res.Kept != 12 || !res.More {
		t.Errorf("%+v, %v; want 12 kept, more left", res, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	f = &fakeDLQ{msgs: msgs}
	res, err = New(f, "u", &keeper{}, Options{Reserve: 10 * time.Second}).Take(ctx)
	if err != nil || res.Kept != 0 || !res.More || len(f.waits) != 0 {
		t.Errorf("%+v, %v after %d receives; want none read, more left", res, err, len(f.waits))
	}
	// A batch the quarantine kept none of deletes nothing (SQS refuses an empty batch): the error is the keeping's.
	f = &fakeDLQ{msgs: []types.Message{dlqMessage("f", "fail", "AROAFWD:s", nil)}}
	if res, err := New(f, "u", &keeper{}, Options{}).Take(context.Background()); err == nil || !strings.Contains(err.Error(), "the quarantine refused it") ||
		res.Kept != 0 || len(f.deleted) != 0 || fmt.Sprint(f.released) != "[rh-f]" {
		t.Errorf("%+v, %v, deleted %v, released %v; want the keeping's error, nothing deleted, the message released", res, err, f.deleted, f.released)
	}
	f = &fakeDLQ{msgs: msgs[:1], deleteErr: errors.New("throttled")}
	if _, err := New(f, "u", &keeper{}, Options{}).Take(context.Background()); err == nil || !strings.Contains(err.Error(), "kept again next time") {
		t.Errorf("%v; want the failed delete named", err)
	}
}

// TestRequested: only kib-intake: dlq asks.
func TestRequested(t *testing.T) {
	for v, want := range map[string]bool{contract.IntakeDLQ: true, "quarantine": false, "": false} {
		rec := &events.SQSMessage{MessageAttributes: map[string]events.SQSMessageAttribute{}}
		if v != "" {
			rec.MessageAttributes[contract.AttrIntake] = events.SQSMessageAttribute{StringValue: aws.String(v)}
		}
		if Requested(rec) != want {
			t.Errorf("%q: %t, want %t", v, !want, want)
		}
	}
}

// TestDefaults: an option left zero or negative takes its documented default; one set is kept.
func TestDefaults(t *testing.T) {
	want := Options{Max: 1000, Reserve: 5 * time.Second, Visibility: time.Minute}
	for _, o := range []Options{{}, {Max: -1, Reserve: -1, Visibility: -1}} {
		if got := New(nil, "", nil, o).opts; got.Max != want.Max || got.Reserve != want.Reserve || got.Visibility != want.Visibility {
			t.Errorf("New(%+v).opts = %+v, want %+v", o, got, want)
		}
	}
	set := Options{Max: 1, Reserve: time.Nanosecond, Visibility: time.Nanosecond}
	if got := New(nil, "", nil, set).opts; got.Max != 1 || got.Reserve != time.Nanosecond || got.Visibility != time.Nanosecond {
		t.Errorf("New(%+v).opts = %+v: a value set was replaced", set, got)
	}
}

// TestWhatOnlyTheArchiveHoldsIsTaken: a message the quarantine keeps in the archive only (too large with its
// attributes) is kept all the same: deleted from the dead-letter queue, never released to be taken again, and named
// (its event's ID, its message ID when it is no event) for the router's line.
func TestWhatOnlyTheArchiveHoldsIsTaken(t *testing.T) {
	f := &fakeDLQ{msgs: []types.Message{
		dlqMessage("d1", `large{"id":"e-big"}`, "AROAFWD:s", nil),
		dlqMessage("d2", `{"id":"e-1","account":"222222222222"}`, "AROAFWD:s", nil),
		dlqMessage("d3", "large, no event", "AROAFWD:s", nil),
	}}
	res, err := New(f, "https://sqs/dlq", &keeper{}, Options{}).Take(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept != 3 || fmt.Sprint(f.deleted) != "[rh-d1 rh-d2 rh-d3]" || len(f.released) != 0 {
		t.Errorf("kept %d, deleted %v, released %v; want all three kept and deleted", res.Kept, f.deleted, f.released)
	}
	if fmt.Sprint(res.ArchivedOnly) != "[d1 d3]" {
		t.Errorf("archived only: %v, want the two large ones by message ID (neither parses as an event)", res.ArchivedOnly)
	}
}
