package route

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

func TestClaimOutcome(t *testing.T) {
	mine := &archive.Delivery{MessageID: "c1", Sender: "AROAREDRIVE:alice", At: time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)}
	for _, c := range []struct {
		name   string
		before *archive.Delivery
		err    error
		v      verdict
		reason contract.Reason
		why    string
	}{
		{"recorded now", nil, nil, pending, "", ""},
		{"recorded by this message before: a retry", mine, nil, pending, "", ""},
		{"recorded by another message: a replay", &archive.Delivery{MessageID: "c0", Sender: "AROAREDRIVE:bob", At: mine.At}, nil, dropped,
			contract.ReasonReplayed, "by message c0 of the central queue sent by AROAREDRIVE:bob at 2026-11-28T10:00:00Z"},
		{"the ledger failed", nil, errors.New("SlowDown"), retried, "", "SlowDown"},
		{"another message delivers it now", nil, fmt.Errorf("%w: message c0", archive.ErrClaimed), retried, "", "delivering this sealed record now"},
		{"a delete marker hides the ledger", nil, fmt.Errorf("s3://a/delivered/x.json: %w", archive.ErrHidden), dropped, contract.ReasonLedgerHidden,
			"delete marker"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if o := claimOutcome("c1", c.before, c.err); !is(o, c.v, c.reason, c.why) {
				t.Errorf("%+v, want %s %s saying %q", o, c.v, c.reason, c.why)
			}
		})
	}
}

// TestASealedRecordIsDeliveredOnce: a sealed record sent back is delivered once; sent again by another message (a
// copy the quarantine or the archive kept, or attributes copied by hand: the same record) it is refused as replayed,
// kept as evidence, counted and logged with what delivered it first; the same message received again (its delivery
// failed, or SQS delivered it twice) still goes through. The ledger answering an error leaves it for later. Every
// message the redrive role sent is logged with its SenderId, role ID and session.
func TestASealedRecordIsDeliveredOnce(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	now := h.r.now()
	a := spotIn(memberA, instance(2))
	attrs := h.seals.sentBack(a, contract.ReasonUnknownAccount, idAFwd+":s", now.Add(-time.Hour))
	send := func(id string) events.SQSEventResponse {
		rec := record(a, idRedrive+":alice", now, attrs)
		rec.MessageId = id
		resp, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	beta := func() int { return len(h.sqs.byURL["https://sqs/"+memberA+"/"+queuename.For(qprefix, "beta")]) }

	// The first delivery fails: retried, and its retry (the same message) is delivered.
	h.sqs.sendErr = map[string]error{queuename.For(qprefix, "beta"): &smithy.GenericAPIError{Code: "ServiceUnavailable"}}
	if resp := send("c1"); len(resp.BatchItemFailures) != 1 || beta() != 0 {
		t.Fatalf("a failed delivery: retried %v, beta received %d", failedIDs(resp), beta())
	}
	h.sqs.sendErr = nil
	if resp := send("c1"); len(resp.BatchItemFailures) != 0 || beta() != 1 {
		t.Fatalf("its retry: retried %v, beta received %d; want it delivered", failedIDs(resp), beta())
	}
	if resp := send("c1"); len(resp.BatchItemFailures) != 0 || beta() != 2 {
		t.Errorf("the same message received once more: retried %v, beta received %d; want it delivered again", failedIDs(resp), beta())
	}
	// Another message with the same record: a replay.
	for _, id := range []string{"c2", "c3"} {
		h.logs.Reset()
		h.emf.Reset()
		if resp := send(id); len(resp.BatchItemFailures) != 0 {
			t.Errorf("a replay retried %v", failedIDs(resp))
		}
	}
	if beta() != 2 {
		t.Errorf("beta received %d, want the replays kept from it", beta())
	}
	if len(q.kept) != 2 || q.kept[0].Reason != contract.ReasonReplayed || q.kept[0].MessageID != "orig-"+idAFwd+":s" || q.kept[0].Refused != "c2" {
		t.Errorf("kept %+v, want both replays as replayed, under their first ID", q.kept)
	}
	if got := h.metric(t, "", "", contract.MetricReplayed); got != 1 {
		t.Errorf("Replayed = %v in the last batch, want 1", got)
	}
	if got := h.logsOf(t, contract.LogReplayed, contract.LogEventID, "deliveredBy"); fmt.Sprint(got) != "map[ev-"+instance(2)+":[c1]]" {
		t.Errorf("replay lines %v, want the one of the last batch naming c1", got)
	}
	if got := h.logsOf(t, contract.LogSentBack, contract.LogSender, contract.LogRoleID); fmt.Sprint(got) != "map["+idRedrive+":alice:["+idRedrive+"]]" {
		t.Errorf("sent-back lines %v, want the redrive role's SenderId and role ID", got)
	}
	if got := h.logsOf(t, contract.LogSentBack, contract.LogSession, "firstSender"); fmt.Sprint(got) != "map[alice:["+idAFwd+":s]]" {
		t.Errorf("sent-back lines %v, want its session and the first sender", got)
	}
	// A replay of the evidence itself: refused again for what it is.
	replayed := h.seals.sentBack(a, contract.ReasonReplayed, idAFwd+":s", now.Add(-time.Hour))
	rec := record(a, idRedrive+":alice", now, replayed)
	rec.MessageId = "c4"
	if _, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil || beta() != 2 ||
		q.kept[len(q.kept)-1].Reason != contract.ReasonReplayed || !strings.Contains(q.kept[len(q.kept)-1].Err.Error(), "evidence") {
		t.Errorf("the kept replay sent back: beta %d, kept %+v (%v)", beta(), q.kept[len(q.kept)-1], err)
	}

	// A seal copied onto a message the redrive role did not send claims nothing: its sender is judged as it stands (A's
	// forwarder, genuine), and the record it carries is not sent back.
	calls := h.ledger.calls
	rec = record(a, idAFwd+":s", now, attrs)
	rec.MessageId = "c5"
	if resp, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil || len(resp.BatchItemFailures) != 0 ||
		beta() != 3 || h.ledger.calls != calls {
		t.Errorf("a forwarder's message carrying a seal: beta %d, %d claims more (%v); want it delivered, nothing claimed", beta(), h.ledger.calls-calls, err)
	}

	// The ledger cannot say: retried, not delivered; nor without a ledger.
	other := spotIn(memberA, instance(5))
	h.sqs.byURL = nil
	for _, l := range []Ledger{&fakeLedger{err: errors.New("SlowDown")}, nil} {
		h.r.ledger = l
		r := record(other, idRedrive+":alice", now, h.seals.sentBack(other, contract.ReasonUnknownAccount, idAFwd+":s", now.Add(-time.Hour)))
		resp, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{r}})
		if err != nil || len(resp.BatchItemFailures) != 1 || beta() != 0 {
			t.Errorf("ledger %v: retried %v, beta received %d; want it retried", l, failedIDs(resp), beta())
		}
	}
}

// TestObservedUnsealedMessagesClaimNothing: in observe mode what the redrive role sends unsealed is let through (and
// logged), and claims nothing in the ledger: only a sealed record's delivery is recorded.
func TestObservedUnsealedMessagesClaimNothing(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	h.r.observe = true
	now := h.r.now()
	in := events.SQSEvent{}
	for i, id := range []int{2, 2} {
		body := spotIn(memberA, instance(id))
		r := record(body, idRedrive+":op", now, map[string]string{contract.AttrFirstSender: idAFwd + ":s", contract.AttrReason: string(contract.ReasonUnknownAccount)})
		r.MessageId = fmt.Sprint("u", i)
		in.Records = append(in.Records, r)
	}
	resp, err := h.r.Handle(context.Background(), in)
	if err != nil || len(resp.BatchItemFailures) != 0 || h.ledger.calls != 0 {
		t.Errorf("retried %v, %d claims (%v); want both let through, nothing claimed", failedIDs(resp), h.ledger.calls, err)
	}
	if got := h.sqs.byURL["https://sqs/"+memberA+"/"+queuename.For(qprefix, "beta")]; len(got) != 2 {
		t.Errorf("beta received %d, want both observed messages", len(got))
	}
}
