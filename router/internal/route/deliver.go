package route

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/canary"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
)

// takeCanary reports whether message m may go to queue q of cluster c: any event may; a canary only when the cluster
// had none less than the canary interval ago (canary.Limiter), the cluster otherwise noted as limited. Its token is
// given back when the delivery fails (tally), so that its retry may go.
func (r *Router) takeCanary(m *message, q forward.Queue, c string) bool {
	if m.ev.Kind != contract.KindCanary || r.canaries == nil || r.canaries.Take(canary.Key{Account: q.Account, Cluster: c}) {
		return true
	}
	m.limited = append(m.limited, c)
	return false
}

// send delivers to the queues concurrently, at most r.concurrency at a time: errs[i] holds deliveries[i]'s, one per
// body. Nothing here writes a message.
func (r *Router) send(ctx context.Context, deliveries []*delivery) [][]error {
	errs := make([][]error, len(deliveries))
	parallel(r.concurrency, len(deliveries), func(i int) {
		errs[i] = r.sender.Send(ctx, deliveries[i].queue, deliveries[i].bodies)
	})
	return errs
}

// tally records each delivery's result (errs, as send returned them) in its messages, and counts the forwarded ones
// with their lag; each canary delivered is counted and logged (verify reads those lines).
func (r *Router) tally(ctx context.Context, deliveries []*delivery, errs [][]error, stats *metrics.Batch, now time.Time) {
	for k, d := range deliveries {
		for i, m := range d.msgs {
			switch err := errs[k][i]; {
			case err == nil && m.ev.Kind == contract.KindCanary:
				m.sent++
				stats.Canary(d.cluster)
				r.log.InfoContext(ctx, contract.LogCanaryForwarded, contract.LogEventID, m.ev.ID, contract.LogCluster, d.cluster,
					"queue", d.queue.Name, "lagSeconds", now.Sub(m.ev.Time).Seconds())
			case err == nil:
				m.sent++
				stats.Forward(d.cluster)
				if !m.ev.Time.IsZero() { // an event without a time has no lag to report
					stats.Lag(now.Sub(m.ev.Time))
				}
			case errors.Is(err, forward.ErrNoQueue):
				m.noQueue = err
			default:
				m.failed = err
				if m.ev.Kind == contract.KindCanary && r.canaries != nil {
					r.canaries.Release(canary.Key{Account: d.queue.Account, Cluster: d.cluster}) // its retry may go
				}
			}
		}
	}
}

// delivered is the outcome of a pending event whose deliveries have all been tried, from their tally: sent is how many
// queues took it, noQueue why an owner had no queue, failed a delivery that may succeed later, limited the clusters a
// canary was held back from. A delivery that may succeed later makes the whole message retried: the owners that got
// it get it again, which Karpenter handles idempotently. Otherwise it is forwarded if any queue took it, dropped as
// canary_rate_limited when only the canary limit held it back, and dropped for want of a queue otherwise.
func delivered(sent int, noQueue, failed error, limited []string) outcome {
	switch {
	case failed != nil:
		return retry(failed)
	case sent > 0:
		return outcome{verdict: forwarded, err: noQueue}
	case noQueue == nil: // nothing sent, nothing failed, no queue missing: the canary limit held every one back
		return drop(contract.ReasonCanaryRateLimited, fmt.Errorf("clusters %v had a canary less than the canary interval ago", limited))
	}
	return drop(contract.ReasonNoQueue, noQueue)
}
