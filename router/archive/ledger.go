package archive

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// The ledger of the sealed records sent back, in the archive. It records deliveries, not attempts:
//   - claims/<digest>/<n>.json: who delivers the record now (a message of the central queue, until its invocation's
//     end). Each claim is written once (If-None-Match: *, as every write of the archive); a claim whose holder's
//     invocation has ended is taken over by writing the next n, so two messages never deliver one record at once;
//   - delivered/<digest>.json: written once a cluster queue received the record. A record delivered before by another
//     message is a replay; one claimed and never delivered (dropped, dead-lettered, its invocation ended) is not.
//
// A delete marker hides an entry from a GetObject (404, x-amz-delete-marker: true: "Working with delete markers",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/DeleteMarker.html) and lets a write of its key succeed again;
// Object Lock keeps the versions, not the key's current version. Whoever may lift the bucket's policy can place one,
// so the ledger reads versions and refuses a record whose entry a marker hides (ErrHidden).

// ClaimsPrefix holds the claims.
const ClaimsPrefix = contract.ArchiveClaimsPrefix

// DeliveryFormat and ClaimFormat name the ledger's entries' shapes.
const (
	DeliveryFormat = "karpenter-interruption-bus/delivered/v1"
	ClaimFormat    = "karpenter-interruption-bus/claim/v1"
)

// Delivery is an entry of the ledger: a sealed record the redrive role sent back, delivered by one message of the
// central queue.
type Delivery struct {
	Format string `json:"format"`
	Bus    string `json:"bus"`
	// Record is the record delivered, MessageID the ID of the central queue's message that delivered it, Sender that
	// message's SenderId (the redrive role's session), At when the router took it.
	Record    sealing.Record `json:"record"`
	MessageID string         `json:"messageId"`
	Sender    string         `json:"senderId"`
	At        time.Time      `json:"at"`
}

// Claim is one claim of a record: Delivery's fields, Until when the claimant's invocation ends (after which another
// message may take the record over), N its place among the record's claims.
type Claim struct {
	Delivery
	Until time.Time `json:"until"`
	N     int       `json:"n"`
}

// DeliveredKey is where the ledger keeps the delivery of rec: the hex of its digest, which its seal covers.
func DeliveredKey(rec sealing.Record) string {
	return DeliveredPrefix + hex.EncodeToString(rec.Digest()) + ".json"
}

// claimsOf is the prefix of rec's claims; claimKey the key of its n-th, zero-padded so that keys sort as n does.
func claimsOf(rec sealing.Record) string {
	return ClaimsPrefix + hex.EncodeToString(rec.Digest()) + "/"
}

func claimKey(rec sealing.Record, n int) string { return fmt.Sprintf("%s%06d.json", claimsOf(rec), n) }

// Errors of the ledger.
var (
	// ErrClaimed: another message of the central queue is delivering the record now; try again after its claim.
	ErrClaimed = errors.New("another message of the central queue is delivering this sealed record now")
	// ErrHidden: a delete marker hides an entry of the ledger, which only someone who lifted the archive's policy can
	// place: the record is not delivered on a ledger that may lie.
	ErrHidden = errors.New("a delete marker hides an entry of the archive's ledger (someone lifted the archive's policy and deleted it)")
)

// Claim records that message c.MessageID is delivering c.Record until c.Until, and returns the delivery recorded
// before, if there is one: the record's delivery by another message (a replay), or by this one (the same message
// received again after it delivered). ErrClaimed when another message holds a claim that has not lapsed at c.At;
// ErrHidden when a delete marker hides the delivery or a claim.
func (a *Archive) Claim(ctx context.Context, c Claim) (*Delivery, error) {
	if before, err := a.Delivery(ctx, c.Record); err != nil || before != nil {
		return before, err
	}
	latest, err := a.latestClaim(ctx, c.Record)
	if err != nil {
		return nil, err
	}
	switch {
	case latest == nil:
		c.N = 0
	case latest.MessageID == c.MessageID:
		return nil, nil // its own claim: the same message received again
	case c.At.Before(latest.Until):
		return nil, fmt.Errorf("%w: message %s, until %s", ErrClaimed, latest.MessageID, latest.Until.UTC().Format(time.RFC3339))
	default:
		c.N = latest.N + 1 // the holder's invocation ended without delivering it
	}
	c.Format = ClaimFormat
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("recording a claim: %w", err)
	}
	written, err := a.putOnce(ctx, claimKey(c.Record, c.N), b, "application/json")
	switch {
	case err != nil:
		return nil, err
	case !written:
		return nil, fmt.Errorf("%w: claim %d was taken at the same time", ErrClaimed, c.N)
	}
	return nil, nil
}

// Delivered records that a cluster queue received d.Record, and returns the delivery recorded before by another
// message, if one was (two messages of one record delivered at once: a replay that got through, which the caller
// counts).
func (a *Archive) Delivered(ctx context.Context, d Delivery) (*Delivery, error) {
	d.Format = DeliveryFormat
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("recording a delivery: %w", err)
	}
	written, err := a.putOnce(ctx, DeliveredKey(d.Record), b, "application/json")
	if err != nil || written {
		return nil, err
	}
	before, err := a.Delivery(ctx, d.Record)
	if err != nil || before == nil || before.MessageID == d.MessageID {
		return nil, err
	}
	return before, nil
}

// Delivery is rec's delivery as the ledger holds it, nil when there is none; ErrHidden when a delete marker hides it.
func (a *Archive) Delivery(ctx context.Context, rec sealing.Record) (*Delivery, error) {
	var d Delivery
	found, err := a.read(ctx, DeliveredKey(rec), &d)
	if err != nil || !found {
		return nil, err
	}
	if d.Format != DeliveryFormat {
		return nil, fmt.Errorf("s3://%s/%s is no delivery of this ledger (%s): its format is %q", a.bucket, DeliveredKey(rec), DeliveryFormat, d.Format)
	}
	return &d, nil
}

// read decodes key's current version into v: found false when the key has none; ErrHidden when a delete marker is it.
func (a *Archive) read(ctx context.Context, key string, v any) (bool, error) {
	out, err := a.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(a.bucket), Key: aws.String(key), ExpectedBucketOwner: a.owner})
	if err != nil {
		if statusOf(err) == http.StatusNotFound {
			if deleteMarker(err) {
				return false, fmt.Errorf("s3://%s/%s: %w", a.bucket, key, ErrHidden)
			}
			return false, nil
		}
		return false, fmt.Errorf("reading s3://%s/%s: %w", a.bucket, key, err)
	}
	defer out.Body.Close()
	if aws.ToBool(out.DeleteMarker) {
		return false, fmt.Errorf("s3://%s/%s: %w", a.bucket, key, ErrHidden)
	}
	if err := json.NewDecoder(out.Body).Decode(v); err != nil {
		return false, fmt.Errorf("s3://%s/%s is no entry of this ledger: %w", a.bucket, key, err)
	}
	return true, nil
}

// deleteMarker reports whether S3 answered err for a key whose current version is a delete marker
// (x-amz-delete-marker: true on the 404).
func deleteMarker(err error) bool {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) && re.Response != nil {
		return re.Response.Header.Get("x-amz-delete-marker") == "true"
	}
	return false
}

// latestClaim is rec's claim of the highest n, nil when it has none; ErrHidden when a delete marker is the current
// version of any of its claims.
func (a *Archive) latestClaim(ctx context.Context, rec sealing.Record) (*Claim, error) {
	prefix := claimsOf(rec)
	latest := ""
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(a.bucket), Prefix: aws.String(prefix), ExpectedBucketOwner: a.owner}
	for {
		out, err := a.s3.ListObjectVersions(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s: %w", a.bucket, prefix, err)
		}
		for _, m := range out.DeleteMarkers {
			if aws.ToBool(m.IsLatest) {
				return nil, fmt.Errorf("s3://%s/%s: %w", a.bucket, aws.ToString(m.Key), ErrHidden)
			}
		}
		for _, v := range out.Versions {
			if k := aws.ToString(v.Key); aws.ToBool(v.IsLatest) && k > latest {
				latest = k
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		in.KeyMarker, in.VersionIdMarker = out.NextKeyMarker, out.NextVersionIdMarker
	}
	if latest == "" {
		return nil, nil
	}
	var c Claim
	found, err := a.read(ctx, latest, &c)
	if err != nil {
		return nil, err
	}
	if !found || c.Format != ClaimFormat {
		return nil, fmt.Errorf("s3://%s/%s is no claim of this ledger (%s)", a.bucket, latest, ClaimFormat)
	}
	if n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(latest, prefix), ".json")); err != nil || n != c.N {
		return nil, fmt.Errorf("s3://%s/%s is no claim of this ledger: it says it is claim %d", a.bucket, latest, c.N)
	}
	return &c, nil
}
