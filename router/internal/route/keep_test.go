package route

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// fakeQuarantine keeps what it is given, or fails; started, when set, is closed when Keep is entered, and Keep waits
// for release first.
type fakeQuarantine struct {
	mu       sync.Mutex
	kept     []quarantine.Message
	err      error
	started  chan struct{}
	release  chan struct{}
	startOne sync.Once
}

func (f *fakeQuarantine) Keep(ctx context.Context, msgs []quarantine.Message) []error {
	if f.started != nil {
		f.startOne.Do(func() { close(f.started) })
		select {
		case <-f.release:
		case <-ctx.Done(): // a stalled KMS or S3: every call fails at the deadline
			errs := make([]error, len(msgs))
			for i := range errs {
				errs[i] = ctx.Err()
			}
			return errs
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	errs := make([]error, len(msgs))
	for i, m := range msgs {
		if f.err != nil {
			errs[i] = f.err
			continue
		}
		f.kept = append(f.kept, m)
	}
	return errs
}

// TestRefusedMessagesAreQuarantined: every refusal of contract.QuarantineReasons is kept with its reason, error,
// claimed account, sender, sent time and ids, and acknowledged; the routine drops (no_owner, not_interruption) are
// not; a refusal the quarantine cannot take is retried, never deleted.
func TestRefusedMessagesAreQuarantined(t *testing.T) {
	hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
	a := &fakeEC2{owners: map[string]string{instance(2): "beta"}}
	h := accountsHarness(t, hub, a, &fakeEC2{}, "alpha", "beta")
	q := &fakeQuarantine{}
	h.r.quarantine = q
	h.r.senders = &fakeSenders{results: map[string]sender.Result{
		"AROAA:s": {Verdict: sender.Genuine},
		"AROAX:s": {Verdict: sender.Forged, Err: errors.New("sender AROAX:s may not speak for account " + memberA)},
	}}
	bodies := []string{
		spotIn(memberA, instance(2)),        // m0 genuine
		spotIn(memberA, instance(2)),        // m1 forged
		spotIn("210987654321", instance(7)), // m2 unknown account
		"not json",                          // m3 unparseable
		spotIn(account, instance(9)),        // m4 no owner: routine, not kept
	}
	in := batch(bodies...)
	for i, s := range []string{"AROAA:s", "AROAX:s", "AROAA:s", "AROAA:s", "AROAA:s"} {
		in.Records[i].Attributes[sender.Attribute] = s
		in.Records[i].Attributes[sender.SentAttribute] = "1763726400000"
	}
	resp, err := h.r.Handle(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("retried %v, want none", failedIDs(resp))
	}
	got := map[string]quarantine.Message{}
	for _, m := range q.kept {
		got[m.MessageID] = m
	}
	want := map[string]contract.Reason{"m1": contract.ReasonForgedSender, "m2": contract.ReasonUnknownAccount, "m3": contract.ReasonUnparseable}
	if len(got) != len(want) {
		t.Fatalf("kept %d messages (%v), want %v", len(got), slices.Collect(maps.Keys(got)), want)
	}
	for id, reason := range want {
		m := got[id]
		if m.Reason != reason || m.Err == nil || m.Sent != "1763726400000" || *m.Body != in.Records[id[1]-'0'].Body {
			t.Errorf("%s kept as %+v, want reason %s with its error, sent time and body unchanged", id, m, reason)
		}
	}
	if m := got["m1"]; m.Account != memberA || m.Sender != "AROAX:s" || m.EventID != "ev-"+instance(2) {
		t.Errorf("the forgery kept as %+v, want account %s, sender AROAX:s and its event id", m, memberA)
	}
	if got := h.metric(t, "", "", contract.MetricQuarantined); got != 3 {
		t.Errorf("Quarantined = %v, want 3", got)
	}
	if got := h.logsOf(t, contract.LogMessageDropped, "messageId", contract.LogQuarantined); fmt.Sprint(got) != "map[m1:[true] m2:[true] m3:[true] m4:[]]" {
		t.Errorf("drop lines marked quarantined: %v", got)
	}
	if got := h.sqs.byURL["https://sqs/"+memberA+"/"+queuename.For(qprefix, "beta")]; len(got) != 1 {
		t.Errorf("beta received %d, want the genuine event only", len(got))
	}

	// The quarantine fails: the refused messages are retried, the genuine one still forwarded.
	q.err = errors.New("SQS unavailable")
	resp, err = h.r.Handle(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if got := failedIDs(resp); fmt.Sprint(got) != "[m1 m2 m3]" {
		t.Errorf("with the quarantine failing, retried %v, want the three refused messages", got)
	}
}

// TestQuarantineDoesNotHoldTheBatch: the refused messages are kept while the batch's deliveries are sent, not after
// them: a quarantine that waits for a delivery to have been sent still lets the batch end.
func TestQuarantineDoesNotHoldTheBatch(t *testing.T) {
	h := newHarness(map[string]string{instance(1): "alpha"}, "alpha")
	q := &fakeQuarantine{started: make(chan struct{}), release: make(chan struct{})}
	h.r.quarantine = q
	h.r.sender = senderFunc(func(ctx context.Context, fq forward.Queue, bodies []*string) []error {
		<-q.started // the quarantine is entered before any delivery ends
		close(q.release)
		return make([]error, len(bodies))
	})
	done := make(chan events.SQSEventResponse)
	go func() { done <- h.handle(t, spot(instance(1)), "not json") }()
	select {
	case resp := <-done:
		if len(resp.BatchItemFailures) != 0 || len(q.kept) != 1 {
			t.Errorf("retried %v, kept %d; want none retried, the unparseable one kept", failedIDs(resp), len(q.kept))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the batch waits for the quarantine before delivering (or the other way round): deadlock")
	}
}

type senderFunc func(ctx context.Context, q forward.Queue, bodies []*string) []error

func (f senderFunc) Send(ctx context.Context, q forward.Queue, bodies []*string) []error {
	return f(ctx, q, bodies)
}
