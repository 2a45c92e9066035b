package forward

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// fakeSQS records calls; per-call behaviour comes from its function fields.
type fakeSQS struct {
	getURL      func(name string) (string, error)
	send        func(call int, in *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error)
	urlCalls    []sqs.GetQueueUrlInput
	batches     [][]string
	sendRegions []string
}

func (f *fakeSQS) GetQueueUrl(_ context.Context, in *sqs.GetQueueUrlInput, _ ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error) {
	f.urlCalls = append(f.urlCalls, *in)
	u, err := f.getURL(aws.ToString(in.QueueName))
	if err != nil {
		return nil, err
	}
	return &sqs.GetQueueUrlOutput{QueueUrl: aws.String(u)}, nil
}

func (f *fakeSQS) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	var o sqs.Options
	for _, fn := range optFns {
		fn(&o)
	}
	f.sendRegions = append(f.sendRegions, o.Region)
	var bodies []string
	for _, e := range in.Entries {
		bodies = append(bodies, aws.ToString(e.MessageBody))
	}
	f.batches = append(f.batches, bodies)
	if f.send != nil {
		return f.send(len(f.batches)-1, in)
	}
	return allOK(in), nil
}

func allOK(in *sqs.SendMessageBatchInput) *sqs.SendMessageBatchOutput {
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id})
	}
	return out
}

func urlOf(name string) (string, error) { return "https://sqs.test/123456789012/" + name, nil }

var q = Queue{Account: "123456789012", Region: "eu-west-1", Name: "kib-a"}

func newForwarder(f *fakeSQS) *Forwarder {
	return New(f, Options{CacheSize: 100, URLTTL: time.Hour, MissingTTL: time.Hour})
}

func bodies(sizes ...int) []*string {
	out := make([]*string, len(sizes))
	for i, n := range sizes {
		s := strings.Repeat(string(rune('a'+i%26)), n)
		out[i] = &s
	}
	return out
}

func repeat(n, size int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = size
	}
	return out
}

func TestSendBatching(t *testing.T) {
	const kib = 1 << 10
	tests := []struct {
		name  string
		sizes []int
		want  []int // entries per SendMessageBatch call
	}{
		{"one", []int{100}, []int{1}},
		{"ten", repeat(10, 100), []int{10}},
		{"eleven", repeat(11, 100), []int{10, 1}},
		{"twenty-five", repeat(25, 100), []int{10, 10, 5}},
		{"size splits before count", repeat(3, 400*kib), []int{2, 1}},
		{"a 1 MiB body goes alone", []int{100, MaxBatchBytes, 100}, []int{1, 1, 1}},
		{"exactly 1 MiB in total fits", []int{MaxBatchBytes / 2, MaxBatchBytes / 2}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSQS{getURL: urlOf}
			in := bodies(tt.sizes...)
			errs := newForwarder(f).Send(context.Background(), q, in)
			var got []int
			var sent []string
			for _, b := range f.batches {
				got = append(got, len(b))
				sent = append(sent, b...)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("batches of %v entries, want %v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Fatalf("batches of %v entries, want %v", got, tt.want)
				}
			}
			for i, err := range errs {
				if err != nil {
					t.Errorf("body %d: %v", i, err)
				}
				if sent[i] != *in[i] {
					t.Errorf("body %d changed or reordered in flight", i)
				}
			}
			for _, r := range f.sendRegions {
				if r != q.Region {
					t.Errorf("sent in region %q, want the queue's %q", r, q.Region)
				}
			}
		})
	}
}

func TestSendCachesURL(t *testing.T) {
	f := &fakeSQS{getURL: urlOf}
	fw := newForwarder(f)
	fw.Send(context.Background(), q, bodies(1))
	fw.Send(context.Background(), q, bodies(1))
	if len(f.urlCalls) != 1 {
		t.Fatalf("GetQueueUrl calls = %d, want 1", len(f.urlCalls))
	}
	if got := aws.ToString(f.urlCalls[0].QueueOwnerAWSAccountId); got != q.Account {
		t.Errorf("QueueOwnerAWSAccountId = %q, want the event's account %q", got, q.Account)
	}
}

func TestSendMissingQueue(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"typed", &types.QueueDoesNotExist{Message: aws.String("gone")}},
		{"legacy code", &smithy.GenericAPIError{Code: legacyNoQueueCode, Message: "gone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeSQS{getURL: func(string) (string, error) { return "", tt.err }}
			fw := newForwarder(f)
			for range 2 {
				errs := fw.Send(context.Background(), q, bodies(1, 1))
				for _, err := range errs {
					if !errors.Is(err, ErrNoQueue) {
						t.Fatalf("error = %v, want ErrNoQueue", err)
					}
				}
			}
			if len(f.urlCalls) != 1 || len(f.batches) != 0 {
				t.Fatalf("GetQueueUrl calls = %d, sends = %d; want 1 and 0 (missing queue cached)", len(f.urlCalls), len(f.batches))
			}
		})
	}
}

func TestSendTransientURLErrorIsNotCached(t *testing.T) {
	fail := true
	f := &fakeSQS{getURL: func(n string) (string, error) {
		if fail {
			return "", &smithy.GenericAPIError{Code: "ThrottlingException"}
		}
		return urlOf(n)
	}}
	fw := newForwarder(f)
	errs := fw.Send(context.Background(), q, bodies(1))
	if errs[0] == nil || errors.Is(errs[0], ErrNoQueue) {
		t.Fatalf("error = %v, want a transient error", errs[0])
	}
	fail = false
	if errs := fw.Send(context.Background(), q, bodies(1)); errs[0] != nil {
		t.Fatalf("after recovery: %v", errs[0])
	}
}

func TestSendPartialFailure(t *testing.T) {
	f := &fakeSQS{getURL: urlOf, send: func(_ int, in *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		out := allOK(in)
		// Entry 1 failed inside an HTTP 200; entry 3 is in neither list.
		out.Successful = []types.SendMessageBatchResultEntry{{Id: in.Entries[0].Id}, {Id: in.Entries[2].Id}}
		out.Failed = []types.BatchResultErrorEntry{{Id: in.Entries[1].Id, Code: aws.String("InternalError"), Message: aws.String("boom")}}
		return out, nil
	}}
	errs := newForwarder(f).Send(context.Background(), q, bodies(1, 1, 1, 1))
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("successful entries reported errors: %v, %v", errs[0], errs[2])
	}
	if errs[1] == nil || !strings.Contains(errs[1].Error(), "InternalError") {
		t.Errorf("failed entry: %v, want its InternalError", errs[1])
	}
	if errs[3] == nil || !strings.Contains(errs[3].Error(), "missing from the response") {
		t.Errorf("unanswered entry: %v, want an error", errs[3])
	}
}

func TestSendQueueDeletedAfterURLCached(t *testing.T) {
	f := &fakeSQS{getURL: urlOf}
	fw := newForwarder(f)
	fw.Send(context.Background(), q, bodies(1))
	f.send = func(int, *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		return nil, &types.QueueDoesNotExist{}
	}
	errs := fw.Send(context.Background(), q, bodies(1))
	if errs[0] == nil || errors.Is(errs[0], ErrNoQueue) {
		t.Fatalf("error = %v, want a retryable error, not yet ErrNoQueue", errs[0])
	}
	f.getURL = func(string) (string, error) { return "", &types.QueueDoesNotExist{} }
	errs = fw.Send(context.Background(), q, bodies(1))
	if !errors.Is(errs[0], ErrNoQueue) || len(f.urlCalls) != 2 {
		t.Fatalf("on retry error = %v after %d GetQueueUrl calls, want ErrNoQueue after a fresh lookup", errs[0], len(f.urlCalls))
	}
}
