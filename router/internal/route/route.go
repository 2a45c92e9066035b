// Package route handles one Lambda invocation: a batch of SQS messages from the central queue, each one raw
// EventBridge event, forwarded byte for byte to the queue of every cluster that owns an instance it names.
package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/event"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// Reasons a message is dropped: acknowledged, logged once, counted, never retried.
const (
	ReasonUnparseable     = "unparseable"
	ReasonNotInterruption = "not_interruption"
	ReasonNoOwner         = "no_owner"
	ReasonNoQueue         = "no_queue"
)

// Resolver finds the owning cluster of instances.
type Resolver interface {
	Resolve(ctx context.Context, region string, ids []string) map[string]owner.Owner
}

// Sender delivers bodies to one queue, returning one error per body.
type Sender interface {
	Send(ctx context.Context, q forward.Queue, bodies []*string) []error
}

var (
	_ Resolver = (*owner.Resolver)(nil)
	_ Sender   = (*forward.Forwarder)(nil)
)

// Router handles batches. It is safe for concurrent use.
type Router struct {
	owners      Resolver
	sender      Sender
	prefix      string
	concurrency int
	metrics     *metrics.Writer
	log         *slog.Logger
	now         func() time.Time
}

// Options configures a Router.
type Options struct {
	// QueuePrefix starts every cluster queue's name; see queuename.For.
	QueuePrefix string
	// SendConcurrency bounds the queues sent to at once.
	SendConcurrency int
	Metrics         *metrics.Writer
	Log             *slog.Logger
	// Now defaults to time.Now; tests fix it.
	Now func() time.Time
}

// New returns a Router.
func New(owners Resolver, sender Sender, opts Options) *Router {
	r := &Router{
		owners: owners, sender: sender, prefix: opts.QueuePrefix, concurrency: max(opts.SendConcurrency, 1),
		metrics: opts.Metrics, log: opts.Log, now: opts.Now,
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

// message is the router's state for one record of the batch.
type message struct {
	rec      *events.SQSMessage
	ev       event.Event
	parsed   bool
	reason   string // set when dropped before forwarding
	why      error
	targets  int   // clusters the event is delivered to
	sent     int   // deliveries SQS accepted
	noQueue  int   // deliveries to clusters without a queue
	retryErr error // set when any delivery may succeed later
}

// delivery is every body bound for one queue in this batch.
type delivery struct {
	queue   forward.Queue
	cluster string
	msgs    []*message
	bodies  []*string
	errs    []error
}

// Handle routes a batch. Each message is forwarded, dropped with a reason, or listed in BatchItemFailures for
// redelivery; one bad message never fails the others. The error is non-nil only when the batch could not be
// started at all, so Lambda retries it whole.
func (r *Router) Handle(ctx context.Context, in events.SQSEvent) (events.SQSEventResponse, error) {
	if err := ctx.Err(); err != nil {
		return events.SQSEventResponse{}, fmt.Errorf("batch of %d messages not started: %w", len(in.Records), err)
	}
	msgs := make([]message, len(in.Records))
	var stats metrics.Batch
	idsByRegion := r.parse(in.Records, msgs, &stats)
	ownersByRegion := make(map[string]map[string]owner.Owner, len(idsByRegion))
	for region, ids := range idsByRegion {
		ownersByRegion[region] = r.owners.Resolve(ctx, region, ids)
	}
	deliveries := r.plan(msgs, ownersByRegion)
	r.send(ctx, deliveries)

	now := r.now()
	for _, d := range deliveries {
		for i, m := range d.msgs {
			switch err := d.errs[i]; {
			case err == nil:
				m.sent++
				stats.Forward(d.cluster)
				if !m.ev.Time.IsZero() { // an event without a time has no lag to report
					stats.Lag(now.Sub(m.ev.Time))
				}
			case errors.Is(err, forward.ErrNoQueue):
				m.noQueue++
				m.why = err
			default:
				m.retryErr = err
			}
		}
	}
	resp := r.conclude(ctx, msgs, deliveries, &stats)
	if r.metrics != nil {
		if err := r.metrics.Flush(&stats, now); err != nil {
			r.log.ErrorContext(ctx, "writing metrics", "error", err)
		}
	}
	return resp, nil
}

// parse decodes every record, drops what is not an interruption event, and returns the instance ids to look up
// per region.
func (r *Router) parse(recs []events.SQSMessage, msgs []message, stats *metrics.Batch) map[string][]string {
	idsByRegion := make(map[string][]string, 1)
	for i := range recs {
		m := &msgs[i]
		m.rec = &recs[i]
		ev, err := event.Parse([]byte(m.rec.Body))
		m.ev = ev // with ErrNotInterruption it still names the event, for the drop log
		switch {
		case errors.Is(err, event.ErrNotInterruption):
			m.reason, m.why = ReasonNotInterruption, err
		case err != nil:
			m.reason, m.why = ReasonUnparseable, err
		}
		if err != nil {
			stats.Receive(metrics.Unknown)
			continue
		}
		m.parsed = true
		stats.Receive(string(ev.Kind))
		idsByRegion[ev.Region] = append(idsByRegion[ev.Region], ev.InstanceIDs...)
	}
	return idsByRegion
}

// plan groups the parsed messages by destination queue: an event naming instances of k clusters goes to each
// of the k queues once.
func (r *Router) plan(msgs []message, ownersByRegion map[string]map[string]owner.Owner) []*delivery {
	var out []*delivery
	byQueue := make(map[forward.Queue]*delivery)
	names := make(map[string]string) // cluster -> queue name, computed once a batch
	var clusters []string
	for i := range msgs {
		m := &msgs[i]
		if !m.parsed {
			continue
		}
		owners := ownersByRegion[m.ev.Region]
		clusters = clusters[:0]
		for _, id := range m.ev.InstanceIDs {
			o := owners[id]
			if o.Err != nil {
				m.retryErr = fmt.Errorf("finding owner of %s: %w", id, o.Err)
				break
			}
			if o.Cluster != "" && !slices.Contains(clusters, o.Cluster) {
				clusters = append(clusters, o.Cluster)
			}
		}
		if m.retryErr != nil {
			continue // the owners are not all known: deliver nothing now, all on redelivery
		}
		if len(clusters) == 0 {
			m.reason, m.why = ReasonNoOwner, fmt.Errorf("no instance of %v has an owner tag", m.ev.InstanceIDs)
			continue
		}
		for _, c := range clusters {
			m.targets++
			if err := queuename.ValidateCluster(c); err != nil {
				// A tag value no EKS cluster can have: no queue on the bus can bear its name.
				m.noQueue++
				m.why = fmt.Errorf("owner tag value %w", err)
				continue
			}
			name, ok := names[c]
			if !ok {
				name = queuename.For(r.prefix, c)
				names[c] = name
			}
			q := forward.Queue{Account: m.ev.Account, Region: m.ev.Region, Name: name}
			d := byQueue[q]
			if d == nil {
				d = &delivery{queue: q, cluster: c}
				byQueue[q] = d
				out = append(out, d)
			}
			d.msgs = append(d.msgs, m)
			d.bodies = append(d.bodies, &m.rec.Body)
		}
	}
	return out
}

// send delivers to the queues concurrently, at most r.concurrency at a time.
func (r *Router) send(ctx context.Context, deliveries []*delivery) {
	if len(deliveries) == 1 {
		deliveries[0].errs = r.sender.Send(ctx, deliveries[0].queue, deliveries[0].bodies)
		return
	}
	sem := make(chan struct{}, r.concurrency)
	var wg sync.WaitGroup
	for _, d := range deliveries {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			d.errs = r.sender.Send(ctx, d.queue, d.bodies)
		})
	}
	wg.Wait()
}

// conclude decides each message's outcome, logs drops and retries once each, and builds the response.
func (r *Router) conclude(ctx context.Context, msgs []message, deliveries []*delivery, stats *metrics.Batch) events.SQSEventResponse {
	var resp events.SQSEventResponse
	var forwarded, dropped int
	for i := range msgs {
		m := &msgs[i]
		switch {
		case m.reason != "":
			r.drop(ctx, m, m.reason, stats)
			dropped++
		case m.retryErr != nil:
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.rec.MessageId})
			stats.Retry()
			r.log.WarnContext(ctx, "message left for redelivery", "messageId", m.rec.MessageId, "eventId", m.ev.ID,
				"kind", m.ev.Kind, "instances", m.ev.InstanceIDs, "error", m.retryErr.Error())
		case m.sent > 0:
			forwarded++
			if m.noQueue > 0 {
				r.log.InfoContext(ctx, "event forwarded to some owners only", "messageId", m.rec.MessageId,
					"eventId", m.ev.ID, "withoutQueue", m.noQueue, "error", m.why.Error())
			}
		default: // every owner lacks a queue
			r.drop(ctx, m, ReasonNoQueue, stats)
			dropped++
		}
	}
	r.log.InfoContext(ctx, "batch routed", "received", len(msgs), "forwarded", forwarded, "dropped", dropped,
		"retried", len(resp.BatchItemFailures), "queues", len(deliveries))
	return resp
}

func (r *Router) drop(ctx context.Context, m *message, reason string, stats *metrics.Batch) {
	stats.Drop(reason)
	attrs := []any{"messageId", m.rec.MessageId, "reason", reason, "error", m.why.Error()}
	switch {
	case m.parsed:
		attrs = append(attrs, "eventId", m.ev.ID, "kind", m.ev.Kind, "instances", m.ev.InstanceIDs)
	case m.ev.ID != "":
		attrs = append(attrs, "eventId", m.ev.ID)
	case reason == ReasonUnparseable:
		attrs = append(attrs, "bodyPrefix", prefix(m.rec.Body, 256))
	}
	r.log.InfoContext(ctx, "message dropped", attrs...)
}

func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
