package route

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// TestAHungCallNeverHoldsTheInvocationPastItsDeadline: one cluster queue's sends hang (no answer until the call's
// context ends). The invocation still returns before Lambda's deadline, which it must (past it, Lambda ignores the
// batch's failures and takes every message back, the delivered ones too): the other cluster's event delivered, the hung
// one listed for redelivery and its return scheduled while the invocation had time. With the redelivery's call hung
// too, the invocation still returns in time. Broken on purpose (the live wave within the invocation's own context, or
// no reserve for the return), the invocation returns late or the retry is never scheduled.
func TestAHungCallNeverHoldsTheInvocationPastItsDeadline(t *testing.T) {
	for _, tc := range []struct {
		name          string
		hungRedeliver bool
	}{
		{"a send hung", false},
		{"a send and the redelivery hung", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(map[string]string{instance(1): "alpha", instance(2): "beta"}, "alpha", "beta")
			h.sqs.hang = map[string]bool{queuename.For(qprefix, "beta"): true}
			h.redeliver.hang = tc.hungRedeliver
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
			defer cancel()
			resp, err := h.r.Handle(ctx, batch(spot(instance(1)), spot(instance(2))))
			if ctx.Err() != nil {
				t.Errorf("the invocation returned after its deadline")
			}
			if err != nil || !slices.Equal(failedIDs(resp), []string{"m1"}) {
				t.Fatalf("retried %v (%v); want the hung queue's event only, m1", failedIDs(resp), err)
			}
			if got := h.received("alpha"); len(got) != 1 {
				t.Errorf("alpha received %d; want its event", len(got))
			}
			h.redeliver.mu.Lock()
			defer h.redeliver.mu.Unlock()
			if _, ok := h.redeliver.later["rh1"]; !ok && !tc.hungRedeliver {
				t.Errorf("the hung event's return was not scheduled (%v); want it scheduled within the invocation", h.redeliver.later)
			}
		})
	}
}

// TestAMessageTwiceInABatchIsListedOnce: SQS may hand the same message twice in one batch (at-least-once delivery);
// retried both times, its ID is listed once in the batch's failures.
func TestAMessageTwiceInABatchIsListedOnce(t *testing.T) {
	h := newHarness(map[string]string{instance(1): "alpha"}, "alpha")
	h.sqs.sendErr[queuename.For(qprefix, "alpha")] = errors.New("throttled")
	in := batch(spot(instance(1)), spot(instance(1)))
	in.Records[1].MessageId = in.Records[0].MessageId
	resp, err := h.r.Handle(context.Background(), in)
	if err != nil || !slices.Equal(failedIDs(resp), []string{"m0"}) {
		t.Fatalf("retried %v (%v); want m0 once", failedIDs(resp), err)
	}
}
