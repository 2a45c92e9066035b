package cluster

import (
	"fmt"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	awseks "github.com/pulumi/pulumi-aws/sdk/v6/go/aws/eks"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-eks/sdk/v2/go/eks"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// DiscoveryTag marks the subnets and security groups Karpenter's EC2NodeClass selects.
const DiscoveryTag = "karpenter.sh/discovery"

// systemNodePolicies run the small node group Karpenter itself is scheduled on.
var systemNodePolicies = []string{"AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryReadOnly"}

// createCluster declares a new EKS cluster with pulumi-eks (API authentication for access entries, an IAM OIDC
// provider, no default node group), a managed system node group for Karpenter, the EKS Pod Identity agent, and
// the discovery tags on its subnets. It returns what the installation must wait for.
func (d *declarer) createCluster() ([]pulumi.Resource, error) {
	cl, env := d.args.Cluster, d.args.Env
	c := cl.Create
	mode := eks.AuthenticationModeApi
	skipDefault := true
	args := &eks.ClusterArgs{
		Name:                  pulumi.String(cl.Name),
		VpcId:                 pulumi.String(c.VpcID),
		SubnetIds:             pulumi.ToStringArray(c.SubnetIDs),
		CreateOidcProvider:    pulumi.Bool(true),
		AuthenticationMode:    &mode,
		SkipDefaultNodeGroup:  &skipDefault,
		NodeSecurityGroupTags: pulumi.StringMap{DiscoveryTag: pulumi.String(cl.Name)},
		Tags:                  d.tags,
	}
	if c.KubernetesVersion != "" {
		args.Version = pulumi.String(c.KubernetesVersion)
	}
	cluster, err := eks.NewCluster(d.ctx, d.name("eks"), args, d.parent())
	if err != nil {
		return nil, fmt.Errorf("declaring EKS cluster %s: %w", cl.Name, err)
	}
	for _, subnet := range c.SubnetIDs {
		if _, err := ec2.NewTag(d.ctx, d.name("discovery-"+subnet), &ec2.TagArgs{
			ResourceId: pulumi.String(subnet), Key: pulumi.String(DiscoveryTag), Value: pulumi.String(cl.Name),
		}, d.parent()); err != nil {
			return nil, fmt.Errorf("tagging subnet %s for Karpenter discovery: %w", subnet, err)
		}
	}

	sysRole, err := iam.NewRole(d.ctx, d.name("system-node-role"), &iam.RoleArgs{
		Name:             pulumi.String(queuename.Shorten("KarpenterSystem-"+cl.Name, maxRoleName)),
		Description:      pulumi.String("System nodes running Karpenter on cluster " + cl.Name),
		AssumeRolePolicy: pulumi.String(policy.AssumableBy(env.Principal("ec2"), nil).JSON()),
		Tags:             d.tags,
	}, d.parent())
	if err != nil {
		return nil, fmt.Errorf("declaring the system node role of %s: %w", cl.Name, err)
	}
	var attachments []pulumi.Resource
	for _, p := range systemNodePolicies {
		a, err := iam.NewRolePolicyAttachment(d.ctx, d.name("system-node-"+p), &iam.RolePolicyAttachmentArgs{
			Role: sysRole.Name, PolicyArn: pulumi.String("arn:" + env.Partition + ":iam::aws:policy/" + p),
		}, d.parent())
		if err != nil {
			return nil, fmt.Errorf("attaching %s to the system node role of %s: %w", p, cl.Name, err)
		}
		attachments = append(attachments, a)
	}
	n := c.SystemNodes
	nodes, err := eks.NewManagedNodeGroup(d.ctx, d.name("system-nodes"), &eks.ManagedNodeGroupArgs{
		Cluster:       cluster,
		NodeRoleArn:   sysRole.Arn,
		InstanceTypes: pulumi.StringArray{pulumi.String(n.InstanceType)},
		AmiType:       pulumi.String(amiType(n.InstanceType)),
		SubnetIds:     pulumi.ToStringArray(c.SubnetIDs),
		ScalingConfig: &awseks.NodeGroupScalingConfigArgs{
			MinSize: pulumi.Int(n.Min), MaxSize: pulumi.Int(n.Max), DesiredSize: pulumi.Int(n.Desired),
		},
		Labels: pulumi.StringMap{"karpenter-interruption-bus/system": pulumi.String("true")},
		Tags:   d.tags,
	}, d.parent(), pulumi.DependsOn(attachments))
	if err != nil {
		return nil, fmt.Errorf("declaring the system node group of %s: %w", cl.Name, err)
	}
	ready := []pulumi.Resource{cluster, nodes}
	if cl.Identity == config.IdentityPodIdentity {
		agent, err := awseks.NewAddon(d.ctx, d.name("pod-identity-agent"), &awseks.AddonArgs{
			ClusterName: pulumi.String(cl.Name), AddonName: pulumi.String("eks-pod-identity-agent"), Tags: d.tags,
		}, d.parent(), pulumi.DependsOn([]pulumi.Resource{cluster, nodes}))
		if err != nil {
			return nil, fmt.Errorf("declaring the pod identity agent of %s: %w", cl.Name, err)
		}
		ready = append(ready, agent)
	}
	return ready, nil
}

// tagClusterSecurityGroup marks the security group EKS made for the cluster, which nodes join, for Karpenter's
// discovery.
func (d *declarer) tagClusterSecurityGroup(info eksInfo) error {
	_, err := ec2.NewTag(d.ctx, d.name("discovery-cluster-sg"), &ec2.TagArgs{
		ResourceId: info.clusterSG, Key: pulumi.String(DiscoveryTag), Value: pulumi.String(d.args.Cluster.Name),
	}, d.parent())
	if err != nil {
		return fmt.Errorf("tagging the cluster security group of %s: %w", d.args.Cluster.Name, err)
	}
	return nil
}

// amiType picks the AL2023 AMI matching the instance type's architecture (Graviton types have a "g" after the
// generation digit, e.g. m7g, c6gn).
func amiType(instanceType string) string {
	for i := 0; i+1 < len(instanceType); i++ {
		if instanceType[i] >= '0' && instanceType[i] <= '9' {
			if instanceType[i+1] == 'g' {
				return "AL2023_ARM_64_STANDARD"
			}
			break
		}
	}
	return "AL2023_x86_64_STANDARD"
}
