// Package alarms declares the bus's CloudWatch alarms: something waits in the dead-letter queue, the central
// queue backs up, the router fails, is throttled or cannot keep up, and events keep coming for clusters or
// accounts the bus does not know.
package alarms

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:Alarms"

// Args name what the alarms watch and whom they notify.
type Args struct {
	// NamePrefix starts every alarm's name: "<NamePrefix>-<key>".
	NamePrefix string
	// Bus is the router's Bus dimension, Namespace its metrics namespace.
	Bus, Namespace string
	// TopicARN, when set, is notified on alarm and on recovery.
	TopicARN string
	// OldestMessageAgeSeconds is the central queue's backlog threshold.
	OldestMessageAgeSeconds int
	// MaximumConcurrency is the event source mapping's: the router at it, minute after minute, cannot keep up.
	MaximumConcurrency int
	CentralQueueName   pulumi.StringInput
	DLQName            pulumi.StringInput
	FunctionName       pulumi.StringInput
	Tags               pulumi.StringMap
}

// Alarms is the set.
type Alarms struct {
	pulumi.ResourceState
	dependency.Recorder // what depending on it means (dependency.On)

	ARNs pulumi.StringMapOutput `pulumi:"alarmArns"`
}

// Spec is one alarm: a metric, its statistic, and how many of how many periods must cross the threshold.
type Spec struct {
	Key, Description, Namespace, Metric, Statistic string
	Dimensions                                     pulumi.StringMap
	Threshold                                      float64
	// Comparison is GreaterThanThreshold unless set.
	Comparison string
	// PeriodSeconds (60 unless set); DatapointsToAlarm of the last EvaluationPeriods.
	PeriodSeconds, DatapointsToAlarm, EvaluationPeriods int
	// Runbook is the heading of the troubleshooting entry (docs/operations.md) to read first, if any (the generated alarms
	// table links it).
	Runbook string
}

// Period is the spec's period in seconds: 60 unless set.
func (s Spec) Period() int {
	if s.PeriodSeconds == 0 {
		return 60
	}
	return s.PeriodSeconds
}

// Operator is the spec's comparison: GreaterThanThreshold unless set.
func (s Spec) Operator() string {
	if s.Comparison == "" {
		return "GreaterThanThreshold"
	}
	return s.Comparison
}

// MOfN is how many datapoints of how many periods must breach: 1 of 1 unless set.
func (s Spec) MOfN() (m, n int) { return max(s.DatapointsToAlarm, 1), max(s.EvaluationPeriods, 1) }

// Keys of the alarms, each "<NamePrefix>-<key>".
const (
	KeyDLQNotEmpty           = "dlq-not-empty"
	KeyCentralBacklog        = "central-backlog"
	KeyQuietAccountsBacklog  = "quiet-accounts-backlog"
	KeyRouterErrors          = "router-errors"
	KeyRouterThrottles       = "router-throttles"
	KeyRouterSaturated       = "router-saturated"
	KeyEventsUnknownClusters = "events-for-unknown-clusters"
	KeyEventsUnknownAccounts = "events-from-unknown-accounts"
	KeyForgedSenders         = "forged-senders"
	KeyUnsealed              = "unsealed-requeues"
	KeyReplayed              = "replayed-requeues"
	KeyLedgerHidden          = "ledger-hidden"
)

// DropWindow shapes the alarms on drops for clusters or accounts the bus does not know: drops in DropDatapoints of
// the last DropPeriods periods of DropPeriod. A cluster missing from the stack keeps having instances stop,
// terminate and be interrupted, so its drops recur period after period; a cluster just taken off the bus has its
// last nodes terminate within a period or two, and a stray event is one period: neither reaches three of six.
const (
	DropPeriod     = 10 * 60
	DropDatapoints = 3
	DropPeriods    = 6
)

// SaturatedMinutes is how long the router must stay at its maximum concurrency to alarm: a burst of events fills
// it for a minute or two; five means it cannot keep up.
const SaturatedMinutes = 5

// Specs are the bus's alarms.
func Specs(args *Args) []Spec {
	drops := func(key string, reason contract.Reason, what string) Spec {
		return Spec{Key: key, Description: fmt.Sprintf("The router dropped events as %s in %d of the last %d periods of %d minutes: %s. "+
			"Their Karpenter misses its interruptions. See the runbook (docs/operations.md), \"Events dropped as no_owner or no_queue\".",
			reason, DropDatapoints, DropPeriods, DropPeriod/60, what),
			Namespace: args.Namespace, Metric: contract.MetricDropped, Statistic: "Sum",
			Dimensions:    pulumi.StringMap{contract.DimBus: pulumi.String(args.Bus), contract.DimReason: pulumi.String(string(reason))},
			PeriodSeconds: DropPeriod, DatapointsToAlarm: DropDatapoints, EvaluationPeriods: DropPeriods,
			Runbook: "Events for clusters or accounts the bus does not know"}
	}
	fn := pulumi.StringMap{"FunctionName": args.FunctionName}
	return []Spec{
		{Key: KeyDLQNotEmpty, Description: "Interruption events wait in the dead-letter queue: the router could not forward them, or EventBridge could not deliver them. See the runbook (docs/operations.md).",
			Namespace: "AWS/SQS", Metric: "ApproximateNumberOfMessagesVisible", Statistic: "Maximum", Dimensions: pulumi.StringMap{"QueueName": args.DLQName},
			Runbook: "DLQ not empty"},
		{Key: KeyCentralBacklog, Description: fmt.Sprintf("The oldest interruption event has waited over %d s in the central queue: the router is behind or failing. Spot warnings give 2 minutes.", args.OldestMessageAgeSeconds),
			Namespace: "AWS/SQS", Metric: "ApproximateAgeOfOldestMessage", Statistic: "Maximum", Dimensions: pulumi.StringMap{"QueueName": args.CentralQueueName},
			Threshold: float64(args.OldestMessageAgeSeconds), Runbook: "Throttling or backlog"},
		// The central queue is fair between accounts (bus.MessageGroup): SQS publishes the age of the oldest message
		// outside the groups it holds back as noisy ("Available CloudWatch metrics for Amazon SQS",
		// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-available-cloudwatch-metrics.html).
		// central-backlog alone fires when one account's storm waits its turn; this one when every account waits.
		{Key: KeyQuietAccountsBacklog, Description: fmt.Sprintf("An interruption event of an account that is not storming has waited over %d s in the central queue: "+
			"the router is behind for every account, not only for one account's burst. See the runbook (docs/operations.md), \"Throttling or backlog\".", args.OldestMessageAgeSeconds),
			Namespace: "AWS/SQS", Metric: "ApproximateAgeOfOldestMessageInQuietGroups", Statistic: "Maximum", Dimensions: pulumi.StringMap{"QueueName": args.CentralQueueName},
			Threshold: float64(args.OldestMessageAgeSeconds), Runbook: "Throttling or backlog"},
		{Key: KeyRouterErrors, Description: "The router function failed whole invocations.",
			Namespace: "AWS/Lambda", Metric: "Errors", Statistic: "Sum", Dimensions: fn},
		{Key: KeyRouterThrottles, Description: "The router function was throttled; events wait in the central queue.",
			Namespace: "AWS/Lambda", Metric: "Throttles", Statistic: "Sum", Dimensions: fn, DatapointsToAlarm: 2, EvaluationPeriods: 2,
			Runbook: "Throttling or backlog"},
		{Key: KeyRouterSaturated, Description: fmt.Sprintf("The router ran at its concurrency ceiling (%d: router.maximumConcurrency, or 10 invocations per poller of router.provisionedPollers.maximum, at most the function's reserved concurrency) for %d minutes: "+
			"the event source mapping cannot keep up, and events wait in the central queue. See the runbook (docs/operations.md), \"Throttling or backlog\".",
			args.MaximumConcurrency, SaturatedMinutes),
			Namespace: "AWS/Lambda", Metric: "ConcurrentExecutions", Statistic: "Maximum", Dimensions: fn,
			Threshold: float64(args.MaximumConcurrency), Comparison: "GreaterThanOrEqualToThreshold",
			DatapointsToAlarm: SaturatedMinutes, EvaluationPeriods: SaturatedMinutes, Runbook: "Throttling or backlog"},
		drops(KeyEventsUnknownClusters, contract.ReasonNoQueue, "instances owned by clusters that have no queue on the bus (a cluster missing from the stack, or tagged with another name)"),
		drops(KeyEventsUnknownAccounts, contract.ReasonUnknownAccount, "events from accounts that are not on the bus (an account missing from the stack)"),
		// Any forgery is an incident, and a genuine delivery refused (a sender AWS stamped that the check cannot
		// attribute) must be seen in the first minute: one message is enough, in enforce mode (kept in the quarantine)
		// and observe mode (forwarded) alike. A failure to learn a role is retried, not counted.
		{Key: KeyForgedSenders, Description: "The central queue received a proven forgery: a message whose sender is not the forwarder the account " +
			"its event names had when it was sent (another account's forwarder, another role, or a sender that is no role): someone tried to drive " +
			"another account's Karpenter, or the hub's rules deliver as a sender the router does not take (make verify says which setting to " +
			"switch). Kept in the quarantine as evidence (forged_sender) with router.senderCheck enforce, forwarded with observe. " +
			"See the runbook (docs/operations.md), \"Messages refused as forged_sender\".",
			Namespace: args.Namespace, Metric: contract.MetricForgedSender, Statistic: "Sum",
			Dimensions: pulumi.StringMap{contract.DimBus: pulumi.String(args.Bus)}, Runbook: "Messages refused as forged_sender"},
		// What the redrive role sends is the router's own sealed record, or it is made up: one is an incident.
		{Key: KeyUnsealed, Description: "The redrive role sent the central queue a message whose seal does not verify: a record the router did not " +
			"keep, or one edited, or evidence sent back by hand: whoever holds the redrive role (redrive.principals) tried to speak for an " +
			"account. Refused and kept in the quarantine and the archive as unsealed. See the runbook (docs/operations.md), \"Messages refused as unsealed\".",
			Namespace: args.Namespace, Metric: contract.MetricUnsealed, Statistic: "Sum",
			Dimensions: pulumi.StringMap{contract.DimBus: pulumi.String(args.Bus)}, Runbook: "Messages refused as unsealed"},
		// A sealed record is delivered once: one sent again is a replay, by hand or by mistake, and one is an incident.
		{Key: KeyReplayed, Description: "The redrive role sent the central queue a sealed record the router had delivered before (a copy the " +
			"quarantine or the archive kept, or one sent by hand): whoever holds the redrive role (redrive.principals) tried to drive a " +
			"Karpenter twice with one record. Refused and kept in the quarantine and the archive as replayed. See the runbook " +
			"(docs/operations.md), \"Messages refused as replayed\".",
			Namespace: args.Namespace, Metric: contract.MetricReplayed, Statistic: "Sum",
			Dimensions: pulumi.StringMap{contract.DimBus: pulumi.String(args.Bus)}, Runbook: "Messages refused as replayed"},
		// A delete marker over an entry of the ledger: someone lifted the archive's policy (it denies deleting to every
		// principal) and hid a delivery or a claim, so that a record delivered before would look new. One is an incident.
		{Key: KeyLedgerHidden, Description: "The router refused a sealed record the redrive role sent back because a delete marker hides its entry " +
			"in the archive's ledger (its delivery or a claim): the archive's policy denies deleting to every principal, so someone lifted " +
			"or changed it and deleted a ledger entry, which would let a record delivered before be delivered again. Refused and kept in the " +
			"quarantine and the archive as ledger_hidden. See the runbook (docs/operations.md), \"Messages refused as ledger_hidden\".",
			Namespace: args.Namespace, Metric: contract.MetricDropped, Statistic: "Sum",
			Dimensions: pulumi.StringMap{contract.DimBus: pulumi.String(args.Bus), contract.DimReason: pulumi.String(string(contract.ReasonLedgerHidden))},
			Runbook:    "Messages refused as ledger_hidden"},
	}
}

// New declares the alarms.
func New(ctx *pulumi.Context, name string, args *Args, opts ...pulumi.ResourceOption) (*Alarms, error) {
	a := &Alarms{}
	if err := dependency.Register(ctx, Type, name, a, opts...); err != nil {
		return nil, err
	}
	var actions pulumi.Array
	if args.TopicARN != "" {
		actions = pulumi.Array{pulumi.String(args.TopicARN)}
	}
	arns := pulumi.StringMap{}
	for _, s := range Specs(args) {
		period, comparison := s.Period(), s.Operator()
		datapoints, evaluation := s.MOfN()
		alarm, err := cloudwatch.NewMetricAlarm(ctx, name+"-"+s.Key, &cloudwatch.MetricAlarmArgs{
			Name:               pulumi.String(args.NamePrefix + "-" + s.Key),
			AlarmDescription:   pulumi.String(s.Description),
			Namespace:          pulumi.String(s.Namespace),
			MetricName:         pulumi.String(s.Metric),
			Statistic:          pulumi.String(s.Statistic),
			Dimensions:         s.Dimensions,
			Period:             pulumi.Int(period),
			EvaluationPeriods:  pulumi.Int(evaluation),
			DatapointsToAlarm:  pulumi.Int(datapoints),
			Threshold:          pulumi.Float64(s.Threshold),
			ComparisonOperator: pulumi.String(comparison),
			TreatMissingData:   pulumi.String("notBreaching"),
			AlarmActions:       actions,
			OkActions:          actions,
			Tags:               args.Tags,
		}, pulumi.Parent(a))
		if err != nil {
			return nil, fmt.Errorf("declaring alarm %s: %w", s.Key, err)
		}
		arns[s.Key] = alarm.Arn
	}
	a.ARNs = arns.ToStringMapOutput()
	if err := ctx.RegisterResourceOutputs(a, pulumi.Map{"alarmArns": a.ARNs}); err != nil {
		return nil, err
	}
	return a, nil
}
