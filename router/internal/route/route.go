// Package route handles one Lambda invocation: a batch of SQS messages from the central queue, each one raw
// EventBridge event, forwarded byte for byte to the queue of every cluster that owns an instance it names.
package route

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/canary"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/deadline"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/intake"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/redeliver"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// Resolver finds the owning cluster of instances of an account in a region.
type Resolver interface {
	Resolve(ctx context.Context, account, region string, ids []string) map[string]owner.Owner
}

// Sender delivers bodies to one queue, returning one error per body.
type Sender interface {
	Send(ctx context.Context, q forward.Queue, bodies []*string) []error
}

// Redeliverer brings a message left for redelivery back after a backoff on its receive count, and says when.
type Redeliverer interface {
	Later(ctx context.Context, receiptHandle string, receiveCount int) (time.Duration, error)
}

// SenderChecker judges whether the senders of messages may speak for the account their events name, which is on
// the bus or not, and whether a sender is the redrive role.
type SenderChecker interface {
	Check(ctx context.Context, account string, onBus bool, msgs []sender.Message) []sender.Result
	IsRedrive(ctx context.Context, s string, sent time.Time) (bool, error)
}

// Verifier checks the router's seal of what a message sent back says of itself.
type Verifier interface {
	Verify(ctx context.Context, rec sealing.Record, seal string) error
}

// Intaker takes the dead-letter queue into the quarantine.
type Intaker interface {
	Take(ctx context.Context) (intake.Result, error)
}

// Quarantiner keeps refused messages, returning one error per message.
type Quarantiner interface {
	Keep(ctx context.Context, msgs []quarantine.Message) []error
}

var (
	_ Quarantiner   = (*quarantine.Queue)(nil)
	_ Resolver      = (*accounts.Owners)(nil)
	_ Sender        = (*forward.Forwarder)(nil)
	_ Redeliverer   = (*redeliver.Scheduler)(nil)
	_ SenderChecker = (*sender.Checker)(nil)
	_ Verifier      = (*sealing.Sealer)(nil)
	_ Intaker       = (*intake.Intake)(nil)
)

// Router handles batches. It is safe for concurrent use: a batch's messages are its own, and what Routers share
// (caches, the canary limiter, the logged senders) is synchronised.
type Router struct {
	owners      Resolver
	sender      Sender
	redeliverer Redeliverer
	senders     SenderChecker
	quarantine  Quarantiner
	seals       Verifier
	intake      Intaker
	ledger      Ledger
	observe     bool
	seen        sync.Map // SenderIds of no role already logged
	refused     sync.Map // accounts whose reader role the sender check found refused, already logged
	bus         string
	gate        gate
	naming      naming
	canaries    *canary.Limiter
	concurrency int
	metrics     *metrics.Writer
	log         *slog.Logger
	now         func() time.Time
}

// Options configures a Router.
type Options struct {
	// QueuePrefix starts every cluster queue's name; see queuename.For.
	QueuePrefix string
	// Bus is the bus's name (its Bus dimension): canaries for another bus are dropped.
	Bus string
	// Hub is the bus's own account, where make verify runs: the one account whose canaries may name clusters of
	// another account. Empty: a bus of one account, whose canaries name their own account's clusters only.
	Hub string
	// Accounts are the accounts on the bus (its own and its members'): an event of any other is dropped as
	// unknown_account. Empty: every account is.
	Accounts []string
	// Canaries, when set, bounds the canaries delivered to each cluster (canary.Limiter); the excess is dropped as
	// canary_rate_limited.
	Canaries *canary.Limiter
	// BusQueues are never a destination: an event must not loop back into the bus.
	BusQueues []string
	// Redeliverer, when set, brings retried messages back after a backoff instead of the visibility timeout.
	Redeliverer Redeliverer
	// Senders, when set, checks that each message's sender may speak for the account its event names, before
	// anything else is decided of it: a proven forgery is dropped as forged_sender, a sender that cannot be
	// attributed as unattributable_sender, an undecided one retried; with SenderObserve, each is logged, counted and
	// forwarded all the same.
	Senders       SenderChecker
	SenderObserve bool
	// Quarantine, when set, keeps every message refused for one of contract.QuarantineReasons instead of deleting
	// it; one it cannot keep is retried.
	Quarantine Quarantiner
	// Seals, when set, verifies the seal of what a message the redrive role sent says of itself: without it, no such
	// message is believed (contract.ReasonUnsealed).
	Seals Verifier
	// Intake, when set, takes the dead-letter queue into the quarantine when the redrive role asks
	// (contract.AttrIntake).
	Intake Intaker
	// Ledger records the delivery of each sealed record sent back, so that none is delivered twice; without it, none
	// is delivered.
	Ledger Ledger
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
		owners: owners, sender: sender, redeliverer: opts.Redeliverer, senders: opts.Senders, observe: opts.SenderObserve,
		quarantine: opts.Quarantine, seals: opts.Seals, intake: opts.Intake, ledger: opts.Ledger, bus: opts.Bus,
		gate: gate{hub: opts.Hub, accounts: opts.Accounts}, naming: naming{prefix: opts.QueuePrefix, busQueues: opts.BusQueues},
		canaries: opts.Canaries, concurrency: max(opts.SendConcurrency, 1), metrics: opts.Metrics, log: opts.Log, now: opts.Now,
	}
	if r.now == nil {
		r.now = time.Now
	}
	return r
}

// Handle routes a batch. Each message is forwarded, dropped with a reason, or listed in BatchItemFailures for
// redelivery; one bad message never fails the others. The error is non-nil only when the batch could not be
// started at all, so Lambda retries it whole.
//
// Live events never wait on the evidence path (S3, KMS): the batch is split in two waves that run side by side. The
// live wave is every event the bus's rules delivered; the evidence wave, every message the redrive role sent back
// (it carries a seal) and every request to take the dead-letter queue in. Each wave runs the same stages on its own
// messages: classify, judge the senders, admit, record the delivery of the sealed records sent back (claim: the
// evidence wave's only), look the owners up and plan the deliveries; then three side by side, none holding up the
// others: keep what was refused, take the dead-letter queue in when asked, send the deliveries; then the deliveries
// of the sealed records are recorded. Every call of the waves (S3 and KMS: the seal's checks, the ledger, the
// quarantine's seals and archive; SQS, EC2 and IAM) runs within the evidence deadline, ahead of the invocation's own,
// and the retries' scheduling within the return reserve: what a hung call could not finish is retried, and the
// batch's results are returned before Lambda's deadline, past which it would take the whole batch back. No stage
// writes a message another reads.
func (r *Router) Handle(ctx context.Context, in events.SQSEvent) (events.SQSEventResponse, error) {
	if err := ctx.Err(); err != nil {
		return events.SQSEventResponse{}, fmt.Errorf("batch of %d messages not started: %w", len(in.Records), err)
	}
	var stats, evStats metrics.Batch
	live, evidence := split(r.classifyAll(in.Records, &stats))
	ctx, cancel := deadline.Returning(ctx)
	defer cancel()
	// Both waves end by the evidence deadline, the live one too: a send or lookup that hangs is retried, and the
	// retries are scheduled and the results returned within the invocation.
	waves, cancelWaves := deadline.Before(ctx, evidenceReserve, 10)
	defer cancelWaves()
	queues := make([]int, 2)
	var wg sync.WaitGroup
	wg.Go(func() { queues[1] = r.route(waves, evidence, &evStats) })
	queues[0] = r.route(waves, live, &stats)
	wg.Wait()
	stats.Add(&evStats)
	msgs := slices.Concat(live, evidence)
	now := r.now()
	resp := r.respond(ctx, msgs, queues[0]+queues[1], &stats)
	if r.metrics != nil {
		if err := r.metrics.Flush(&stats, now); err != nil {
			r.log.ErrorContext(ctx, "writing metrics", "error", err)
		}
	}
	return resp, nil
}

// split divides the batch into its live wave (the events as the bus's rules delivered them) and its evidence wave
// (what the redrive role sent: the messages carrying a seal, sent back, and the requests to take the dead-letter queue
// in), each a slice of its own, so that the waves write none of the other's messages.
func split(msgs []message) (live, evidence []message) {
	for _, m := range msgs {
		if m.kind == anIntake || attr(m.rec, contract.AttrSeal) != "" {
			evidence = append(evidence, m)
		} else {
			live = append(live, m)
		}
	}
	return live, evidence
}

// route runs one wave's stages on msgs, their calls within ctx (the waves' deadline). It returns how many queues it
// delivered to.
func (r *Router) route(ctx context.Context, msgs []message, stats *metrics.Batch) int {
	if len(msgs) == 0 {
		return 0
	}
	r.judgeSenders(ctx, msgs, stats)
	for i := range msgs {
		if m := &msgs[i]; m.kind == anEvent && m.out.verdict == pending {
			if o := r.gate.admit(m.ev); o.verdict != pending {
				r.decide(ctx, m, o)
			}
		}
	}
	now := r.now()
	r.claim(ctx, msgs, stats, now, r.until(ctx))
	deliveries := r.plan(ctx, msgs, r.resolve(ctx, lookups(msgs)))
	refused, kept := r.refusals(msgs)
	asks := asksOf(msgs)
	var keptErrs []error
	var took intakeFacts
	var wg sync.WaitGroup
	wg.Go(func() { keptErrs = r.keep(ctx, kept) })
	wg.Go(func() { took = r.takeIn(ctx, asks) })
	sent := r.send(ctx, deliveries)
	wg.Wait()
	r.applyKept(ctx, refused, keptErrs, stats)
	r.applyIntake(ctx, asks, took, stats)
	now = r.now()
	r.tally(ctx, deliveries, sent, stats, now)
	if r.ledger != nil {
		r.record(ctx, msgs, stats, now)
	}
	// A sealed record sent back that went nowhere now (its owner's queue is not there) is kept again, for when it is.
	r.settle(ctx, msgs)
	refused, kept = r.refusals(msgs)
	r.applyKept(ctx, refused, r.keep(ctx, kept), stats)
	return len(deliveries)
}

// settle decides every pending event from its deliveries' tally (delivered).
func (r *Router) settle(ctx context.Context, msgs []message) {
	for i := range msgs {
		if m := &msgs[i]; m.kind == anEvent && m.out.verdict == pending {
			r.decide(ctx, m, delivered(m.sent, m.noQueue, m.failed, m.limited))
		}
	}
}

// evidenceReserve is what the waves' deadline (the evidence deadline) leaves of the invocation: the time to schedule
// the batch's retries and write its metrics (or a tenth of what is left, when that is less).
const evidenceReserve = 2 * time.Second

// maxInvocation is Lambda's longest invocation: the claims' horizon when ctx has no deadline.
const maxInvocation = 15 * time.Minute

// until is when a claim made within ctx lapses: its deadline, after which the invocation that made it has ended.
func (r *Router) until(ctx context.Context) time.Time {
	if deadline, ok := ctx.Deadline(); ok {
		return deadline
	}
	return r.now().Add(maxInvocation)
}

// decide changes m's outcome to o (message.set); a change no rule allows is a bug, logged, and leaves the outcome as
// it was.
func (r *Router) decide(ctx context.Context, m *message, o outcome) {
	if err := m.set(o); err != nil {
		r.log.ErrorContext(ctx, logRefusedTransition, "error", err.Error())
	}
}

// logRefusedTransition is the log line of a refused change of outcome: the tests fail on any.
const logRefusedTransition = "outcome change refused"

// resolve finds the owners of the instances of each account and region, the scopes in parallel, so one
// account's slow or throttled EC2 does not hold up the others'.
func (r *Router) resolve(ctx context.Context, ids map[where][]string) map[where]map[string]owner.Owner {
	scopes := make([]where, 0, len(ids))
	for w := range ids {
		scopes = append(scopes, w)
	}
	found := make([]map[string]owner.Owner, len(scopes))
	parallel(r.concurrency, len(scopes), func(i int) {
		found[i] = r.owners.Resolve(ctx, scopes[i].account, scopes[i].region, ids[scopes[i]])
	})
	out := make(map[where]map[string]owner.Owner, len(scopes))
	for i, w := range scopes {
		out[w] = found[i]
	}
	return out
}

// parallel runs fn(0..n-1), at most limit at a time.
func parallel(limit, n int, fn func(i int)) {
	switch n {
	case 0:
		return
	case 1:
		fn(0)
		return
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

// attr is a record's string message attribute k, or "".
func attr(rec *events.SQSMessage, k string) string {
	if v := rec.MessageAttributes[k].StringValue; v != nil {
		return *v
	}
	return ""
}

// millis is an SQS epoch-milliseconds attribute as a time; zero when it is none.
func millis(v string) time.Time {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
