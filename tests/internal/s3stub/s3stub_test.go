package s3stub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
)

// client is an S3 client of the real SDK as a session of role roleID (or, "", a plain key), with the SDK's default
// request checksums (LoadDefaultConfig's: when supported) unless none.
func client(s *Server, roleID string, checksums bool) *s3.Client {
	key := "AKIA123456789012STUB"
	if roleID != "" {
		key = caller.SessionKey("123456789012", roleID, "s")
	}
	calc := aws.RequestChecksumCalculationWhenRequired
	if checksums {
		calc = aws.RequestChecksumCalculationWhenSupported
	}
	return s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.URL), RequestChecksumCalculation: calc,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: key, SecretAccessKey: "stub", SessionToken: "stub"}, nil
		})})
}

func code(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return fmt.Sprint(err)
}

func put(c *s3.Client, bucket, key, body string, ifNoneMatch string) error {
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader(body)}
	if ifNoneMatch != "" {
		in.IfNoneMatch = aws.String(ifNoneMatch)
	}
	_, err := c.PutObject(context.Background(), in)
	return err
}

// TestConditionalWrites: If-None-Match: * writes a key once; a second write gets 412 PreconditionFailed, and leaves
// the first; another value is not implemented (S3 takes * only). Without the header a versioned bucket keeps both.
func TestConditionalWrites(t *testing.T) {
	s := Start()
	defer s.Close()
	s.CreateBucket("b", "111111111111", nil, Policy{})
	c := client(s, "", true)
	if err := put(c, "b", "k", "first", "*"); err != nil {
		t.Fatal(err)
	}
	if err := put(c, "b", "k", "second", "*"); code(err) != "PreconditionFailed" {
		t.Errorf("a second conditional write: %v, want PreconditionFailed", err)
	}
	if err := put(c, "b", "k", "x", `"etag"`); code(err) != "NotImplemented" {
		t.Errorf("If-None-Match with an ETag: %v, want NotImplemented", err)
	}
	if got := get(t, c, "b", "k"); got != "first" {
		t.Errorf("read %q, want the first write", got)
	}
	if err := put(c, "b", "k", "third", ""); err != nil || s.Versions("b", "k") != 2 {
		t.Errorf("an unconditional write: %v, %d versions; want a second version", err, s.Versions("b", "k"))
	}
	if _, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("none")}); code(err) != "NoSuchKey" {
		t.Errorf("a missing key: %v, want NoSuchKey", err)
	}
	if err := put(c, "nobucket", "k", "x", ""); code(err) != "NoSuchBucket" {
		t.Errorf("a missing bucket: %v, want NoSuchBucket", err)
	}
}

func get(t *testing.T, c *s3.Client, bucket, key string) string {
	t.Helper()
	out, err := c.GetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(out.Body)
	return string(b)
}

// TestObjectLock: an upload to a bucket with Object Lock needs Content-MD5 or a checksum (the SDK's default request
// checksum is one) and gets the bucket's default retention; a version under retention is deleted by nobody in
// compliance mode, in governance mode only with x-amz-bypass-governance-retention; once the retention ends it may be
// deleted; a delete without a version only adds a delete marker.
func TestObjectLock(t *testing.T) {
	for _, mode := range []string{"GOVERNANCE", "COMPLIANCE"} {
		t.Run(mode, func(t *testing.T) {
			s := Start()
			defer s.Close()
			now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
			s.SetClock(func() time.Time { return now })
			s.CreateBucket("locked", "111111111111", &Retention{Mode: mode, Days: 1}, Policy{})
			if err := put(client(s, "", false), "locked", "k", "x", "*"); code(err) != "InvalidRequest" {
				t.Errorf("no checksum: %v, want InvalidRequest", err)
			}
			c := client(s, "", true)
			out, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("locked"), Key: aws.String("k"), Body: strings.NewReader("x")})
			if err != nil {
				t.Fatal(err)
			}
			del := func(bypass bool) error {
				in := &s3.DeleteObjectInput{Bucket: aws.String("locked"), Key: aws.String("k"), VersionId: out.VersionId}
				if bypass {
					in.BypassGovernanceRetention = aws.Bool(true)
				}
				_, err := c.DeleteObject(context.Background(), in)
				return err
			}
			if err := del(false); code(err) != "AccessDenied" {
				t.Errorf("deleting a locked version: %v, want AccessDenied", err)
			}
			err = del(true)
			if want := map[string]string{"GOVERNANCE": "<nil>", "COMPLIANCE": "AccessDenied"}[mode]; fmt.Sprint(code(err)) != want && (want != "<nil>" || err != nil) {
				t.Errorf("deleting it with the bypass: %v, want %s", err, want)
			}
			if mode == "COMPLIANCE" {
				now = now.Add(25 * time.Hour)
				if err := del(false); err != nil {
					t.Errorf("deleting it once its retention ended: %v", err)
				}
			}
			if _, err := c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String("locked"), Key: aws.String("other")}); err != nil {
				t.Errorf("a delete marker: %v", err)
			}
		})
	}
}

// TestTheArchivesPolicy: with the archive's policy, only the writer's sessions put, only conditionally; nobody
// deletes anything, a delete marker included, nor bypasses governance retention.
func TestTheArchivesPolicy(t *testing.T) {
	s := Start()
	defer s.Close()
	s.CreateBucket("archive", "111111111111", &Retention{Mode: "GOVERNANCE", Days: 365}, Policy{Writer: "AROAROUTER", Conditional: true, NoDeletes: true})
	router, admin := client(s, "AROAROUTER", true), client(s, "AROAADMIN", true)
	if err := put(admin, "archive", "k", "forged", "*"); code(err) != "AccessDenied" {
		t.Errorf("another role's put: %v, want AccessDenied", err)
	}
	if err := put(router, "archive", "k", "x", ""); code(err) != "AccessDenied" {
		t.Errorf("an unconditional put: %v, want AccessDenied", err)
	}
	if err := put(router, "archive", "k", "x", "*"); err != nil {
		t.Fatal(err)
	}
	for _, in := range []*s3.DeleteObjectInput{
		{Bucket: aws.String("archive"), Key: aws.String("k")},
		{Bucket: aws.String("archive"), Key: aws.String("k"), VersionId: aws.String("v1"), BypassGovernanceRetention: aws.Bool(true)},
	} {
		for _, c := range []*s3.Client{admin, router} {
			if _, err := c.DeleteObject(context.Background(), in); code(err) != "AccessDenied" {
				t.Errorf("delete %v: %v, want AccessDenied", aws.ToString(in.VersionId), err)
			}
		}
	}
	if fmt.Sprint(s.Keys("archive")) != "[k]" || s.Versions("archive", "k") != 1 {
		t.Errorf("the archive holds %v (%d versions)", s.Keys("archive"), s.Versions("archive", "k"))
	}
}

// TestListObjectsV2: keys under a prefix, in order, paged by max-keys with a continuation token; keys behind a delete
// marker are not listed.
func TestListObjectsV2(t *testing.T) {
	s := Start()
	defer s.Close()
	s.CreateBucket("b", "111111111111", nil, Policy{})
	c := client(s, "", true)
	for _, k := range []string{"refused/3", "refused/1", "keys/k", "refused/2", "refused/gone"} {
		if err := put(c, "b", k, "x", ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: aws.String("b"), Key: aws.String("refused/gone")}); err != nil {
		t.Fatal(err)
	}
	var got []string
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String("b"), Prefix: aws.String("refused/"), MaxKeys: aws.Int32(2)})
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, o := range out.Contents {
			got = append(got, aws.ToString(o.Key))
		}
	}
	if fmt.Sprint(got) != "[refused/1 refused/2 refused/3]" || pages != 2 {
		t.Errorf("listed %v in %d pages", got, pages)
	}
}

// TestChecksumsAndBuckets: a put naming its algorithm (SHA-256, as the router's do) is taken, and one whose SHA-256
// does not match its body is refused (BadDigest), as S3 does; ListBuckets answers the buckets of the prefix asked.
func TestChecksumsAndBuckets(t *testing.T) {
	s := Start()
	defer s.Close()
	s.CreateBucket("kib-prod-archive-111111111111-eu-west-1", "111111111111", &Retention{Mode: "GOVERNANCE", Days: 1}, Policy{})
	s.CreateBucket("kib-prod-archive-20261101000000000000000001", "111111111111", nil, Policy{})
	s.CreateBucket("kib-prod-logs", "111111111111", nil, Policy{})
	c := client(s, "", false)
	ctx := context.Background()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("kib-prod-archive-111111111111-eu-west-1"), Key: aws.String("k"),
		Body: strings.NewReader("x"), ChecksumAlgorithm: s3types.ChecksumAlgorithmSha256}); err != nil {
		t.Errorf("a put naming SHA-256: %v", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("kib-prod-archive-111111111111-eu-west-1"), Key: aws.String("j"),
		Body: strings.NewReader("x"), ChecksumSHA256: aws.String("n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=")}); code(err) != "BadDigest" {
		t.Errorf("a SHA-256 of another body: %v, want BadDigest", err)
	}
	out, err := c.ListBuckets(ctx, &s3.ListBucketsInput{Prefix: aws.String("kib-prod-archive-")})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range out.Buckets {
		names = append(names, aws.ToString(b.Name))
	}
	if fmt.Sprint(names) != "[kib-prod-archive-111111111111-eu-west-1 kib-prod-archive-20261101000000000000000001]" {
		t.Errorf("ListBuckets by prefix: %v", names)
	}
}

// TestOwnerVersionsAndMarkers: a call naming another owner than the bucket's is refused (AccessDenied), naming its own
// is served; ListObjectVersions lists each version and delete marker under a prefix, the latest of each key marked; a
// GetObject of a key a delete marker hides answers NoSuchKey with x-amz-delete-marker: true, a missing key without it;
// a stalled stub answers nothing until resumed.
func TestOwnerVersionsAndMarkers(t *testing.T) {
	s := Start()
	defer s.Close()
	s.CreateBucket("b", "111111111111", nil, Policy{})
	c := client(s, "", true)
	ctx := context.Background()
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("p/k"), Body: strings.NewReader("x"),
		ExpectedBucketOwner: aws.String("222222222222")}); code(err) != "AccessDenied" {
		t.Errorf("a put naming another owner: %v, want AccessDenied", err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("p/k"), Body: strings.NewReader("x"),
		ExpectedBucketOwner: aws.String("111111111111")}); err != nil {
		t.Errorf("a put naming its owner: %v", err)
	}
	if err := put(c, "b", "p/j", "y", ""); err != nil {
		t.Fatal(err)
	}
	s.Hide("b", "p/j")
	out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String("b"), Prefix: aws.String("p/")})
	if err != nil || len(out.Versions) != 2 || len(out.DeleteMarkers) != 1 || aws.ToString(out.DeleteMarkers[0].Key) != "p/j" ||
		!aws.ToBool(out.DeleteMarkers[0].IsLatest) {
		t.Fatalf("versions under p/: %+v %+v (%v)", out.Versions, out.DeleteMarkers, err)
	}
	for _, v := range out.Versions {
		if latest := aws.ToBool(v.IsLatest); latest != (aws.ToString(v.Key) == "p/k") {
			t.Errorf("%s latest %t", aws.ToString(v.Key), latest)
		}
	}
	_, err = c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("p/j")})
	var re interface{ HTTPStatusCode() int }
	if code(err) != "NoSuchKey" || !errors.As(err, &re) || re.HTTPStatusCode() != 404 {
		t.Errorf("a hidden key: %v, want NoSuchKey", err)
	}
	if !strings.Contains(deleteMarkerHeader(t, s, "p/j"), "true") || deleteMarkerHeader(t, s, "p/none") != "" {
		t.Error("x-amz-delete-marker is not true on a hidden key alone")
	}
	resume := s.Stall()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := c.GetObject(short, &s3.GetObjectInput{Bucket: aws.String("b"), Key: aws.String("p/k")}); err == nil {
		t.Error("a stalled stub answered")
	}
	resume()
	if got := get(t, c, "b", "p/k"); got != "x" {
		t.Errorf("resumed: read %q", got)
	}
}

// deleteMarkerHeader is the x-amz-delete-marker header the stub answers a GetObject of key in bucket b with.
func deleteMarkerHeader(t *testing.T, s *Server, key string) string {
	t.Helper()
	resp, err := http.Get(s.URL + "/b/" + key)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.Header.Get("x-amz-delete-marker")
}
