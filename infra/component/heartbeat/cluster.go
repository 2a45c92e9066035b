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

// AgeThreshold is the age past which a message waiting in a cluster queue means its Karpenter is not reading it:
// Karpenter long-polls its queue continuously (20 s polls), and a spot warning older than its two minutes is
// moot. It is below the queue's retention (300 s), so the age branch can fire at every heartbeat rate.
const AgeThreshold = 2 * time.Minute

// MetricLag is how late the alarm allows a queue's datapoint to be: SQS sends its metrics at one-minute
// intervals, and the latest minute may not have reached CloudWatch when the alarm evaluates. A datapoint not yet
// there is filled as no deletes (FILL), which reads as breaching.
const MetricLag = 2 * time.Minute

// Evaluation is the heartbeat alarm's rule at a heartbeat rate: one datapoint per beat, and M out of N of them
// breaching to alarm. CloudWatch's FILL fills the latest datapoints that have not arrived yet, which "can result
// in the alarm being stuck" (its metric-math documentation) or, here, flapping on one late point; the documented
// remedy is an M-out-of-N alarm. M is one more than the datapoints that may be late (MetricLag over the period)
// plus one period without a beat (a beat landing just across a period's boundary leaves the period before it
// empty): together they can never reach M, while a stopped Karpenter makes every period breach.
type Evaluation struct {
	Period time.Duration
	// Late is how many of the latest datapoints may not have arrived.
	Late int
	// DatapointsToAlarm (M) of the last EvaluationPeriods (N) breaching alarm.
	DatapointsToAlarm, EvaluationPeriods int
}

// EvaluationFor is the rule for a heartbeat every rate.
func EvaluationFor(rate time.Duration) Evaluation {
	late := int((MetricLag + rate - 1) / rate)
	m := late + 2
	return Evaluation{Period: rate, Late: late, DatapointsToAlarm: m, EvaluationPeriods: m + 1}
}

// TimeToAlarm bounds how long after its Karpenter stops reading the alarm fires: the period the stop falls in may
// still hold a delete; the M after it breach; the last of them may be up to MetricLag late.
func (e Evaluation) TimeToAlarm() (lo, hi time.Duration) {
	return time.Duration(e.DatapointsToAlarm-1) * e.Period, time.Duration(e.DatapointsToAlarm+1)*e.Period + MetricLag
}

// Alarm declares the cluster's alarm on its queue, one datapoint per beat: its oldest message is older than
// AgeThreshold, or nothing was deleted from it; M of N such datapoints alarm (EvaluationFor). A queue with no data
// at all (Karpenter never read it, no canary reached it, so SQS reports nothing) counts as not read: missing data
// is breaching, and each metric is filled with what a silent queue means (no deletes, no age).
func Alarm(ctx *pulumi.Context, name, cluster string, queueName pulumi.StringInput, h Cluster, opts ...pulumi.ResourceOption) (*cloudwatch.MetricAlarm, error) {
	e := EvaluationFor(h.Rate)
	period := int(e.Period.Seconds())
	metric := func(id, metricName, stat string) cloudwatch.MetricAlarmMetricQueryArgs {
		return cloudwatch.MetricAlarmMetricQueryArgs{
			Id: pulumi.String(id),
			Metric: &cloudwatch.MetricAlarmMetricQueryMetricArgs{
				Namespace: pulumi.String("AWS/SQS"), MetricName: pulumi.String(metricName), Stat: pulumi.String(stat),
				Period: pulumi.Int(period), Dimensions: pulumi.StringMap{"QueueName": queueName},
			},
		}
	}
	var actions pulumi.Array
	for _, a := range h.AlarmActions {
		actions = append(actions, pulumi.String(a))
	}
	lo, hi := e.TimeToAlarm()
	alarm, err := cloudwatch.NewMetricAlarm(ctx, name, &cloudwatch.MetricAlarmArgs{
		Name: pulumi.String(h.AlarmName),
		AlarmDescription: pulumi.String(fmt.Sprintf("Karpenter of cluster %s does not read its interruption queue: in %d of the last %d "+
			"periods of %d s (one heartbeat each), its oldest message was older than %d s or nothing was deleted from it. "+
			"Fires %s to %s after Karpenter stops. See the runbook (docs/operations.md), \"Karpenter does not read its queue\".",
			cluster, e.DatapointsToAlarm, e.EvaluationPeriods, period, int(AgeThreshold.Seconds()), lo, hi)),
		MetricQueries: cloudwatch.MetricAlarmMetricQueryArray{
			metric("age", "ApproximateAgeOfOldestMessage", "Maximum"),
			metric("deleted", "NumberOfMessagesDeleted", "Sum"),
			cloudwatch.MetricAlarmMetricQueryArgs{
				Id:         pulumi.String("notReading"),
				Label:      pulumi.String("Karpenter not reading " + cluster),
				Expression: pulumi.String(NotReadingExpression()),
				ReturnData: pulumi.Bool(true),
			},
		},
		EvaluationPeriods:  pulumi.Int(e.EvaluationPeriods),
		DatapointsToAlarm:  pulumi.Int(e.DatapointsToAlarm),
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

// NotReadingExpression is the alarm's metric math, per period: 1 when the queue's oldest message is older than
// AgeThreshold or nothing was deleted from it, 0 otherwise.
func NotReadingExpression() string {
	return fmt.Sprintf("IF(FILL(age, 0) > %d OR FILL(deleted, 0) == 0, 1, 0)", int(AgeThreshold.Seconds()))
}
