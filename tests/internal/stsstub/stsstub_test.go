package stsstub

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscreds "github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
)

// TestARoleThatRequiresASourceIdentity: through the AWS SDK, a role whose trust requires a source identity refuses a
// session opened without one (AccessDenied), and one whose value begins with aws: (ValidationError), as STS does; a
// session opened with one carries it, by its access key, as CloudTrail records it; another role takes any session.
func TestARoleThatRequiresASourceIdentity(t *testing.T) {
	const redrive, reader = "arn:aws:iam::123456789012:role/kib-redrive", "arn:aws:iam::222222222222:role/kib-reader"
	s := Start(map[string]string{redrive: "123456789012", reader: "123456789012"}, "123456789012")
	defer s.Close()
	s.RequireSourceIdentity(redrive)
	c := sts.New(sts.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.URL),
		Credentials: awscreds.NewStaticCredentialsProvider(caller.AccessKey("123456789012", false), "s", "")})
	ctx := context.Background()
	var api smithy.APIError
	for si, code := range map[string]string{"": "AccessDenied", "aws:alice": "ValidationError"} {
		in := &sts.AssumeRoleInput{RoleArn: aws.String(redrive), RoleSessionName: aws.String("alice")}
		if si != "" {
			in.SourceIdentity = aws.String(si)
		}
		if _, err := c.AssumeRole(ctx, in); !errors.As(err, &api) || api.ErrorCode() != code {
			t.Errorf("source identity %q: %v, want %s", si, err, code)
		}
	}
	out, err := c.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(redrive), RoleSessionName: aws.String("alice"), SourceIdentity: aws.String("alice")})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.SourceIdentity(aws.ToString(out.Credentials.AccessKeyId)); got != "alice" {
		t.Errorf("the session's source identity is %q, want alice", got)
	}
	if _, err := c.AssumeRole(ctx, &sts.AssumeRoleInput{RoleArn: aws.String(reader), RoleSessionName: aws.String("router")}); err != nil {
		t.Errorf("a role that requires none: %v", err)
	}
}
