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
	// MetricForgedSender counts messages whose SQS sender may not speak for the account their event names: dropped
	// as forged_sender when the sender check enforces, forwarded all the same when it observes.
	MetricForgedSender = "ForgedSender"
	// MetricServiceSender counts messages sent by no IAM role, which the central queue's policy admits none of (every
	// rule delivers as its account's forwarder role): an AWS service stamping an ID of its own, refused as
	// forged_sender and kept in the quarantine.
	MetricServiceSender = "ServiceSender"
	// MetricQuarantined counts refused messages kept in the quarantine queue (QuarantineReasons).
	MetricQuarantined = "Quarantined"
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
	// ReasonForgedSender: the message was sent to the central queue by a role that may not speak for the account
	// its event names (not that member's forwarder; for the bus's own account, not its redrive role), or by no
	// one SQS names (docs/security.md, "Who sent each message").
	ReasonForgedSender Reason = "forged_sender"
)

// Reasons lists every Reason.
var Reasons = []Reason{
	ReasonUnparseable, ReasonNotInterruption, ReasonNoOwner, ReasonNoQueue, ReasonUnknownAccount,
	ReasonCanaryForbidden, ReasonCanaryRateLimited, ReasonForgedSender,
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
	{"", []string{MetricReceived, MetricForwarded, MetricDropped, MetricRetried, MetricForgedSender, MetricServiceSender, MetricQuarantined}, "totals of the invocation, zeros included, so alarms see 0 rather than missing data; " +
		"ForgedSender: messages whose sender may not speak for the account their event names (refused and quarantined when the sender check enforces, forwarded when it observes); " +
		"ServiceSender: messages sent by no IAM role, which no rule of the bus sends as (counted in ForgedSender too); " +
		"Quarantined: refused messages kept in the quarantine queue (" + quarantineList() + ")"},
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

func reasonList() string {
	s := make([]string, len(Reasons))
	for i, r := range Reasons {
		s[i] = string(r)
	}
	return strings.Join(s, ", ")
}
