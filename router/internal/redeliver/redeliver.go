// Package redeliver brings a message left for redelivery back soon. Lambda leaves a failed message invisible
// until the central queue's visibility timeout ends (six function timeouts and more), far longer than a spot
// warning's two minutes; shortening that message's visibility to a backoff on its receive count makes a
// transient failure cost seconds instead, while the queue's timeout still covers a whole invocation.
package redeliver

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// SQS is the one call the scheduler makes.
type SQS interface {
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

var _ SQS = (*sqs.Client)(nil)

// Scheduler shortens the visibility of messages of one queue.
type Scheduler struct {
	sqs        SQS
	queueURL   string
	base, ceil time.Duration
}

// New returns a Scheduler for the queue at queueURL whose first delay is base, doubling with each receive up to
// ceil.
func New(client SQS, queueURL string, base, ceil time.Duration) *Scheduler {
	return &Scheduler{sqs: client, queueURL: queueURL, base: base, ceil: max(ceil, base)}
}

// Delay is how long a message received receiveCount times stays away: base × 2^(receiveCount-1), at most ceil,
// in whole seconds (what SQS takes), at least one.
func (s *Scheduler) Delay(receiveCount int) time.Duration {
	d := s.ceil
	if n := max(receiveCount, 1) - 1; n < 62 {
		if b := s.base << n; b > 0 && b < s.ceil {
			d = b
		}
	}
	return time.Duration(max(1, math.Ceil(d.Seconds()))) * time.Second
}

// Later makes the message with receiptHandle, received receiveCount times, visible again after Delay.
func (s *Scheduler) Later(ctx context.Context, receiptHandle string, receiveCount int) (time.Duration, error) {
	d := s.Delay(receiveCount)
	if _, err := s.sqs.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: &s.queueURL, ReceiptHandle: &receiptHandle, VisibilityTimeout: int32(d / time.Second),
	}); err != nil {
		return 0, fmt.Errorf("changing the visibility of a retried message: %w", err)
	}
	return d, nil
}
