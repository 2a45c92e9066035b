package member

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudformation"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// AccountPlaceholder stands for the account in a template: CloudFormation substitutes it (Fn::Sub) in each
// account a StackSet deploys to.
const AccountPlaceholder = "${AWS::AccountId}"

// Logical IDs of the template's resources.
const (
	LogicalDLQ             = "ForwardDeadLetterQueue"
	LogicalDLQPolicy       = "ForwardDeadLetterQueuePolicy"
	LogicalForwarder       = "ForwarderRole"
	LogicalReader          = "ReaderRole"
	LogicalAlarm           = "ForwardDeadLetterQueueNotEmpty"
	LogicalHeartbeatGroup  = "HeartbeatScheduleGroup"
	LogicalHeartbeatRole   = "HeartbeatRole"
	logicalRulePrefix      = "Rule"
	maxTemplateDescription = 1024
)

// Template is the CloudFormation template of the baseline of args (whose Env.Account is AccountPlaceholder): the
// same roles, policies, rules, queue and alarm New declares, and the heartbeat's schedule group and role.
// Account-specific strings are Fn::Sub; the hub's alarm topics are not carried (alarms notify topics of their own
// account, which differ per account: add actions there if needed).
func Template(args *Args) (string, error) {
	if args.Env.Account != AccountPlaceholder {
		return "", fmt.Errorf("the template's account must be %s, not %s", AccountPlaceholder, args.Env.Account)
	}
	b := NewBaseline(args)
	tags := cfnTags(args.Tags)
	resources := map[string]any{
		LogicalDLQ: resource("AWS::SQS::Queue", map[string]any{
			"QueueName": b.DLQName, "MessageRetentionPeriod": b.DLQRetentionDays * 24 * 3600, "MaximumMessageSize": contract.MaxMessageBytes, "SqsManagedSseEnabled": true, "Tags": tags,
		}),
		LogicalDLQPolicy: resource("AWS::SQS::QueuePolicy", map[string]any{
			"Queues": []any{map[string]any{"Ref": LogicalDLQ}}, "PolicyDocument": sub(b.DLQPolicy),
		}),
		LogicalForwarder: role(b.Forwarder, tags),
		LogicalReader:    role(b.Reader, tags),
		LogicalAlarm: resource("AWS::CloudWatch::Alarm", map[string]any{
			"AlarmName": b.AlarmName, "AlarmDescription": b.AlarmDescription, "Namespace": "AWS/SQS",
			"MetricName": "ApproximateNumberOfMessagesVisible", "Statistic": "Maximum",
			"Dimensions": []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Fn::GetAtt": []any{LogicalDLQ, "QueueName"}}}},
			"Period":     60, "EvaluationPeriods": 1, "Threshold": 0, "ComparisonOperator": "GreaterThanThreshold",
			"TreatMissingData": "notBreaching", "Tags": tags,
		}),
		LogicalHeartbeatGroup: resource("AWS::Scheduler::ScheduleGroup", map[string]any{"Name": b.HeartbeatGroup, "Tags": tags}),
		LogicalHeartbeatRole:  role(b.Heartbeat, tags),
	}
	for _, r := range b.Rules {
		var pattern map[string]any
		if err := json.Unmarshal([]byte(r.Pattern), &pattern); err != nil {
			return "", fmt.Errorf("rule %s: %w", r.Key, err)
		}
		rule := resource("AWS::Events::Rule", map[string]any{
			"Name": b.RuleNames[r.Key], "Description": r.Description, "EventPattern": pattern, "State": "ENABLED",
			"Targets": []any{map[string]any{
				"Id": TargetID, "Arn": args.HubCentralQueueARN,
				"RoleArn": map[string]any{"Fn::GetAtt": []any{LogicalForwarder, "Arn"}},
				// The account the stack instance runs in is its message group (bus.MessageGroup), which the
				// template can only name by its pseudo parameter.
				"SqsParameters":    map[string]any{"MessageGroupId": map[string]any{"Ref": "AWS::AccountId"}},
				"RetryPolicy":      map[string]any{"MaximumEventAgeInSeconds": b.EventMaxAgeSeconds, "MaximumRetryAttempts": b.RetryAttempts},
				"DeadLetterConfig": map[string]any{"Arn": map[string]any{"Fn::GetAtt": []any{LogicalDLQ, "Arn"}}},
			}},
		})
		rule["DependsOn"] = []any{LogicalForwarder}
		resources[RuleLogicalID(r.Key)] = rule
	}
	t := map[string]any{
		"AWSTemplateFormatVersion": "2010-09-09",
		"Description": fmt.Sprintf("The member baseline of the Karpenter interruption bus %s: forwarding rules to the hub's central queue, "+
			"their role and dead-letter queue, the hub router's reader role, the heartbeat's schedule group and role", args.NamePrefix),
		"Resources": resources,
	}
	out, err := json.Marshal(t)
	return string(out), err
}

// RuleLogicalID is the logical ID of the rule of key ("spot-interruption" -> RuleSpotInterruption).
func RuleLogicalID(key string) string {
	var b strings.Builder
	b.WriteString(logicalRulePrefix)
	for _, part := range strings.Split(key, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}

func resource(typ string, properties map[string]any) map[string]any {
	return map[string]any{"Type": typ, "Properties": properties}
}

func role(r Role, tags []any) map[string]any {
	return resource("AWS::IAM::Role", map[string]any{
		"RoleName": r.Name, "Description": r.Description, "AssumeRolePolicyDocument": sub(r.Trust),
		"Policies": []any{map[string]any{"PolicyName": r.PolicyName, "PolicyDocument": sub(r.Policy)}}, "Tags": tags,
	})
}

// sub is a policy document as a template value: every string naming the account becomes an Fn::Sub.
func sub(doc any) any {
	var plain any
	b, _ := json.Marshal(doc) // plain data
	_ = json.Unmarshal(b, &plain)
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, AccountPlaceholder) {
				return map[string]any{"Fn::Sub": x}
			}
			return x
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
			return x
		case map[string]any:
			for k := range x {
				x[k] = walk(x[k])
			}
			return x
		}
		return v
	}
	return walk(plain)
}

func cfnTags(tags map[string]string) []any {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]any, 0, len(keys))
	for _, k := range keys {
		out = append(out, map[string]any{"Key": k, "Value": tags[k]})
	}
	return out
}

// StackSetType is the StackSet component's type token.
const StackSetType = "karpenter-interruption-bus:index:MemberBaseline"

// StackSetArgs configure the StackSet of the member baseline.
type StackSetArgs struct {
	// Baseline is the baseline's Args, its Env.Account AccountPlaceholder.
	Baseline *Args
	// OrganizationalUnits receive it, every account in them automatically; Region is the hub's.
	OrganizationalUnits []string
	Region              string
	// CallAs is DELEGATED_ADMIN or SELF.
	CallAs string
}

// StackSet is the member baseline as a service-managed StackSet.
type StackSet struct {
	pulumi.ResourceState
	dependency.Recorder // what depending on it means (dependency.On)

	Name pulumi.StringOutput `pulumi:"stackSetName"`
	// instance is the deployment to the units: what an account's use of the baseline waits for.
	instance *cloudformation.StackSetInstance
}

// Deployed is value once the StackSet has been deployed to the units: a resource given it (a member's cluster's
// heartbeat schedule, by its group's and role's names) waits for the baseline.
func (s *StackSet) Deployed(value string) pulumi.StringOutput {
	return s.instance.ID().ToStringOutput().ApplyT(func(string) string { return value }).(pulumi.StringOutput)
}

// StackSetName names the StackSet of the bus of namePrefix.
func StackSetName(namePrefix string) string { return namePrefix + "-member-baseline" }

// NewStackSet declares the member baseline as a service-managed StackSet with automatic deployment to the
// organizational units, in the hub's region: an account created in or moved into them gets the baseline with no
// hub update, an account leaving them loses it. CloudFormation deploys service-managed StackSets to every account
// of the units but the organization's management account, and only from the management account or a delegated
// administrator, with trusted access for StackSets enabled in AWS Organizations (docs/organization.md, "An organization of any
// size").
func NewStackSet(ctx *pulumi.Context, name string, args *StackSetArgs, opts ...pulumi.ResourceOption) (*StackSet, error) {
	s := &StackSet{}
	if err := dependency.Register(ctx, StackSetType, name, s, opts...); err != nil {
		return nil, err
	}
	body, err := Template(args.Baseline)
	if err != nil {
		return nil, err
	}
	setName := StackSetName(args.Baseline.NamePrefix)
	set, err := cloudformation.NewStackSet(ctx, name, &cloudformation.StackSetArgs{
		Name:            pulumi.String(setName),
		Description:     pulumi.String("Member baseline of the Karpenter interruption bus " + args.Baseline.NamePrefix),
		PermissionModel: pulumi.String("SERVICE_MANAGED"),
		CallAs:          pulumi.String(args.CallAs),
		// An account leaving the units loses the baseline: its rules stop forwarding and the router may no longer
		// read it, as for an account never on the bus ("AutoDeployment",
		// https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_AutoDeployment.html).
		AutoDeployment: &cloudformation.StackSetAutoDeploymentArgs{
			Enabled: pulumi.Bool(true), RetainStacksOnAccountRemoval: pulumi.Bool(false),
		},
		ManagedExecution: &cloudformation.StackSetManagedExecutionArgs{Active: pulumi.Bool(true)},
		OperationPreferences: &cloudformation.StackSetOperationPreferencesArgs{
			FailureTolerancePercentage: pulumi.Int(10), MaxConcurrentPercentage: pulumi.Int(25),
		},
		Capabilities: pulumi.StringArray{pulumi.String("CAPABILITY_NAMED_IAM")},
		TemplateBody: pulumi.String(body),
		Tags:         pulumi.ToStringMap(args.Baseline.Tags),
	}, pulumi.Parent(s), pulumi.IgnoreChanges([]string{"administrationRoleArn"}))
	if err != nil {
		return nil, fmt.Errorf("declaring the member baseline StackSet: %w", err)
	}
	if s.instance, err = cloudformation.NewStackSetInstance(ctx, name, &cloudformation.StackSetInstanceArgs{
		StackSetName: set.Name,
		CallAs:       pulumi.String(args.CallAs),
		Region:       pulumi.String(args.Region),
		DeploymentTargets: &cloudformation.StackSetInstanceDeploymentTargetsArgs{
			OrganizationalUnitIds: pulumi.ToStringArray(args.OrganizationalUnits),
		},
	}, pulumi.Parent(s)); err != nil {
		return nil, fmt.Errorf("declaring the member baseline StackSet's deployment: %w", err)
	}
	s.Name = set.Name
	if err := ctx.RegisterResourceOutputs(s, pulumi.Map{"stackSetName": s.Name}); err != nil {
		return nil, err
	}
	return s, nil
}
