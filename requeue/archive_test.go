package requeue

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// fakeArchive holds the objects of the bucket mainBucket by key, and others' by bucket; it lists them two a page, as
// ListObjectsV2 pages them (in key order), and the buckets whose names start with the prefix asked, one a page.
type fakeArchive struct {
	objects map[string][]byte
	others  map[string]map[string][]byte
}

const mainBucket = "kib-prod-archive-111111111111-eu-west-1"

func (f fakeArchive) bucket(name string) map[string][]byte {
	if name == mainBucket {
		return f.objects
	}
	return f.others[name]
}

func (f fakeArchive) ListBuckets(_ context.Context, in *s3.ListBucketsInput, _ ...func(*s3.Options)) (*s3.ListBucketsOutput, error) {
	names := []string{mainBucket, "kib-prod-dashboards", "another-archive-1"}
	for n := range f.others {
		names = append(names, n)
	}
	sort.Strings(names)
	out := &s3.ListBucketsOutput{Prefix: in.Prefix}
	for _, n := range names {
		if strings.HasPrefix(n, aws.ToString(in.Prefix)) && n > aws.ToString(in.ContinuationToken) {
			out.Buckets, out.ContinuationToken = []s3types.Bucket{{Name: aws.String(n)}}, aws.String(n)
			return out, nil
		}
	}
	return out, nil
}

func (f fakeArchive) ListObjectsV2(_ context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	var keys []string
	for k := range f.bucket(aws.ToString(in.Bucket)) {
		if strings.HasPrefix(k, aws.ToString(in.Prefix)) && k > aws.ToString(in.ContinuationToken) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := &s3.ListObjectsV2Output{}
	for i, k := range keys {
		if i == 2 {
			out.IsTruncated, out.NextContinuationToken = aws.Bool(true), aws.String(keys[1])
			break
		}
		out.Contents = append(out.Contents, s3types.Object{Key: aws.String(k)})
	}
	return out, nil
}

func (f fakeArchive) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	b, ok := f.bucket(aws.ToString(in.Bucket))[aws.ToString(in.Key)]
	if !ok {
		return nil, fmt.Errorf("NoSuchKey %s", aws.ToString(in.Key))
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(b))}, nil
}

// TestTheArchiveIsListedWithItsSeals: every record of the archive is read (across pages), selected as the quarantine's
// messages are, since a day when asked, and listed with whether its seal verifies with the public key kept beside it
// under its key's ID: verified, made with a key the archive does not hold, absent, or broken (a record edited, its
// body swapped); nothing is sent from it.
func TestTheArchiveIsListedWithItsSeals(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	const keyARN, otherARN = "arn:aws:kms:eu-west-1:111111111111:key/k-1", "arn:aws:kms:eu-west-1:111111111111:key/k-2"
	pemBytes, _ := sealing.PEM(&key.PublicKey)
	objects := map[string][]byte{archive.PublicKeyKey(keyARN): pemBytes}
	put := func(id, reason, account, day string, keyOf string, edit func(e *archive.Entry)) {
		body := `{"id":"` + id + `","account":"` + account + `"}`
		e := archive.Entry{Format: archive.Format, Bus: "kib-prod", KeptAt: time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC), Refused: id, EventID: id, Body: body,
			Record: sealing.Record{BodySHA256: sealing.BodyDigest(body), Account: account, Reason: reason, FirstSender: "AROAX:s", MessageID: id}}
		if keyOf != "" {
			sig, _ := ecdsa.SignASN1(rand.Reader, key, e.Record.Digest())
			e.Seal, e.SealKey = base64.StdEncoding.EncodeToString(sig), keyOf
		}
		if edit != nil {
			edit(&e)
		}
		b, _ := json.Marshal(e)
		objects[archive.RefusedPrefix+day+"/"+id+"."+reason+".json"] = b
	}
	put("ok", "forged_sender", "222222222222", "2026/11/20", keyARN, nil)
	put("old", "forged_sender", "222222222222", "2026/10/01", keyARN, nil)
	put("other-key", "unknown_account", "222222222222", "2026/11/21", otherARN, nil)
	put("no-seal", "unknown_account", "222222222222", "2026/11/22", "", nil)
	put("edited", "forged_sender", "222222222222", "2026/11/23", keyARN, func(e *archive.Entry) { e.Record.FirstSender = "AROAY:s" })
	put("swapped", "forged_sender", "222222222222", "2026/11/24", keyARN, func(e *archive.Entry) { e.Body = `{"id":"x"}` })
	put("elsewhere", "forged_sender", "444444444444", "2026/11/25", keyARN, nil)
	put("on-the-day", "forged_sender", "222222222222", "2026/11/01", keyARN, nil)
	out := outputs
	out.ArchiveBucket = mainBucket
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: fakeArchive{objects: objects}}, out,
		Options{From: Archive, Accounts: []string{"222222222222"}, Since: time.Date(2026, 11, 1, 15, 0, 0, 0, time.UTC)}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Read != 7 || rep.Selected != 6 || rep.Unsealed != 4 {
		t.Errorf("read %d, selected %d, unsealed %d; want 7 since the day (the day's own), 6 of the account, 4 not verified", rep.Read, rep.Selected, rep.Unsealed)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(w.String(), "\n") {
		if f := strings.Fields(l); len(f) > 1 {
			lines[f[1]] = l
		}
	}
	for id, want := range map[string]string{"ok": SealVerified, "other-key": SealNoKey, "no-seal": SealNone, "edited": SealBroken, "swapped": SealBroken,
		"on-the-day": SealVerified} {
		if !strings.Contains(lines[id], want) {
			t.Errorf("%s listed as %q, want %q", id, lines[id], want)
		}
	}
	if _, listed := lines["old"]; listed {
		t.Error("a record of a message sent before the day was listed")
	}
	if !strings.Contains(w.String(), "never sent from") {
		t.Errorf("listing:\n%s", w.String())
	}
	if _, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: fakeArchive{objects: objects}}, out, Options{From: Archive, Send: true}, &w); err == nil {
		t.Error("sent from the archive")
	}
	if _, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: fakeArchive{objects: objects}}, outputs, Options{From: Archive}, &w); err == nil ||
		!strings.Contains(err.Error(), "archiveBucket") {
		t.Errorf("no archive in the outputs: %v", err)
	}
	objects["refused/2026/11/26/bad.x.json"] = []byte("{}")
	if _, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: fakeArchive{objects: objects}}, out, Options{From: Archive}, &w); err == nil ||
		!strings.Contains(err.Error(), "not a record of this archive") {
		t.Errorf("a foreign object: %v", err)
	}
}

// TestEveryArchiveOfTheBusIsListed: the archive the outputs name and every other bucket of the bus's archive prefix (a
// release before 0.4.0 made one per deployment) are read, nothing else; a record whose key's public key is not kept
// beside it is checked with the one it carries, and one carrying another key than its key's ID's does not verify.
func TestEveryArchiveOfTheBusIsListed(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	const keyARN = "arn:aws:kms:eu-west-1:111111111111:key/k-1"
	pemKey, _ := sealing.PEM(&key.PublicKey)
	pemOther, _ := sealing.PEM(&other.PublicKey)
	record := func(id string, carries []byte) []byte {
		body := `{"id":"` + id + `","account":"222222222222"}`
		e := archive.Entry{Format: archive.Format, Refused: id, EventID: id, Body: body, SealKey: keyARN, PublicKey: string(carries),
			Record: sealing.Record{BodySHA256: sealing.BodyDigest(body), Account: "222222222222", Reason: "forged_sender", MessageID: id}}
		sig, _ := ecdsa.SignASN1(rand.Reader, key, e.Record.Digest())
		e.Seal = base64.StdEncoding.EncodeToString(sig)
		b, _ := json.Marshal(e)
		return b
	}
	f := fakeArchive{
		objects: map[string][]byte{archive.PublicKeyKey(keyARN): pemKey, "refused/2026/11/27/now.forged_sender.json": record("now", pemKey),
			"refused/2026/11/27/liar.forged_sender.json": record("liar", pemOther)},
		others: map[string]map[string][]byte{
			"kib-prod-archive-20261101000000000000000001": {"refused/2026/11/01/before.forged_sender.json": record("before", pemKey)},
			"kib-prod-archive-20261102000000000000000002": {"refused/2026/11/02/lost-key.forged_sender.json": record("lost-key", pemKey)},
		},
	}
	out := outputs
	out.ArchiveBucket, out.ArchiveBucketPrefix = mainBucket, "kib-prod-archive-"
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: f}, out, Options{From: Archive}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Read != 4 || rep.Unsealed != 1 || !strings.Contains(w.String(), "4 records in the archives s3://"+mainBucket+
		", s3://kib-prod-archive-20261101000000000000000001, s3://kib-prod-archive-20261102000000000000000002") {
		t.Errorf("read %d, unsealed %d:\n%s", rep.Read, rep.Unsealed, w.String())
	}
	lines := 0
	for _, l := range strings.Split(w.String(), "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[0], "0001-") {
			lines++
			if strings.Contains(l, SealVerified) != (f[1] != "liar") {
				t.Errorf("listed %q: want every record verified but the one carrying another key", l)
			}
		}
	}
	if lines != 4 {
		t.Errorf("%d records listed, want 4:\n%s", lines, w.String())
	}
}

// TestOneArchiveIsListedAsOne: an archive alone is named as one, a record's error is cut past 120 bytes alone, and with
// every seal verified the listing says nothing of seals that do not.
func TestOneArchiveIsListedAsOne(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	const keyARN = "arn:aws:kms:eu-west-1:111111111111:key/k-1"
	pemKey, _ := sealing.PEM(&key.PublicKey)
	objects := map[string][]byte{archive.PublicKeyKey(keyARN): pemKey}
	for id, why := range map[string]string{"cut": strings.Repeat("e", 121), "whole": strings.Repeat("s", 120)} {
		body := `{"id":"` + id + `","account":"222222222222"}`
		e := archive.Entry{Format: archive.Format, Refused: id, EventID: id, Body: body, SealKey: keyARN, Error: why,
			Record: sealing.Record{BodySHA256: sealing.BodyDigest(body), Account: "222222222222", Reason: "forged_sender", MessageID: id}}
		sig, _ := ecdsa.SignASN1(rand.Reader, key, e.Record.Digest())
		e.Seal = base64.StdEncoding.EncodeToString(sig)
		objects["refused/2026/11/27/"+id+".forged_sender.json"], _ = json.Marshal(e)
	}
	out := outputs
	out.ArchiveBucket = mainBucket
	var w bytes.Buffer
	if _, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: fakeArchive{objects: objects}}, out, Options{From: Archive}, &w); err != nil {
		t.Fatal(err)
	}
	got := w.String()
	if !strings.Contains(got, "2 records in the archive s3://"+mainBucket+", 2 selected") {
		t.Errorf("one archive is not named as one:\n%s", got)
	}
	if !strings.Contains(got, strings.Repeat("e", 120)+"…") || strings.Contains(got, strings.Repeat("e", 121)) ||
		!strings.Contains(got, strings.Repeat("s", 120)+"\n") {
		t.Errorf("the listing does not cut the 121-byte error alone:\n%s", got)
	}
	if strings.Contains(got, "does not verify") {
		t.Errorf("every seal verifies, yet the listing speaks of one that does not:\n%s", got)
	}
}
