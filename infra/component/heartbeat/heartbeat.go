// Package heartbeat declares the bus's heartbeat (docs/operations.md, "Heartbeat"): for every cluster, an EventBridge
// Scheduler schedule puts a canary naming it on the default event bus, which the bus's canary rule, the central
// queue and the router carry to the cluster's queue, where its Karpenter deletes it as a no-op; and an alarm per
// cluster fires when its Karpenter stops doing so. The shared part (a schedule group and the role the schedules
// put events with) is the Heartbeat component; each cluster's schedule and alarm are declared in its own
// component (Schedule, Alarm), so adding a cluster changes nothing shared.
package heartbeat

import (
	"fmt"
	"time"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/scheduler"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/iamname"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:Heartbeat"

// Args configure the shared part.
type Args struct {
	// NamePrefix names the schedule group and the role: "<NamePrefix>-heartbeat".
	NamePrefix string
	Env        awsenv.Env
	Tags       pulumi.StringMap
}

// Heartbeat is the shared part: what every cluster's schedule needs.
type Heartbeat struct {
	pulumi.ResourceState
	dependency.Recorder // what depending on it means (dependency.On)

	GroupName pulumi.StringOutput `pulumi:"groupName"`
	RoleARN   pulumi.StringOutput `pulumi:"roleArn"`
}

// Name is the schedule group's and the role's name for the stack whose name prefix is namePrefix.
func Name(namePrefix string) string { return namePrefix + "-heartbeat" }

// RoleName names the role the schedules of the bus of namePrefix put canaries with, in region.
func RoleName(namePrefix, region string) string {
	return iamname.OfPrefix(namePrefix, "heartbeat", region)
}

// New declares the schedule group and the role.
func New(ctx *pulumi.Context, name string, args *Args, opts ...pulumi.ResourceOption) (*Heartbeat, error) {
	h := &Heartbeat{}
	if err := dependency.Register(ctx, Type, name, h, opts...); err != nil {
		return nil, err
	}
	parent := pulumi.Parent(h)
	env := args.Env
	groupName := Name(args.NamePrefix)
	group, err := scheduler.NewScheduleGroup(ctx, name, &scheduler.ScheduleGroupArgs{
		Name: pulumi.String(groupName), Tags: args.Tags,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the heartbeat schedule group: %w", err)
	}
	role, err := iam.NewRole(ctx, name, &iam.RoleArgs{
		Name:             pulumi.String(RoleName(args.NamePrefix, args.Env.Region)),
		Description:      pulumi.String("Puts the interruption bus's heartbeat canaries on the default event bus"),
		AssumeRolePolicy: pulumi.String(Trust(env, groupName).JSON()),
		Tags:             args.Tags,
	}, parent)
	if err != nil {
		return nil, fmt.Errorf("declaring the heartbeat role: %w", err)
	}
	if _, err := iam.NewRolePolicy(ctx, name, &iam.RolePolicyArgs{
		Name: pulumi.String("put-canaries"), Role: role.Name, Policy: pulumi.String(Policy(env).JSON()),
	}, parent); err != nil {
		return nil, fmt.Errorf("declaring the heartbeat policy: %w", err)
	}
	h.GroupName, h.RoleARN = group.Name, role.Arn
	if err := ctx.RegisterResourceOutputs(h, pulumi.Map{"groupName": h.GroupName, "roleArn": h.RoleARN}); err != nil {
		return nil, err
	}
	return h, nil
}

// DefaultBusARN is the account's default event bus in the region, where canaries are put (AWS service events
// arrive only there, so the bus's rules are there too).
func DefaultBusARN(env awsenv.Env) string { return env.ARN("events", "event-bus/default") }

// Trust lets only EventBridge Scheduler take the role, for the schedules of this stack's group in this account
// (the confused-deputy keys AWS sets for Scheduler: aws:SourceAccount, and aws:SourceArn, the group's ARN).
func Trust(env awsenv.Env, groupName string) policy.Document {
	return policy.AssumableBy(env.Principal("scheduler"), map[string]map[string]any{
		"StringEquals": {"aws:SourceAccount": env.Account},
		"ArnEquals":    {"aws:SourceArn": env.ARN("scheduler", "schedule-group/"+groupName)},
	})
}

// Policy lets the schedules put canaries on the default event bus, and no other event. events:source and
// events:detail-type hold the values of every entry of a PutEvents call: all must be the canary's
// (ForAllValues), and present (Null false), since ForAllValues alone accepts an empty set.
func Policy(env awsenv.Env) policy.Document {
	s := policy.Allow("PutCanaries", []string{"events:PutEvents"}, []string{DefaultBusARN(env)})
	s.Condition = map[string]map[string]any{
		"ForAllValues:StringEquals": {"events:source": []string{contract.SourceCanary}, "events:detail-type": []string{contract.DetailTypeCanary}},
		"Null":                      {"events:source": "false", "events:detail-type": "false"},
	}
	return policy.New(s)
}

// RateExpression is EventBridge Scheduler's expression for every d, a whole number of minutes.
func RateExpression(d time.Duration) string {
	if m := int(d / time.Minute); m != 1 {
		return fmt.Sprintf("rate(%d minutes)", m)
	}
	return "rate(1 minute)"
}
