// Package member declares what the bus needs in one member account, besides its clusters: the forwarding rules,
// which send the account's EC2 and AWS Health events (and its canaries) straight to the hub's central queue, with
// the role they send as and a dead-letter queue for what they cannot deliver; the reader role the hub's router
// assumes to look the account's instances up; and, with the heartbeat, the schedule group and role the account's
// clusters' schedules put canaries with (docs/organization.md, "One bus for an organization").
//
// The baseline is described once (Baseline) and reaches an account two ways: declared by the hub through the
// account's own provider (New), or as the template of a service-managed CloudFormation StackSet deployed to
// organizational units (Template, declared by StackSet), so that an account created in or moved into them gets
// it without any hub update.
package member

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/sqs"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/iamname"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:MemberAccount"

// Args configure one member account's baseline.
type Args struct {
	// NamePrefix names the account's resources as the hub's: "<NamePrefix>-<rule>", "<NamePrefix>-forward", ...
	NamePrefix string
	// Env is the member account's: its partition and region are the hub's, its account its own (in a template,
	// "${AWS::AccountId}", which CloudFormation substitutes in each account).
	Env awsenv.Env
	// HubCentralQueueARN is where the rules send; HubRouterRoleARN the only principal that may take the reader
	// role.
	HubCentralQueueARN string
	HubRouterRoleARN   string
	// EventMaxAgeSeconds bounds how long EventBridge retries delivering an event to the hub.
	EventMaxAgeSeconds int
	// AlarmActions are notified by the account's alarm (topics of the account).
	AlarmActions []string
	Tags         map[string]string
}

// Role is an IAM role with one inline policy.
type Role struct {
	Name, Description string
	Trust             policy.Document
	PolicyName        string
	Policy            policy.Document
}

// Baseline is everything a member account gets, as plain values: what New declares and Template writes.
type Baseline struct {
	DLQName          string
	DLQRetentionDays int
	DLQPolicy        policy.Document
	Forwarder        Role
	Reader           Role
	// Rules are the forwarding rules, each sending to the hub's central queue as the forwarder.
	Rules []bus.Rule
	// RuleNames are the rules' names, by their Key.
	RuleNames          map[string]string
	EventMaxAgeSeconds int
	RetryAttempts      int
	AlarmName          string
	AlarmDescription   string
	// HeartbeatGroup and Heartbeat are the schedule group and role of the account's clusters' schedules.
	HeartbeatGroup string
	Heartbeat      Role
}

// ForwarderRoleName and ReaderRoleName name the account's two roles; their ARNs are known before they exist,
// so the hub's policies can name them.
func ForwarderRoleName(namePrefix, region string) string {
	return bus.ForwarderRoleName(namePrefix, region)
}

// ReaderRoleName names the role the hub's router assumes in the account.
func ReaderRoleName(namePrefix, region string) string {
	return iamname.OfPrefix(namePrefix, "reader", region)
}

// DLQName names the account's dead-letter queue of the forwarding rules.
func DLQName(namePrefix string) string { return namePrefix + "-forward-dlq" }

// NewBaseline describes the baseline of the account of args.Env.
func NewBaseline(args *Args) Baseline {
	env, np := args.Env, args.NamePrefix
	b := Baseline{
		DLQName: DLQName(np), DLQRetentionDays: 14, RuleNames: map[string]string{},
		EventMaxAgeSeconds: args.EventMaxAgeSeconds, RetryAttempts: 185,
		Forwarder: Role{
			Name:        ForwarderRoleName(np, env.Region),
			Description: "EventBridge sends this account's interruption events to the interruption bus " + np + " as this role",
			Trust:       ForwarderTrust(env), PolicyName: "forward",
			Policy: policy.New(policy.Allow("SendToTheHub", []string{"sqs:SendMessage"}, []string{args.HubCentralQueueARN})),
		},
		Reader: Role{
			Name:        ReaderRoleName(np, env.Region),
			Description: "The router of the interruption bus " + np + " looks this account's instances up as this role",
			Trust:       ReaderTrust(args.HubRouterRoleARN), PolicyName: "find-instance-owners",
			Policy: ReaderPolicy(env, ForwarderRoleName(np, env.Region)),
		},
		AlarmName: np + "-forward-dlq-not-empty",
		AlarmDescription: "Interruption events of this account could not be sent to the interruption bus " + np +
			". See the runbook (docs/operations.md), \"DLQ not empty\".",
		HeartbeatGroup: heartbeat.Name(np),
		Heartbeat: Role{
			Name:        heartbeat.RoleName(np, env.Region),
			Description: "Puts the interruption bus's heartbeat canaries on the default event bus",
			Trust:       heartbeat.Trust(env, heartbeat.Name(np)), PolicyName: "put-canaries", Policy: heartbeat.Policy(env),
		},
	}
	var ruleARNs []string
	for _, r := range bus.Rules(np) {
		b.Rules = append(b.Rules, r)
		b.RuleNames[r.Key] = np + "-" + r.Key
		ruleARNs = append(ruleARNs, env.ARN("events", "rule/"+np+"-"+r.Key))
	}
	b.DLQPolicy = bus.DLQPolicy(env, env.ARN("sqs", b.DLQName), "", ruleARNs)
	return b
}

// Member is one member account's part of the bus.
type Member struct {
	pulumi.ResourceState
	dependency.Recorder // what depending on it means (dependency.On)

	ForwarderRoleARN pulumi.StringOutput `pulumi:"forwarderRoleArn"`
	ReaderRoleARN    pulumi.StringOutput `pulumi:"readerRoleArn"`
}

// New declares the member account's baseline, less the heartbeat's part (the heartbeat package's component
// declares it beside). The component and its children are declared through opts' provider (the account's).
func New(ctx *pulumi.Context, name string, args *Args, opts ...pulumi.ResourceOption) (*Member, error) {
	m := &Member{}
	if err := dependency.Register(ctx, Type, name, m, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Parent(m)
	env := args.Env
	b := NewBaseline(args)
	tags := pulumi.ToStringMap(args.Tags)

	// maxMessageSize left to the provider's default, 256 KiB (router/contract.MaxMessageBytes says why).
	dlq, err := sqs.NewQueue(ctx, name+"-forward-dlq", &sqs.QueueArgs{
		Name:                    pulumi.String(b.DLQName),
		MessageRetentionSeconds: pulumi.Int(b.DLQRetentionDays * 24 * 3600), // to inspect and redrive
		SqsManagedSseEnabled:    pulumi.Bool(true),
		Tags:                    tags,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the forwarding dead-letter queue of %s: %w", env.Account, err)
	}
	if _, err := sqs.NewQueuePolicy(ctx, name+"-forward-dlq", &sqs.QueuePolicyArgs{
		QueueUrl: dlq.Url, Policy: pulumi.String(b.DLQPolicy.JSON()),
	}, parent); err != nil {
		return nil, fmt.Errorf("declaring the forwarding dead-letter queue policy of %s: %w", env.Account, err)
	}
	forwarder, forwarderPolicy, err := declareRole(ctx, name+"-forward", b.Forwarder, tags, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the forwarder role of %s: %w", env.Account, err)
	}
	for _, r := range b.Rules {
		rule, err := cloudwatch.NewEventRule(ctx, name+"-"+r.Key, &cloudwatch.EventRuleArgs{
			Name:         pulumi.String(b.RuleNames[r.Key]),
			Description:  pulumi.String(r.Description + " (in account " + env.Account + ")"),
			EventPattern: pulumi.String(r.Pattern),
			Tags:         tags,
		}, parent)
		if err != nil {
			return nil, fmt.Errorf("declaring rule %s of %s: %w", r.Key, env.Account, err)
		}
		if _, err := cloudwatch.NewEventTarget(ctx, name+"-"+r.Key, &cloudwatch.EventTargetArgs{
			Rule:     rule.Name,
			TargetId: pulumi.String(TargetID),
			Arn:      pulumi.String(args.HubCentralQueueARN),
			RoleArn:  forwarder.Arn,
			// The member's own message group in the hub's fair queue (bus.MessageGroup).
			SqsTarget: &cloudwatch.EventTargetSqsTargetArgs{MessageGroupId: pulumi.String(bus.MessageGroup(env.Account))},
			RetryPolicy: &cloudwatch.EventTargetRetryPolicyArgs{
				MaximumEventAgeInSeconds: pulumi.Int(b.EventMaxAgeSeconds),
				MaximumRetryAttempts:     pulumi.Int(b.RetryAttempts),
			},
			DeadLetterConfig: &cloudwatch.EventTargetDeadLetterConfigArgs{Arn: dlq.Arn},
		}, parent, pulumi.DependsOn([]pulumi.Resource{forwarderPolicy})); err != nil {
			return nil, fmt.Errorf("declaring the target of rule %s of %s: %w", r.Key, env.Account, err)
		}
	}
	reader, _, err := declareRole(ctx, name+"-reader", b.Reader, tags, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the reader role of %s: %w", env.Account, err)
	}

	var actions pulumi.Array
	for _, a := range args.AlarmActions {
		actions = append(actions, pulumi.String(a))
	}
	if _, err := cloudwatch.NewMetricAlarm(ctx, name+"-forward-dlq-not-empty", &cloudwatch.MetricAlarmArgs{
		Name:               pulumi.String(b.AlarmName),
		AlarmDescription:   pulumi.String(b.AlarmDescription),
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
		Tags:               tags,
	}, parent); err != nil {
		return nil, fmt.Errorf("declaring the forwarding alarm of %s: %w", env.Account, err)
	}

	m.ForwarderRoleARN, m.ReaderRoleARN = forwarder.Arn, reader.Arn
	if err := ctx.RegisterResourceOutputs(m, pulumi.Map{"forwarderRoleArn": m.ForwarderRoleARN, "readerRoleArn": m.ReaderRoleARN}); err != nil {
		return nil, err
	}
	return m, nil
}

// TargetID is the forwarding rules' target's ID.
const TargetID = "hub-central-queue"

func declareRole(ctx *pulumi.Context, name string, r Role, tags pulumi.StringMap, opts ...pulumi.ResourceOption) (*iam.Role, *iam.RolePolicy, error) {
	role, err := iam.NewRole(ctx, name, &iam.RoleArgs{
		Name: pulumi.String(r.Name), Description: pulumi.String(r.Description),
		AssumeRolePolicy: pulumi.String(r.Trust.JSON()), Tags: tags,
	}, opts...)
	if err != nil {
		return nil, nil, err
	}
	inline, err := iam.NewRolePolicy(ctx, name, &iam.RolePolicyArgs{
		Name: pulumi.String(r.PolicyName), Role: role.Name, Policy: pulumi.String(r.Policy.JSON()),
	}, opts...)
	return role, inline, err
}

// ForwarderTrust is the member forwarder's trust: the same as every account's forwarder (bus.ForwarderTrust).
func ForwarderTrust(env awsenv.Env) policy.Document { return bus.ForwarderTrust(env) }

// ReaderTrust lets only the hub's router role take the reader role: the hub's account as the principal, the
// router's ARN as aws:PrincipalArn, so the trust can be set before the router's role exists, and survives its
// being recreated.
func ReaderTrust(hubRouterRoleARN string) policy.Document {
	principal, condition := policy.PrincipalIs(hubRouterRoleARN)
	return policy.New(policy.Statement{
		Effect: "Allow", Principal: principal, Action: []string{"sts:AssumeRole"}, Condition: condition,
	})
}

// ReaderPolicy is what the hub's router does as the reader: describing instances in the bus's region, to find
// their owners, and reading the account's own forwarder role (iam:GetRole on that one ARN), to learn its unique ID,
// the SenderId of the account's deliveries to the central queue (docs/security.md, "Who sent each message");
// nothing else.
func ReaderPolicy(env awsenv.Env, forwarderRoleName string) policy.Document {
	s := policy.Allow("FindInstanceOwners", []string{"ec2:DescribeInstances"}, []string{"*"})
	s.Condition = map[string]map[string]any{"StringEquals": {"aws:RequestedRegion": env.Region}}
	return policy.New(s, policy.Allow("LearnTheForwarderRoleID", []string{"iam:GetRole"}, []string{env.IAMARN("role/" + forwarderRoleName)}))
}
