// Package forward sends event bodies, unchanged, to the clusters' interruption queues.
package forward

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/hashicorp/golang-lru/v2/expirable"
)

// SQS is the subset of the SQS API the forwarder calls.
type SQS interface {
	GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

var _ SQS = (*sqs.Client)(nil)

const (
	// MaxBatchEntries is SendMessageBatch's entry limit.
	MaxBatchEntries = 10
	// MaxBatchBytes is SendMessageBatch's limit on the sum of its bodies.
	MaxBatchBytes = 1 << 20
	// legacyNoQueueCode is how older SQS endpoints and emulators (goaws) name a missing queue.
	legacyNoQueueCode = "AWS.SimpleQueueService.NonExistentQueue"
)

// ErrNoQueue marks a destination queue that does not exist: the cluster is not on the bus.
var ErrNoQueue = errors.New("queue does not exist")

// entryIDs are the batch entry ids; an entry's id is its index in the batch.
var entryIDs = [MaxBatchEntries]string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// Queue names a destination queue; the router derives Name from the owning cluster.
type Queue struct {
	Account, Region, Name string
}

// Options configures a Forwarder.
type Options struct {
	CacheSize int
	// URLTTL bounds how long a resolved queue URL is reused.
	URLTTL time.Duration
	// MissingTTL is how long a missing queue is remembered before GetQueueUrl is asked again.
	MissingTTL time.Duration
}

// Forwarder sends bodies to queues, resolving and caching their URLs. It is safe for concurrent use.
type Forwarder struct {
	sqs     SQS
	urls    *expirable.LRU[Queue, string]
	missing *expirable.LRU[Queue, struct{}]
}

// New returns a Forwarder using client.
func New(client SQS, opts Options) *Forwarder {
	return &Forwarder{
		sqs:     client,
		urls:    expirable.NewLRU[Queue, string](opts.CacheSize, nil, opts.URLTTL),
		missing: expirable.NewLRU[Queue, struct{}](opts.CacheSize, nil, opts.MissingTTL),
	}
}

// Send forwards each body to q and returns one error per body: nil when SQS accepted it, ErrNoQueue (wrapped)
// when q does not exist, anything else when sending may succeed if tried again. Bodies go in as few
// SendMessageBatch calls as the entry and size limits allow.
func (f *Forwarder) Send(ctx context.Context, q Queue, bodies []*string) []error {
	errs := make([]error, len(bodies))
	url, err := f.url(ctx, q)
	if err != nil {
		fill(errs, err)
		return errs
	}
	inRegion := func(o *sqs.Options) { o.Region = q.Region }
	entries := make([]types.SendMessageBatchRequestEntry, 0, min(len(bodies), MaxBatchEntries))
	for start := 0; start < len(bodies); {
		entries, size := entries[:0], 0
		end := start
		for end < len(bodies) && len(entries) < MaxBatchEntries && (len(entries) == 0 || size+len(*bodies[end]) <= MaxBatchBytes) {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: &entryIDs[len(entries)], MessageBody: bodies[end]})
			size += len(*bodies[end])
			end++
		}
		f.sendBatch(ctx, q, url, entries, errs[start:end], inRegion)
		start = end
	}
	return errs
}

func (f *Forwarder) sendBatch(ctx context.Context, q Queue, url string, entries []types.SendMessageBatchRequestEntry, errs []error, inRegion func(*sqs.Options)) {
	out, err := f.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &url, Entries: entries}, inRegion)
	if err != nil {
		if isMissingQueue(err) {
			// Deleted since its URL was cached; the retry asks GetQueueUrl again and then knows for sure.
			f.urls.Remove(q)
		}
		fill(errs, fmt.Errorf("sending to %s: %w", q.Name, err))
		return
	}
	var done [MaxBatchEntries]bool // entries answered, by index
	for _, s := range out.Successful {
		if i, ok := entryIndex(s.Id, len(entries)); ok {
			done[i] = true
		}
	}
	for _, e := range out.Failed {
		if i, ok := entryIndex(e.Id, len(entries)); ok && !done[i] {
			errs[i] = fmt.Errorf("sending to %s: entry failed: %s: %s (sender fault %t)", q.Name, aws.ToString(e.Code), aws.ToString(e.Message), e.SenderFault)
			done[i] = true
		}
	}
	for i := range entries {
		if !done[i] {
			errs[i] = fmt.Errorf("sending to %s: entry %d missing from the response", q.Name, i)
		}
	}
}

// url returns q's URL from the cache or GetQueueUrl, in the queue's own account.
func (f *Forwarder) url(ctx context.Context, q Queue) (string, error) {
	if u, ok := f.urls.Get(q); ok {
		return u, nil
	}
	if _, ok := f.missing.Get(q); ok {
		return "", fmt.Errorf("queue %s: %w", q.Name, ErrNoQueue)
	}
	out, err := f.sqs.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &q.Name, QueueOwnerAWSAccountId: &q.Account},
		func(o *sqs.Options) { o.Region = q.Region })
	switch {
	case isMissingQueue(err):
		f.missing.Add(q, struct{}{})
		return "", fmt.Errorf("queue %s: %w", q.Name, ErrNoQueue)
	case err != nil:
		return "", fmt.Errorf("getting URL of queue %s: %w", q.Name, err)
	}
	u := aws.ToString(out.QueueUrl)
	f.urls.Add(q, u)
	return u, nil
}

func isMissingQueue(err error) bool {
	if err == nil {
		return false
	}
	var noQueue *types.QueueDoesNotExist
	if errors.As(err, &noQueue) {
		return true
	}
	var apiErr smithy.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode() == legacyNoQueueCode
}

func entryIndex(id *string, n int) (int, bool) {
	for i := range n {
		if aws.ToString(id) == entryIDs[i] {
			return i, true
		}
	}
	return 0, false
}

func fill(errs []error, err error) {
	for i := range errs {
		errs[i] = err
	}
}
