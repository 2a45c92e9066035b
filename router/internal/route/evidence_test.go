package route

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// betaQueue is the URL member A's cluster beta's queue has in the fake SQS.
var betaQueue = "https://sqs/" + memberA + "/" + queuename.For(qprefix, "beta")

// until waits for cond, failing the test after a minute: what it waits for happens at once when the code is right,
// never when it is not, so no figure of time is asserted.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("never: %s", what)
		}
	}
}

// TestALiveEventNeverWaitsOnTheEvidence: a batch holding a live event, a sealed record sent back and a refusal to
// keep, with the ledger (S3) and the quarantine (KMS and S3) stalled: the live event reaches its queue while they are
// stalled, the invocation still waiting on them; once they answer, the sealed record is delivered and the refusal
// kept, in the same invocation. Stalled past the evidence deadline, the invocation returns in time, the live event
// delivered, the sealed record and the refusal retried alone. Broken on purpose (the evidence before the live sends),
// the live event waits on the stall and the test fails.
func TestALiveEventNeverWaitsOnTheEvidence(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	now := h.r.now()
	alpha := "https://sqs/" + account + "/" + queuename.For(qprefix, "alpha")
	delivered := func(url string) int {
		h.sqs.mu.Lock()
		defer h.sqs.mu.Unlock()
		return len(h.sqs.byURL[url])
	}
	batchOf := func(n int) events.SQSEvent {
		liveBody := spotIn(account, instance(1))
		sealedBody := spotIn(memberA, instance(2))
		in := events.SQSEvent{Records: []events.SQSMessage{
			record(liveBody, idHubFwd+":s", now, nil),
			record(sealedBody, idRedrive+":op", now, h.seals.sentBack(sealedBody, contract.ReasonUnknownAccount, idAFwd+":s", now.Add(-time.Duration(n)*time.Hour))),
			record(spotIn(memberA, instance(2)), idHubFwd+":s", now, nil), // the hub's forwarder naming A: refused, kept
		}}
		in.Records[0].MessageId, in.Records[1].MessageId, in.Records[2].MessageId = "live", "sealed", "forged"
		return in
	}
	type result struct {
		resp events.SQSEventResponse
		err  error
	}
	handle := func(ctx context.Context, in events.SQSEvent) chan result {
		done := make(chan result, 1)
		go func() {
			resp, err := h.r.Handle(ctx, in)
			done <- result{resp, err}
		}()
		return done
	}

	// S3 and KMS stall, then answer.
	h.ledger.stall = make(chan struct{})
	q.started, q.release = make(chan struct{}), make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := handle(ctx, batchOf(1))
	until(t, "the live event delivered while S3 and KMS stall", func() bool { return delivered(alpha) == 1 })
	select {
	case res := <-done:
		t.Fatalf("the invocation returned (%v, %v) before S3 and KMS answered", failedIDs(res.resp), res.err)
	default:
	}
	close(h.ledger.stall)
	close(q.release)
	res := <-done
	if res.err != nil || len(res.resp.BatchItemFailures) != 0 || delivered(betaQueue) != 1 || len(q.kept) != 1 {
		t.Fatalf("once they answered: retried %v, beta received %d, kept %d (%v); want the record delivered and the refusal kept",
			failedIDs(res.resp), delivered(betaQueue), len(q.kept), res.err)
	}

	// They stall past the evidence deadline: what waits on them is retried alone, the live event delivered in time.
	h.ledger.stall = make(chan struct{})
	defer close(h.ledger.stall)
	q.started, q.release, q.startOne = make(chan struct{}), make(chan struct{}), sync.Once{}
	defer close(q.release)
	short, cancelShort := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancelShort()
	res = <-handle(short, batchOf(2))
	if res.err != nil || !slices.Equal(slices.Sorted(slices.Values(failedIDs(res.resp))), []string{"forged", "sealed"}) || delivered(alpha) != 2 ||
		delivered(betaQueue) != 1 {
		t.Fatalf("stalled past the deadline: retried %v, alpha received %d, beta %d (%v); want the live event delivered, the rest retried",
			failedIDs(res.resp), delivered(alpha), delivered(betaQueue), res.err)
	}
}

// TestARecordDroppedAfterItsClaimIsKeptAgainAndDelivered: a sealed record sent back whose instance has no owner yet is
// claimed, then dropped as no_owner: kept again, as a new record (its Refused the message that refused it now), and
// nothing is recorded as delivered. Once the owner is there, the record kept again is sent back and delivered; the
// first record, sent again once its claim lapsed, is delivered too (no cluster queue received it: no replay); sent
// once more, it is refused as replayed.
func TestARecordDroppedAfterItsClaimIsKeptAgainAndDelivered(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	a := &fakeEC2{owners: map[string]string{}}
	opts := owner.Options{CacheSize: 1000, OwnerTTL: time.Hour, NoOwnerTTL: 20 * time.Millisecond} // asked again soon
	h.r.owners = accounts.New(owner.New(h.ec2, opts), accounts.Options{
		ReaderRole:  func(acct string) string { return map[string]string{memberA: "reader-a"}[acct] },
		NewResolver: func(string) (accounts.Resolver, error) { return owner.New(a, opts), nil },
	})
	now := h.r.now()
	body := spotIn(memberA, instance(7))
	first := h.seals.sentBack(body, contract.ReasonUnknownAccount, idAFwd+":s", now.Add(-time.Hour))
	send := func(id string, attrs map[string]string) events.SQSEventResponse {
		rec := record(body, idRedrive+":op", h.r.now(), attrs)
		rec.MessageId = id
		resp, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	if resp := send("c1", first); len(resp.BatchItemFailures) != 0 || len(q.kept) != 1 {
		t.Fatalf("a record with no owner: retried %v, kept %d; want it kept again", failedIDs(resp), len(q.kept))
	}
	again := q.kept[0]
	if again.Reason != contract.ReasonNoOwner || again.Refused != "c1" || again.MessageID != "orig-"+idAFwd+":s" || again.Record().Refused != "c1" {
		t.Fatalf("kept again: %+v; want no_owner, its first ID, refused by c1 (a new record)", again)
	}
	if len(h.ledger.delivered) != 0 || len(h.ledger.claims) != 1 {
		t.Fatalf("the ledger: %d deliveries, %d claims; want the claim only", len(h.ledger.delivered), len(h.ledger.claims))
	}

	// The owner comes; the record kept again is sent back (once the lookup's answer of no owner expired).
	a.mu.Lock()
	a.owners[instance(7)] = "beta"
	a.mu.Unlock()
	time.Sleep(50 * time.Millisecond)
	if resp := send("c2", h.seals.sentBack(body, contract.ReasonNoOwner, idAFwd+":s", now.Add(-time.Hour), contract.AttrRefused, "c1")); len(resp.BatchItemFailures) != 0 ||
		len(h.sqs.byURL[betaQueue]) != 1 {
		t.Fatalf("the record kept again: retried %v, beta received %d; want it delivered", failedIDs(resp), len(h.sqs.byURL[betaQueue]))
	}
	// The first record, once c1's claim lapsed: never delivered, so delivered now; then a replay.
	later := now.Add(maxInvocation + time.Minute)
	h.r.now = func() time.Time { return later }
	if resp := send("c3", first); len(resp.BatchItemFailures) != 0 || len(h.sqs.byURL[betaQueue]) != 2 {
		t.Errorf("the first record after its claim lapsed: retried %v, beta received %d; want it delivered", failedIDs(resp), len(h.sqs.byURL[betaQueue]))
	}
	if resp := send("c4", first); len(resp.BatchItemFailures) != 0 || len(h.sqs.byURL[betaQueue]) != 2 || q.kept[len(q.kept)-1].Reason != contract.ReasonReplayed {
		t.Errorf("the first record once more: retried %v, beta received %d, kept %+v; want it refused as replayed", failedIDs(resp),
			len(h.sqs.byURL[betaQueue]), q.kept[len(q.kept)-1])
	}
}

// TestAnUnrecordedDeliveryIsRetried: a sealed record delivered whose delivery the ledger could not record is retried
// (delivered again, which Karpenter takes idempotently), never left delivered and unrecorded; recorded, it is done.
func TestAnUnrecordedDeliveryIsRetried(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	now := h.r.now()
	body := spotIn(memberA, instance(2))
	rec := record(body, idRedrive+":op", now, h.seals.sentBack(body, contract.ReasonUnknownAccount, idAFwd+":s", now.Add(-time.Hour)))
	rec.MessageId = "c1"
	h.ledger.recordErr = context.DeadlineExceeded
	resp, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
	if err != nil || !slices.Equal(failedIDs(resp), []string{"c1"}) || len(h.sqs.byURL[betaQueue]) != 1 {
		t.Fatalf("an unrecorded delivery: retried %v, beta received %d (%v); want it delivered and retried", failedIDs(resp), len(h.sqs.byURL[betaQueue]), err)
	}
	h.ledger.recordErr = nil
	resp, err = h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
	if err != nil || len(resp.BatchItemFailures) != 0 || len(h.ledger.delivered) != 1 {
		t.Errorf("received again: retried %v, %d deliveries recorded (%v); want it recorded", failedIDs(resp), len(h.ledger.delivered), err)
	}
}
