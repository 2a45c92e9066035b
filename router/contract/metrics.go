package contract

import (
	"slices"
	"strings"
)

// MetricsNamespace is the CloudWatch namespace of the router's metrics, unless Settings.MetricsNamespace says
// otherwise; the alarms and the dashboard read them there.
const MetricsNamespace = "KarpenterInterruptionBus"

// Metric names, as the router writes them (Embedded Metric Format) and CloudWatch shows them.
const (
	// MetricReceived counts messages taken from the central queue.
	MetricReceived = "Received"
	// MetricForwarded counts deliveries to cluster queues: an event for k clusters counts k.
	MetricForwarded = "Forwarded"
	// MetricDropped counts messages acknowledged without delivery.
	MetricDropped = "Dropped"
	// MetricRetried counts messages left for redelivery.
	MetricRetried = "Retried"
	// MetricForwardLag is the time from an event's time to its forwarding, in milliseconds.
	MetricForwardLag = "ForwardLag"
	// MetricForgedSender counts proven forgeries (ReasonForgedSender): dropped as forged_sender and kept when the
	// sender check enforces, forwarded all the same when it observes.
	MetricForgedSender = "ForgedSender"
	// MetricServiceSender counts messages sent by no IAM role: with the hub's rules delivering through the central
	// queue's policy (HubDeliveryQueuePolicy), the hub's own events; otherwise none is expected (every rule delivers
	// as its account's forwarder role), and such a message naming an account is judged as any other sender.
	MetricServiceSender = "ServiceSender"
	// MetricQuarantined counts refused messages kept in the quarantine queue (QuarantineReasons).
	MetricQuarantined = "Quarantined"
	// MetricUnsealed counts messages the redrive role sent whose seal does not verify (ReasonUnsealed): made up, or
	// edited, by whoever holds the role.
	MetricUnsealed = "Unsealed"
	// MetricDeadLettered counts the dead-letter queue's messages the router sealed into the quarantine on an
	// operator's request (ReasonDeadLettered).
	MetricDeadLettered = "DeadLettered"
	// MetricReplayed counts sealed records sent back again once delivered (ReasonReplayed): a copy of the quarantine's or
	// the archive's, or one sent by hand, by whoever holds the redrive role.
	MetricReplayed = "Replayed"
)

// Dimension names. Every record carries DimBus; the others split one count each.
const (
	DimBus     = "Bus"
	DimKind    = "Kind"
	DimCluster = "Cluster"
	DimReason  = "Reason"
)

// Reason is why a message was dropped: the value of the Reason dimension.
type Reason string

// The reasons a message is dropped: acknowledged, logged once, counted, never retried.
const (
	// ReasonUnparseable: not an EventBridge event the router can read.
	ReasonUnparseable Reason = "unparseable"
	// ReasonNotInterruption: a well-formed event Karpenter would ignore.
	ReasonNotInterruption Reason = "not_interruption"
	// ReasonNoOwner: no instance it names has an owner tag.
	ReasonNoOwner Reason = "no_owner"
	// ReasonNoQueue: the owning cluster has no queue on this bus.
	ReasonNoQueue Reason = "no_queue"
	// ReasonUnknownAccount: the event comes from an account that is neither the bus's nor one of its members.
	ReasonUnknownAccount Reason = "unknown_account"
	// ReasonCanaryForbidden: a canary names clusters of an account other than the one it was put in, and was not
	// put in the bus's own account (where make verify runs): no account may reach another's clusters.
	ReasonCanaryForbidden Reason = "canary_forbidden"
	// ReasonCanaryRateLimited: every cluster a canary names had one less than the canary interval ago.
	ReasonCanaryRateLimited Reason = "canary_rate_limited"
	// ReasonForgedSender: a proven forgery. The message's sender is not the forwarder the account its event names
	// had when the message was sent (that forwarder, as IAM gives it now, was created before the message was sent
	// and has another unique ID), or is the forwarder of another account (docs/security.md, "Who sent each
	// message").
	ReasonForgedSender Reason = "forged_sender"
	// ReasonUnattributable: the sender cannot be tied to the account its event names, nor proven not to be: it was
	// sent before the account's forwarder, as it stands, was created (a forwarder created anew since), the account
	// has no forwarder now, or the redrive role sent it without saying who first sent it. Sent back only when an
	// operator vouches for the event or the sender by name (docs/operations.md, "Refused messages: the quarantine").
	ReasonUnattributable Reason = "unattributable_sender"
	// ReasonUnsealed: the redrive role sent a message whose seal (AttrSeal) does not verify over what it says of
	// itself, or that carries none, or that was kept before as evidence: nothing the router kept says so, so it
	// speaks for no account (docs/security.md, "Sealed refusals").
	ReasonUnsealed Reason = "unsealed"
	// ReasonDeadLettered: a message of the dead-letter queue, sealed into the quarantine with the sender the
	// dead-letter queue held, so that make requeue may send it back (AttrIntake).
	ReasonDeadLettered Reason = "dead_lettered"
	// ReasonReplayed: a sealed record the redrive role sent back once more, after another message of the central queue
	// delivered it (the ledger, ArchiveDeliveredPrefix): a sealed record is delivered at most once (docs/security.md,
	// "Delivered once").
	ReasonReplayed Reason = "replayed"
	// ReasonLedgerHidden: a sealed record sent back whose entry in the archive's ledger (its delivery, or a claim) a
	// delete marker hides: only someone who lifted the archive's policy can place one, and a ledger that may lie
	// cannot say whether a cluster queue received it. Kept, counted (Dropped, Reason=ledger_hidden) and alarmed on.
	ReasonLedgerHidden Reason = "ledger_hidden"
)

// Reasons lists every Reason.
var Reasons = []Reason{
	ReasonUnparseable, ReasonNotInterruption, ReasonNoOwner, ReasonNoQueue, ReasonUnknownAccount,
	ReasonCanaryForbidden, ReasonCanaryRateLimited, ReasonForgedSender, ReasonUnattributable, ReasonUnsealed, ReasonDeadLettered,
	ReasonReplayed, ReasonLedgerHidden,
}

// KindUnknown is the Kind dimension of a message that is not an interruption event.
const KindUnknown Kind = "unknown"

// Unit is a metric's CloudWatch unit: every metric counts, but the lag.
func Unit(metric string) string {
	if metric == MetricForwardLag {
		return "Milliseconds"
	}
	return "Count"
}

// MetricSet is one kind of record the router writes: its dimensions besides DimBus (none, or one) and its
// metrics. The router's EMF writer declares exactly these, and the documentation's metrics table is generated
// from them.
type MetricSet struct {
	Dimension string
	Metrics   []string
	About     string
}

// MetricSets are every record the router writes, once per invocation.
var MetricSets = []MetricSet{
	{"", []string{MetricReceived, MetricForwarded, MetricDropped, MetricRetried, MetricForgedSender, MetricServiceSender, MetricQuarantined,
		MetricUnsealed, MetricDeadLettered, MetricReplayed}, "totals of the invocation, zeros included, so alarms see 0 rather than missing data; " +
		"ForgedSender: proven forgeries, messages whose sender is not the forwarder the account their event names had when they were sent (refused and quarantined when the sender check enforces, forwarded when it observes); " +
		"ServiceSender: messages sent by no IAM role (the hub's own events when its rules deliver through the queue's policy); " +
		"Quarantined: refused messages kept in the quarantine queue (" + quarantineList() + "); " +
		"Unsealed: messages the redrive role sent whose seal does not verify (refused as unsealed and kept); " +
		"DeadLettered: dead-letter queue messages sealed into the quarantine on an operator's request; " +
		"Replayed: sealed records the redrive role sent back once more after another message delivered them (refused as replayed and kept)"},
	{DimKind, []string{MetricReceived}, "messages received, per kind of event (" + kindList() + ")"},
	{DimCluster, []string{MetricForwarded}, "deliveries to each cluster's queue: a Health event for k clusters counts k; canaries are not counted"},
	{DimCluster, []string{MetricCanaryForwarded}, "canaries delivered to each cluster's queue"},
	{DimReason, []string{MetricDropped}, "messages acknowledged without delivery, per reason (" + reasonList() + ")"},
	{"", []string{MetricForwardLag}, "time from each interruption event's time to its forwarding"},
}

func kindList() string {
	var s []string
	for _, t := range EventTypes {
		if !slices.Contains(s, string(t.Kind)) {
			s = append(s, string(t.Kind))
		}
	}
	for _, k := range []Kind{KindOtherEC2, KindCanary, KindUnknown} {
		if !slices.Contains(s, string(k)) {
			s = append(s, string(k))
		}
	}
	return strings.Join(s, ", ")
}

func quarantineList() string {
	s := make([]string, len(QuarantineReasons))
	for i, r := range QuarantineReasons {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}

// reasonList are the values of the Reason dimension of Dropped: every Reason but dead_lettered, which names no message
// of a batch dropped (DeadLettered counts those).
func reasonList() string {
	var s []string
	for _, r := range Reasons {
		if r != ReasonDeadLettered {
			s = append(s, string(r))
		}
	}
	return strings.Join(s, ", ")
}
