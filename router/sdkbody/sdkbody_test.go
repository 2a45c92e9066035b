package sdkbody_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sdkbody"
)

// transport answers as a fast peer does: the whole request body read (the Content-Length bytes), the answer given.
// It keeps the body, which Go's transport would go on to read after the answer came back (net/http/transfer.go,
// writeBody, the check that nothing follows the Content-Length bytes).
type transport struct {
	sent []byte
	body io.ReadCloser
}

func (t *transport) Do(r *http.Request) (*http.Response, error) {
	t.body = r.Body
	t.sent, _ = io.ReadAll(io.LimitReader(r.Body, r.ContentLength))
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body: io.NopCloser(strings.NewReader(`{"Messages":[]}`)), Request: r}, nil
}

// TestTheCheckAfterTheAnswerFindsTheEnd: once the SDK has its answer (and has closed the body it gave the
// transport), the transport's check that the body holds nothing more ends as at the end of a body, with the option;
// without it, it fails with io.EOF, on which Go's transport closes the connection the answer is read from.
func TestTheCheckAfterTheAnswerFindsTheEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		options []func(*middleware.Stack) error
		want    error
	}{
		{"with the option", []func(*middleware.Stack) error{sdkbody.Option}, nil},
		{"without it (smithy-go's reader)", nil, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &transport{}
			client := sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"), HTTPClient: tr,
				Credentials: aws.AnonymousCredentials{}, APIOptions: tc.options})
			if _, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String("http://127.0.0.1:1/123456789012/q"),
				MaxNumberOfMessages: 10}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(tr.sent, []byte(`"MaxNumberOfMessages":10`)) {
				t.Fatalf("the transport was sent %q, want the request", tr.sent)
			}
			n, err := io.Copy(io.Discard, tr.body)
			if n != 0 || !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("the check after the answer read %d bytes, ended with %v; want 0, %v", n, err, tc.want)
			}
		})
	}
}
