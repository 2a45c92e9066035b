package requeue

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// fakeArchive holds the objects of the bucket mainBucket by key, and others' by bucket, each of account owner but those
// of foreign. It lists their versions two a page (ListObjectVersions pages them so, in key order): a key of hidden has a
// delete marker as its current version over the version it holds, and one of older an older version too: listed
// after the current one, as S3 lists a key's versions, newest first, but before the one a marker hides, which only
// its time tells. It answers a GetObject of a key a marker hides, or none holds, 404 as S3 does (the
// marker said in x-amz-delete-marker), fails the calls of the keys or prefixes of fail, and records each call with the
// owner it named.
type fakeArchive struct {
	objects       map[string][]byte
	others        map[string]map[string][]byte
	hidden        map[string]bool
	older         map[string][]byte
	fail          map[string]error
	foreign       map[string]bool
	calls         []string // "<call> <bucket>/<key or prefix> <expected owner>"
	versionsAsked []string // the version IDs GetObject named
}

const (
	mainBucket = "kib-prod-archive-111111111111-eu-west-1"
	owner      = "111111111111"
)

// statusError is an error of S3 as the SDK returns it: an HTTP status, and the delete marker header when set.
func statusError(status int, code string, marker bool) error {
	h := http.Header{}
	if marker {
		h.Set("x-amz-delete-marker", "true")
	}
	return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status, Header: h}}, Err: errors.New(code)}
}

func (f *fakeArchive) bucket(name string) map[string][]byte {
	if name == mainBucket {
		return f.objects
	}
	return f.others[name]
}

// owned records a call and refuses it, as S3 does, when the owner it names is not the bucket's.
func (f *fakeArchive) owned(call, bucket, key string, expected *string) error {
	f.calls = append(f.calls, call+" "+bucket+"/"+key+" "+aws.ToString(expected))
	if actual := map[bool]string{true: "999999999999", false: owner}[f.foreign[bucket]]; aws.ToString(expected) != "" && aws.ToString(expected) != actual {
		return statusError(http.StatusForbidden, "AccessDenied", false)
	}
	return nil
}

func (f *fakeArchive) ListBuckets(_ context.Context, in *s3.ListBucketsInput, _ ...func(*s3.Options)) (*s3.ListBucketsOutput, error) {
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

func (f *fakeArchive) ListObjectVersions(_ context.Context, in *s3.ListObjectVersionsInput, _ ...func(*s3.Options)) (*s3.ListObjectVersionsOutput, error) {
	if err := f.owned("ListObjectVersions", aws.ToString(in.Bucket), aws.ToString(in.Prefix), in.ExpectedBucketOwner); err != nil {
		return nil, err
	}
	if err := f.fail[aws.ToString(in.Prefix)]; err != nil {
		return nil, err
	}
	type entry struct {
		key, id      string
		marker, last bool
		at           time.Time
	}
	var keys []string
	for k := range f.bucket(aws.ToString(in.Bucket)) {
		if strings.HasPrefix(k, aws.ToString(in.Prefix)) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var entries []entry
	for _, k := range keys {
		_, older := f.older[k]
		if older && f.hidden[k] {
			entries = append(entries, entry{key: k, id: "v0-" + k, at: time.Unix(1, 0)})
		}
		if f.hidden[k] {
			entries = append(entries, entry{key: k, id: "dm-" + k, marker: true, last: true, at: time.Unix(3, 0)})
		}
		entries = append(entries, entry{key: k, id: "v1-" + k, last: !f.hidden[k], at: time.Unix(2, 0)})
		if older && !f.hidden[k] {
			entries = append(entries, entry{key: k, id: "v0-" + k, at: time.Unix(1, 0)})
		}
	}
	if in.KeyMarker != nil {
		i := slices.IndexFunc(entries, func(e entry) bool {
			return e.key == aws.ToString(in.KeyMarker) && e.id == aws.ToString(in.VersionIdMarker)
		})
		entries = entries[i+1:]
	}
	out := &s3.ListObjectVersionsOutput{}
	for i, e := range entries {
		if i == 2 {
			out.IsTruncated, out.NextKeyMarker, out.NextVersionIdMarker = aws.Bool(true), aws.String(entries[1].key), aws.String(entries[1].id)
			break
		}
		if e.marker {
			out.DeleteMarkers = append(out.DeleteMarkers, s3types.DeleteMarkerEntry{Key: aws.String(e.key), VersionId: aws.String(e.id), IsLatest: aws.Bool(e.last),
				LastModified: aws.Time(e.at)})
		} else {
			out.Versions = append(out.Versions, s3types.ObjectVersion{Key: aws.String(e.key), VersionId: aws.String(e.id), IsLatest: aws.Bool(e.last),
				LastModified: aws.Time(e.at)})
		}
	}
	return out, nil
}

func (f *fakeArchive) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	key := aws.ToString(in.Key)
	if err := f.owned("GetObject", aws.ToString(in.Bucket), key, in.ExpectedBucketOwner); err != nil {
		return nil, err
	}
	if err := f.fail[key]; err != nil {
		return nil, err
	}
	b, ok := f.bucket(aws.ToString(in.Bucket))[key]
	switch v := aws.ToString(in.VersionId); {
	case v != "":
		f.versionsAsked = append(f.versionsAsked, v)
		if v == "v0-"+key {
			b = f.older[key]
		} else if v != "v1-"+key || !ok {
			return nil, statusError(http.StatusNotFound, "NoSuchVersion", false)
		}
	case f.hidden[key]:
		return nil, statusError(http.StatusNotFound, "NoSuchKey", true)
	case !ok:
		return nil, statusError(http.StatusNotFound, "NoSuchKey", false)
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(b))}, nil
}

// TestTheArchiveIsListedWithItsSeals: every record of the archive is read (across pages), selected as the quarantine's
// messages are, since a day when asked, and listed with whether its seal verifies: with the stack's seal key, made
// with another key the archive does not hold, absent, or broken (a record edited, its body swapped); nothing is sent
// from it.
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
	out := stackOuts
	out.ArchiveBucket, out.SealKeyARN = mainBucket, keyARN
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: &fakeArchive{objects: objects}, Seals: keyVerifier{key}}, out,
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
	if _, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: &fakeArchive{objects: objects}}, out, Options{From: Archive, Send: true}, &w); err == nil {
		t.Error("sent from the archive")
	}
	if _, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: &fakeArchive{objects: objects}}, stackOuts, Options{From: Archive}, &w); err == nil ||
		!strings.Contains(err.Error(), "archiveBucket") {
		t.Errorf("no archive in the stackOuts: %v", err)
	}
}

// TestEveryArchiveOfTheBusIsListed: the archive the outputs name and every other bucket of the bus's archive prefix (a
// release before 0.4.0 made one per deployment) are read, nothing else; a record of the stack's seal key is checked with
// that key, whether its archive keeps the key's public key or not, and one carrying another key than the one kept under
// its key's ID does not verify.
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
	f := &fakeArchive{
		objects: map[string][]byte{archive.PublicKeyKey(keyARN): pemKey, "refused/2026/11/27/now.forged_sender.json": record("now", pemKey),
			"refused/2026/11/27/liar.forged_sender.json": record("liar", pemOther)},
		others: map[string]map[string][]byte{
			"kib-prod-archive-20261101000000000000000001": {"refused/2026/11/01/before.forged_sender.json": record("before", pemKey)},
			"kib-prod-archive-20261102000000000000000002": {"refused/2026/11/02/lost-key.forged_sender.json": record("lost-key", pemKey)},
		},
	}
	out := stackOuts
	out.ArchiveBucket, out.ArchiveBucketPrefix, out.SealKeyARN = mainBucket, "kib-prod-archive-", keyARN
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: f, Seals: keyVerifier{key}}, out, Options{From: Archive}, &w)
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
	out := stackOuts
	out.ArchiveBucket, out.SealKeyARN = mainBucket, keyARN
	var w bytes.Buffer
	if _, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: &fakeArchive{objects: objects}, Seals: keyVerifier{key}}, out,
		Options{From: Archive}, &w); err != nil {
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
	for _, absent := range []string{"not verified", SealBroken, "could not check a seal", "WARNING", VersionHidden, "MALFORMED", "no record of this archive"} {
		if strings.Contains(got, absent) {
			t.Errorf("every record is current and its seal verifies, yet the listing says %q:\n%s", absent, got)
		}
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func pemOf(t *testing.T, key *ecdsa.PrivateKey) []byte {
	t.Helper()
	b, err := sealing.PEM(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// entry is an archive record of message id, sealed by signer and saying it was with the key keyARN, carrying the
// public key carries (none when nil).
func entry(t *testing.T, id, keyARN string, signer, carries *ecdsa.PrivateKey) []byte {
	t.Helper()
	body := `{"id":"` + id + `","account":"222222222222"}`
	e := archive.Entry{Format: archive.Format, Refused: id, EventID: id, Body: body, SealKey: keyARN,
		Record: sealing.Record{BodySHA256: sealing.BodyDigest(body), Account: "222222222222", Reason: "forged_sender", MessageID: id}}
	e.Seal = keyVerifier{signer}.seal(t, e.Record)
	if carries != nil {
		e.PublicKey = string(pemOf(t, carries))
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// listed are the lines of an archive's listing by the message they list.
func listed(out string) map[string]string {
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && strings.HasPrefix(f[0], "0001-") {
			lines[f[1]] = l
		}
	}
	return lines
}

const stackKeyARN, formerKeyARN = "arn:aws:kms:eu-west-1:111111111111:key/k-1", "arn:aws:kms:eu-west-1:111111111111:key/k-0"

// TestTheStacksKeyChecksItsRecords: a record made with the stack's seal key is checked with that key (the verifier of
// the outputs' sealKeyArn), never with the key it carries: one that carries a key of its own and a seal that key made,
// and says it was made with the stack's key, does not verify; with no verifier, or KMS refusing it the public key, a
// record of the stack's key is not checked, never verified. A record of a former key is verified with that key's public
// key kept in the archive, and said so; one whose key only the record carries is not.
func TestTheStacksKeyChecksItsRecords(t *testing.T) {
	stack, former, impostor := newKey(t), newKey(t), newKey(t)
	for _, tc := range []struct {
		name            string
		key             string
		signer, carries *ecdsa.PrivateKey
		kept            *ecdsa.PrivateKey // the public key kept beside the records under the key's ID, none when nil
		seals           Verifier
		want            string
	}{
		{"the stack's key", stackKeyARN, stack, stack, stack, keyVerifier{stack}, SealVerified},
		{"the stack's key, its public key not in the archive", stackKeyARN, stack, nil, nil, keyVerifier{stack}, SealVerified},
		{"another key's seal, carrying that key, saying it is the stack's", stackKeyARN, impostor, impostor, nil, keyVerifier{stack}, SealBroken},
		{"the same, the stack's public key kept", stackKeyARN, impostor, impostor, stack, keyVerifier{stack}, SealBroken},
		{"the stack's key, no verifier", stackKeyARN, stack, stack, stack, nil, SealUnchecked},
		{"the stack's key, KMS refusing its public key", stackKeyARN, stack, stack, stack, sealer{err: errors.New("kms:GetPublicKey AccessDenied")}, SealUnchecked},
		{"a former key kept in the archive", formerKeyARN, former, former, former, keyVerifier{stack}, "verified with former key k-0's public key kept in the archive"},
		{"a former key, no verifier of the stack's", formerKeyARN, former, nil, former, nil, "verified with former key k-0's public key kept in the archive"},
		{"a former key only the record carries", formerKeyARN, former, former, nil, keyVerifier{stack}, SealNoKey},
		{"a former key, another key carried", formerKeyARN, impostor, impostor, former, keyVerifier{stack}, SealBroken},
		// The seal verifies with the key kept; the record carries another: not what the router wrote.
		{"a former key's seal, another key carried", formerKeyARN, former, impostor, former, keyVerifier{stack}, SealBroken},
		{"the stack's seal, another key carried", stackKeyARN, stack, impostor, stack, keyVerifier{stack}, SealBroken},
		{"a former key kept, another key's seal", formerKeyARN, impostor, nil, former, keyVerifier{stack}, SealBroken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeArchive{objects: map[string][]byte{"refused/2026/11/27/r.forged_sender.json": entry(t, "r", tc.key, tc.signer, tc.carries)}}
			if tc.kept != nil {
				f.objects[archive.PublicKeyKey(tc.key)] = pemOf(t, tc.kept)
			}
			out := stackOuts
			out.ArchiveBucket, out.SealKeyARN = mainBucket, stackKeyARN
			var w bytes.Buffer
			rep, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: f, Seals: tc.seals}, out, Options{From: Archive}, &w)
			if err != nil {
				t.Fatal(err)
			}
			line := listed(w.String())["r"]
			if !strings.Contains(line, tc.want) || tc.want == SealVerified && strings.Contains(line, "former") {
				t.Errorf("listed %q, want %q:\n%s", line, tc.want, w.String())
			}
			if verified := strings.HasPrefix(tc.want, "verified"); rep.Unsealed != map[bool]int{true: 0, false: 1}[verified] {
				t.Errorf("counted %d whose seal is not verified; want it counted only when it is not", rep.Unsealed)
			}
			_, refusing := tc.seals.(sealer)
			if said := strings.Contains(w.String(), "seal key "+stackKeyARN+" could not check a seal: kms:GetPublicKey AccessDenied"); said != refusing {
				t.Errorf("what KMS answered said %t:\n%s", said, w.String())
			}
		})
	}
}

// TestWhatADeleteMarkerHidesIsListed: a record whose current version is a delete marker is listed all the same, from
// its latest version that is none (read by its ID, not an older one listed first), marked hidden, counted and warned of;
// so is a public key, which still verifies the records of its key. A record whose current version is its own is read
// as it is, by no version, whatever older versions it has.
func TestWhatADeleteMarkerHidesIsListed(t *testing.T) {
	stack, former := newKey(t), newKey(t)
	const hiddenKey, hiddenPEM = "refused/2026/11/27/gone.forged_sender.json", "keys/k-0.pem"
	f := &fakeArchive{
		objects: map[string][]byte{archive.PublicKeyKey(stackKeyARN): pemOf(t, stack), hiddenPEM: pemOf(t, former),
			"refused/2026/11/27/here.forged_sender.json": entry(t, "here", stackKeyARN, stack, stack),
			hiddenKey: entry(t, "gone", stackKeyARN, stack, stack),
			"refused/2026/11/27/old.forged_sender.json": entry(t, "old", formerKeyARN, former, former)},
		hidden: map[string]bool{hiddenKey: true, hiddenPEM: true},
		older: map[string][]byte{hiddenKey: entry(t, "before-it", stackKeyARN, stack, stack),
			"refused/2026/11/27/here.forged_sender.json": entry(t, "before-here", stackKeyARN, stack, stack)},
	}
	out := stackOuts
	out.ArchiveBucket, out.SealKeyARN = mainBucket, stackKeyARN
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: f, Seals: keyVerifier{stack}}, out,
		Options{From: Archive, Accounts: []string{"333333333333"}}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Read != 3 || rep.Hidden != 1 || rep.HiddenKeys != 1 || rep.Selected != 0 {
		t.Errorf("read %d, hidden %d records and %d keys, selected %d; want 3, 1 and 1 whatever the selection, 0", rep.Read, rep.Hidden, rep.HiddenKeys, rep.Selected)
	}
	w.Reset()
	if _, err = Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: f, Seals: keyVerifier{stack}}, out, Options{From: Archive}, &w); err != nil {
		t.Fatal(err)
	}
	lines := listed(w.String())
	if l := lines["gone"]; !strings.Contains(l, VersionHidden+": version v1-"+hiddenKey+" read") || !strings.Contains(l, SealVerified) {
		t.Errorf("the hidden record listed as %q, want it hidden, its latest version read and verified:\n%s", l, w.String())
	}
	if _, ok := lines["before-it"]; ok || lines["before-here"] != "" {
		t.Errorf("an older version than the latest was read:\n%s", w.String())
	}
	if l := lines["here"]; !strings.Contains(l, " current ") || strings.Contains(l, VersionHidden) {
		t.Errorf("a record of its own current version listed as %q", l)
	}
	if l := lines["old"]; !strings.Contains(l, "verified with former key k-0's") {
		t.Errorf("the record of the hidden public key's key listed as %q: want it verified with it", l)
	}
	for _, want := range []string{"s3://" + mainBucket + "/" + hiddenPEM + " (version v1-" + hiddenPEM + "): public key " + VersionHidden,
		"WARNING: a delete marker hides 1 records and 1 public keys", "lifted the archive's policy"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("the listing does not say %q:\n%s", want, w.String())
		}
	}
	if asked := strings.Join(f.versionsAsked, " "); asked != "v1-"+hiddenPEM+" v1-"+hiddenKey+" v1-"+hiddenPEM+" v1-"+hiddenKey {
		t.Errorf("read the versions %s; want the hidden ones only, by their ID", asked)
	}
}

// TestAMalformedRecordIsNamedAndSkipped: an object under refused/ that is not JSON of the archive's format is named by
// its key, counted and skipped, and the records beside it listed; a record, a public key or a listing that cannot be
// read at all stops the listing, named.
func TestAMalformedRecordIsNamedAndSkipped(t *testing.T) {
	stack := newKey(t)
	f := &fakeArchive{objects: map[string][]byte{
		"refused/2026/11/26/empty.x.json":          []byte("{}"),
		"refused/2026/11/26/garbled.x.json":        []byte("not json"),
		"refused/2026/11/26/v0.x.json":             []byte(`{"format":"karpenter-interruption-bus/refusal/v0"}`),
		"refused/2026/11/27/ok.forged_sender.json": entry(t, "ok", stackKeyARN, stack, stack),
	}}
	out := stackOuts
	out.ArchiveBucket, out.SealKeyARN = mainBucket, stackKeyARN
	var w bytes.Buffer
	rep, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: f, Seals: keyVerifier{stack}}, out, Options{From: Archive}, &w)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Read != 1 || rep.Malformed != 3 || !strings.Contains(listed(w.String())["ok"], SealVerified) {
		t.Errorf("read %d, malformed %d; want the record listed, the three others skipped:\n%s", rep.Read, rep.Malformed, w.String())
	}
	for _, want := range []string{"s3://" + mainBucket + "/refused/2026/11/26/empty.x.json: MALFORMED", "s3://" + mainBucket + "/refused/2026/11/26/garbled.x.json: MALFORMED",
		"s3://" + mainBucket + "/refused/2026/11/26/v0.x.json: MALFORMED", "3 objects under refused/ are no record of this archive"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("the listing does not say %q:\n%s", want, w.String())
		}
	}
	f.objects[archive.PublicKeyKey(stackKeyARN)] = pemOf(t, stack)
	for key, want := range map[string]string{
		"refused/2026/11/27/ok.forged_sender.json": "reading s3://" + mainBucket + "/refused/2026/11/27/ok.forged_sender.json",
		archive.PublicKeyKey(stackKeyARN):          "reading s3://" + mainBucket + "/keys/k-1.pem",
		archive.RefusedPrefix:                      "listing s3://" + mainBucket + "/refused/",
	} {
		f.fail = map[string]error{key: statusError(http.StatusForbidden, "AccessDenied", false)}
		if _, err := Run(context.Background(), Clients{SQS: newSQS(quarantine), STS: operator, S3: f}, out, Options{From: Archive}, &w); err == nil ||
			!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "AccessDenied") {
			t.Errorf("%s cannot be read: %v, want %q", key, err, want)
		}
	}
}

// TestEveryCallToTheArchiveNamesItsOwner: listing the archives (their versions) and reading their records, the ledger's
// entries too, names the bus's account as the bucket's owner, a bucket of the prefix included; a bucket another account
// holds is refused by S3, and the error names it; outputs that name no account read no archive and send nothing.
func TestEveryCallToTheArchiveNamesItsOwner(t *testing.T) {
	stack := newKey(t)
	const oldBucket = "kib-prod-archive-20261101000000000000000001"
	hidden := "refused/2026/11/27/gone.forged_sender.json"
	f := &fakeArchive{
		objects: map[string][]byte{archive.PublicKeyKey(stackKeyARN): pemOf(t, stack), hidden: entry(t, "gone", stackKeyARN, stack, stack)},
		others:  map[string]map[string][]byte{oldBucket: {"refused/2026/11/01/before.forged_sender.json": entry(t, "before", stackKeyARN, stack, stack)}},
		hidden:  map[string]bool{hidden: true},
	}
	out := stackOuts
	out.ArchiveBucket, out.ArchiveBucketPrefix, out.SealKeyARN = mainBucket, "kib-prod-archive-", stackKeyARN
	c := Clients{SQS: newSQS(quarantine), STS: operator, S3: f, Seals: keyVerifier{stack}}
	if _, err := Run(context.Background(), c, out, Options{From: Archive}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ListObjectVersions " + mainBucket + "/keys/ " + owner, "GetObject " + mainBucket + "/keys/k-1.pem " + owner,
		"ListObjectVersions " + mainBucket + "/refused/ " + owner, "GetObject " + mainBucket + "/" + hidden + " " + owner,
		"ListObjectVersions " + oldBucket + "/keys/ " + owner, "ListObjectVersions " + oldBucket + "/refused/ " + owner,
		"GetObject " + oldBucket + "/refused/2026/11/01/before.forged_sender.json " + owner,
	}
	if fmt.Sprint(f.calls) != fmt.Sprint(want) {
		t.Errorf("calls\n%s\nwant\n%s", strings.Join(f.calls, "\n"), strings.Join(want, "\n"))
	}

	f.foreign = map[string]bool{oldBucket: true}
	if _, err := Run(context.Background(), c, out, Options{From: Archive}, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "s3://"+oldBucket+"/keys/") || !strings.Contains(err.Error(), "account "+owner) || !strings.Contains(err.Error(), "AccessDenied") {
		t.Errorf("a bucket of the prefix another account holds: %v", err)
	}

	// The ledger, read before a sealed record is sent back.
	f.foreign, f.calls = nil, nil
	m := sealedKept("m1", "ev-1")
	q := newSQS(quarantine, m)
	if _, err := Run(context.Background(), Clients{SQS: q, STS: operator, S3: f}, out, Options{From: Quarantine, Send: true}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if want := "GetObject " + mainBucket + "/" + archive.DeliveredKey(recordOf(m)) + " " + owner; fmt.Sprint(f.calls) != "["+want+"]" || len(q.sent) != 1 {
		t.Errorf("calls %v, sent %d; want %s, then the record sent", f.calls, len(q.sent), want)
	}

	none := out
	none.Account = ""
	for name, opts := range map[string]Options{"listing the archive": {From: Archive}, "sending from the quarantine": {From: Quarantine, Send: true}} {
		f.calls, q = nil, newSQS(quarantine, sealedKept("m1", "ev-1"))
		if _, err := Run(context.Background(), Clients{SQS: q, STS: operator, S3: f}, none, opts, &bytes.Buffer{}); err == nil ||
			!strings.Contains(err.Error(), "outputs name no account") || len(f.calls) != 0 || len(q.receives) != 0 {
			t.Errorf("%s with no account: %v, %d calls to S3, %d receives; want it refused before any", name, err, len(f.calls), len(q.receives))
		}
	}
	if _, err := Run(context.Background(), Clients{SQS: newSQS(quarantine, m), STS: operator}, out, Options{From: Quarantine, Send: true}, &bytes.Buffer{}); err == nil ||
		!strings.Contains(err.Error(), "no S3 client to read the archive's ledger") {
		t.Errorf("no S3 client to read the ledger with: %v", err)
	}
	// A stack without an archive has no ledger: nothing is read, the record is sent.
	noArchive := out
	noArchive.ArchiveBucket, f.calls, q = "", nil, newSQS(quarantine, sealedKept("m1", "ev-1"))
	if _, err := Run(context.Background(), Clients{SQS: q, STS: operator, S3: f}, noArchive, Options{From: Quarantine, Send: true}, &bytes.Buffer{}); err != nil ||
		len(f.calls) != 0 || len(q.sent) != 1 {
		t.Errorf("no archive: %v, %d calls to S3, %d sent; want none, and it sent", err, len(f.calls), len(q.sent))
	}
}
