package route

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// roles answers GetRole for one account from a table of role name -> ID, every role created at born.
type roles struct {
	ids  map[string]string
	born time.Time
}

func (r roles) GetRole(_ context.Context, in *iam.GetRoleInput, _ ...func(*iam.Options)) (*iam.GetRoleOutput, error) {
	id, ok := r.ids[aws.ToString(in.RoleName)]
	if !ok {
		return nil, &iamtypes.NoSuchEntityException{Message: aws.String("no such role")}
	}
	return &iam.GetRoleOutput{Role: &iamtypes.Role{RoleId: aws.String(id), RoleName: in.RoleName, CreateDate: aws.Time(r.born)}}, nil
}

const (
	fwdName, redriveName = "kib-forward", "kib-redrive"
	idHubFwd, idAFwd     = "AROAHUBFORWARDER0001", "AROAMEMBERAFORWARDER"
	idBFwd, idRedrive    = "AROAMEMBERBFORWARDER", "AROAREDRIVEROLE00001"
)

// judgedHarness is accountsHarness with the real sender check: each account's forwarder and the hub's redrive role
// created at born, member B's forwarder created at bBorn.
func judgedHarness(t *testing.T, born, bBorn time.Time) (*harness, *fakeQuarantine) {
	t.Helper()
	hub := &fakeEC2{owners: map[string]string{instance(1): "alpha"}}
	a := &fakeEC2{owners: map[string]string{instance(2): "beta"}}
	b := &fakeEC2{owners: map[string]string{instance(3): "gamma"}}
	h := accountsHarness(t, hub, a, b, "alpha", "beta", "gamma")
	iamOf := map[string]sender.RoleGetter{
		account: roles{map[string]string{fwdName: idHubFwd, redriveName: idRedrive}, born},
		memberA: roles{map[string]string{fwdName: idAFwd}, born},
		memberB: roles{map[string]string{fwdName: idBFwd}, bBorn},
	}
	h.r.senders = sender.New(sender.Options{
		Hub: account, RedriveRole: redriveName,
		ForwarderRole: func(a string) string {
			if a == account || a == memberA || a == memberB {
				return "arn:aws:iam::" + a + ":role/" + fwdName
			}
			return ""
		},
		IAM:       func(a string) (sender.RoleGetter, error) { return iamOf[a], nil },
		CacheSize: 100, TTL: time.Hour, NegativeTTL: time.Minute, Now: h.r.now,
	})
	q := &fakeQuarantine{}
	h.r.quarantine = q
	return h, q
}

// record is a message of body sent by sender at sent, with message attributes attrs.
func record(body, from string, sent time.Time, attrs map[string]string) events.SQSMessage {
	rec := batch(body).Records[0]
	rec.Attributes[sender.Attribute] = from
	rec.Attributes[sender.SentAttribute] = strconv.FormatInt(sent.UnixMilli(), 10)
	rec.MessageAttributes = map[string]events.SQSMessageAttribute{}
	for k, v := range attrs {
		rec.MessageAttributes[k] = events.SQSMessageAttribute{DataType: "String", StringValue: aws.String(v)}
	}
	return rec
}

// sentBack are the attributes make requeue sends a message back with.
func sentBack(first string, firstSent time.Time, more ...string) map[string]string {
	attrs := map[string]string{
		contract.AttrRequeuedFrom: contract.RequeuedFromQuarantine, contract.AttrFirstSender: first,
		contract.AttrFirstSent: strconv.FormatInt(firstSent.UnixMilli(), 10),
	}
	for i := 0; i+1 < len(more); i += 2 {
		attrs[more[i]] = more[i+1]
	}
	return attrs
}

// TestSentBackIsJudgedByItsFirstSender: through the router with the real sender check, a message the redrive role
// sent back is judged by the first sender it carries: a genuine one is delivered; a proven forgery is refused again
// and kept, its first sender and time kept with it, even vouched for; an unattributable one is kept, or delivered
// when vouched for, which its log line says with who vouched; an event naming an account not on the bus is judged
// by its sender first: tied to another account, a forgery; tied to none, kept as unknown_account with that sender.
func TestSentBackIsJudgedByItsFirstSender(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	bBorn := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) // B's forwarder, created anew
	h, q := judgedHarness(t, born, bBorn)
	now := h.r.now()
	redrive := idRedrive + ":operator"
	beforeB, afterB := bBorn.Add(-time.Hour), bBorn.Add(time.Hour)
	in := events.SQSEvent{Records: []events.SQSMessage{
		record(spotIn(memberA, instance(2)), idAFwd+":s", now, nil),                                                      // m0 genuine: A's own
		record(spotIn(memberA, instance(2)), redrive, now, sentBack(idAFwd+":s", afterB)),                                // m1 sent back, genuine
		record(spotIn(memberB, instance(3)), redrive, now, sentBack(idAFwd+":s", afterB)),                                // m2 sent back, proven forged
		record(spotIn(memberB, instance(3)), redrive, now, sentBack(idAFwd+":s", afterB, contract.AttrVouched, "event")), // m3 the same, vouched
		record(spotIn(memberB, instance(3)), redrive, now, sentBack("AROAOLDBFORWARDER001:s", beforeB)),                  // m4 unattributable
		record(spotIn(memberB, instance(3)), redrive, now, sentBack("AROAOLDBFORWARDER001:s", beforeB, contract.AttrVouched, // m5 vouched
			"sender", contract.AttrVouchedBy, "arn:aws:sts::123456789012:assumed-role/kib-redrive/alice")),
		record(spotIn(unknown, instance(9)), idAFwd+":s", now, nil),                                                          // m6 A's forwarder naming an account not on the bus
		record(spotIn(unknown, instance(9)), "AROASTRANGER00000001:s", beforeB, nil),                                         // m7 a sender tied to no account
		record(spotIn(memberB, instance(3)), redrive, now, nil),                                                              // m8 the redrive role, saying nothing
		record(spotIn(memberB, instance(3)), idAFwd+":s", now, sentBack(idBFwd+":s", afterB, contract.AttrVouched, "event")), // m9 A claiming B's
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
		kept[m.MessageID] = m
	}
	want := map[string]struct {
		reason contract.Reason
		sender string
		sent   time.Time
	}{
		"m2": {contract.ReasonForgedSender, idAFwd + ":s", afterB},
		"m3": {contract.ReasonForgedSender, idAFwd + ":s", afterB},
		"m4": {contract.ReasonUnattributable, "AROAOLDBFORWARDER001:s", beforeB},
		"m6": {contract.ReasonForgedSender, idAFwd + ":s", now},
		"m7": {contract.ReasonUnknownAccount, "AROASTRANGER00000001:s", beforeB},
		"m8": {contract.ReasonUnattributable, redrive, now},
		"m9": {contract.ReasonForgedSender, idAFwd + ":s", now},
	}
	if len(kept) != len(want) {
		t.Errorf("kept %d messages, want %d", len(kept), len(want))
	}
	for id, w := range want {
		k := kept[id]
		if k.Reason != w.reason || k.Sender != w.sender || k.Sent != strconv.FormatInt(w.sent.UnixMilli(), 10) {
			t.Errorf("%s kept as %s by %s sent %s; want %s by %s sent %d", id, k.Reason, k.Sender, k.Sent, w.reason, w.sender, w.sent.UnixMilli())
		}
	}
	vouched := h.logsOf(t, contract.LogVouched, contract.LogVouchedBy, contract.LogSender)
	if fmt.Sprint(vouched) != "map[arn:aws:sts::123456789012:assumed-role/kib-redrive/alice:[AROAOLDBFORWARDER001:s]]" {
		t.Errorf("vouch lines (by -> first sender) %v, want the one vouched delivery, naming who and its first sender", vouched)
	}
	if got := h.logsOf(t, contract.LogMessageDropped, "messageId", contract.LogRequeued); fmt.Sprint(got["m2"]) != "[true]" || got["m6"][0] != "" {
		t.Errorf("drop lines marked requeued: %v; want m2's, not m6's", got)
	}
	if got := h.metric(t, "", "", contract.MetricForgedSender); got != 4 {
		t.Errorf("ForgedSender = %v, want 4", got)
	}
	if got := h.metric(t, contract.DimReason, string(contract.ReasonUnattributable), contract.MetricDropped); got != 2 {
		t.Errorf("Dropped{Reason=unattributable_sender} = %v, want 2", got)
	}
}

// TestTheDLQsSenderStaysMarked: a message whose first sender the dead-letter queue held, refused again, is kept with
// kib-origin, so that it is never proven forged by that sender on its next return either.
func TestTheDLQsSenderStaysMarked(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	attrs := sentBack("AROAOTHERROLE0000001:s", born.Add(time.Hour), contract.AttrOrigin, contract.OriginDLQ)
	attrs[contract.AttrRequeuedFrom] = contract.RequeuedFromDLQ
	in := events.SQSEvent{Records: []events.SQSMessage{record(spotIn(memberB, instance(3)), idRedrive+":op", h.r.now(), attrs)}}
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

// TestAFirstSenderWithoutItsTimeIsKeptWithout: a message sent back saying its first sender but not when, refused
// again, is kept with no send time, not with the clock's first second.
func TestAFirstSenderWithoutItsTimeIsKeptWithout(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, q := judgedHarness(t, born, born)
	attrs := sentBack("AROAOLDFORWARDER0001:s", born)
	delete(attrs, contract.AttrFirstSent)
	in := events.SQSEvent{Records: []events.SQSMessage{record(spotIn(memberB, instance(3)), idRedrive+":op", h.r.now(), attrs)}}
	if _, err := h.r.Handle(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if len(q.kept) != 1 || q.kept[0].Reason != contract.ReasonUnattributable || q.kept[0].Sent != "" || q.kept[0].Sender != "AROAOLDFORWARDER0001:s" {
		t.Errorf("kept %+v, want unattributable, its first sender, no send time", q.kept)
	}
}

// TestTheBatchLineCounts: the "batch routed" line counts what was forwarded, dropped and retried.
func TestTheBatchLineCounts(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	now := h.r.now()
	in := events.SQSEvent{Records: []events.SQSMessage{
		record(spotIn(memberA, instance(2)), idAFwd+":s", now, nil),
		record(spotIn(memberA, instance(2)), idAFwd+":s", now, nil),
		record(spotIn(memberB, instance(3)), idAFwd+":s", now, nil),
		record("not json", idAFwd+":s", now, nil),
	}}
	for i := range in.Records {
		in.Records[i].MessageId = fmt.Sprintf("m%d", i)
	}
	if _, err := h.r.Handle(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		if strings.Contains(l, `"msg":"batch routed"`) {
			_ = json.Unmarshal([]byte(l), &line)
		}
	}
	if line["received"] != 4.0 || line["forwarded"] != 2.0 || line["dropped"] != 2.0 || line["retried"] != 0.0 {
		t.Errorf("batch routed %v, want 4 received, 2 forwarded, 2 dropped, 0 retried", line)
	}
}

// failingWriter refuses every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestAMetricsFailureIsLogged: metrics that cannot be written are logged, and the batch is routed all the same.
func TestAMetricsFailureIsLogged(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	h.r.metrics = metrics.NewWriter(failingWriter{}, "NS", "test")
	resp, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{record(spotIn(memberA, instance(2)), idAFwd+":s", h.r.now(), nil)}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%v, %v", resp, err)
	}
	if !strings.Contains(h.logs.String(), `"msg":"writing metrics"`) || !strings.Contains(h.logs.String(), "disk full") {
		t.Errorf("no log line of the metrics' failure:\n%s", h.logs.String())
	}
	if strings.Count(h.logs.String(), `"msg":"writing metrics"`) != 1 {
		t.Error("the failure is logged more than once")
	}
}
