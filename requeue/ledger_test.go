package requeue

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// sealedKept is a message of the quarantine as kept, sealed (the seal is not checked here: no verifier), of event;
// two of one event are two copies of one record.
func sealedKept(id, event string) types.Message {
	m := kept(id, contract.ReasonUnknownAccount, "AROAC:s", "1700000000000", event)
	str := func(v string) types.MessageAttributeValue {
		return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	m.MessageAttributes[contract.AttrSeal], m.MessageAttributes[contract.AttrMessageID] = str("c2VhbA=="), str("first-"+event)
	return m
}

// recordOf is the record m's seal covers, as the router reads it sent back.
func recordOf(m types.Message) sealing.Record {
	rec, _ := sealing.ReadKept(aws.ToString(m.Body), func(k string) string { return aws.ToString(m.MessageAttributes[k].StringValue) })
	return rec
}

// TestWhatWasDeliveredIsNotSentAgain: before a sealed record is sent back, the archive's ledger is read: one a cluster
// queue received before is not sent (the router would refuse it as replayed) and is deleted from the quarantine; one
// whose ledger entry a delete marker hides is not sent, and warned of; one whose entry cannot be read is left where it
// is, and the run ends in an error saying why; of two copies of one record, the first is sent, the other left. A
// message without a seal is no record of the ledger: left to the router, which refuses it.
func TestWhatWasDeliveredIsNotSentAgain(t *testing.T) {
	msgs := map[string]types.Message{
		"delivered": sealedKept("m-delivered", "delivered"), "first": sealedKept("m-first", "twice"), "copy": sealedKept("m-copy", "twice"),
		"hidden": sealedKept("m-hidden", "hidden"), "unread": sealedKept("m-unread", "unread"), "new": sealedKept("m-new", "new"),
		"legacy": kept("m-legacy", contract.ReasonUnknownAccount, "AROAC:s", "1700000000000", "legacy"),
	}
	before, _ := json.Marshal(archive.Delivery{Format: archive.DeliveryFormat, Record: recordOf(msgs["delivered"]), MessageID: "c-1",
		Sender: redriveID + ":alice", At: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)})
	f := &fakeArchive{
		objects: map[string][]byte{archive.DeliveredKey(recordOf(msgs["delivered"])): before, archive.DeliveredKey(recordOf(msgs["hidden"])): before},
		hidden:  map[string]bool{archive.DeliveredKey(recordOf(msgs["hidden"])): true},
		fail:    map[string]error{archive.DeliveredKey(recordOf(msgs["unread"])): statusError(http.StatusForbidden, "AccessDenied", false)},
	}
	q := newSQS(quarantine, msgs["delivered"], msgs["first"], msgs["copy"], msgs["hidden"], msgs["unread"], msgs["new"], msgs["legacy"])
	out := stackOuts
	out.ArchiveBucket = mainBucket
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: q, STS: operator, S3: f}, out, Options{From: Quarantine, Send: true}, &w)
	if err == nil || !strings.Contains(err.Error(), "1 sealed records left in the quarantine") || !strings.Contains(err.Error(), "AccessDenied") ||
		!strings.Contains(err.Error(), archive.DeliveredKey(recordOf(msgs["unread"]))) {
		t.Errorf("error %v, want the ledger that could not be read named, and why", err)
	}
	if got := sentEvents(q); fmt.Sprint(got) != "[AROAC:s/legacy AROAC:s/new AROAC:s/twice]" {
		t.Errorf("sent %v, want the new record, one copy of the twice-kept one, and the unsealed one (the router's to refuse)", got)
	}
	deleted, released := slices.Sorted(slices.Values(q.deleted)), slices.Sorted(slices.Values(q.released))
	if fmt.Sprint(deleted) != "[rh-m-delivered rh-m-first rh-m-legacy rh-m-new]" || fmt.Sprint(released) != "[rh-m-copy rh-m-hidden rh-m-unread]" {
		t.Errorf("deleted %v, released %v; want what was sent and what was delivered before deleted, the rest released", deleted, released)
	}
	statuses := map[string]string{}
	for _, m := range rep.Messages {
		statuses[m.ID] = m.Status
	}
	for id, want := range map[string]string{"m-delivered": StatusDelivered, "m-first": StatusSent, "m-copy": StatusDuplicate, "m-hidden": StatusLedgerHidden,
		"m-unread": StatusLedgerUnread, "m-new": StatusSent, "m-legacy": StatusSent} {
		if statuses[id] != want {
			t.Errorf("%s: %q, want %q", id, statuses[id], want)
		}
	}
	if rep.Sent != 3 || rep.Delivered != 1 || rep.Duplicates != 1 || rep.LedgerHidden != 1 || rep.LedgerUnread != 1 {
		t.Errorf("sent %d, delivered before %d, copies %d, hidden %d, unread %d; want 3, 1, 1, 1, 1", rep.Sent, rep.Delivered, rep.Duplicates, rep.LedgerHidden,
			rep.LedgerUnread)
	}
	for _, want := range []string{"1 delivered before, as the archive's ledger says", "1 the same sealed record as another message sent back in this run",
		"WARNING: 1 whose entry of the archive's ledger a delete marker hides", "refuse each as ledger_hidden", "1 not sent, left in the quarantine: the archive's ledger could not be read"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("the listing does not say %q:\n%s", want, w.String())
		}
	}
	for _, c := range f.calls {
		if strings.Contains(c, archive.DeliveredKey(recordOf(msgs["legacy"]))) {
			t.Errorf("the ledger was read for a message without a seal: %s", c)
		}
	}

	// Nothing the ledger holds back: no lines of it, no error.
	q, w = newSQS(quarantine, msgs["new"]), bytes.Buffer{}
	if rep, err = Run(context.Background(), Clients{SQS: q, STS: operator, S3: f}, out, Options{From: Quarantine, Send: true}, &w); err != nil || rep.Sent != 1 {
		t.Fatalf("sent %d, %v", rep.Sent, err)
	}
	for _, absent := range []string{"delivered before", "same sealed record", "delete marker", "ledger could not be read"} {
		if strings.Contains(w.String(), absent) {
			t.Errorf("the listing says %q with nothing of it:\n%s", absent, w.String())
		}
	}
}

// TestOneRecordIsSentOnceARun: two copies of one sealed record read in two receives of one run: the first is sent, the
// second left in the quarantine, whatever the ledger said of it before the first was sent.
func TestOneRecordIsSentOnceARun(t *testing.T) {
	q := &twoReceives{fakeSQS: newSQS(quarantine, sealedKept("m1", "ev"), sealedKept("m2", "ev"))}
	out := stackOuts
	out.ArchiveBucket = mainBucket
	rep, err := Run(context.Background(), Clients{SQS: q, STS: operator, S3: &fakeArchive{objects: map[string][]byte{}}}, out, Options{From: Quarantine, Send: true},
		&bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sent != 1 || rep.Duplicates != 1 || fmt.Sprint(q.deleted) != "[rh-m1]" || fmt.Sprint(q.released) != "[rh-m2]" {
		t.Errorf("sent %d, copies %d, deleted %v, released %v; want m1 sent, m2 left", rep.Sent, rep.Duplicates, q.deleted, q.released)
	}
}

// twoReceives hands out the queue's messages one a receive.
type twoReceives struct{ *fakeSQS }

func (f *twoReceives) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q := aws.ToString(in.QueueUrl)
	if len(f.queues[q]) == 0 {
		return &sqs.ReceiveMessageOutput{}, nil
	}
	m := f.queues[q][0]
	f.queues[q] = f.queues[q][1:]
	f.receives = append(f.receives, "one")
	return &sqs.ReceiveMessageOutput{Messages: []types.Message{m}}, nil
}

// TestWhatWasVouchedForIsCheckedToo: a sealed record vouched for is checked in the ledger as any sent back; evidence,
// never sent, is not looked up, and stays evidence whatever the ledger holds of it.
func TestWhatWasVouchedForIsCheckedToo(t *testing.T) {
	vouched, forged := sealedKept("m-vouched", "vouched"), sealedKept("m-forged", "forged")
	vouched.MessageAttributes[contract.AttrReason] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(string(contract.ReasonUnattributable))}
	forged.MessageAttributes[contract.AttrReason] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(string(contract.ReasonForgedSender))}
	before, _ := json.Marshal(archive.Delivery{Format: archive.DeliveryFormat, MessageID: "c-1"})
	f := &fakeArchive{objects: map[string][]byte{archive.DeliveredKey(recordOf(vouched)): before, archive.DeliveredKey(recordOf(forged)): before}}
	q := newSQS(quarantine, vouched, forged)
	out := stackOuts
	out.ArchiveBucket = mainBucket
	rep, err := Run(context.Background(), Clients{SQS: q, STS: operator, S3: f}, out, Options{From: Quarantine, Send: true, Vouch: true,
		EventIDs: []string{"vouched", "forged"}}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]string{}
	for _, m := range rep.Messages {
		statuses[m.ID] = m.Status
	}
	if statuses["m-vouched"] != StatusDelivered || statuses["m-forged"] != StatusEvidence || len(q.sent) != 0 || fmt.Sprint(q.deleted) != "[rh-m-vouched]" {
		t.Errorf("statuses %v, sent %d, deleted %v; want the vouched one found delivered and removed, the forgery kept as evidence", statuses, len(q.sent), q.deleted)
	}
	if len(f.calls) != 1 {
		t.Errorf("the ledger read %v, want the vouched record's entry alone", f.calls)
	}
}

// TestARecordARunCouldNotDeleteIsRemovedByTheNext: a run sends a sealed record back and cannot delete it from the
// quarantine; once the router delivered it (the ledger's entry), the next run removes it instead of sending it again,
// which the router would refuse as replayed. The ledger is read, never written.
func TestARecordARunCouldNotDeleteIsRemovedByTheNext(t *testing.T) {
	m := sealedKept("m1", "ev-1")
	f := &fakeArchive{objects: map[string][]byte{}}
	out := stackOuts
	out.ArchiveBucket = mainBucket
	q := newSQS(quarantine, m)
	q.undeletable = true
	if _, err := Run(context.Background(), Clients{SQS: q, STS: operator, S3: f}, out, Options{From: Quarantine, Send: true}, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "found delivered by the next run") || len(q.sent) != 1 {
		t.Fatalf("sent %d, %v; want it sent, and the failed delete said", len(q.sent), err)
	}
	delivered, _ := json.Marshal(archive.Delivery{Format: archive.DeliveryFormat, Record: recordOf(m), MessageID: aws.ToString(q.sent[0].Id)})
	f.objects[archive.DeliveredKey(recordOf(m))] = delivered // the router delivered it
	q = newSQS(quarantine, sealedKept("m1", "ev-1"))
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: q, STS: operator, S3: f}, out, Options{From: Quarantine, Send: true}, &w)
	if err != nil || len(q.sent) != 0 || fmt.Sprint(q.deleted) != "[rh-m1]" || rep.Delivered != 1 {
		t.Errorf("%v: sent %d, deleted %v, delivered before %d; want it removed, not sent:\n%s", err, len(q.sent), q.deleted, rep.Delivered, w.String())
	}
	if _, err := (readOnly{f}).PutObject(context.Background(), nil); err == nil {
		t.Error("the ledger's client writes")
	}
}
