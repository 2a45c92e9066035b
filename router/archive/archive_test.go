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
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// fakeS3 answers each PutObject with the next of statuses (200 when none is left; 412 when the key holds an object,
// as S3 answers a conditional write, if the statuses say nothing), 409 when another write of it is under way, and
// GetObject with what it holds. It records what it was sent.
type fakeS3 struct {
	statuses []int
	puts     []*s3.PutObjectInput
	bodies   []string
	objects  map[string]string
	getErr   error
}

func (f *fakeS3) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	b, _ := io.ReadAll(in.Body)
	f.puts, f.bodies = append(f.puts, in), append(f.bodies, string(b))
	status := http.StatusOK
	if _, held := f.objects[aws.ToString(in.Key)]; held {
		status = http.StatusPreconditionFailed
	}
	if len(f.statuses) > 0 {
		status, f.statuses = f.statuses[0], f.statuses[1:]
	}
	if status == http.StatusOK {
		if f.objects == nil {
			f.objects = map[string]string{}
		}
		f.objects[aws.ToString(in.Key)] = string(b)
		return &s3.PutObjectOutput{}, nil
	}
	return nil, &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: errors.New(http.StatusText(status))}
}

func (f *fakeS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	b, ok := f.objects[aws.ToString(in.Key)]
	if f.getErr != nil || !ok {
		return nil, errors.Join(f.getErr, errors.New("NoSuchKey"))
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(strings.NewReader(b))}, nil
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
			a := New(f, "kib-archive")
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
	if err := New(f, "b").PutPublicKey(context.Background(), arn, []byte("PEM")); err != nil {
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

// TestALedgerEntryIsWrittenOnce: the first claim of a record writes its delivery (conditionally, under the record's
// digest) and returns none before it; a claim of the same record again returns the delivery written first, whoever
// claims; a delivery that cannot be read, or is not one, is an error naming its object, never taken as none.
func TestALedgerEntryIsWrittenOnce(t *testing.T) {
	ctx := context.Background()
	rec := sealing.Record{BodySHA256: sealing.BodyDigest("b"), Account: "222222222222", Reason: "unknown_account", MessageID: "m-first"}
	f := &fakeS3{}
	a := New(f, "kib-archive")
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	first := Delivery{Bus: "kib-prod", Record: rec, MessageID: "central-1", Sender: "AROAREDRIVE:alice", At: at}
	if before, err := a.Claim(ctx, first); err != nil || before != nil {
		t.Fatalf("first claim: %+v, %v; want none before", before, err)
	}
	key := aws.ToString(f.puts[0].Key)
	if key != DeliveredKey(rec) || !strings.HasPrefix(key, DeliveredPrefix) || aws.ToString(f.puts[0].IfNoneMatch) != "*" || f.puts[0].ChecksumAlgorithm == "" {
		t.Errorf("wrote %s (If-None-Match %q)", key, aws.ToString(f.puts[0].IfNoneMatch))
	}
	for _, by := range []string{"central-1", "central-2"} {
		before, err := a.Claim(ctx, Delivery{Bus: "kib-prod", Record: rec, MessageID: by, At: at.Add(time.Hour)})
		if err != nil || before == nil || before.MessageID != "central-1" || before.Sender != "AROAREDRIVE:alice" || !before.At.Equal(at) || before.Record != rec {
			t.Errorf("claimed again by %s: %+v, %v; want the first delivery", by, before, err)
		}
	}
	other := rec
	other.Reason = "unattributable_sender"
	if DeliveredKey(other) == key {
		t.Error("two records share a ledger entry")
	}
	f.getErr = errors.New("AccessDenied")
	if _, err := a.Claim(ctx, first); err == nil || !strings.Contains(err.Error(), "s3://kib-archive/"+key) {
		t.Errorf("an unreadable delivery: %v, want an error naming it", err)
	}
	f.getErr = nil
	f.objects[key] = `{"format":"something else"}`
	if _, err := a.Claim(ctx, first); err == nil || !strings.Contains(err.Error(), "no delivery") {
		t.Errorf("what is no delivery: %v, want an error", err)
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
