// Package sealing seals what the router keeps of a message it refuses, so that what a message sent back says of
// itself is believed only when the router said it first (docs/security.md, "Sealed refusals").
//
// A seal is an ECDSA signature (ECC_NIST_P256, ECDSA_SHA_256) made by AWS KMS with an asymmetric key whose policy lets
// only the router's role call kms:Sign ("Sign", https://docs.aws.amazon.com/kms/latest/APIReference/API_Sign.html),
// over the digest of a Record: the body's SHA-256, the account the event names, the reason it was refused, its first
// sender and send time, where that sender was read (the dead-letter queue or not) and its original message ID.
//
// Why a signature and not an HMAC (GenerateMac/VerifyMac): verifying takes the public key only (GetPublicKey, once
// per process), so the router checks a seal with no KMS request on its hot path, make requeue and an auditor check
// one with no permission on the key but GetPublicKey, and a record in the archive stays verifiable after the key is
// gone, by the public key the router archives beside the records. An HMAC key's MACs die with the key, and
// verifying one is a KMS request that needs kms:VerifyMac. What both give: nobody without kms:Sign (kms:GenerateMac)
// on the key can make a seal that verifies. KMS signs a message of at most 4,096 bytes, or a digest with MessageType
// DIGEST, which is what is sent here.
package sealing

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// The key and algorithm of every seal: KMS's names ("CreateKey", KeySpec and KeyUsage,
// https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateKey.html).
const (
	KeySpec   = types.KeySpec(contract.SealKeySpec)
	KeyUsage  = types.KeyUsageType(contract.SealKeyUsage)
	Algorithm = types.SigningAlgorithmSpec(contract.SealAlgorithm)
)

// Record is what a seal covers: everything the way back relies on. Its fields are strings as SQS carries them
// (FirstSent in epoch milliseconds, "" when unknown).
type Record struct {
	BodySHA256  string `json:"bodySha256"`
	Account     string `json:"account"`
	Reason      string `json:"reason"`
	FirstSender string `json:"firstSender"`
	FirstSent   string `json:"firstSent"`
	// Origin is "dlq" when FirstSender is the one the dead-letter queue held.
	Origin string `json:"origin"`
	// MessageID is the message's ID in the queue it was first refused from.
	MessageID string `json:"messageId"`
	// Refused is the ID of the message whose refusal this record keeps, when that is not the first (MessageID): a
	// record sent back and refused again (dropped, or dead-lettered and taken in) is kept as a new record, so that
	// what refused it once never makes it a replay. Left out of the record's JSON when empty, so that a record of a
	// release before it digests, and verifies, as it did.
	Refused string `json:"refused,omitempty"`
}

// BodyDigest is the hex SHA-256 of body, as Record.BodySHA256 holds it.
func BodyDigest(body string) string {
	sum := sha256.Sum256([]byte(body))
	return hex.EncodeToString(sum[:])
}

// domain starts every digested record, so a seal of this bus means nothing as anything else's signature.
const domain = "karpenter-interruption-bus/seal/v1\n"

// Digest is the SHA-256 of the record's canonical form: its JSON with the fields in their declared order.
func (r Record) Digest() []byte {
	b, _ := json.Marshal(r) // strings only: never fails
	sum := sha256.Sum256(append([]byte(domain), b...))
	return sum[:]
}

// Errors of Verify.
var (
	// ErrNoSeal: the message carries no seal.
	ErrNoSeal = errors.New("it carries no seal (kib-seal): only what the router kept and sealed may be sent back")
	// ErrBroken: the seal does not verify with the bus's key over what the message says: made up, copied from
	// another message, or what it covers was changed.
	ErrBroken = errors.New("its seal (kib-seal) does not verify with the bus's seal key over its body and what it says of itself")
)

// Verify checks seal (base64 of the DER signature, as Seal returns it) over rec with pub.
func Verify(pub *ecdsa.PublicKey, rec Record, seal string) error {
	if seal == "" {
		return ErrNoSeal
	}
	sig, err := base64.StdEncoding.DecodeString(seal)
	if err != nil || !ecdsa.VerifyASN1(pub, rec.Digest(), sig) {
		return ErrBroken
	}
	return nil
}

// ParsePublicKey reads a DER SubjectPublicKeyInfo, as KMS's GetPublicKey returns it, that must be a P-256 key.
func ParsePublicKey(der []byte) (*ecdsa.PublicKey, error) {
	k, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("reading the seal key's public key: %w", err)
	}
	pub, ok := k.(*ecdsa.PublicKey)
	if !ok || pub.Params().Name != "P-256" {
		return nil, fmt.Errorf("the seal key's public key is a %T, not a P-256 ECDSA key (%s)", k, KeySpec)
	}
	return pub, nil
}

// PEM is pub as a PEM "PUBLIC KEY" block, as the archive keeps it and openssl reads it.
func PEM(pub *ecdsa.PublicKey) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// ParsePEM reads what PEM writes.
func ParsePEM(b []byte) (*ecdsa.PublicKey, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("no PEM PUBLIC KEY block")
	}
	return ParsePublicKey(block.Bytes)
}

// KMS is what a Sealer calls.
type KMS interface {
	Sign(ctx context.Context, in *kms.SignInput, optFns ...func(*kms.Options)) (*kms.SignOutput, error)
	GetPublicKey(ctx context.Context, in *kms.GetPublicKeyInput, optFns ...func(*kms.Options)) (*kms.GetPublicKeyOutput, error)
}

var _ KMS = (*kms.Client)(nil)

// Sealer seals and verifies with one KMS key. It is safe for concurrent use.
type Sealer struct {
	kms KMS
	key string

	mu  sync.Mutex
	pub *ecdsa.PublicKey
	der []byte
}

// New returns a Sealer of the key key (its ARN).
func New(client KMS, key string) *Sealer { return &Sealer{kms: client, key: key} }

// Key is the key's ARN.
func (s *Sealer) Key() string { return s.key }

// Seal signs rec and returns the seal: base64 of the DER signature.
func (s *Sealer) Seal(ctx context.Context, rec Record) (string, error) {
	out, err := s.kms.Sign(ctx, &kms.SignInput{
		KeyId: aws.String(s.key), Message: rec.Digest(), MessageType: types.MessageTypeDigest, SigningAlgorithm: Algorithm,
	})
	if err != nil {
		return "", fmt.Errorf("sealing (kms:Sign with %s): %w", s.key, err)
	}
	return base64.StdEncoding.EncodeToString(out.Signature), nil
}

// PublicKey is the key's public key, asked of KMS once and kept: a key's public key never changes. A failure is
// not kept, so the next call asks again.
func (s *Sealer) PublicKey(ctx context.Context) (*ecdsa.PublicKey, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pub != nil {
		return s.pub, s.der, nil
	}
	out, err := s.kms.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: aws.String(s.key)})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the seal key's public key (kms:GetPublicKey of %s): %w", s.key, err)
	}
	if out.KeySpec != KeySpec || out.KeyUsage != KeyUsage {
		return nil, nil, fmt.Errorf("the seal key %s is %s for %s, not %s for %s", s.key, out.KeySpec, out.KeyUsage, KeySpec, KeyUsage)
	}
	pub, err := ParsePublicKey(out.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	s.pub, s.der = pub, out.PublicKey
	return pub, out.PublicKey, nil
}

// Verify checks seal over rec with the key's public key: nil, ErrNoSeal, ErrBroken, or why the public key could not
// be read (which proves nothing of the seal: retry).
func (s *Sealer) Verify(ctx context.Context, rec Record, seal string) error {
	if seal == "" {
		return ErrNoSeal
	}
	pub, _, err := s.PublicKey(ctx)
	if err != nil {
		return err
	}
	return Verify(pub, rec, seal)
}
