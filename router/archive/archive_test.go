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
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// fakeS3 answers each PutObject with the next of statuses (200 when none is left), as S3 answers a conditional write:
// 412 when the key exists, 409 when another write of it is under way. It records what it was sent.
type fakeS3 struct {
	statuses []int
	puts     []*s3.PutObjectInput
	bodies   []string
}

func (f *fakeS3) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	b, _ := io.ReadAll(in.Body)
	f.puts, f.bodies = append(f.puts, in), append(f.bodies, string(b))
	status := http.StatusOK
	if len(f.statuses) > 0 {
		status, f.statuses = f.statuses[0], f.statuses[1:]
	}
	if status == http.StatusOK {
		return &s3.PutObjectOutput{}, nil
	}
	return nil, &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: errors.New(http.StatusText(status))}
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
