package archive

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// fakeS3 is one bucket of owner: it answers each PutObject with the next of statuses (200 when none is left; 412 when
// the key holds an object and the write is conditional, as S3 answers it, if the statuses say nothing), GetObject and
// ListObjectVersions with what it holds (a delete marker as S3 shows one: a 404 with x-amz-delete-marker: true, a
// DeleteMarkers entry), and any call naming another owner (ExpectedBucketOwner) with 403. It records what it was sent.
type fakeS3 struct {
	statuses []int
	puts     []*s3.PutObjectInput
	bodies   []string
	objects  map[string]string
	markers  map[string]bool // keys whose current version is a delete marker
	getErr   error
	owner    string
	lists    int
}

func status(code int, header http.Header) error {
	return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code, Header: header}},
		Err: errors.New(http.StatusText(code))}
}

func (f *fakeS3) wrongOwner(expected *string) bool {
	return expected != nil && f.owner != "" && aws.ToString(expected) != f.owner
}

func (f *fakeS3) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	b, _ := io.ReadAll(in.Body)
	f.puts, f.bodies = append(f.puts, in), append(f.bodies, string(b))
	if f.wrongOwner(in.ExpectedBucketOwner) {
		return nil, status(http.StatusForbidden, nil)
	}
	code := http.StatusOK
	if _, held := f.objects[aws.ToString(in.Key)]; held && aws.ToString(in.IfNoneMatch) == "*" && !f.markers[aws.ToString(in.Key)] {
		code = http.StatusPreconditionFailed
	}
	if len(f.statuses) > 0 {
		code, f.statuses = f.statuses[0], f.statuses[1:]
	}
	if code != http.StatusOK {
		return nil, status(code, nil)
	}
	if f.objects == nil {
		f.objects = map[string]string{}
	}
	f.objects[aws.ToString(in.Key)] = string(b)
	delete(f.markers, aws.ToString(in.Key))
	return &s3.PutObjectOutput{}, nil
}

func (f *fakeS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if f.getErr != nil {
		return nil, f.getErr
	}
	if f.wrongOwner(in.ExpectedBucketOwner) {
		return nil, status(http.StatusForbidden, nil)
	}
	if f.markers[aws.ToString(in.Key)] {
		return nil, status(http.StatusNotFound, http.Header{"X-Amz-Delete-Marker": {"true"}})
	}
	b, ok := f.objects[aws.ToString(in.Key)]
	if !ok {
		return nil, status(http.StatusNotFound, nil)
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(strings.NewReader(b))}, nil
}

func (f *fakeS3) ListObjectVersions(_ context.Context, in *s3.ListObjectVersionsInput, _ ...func(*s3.Options)) (*s3.ListObjectVersionsOutput, error) {
	f.lists++
	if f.wrongOwner(in.ExpectedBucketOwner) {
		return nil, status(http.StatusForbidden, nil)
	}
	out := &s3.ListObjectVersionsOutput{IsTruncated: aws.Bool(false)}
	for k := range f.objects {
		if !strings.HasPrefix(k, aws.ToString(in.Prefix)) {
			continue
		}
		if f.markers[k] {
			out.DeleteMarkers = append(out.DeleteMarkers, types.DeleteMarkerEntry{Key: aws.String(k), IsLatest: aws.Bool(true)})
			out.Versions = append(out.Versions, types.ObjectVersion{Key: aws.String(k), IsLatest: aws.Bool(false)})
			continue
		}
		out.Versions = append(out.Versions, types.ObjectVersion{Key: aws.String(k), IsLatest: aws.Bool(true)})
	}
	return out, nil
}

func entry() Entry {
	return Entry{Bus: "kib-prod", KeptAt: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), Refused: "4f1c-9a",
		Record: sealing.Record{Reason: "forged_sender", MessageID: "4f1c-9a"}, Seal: "c2VhbA==", Body: `{"id":"e"}`, Error: "why"}
}

// TestARecordIsWrittenOnce: every write is conditional (If-None-Match: *) and carries the record as JSON of this
// format; a record already there (412) is no error; a write that met another of the same key (409) is tried again, a
// few times; any other failure names the bucket and key.
func TestARecordIsWrittenOnce(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		statuses []int
		wantErr  bool
		puts     int
	}{
		{"written", nil, false, 1},
		{"already there", []int{http.StatusPreconditionFailed}, false, 1},
		{"another write at once, then written", []int{http.StatusConflict, http.StatusConflict}, false, 3},
		{"another write at once, every time", []int{409, 409, 409, 409, 409}, true, conflictRetries + 1},
		{"refused", []int{http.StatusForbidden}, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeS3{statuses: tt.statuses}
			a := New(f, "kib-archive", "")
			err := a.Put(ctx, "refused/k.json", entry())
			if (err != nil) != tt.wantErr || len(f.puts) != tt.puts {
				t.Fatalf("%v after %d puts; want error %t after %d", err, len(f.puts), tt.wantErr, tt.puts)
			}
			if err != nil && !strings.Contains(err.Error(), "s3://kib-archive/refused/k.json") {
				t.Errorf("%v does not name the object", err)
			}
			in := f.puts[0]
			if aws.ToString(in.IfNoneMatch) != "*" || aws.ToString(in.Bucket) != "kib-archive" || aws.ToString(in.Key) != "refused/k.json" {
				t.Errorf("PutObject(%s, %s, If-None-Match %q)", aws.ToString(in.Bucket), aws.ToString(in.Key), aws.ToString(in.IfNoneMatch))
			}
			if in.ChecksumAlgorithm == "" {
				t.Error("the put names no checksum algorithm: the PutObject reference requires one under Object Lock")
			}
			var got Entry
			if err := json.Unmarshal([]byte(f.bodies[0]), &got); err != nil || got.Format != Format || got.Body != entry().Body || got.Seal != "c2VhbA==" {
				t.Errorf("wrote %s (%v)", f.bodies[0], err)
			}
		})
	}
}

// TestThePublicKeyIsWrittenOnceUnderItsID: the seal key's public key goes under keys/<key id>.pem, conditionally.
func TestThePublicKeyIsWrittenOnceUnderItsID(t *testing.T) {
	f := &fakeS3{statuses: []int{http.StatusPreconditionFailed}}
	const arn = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab"
	if err := New(f, "b", "").PutPublicKey(context.Background(), arn, []byte("PEM")); err != nil {
		t.Fatal(err)
	}
	if k := aws.ToString(f.puts[0].Key); k != "keys/1234abcd-12ab.pem" || aws.ToString(f.puts[0].IfNoneMatch) != "*" || f.bodies[0] != "PEM" {
		t.Errorf("wrote %s (If-None-Match %q) %q", k, aws.ToString(f.puts[0].IfNoneMatch), f.bodies[0])
	}
}

// TestKeys: a record is kept under the day its refused message was sent (the day it was kept when that is not known),
// its refused message's ID and its reason, with characters S3 keys take safely.
func TestKeys(t *testing.T) {
	e := entry()
	if k := e.Key(time.Date(2026, 11, 26, 23, 59, 0, 0, time.FixedZone("x", -3600))); k != "refused/2026/11/27/4f1c-9a.forged_sender.json" {
		t.Errorf("key %s, want the UTC day of the send", k)
	}
	if k := e.Key(time.Time{}); k != "refused/2026/11/27/4f1c-9a.forged_sender.json" {
		t.Errorf("key %s, want the day it was kept", k)
	}
	e.Refused = "a/b c"
	if k := e.Key(time.Time{}); k != "refused/2026/11/27/a_b_c.forged_sender.json" {
		t.Errorf("key %s", k)
	}
}

// TestALedgerRecordsDeliveriesNotAttempts: the first claim of a record writes claim 0 (conditionally, under the
// record's digest) and returns no delivery; the same message's claim again is its own; another message's, while the
// first claim lasts, is refused (ErrClaimed), after it the next claim is taken; a delivery is recorded once, and a
// claim of the record then returns it, whoever claims; a delivery that cannot be read, or is not one, is an error
// naming its object, never taken as none.
func TestALedgerRecordsDeliveriesNotAttempts(t *testing.T) {
	ctx := context.Background()
	rec := sealing.Record{BodySHA256: sealing.BodyDigest("b"), Account: "222222222222", Reason: "unknown_account", MessageID: "m-first"}
	f := &fakeS3{}
	a := New(f, "kib-archive", "")
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	first := Delivery{Bus: "kib-prod", Record: rec, MessageID: "central-1", Sender: "AROAREDRIVE:alice", At: at}
	claim := func(d Delivery, now time.Time) (*Delivery, error) {
		d.At = now
		return a.Claim(ctx, Claim{Delivery: d, Until: now.Add(30 * time.Second)})
	}
	if before, err := claim(first, at); err != nil || before != nil {
		t.Fatalf("first claim: %+v, %v; want none before", before, err)
	}
	key := aws.ToString(f.puts[0].Key)
	if key != claimKey(rec, 0) || !strings.HasPrefix(key, ClaimsPrefix) || aws.ToString(f.puts[0].IfNoneMatch) != "*" || f.puts[0].ChecksumAlgorithm == "" {
		t.Errorf("wrote %s (If-None-Match %q)", key, aws.ToString(f.puts[0].IfNoneMatch))
	}
	if before, err := claim(first, at.Add(time.Second)); err != nil || before != nil || len(f.puts) != 1 {
		t.Errorf("the same message claiming again: %+v, %v, %d writes; want its own claim, nothing written", before, err, len(f.puts))
	}
	second := first
	second.MessageID = "central-2"
	if _, err := claim(second, at.Add(10*time.Second)); !errors.Is(err, ErrClaimed) || !strings.Contains(err.Error(), "central-1") {
		t.Errorf("another message while the first claim lasts: %v, want ErrClaimed naming it", err)
	}
	if before, err := claim(second, at.Add(31*time.Second)); err != nil || before != nil || aws.ToString(f.puts[len(f.puts)-1].Key) != claimKey(rec, 1) {
		t.Errorf("another message once the first claim lapsed: %+v, %v; want claim 1 written", before, err)
	}
	if before, err := a.Delivered(ctx, second); err != nil || before != nil || aws.ToString(f.puts[len(f.puts)-1].Key) != DeliveredKey(rec) {
		t.Fatalf("recording the delivery: %+v, %v", before, err)
	}
	if before, err := a.Delivered(ctx, second); err != nil || before != nil {
		t.Errorf("the same message recording its delivery again: %+v, %v; want no other's", before, err)
	}
	if before, err := a.Delivered(ctx, first); err != nil || before == nil || before.MessageID != "central-2" {
		t.Errorf("another message recording a delivery after it: %+v, %v; want the first delivery", before, err)
	}
	for _, by := range []Delivery{first, second} {
		before, err := claim(by, at.Add(time.Hour))
		if err != nil || before == nil || before.MessageID != "central-2" || before.Sender != "AROAREDRIVE:alice" || before.Record != rec {
			t.Errorf("claimed again by %s once delivered: %+v, %v; want the delivery", by.MessageID, before, err)
		}
	}
	other := rec
	other.Refused = "central-9"
	if DeliveredKey(other) == DeliveredKey(rec) || claimKey(other, 0) == claimKey(rec, 0) {
		t.Error("a record kept again shares a ledger entry with the first")
	}
	dkey := DeliveredKey(rec)
	f.getErr = status(http.StatusForbidden, nil)
	if _, err := claim(first, at); err == nil || !strings.Contains(err.Error(), "s3://kib-archive/"+dkey) {
		t.Errorf("an unreadable delivery: %v, want an error naming it", err)
	}
	f.getErr = nil
	f.objects[dkey] = `{"format":"something else"}`
	if _, err := claim(first, at); err == nil || !strings.Contains(err.Error(), "no delivery") {
		t.Errorf("what is no delivery: %v, want an error", err)
	}
}

// TestADeleteMarkerOverTheLedgerIsRefused: a delete marker over a delivery or a claim (which hides it from a read and
// would let a write of its key succeed) makes the claim fail with ErrHidden, naming the object, never taken as none.
func TestADeleteMarkerOverTheLedgerIsRefused(t *testing.T) {
	ctx := context.Background()
	rec := sealing.Record{BodySHA256: sealing.BodyDigest("b"), Reason: "dead_lettered", MessageID: "m"}
	d := Delivery{Record: rec, MessageID: "central-1", At: time.Now()}
	for _, key := range []string{DeliveredKey(rec), claimKey(rec, 0)} {
		f := &fakeS3{objects: map[string]string{key: "{}"}, markers: map[string]bool{key: true}}
		_, err := New(f, "kib-archive", "").Claim(ctx, Claim{Delivery: d, Until: d.At.Add(time.Minute)})
		if !errors.Is(err, ErrHidden) || !strings.Contains(err.Error(), key) || len(f.puts) != 0 {
			t.Errorf("a delete marker over %s: %v after %d writes; want ErrHidden naming it, nothing written", key, err, len(f.puts))
		}
	}
}

// TestEveryCallNamesTheBucketsOwner: every call of the archive names the account that owns its bucket
// (ExpectedBucketOwner), so that a bucket of its name in another account answers 403 to each; an archive of no
// account names none.
func TestEveryCallNamesTheBucketsOwner(t *testing.T) {
	ctx := context.Background()
	rec := sealing.Record{MessageID: "m"}
	d := Delivery{Record: rec, MessageID: "central-1", At: time.Now()}
	theirs := &fakeS3{owner: "999999999999"}
	a := New(theirs, "kib-archive", "123456789012")
	if err := a.Put(ctx, "refused/k.json", entry()); err == nil {
		t.Error("a record written to another account's bucket")
	}
	if _, err := a.Claim(ctx, Claim{Delivery: d, Until: d.At.Add(time.Minute)}); err == nil {
		t.Error("a claim in another account's bucket")
	}
	if _, err := a.Delivered(ctx, d); err == nil {
		t.Error("a delivery recorded in another account's bucket")
	}
	for _, in := range theirs.puts {
		if aws.ToString(in.ExpectedBucketOwner) != "123456789012" {
			t.Errorf("a put of %s names owner %q", aws.ToString(in.Key), aws.ToString(in.ExpectedBucketOwner))
		}
	}
	ours := &fakeS3{owner: "123456789012"}
	a = New(ours, "kib-archive", "123456789012")
	if _, err := a.Claim(ctx, Claim{Delivery: d, Until: d.At.Add(time.Minute)}); err != nil || ours.lists != 1 {
		t.Errorf("a claim in the account's own bucket: %v after %d listings", err, ours.lists)
	}
	if New(ours, "b", "").owner != nil {
		t.Error("an archive of no account names an owner")
	}
}

// TestStatusOf: an S3 error's HTTP status, from its response, or 412 from the error code an S3-compatible store (or an
// SDK middleware) answers without one; 0 for no error or another.
func TestStatusOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"none", nil, 0},
		{"a response", &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: http.StatusConflict}}, Err: errors.New("x")}, http.StatusConflict},
		{"precondition failed by its code", &smithy.GenericAPIError{Code: "PreconditionFailed"}, http.StatusPreconditionFailed},
		{"another code", &smithy.GenericAPIError{Code: "AccessDenied"}, 0},
		{"no S3 error", errors.New("dial tcp: refused"), 0},
	} {
		if got := statusOf(tc.err); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
