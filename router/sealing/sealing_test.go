package sealing

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// fakeKMS signs with a key of its own, as KMS's Sign with ECDSA_SHA_256 over a DIGEST does, and answers GetPublicKey;
// it records what it was asked, and fails each call with err when set.
type fakeKMS struct {
	key      *ecdsa.PrivateKey
	pubDER   []byte // what GetPublicKey answers; the key's own unless set
	spec     types.KeySpec
	usage    types.KeyUsageType
	err      error
	signs    []*kms.SignInput
	pubCalls int
}

func newKMS(t *testing.T) *fakeKMS {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeKMS{key: k, pubDER: der, spec: KeySpec, usage: KeyUsage}
}

func (f *fakeKMS) Sign(_ context.Context, in *kms.SignInput, _ ...func(*kms.Options)) (*kms.SignOutput, error) {
	f.signs = append(f.signs, in)
	if f.err != nil {
		return nil, f.err
	}
	sig, err := ecdsa.SignASN1(rand.Reader, f.key, in.Message)
	return &kms.SignOutput{Signature: sig, KeyId: in.KeyId, SigningAlgorithm: in.SigningAlgorithm}, err
}

func (f *fakeKMS) GetPublicKey(_ context.Context, in *kms.GetPublicKeyInput, _ ...func(*kms.Options)) (*kms.GetPublicKeyOutput, error) {
	f.pubCalls++
	if f.err != nil {
		return nil, f.err
	}
	return &kms.GetPublicKeyOutput{KeyId: in.KeyId, PublicKey: f.pubDER, KeySpec: f.spec, KeyUsage: f.usage}, nil
}

const keyARN = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"

func record() Record {
	return Record{BodySHA256: BodyDigest(`{"id":"e"}`), Account: "222222222222", Reason: "unattributable_sender",
		FirstSender: "AROAOLD:s", FirstSent: "1763726400000", Origin: "", MessageID: "m-1"}
}

// TestASealVerifiesOnlyWhatItCovers: a seal verifies over the record it was made for, and fails over a record with
// any one field changed, with another key, when tampered with, or when absent.
func TestASealVerifiesOnlyWhatItCovers(t *testing.T) {
	f := newKMS(t)
	s := New(f, keyARN)
	ctx := context.Background()
	rec := record()
	seal, err := s.Seal(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Verify(ctx, rec, seal); err != nil {
		t.Fatalf("the seal does not verify over its own record: %v", err)
	}
	in := f.signs[0]
	if aws.ToString(in.KeyId) != keyARN || in.MessageType != types.MessageTypeDigest || in.SigningAlgorithm != Algorithm || len(in.Message) != 32 {
		t.Errorf("Sign(%s, %s, %s, %d bytes), want the key, a 32-byte DIGEST, %s", aws.ToString(in.KeyId), in.MessageType, in.SigningAlgorithm, len(in.Message), Algorithm)
	}
	for name, change := range map[string]func(r *Record){
		"body":         func(r *Record) { r.BodySHA256 = BodyDigest(`{"id":"f"}`) },
		"account":      func(r *Record) { r.Account = "333333333333" },
		"reason":       func(r *Record) { r.Reason = "unknown_account" },
		"first sender": func(r *Record) { r.FirstSender = "AROAOTHER:s" },
		"first sent":   func(r *Record) { r.FirstSent = "1763726400001" },
		"origin":       func(r *Record) { r.Origin = "dlq" },
		"message ID":   func(r *Record) { r.MessageID = "m-2" },
		// a field's text moved into the next must not verify either: the digest is of the whole JSON
		"moved between fields": func(r *Record) { r.Account, r.Reason = r.Account+r.Reason, "" },
	} {
		changed := record()
		change(&changed)
		if err := s.Verify(ctx, changed, seal); !errors.Is(err, ErrBroken) {
			t.Errorf("%s changed: %v, want ErrBroken", name, err)
		}
	}
	other := newKMS(t)
	if err := Verify(&other.key.PublicKey, rec, seal); !errors.Is(err, ErrBroken) {
		t.Errorf("another key's public key: %v, want ErrBroken", err)
	}
	for name, bad := range map[string]string{"not base64": "%%%", "truncated": seal[:len(seal)-8], "another's": mustSeal(t, s, Record{Account: "x"})} {
		if err := s.Verify(ctx, rec, bad); !errors.Is(err, ErrBroken) {
			t.Errorf("%s seal: %v, want ErrBroken", name, err)
		}
	}
	if err := s.Verify(ctx, rec, ""); !errors.Is(err, ErrNoSeal) {
		t.Errorf("no seal: %v, want ErrNoSeal", err)
	}
}

func mustSeal(t *testing.T, s *Sealer, r Record) string {
	t.Helper()
	seal, err := s.Seal(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return seal
}

// TestThePublicKeyIsAskedOnce: verifying asks KMS for the public key once and keeps it; a failure is not kept; a key
// of another spec or usage, or a public key that is no P-256 key, is refused; verifying nothing asks nothing.
func TestThePublicKeyIsAskedOnce(t *testing.T) {
	ctx := context.Background()
	f := newKMS(t)
	s := New(f, keyARN)
	if err := s.Verify(ctx, record(), ""); !errors.Is(err, ErrNoSeal) || f.pubCalls != 0 {
		t.Errorf("no seal: %v after %d GetPublicKey calls, want ErrNoSeal and none", err, f.pubCalls)
	}
	f.err = errors.New("ThrottlingException")
	if err := s.Verify(ctx, record(), "AAAA"); err == nil || errors.Is(err, ErrBroken) || !strings.Contains(err.Error(), "kms:GetPublicKey") {
		t.Errorf("KMS failing: %v, want an error naming kms:GetPublicKey, not a broken seal", err)
	}
	f.err = nil
	seal := mustSeal(t, s, record())
	for range 3 {
		if err := s.Verify(ctx, record(), seal); err != nil {
			t.Fatal(err)
		}
	}
	if f.pubCalls != 2 {
		t.Errorf("%d GetPublicKey calls, want 2 (the failed one, then one kept)", f.pubCalls)
	}
	for name, set := range map[string]func(f *fakeKMS){
		"an HMAC key":      func(f *fakeKMS) { f.spec = types.KeySpecHmac256 },
		"an encrypt key":   func(f *fakeKMS) { f.usage = types.KeyUsageTypeEncryptDecrypt },
		"a P-384 key":      func(f *fakeKMS) { f.pubDER = pkix(t, mustEC(t, elliptic.P384())) },
		"an Ed25519 key":   func(f *fakeKMS) { pub, _, _ := ed25519.GenerateKey(rand.Reader); f.pubDER = pkix(t, pub) },
		"not a public key": func(f *fakeKMS) { f.pubDER = []byte("junk") },
	} {
		f := newKMS(t)
		set(f)
		if _, _, err := New(f, keyARN).PublicKey(ctx); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func mustEC(t *testing.T, c elliptic.Curve) *ecdsa.PublicKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &k.PublicKey
}

func pkix(t *testing.T, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestASealFailureNamesTheKey: KMS refusing to sign is an error naming the call and the key.
func TestASealFailureNamesTheKey(t *testing.T) {
	f := newKMS(t)
	f.err = errors.New("AccessDeniedException")
	if _, err := New(f, keyARN).Seal(context.Background(), record()); err == nil || !strings.Contains(err.Error(), "kms:Sign with "+keyARN) {
		t.Errorf("%v, want an error naming kms:Sign and the key", err)
	}
}

// TestThePublicKeyTravelsAsPEM: the archive's PEM reads back as the same key, and what is not such a block is refused.
func TestThePublicKeyTravelsAsPEM(t *testing.T) {
	f := newKMS(t)
	b, err := PEM(&f.key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "-----BEGIN PUBLIC KEY-----") {
		t.Errorf("PEM %q", b)
	}
	pub, err := ParsePEM(b)
	if err != nil || !pub.Equal(&f.key.PublicKey) {
		t.Errorf("read back %v, %v; want the same key", pub, err)
	}
	if _, err := ParsePEM([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")); err == nil {
		t.Error("a certificate block taken for a public key")
	}
}

// TestTheDigestIsDomainSeparated: a record's digest is not the plain SHA-256 of its JSON, so a seal of this bus is no
// signature over anything else's JSON.
func TestTheDigestIsDomainSeparated(t *testing.T) {
	if d := record().Digest(); len(d) != 32 || BodyDigest(`{"bodySha256":""}`) == "" {
		t.Fatalf("digest of %d bytes", len(d))
	}
	r := record()
	plain := BodyDigest(string(mustJSON(r)))
	if got := hexOf(r.Digest()); got == plain {
		t.Error("the digest is the JSON's plain SHA-256")
	}
}

func mustJSON(r Record) []byte {
	b, _ := json.Marshal(r)
	return b
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }

// TestARecordKeptAgainIsANewRecord: a record kept again (Refused set) digests differently from the first, so that its
// delivery is its own; a record without it digests as the records of releases before it did (no "refused" member in
// its JSON), so that their seals still verify.
func TestARecordKeptAgainIsANewRecord(t *testing.T) {
	r := record()
	again := r
	again.Refused = "c-9"
	if hexOf(again.Digest()) == hexOf(r.Digest()) {
		t.Error("a record kept again digests as the first")
	}
	before := struct {
		BodySHA256  string `json:"bodySha256"`
		Account     string `json:"account"`
		Reason      string `json:"reason"`
		FirstSender string `json:"firstSender"`
		FirstSent   string `json:"firstSent"`
		Origin      string `json:"origin"`
		MessageID   string `json:"messageId"`
	}{r.BodySHA256, r.Account, r.Reason, r.FirstSender, r.FirstSent, r.Origin, r.MessageID}
	b, _ := json.Marshal(before)
	sum := sha256.Sum256(append([]byte(domain), b...))
	if hexOf(r.Digest()) != hexOf(sum[:]) {
		t.Error("a record without Refused digests otherwise than before it: the seals of earlier releases would not verify")
	}
}
