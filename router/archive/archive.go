// Package archive writes each refusal the router keeps, once, to the bus's archive: an S3 bucket with Object Lock,
// whose records no administrator can delete before their retention ends (docs/security.md, "The archive"). The
// quarantine queue is the working copy, read and sent back by make requeue, and keeps a message 14 days at most; the
// archive is the evidence, and outlives the stack.
//
// What S3 documents, and what follows:
//   - A record is written with If-None-Match: * ("How to prevent object overwrites with conditional writes",
//     https://docs.aws.amazon.com/AmazonS3/latest/userguide/conditional-writes.html): S3 answers 412 Precondition
//     Failed when the key exists, so a refusal retried (its quarantine send failed) is written once, and nothing,
//     the router included, writes over a record; the bucket's policy refuses a PutObject without the header
//     (the s3:if-none-match condition key). Two writes of one key at once: one gets 409 ConditionalRequestConflict,
//     and is retried.
//   - Every version the router writes takes the bucket's default retention ("Object Lock",
//     https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html). The PutObject reference requires an
//     upload to a bucket with Object Lock to carry Content-MD5 or x-amz-sdk-checksum-algorithm
//     (https://docs.aws.amazon.com/AmazonS3/latest/API/API_PutObject.html); S3 also takes the SDK's default
//     x-amz-checksum-crc32 alone, moto's S3 does not: every put names its algorithm (ChecksumAlgorithm), which both take.
//
// Keys: refused/<yyyy>/<mm>/<dd>/<message ID>.<reason>.json, the day the refused message was sent (one key whatever
// day it is retried on); keys/<key id>.pem, the seal key's public key, which verifies every record after the key
// itself is gone (each record carries it too, so that it is locked as long as the record it verifies); and the ledger
// of the sealed records sent back (ledger.go): claims/<record digest>/<n>.json, who is delivering a record, and
// delivered/<record digest>.json, one entry per sealed record a cluster queue received.
package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// Format names the records' shape; a reader refuses another.
const Format = "karpenter-interruption-bus/refusal/v1"

// Prefixes of the archive's keys.
const (
	RefusedPrefix   = contract.ArchiveRefusedPrefix
	KeysPrefix      = contract.ArchiveKeysPrefix
	DeliveredPrefix = contract.ArchiveDeliveredPrefix
)

// Entry is one archived refusal.
type Entry struct {
	Format string `json:"format"`
	// Bus is the bus's name; KeptAt when the router kept it.
	Bus    string    `json:"bus"`
	KeptAt time.Time `json:"keptAt"`
	// Refused is the ID of the message refused, in the queue it was refused from (the central queue, or the dead-letter
	// queue for one taken from there): with Reason, it names the record.
	Refused string `json:"refusedMessageId"`
	// Record is what the seal covers; Seal the seal (sealing.Sealer.Seal), made with the key SealKey, "" when the
	// router had no key; SealAlgorithm KMS's name of how.
	Record        sealing.Record `json:"record"`
	Seal          string         `json:"seal,omitempty"`
	SealKey       string         `json:"sealKey,omitempty"`
	SealAlgorithm string         `json:"sealAlgorithm,omitempty"`
	// PublicKey is the seal key's public key (PEM): the record carries what verifies it, locked as long as it is,
	// whenever keys/<key id>.pem was first written.
	PublicKey string `json:"publicKey,omitempty"`
	// Error is why, as the router's log says it; EventID the event's id; Body the message's body byte for byte.
	Error   string `json:"error"`
	EventID string `json:"eventId,omitempty"`
	Body    string `json:"body"`
}

// Key is where e is kept: its refused message's send day (its record's FirstSent, or when it was kept), its ID
// and its reason.
func (e Entry) Key(sent time.Time) string {
	if sent.IsZero() {
		sent = e.KeptAt
	}
	return fmt.Sprintf("%s%s/%s.%s.json", RefusedPrefix, sent.UTC().Format("2006/01/02"), safe(e.Refused), safe(e.Record.Reason))
}

// safe keeps a key's part to characters S3 keys take safely ("Naming Amazon S3 objects", safe characters).
func safe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
}

// PublicKeyKey is where the public key of the seal key id is kept: its ID, the last part of its ARN.
func PublicKeyKey(keyARN string) string {
	return KeysPrefix + safe(keyARN[strings.LastIndex(keyARN, "/")+1:]) + ".pem"
}

// S3 is what the archive calls: it writes records, reads an entry of the ledger another wrote, and lists the claims
// of a record and the versions of an entry (a delete marker over one is refused).
type S3 interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	ListObjectVersions(ctx context.Context, in *s3.ListObjectVersionsInput, optFns ...func(*s3.Options)) (*s3.ListObjectVersionsOutput, error)
}

var _ S3 = (*s3.Client)(nil)

// Archive writes to one bucket, of one account.
type Archive struct {
	s3     S3
	bucket string
	owner  *string
}

// New returns the archive in bucket, which account owns: every call names it (ExpectedBucketOwner), so that S3 refuses
// it (403) should the bucket's name be another account's, a name anyone may hold in S3's global namespace ("Verifying
// bucket ownership with bucket owner condition",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucket-owner-condition.html). An empty account names none.
func New(client S3, bucket, account string) *Archive {
	a := &Archive{s3: client, bucket: bucket}
	if account != "" {
		a.owner = aws.String(account)
	}
	return a
}

// Bucket is the archive's bucket.
func (a *Archive) Bucket() string { return a.bucket }

// Put writes e under key, once: a record already there (a refusal retried) is no error.
func (a *Archive) Put(ctx context.Context, key string, e Entry) error {
	e.Format = Format
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("archiving %s: %w", key, err)
	}
	return a.put(ctx, key, b, "application/json")
}

// PutPublicKey writes the seal key's public key (PEM), once.
func (a *Archive) PutPublicKey(ctx context.Context, keyARN string, pemBytes []byte) error {
	return a.put(ctx, PublicKeyKey(keyARN), pemBytes, "application/x-pem-file")
}

// conflictRetries bounds the retries of a write that met another write of the same key (409).
const conflictRetries = 3

func (a *Archive) put(ctx context.Context, key string, body []byte, contentType string) error {
	_, err := a.putOnce(ctx, key, body, contentType)
	return err
}

// putOnce writes body under key unless the key exists: written reports which.
func (a *Archive) putOnce(ctx context.Context, key string, body []byte, contentType string) (written bool, err error) {
	for attempt := 0; ; attempt++ {
		_, err := a.s3.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(a.bucket), Key: aws.String(key), Body: bytes.NewReader(body), ExpectedBucketOwner: a.owner,
			ContentType: aws.String(contentType), IfNoneMatch: aws.String("*"), ChecksumAlgorithm: types.ChecksumAlgorithmSha256,
		})
		switch status := statusOf(err); {
		case err == nil:
			return true, nil
		case status == http.StatusPreconditionFailed:
			return false, nil // written before
		case status == http.StatusConflict && attempt < conflictRetries:
			continue
		default:
			return false, fmt.Errorf("archiving s3://%s/%s: %w", a.bucket, key, err)
		}
	}
}

// statusOf is the HTTP status of an S3 error, 0 when there is none.
func statusOf(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "PreconditionFailed" {
		return http.StatusPreconditionFailed
	}
	return 0
}
