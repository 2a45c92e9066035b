package drain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// fakeQueue holds messages, handing each receive up to its MaxNumberOfMessages of those not yet received; it records
// the receives' attribute names and the deletes, and fails receives after failAfter of them when set.
type fakeQueue struct {
	mu        sync.Mutex
	msgs      []types.Message
	next      int
	receives  int
	asked     []*sqs.ReceiveMessageInput
	deleted   []string
	failAfter int
	failAsked int32 // when set, the receives asking for this many fail
	deleteErr error
	hang      bool // deletes answer nothing until their context ends, as hung calls
	// perCall, when set, is the most one receive hands back, whatever it asked: SQS may return fewer than asked.
	perCall int
}

func queueOf(n int, body func(i int) string) *fakeQueue {
	f := &fakeQueue{}
	for i := range n {
		f.msgs = append(f.msgs, types.Message{MessageId: aws.String(fmt.Sprint("m", i)), ReceiptHandle: aws.String(fmt.Sprint("rh", i)),
			Body: aws.String(body(i)), Attributes: map[string]string{"SenderId": "AROAX:s"},
			MessageAttributes: map[string]types.MessageAttributeValue{"kib-seal": {DataType: aws.String("String"), StringValue: aws.String("s")}}})
	}
	return f
}

func (f *fakeQueue) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.receives++
	f.asked = append(f.asked, in)
	if f.failAfter > 0 && f.receives > f.failAfter || f.failAsked != 0 && in.MaxNumberOfMessages == f.failAsked {
		return nil, errors.New("OverLimit")
	}
	n := int(in.MaxNumberOfMessages)
	if f.perCall > 0 {
		n = min(n, f.perCall)
	}
	end := min(len(f.msgs), f.next+n)
	out := &sqs.ReceiveMessageOutput{Messages: f.msgs[f.next:end]}
	f.next = end
	return out, nil
}

func (f *fakeQueue) DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	if f.hang {
		<-ctx.Done()
	}
	if err := ctx.Err(); err != nil {
		return nil, err // as an SDK call made past its context's end
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.deleteErr != nil {
		return nil, f.deleteErr
	}
	if len(in.Entries) > contract.MaxReceive {
		return nil, errors.New("TooManyEntriesInBatchRequest")
	}
	if len(in.Entries) == 0 {
		return nil, errors.New("EmptyBatchRequest") // as SQS refuses a batch of none
	}
	out := &sqs.DeleteMessageBatchOutput{}
	for _, e := range in.Entries {
		f.deleted = append(f.deleted, aws.ToString(e.ReceiptHandle))
		out.Successful = append(out.Successful, types.DeleteMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

// router routes every batch, listing for redelivery the messages whose body is "retry"; it records the batches.
type router struct {
	mu      sync.Mutex
	batches []events.SQSEvent
	err     error
	hang    bool // each batch takes until its context ends, as a routing whose calls hang
}

func (r *router) handle(ctx context.Context, b events.SQSEvent) (events.SQSEventResponse, error) {
	if r.hang {
		<-ctx.Done()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, b)
	var resp events.SQSEventResponse
	for _, m := range b.Records {
		if m.Body == "retry" {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, r.err
}

var like = events.SQSMessage{EventSourceARN: "arn:aws:sqs:eu-west-1:111111111111:kib-central", AWSRegion: "eu-west-1"}

// TestADrainRoutesWhatWaitsInChunks: a drain takes what waits in chunks, each routed as one batch as Lambda presents
// one (every attribute asked for, the event source's ARN and region), deletes what was routed in batches of 10, and
// leaves what the router retries; it ends on an empty round.
func TestADrainRoutesWhatWaitsInChunks(t *testing.T) {
	q := queueOf(2345, func(i int) string {
		if i%100 == 7 {
			return "retry"
		}
		return "event"
	})
	r := &router{}
	res, err := New(q, "https://sqs/central", r.handle, Options{Max: 10000, Chunk: 1000}).Drain(context.Background(), like)
	if err != nil {
		t.Fatal(err)
	}
	if res.Received != 2345 || res.Retried != 24 || res.Deleted != 2345-24 || len(q.deleted) != res.Deleted {
		t.Errorf("drain %+v, %d deleted; want all 2345 received, the 24 retried left", res, len(q.deleted))
	}
	if len(r.batches) != 3 || len(r.batches[0].Records) != 1000 || len(r.batches[2].Records) != 345 {
		t.Errorf("%d batches routed; want chunks of 1000, 1000 and 345", len(r.batches))
	}
	var rec events.SQSMessage
	for _, m := range r.batches[0].Records {
		if m.MessageId == "m0" {
			rec = m
		}
	}
	if rec.EventSourceARN != like.EventSourceARN || rec.AWSRegion != "eu-west-1" || rec.EventSource != "aws:sqs" || rec.Attributes["SenderId"] != "AROAX:s" ||
		aws.ToString(rec.MessageAttributes["kib-seal"].StringValue) != "s" || rec.MessageAttributes["kib-seal"].DataType != "String" || rec.ReceiptHandle != "rh0" {
		t.Errorf("a record as routed: %+v", rec)
	}
	for _, in := range q.asked {
		if len(in.MessageSystemAttributeNames) != 1 || in.MessageSystemAttributeNames[0] != types.MessageSystemAttributeNameAll ||
			len(in.MessageAttributeNames) != 1 || in.MessageAttributeNames[0] != "All" || in.MaxNumberOfMessages > 10 || in.MaxNumberOfMessages < 1 {
			t.Fatalf("a receive asked %+v: want every attribute, at most 10 messages", in)
		}
	}
	if last := q.asked[len(q.asked)-1]; aws.ToString(last.QueueUrl) != "https://sqs/central" {
		t.Errorf("received from %s", aws.ToString(last.QueueUrl))
	}
}

// TestADrainStops: at Max messages, with less than its reserve left of the invocation, on a receive's error (what it
// had is routed), and with the router's error (nothing deleted: it all comes back after its visibility).
func TestADrainStops(t *testing.T) {
	body := func(int) string { return "event" }
	q := queueOf(500, body)
	res, err := New(q, "u", (&router{}).handle, Options{Max: 250, Chunk: 100}).Drain(context.Background(), like)
	if err != nil || res.Received != 250 || res.Deleted != 250 {
		t.Errorf("at its most: %+v, %v; want 250 taken", res, err)
	}

	q = queueOf(500, body)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if res, err := New(q, "u", (&router{}).handle, Options{Max: 1000, Reserve: 10 * time.Second}).Drain(ctx, like); err != nil || res.Received != 0 || q.receives != 0 {
		t.Errorf("with less than its reserve left: %+v, %d receives (%v); want none", res, q.receives, err)
	}

	q = queueOf(500, body)
	q.failAfter = 3
	res, err = New(q, "u", (&router{}).handle, Options{Max: 1000, Receivers: 1}).Drain(context.Background(), like)
	if err == nil || !strings.Contains(err.Error(), "OverLimit") || res.Received != 30 || res.Deleted != 30 {
		t.Errorf("a receive failing: %+v, %v; want the 30 received routed, the error returned", res, err)
	}

	q = queueOf(50, body)
	r := &router{err: errors.New("batch not started")}
	res, err = New(q, "u", r.handle, Options{Max: 1000}).Drain(context.Background(), like)
	if err == nil || res.Deleted != 0 || len(q.deleted) != 0 {
		t.Errorf("the router failing: %+v, %v; want nothing deleted", res, err)
	}

	q = queueOf(50, body)
	q.deleteErr = errors.New("ServiceUnavailable")
	res, err = New(q, "u", (&router{}).handle, Options{Max: 1000}).Drain(context.Background(), like)
	if err == nil || res.Deleted != 0 || res.Received != 50 {
		t.Errorf("a delete failing: %+v, %v; want the error, nothing counted deleted", res, err)
	}
}

// TestOnlyAFullBatchWraps: a batch of MaxReceive messages calls for a drain (a backlog waits), one of fewer does not (a
// lone event costs no receive more).
func TestOnlyAFullBatchWraps(t *testing.T) {
	if !Wraps(contract.MaxReceive) || Wraps(contract.MaxReceive-1) || !Wraps(contract.MaxReceive+1) {
		t.Error("Wraps")
	}
}

// TestAReceiveAsksForWhatItNeeds: a chunk is asked for in as few receives as it takes, side by side, the last asking
// only for what remains; a queue that hands back fewer than asked is asked again for the rest, and never more than the
// chunk is taken.
func TestAReceiveAsksForWhatItNeeds(t *testing.T) {
	body := func(int) string { return "event" }
	q := queueOf(100, body)
	res, err := New(q, "u", (&router{}).handle, Options{Max: 25}).Drain(context.Background(), like)
	if err != nil || res.Received != 25 {
		t.Fatalf("drain %+v (%v); want 25 taken", res, err)
	}
	var asked []int32
	for _, in := range q.asked[:min(3, len(q.asked))] {
		asked = append(asked, in.MaxNumberOfMessages)
	}
	if len(q.asked) != 3 || fmt.Sprint(slices.Sorted(slices.Values(asked))) != "[5 10 10]" {
		t.Errorf("%d receives asking %v; want three, for 10, 10 and 5", len(q.asked), asked)
	}

	q = queueOf(100, body)
	if res, err := New(q, "u", (&router{}).handle, Options{Max: 20}).Drain(context.Background(), like); err != nil || res.Received != 20 || len(q.asked) != 2 {
		t.Errorf("20 asked: drain %+v, %d receives (%v); want two of 10", res, len(q.asked), err)
	}

	q = queueOf(100, body)
	q.perCall = 7
	res, err = New(q, "u", (&router{}).handle, Options{Max: 25}).Drain(context.Background(), like)
	if err != nil || res.Received != 25 || res.Deleted != 25 || q.next != 25 {
		t.Errorf("a queue handing back 7 a receive: drain %+v, %d taken from the queue (%v); want exactly 25", res, q.next, err)
	}
}

// TestTheReserveDefaultsToTenSeconds: a drain told no reserve keeps 10 s of the invocation: with 5 s left it takes
// nothing.
func TestTheReserveDefaultsToTenSeconds(t *testing.T) {
	q := queueOf(50, func(int) string { return "event" })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if res, err := New(q, "u", (&router{}).handle, Options{Max: 1000}).Drain(ctx, like); err != nil || res.Received != 0 || q.receives != 0 {
		t.Errorf("5 s left, no reserve told: %+v, %d receives (%v); want none", res, q.receives, err)
	}
}

// TestBothErrorsAreKept: a receive's error and the router's, both returned; either alone, itself.
func TestBothErrorsAreKept(t *testing.T) {
	a, b := errors.New("receive"), errors.New("route")
	for _, c := range []struct {
		x, y error
		want []error
	}{{nil, nil, nil}, {a, nil, []error{a}}, {nil, b, []error{b}}, {a, b, []error{a, b}}} {
		got := joinErr(c.x, c.y)
		if (got == nil) != (len(c.want) == 0) {
			t.Errorf("joinErr(%v, %v) = %v", c.x, c.y, got)
		}
		for _, w := range c.want {
			if !errors.Is(got, w) {
				t.Errorf("joinErr(%v, %v) = %v: want it to hold %v", c.x, c.y, got, w)
			}
		}
	}
}

// TestEveryMessageHandedOutIsRouted: of a round of receives side by side, one fails; what the others were handed is
// routed and deleted all the same (left out, it would be invisible for the visibility timeout, routed by no one), and
// the error is returned.
func TestEveryMessageHandedOutIsRouted(t *testing.T) {
	q := queueOf(100, func(int) string { return "event" })
	q.failAsked = 10 // a chunk of 15: the receive asking for 10 fails, the one asking for 5 is handed 5
	res, err := New(q, "u", (&router{}).handle, Options{Max: 15, Chunk: 15}).Drain(context.Background(), like)
	if err == nil || !strings.Contains(err.Error(), "OverLimit") {
		t.Errorf("error %v; want the receive's", err)
	}
	if res.Received != q.next || res.Deleted != q.next || len(q.deleted) != q.next || q.next != 5 {
		t.Errorf("drain %+v, %d deleted of %d handed out; want every one handed out routed and deleted", res, len(q.deleted), q.next)
	}
}

// TestADrainEndsWithinTheInvocation: a chunk whose routing hangs (its calls answer nothing until their context ends)
// still leaves the drain the time to delete what it routed, and the invocation the time to return before Lambda's
// deadline, past which Lambda takes its whole batch back; with the deletes hung too, it still returns in time. Broken on
// purpose (the chunk routed within the drain's own context, or the drain within the invocation's), the deletes come
// too late or the drain returns past the deadline.
func TestADrainEndsWithinTheInvocation(t *testing.T) {
	for _, tc := range []struct {
		name        string
		hungDeletes bool
		deleted     int
	}{
		{"its routing hung", false, 25},
		{"its routing and deletes hung", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := queueOf(25, func(int) string { return "event" })
			q.hang = tc.hungDeletes
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			res, err := New(q, "u", (&router{hang: true}).handle, Options{Max: 100, Reserve: 100 * time.Millisecond}).Drain(ctx, like)
			if ctx.Err() != nil {
				t.Errorf("the drain returned after the invocation's deadline")
			}
			if res.Received != 25 || res.Deleted != tc.deleted || len(q.deleted) != tc.deleted || (err != nil) != tc.hungDeletes {
				t.Errorf("drain %+v, %d deleted (%v); want the 25 routed, %d deleted", res, len(q.deleted), err, tc.deleted)
			}
		})
	}
}
