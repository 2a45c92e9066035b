package bucketowner

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// fakeS3 answers HeadBucket with the status of each request in turn (0: a failure that carries none), recording
// which owner each named.
type fakeS3 struct {
	statuses []int
	owners   []string
}

func (f *fakeS3) HeadBucket(_ context.Context, in *s3.HeadBucketInput, _ ...func(*s3.Options)) (*s3.HeadBucketOutput, error) {
	f.owners = append(f.owners, aws.ToString(in.ExpectedBucketOwner))
	code := f.statuses[len(f.owners)-1]
	switch code {
	case http.StatusOK:
		return &s3.HeadBucketOutput{}, nil
	case 0:
		return nil, errors.New("dial tcp: connection refused")
	}
	return nil, &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New(http.StatusText(code))}
}

// TestRead: what S3's answers to HeadBucket, asked first with the account as the expected owner and then, refused,
// with none, say of the bucket.
func TestRead(t *testing.T) {
	for _, tt := range []struct {
		statuses []int
		want     Answer
		err      bool
	}{
		{[]int{200}, Owned, false},
		{[]int{404}, Missing, false},
		{[]int{301}, ElsewhereRegion, false},
		{[]int{403, 200}, Foreign, false},
		{[]int{403, 403}, Refused, false},
		{[]int{403, 404}, Missing, false},
		{[]int{403, 500}, NotChecked, true},
		{[]int{500}, NotChecked, true},
		{[]int{0}, NotChecked, true},
	} {
		f := &fakeS3{statuses: tt.statuses}
		got, err := Read(context.Background(), f, "kib-dev-archive-123456789012-eu-west-1", "123456789012")
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("%v: %q, %v; want %q, an error %v", tt.statuses, got, err, tt.want, tt.err)
		}
		if len(f.owners) != len(tt.statuses) || f.owners[0] != "123456789012" || len(f.owners) == 2 && f.owners[1] != "" {
			t.Errorf("%v: asked as the buckets of %q, want the account's, then anyone's when refused", tt.statuses, f.owners)
		}
	}
	if !Owned.Adoptable() || Missing.Adoptable() || Foreign.Adoptable() || Refused.Adoptable() || NotChecked.Adoptable() {
		t.Error("only a bucket the account owns may be adopted")
	}
}
