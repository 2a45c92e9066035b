package requeue

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// What a listed archive record's seal is.
const (
	SealVerified = "verified"
	SealBroken   = "DOES NOT VERIFY"
	SealNone     = "none"
	SealNoKey    = "its key's public key is not in the archive"
)

// Record is one archive record, as listed.
type Record struct {
	Key   string
	Entry archive.Entry
	// Seal is what its seal is: SealVerified, SealBroken, SealNone or SealNoKey.
	Seal string
}

// listArchive lists the records of refused messages (those sent since opts.Since) of every archive the bus has had, the
// selected ones with whether each seal verifies, checked with the public key the record carries, or kept beside the
// records under the key's ID: a record's seal stays checkable after the key itself is gone, and the check takes no KMS
// permission.
func listArchive(ctx context.Context, c Clients, out Outputs, opts Options, w io.Writer) (Report, error) {
	if out.ArchiveBucket == "" {
		return Report{}, errors.New("the stack's outputs name no archiveBucket: is it a bus's stack, updated since the archive came?")
	}
	if c.S3 == nil {
		return Report{}, errors.New("no S3 client to read the archive with")
	}
	buckets, err := archives(ctx, c.S3, out)
	if err != nil {
		return Report{}, err
	}
	var records []Record
	for _, b := range buckets {
		rs, keys, err := readArchive(ctx, c.S3, b, opts.Since)
		if err != nil {
			return Report{}, err
		}
		for i := range rs {
			rs[i].Seal = sealOf(rs[i].Entry, keys)
		}
		records = append(records, rs...)
	}
	var rep Report
	var listed []Record
	for _, r := range records {
		rep.Read++
		m := Message{ID: r.Entry.Refused, Reason: r.Entry.Record.Reason, Account: r.Entry.Record.Account, EventID: r.Entry.EventID,
			Sender: r.Entry.Record.FirstSender}
		if !opts.selects(m) {
			continue
		}
		rep.Selected++
		if r.Seal != SealVerified {
			rep.Unsealed++
		}
		listed = append(listed, r)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEPT\tMESSAGE\tREASON\tACCOUNT\tSENDER\tEVENT\tSEAL\tERROR")
	for _, r := range listed {
		e := r.Entry
		why := e.Error
		if len(why) > 120 {
			why = contract.TruncateUTF8(why, 120) + "…"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.KeptAt.UTC().Format(time.RFC3339), e.Refused, e.Record.Reason, e.Record.Account,
			e.Record.FirstSender, e.EventID, r.Seal, why)
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "%d records in the archive%s s3://%s, %d selected, listed: the archive is evidence, never sent from\n", rep.Read,
		map[bool]string{true: "s"}[len(buckets) > 1], strings.Join(buckets, ", s3://"), rep.Selected)
	if rep.Unsealed > 0 {
		fmt.Fprintf(w, "%d whose seal does not verify with the public key kept beside it: not what the router kept, or kept without a key\n", rep.Unsealed)
	}
	return rep, nil
}

// archives are the buckets of every archive the bus has had: the one its outputs name first, then every bucket of the
// account in the bus's region whose name starts with the bus's archive prefix (a release before 0.4.0 made one per
// deployment), by name.
func archives(ctx context.Context, client S3, out Outputs) ([]string, error) {
	buckets := []string{out.ArchiveBucket}
	if out.ArchiveBucketPrefix == "" {
		return buckets, nil
	}
	var found []string
	pages := s3.NewListBucketsPaginator(client, &s3.ListBucketsInput{Prefix: aws.String(out.ArchiveBucketPrefix), BucketRegion: aws.String(out.Region)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("finding the bus's archives (s3:ListAllMyBuckets, prefix %s): %w", out.ArchiveBucketPrefix, err)
		}
		for _, b := range page.Buckets {
			if n := aws.ToString(b.Name); strings.HasPrefix(n, out.ArchiveBucketPrefix) && !slices.Contains(buckets, n) && !slices.Contains(found, n) {
				found = append(found, n)
			}
		}
	}
	slices.Sort(found)
	return append(buckets, found...), nil
}

// readArchive reads every record kept since (all when zero), and every public key kept beside them, by key ID.
func readArchive(ctx context.Context, client S3, bucket string, since time.Time) ([]Record, map[string]*ecdsa.PublicKey, error) {
	keys := map[string]*ecdsa.PublicKey{}
	var records []Record
	for _, prefix := range []string{archive.KeysPrefix, archive.RefusedPrefix} {
		var token *string
		for {
			page, err := client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix), ContinuationToken: token})
			if err != nil {
				return nil, nil, fmt.Errorf("listing s3://%s/%s: %w", bucket, prefix, err)
			}
			for _, o := range page.Contents {
				key := aws.ToString(o.Key)
				if prefix == archive.RefusedPrefix && !sentSince(key, since) {
					continue
				}
				b, err := get(ctx, client, bucket, key)
				if err != nil {
					return nil, nil, err
				}
				if prefix == archive.KeysPrefix {
					if pub, err := sealing.ParsePEM(b); err == nil {
						keys[strings.TrimSuffix(strings.TrimPrefix(key, archive.KeysPrefix), ".pem")] = pub
					}
					continue
				}
				var e archive.Entry
				if err := json.Unmarshal(b, &e); err != nil || e.Format != archive.Format {
					return nil, nil, fmt.Errorf("s3://%s/%s is not a record of this archive (%s)", bucket, key, archive.Format)
				}
				records = append(records, Record{Key: key, Entry: e})
			}
			if !aws.ToBool(page.IsTruncated) {
				break
			}
			token = page.NextContinuationToken
		}
	}
	return records, keys, nil
}

// sentSince reports whether the record at key (refused/<yyyy>/<mm>/<dd>/...) was sent on since's day or later.
func sentSince(key string, since time.Time) bool {
	if since.IsZero() {
		return true
	}
	parts := strings.SplitN(strings.TrimPrefix(key, archive.RefusedPrefix), "/", 4)
	if len(parts) < 4 {
		return true
	}
	day, err := time.Parse("2006/01/02", strings.Join(parts[:3], "/"))
	return err != nil || !day.Before(since.UTC().Truncate(24*time.Hour))
}

func get(ctx context.Context, client S3, bucket, key string) ([]byte, error) {
	obj, err := client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("reading s3://%s/%s: %w", bucket, key, err)
	}
	defer obj.Body.Close()
	return io.ReadAll(obj.Body)
}

// sealOf says whether e's seal verifies with the public key of its seal key, as the record carries it, or the archive
// keeps it beside the records.
func sealOf(e archive.Entry, keys map[string]*ecdsa.PublicKey) string {
	if e.Seal == "" {
		return SealNone
	}
	if sealing.BodyDigest(e.Body) != e.Record.BodySHA256 {
		return SealBroken // the body kept is not the one sealed
	}
	pub, ok := keys[strings.TrimSuffix(strings.TrimPrefix(archive.PublicKeyKey(e.SealKey), archive.KeysPrefix), ".pem")]
	if own, err := sealing.ParsePEM([]byte(e.PublicKey)); err == nil {
		if ok && !own.Equal(pub) {
			return SealBroken // a record that carries another key than the one of its key's ID
		}
		pub, ok = own, true
	}
	if !ok {
		return SealNoKey
	}
	if sealing.Verify(pub, e.Record, e.Seal) != nil {
		return SealBroken
	}
	return SealVerified
}
