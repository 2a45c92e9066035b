package route

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
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
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/intake"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
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

// seals seals with a P-256 key of the test's own, as the router's KMS key does (sealing.Sealer's signatures), and
// verifies with sealing.Verify; err, when set, is what Verify answers instead (the public key could not be read).
type seals struct {
	key *ecdsa.PrivateKey
	err error
}

func newSeals(t *testing.T) *seals {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &seals{key: k}
}

func (s *seals) Verify(_ context.Context, rec sealing.Record, seal string) error {
	if s.err != nil {
		return s.err
	}
	return sealing.Verify(&s.key.PublicKey, rec, seal)
}

func (s *seals) seal(rec sealing.Record) string {
	sig, err := ecdsa.SignASN1(rand.Reader, s.key, rec.Digest())
	if err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

// sentBack are the attributes make requeue sends body back with: kept for reason, first sent by first at firstSent,
// first refused as message orig, sealed with s; more are attributes to add or change after sealing (an edit the
// seal does not cover), "" values removing them.
func (s *seals) sentBack(body string, reason contract.Reason, first string, firstSent time.Time, more ...string) map[string]string {
	var ev struct{ Account string }
	_ = json.Unmarshal([]byte(body), &ev)
	attrs := map[string]string{
		contract.AttrRequeuedFrom: contract.RequeuedFromQuarantine, contract.AttrFirstSender: first, contract.AttrReason: string(reason),
		contract.AttrMessageID: "orig-" + first,
	}
	if !firstSent.IsZero() {
		attrs[contract.AttrFirstSent] = strconv.FormatInt(firstSent.UnixMilli(), 10)
	}
	sealedMore := map[string]string{}
	for i := 0; i+1 < len(more); i += 2 {
		if more[i] == contract.AttrOrigin {
			attrs[more[i]] = more[i+1] // sealed with the rest
			continue
		}
		sealedMore[more[i]] = more[i+1]
	}
	attrs[contract.AttrSeal] = s.seal(sealing.Record{
		BodySHA256: sealing.BodyDigest(body), Account: ev.Account, Reason: string(reason), FirstSender: first,
		FirstSent: attrs[contract.AttrFirstSent], Origin: attrs[contract.AttrOrigin], MessageID: attrs[contract.AttrMessageID],
	})
	for k, v := range sealedMore {
		if v == "" {
			delete(attrs, k)
		} else {
			attrs[k] = v
		}
	}
	return attrs
}

// judgedHarness is accountsHarness with the real sender check: each account's forwarder and the hub's redrive role
// created at born, member B's forwarder created at bBorn; sent-back messages are sealed with its seals.
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
	h.seals = newSeals(t)
	h.r.seals = h.seals
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

// fakeIntake counts its takes and answers res, or err.
type fakeIntake struct {
	takes int
	res   intake.Result
	err   error
}

func (f *fakeIntake) Take(context.Context) (intake.Result, error) {
	f.takes++
	return f.res, f.err
}

// intakeRequest is what make requeue FROM=dlq SEND=1 sends, as from.
func intakeRequest(from string, sent time.Time) events.SQSMessage {
	return record(`{"intake":"dlq"}`, from, sent, map[string]string{contract.AttrIntake: contract.IntakeDLQ})
}

// TestTheDeadLetterQueueIsTakenInWhenTheRedriveRoleAsks: the redrive role's requests take the dead-letter queue in
// once a batch, each acknowledged, counted in DeadLettered and logged; another sender's is refused (not
// interruption), and the batch's events are routed as ever; a request whose sender IAM cannot tell, or whose intake
// failed, is retried; a router with no intake refuses the request.
func TestTheDeadLetterQueueIsTakenInWhenTheRedriveRoleAsks(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	in := &fakeIntake{res: intake.Result{Kept: 7, More: true}}
	h.r.intake = in
	now := h.r.now()
	batch := events.SQSEvent{Records: []events.SQSMessage{
		intakeRequest(idRedrive+":op", now), intakeRequest(idRedrive+":op", now), intakeRequest(idAFwd+":s", now),
		record(spotIn(memberA, instance(2)), idAFwd+":s", now, nil),
	}}
	for i := range batch.Records {
		batch.Records[i].MessageId = fmt.Sprintf("m%d", i)
	}
	resp, err := h.r.Handle(context.Background(), batch)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%v, %v", failedIDs(resp), err)
	}
	if in.takes != 1 {
		t.Errorf("%d takes, want 1 for the batch", in.takes)
	}
	if got := h.metric(t, "", "", contract.MetricDeadLettered); got != 7 {
		t.Errorf("DeadLettered = %v, want 7", got)
	}
	drops := h.logsOf(t, contract.LogMessageDropped, "messageId", contract.LogReason)
	if len(drops) != 1 || fmt.Sprint(drops["m2"]) != "["+string(contract.ReasonNotInterruption)+"]" {
		t.Errorf("drops %v, want only the forwarder's request, as not an interruption", drops)
	}
	if got := h.logsOf(t, contract.LogDeadLettersTaken, contract.LogSender, "kept"); fmt.Sprint(got) != "map[AROAREDRIVEROLE00001:op:[7]]" {
		t.Errorf("intake lines %v, want one saying 7 kept, more left", got)
	}
	if got := h.sqs.byURL["https://sqs/"+memberA+"/"+queuename.For(qprefix, "beta")]; len(got) != 1 {
		t.Errorf("beta received %d, want A's event", len(got))
	}

	in.err = errors.New("the quarantine refused them")
	resp, _ = h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{intakeRequest(idRedrive+":op", now)}})
	if len(resp.BatchItemFailures) != 1 {
		t.Errorf("a failed intake: retried %v, want the request", failedIDs(resp))
	}
	h.r.intake = nil
	resp, _ = h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{intakeRequest(idRedrive+":op", now)}})
	if len(resp.BatchItemFailures) != 0 || !strings.Contains(h.logs.String(), "DEAD_LETTER_QUEUE_URL") {
		t.Errorf("no intake: retried %v, want the request refused, naming DEAD_LETTER_QUEUE_URL", failedIDs(resp))
	}
}

// TestAnIntakeWhoseSenderIAMCannotTellIsRetried: IAM failing on the redrive role leaves the request for later.
func TestAnIntakeWhoseSenderIAMCannotTellIsRetried(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	in := &fakeIntake{}
	h.r.intake = in
	h.r.senders = sender.New(sender.Options{Hub: account, RedriveRole: redriveName,
		IAM: func(string) (sender.RoleGetter, error) { return nil, errors.New("sts down") }, CacheSize: 10, Now: h.r.now})
	resp, _ := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{intakeRequest(idRedrive+":op", h.r.now())}})
	if len(resp.BatchItemFailures) != 1 || in.takes != 0 {
		t.Errorf("retried %v, %d takes; want the request retried, nothing taken", failedIDs(resp), in.takes)
	}
}
