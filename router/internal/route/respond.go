package route

import (
	"context"
	"errors"
	"strconv"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
)

// respond logs each drop and retry of the batch once (every message was decided by its wave), counts them, and lists
// the retried messages.
func (r *Router) respond(ctx context.Context, msgs []message, queues int, stats *metrics.Batch) events.SQSEventResponse {
	var resp events.SQSEventResponse
	var nForwarded, nDropped int
	listed := map[string]bool{} // SQS may deliver a message twice in one batch: its ID is listed once
	for i := range msgs {
		m := &msgs[i]
		switch m.out.verdict {
		case dropped, quarantined:
			nDropped++
			stats.Drop(m.out.reason)
			r.logDrop(ctx, m)
		case retried:
			if !listed[m.rec.MessageId] {
				listed[m.rec.MessageId] = true
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.rec.MessageId})
			}
			stats.Retry()
		case forwarded:
			nForwarded++
			if m.out.err != nil {
				r.log.InfoContext(ctx, "event forwarded to some owners only", "messageId", m.rec.MessageId,
					"eventId", m.ev.ID, "error", m.out.err.Error())
			}
		}
	}
	r.redeliver(ctx, msgs)
	r.log.InfoContext(ctx, "batch routed", "received", len(msgs), "forwarded", nForwarded, "dropped", nDropped,
		"retried", len(resp.BatchItemFailures), "queues", queues)
	return resp
}

// redeliver schedules every retried message's return and logs it once. One whose visibility cannot be changed
// comes back after the queue's visibility timeout instead: later, never lost.
func (r *Router) redeliver(ctx context.Context, msgs []message) {
	var again []*message
	for i := range msgs {
		if msgs[i].out.verdict == retried {
			again = append(again, &msgs[i])
		}
	}
	if len(again) == 0 {
		return
	}
	lines := make([][]any, len(again))
	parallel(r.concurrency, len(again), func(i int) {
		m := again[i]
		attrs := []any{"messageId", m.rec.MessageId, "eventId", m.ev.ID, "kind", m.ev.Kind, "instances", m.ev.InstanceIDs,
			"error", m.out.err.Error()}
		if r.redeliverer != nil {
			receives, _ := strconv.Atoi(m.rec.Attributes["ApproximateReceiveCount"])
			if d, err := r.redeliverer.Later(ctx, m.rec.ReceiptHandle, receives); err != nil {
				attrs = append(attrs, "redeliveryError", err.Error())
			} else {
				attrs = append(attrs, "retryInSeconds", d.Seconds())
			}
		}
		lines[i] = attrs
	})
	for _, attrs := range lines {
		r.log.WarnContext(ctx, "message left for redelivery", attrs...)
	}
}

func (r *Router) logDrop(ctx context.Context, m *message) {
	attrs := []any{"messageId", m.rec.MessageId, contract.LogReason, m.out.reason, "error", m.out.err.Error()}
	switch {
	case m.out.verdict == quarantined && errors.Is(m.out.err, quarantine.ErrArchivedOnly):
		attrs = append(attrs, contract.LogArchivedOnly, true)
	case m.out.verdict == quarantined:
		attrs = append(attrs, contract.LogQuarantined, true)
	}
	switch m.out.reason {
	case contract.ReasonForgedSender, contract.ReasonUnattributable, contract.ReasonUnknownAccount:
		s := m.rec.Attributes[sender.Attribute]
		if m.judged.Requeued {
			s = m.judged.Sender
			attrs = append(attrs, contract.LogRequeued, true)
		}
		attrs = append(attrs, contract.LogSender, s, "account", m.ev.Account)
	}
	switch {
	case m.ev.Kind != "":
		attrs = append(attrs, contract.LogEventID, m.ev.ID, "kind", m.ev.Kind, "instances", m.ev.InstanceIDs)
	case m.ev.ID != "":
		attrs = append(attrs, contract.LogEventID, m.ev.ID)
	case m.out.reason == contract.ReasonUnparseable:
		attrs = append(attrs, "bodyPrefix", prefix(m.rec.Body, 256))
	}
	r.log.InfoContext(ctx, contract.LogMessageDropped, attrs...)
}

func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
