// Package deadline gives the stages of an invocation deadlines ahead of Lambda's own. Why: a handler that has not
// returned by the invocation's deadline has timed out, and Lambda then ignores its batchItemFailures and takes the
// whole batch back after the visibility timeout, the messages it delivered included ("Handling errors for an SQS
// event source in Lambda", https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-errorhandling.html). A call
// that hangs (no AWS client of the router has a deadline of its own but the evidence path's) must end early enough
// for the invocation to say what it did.
package deadline

import (
	"context"
	"time"
)

// returnReserve is what an invocation's last calls leave of it: the time to return its results to Lambda.
const returnReserve = 500 * time.Millisecond

// Returning is ctx ending returnReserve before its deadline (or a twentieth of the time left, when that is less): the
// context of everything an invocation does before it returns.
func Returning(ctx context.Context) (context.Context, context.CancelFunc) {
	return Before(ctx, returnReserve, 20)
}

// Before returns ctx ending reserve before its deadline, or 1/share of the time left before it when that is less;
// with no deadline, ctx with a cancel.
func Before(ctx context.Context, reserve time.Duration, share int) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, d.Add(-min(reserve, time.Until(d)/time.Duration(share))))
}
