package route

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// TestSentBackIsJudgedByItsFirstSender: through the router with the real sender check, a message the redrive role
// sent back is judged by the first sender its seal vouches for: a genuine one is delivered; a proven forgery is
// refused again and kept, its first sender and time kept with it, even vouched for; an unattributable one is kept, or
// delivered when vouched for, which its log line says with who vouched; an event naming an account not on the bus is
// judged by its sender first: tied to another account, a forgery; tied to none, kept as unknown_account with that
// sender. What the redrive role sends that the router did not seal speaks for no account: kept as unsealed, counted.
func TestSentBackIsJudgedByItsFirstSender(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bBorn := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) // B's forwarder, created anew
	h, q := judgedHarness(t, born, bBorn)
	now := h.r.now()
	redrive := idRedrive + ":operator"
	beforeB, afterB := bBorn.Add(-time.Hour), bBorn.Add(time.Hour)
	a, b := spotIn(memberA, instance(2)), spotIn(memberB, instance(3))
	unat, fwd, unk := contract.ReasonUnattributable, contract.ReasonForgedSender, contract.ReasonUnknownAccount
	oldB := "AROAOLDBFORWARDER001:s"
	vouchedBy := []string{contract.AttrVouched, "sender", contract.AttrVouchedBy, "arn:aws:sts::123456789012:assumed-role/kib-redrive/alice"}
	in := events.SQSEvent{Records: []events.SQSMessage{
		record(a, idAFwd+":s", now, nil),                                                                           // m0 genuine: A's own
		record(a, redrive, now, h.seals.sentBack(a, unk, idAFwd+":s", afterB)),                                     // m1 sent back, genuine
		record(b, redrive, now, h.seals.sentBack(b, unk, idAFwd+":s", afterB)),                                     // m2 sent back, proven forged
		record(b, redrive, now, h.seals.sentBack(b, unk, idAFwd+":s", afterB, contract.AttrVouched, "event")),      // m3 the same, vouched
		record(b, redrive, now, h.seals.sentBack(b, unat, oldB, beforeB)),                                          // m4 unattributable
		record(b, redrive, now, h.seals.sentBack(b, unat, oldB, beforeB, vouchedBy...)),                            // m5 vouched
		record(spotIn(unknown, instance(9)), idAFwd+":s", now, nil),                                                // m6 A's forwarder naming an account not on the bus
		record(spotIn(unknown, instance(9)), "AROASTRANGER00000001:s", beforeB, nil),                               // m7 a sender tied to no account
		record(b, redrive, now, nil),                                                                               // m8 the redrive role, saying nothing
		record(b, idAFwd+":s", now, h.seals.sentBack(b, unat, idBFwd+":s", afterB, contract.AttrVouched, "event")), // m9 A claiming B's
		// What whoever holds the redrive role can make, and the router refuses:
		record(b, redrive, now, map[string]string{contract.AttrRequeuedFrom: contract.RequeuedFromQuarantine, // m10 B's forwarder, made up
			contract.AttrFirstSender: idBFwd + ":s", contract.AttrFirstSent: strconv.FormatInt(afterB.UnixMilli(), 10), contract.AttrReason: string(unk)}),
		record(b, redrive, now, h.seals.sentBack(b, unat, oldB, beforeB, contract.AttrFirstSender, idBFwd+":s")),   // m11 a sealed first sender edited
		record(b, redrive, now, h.seals.sentBack(spotIn(memberB, instance(4)), unat, oldB, beforeB, vouchedBy...)), // m12 a seal of another body
		record(b, redrive, now, h.seals.sentBack(b, fwd, idAFwd+":s", afterB, vouchedBy...)),                       // m13 a sealed forgery, vouched
		record(b, redrive, now, h.seals.sentBack(b, unat, oldB, beforeB, contract.AttrReason, string(unk))),        // m14 its reason edited
		record(b, redrive, now, h.seals.sentBack(b, contract.ReasonDeadLettered, oldB, beforeB, vouchedBy...)),     // m15 a vouch where none applies
		record(b, redrive, now, h.seals.sentBack(b, contract.ReasonUnsealed, redrive, beforeB, vouchedBy...)),      // m16 kept as unsealed, vouched
	}}
	for i := range in.Records {
		in.Records[i].MessageId = fmt.Sprintf("m%d", i)
	}
	resp, err := h.r.Handle(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("retried %v, want none", failedIDs(resp))
	}
	if got := h.sqs.byURL["https://sqs/"+memberA+"/"+queuename.For(qprefix, "beta")]; len(got) != 2 {
		t.Errorf("beta received %d, want A's event and the genuine one sent back", len(got))
	}
	if got := h.sqs.byURL["https://sqs/"+memberB+"/"+queuename.For(qprefix, "gamma")]; len(got) != 1 {
		t.Errorf("gamma received %d, want only the vouched unattributable one", len(got))
	}
	kept := map[string]quarantine.Message{}
	for _, m := range q.kept {
		kept[m.Refused] = m
	}
	want := map[string]struct {
		reason      contract.Reason
		sender      string
		sent        time.Time
		first       string // the message ID kept: the first one, for a message sent back sealed
		unsealedWhy string
	}{
		"m2":  {fwd, idAFwd + ":s", afterB, "orig-" + idAFwd + ":s", ""},
		"m3":  {fwd, idAFwd + ":s", afterB, "orig-" + idAFwd + ":s", ""},
		"m4":  {unat, oldB, beforeB, "orig-" + oldB, ""},
		"m6":  {fwd, idAFwd + ":s", now, "m6", ""},
		"m7":  {unk, "AROASTRANGER00000001:s", beforeB, "m7", ""},
		"m8":  {contract.ReasonUnsealed, redrive, now, "m8", "carries no seal"},
		"m9":  {fwd, idAFwd + ":s", now, "m9", ""},
		"m10": {contract.ReasonUnsealed, redrive, now, "m10", "carries no seal"},
		"m11": {contract.ReasonUnsealed, redrive, now, "m11", "does not verify"},
		"m12": {contract.ReasonUnsealed, redrive, now, "m12", "does not verify"},
		"m13": {fwd, idAFwd + ":s", afterB, "orig-" + idAFwd + ":s", "evidence"},
		"m14": {contract.ReasonUnsealed, redrive, now, "m14", "does not verify"},
		"m15": {unat, oldB, beforeB, "orig-" + oldB, ""},
		"m16": {contract.ReasonUnsealed, redrive, beforeB, "orig-" + redrive, "evidence"},
	}
	if len(kept) != len(want) {
		t.Errorf("kept %d messages, want %d", len(kept), len(want))
	}
	for id, w := range want {
		k := kept[id]
		if k.Reason != w.reason || k.Sender != w.sender || k.Sent != strconv.FormatInt(w.sent.UnixMilli(), 10) || k.MessageID != w.first {
			t.Errorf("%s kept as %s by %s sent %s (first %s); want %s by %s sent %d (first %s)", id, k.Reason, k.Sender, k.Sent, k.MessageID,
				w.reason, w.sender, w.sent.UnixMilli(), w.first)
		}
		if w.unsealedWhy != "" && (k.Err == nil || !strings.Contains(k.Err.Error(), w.unsealedWhy)) {
			t.Errorf("%s kept with error %v, want it to say %q", id, k.Err, w.unsealedWhy)
		}
	}
	vouched := h.logsOf(t, contract.LogVouched, contract.LogVouchedBy, contract.LogSender)
	if fmt.Sprint(vouched) != "map[arn:aws:sts::123456789012:assumed-role/kib-redrive/alice:[AROAOLDBFORWARDER001:s]]" {
		t.Errorf("vouch lines (by -> first sender) %v, want the one vouched delivery, naming who and its first sender", vouched)
	}
	if got := h.logsOf(t, contract.LogMessageDropped, "messageId", contract.LogRequeued); fmt.Sprint(got["m2"]) != "[true]" || got["m6"][0] != "" {
		t.Errorf("drop lines marked requeued: %v; want m2's, not m6's", got)
	}
	if got := h.metric(t, "", "", contract.MetricForgedSender); got != 5 {
		t.Errorf("ForgedSender = %v, want 5", got)
	}
	if got := h.metric(t, "", "", contract.MetricUnsealed); got != 6 {
		t.Errorf("Unsealed = %v, want 6", got)
	}
	if got := h.metric(t, contract.DimReason, string(contract.ReasonUnattributable), contract.MetricDropped); got != 2 {
		t.Errorf("Dropped{Reason=unattributable_sender} = %v, want 2", got)
	}
}

// TestASealThatCannotBeCheckedIsRetried: when the seal key's public key cannot be read, a message the redrive role sent
// back is retried, neither delivered nor refused: nothing is proven of it.
func TestASealThatCannotBeCheckedIsRetried(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	a := spotIn(memberA, instance(2))
	attrs := h.seals.sentBack(a, contract.ReasonUnknownAccount, idAFwd+":s", born.Add(time.Hour))
	h.seals.err = errors.New("kms:GetPublicKey: ThrottlingException")
	resp, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{record(a, idRedrive+":op", h.r.now(), attrs)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.BatchItemFailures) != 1 || len(q.kept) != 0 {
		t.Errorf("retried %v, kept %d; want it retried, not kept", failedIDs(resp), len(q.kept))
	}
}

// TestNoSealKeyBelievesNoSeal: a router without a seal key keeps whatever the redrive role sends back as unsealed.
func TestNoSealKeyBelievesNoSeal(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	a := spotIn(memberA, instance(2))
	attrs := h.seals.sentBack(a, contract.ReasonUnknownAccount, idAFwd+":s", born.Add(time.Hour))
	h.r.seals = nil
	if _, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{record(a, idRedrive+":op", h.r.now(), attrs)}}); err != nil {
		t.Fatal(err)
	}
	if len(q.kept) != 1 || q.kept[0].Reason != contract.ReasonUnsealed || !strings.Contains(q.kept[0].Err.Error(), "no seal key") {
		t.Errorf("kept %+v, want it unsealed for want of a key", q.kept)
	}
}

// TestTheDLQsSenderStaysMarked: a message whose first sender the dead-letter queue held, refused again, is kept with
// kib-origin, so that it is never proven forged by that sender on its next return either.
func TestTheDLQsSenderStaysMarked(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	b := spotIn(memberB, instance(3))
	attrs := h.seals.sentBack(b, contract.ReasonDeadLettered, "AROAOTHERROLE0000001:s", born.Add(time.Hour), contract.AttrOrigin, contract.OriginDLQ)
	in := events.SQSEvent{Records: []events.SQSMessage{record(b, idRedrive+":op", h.r.now(), attrs)}}
	if _, err := h.r.Handle(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if len(q.kept) != 1 || q.kept[0].Reason != contract.ReasonUnattributable || !q.kept[0].FromDLQ {
		t.Errorf("kept %+v, want it unattributable, marked as the DLQ's sender", q.kept)
	}
}

// TestNoSenderIsNoServiceSender: a record without SenderId is unattributable (kept), and not counted or logged as a
// sender that is no role: it names no sender at all.
func TestNoSenderIsNoServiceSender(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	rec := record(spotIn(memberA, instance(2)), "", h.r.now(), nil)
	delete(rec.Attributes, sender.Attribute)
	if _, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}}); err != nil {
		t.Fatal(err)
	}
	if len(q.kept) != 1 || q.kept[0].Reason != contract.ReasonUnattributable {
		t.Errorf("kept %+v, want it unattributable", q.kept)
	}
	if got := h.metric(t, "", "", contract.MetricServiceSender); got != 0 {
		t.Errorf("ServiceSender = %v for a record with no sender, want 0", got)
	}
	if got := h.logsOf(t, contract.LogServiceSender, contract.LogSender, "account"); len(got) != 0 {
		t.Errorf("logged as a sender that is no role: %v", got)
	}
}

// TestAFirstSenderWithoutItsTimeIsKeptWithout: a message sent back whose seal says its first sender but not when,
// refused again, is kept with no send time, not with the clock's first second.
func TestAFirstSenderWithoutItsTimeIsKeptWithout(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	b := spotIn(memberB, instance(3))
	attrs := h.seals.sentBack(b, contract.ReasonUnattributable, "AROAOLDFORWARDER0001:s", time.Time{})
	in := events.SQSEvent{Records: []events.SQSMessage{record(b, idRedrive+":op", h.r.now(), attrs)}}
	if _, err := h.r.Handle(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if len(q.kept) != 1 || q.kept[0].Reason != contract.ReasonUnattributable || q.kept[0].Sent != "" || q.kept[0].Sender != "AROAOLDFORWARDER0001:s" {
		t.Errorf("kept %+v, want unattributable, its first sender, no send time", q.kept)
	}
}
