package quarantine

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// fakeSQS records each SendMessageBatch, failing the entries whose body is "fail", answering nothing for those whose
// body is "unanswered", or failing the whole call with err.
type fakeSQS struct {
	calls [][]types.SendMessageBatchRequestEntry
	err   error
}

func (f *fakeSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.calls = append(f.calls, in.Entries)
	if f.err != nil {
		return nil, f.err
	}
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		switch aws.ToString(e.MessageBody) {
		case "fail":
			out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError"), Message: aws.String("stub")})
			continue
		case "unanswered": // in neither list: SQS breaking its batch contract
			continue
		}
		out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id})
	}
	return out, nil
}

func msg(body string) Message {
	return Message{Body: aws.String(body), Reason: contract.ReasonForgedSender, Err: errors.New("why"), Account: "222222222222",
		Sender: "AROAX:s", Sent: "1763726400000", MessageID: "m", EventID: "ev"}
}

// TestKeep: batches of at most 10 entries and 1 MiB, why in the attributes (empty ones left out, the error bounded),
// an entry SQS failed or a failed call reported for its messages only.
func TestKeep(t *testing.T) {
	f := &fakeSQS{}
	q := New(f, "https://sqs/q", Options{})
	msgs := make([]Message, 23)
	for i := range msgs {
		msgs[i] = msg("body")
	}
	msgs[12] = msg("fail")
	msgs[20].Account, msgs[20].Err = "", errors.New(strings.Repeat("x", 5000))
	errs := q.Keep(context.Background(), msgs)
	if len(f.calls) != 3 || len(f.calls[0]) != 10 || len(f.calls[2]) != 3 {
		t.Fatalf("%d calls, want 3 of 10, 10 and 3", len(f.calls))
	}
	for i, err := range errs {
		if (err != nil) != (i == 12) {
			t.Errorf("message %d: %v", i, err)
		}
	}
	a := f.calls[0][0].MessageAttributes
	for k, want := range map[string]string{contract.AttrReason: "forged_sender", contract.AttrAccount: "222222222222", contract.AttrSender: "AROAX:s",
		contract.AttrSent: "1763726400000", contract.AttrMessageID: "m", contract.AttrEventID: "ev", contract.AttrError: "why"} {
		if got := aws.ToString(a[k].StringValue); got != want {
			t.Errorf("attribute %s = %q, want %q", k, got, want)
		}
	}
	if aws.ToString(a[contract.AttrSent].DataType) != "Number" {
		t.Errorf("%s is %s, want Number", contract.AttrSent, aws.ToString(a[contract.AttrSent].DataType))
	}
	last := f.calls[2][0].MessageAttributes
	if _, ok := last[contract.AttrAccount]; ok {
		t.Error("an empty account is sent as an attribute, which SQS refuses")
	}
	if n := len(aws.ToString(last[contract.AttrError].StringValue)); n != contract.MaxAttrError {
		t.Errorf("the error attribute is %d bytes, want %d", n, contract.MaxAttrError)
	}

	// Bodies of 250 KiB (each within a queue's 256 KiB): four to a call, within SendMessageBatch's 1 MiB.
	f.calls = nil
	big := strings.Repeat("b", 250<<10)
	bigs := []Message{msg(big), msg(big), msg(big), msg(big), msg(big)}
	if errs := q.Keep(context.Background(), bigs); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		t.Fatalf("big bodies: %v", errs)
	}
	if len(f.calls) != 2 || len(f.calls[0]) != 4 {
		t.Errorf("%d calls for five bodies of 250 KiB, want 2 (four, then one)", len(f.calls))
	}

	f.err = errors.New("ServiceUnavailable")
	for i, err := range q.Keep(context.Background(), []Message{msg("a"), msg("b")}) {
		if err == nil || !strings.Contains(err.Error(), "ServiceUnavailable") {
			t.Errorf("message %d with the call failing: %v", i, err)
		}
	}
}

// TestAnEntryUnansweredIsNotKept: an entry SQS lists neither as successful nor as failed is not kept: the router
// retries its message rather than delete it.
func TestAnEntryUnansweredIsNotKept(t *testing.T) {
	errs := New(&fakeSQS{}, "https://sqs/q", Options{}).Keep(context.Background(), []Message{msg("a"), msg("unanswered"), msg("b")})
	if errs[0] != nil || errs[2] != nil {
		t.Fatalf("the answered entries: %v", errs)
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "answered nothing") {
		t.Errorf("the unanswered entry: %v, want it not kept", errs[1])
	}
}

// TestTheErrorIsCutOnACharacterAtItsLimit: kib-error keeps MaxAttrError bytes at most, the last character whole
// (SQS refuses an attribute that is not UTF-8), and an error within the limit whole.
func TestTheErrorIsCutOnACharacterAtItsLimit(t *testing.T) {
	for _, tt := range []struct {
		name, err string
		want      int
	}{
		{"one byte over", strings.Repeat("x", contract.MaxAttrError+1), contract.MaxAttrError},
		{"at the limit", strings.Repeat("x", contract.MaxAttrError), contract.MaxAttrError},
		{"a character across the limit", strings.Repeat("x", contract.MaxAttrError-1) + "é" + "tail", contract.MaxAttrError - 1},
		{"a four-byte character across the limit", strings.Repeat("x", contract.MaxAttrError-2) + "𝄞", contract.MaxAttrError - 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSQS{}
			m := msg("body")
			m.Err = errors.New(tt.err)
			New(f, "https://sqs/q", Options{}).Keep(context.Background(), []Message{m})
			got := aws.ToString(f.calls[0][0].MessageAttributes[contract.AttrError].StringValue)
			if len(got) != tt.want || !utf8.ValidString(got) {
				t.Errorf("kib-error is %d bytes (valid UTF-8 %t), want %d", len(got), utf8.ValidString(got), tt.want)
			}
		})
	}
}

// entrySize is what SQS counts of m kept with seal.
func entrySize(m Message, seal string) int { return size(aws.ToString(m.Body), attributes(m, seal)) }

// TestTheBatchCountsAttributes: SendMessageBatch's 1 MiB counts attributes as well as bodies, every byte of them:
// entries (each within a queue's MaxMessageBytes) that make exactly 1 MiB together go in one call; one byte more, in
// two.
func TestTheBatchCountsAttributes(t *testing.T) {
	attrs := entrySize(msg(""), "")
	for _, tt := range []struct {
		over  int
		calls int
	}{{0, 1}, {1, 2}} {
		// Five entries: a small one, and four sharing the rest of the batch's bytes.
		small := msg("s")
		rest := maxBytes + tt.over - entrySize(small, "")
		msgs := []Message{small}
		for i := range 4 {
			n := rest / 4
			if i == 3 {
				n = rest - 3*(rest/4)
			}
			msgs = append(msgs, msg(strings.Repeat("a", n-attrs)))
		}
		total := 0
		for _, m := range msgs {
			if n := entrySize(m, ""); n > contract.MaxMessageBytes {
				t.Fatalf("an entry of %d bytes, over a queue's %d", n, contract.MaxMessageBytes)
			}
			total += entrySize(m, "")
		}
		if total != maxBytes+tt.over {
			t.Fatalf("the entries make %d bytes, want %d", total, maxBytes+tt.over)
		}
		f := &fakeSQS{}
		if errs := New(f, "https://sqs/q", Options{}).Keep(context.Background(), msgs); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Fatal(errs)
		}
		if len(f.calls) != tt.calls {
			t.Errorf("entries of %d bytes in all: %d calls, want %d", maxBytes+tt.over, len(f.calls), tt.calls)
		}
	}
	// Every attribute counts: its name, its type and its value.
	m := msg("x")
	want := 1
	for k, v := range attributes(m, "") {
		want += len(k) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue))
	}
	if got := entrySize(m, ""); got != want || got < 1+len(contract.AttrReason)+len("String")+len(string(contract.ReasonForgedSender)) {
		t.Errorf("entrySize = %d, want %d", got, want)
	}
}

// TestWhatSQSCannotHold: a message is kept within SQS's message size, its body and attributes counted together: one
// that fits only without its error is kept without it (the archive keeps it whole); one that fits not even then is
// kept in the archive only (ErrArchivedOnly), or, with no archive, not kept; the others go on, batched as ever.
func TestWhatSQSCannotHold(t *testing.T) {
	withErr := entrySize(msg(""), "")
	noErr := msg("")
	noErr.Err = nil
	without := entrySize(noErr, "")
	fitsWithout := msg(strings.Repeat("f", contract.MaxMessageBytes-without))
	fitsWith := msg(strings.Repeat("w", contract.MaxMessageBytes-withErr))
	tooLarge := msg(strings.Repeat("t", contract.MaxMessageBytes-without+1))
	after := msg("after")
	fitsWith.MessageID, fitsWithout.MessageID, tooLarge.MessageID, after.MessageID = "a", "b", "c", "d" // as long as msg's
	f, a := &fakeSQS{}, &fakeArchive{}
	errs := New(f, "https://sqs/q", Options{Archive: a}).Keep(context.Background(), []Message{fitsWith, fitsWithout, tooLarge, after})
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], ErrArchivedOnly) || errs[3] != nil {
		t.Fatalf("errors %v; want all kept, the largest in the archive only", errs)
	}
	var sent []types.SendMessageBatchRequestEntry
	for _, c := range f.calls {
		sent = append(sent, c...)
	}
	if len(sent) != 3 || len(a.entries) != 4 {
		t.Fatalf("sent %d, archived %d; want 3 sent, 4 archived", len(sent), len(a.entries))
	}
	for _, e := range sent {
		body := aws.ToString(e.MessageBody)
		_, hasErr := e.MessageAttributes[contract.AttrError]
		if n := size(body, e.MessageAttributes); n > contract.MaxMessageBytes || hasErr != (body[0] != 'f') {
			t.Errorf("an entry of %d bytes (a %q body) sent with its error %t", n, body[:1], hasErr)
		}
	}
	f = &fakeSQS{}
	errs = New(f, "https://sqs/q", Options{}).Keep(context.Background(), []Message{tooLarge, msg("after")})
	if errs[0] == nil || errors.Is(errs[0], ErrArchivedOnly) || !strings.Contains(errs[0].Error(), "no archive") || errs[1] != nil || len(f.calls) != 1 {
		t.Errorf("with no archive: %v after %d calls; want the largest not kept, the next kept", errs, len(f.calls))
	}
}

// badIDs answers SendMessageBatch with entries naming no entry it was sent: an ID past the batch, one that is no
// number; the entry it was sent it answers as successful.
type badIDs struct{}

func (badIDs) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id})
	}
	n := aws.String(strconv.Itoa(len(in.Entries)))
	out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: n})
	out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: n, Code: aws.String("X")}, types.BatchResultErrorEntry{Id: aws.String("x"), Code: aws.String("X")})
	return out, nil
}

// TestAnswersNamingNoEntryAreIgnored: an answer whose Id names no entry of the batch (past it, or no number) changes
// no message's fate.
func TestAnswersNamingNoEntryAreIgnored(t *testing.T) {
	errs := New(badIDs{}, "https://sqs/q", Options{}).Keep(context.Background(), []Message{msg("a")})
	if len(errs) != 1 || errs[0] != nil {
		t.Errorf("errors %v, want the one entry kept", errs)
	}
}

// TestTheDLQsSenderIsMarked: a message whose sender is the one the dead-letter queue held says so (kib-origin), so
// that sent back again it is still never proven forged by it.
func TestTheDLQsSenderIsMarked(t *testing.T) {
	f := &fakeSQS{}
	m := msg("body")
	m.FromDLQ = true
	New(f, "https://sqs/q", Options{}).Keep(context.Background(), []Message{m, msg("other")})
	if got := aws.ToString(f.calls[0][0].MessageAttributes[contract.AttrOrigin].StringValue); got != contract.OriginDLQ {
		t.Errorf("kib-origin = %q, want %q", got, contract.OriginDLQ)
	}
	if _, ok := f.calls[0][1].MessageAttributes[contract.AttrOrigin]; ok {
		t.Error("a message judged in the central queue carries kib-origin")
	}
}

// fakeSealer seals each record as "seal:<its reason>:<its message ID>", failing those whose message ID is in fail; its
// public key is key, or keyErr.
type fakeSealer struct {
	mu     sync.Mutex
	sealed []sealing.Record
	fail   map[string]bool
	key    *ecdsa.PublicKey
	keyErr error
}

func (f *fakeSealer) Seal(_ context.Context, r sealing.Record) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sealed = append(f.sealed, r)
	if f.fail[r.MessageID] {
		return "", errors.New("kms:Sign throttled")
	}
	return "seal:" + r.Reason + ":" + r.MessageID, nil
}

func (f *fakeSealer) PublicKey(context.Context) (*ecdsa.PublicKey, []byte, error) {
	return f.key, nil, f.keyErr
}
func (f *fakeSealer) Key() string { return "arn:aws:kms:us-east-1:123456789012:key/k-1" }

// fakeArchive keeps what it is given, failing the keys whose entry's refused message is in fail.
type fakeArchive struct {
	mu      sync.Mutex
	entries map[string]archive.Entry
	keys    int
	fail    map[string]bool
	keyErr  error
}

func (f *fakeArchive) Put(_ context.Context, key string, e archive.Entry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail[e.Refused] {
		return errors.New("s3 refused")
	}
	if f.entries == nil {
		f.entries = map[string]archive.Entry{}
	}
	f.entries[key] = e
	return nil
}

func (f *fakeArchive) PutPublicKey(context.Context, string, []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.keyErr != nil {
		return f.keyErr
	}
	f.keys++
	return nil
}

func ecKey(t *testing.T) *ecdsa.PublicKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &k.PublicKey
}

// TestKeptIsSealedAndArchived: each message is sealed over what the way back relies on (a record kept again, refused
// now under another ID than its first, with that ID: a new record), carries its seal, and is
// archived once under its refused message's ID and reason, with the seal, the key and the body; the seal key's public
// key is archived once per process. A message whose seal or archive write failed is not sent, and only it fails.
func TestKeptIsSealedAndArchived(t *testing.T) {
	f, s, a := &fakeSQS{}, &fakeSealer{key: ecKey(t), fail: map[string]bool{"m-seal": true}}, &fakeArchive{fail: map[string]bool{"r-arch": true}}
	q := New(f, "https://sqs/q", Options{Sealer: s, Archive: a, Bus: "kib-prod"})
	m := msg("body")
	m.MessageID, m.Refused, m.FromDLQ = "m-first", "r-now", true
	sealFails, archiveFails := msg("b2"), msg("b3")
	sealFails.MessageID, archiveFails.MessageID, archiveFails.Refused = "m-seal", "m-arch", "r-arch"
	errs := q.Keep(context.Background(), []Message{m, sealFails, archiveFails})
	if errs[0] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "kms:Sign") || errs[2] == nil || !strings.Contains(errs[2].Error(), "s3 refused") {
		t.Fatalf("errors %v; want only the first kept, the seal's and the archive's failures named", errs)
	}
	if len(f.calls) != 1 || len(f.calls[0]) != 1 {
		t.Fatalf("sent %v, want the one kept message only", f.calls)
	}
	if got := aws.ToString(f.calls[0][0].MessageAttributes[contract.AttrSeal].StringValue); got != "seal:forged_sender:m-first" {
		t.Errorf("kib-seal = %q", got)
	}
	want := sealing.Record{BodySHA256: sealing.BodyDigest("body"), Account: "222222222222", Reason: "forged_sender", FirstSender: "AROAX:s",
		FirstSent: "1763726400000", Origin: contract.OriginDLQ, MessageID: "m-first", Refused: "r-now"} // first refused as m-first: kept again
	if !slices.Contains(s.sealed, want) {
		t.Errorf("sealed %+v, want %+v among them", s.sealed, want)
	}
	sent := f.calls[0][0]
	if rec, seal := sealing.ReadKept(aws.ToString(sent.MessageBody), func(k string) string { return aws.ToString(sent.MessageAttributes[k].StringValue) }); rec != want || seal != "seal:forged_sender:m-first" {
		t.Errorf("what the quarantine sent reads as %+v (seal %q), want what it sealed, %+v", rec, seal, want)
	}
	e, ok := a.entries["refused/2025/11/21/r-now.forged_sender.json"]
	if !ok || len(a.entries) != 1 {
		t.Fatalf("archived %v, want the kept message under its send day, refused ID and reason", a.entries)
	}
	if e.Record != want || e.Seal != "seal:forged_sender:m-first" || e.SealKey != s.Key() || e.SealAlgorithm != string(sealing.Algorithm) ||
		e.Body != "body" || e.Error != "why" || e.Bus != "kib-prod" || e.Refused != "r-now" || e.EventID != "ev" {
		t.Errorf("archived %+v", e)
	}
	q.Keep(context.Background(), []Message{msg("again")})
	if a.keys != 1 {
		t.Errorf("the public key archived %d times, want once", a.keys)
	}
}

// TestNoKeyNoArchive: without a sealer nothing is sealed (no kib-seal) and the public key is not asked; without an
// archive nothing is archived; a public key that cannot be read or archived fails every message (none is archived
// without the key that verifies it).
func TestNoKeyNoArchive(t *testing.T) {
	f := &fakeSQS{}
	if errs := New(f, "https://sqs/q", Options{Archive: &fakeArchive{}}).Keep(context.Background(), []Message{msg("a")}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	if _, ok := f.calls[0][0].MessageAttributes[contract.AttrSeal]; ok {
		t.Error("a seal without a sealer")
	}
	for name, o := range map[string]Options{
		"no public key":          {Sealer: &fakeSealer{keyErr: errors.New("kms:GetPublicKey denied")}, Archive: &fakeArchive{}},
		"public key not written": {Sealer: &fakeSealer{key: ecKey(t)}, Archive: &fakeArchive{keyErr: errors.New("s3 denied")}},
	} {
		f := &fakeSQS{}
		errs := New(f, "https://sqs/q", o).Keep(context.Background(), []Message{msg("a"), msg("b")})
		if errs[0] == nil || errs[1] == nil || len(f.calls) != 0 {
			t.Errorf("%s: %v, %d sends; want both failed, none sent", name, errs, len(f.calls))
		}
	}
}
