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

// What a listed archive record's seal is. A record made with the stack's seal key is checked with that key (the
// Verifier of the outputs' sealKeyArn, whose public key KMS gives), never with the public key the record carries: a
// record is what anyone who lifted the archive's policy may have written, and the key it carries is theirs to choose.
// One made with another key (a former key of the stack) is checked with that key's public key kept beside the records
// (keys/<key id>.pem), written once by the router. The key a record carries only tells one that differs from the key
// kept under its key's ID, which no record the router wrote does.
const (
	// SealVerified: made with the stack's key, and it verifies with it.
	SealVerified = "verified"
	SealBroken   = "DOES NOT VERIFY"
	SealNone     = "none"
	// SealNoKey: made with another key than the stack's, whose public key the archive does not keep.
	SealNoKey = "its key's public key is not in the archive"
	// SealUnchecked: made with the stack's key, whose public key could not be read here (no verifier, or KMS refused).
	SealUnchecked = "not checked: the stack's seal key's public key could not be read"
)

// sealFormer is the seal of a record made with a former key, verified with that key's public key kept in the archive.
const sealFormer = "verified with former key %s's public key kept in the archive"

// VersionHidden marks a record, or a public key, whose current version is a delete marker: listed from its latest
// version that is none. Only someone who lifted the archive's policy can place a marker (docs/security.md, "The
// archive"); Object Lock keeps the versions, not the key's current version.
const VersionHidden = "HIDDEN by a delete marker"

// Record is one archive record, as listed.
type Record struct {
	Bucket, Key string
	Entry       archive.Entry
	// Seal is what its seal is: SealVerified, sealFormer's, SealBroken, SealNone, SealNoKey or SealUnchecked; Verified
	// says whether that is a seal that verifies.
	Seal     string
	Verified bool
	// Hidden says a delete marker is its key's current version; VersionID is then the version read, its latest that is
	// no delete marker.
	Hidden    bool
	VersionID string
}

// listArchive lists the records of refused messages (those sent since opts.Since) of every archive the bus has had, the
// selected ones with whether each seal verifies (sealCheck), those a delete marker hides included (read by version),
// and names the objects that are no record of the archive, skipped. Every call names the bus's account as the
// bucket's owner (ExpectedBucketOwner): S3 refuses it should a bucket of that name be another account's, a name anyone
// may hold in S3's global namespace ("Verifying bucket ownership with bucket owner condition",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucket-owner-condition.html).
func listArchive(ctx context.Context, c Clients, out Outputs, opts Options, w io.Writer) (Report, error) {
	if out.ArchiveBucket == "" {
		return Report{}, errors.New("the stack's outputs name no archiveBucket: is it a bus's stack, updated since the archive came?")
	}
	if out.Account == "" {
		return Report{}, errNoAccount
	}
	if c.S3 == nil {
		return Report{}, errors.New("no S3 client to read the archive with")
	}
	buckets, err := archives(ctx, c.S3, out)
	if err != nil {
		return Report{}, err
	}
	check := sealCheck{stackKey: out.SealKeyARN, seals: c.Seals}
	var records []Record
	var malformed, hiddenKeys []string
	for _, b := range buckets {
		got, err := readArchive(ctx, c.S3, b, out.Account, opts.Since)
		if err != nil {
			return Report{}, err
		}
		for i := range got.records {
			got.records[i].Seal, got.records[i].Verified = check.of(ctx, got.records[i].Entry, got.keys)
		}
		records = append(records, got.records...)
		malformed, hiddenKeys = append(malformed, got.malformed...), append(hiddenKeys, got.hiddenKeys...)
	}
	rep := Report{Malformed: len(malformed), HiddenKeys: len(hiddenKeys)}
	var listed []Record
	for _, r := range records {
		rep.Read++
		if r.Hidden {
			rep.Hidden++ // whether selected or not: it says what became of the archive, not of the records asked for
		}
		m := Message{ID: r.Entry.Refused, Reason: r.Entry.Record.Reason, Account: r.Entry.Record.Account, EventID: r.Entry.EventID,
			Sender: r.Entry.Record.FirstSender}
		if !opts.selects(m) {
			continue
		}
		rep.Selected++
		if !r.Verified {
			rep.Unsealed++
		}
		listed = append(listed, r)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEPT\tMESSAGE\tREASON\tACCOUNT\tSENDER\tEVENT\tSEAL\tVERSION\tERROR")
	for _, r := range listed {
		e := r.Entry
		why := e.Error
		if len(why) > 120 {
			why = contract.TruncateUTF8(why, 120) + "…"
		}
		version := "current"
		if r.Hidden {
			version = VersionHidden + ": version " + r.VersionID + " read"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.KeptAt.UTC().Format(time.RFC3339), e.Refused, e.Record.Reason, e.Record.Account,
			e.Record.FirstSender, e.EventID, r.Seal, version, why)
	}
	_ = tw.Flush()
	for _, k := range malformed {
		fmt.Fprintf(w, "%s: MALFORMED, no record of this archive (%s): skipped\n", k, archive.Format)
	}
	for _, k := range hiddenKeys {
		fmt.Fprintf(w, "%s: public key %s, its latest version read\n", k, VersionHidden)
	}
	fmt.Fprintf(w, "%d records in the archive%s s3://%s, %d selected, listed: the archive is evidence, never sent from\n", rep.Read,
		map[bool]string{true: "s"}[len(buckets) > 1], strings.Join(buckets, ", s3://"), rep.Selected)
	if rep.Unsealed > 0 {
		fmt.Fprintf(w, "%d whose seal is not verified: a record of the stack's seal key is checked with that key (kms:GetPublicKey), one of a "+
			"former key with its public key kept beside the records (keys/<key id>.pem), never with the key a record carries alone\n", rep.Unsealed)
	}
	if check.unchecked != nil {
		fmt.Fprintf(w, "the stack's seal key %s could not check a seal: %v\n", out.SealKeyARN, check.unchecked)
	}
	if rep.Malformed > 0 {
		fmt.Fprintf(w, "%d objects under %s are no record of this archive: named above, skipped\n", rep.Malformed, archive.RefusedPrefix)
	}
	if rep.Hidden > 0 || rep.HiddenKeys > 0 {
		fmt.Fprintf(w, "WARNING: a delete marker hides %d records and %d public keys of the archive, listed above from their latest version: only "+
			"someone who lifted the archive's policy can place one (docs/security.md, \"The archive\"; CloudTrail records the policy's change)\n",
			rep.Hidden, rep.HiddenKeys)
	}
	return rep, nil
}

// errNoAccount: the archive is read only as the bucket of the bus's account.
var errNoAccount = errors.New("the stack's outputs name no account: the archive is read only as the bucket of the bus's account " +
	"(ExpectedBucketOwner), lest a bucket of its name be another's: is it a bus's stack, updated since it exported its account?")

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

// contents are what one archive holds: its records (since a day), the public keys kept beside them by key ID, the
// objects under refused/ that are no record of it (s3://bucket/key), and the public keys a delete marker hides.
type contents struct {
	records               []Record
	keys                  map[string]*ecdsa.PublicKey
	malformed, hiddenKeys []string
}

// readArchive reads every record of bucket kept since (all when zero), and every public key kept beside them, as the
// bucket of account owner. An object under refused/ that is not JSON of archive.Format is named and skipped: one
// object nobody can read does not hide the others.
func readArchive(ctx context.Context, client S3, bucket, owner string, since time.Time) (contents, error) {
	got := contents{keys: map[string]*ecdsa.PublicKey{}}
	pems, err := objects(ctx, client, bucket, owner, archive.KeysPrefix)
	if err != nil {
		return contents{}, err
	}
	for _, o := range pems {
		b, err := get(ctx, client, bucket, owner, o)
		if err != nil {
			return contents{}, err
		}
		if o.hidden {
			got.hiddenKeys = append(got.hiddenKeys, "s3://"+bucket+"/"+o.key+" (version "+o.versionID+")")
		}
		if pub, err := sealing.ParsePEM(b); err == nil {
			got.keys[keyID(o.key)] = pub
		}
	}
	refused, err := objects(ctx, client, bucket, owner, archive.RefusedPrefix)
	if err != nil {
		return contents{}, err
	}
	for _, o := range refused {
		if !sentSince(o.key, since) {
			continue
		}
		b, err := get(ctx, client, bucket, owner, o)
		if err != nil {
			return contents{}, err
		}
		var e archive.Entry
		if err := json.Unmarshal(b, &e); err != nil || e.Format != archive.Format {
			got.malformed = append(got.malformed, "s3://"+bucket+"/"+o.key)
			continue
		}
		r := Record{Bucket: bucket, Key: o.key, Entry: e, Hidden: o.hidden}
		if o.hidden {
			r.VersionID = o.versionID
		}
		got.records = append(got.records, r)
	}
	return got, nil
}

// object is a key of the archive and the version of it to read: its current one, or, when a delete marker is its
// current version (hidden), its latest that is none.
type object struct {
	key, versionID string
	hidden         bool
	modified       time.Time
}

// objects lists the keys under prefix by their versions (ListObjectVersions), not ListObjectsV2: ListObjectsV2 leaves
// out a key whose current version is a delete marker, and the record it hides with it. A key of delete markers alone
// has nothing to read and is left out. Keys come in their order.
func objects(ctx context.Context, client S3, bucket, owner, prefix string) ([]object, error) {
	byKey := map[string]*object{}
	of := func(key string) *object {
		if byKey[key] == nil {
			byKey[key] = &object{key: key}
		}
		return byKey[key]
	}
	current := map[string]bool{}
	in := &s3.ListObjectVersionsInput{Bucket: aws.String(bucket), Prefix: aws.String(prefix), ExpectedBucketOwner: aws.String(owner)}
	for {
		page, err := client.ListObjectVersions(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("listing s3://%s/%s (its versions, as the bucket of account %s): %w", bucket, prefix, owner, err)
		}
		for _, m := range page.DeleteMarkers {
			if aws.ToBool(m.IsLatest) {
				of(aws.ToString(m.Key)).hidden = true
			}
		}
		for _, v := range page.Versions {
			o, modified := of(aws.ToString(v.Key)), aws.ToTime(v.LastModified)
			switch {
			case current[o.key]:
			case aws.ToBool(v.IsLatest):
				o.versionID, o.modified, current[o.key] = aws.ToString(v.VersionId), modified, true
			case o.versionID == "" || modified.After(o.modified):
				// S3 lists a key's versions newest first ("Listing objects in a versioning-enabled bucket"); the time
				// keeps the newest whatever the order
				o.versionID, o.modified = aws.ToString(v.VersionId), modified
			}
		}
		if !aws.ToBool(page.IsTruncated) {
			break
		}
		in.KeyMarker, in.VersionIdMarker = page.NextKeyMarker, page.NextVersionIdMarker
	}
	var found []object
	for _, o := range byKey {
		if o.versionID != "" {
			found = append(found, *o)
		}
	}
	slices.SortFunc(found, func(a, b object) int { return strings.Compare(a.key, b.key) })
	return found, nil
}

// keyID is the ID of the key whose public key is kept at key (keys/<key id>.pem).
func keyID(key string) string {
	return strings.TrimSuffix(strings.TrimPrefix(key, archive.KeysPrefix), ".pem")
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

// get reads o as the bucket of account owner: its current version, or the version a delete marker hides, by its ID
// (s3:GetObjectVersion, asked only then).
func get(ctx context.Context, client S3, bucket, owner string, o object) ([]byte, error) {
	in := &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(o.key), ExpectedBucketOwner: aws.String(owner)}
	if o.hidden {
		in.VersionId = aws.String(o.versionID)
	}
	obj, err := client.GetObject(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("reading s3://%s/%s (as the bucket of account %s): %w", bucket, o.key, owner, err)
	}
	defer obj.Body.Close()
	return io.ReadAll(obj.Body)
}

// sealCheck checks the archive's seals: with the stack's seal key (stackKey, its ARN; seals, its verifier) for a record
// made with it, with a former key's public key kept in the archive for one of another key.
type sealCheck struct {
	stackKey string
	seals    Verifier
	// unchecked is why the stack's key could not check a seal, the first time.
	unchecked error
}

// of says what e's seal is, keys being the public keys kept beside it by key ID, and whether it verifies.
func (s *sealCheck) of(ctx context.Context, e archive.Entry, keys map[string]*ecdsa.PublicKey) (string, bool) {
	if e.Seal == "" {
		return SealNone, false
	}
	if sealing.BodyDigest(e.Body) != e.Record.BodySHA256 {
		return SealBroken, false // the body kept is not the one sealed
	}
	id := keyID(archive.PublicKeyKey(e.SealKey))
	kept, ok := keys[id]
	if carried, err := sealing.ParsePEM([]byte(e.PublicKey)); err == nil && ok && !carried.Equal(kept) {
		return SealBroken, false // a record that carries another key than the one kept under its key's ID
	}
	if s.stackKey != "" && e.SealKey == s.stackKey {
		if s.seals == nil {
			return SealUnchecked, false
		}
		switch err := s.seals.Verify(ctx, e.Record, e.Seal); {
		case err == nil:
			return SealVerified, true
		case errors.Is(err, sealing.ErrBroken), errors.Is(err, sealing.ErrNoSeal):
			return SealBroken, false
		default:
			if s.unchecked == nil {
				s.unchecked = err
			}
			return SealUnchecked, false
		}
	}
	if !ok {
		return SealNoKey, false
	}
	if sealing.Verify(kept, e.Record, e.Seal) != nil {
		return SealBroken, false
	}
	return fmt.Sprintf(sealFormer, id), true
}

// ledger reads, before a sealed record is sent back from the quarantine, whether a cluster queue received it already:
// the archive's ledger, delivered/<digest>.json (router/archive, Delivery), which the router writes once it delivered
// a record. Sent again, such a record is refused as replayed and raises the replay alarm (docs/security.md,
// "Delivered once"); it is in the quarantine still when a run of this command sent it and could not delete it, or a
// copy of it was sent there again. Nor does a run send one record twice: the quarantine may hold two copies of it.
type ledger struct {
	// archive is the ledger's, read as the bucket of the bus's account; nil when the stack has no archive, and so no
	// ledger (a release before the archive, whose router delivers no sealed record).
	archive *archive.Archive
	// sending are the records this run sends back, by their ledger key.
	sending map[string]bool
	// unread is why the ledger could not be read, the first time.
	unread error
}

// newLedger is the ledger of the archive out names, read with c.S3.
func newLedger(c Clients, out Outputs) (*ledger, error) {
	l := &ledger{sending: map[string]bool{}}
	if out.ArchiveBucket == "" {
		return l, nil
	}
	if out.Account == "" {
		return nil, errNoAccount
	}
	if c.S3 == nil {
		return nil, errors.New("no S3 client to read the archive's ledger with")
	}
	l.archive = archive.New(readOnly{c.S3}, out.ArchiveBucket, out.Account)
	return l, nil
}

// check gives m, about to be sent back, what the ledger says of it: StatusDelivered when a cluster queue received its
// record before (removed from the quarantine: the archive keeps it), StatusLedgerHidden when a delete marker hides its
// entry (the router would refuse it as ledger_hidden), StatusLedgerUnread when the ledger could not be read, and
// StatusDuplicate when this run sends its record already; each is not sent. A message without a seal is not a record
// the ledger holds: the router refuses it as unsealed.
func (l *ledger) check(ctx context.Context, m *Message) {
	if m.Seal == "" {
		return
	}
	if l.archive != nil {
		switch d, err := l.archive.Delivery(ctx, m.record); {
		case errors.Is(err, archive.ErrHidden):
			m.Status = StatusLedgerHidden
			return
		case err != nil:
			m.Status = StatusLedgerUnread
			if l.unread == nil {
				l.unread = err
			}
			return
		case d != nil:
			m.Status = StatusDelivered
			return
		}
	}
	key := archive.DeliveredKey(m.record)
	if l.sending[key] {
		m.Status = StatusDuplicate
		return
	}
	l.sending[key] = true
}

// readOnly is the S3 the ledger is read with: this command writes nothing to the archive (nor may the redrive role).
type readOnly struct{ S3 }

func (readOnly) PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	return nil, errors.New("make requeue writes nothing to the archive")
}
