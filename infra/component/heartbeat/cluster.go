package heartbeat

import (
	"fmt"
	"time"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/scheduler"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/shortname"
)

// MaxScheduleName is EventBridge Scheduler's limit on a schedule's name.
const MaxScheduleName = 64

// Cluster is what a cluster's schedule and alarm need of the heartbeat.
type Cluster struct {
	// Bus is the bus's name (the router's Bus dimension), which canaries name.
	Bus string
	// Group and RoleARN are the shared part's outputs (Heartbeat.GroupName, Heartbeat.RoleARN): a schedule
	// waits for both.
	Group   pulumi.StringInput
	RoleARN pulumi.StringInput
	// Rate is how often a canary is put.
	Rate time.Duration
	// AlarmName names the cluster's alarm; AlarmActions are notified on alarm and on recovery.
	AlarmName    string
	AlarmActions []string
	Env          awsenv.Env
	Tags         pulumi.StringMap
}

// ScheduleName is the cluster's schedule's name in the group: the cluster's, shortened to fit.
func ScheduleName(cluster string) string { return shortname.Fit(cluster, MaxScheduleName) }

// Schedule declares the schedule putting a canary for cluster every h.Rate. A missed beat is not retried past
// the next one: the alarm counts beats, not attempts.
func Schedule(ctx *pulumi.Context, name, cluster string, h Cluster, opts ...pulumi.ResourceOption) (*scheduler.Schedule, error) {
	s, err := scheduler.NewSchedule(ctx, name, &scheduler.ScheduleArgs{
		Name:               pulumi.String(ScheduleName(cluster)),
		GroupName:          h.Group,
		Description:        pulumi.String("Interruption bus heartbeat of cluster " + cluster),
		ScheduleExpression: pulumi.String(RateExpression(h.Rate)),
		FlexibleTimeWindow: &scheduler.ScheduleFlexibleTimeWindowArgs{Mode: pulumi.String("OFF")},
		Target: &scheduler.ScheduleTargetArgs{
			Arn:     pulumi.String(DefaultBusARN(h.Env)),
			RoleArn: h.RoleARN,
			Input:   pulumi.String(contract.CanaryDetail{Bus: h.Bus, Clusters: []string{cluster}}.JSON()),
			EventbridgeParameters: &scheduler.ScheduleTargetEventbridgeParametersArgs{
				Source: pulumi.String(contract.SourceCanary), DetailType: pulumi.String(contract.DetailTypeCanary),
			},
			RetryPolicy: &scheduler.ScheduleTargetRetryPolicyArgs{
				MaximumEventAgeInSeconds: pulumi.Int(int(h.Rate.Seconds())),
				MaximumRetryAttempts:     pulumi.Int(3),
			},
		},
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("declaring the heartbeat schedule of %s: %w", cluster, err)
	}
	return s, nil
}

// Alarm declares the cluster's alarm on its queue, over two beats: its oldest message is older than two beats,
// or nothing was deleted from it in two beats. A queue with no data (Karpenter never read it, or SQS reports
// nothing) counts as not read: missing data is breaching, and each metric is filled with what a silent queue
// means (no deletes, no age).
func Alarm(ctx *pulumi.Context, name, cluster string, queueName pulumi.StringInput, h Cluster, opts ...pulumi.ResourceOption) (*cloudwatch.MetricAlarm, error) {
	window := 2 * int(h.Rate.Seconds())
	metric := func(id, metricName, stat string) cloudwatch.MetricAlarmMetricQueryArgs {
		return cloudwatch.MetricAlarmMetricQueryArgs{
			Id: pulumi.String(id),
			Metric: &cloudwatch.MetricAlarmMetricQueryMetricArgs{
				Namespace: pulumi.String("AWS/SQS"), MetricName: pulumi.String(metricName), Stat: pulumi.String(stat),
				Period: pulumi.Int(window), Dimensions: pulumi.StringMap{"QueueName": queueName},
			},
		}
	}
	var actions pulumi.Array
	for _, a := range h.AlarmActions {
		actions = append(actions, pulumi.String(a))
	}
	alarm, err := cloudwatch.NewMetricAlarm(ctx, name, &cloudwatch.MetricAlarmArgs{
		Name: pulumi.String(h.AlarmName),
		AlarmDescription: pulumi.String(fmt.Sprintf("Karpenter of cluster %s does not read its interruption queue: in the last %d s its oldest "+
			"message was older than %d s, or nothing was deleted from it, though the heartbeat puts a canary every %d s. "+
			"See the README's runbook, \"Karpenter does not read its queue\".", cluster, window, window, int(h.Rate.Seconds()))),
		MetricQueries: cloudwatch.MetricAlarmMetricQueryArray{
			metric("age", "ApproximateAgeOfOldestMessage", "Maximum"),
			metric("deleted", "NumberOfMessagesDeleted", "Sum"),
			cloudwatch.MetricAlarmMetricQueryArgs{
				Id:         pulumi.String("notReading"),
				Label:      pulumi.String("Karpenter not reading " + cluster),
				Expression: pulumi.String(NotReadingExpression(window)),
				ReturnData: pulumi.Bool(true),
			},
		},
		EvaluationPeriods:  pulumi.Int(1),
		DatapointsToAlarm:  pulumi.Int(1),
		Threshold:          pulumi.Float64(1),
		ComparisonOperator: pulumi.String("GreaterThanOrEqualToThreshold"),
		TreatMissingData:   pulumi.String("breaching"),
		AlarmActions:       actions,
		OkActions:          actions,
		Tags:               h.Tags,
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("declaring the heartbeat alarm of %s: %w", cluster, err)
	}
	return alarm, nil
}

// NotReadingExpression is the alarm's metric math over windowSeconds: 1 when the queue's oldest message is older
// than the window or nothing was deleted in it, 0 otherwise.
func NotReadingExpression(windowSeconds int) string {
	return fmt.Sprintf("IF(FILL(age, 0) > %d OR FILL(deleted, 0) == 0, 1, 0)", windowSeconds)
}
