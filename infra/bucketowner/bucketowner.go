// Package bucketowner asks S3, before anything is declared, whether a bucket of a name exists and whether an account
// owns it, as the identity the stack's AWS provider uses (infra/concurrency's Identity). Bucket names are global to
// all of S3: a name the program derives (the archive's, infra/component/bus) may be held by any account, and the
// provider's lookup of a bucket (HeadBucket, as whoever asks) finds another account's bucket that lets it in as
// readily as the account's own.
//
// What S3 documents, and what follows:
//   - HeadBucket answers 200 for a bucket that exists and that the caller may list (s3:ListBucket), 404 for a name no
//     bucket holds, and 403 for one the caller may not list ("HeadBucket",
//     https://docs.aws.amazon.com/AmazonS3/latest/API/API_HeadBucket.html); a bucket of another region, 301 with its
//     region (x-amz-bucket-region).
//   - With ExpectedBucketOwner, S3 refuses the request (403) when the bucket's owner is another account ("Verifying
//     bucket ownership with bucket owner condition", https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucket-owner-condition.html).
//
// So a 200 with the account as the expected owner is the account's bucket; a 403 with it and a 200 without is another
// account's, which lets the caller in; a 403 both ways is another account's, or one the caller may not list, which
// the account's own deployer can (the provider lists it on every read): neither is adopted.
package bucketowner

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
)

// Answer is what S3 says of a bucket's name.
type Answer string

// The answers.
const (
	// NotChecked: nothing asked S3 (the check stepped aside, or the offline render, which cannot look).
	NotChecked Answer = ""
	// Missing: no bucket has the name.
	Missing Answer = "missing"
	// Owned: the account owns it.
	Owned Answer = "owned"
	// Foreign: another account owns it, and lets the caller list it.
	Foreign Answer = "foreign"
	// Refused: S3 refuses it as the account's and without an owner named: another account's, or the caller may not list it.
	Refused Answer = "refused"
	// ElsewhereRegion: it is a bucket of another region than the one asked.
	ElsewhereRegion Answer = "another region"
)

// Adoptable reports whether a bucket of answer a may be adopted as the account's: only one it owns.
func (a Answer) Adoptable() bool { return a == Owned }

// S3 is what the check calls.
type S3 interface {
	HeadBucket(ctx context.Context, in *s3.HeadBucketInput, optFns ...func(*s3.Options)) (*s3.HeadBucketOutput, error)
}

var _ S3 = (*s3.Client)(nil)

// Read asks S3 who owns bucket, as account's (ExpectedBucketOwner), then, refused, as anyone's.
func Read(ctx context.Context, client S3, bucket, account string) (Answer, error) {
	_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket), ExpectedBucketOwner: aws.String(account)})
	switch status(err) {
	case http.StatusOK:
		return Owned, nil
	case http.StatusNotFound:
		return Missing, nil
	case http.StatusMovedPermanently:
		return ElsewhereRegion, nil
	case http.StatusForbidden:
	default:
		return NotChecked, fmt.Errorf("s3:HeadBucket %s, as a bucket of account %s: %w", bucket, account, err)
	}
	_, err = client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(bucket)})
	switch status(err) {
	case http.StatusOK:
		return Foreign, nil
	case http.StatusForbidden:
		return Refused, nil
	case http.StatusNotFound: // deleted between the two requests
		return Missing, nil
	}
	return NotChecked, fmt.Errorf("s3:HeadBucket %s: %w", bucket, err)
}

// status is the HTTP status of an S3 answer: 200 with no error, 0 for an error that carries none (the network).
func status(err error) int {
	if err == nil {
		return http.StatusOK
	}
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// FromEnvironment reads who owns bucket in region as the identity the stack's AWS provider uses (id).
func FromEnvironment(ctx context.Context, region string, id concurrency.Identity, bucket, account string) (Answer, error) {
	cfg, err := id.Config(ctx, region)
	if err != nil {
		return NotChecked, err
	}
	return Read(ctx, s3.NewFromConfig(cfg, id.S3Options), bucket, account)
}
