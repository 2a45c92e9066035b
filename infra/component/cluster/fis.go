package cluster

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/fis"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/iamname"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
)

// fis declares an AWS FIS experiment template that sends a spot interruption to one running spot instance of the
// cluster (selected by Karpenter's eks:eks-cluster-name tag), with a role allowed to do just that, so operators
// can prove the whole chain in a real account: EC2 -> rule -> central queue -> router -> cluster queue ->
// Karpenter drains and replaces the node.
func (s scope) fis() error {
	env := s.env
	role, err := iam.NewRole(s.ctx, s.name("fis-role"), &iam.RoleArgs{
		Name:        pulumi.String(iamname.Role("KarpenterBusFIS-"+s.cluster, s.env.Region)),
		Description: pulumi.String("FIS spot interruption experiment on cluster " + s.cluster),
		AssumeRolePolicy: pulumi.String(policy.AssumableBy(env.Principal("fis"),
			map[string]map[string]any{"StringEquals": {"aws:SourceAccount": env.Account}}).JSON()),
		Tags: s.tags,
	}, s.parent)
	if err != nil {
		return fmt.Errorf("declaring the FIS role of %s: %w", s.cluster, err)
	}
	perms := policy.New(
		policy.Statement{
			Sid: "InterruptClusterSpotInstances", Effect: "Allow", Action: []string{"ec2:SendSpotInstanceInterruptions"},
			Resource:  []string{"arn:" + env.Partition + ":ec2:" + env.Region + ":" + env.Account + ":instance/*"},
			Condition: map[string]map[string]any{"StringEquals": {"aws:ResourceTag/eks:eks-cluster-name": s.cluster}},
		},
		// FIS resolves the target by describing instances, which takes no narrower resource.
		policy.Allow("ResolveTargets", []string{"ec2:DescribeInstances"}, []string{"*"}),
	)
	rp, err := iam.NewRolePolicy(s.ctx, s.name("fis-policy"), &iam.RolePolicyArgs{
		Name: pulumi.String("spot-interruption"), Role: role.Name, Policy: pulumi.String(perms.JSON()),
	}, s.parent)
	if err != nil {
		return fmt.Errorf("declaring the FIS policy of %s: %w", s.cluster, err)
	}
	if _, err := fis.NewExperimentTemplate(s.ctx, s.name("spot-interruption"), &fis.ExperimentTemplateArgs{
		Description: pulumi.String("Interrupt one spot instance of " + s.cluster + " to prove the interruption bus end to end"),
		RoleArn:     role.Arn,
		StopConditions: fis.ExperimentTemplateStopConditionArray{
			&fis.ExperimentTemplateStopConditionArgs{Source: pulumi.String("none")},
		},
		Targets: fis.ExperimentTemplateTargetArray{&fis.ExperimentTemplateTargetArgs{
			Name:          pulumi.String("cluster-spot-instances"),
			ResourceType:  pulumi.String("aws:ec2:spot-instance"),
			SelectionMode: pulumi.String("COUNT(1)"),
			ResourceTags: fis.ExperimentTemplateTargetResourceTagArray{
				&fis.ExperimentTemplateTargetResourceTagArgs{Key: pulumi.String("eks:eks-cluster-name"), Value: pulumi.String(s.cluster)},
			},
			Filters: fis.ExperimentTemplateTargetFilterArray{
				&fis.ExperimentTemplateTargetFilterArgs{Path: pulumi.String("State.Name"), Values: pulumi.StringArray{pulumi.String("running")}},
			},
		}},
		Actions: fis.ExperimentTemplateActionArray{&fis.ExperimentTemplateActionArgs{
			Name:     pulumi.String("interrupt"),
			ActionId: pulumi.String("aws:ec2:send-spot-instance-interruptions"),
			Parameters: fis.ExperimentTemplateActionParameterArray{
				&fis.ExperimentTemplateActionParameterArgs{Key: pulumi.String("durationBeforeInterruption"), Value: pulumi.String("PT2M")},
			},
			Target: &fis.ExperimentTemplateActionTargetArgs{Key: pulumi.String("SpotInstances"), Value: pulumi.String("cluster-spot-instances")},
		}},
		Tags: s.tags,
	}, s.parent, pulumi.DependsOn([]pulumi.Resource{rp})); err != nil {
		return fmt.Errorf("declaring the FIS experiment of %s: %w", s.cluster, err)
	}
	return nil
}
