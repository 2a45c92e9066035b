// Package member declares what the bus needs in one member account, through that account's own provider,
// besides its clusters: the forwarding rules, which send the account's EC2 and AWS Health events (and its
// canaries) straight to the hub's central queue, with the role they send as and a dead-letter queue for what
// they cannot deliver; and the reader role the hub's router assumes to look the account's instances up
// (README, "One bus for an organization").
package member

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/iamname"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:MemberAccount"

// Args configure one member account.
type Args struct {
	// NamePrefix names the account's resources as the hub's: "<NamePrefix>-<rule>", "<NamePrefix>-forward", ...
	NamePrefix string
	// Env is the member account's: its partition and region are the hub's, its account its own.
	Env awsenv.Env
	// HubCentralQueueARN is where the rules send; HubRouterRoleARN the only principal that may take the reader
	// role.
	HubCentralQueueARN string
	HubRouterRoleARN   string
	// EventMaxAgeSeconds bounds how long EventBridge retries delivering an event to the hub.
	EventMaxAgeSeconds int
	// AlarmActions are notified by the account's alarm (topics of the account).
	AlarmActions []string
	Tags         pulumi.StringMap
}

// Member is one member account's part of the bus.
type Member struct {
	pulumi.ResourceState

	ForwarderRoleARN pulumi.StringOutput `pulumi:"forwarderRoleArn"`
	ReaderRoleARN    pulumi.StringOutput `pulumi:"readerRoleArn"`
}

// ForwarderRoleName and ReaderRoleName name the account's two roles; their ARNs are known before they exist,
// so the hub's policies can name them.
func ForwarderRoleName(namePrefix string) string { return iamname.Role(namePrefix + "-forward") }

// ReaderRoleName names the role the hub's router assumes in the account.
func ReaderRoleName(namePrefix string) string { return iamname.Role(namePrefix + "-reader") }

// DLQName names the account's dead-letter queue of the forwarding rules.
func DLQName(namePrefix string) string { return namePrefix + "-forward-dlq" }

// New declares the member account's part. The component and its children are declared through opts' provider
// (the account's).
func New(ctx *pulumi.Context, name string, args *Args, opts ...pulumi.ResourceOption) (*Member, error) {
	m := &Member{}
	if err := ctx.RegisterComponentResource(Type, name, m, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Parent(m)
	env, np := args.Env, args.NamePrefix
	var ruleARNs []string
	for _, r := range bus.Rules(np) {
		ruleARNs = append(ruleARNs, env.ARN("events", "rule/"+np+"-"+r.Key))
	}
	dlqARN := env.ARN("sqs", DLQName(np))

	dlq, err := sqs.NewQueue(ctx, name+"-forward-dlq", &sqs.QueueArgs{
		Name:                    pulumi.String(DLQName(np)),
		MessageRetentionSeconds: pulumi.Int(1209600), // 14 days to inspect and redrive
		SqsManagedSseEnabled:    pulumi.Bool(true),
		Tags:                    args.Tags,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the forwarding dead-letter queue of %s: %w", env.Account, err)
	}
	if _, err := sqs.NewQueuePolicy(ctx, name+"-forward-dlq", &sqs.QueuePolicyArgs{
		QueueUrl: dlq.Url, Policy: pulumi.String(bus.DLQPolicy(env, dlqARN, "", ruleARNs).JSON()),
	}, parent); err != nil {
		return nil, fmt.Errorf("declaring the forwarding dead-letter queue policy of %s: %w", env.Account, err)
	}

	forwarder, err := iam.NewRole(ctx, name+"-forward", &iam.RoleArgs{
		Name:             pulumi.String(ForwarderRoleName(np)),
		Description:      pulumi.String("EventBridge sends this account's interruption events to the interruption bus " + np + " as this role"),
		AssumeRolePolicy: pulumi.String(ForwarderTrust(env, ruleARNs).JSON()),
		Tags:             args.Tags,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the forwarder role of %s: %w", env.Account, err)
	}
	forwarderPolicy, err := iam.NewRolePolicy(ctx, name+"-forward", &iam.RolePolicyArgs{
		Name: pulumi.String("forward"), Role: forwarder.Name,
		Policy: pulumi.String(policy.New(policy.Allow("SendToTheHub", []string{"sqs:SendMessage"}, []string{args.HubCentralQueueARN})).JSON()),
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the forwarder policy of %s: %w", env.Account, err)
	}
	for _, r := range bus.Rules(np) {
		rule, err := cloudwatch.NewEventRule(ctx, name+"-"+r.Key, &cloudwatch.EventRuleArgs{
			Name:         pulumi.String(np + "-" + r.Key),
			Description:  pulumi.String(r.Description + " (in account " + env.Account + ")"),
			EventPattern: pulumi.String(r.Pattern),
			Tags:         args.Tags,
		}, parent)
		if err != nil {
			return nil, fmt.Errorf("declaring rule %s of %s: %w", r.Key, env.Account, err)
		}
		if _, err := cloudwatch.NewEventTarget(ctx, name+"-"+r.Key, &cloudwatch.EventTargetArgs{
			Rule:     rule.Name,
			TargetId: pulumi.String("hub-central-queue"),
			Arn:      pulumi.String(args.HubCentralQueueARN),
			RoleArn:  forwarder.Arn,
			RetryPolicy: &cloudwatch.EventTargetRetryPolicyArgs{
				MaximumEventAgeInSeconds: pulumi.Int(args.EventMaxAgeSeconds),
				MaximumRetryAttempts:     pulumi.Int(185),
			},
			DeadLetterConfig: &cloudwatch.EventTargetDeadLetterConfigArgs{Arn: dlq.Arn},
		}, parent, pulumi.DependsOn([]pulumi.Resource{forwarderPolicy})); err != nil {
			return nil, fmt.Errorf("declaring the target of rule %s of %s: %w", r.Key, env.Account, err)
		}
	}

	reader, err := iam.NewRole(ctx, name+"-reader", &iam.RoleArgs{
		Name:             pulumi.String(ReaderRoleName(np)),
		Description:      pulumi.String("The router of the interruption bus " + np + " looks this account's instances up as this role"),
		AssumeRolePolicy: pulumi.String(ReaderTrust(args.HubRouterRoleARN).JSON()),
		Tags:             args.Tags,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the reader role of %s: %w", env.Account, err)
	}
	if _, err := iam.NewRolePolicy(ctx, name+"-reader", &iam.RolePolicyArgs{
		Name: pulumi.String("find-instance-owners"), Role: reader.Name, Policy: pulumi.String(ReaderPolicy(env).JSON()),
	}, parent); err != nil {
		return nil, fmt.Errorf("declaring the reader policy of %s: %w", env.Account, err)
	}

	var actions pulumi.Array
	for _, a := range args.AlarmActions {
		actions = append(actions, pulumi.String(a))
	}
	if _, err := cloudwatch.NewMetricAlarm(ctx, name+"-forward-dlq-not-empty", &cloudwatch.MetricAlarmArgs{
		Name:               pulumi.String(np + "-forward-dlq-not-empty"),
		AlarmDescription:   pulumi.String("Interruption events of account " + env.Account + " could not be sent to the interruption bus " + np + ". See the README's runbook, \"DLQ not empty\"."),
		Namespace:          pulumi.String("AWS/SQS"),
		MetricName:         pulumi.String("ApproximateNumberOfMessagesVisible"),
		Statistic:          pulumi.String("Maximum"),
		Dimensions:         pulumi.StringMap{"QueueName": dlq.Name},
		Period:             pulumi.Int(60),
		EvaluationPeriods:  pulumi.Int(1),
		Threshold:          pulumi.Float64(0),
		ComparisonOperator: pulumi.String("GreaterThanThreshold"),
		TreatMissingData:   pulumi.String("notBreaching"),
		AlarmActions:       actions,
		OkActions:          actions,
		Tags:               args.Tags,
	}, parent); err != nil {
		return nil, fmt.Errorf("declaring the forwarding alarm of %s: %w", env.Account, err)
	}

	m.ForwarderRoleARN, m.ReaderRoleARN = forwarder.Arn, reader.Arn
	if err := ctx.RegisterResourceOutputs(m, pulumi.Map{"forwarderRoleArn": m.ForwarderRoleARN, "readerRoleArn": m.ReaderRoleARN}); err != nil {
		return nil, err
	}
	return m, nil
}

// ForwarderTrust lets only EventBridge take the forwarder role, for the account's own forwarding rules.
func ForwarderTrust(env awsenv.Env, ruleARNs []string) policy.Document {
	return policy.AssumableBy(env.Principal("events"), map[string]map[string]any{
		"StringEquals": {"aws:SourceAccount": env.Account},
		"ArnEquals":    {"aws:SourceArn": ruleARNs},
	})
}

// ReaderTrust lets only the hub's router role take the reader role.
func ReaderTrust(hubRouterRoleARN string) policy.Document {
	return policy.New(policy.Statement{
		Effect: "Allow", Principal: map[string]string{"AWS": hubRouterRoleARN}, Action: []string{"sts:AssumeRole"},
	})
}

// ReaderPolicy is what finding owners takes: describing instances in the bus's region, and nothing else.
func ReaderPolicy(env awsenv.Env) policy.Document {
	s := policy.Allow("FindInstanceOwners", []string{"ec2:DescribeInstances"}, []string{"*"})
	s.Condition = map[string]map[string]any{"StringEquals": {"aws:RequestedRegion": env.Region}}
	return policy.New(s)
}
