package redeliver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

func TestDelay(t *testing.T) {
	s := New(nil, "u", 2*time.Second, time.Minute)
	tests := []struct {
		receives int
		want     time.Duration
	}{
		{0, 2 * time.Second}, {1, 2 * time.Second}, {2, 4 * time.Second}, {3, 8 * time.Second}, {5, 32 * time.Second},
		{6, time.Minute}, {40, time.Minute}, {1000, time.Minute},
	}
	for _, tt := range tests {
		if got := s.Delay(tt.receives); got != tt.want {
			t.Errorf("Delay(%d) = %s, want %s", tt.receives, got, tt.want)
		}
	}
	if got := New(nil, "u", 300*time.Millisecond, time.Second).Delay(1); got != time.Second {
		t.Errorf("a sub-second delay = %s, want whole seconds, at least 1", got)
	}
}

type fakeSQS struct {
	in  *sqs.ChangeMessageVisibilityInput
	err error
}

func (f *fakeSQS) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	f.in = in
	return &sqs.ChangeMessageVisibilityOutput{}, f.err
}

func TestLater(t *testing.T) {
	f := &fakeSQS{}
	d, err := New(f, "https://sqs/central", 2*time.Second, time.Minute).Later(context.Background(), "rh", 3)
	if err != nil || d != 8*time.Second {
		t.Fatalf("Later = %s, %v", d, err)
	}
	if aws.ToString(f.in.QueueUrl) != "https://sqs/central" || aws.ToString(f.in.ReceiptHandle) != "rh" || f.in.VisibilityTimeout != 8 {
		t.Errorf("ChangeMessageVisibility(%+v), want the central queue, the receipt handle and 8 s", f.in)
	}
	f.err = errors.New("throttled")
	if _, err := New(f, "u", time.Second, time.Second).Later(context.Background(), "rh", 1); err == nil {
		t.Error("a failed call was not reported")
	}
}
