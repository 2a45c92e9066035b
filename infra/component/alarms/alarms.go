// Package alarms declares the bus's CloudWatch alarms: something waits in the dead-letter queue, the central
// queue backs up, the router fails or is throttled.
package alarms

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:Alarms"

// Args name what the alarms watch and whom they notify.
type Args struct {
	// NamePrefix starts every alarm's name: "<NamePrefix>-<key>".
	NamePrefix string
	// TopicARN, when set, is notified on alarm and on recovery.
	TopicARN string
	// OldestMessageAgeSeconds is the central queue's backlog threshold.
	OldestMessageAgeSeconds int
	CentralQueueName        pulumi.StringInput
	DLQName                 pulumi.StringInput
	FunctionName            pulumi.StringInput
	Tags                    pulumi.StringMap
}

// Alarms is the set.
type Alarms struct {
	pulumi.ResourceState

	ARNs pulumi.StringMapOutput `pulumi:"alarmArns"`
}

// spec is one alarm: a metric, its statistic and the threshold it must exceed.
type spec struct {
	key, description, namespace, metric, statistic string
	dimension                                      string
	value                                          pulumi.StringInput
	threshold                                      float64
	periods                                        int
}

// New declares the alarms.
func New(ctx *pulumi.Context, name string, args *Args, opts ...pulumi.ResourceOption) (*Alarms, error) {
	a := &Alarms{}
	if err := ctx.RegisterComponentResource(Type, name, a, opts...); err != nil {
		return nil, err
	}
	specs := []spec{
		{key: "dlq-not-empty", description: "Interruption events wait in the dead-letter queue: the router could not forward them, or EventBridge could not deliver them. See the README's runbook.",
			namespace: "AWS/SQS", metric: "ApproximateNumberOfMessagesVisible", statistic: "Maximum", dimension: "QueueName", value: args.DLQName, threshold: 0, periods: 1},
		{key: "central-backlog", description: fmt.Sprintf("The oldest interruption event has waited over %d s in the central queue: the router is behind or failing. Spot warnings give 2 minutes.", args.OldestMessageAgeSeconds),
			namespace: "AWS/SQS", metric: "ApproximateAgeOfOldestMessage", statistic: "Maximum", dimension: "QueueName", value: args.CentralQueueName, threshold: float64(args.OldestMessageAgeSeconds), periods: 1},
		{key: "router-errors", description: "The router function failed whole invocations.",
			namespace: "AWS/Lambda", metric: "Errors", statistic: "Sum", dimension: "FunctionName", value: args.FunctionName, threshold: 0, periods: 1},
		{key: "router-throttles", description: "The router function was throttled; events wait in the central queue.",
			namespace: "AWS/Lambda", metric: "Throttles", statistic: "Sum", dimension: "FunctionName", value: args.FunctionName, threshold: 0, periods: 2},
	}
	var actions pulumi.Array
	if args.TopicARN != "" {
		actions = pulumi.Array{pulumi.String(args.TopicARN)}
	}
	arns := pulumi.StringMap{}
	for _, s := range specs {
		alarm, err := cloudwatch.NewMetricAlarm(ctx, name+"-"+s.key, &cloudwatch.MetricAlarmArgs{
			Name:               pulumi.String(args.NamePrefix + "-" + s.key),
			AlarmDescription:   pulumi.String(s.description),
			Namespace:          pulumi.String(s.namespace),
			MetricName:         pulumi.String(s.metric),
			Statistic:          pulumi.String(s.statistic),
			Dimensions:         pulumi.StringMap{s.dimension: s.value},
			Period:             pulumi.Int(60),
			EvaluationPeriods:  pulumi.Int(s.periods),
			Threshold:          pulumi.Float64(s.threshold),
			ComparisonOperator: pulumi.String("GreaterThanThreshold"),
			TreatMissingData:   pulumi.String("notBreaching"),
			AlarmActions:       actions,
			OkActions:          actions,
			Tags:               args.Tags,
		}, pulumi.Parent(a))
		if err != nil {
			return nil, fmt.Errorf("declaring alarm %s: %w", s.key, err)
		}
		arns[s.key] = alarm.Arn
	}
	a.ARNs = arns.ToStringMapOutput()
	if err := ctx.RegisterResourceOutputs(a, pulumi.Map{"alarmArns": a.ARNs}); err != nil {
		return nil, err
	}
	return a, nil
}
