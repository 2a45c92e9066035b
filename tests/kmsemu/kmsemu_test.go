package kmsemu

import (
	"context"
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
)

const (
	account, region = "123456789012", "us-east-1"
	routerRole      = "AROAROUTERROLE000001"
	redriveRole     = "AROAREDRIVEROLE00001"
	routerARN       = "arn:aws:iam::" + account + ":role/kib-router"
)

// start runs the emulator, its roles named as IAM would: the router's, the redrive role, others by their ID.
func start(t *testing.T) *Server {
	t.Helper()
	s, err := Start(account, region)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	s.SetRoleNames(func(_, id string) string {
		if n, ok := map[string]string{routerRole: "kib-router", redriveRole: "kib-redrive"}[id]; ok {
			return n
		}
		return id
	})
	return s
}

func as(s *Server, roleID string) *kms.Client {
	return s.Client(caller.SessionKey(account, roleID, "s"))
}

func code(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// TestTheSealKeyAsTheAPIReferenceDescribesIt: the key the stack declares (CreateKey with KeySpec ECC_NIST_P256,
// KeyUsage SIGN_VERIFY) answers GetPublicKey with a DER SubjectPublicKeyInfo of that spec and usage and ECDSA_SHA_256
// among its algorithms ("GetPublicKey"); Sign with MessageType DIGEST signs the 32 bytes given as they are (not
// hashed again), a DER ECDSA signature that Go's crypto/ecdsa, and KMS's own Verify, take ("Sign", MessageType:
// "DIGEST ... KMS skips the hashing step"); a digest of the wrong length is refused ("ValidationException"). The
// router's sealing.Sealer seals and verifies through it.
func TestTheSealKeyAsTheAPIReferenceDescribesIt(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	arn, err := s.CreateSealKey(ctx, routerARN)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(arn, "arn:aws:kms:"+region+":"+account+":key/") {
		t.Errorf("key ARN %s", arn)
	}
	c := as(s, routerRole)
	pub, err := c.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: aws.String(arn)})
	if err != nil {
		t.Fatal(err)
	}
	if pub.KeySpec != types.KeySpecEccNistP256 || pub.KeyUsage != types.KeyUsageTypeSignVerify || !contains(pub.SigningAlgorithms, types.SigningAlgorithmSpecEcdsaSha256) {
		t.Errorf("GetPublicKey: %s %s %v", pub.KeySpec, pub.KeyUsage, pub.SigningAlgorithms)
	}
	k, err := x509.ParsePKIXPublicKey(pub.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte("what the way back relies on"))
	out, err := c.Sign(ctx, &kms.SignInput{KeyId: aws.String(arn), Message: digest[:], MessageType: types.MessageTypeDigest, SigningAlgorithm: types.SigningAlgorithmSpecEcdsaSha256})
	if err != nil {
		t.Fatal(err)
	}
	if !ecdsa.VerifyASN1(k.(*ecdsa.PublicKey), digest[:], out.Signature) {
		t.Error("the DIGEST signature does not verify over the digest itself")
	}
	v, err := c.Verify(ctx, &kms.VerifyInput{KeyId: aws.String(arn), Message: digest[:], MessageType: types.MessageTypeDigest,
		Signature: out.Signature, SigningAlgorithm: types.SigningAlgorithmSpecEcdsaSha256})
	if err != nil || !v.SignatureValid {
		t.Errorf("KMS's Verify: %v, %v", v, err)
	}
	if _, err := c.Sign(ctx, &kms.SignInput{KeyId: aws.String(arn), Message: digest[:31], MessageType: types.MessageTypeDigest,
		SigningAlgorithm: types.SigningAlgorithmSpecEcdsaSha256}); code(err) != "ValidationException" {
		t.Errorf("a 31-byte digest: %v, want ValidationException", err)
	}
	sealer := sealing.New(c, arn)
	rec := sealing.Record{BodySHA256: sealing.BodyDigest("{}"), Account: account, Reason: "forged_sender", MessageID: "m"}
	seal, err := sealer.Seal(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := sealing.New(as(s, redriveRole), arn).Verify(ctx, rec, seal); err != nil {
		t.Errorf("the seal, checked by another principal with the public key: %v", err)
	}
}

// TestOnlyTheRouterSigns: the seal key's policy denies kms:Sign to every principal but sessions of the router's role:
// the redrive role and an administrator get AccessDeniedException; reading the public key stays open to them.
func TestOnlyTheRouterSigns(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	arn, err := s.CreateSealKey(ctx, routerARN)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256([]byte("x"))
	sign := func(c *kms.Client) error {
		_, err := c.Sign(ctx, &kms.SignInput{KeyId: aws.String(arn), Message: digest[:], MessageType: types.MessageTypeDigest, SigningAlgorithm: types.SigningAlgorithmSpecEcdsaSha256})
		return err
	}
	for name, c := range map[string]*kms.Client{"the redrive role": as(s, redriveRole), "an administrator": as(s, "AROAADMINISTRATOR001"), "a user": s.Client("AKIA" + account + "USER")} {
		if err := sign(c); code(err) != "AccessDeniedException" || !strings.Contains(err.Error(), "explicit deny") {
			t.Errorf("%s signs: %v, want AccessDeniedException", name, err)
		}
		if _, err := c.GetPublicKey(ctx, &kms.GetPublicKeyInput{KeyId: aws.String(arn)}); err != nil {
			t.Errorf("%s reads the public key: %v", name, err)
		}
	}
	if err := sign(as(s, routerRole)); err != nil {
		t.Errorf("the router signs: %v", err)
	}
	if s.Calls("Sign") != 4 {
		t.Errorf("%d Sign calls counted, want 4", s.Calls("Sign"))
	}
}

func contains[T comparable](xs []T, x T) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
