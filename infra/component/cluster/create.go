package cluster

import (
	"fmt"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/ec2"
	awseks "github.com/pulumi/pulumi-aws/sdk/v6/go/aws/eks"
	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/iam"
	"github.com/pulumi/pulumi-eks/sdk/v2/go/eks"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/iamname"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
)

// DiscoveryTag marks the subnets and security groups Karpenter's EC2NodeClass selects.
const DiscoveryTag = "karpenter.sh/discovery"

// systemNodePolicies run the small node group Karpenter itself is scheduled on.
var systemNodePolicies = []string{"AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryPullOnly"}

// createCluster declares a new EKS cluster with pulumi-eks (API authentication for access entries, an IAM OIDC
// provider, no default node group), a managed system node group for Karpenter, the EKS Pod Identity agent, and
// the discovery tags on its subnets and its security group. It returns the target to install Karpenter on,
// from the new cluster's own outputs.
func (s scope) createCluster(cl config.Cluster) (target, error) {
	env := s.env
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
		Tags:                  s.tags,
	}
	if c.KubernetesVersion != "" {
		args.Version = pulumi.String(c.KubernetesVersion)
	}
	cluster, err := eks.NewCluster(s.ctx, s.name("eks"), args, s.parent)
	if err != nil {
		return target{}, fmt.Errorf("declaring EKS cluster %s: %w", cl.Name, err)
	}
	for _, subnet := range c.SubnetIDs {
		if _, err := ec2.NewTag(s.ctx, s.name("discovery-"+subnet), &ec2.TagArgs{
			ResourceId: pulumi.String(subnet), Key: pulumi.String(DiscoveryTag), Value: pulumi.String(cl.Name),
		}, s.parent); err != nil {
			return target{}, fmt.Errorf("tagging subnet %s for Karpenter discovery: %w", subnet, err)
		}
	}

	sysRole, err := iam.NewRole(s.ctx, s.name("system-node-role"), &iam.RoleArgs{
		Name:             pulumi.String(iamname.Role("KarpenterSystem-"+cl.Name, env.Region)),
		Description:      pulumi.String("System nodes running Karpenter on cluster " + cl.Name),
		AssumeRolePolicy: pulumi.String(policy.AssumableBy(env.Principal("ec2"), nil).JSON()),
		Tags:             s.tags,
	}, s.parent)
	if err != nil {
		return target{}, fmt.Errorf("declaring the system node role of %s: %w", cl.Name, err)
	}
	var attachments []pulumi.Resource
	for _, p := range systemNodePolicies {
		a, err := iam.NewRolePolicyAttachment(s.ctx, s.name("system-node-"+p), &iam.RolePolicyAttachmentArgs{
			Role: sysRole.Name, PolicyArn: pulumi.String(env.AWSManagedPolicyARN(p)),
		}, s.parent)
		if err != nil {
			return target{}, fmt.Errorf("attaching %s to the system node role of %s: %w", p, cl.Name, err)
		}
		attachments = append(attachments, a)
	}
	n := c.SystemNodes
	nodes, err := eks.NewManagedNodeGroup(s.ctx, s.name("system-nodes"), &eks.ManagedNodeGroupArgs{
		Cluster:       cluster,
		NodeRoleArn:   sysRole.Arn,
		InstanceTypes: pulumi.StringArray{pulumi.String(n.InstanceType)},
		AmiType:       pulumi.String(amiType(n.InstanceType)),
		SubnetIds:     pulumi.ToStringArray(c.SubnetIDs),
		ScalingConfig: &awseks.NodeGroupScalingConfigArgs{
			MinSize: pulumi.Int(n.Min), MaxSize: pulumi.Int(n.Max), DesiredSize: pulumi.Int(n.Desired),
		},
		Labels: pulumi.StringMap{"karpenter-interruption-bus/system": pulumi.String("true")},
		Tags:   s.tags,
	}, s.parent, pulumi.DependsOn(attachments))
	if err != nil {
		return target{}, fmt.Errorf("declaring the system node group of %s: %w", cl.Name, err)
	}
	ready := []pulumi.Resource{cluster, nodes}
	if cl.Identity == config.IdentityPodIdentity {
		agent, err := awseks.NewAddon(s.ctx, s.name("pod-identity-agent"), &awseks.AddonArgs{
			ClusterName: pulumi.String(cl.Name), AddonName: pulumi.String("eks-pod-identity-agent"), Tags: s.tags,
		}, s.parent, pulumi.DependsOn([]pulumi.Resource{cluster, nodes}))
		if err != nil {
			return target{}, fmt.Errorf("declaring the pod identity agent of %s: %w", cl.Name, err)
		}
		ready = append(ready, agent)
	}
	// EKS made a security group for the cluster, which its nodes join: Karpenter's nodes select it by the tag.
	if _, err := ec2.NewTag(s.ctx, s.name("discovery-cluster-sg"), &ec2.TagArgs{
		ResourceId: cluster.EksCluster.VpcConfig().ClusterSecurityGroupId().Elem(), Key: pulumi.String(DiscoveryTag), Value: pulumi.String(cl.Name),
	}, s.parent); err != nil {
		return target{}, fmt.Errorf("tagging the cluster security group of %s: %w", cl.Name, err)
	}
	eksCluster := cluster.EksCluster
	return target{
		kubeconfig: Kubeconfig(cl.Name, env.Region, "", eksCluster.Endpoint(), eksCluster.CertificateAuthority().Data().Elem()),
		// pulumi-eks made the provider for the cluster's issuer: its ARN follows from the issuer.
		oidcProviderARN: eksCluster.Identities().Index(pulumi.Int(0)).Oidcs().Index(pulumi.Int(0)).Issuer().Elem().ApplyT(
			func(issuer string) string {
				return env.IAMARN("oidc-provider/" + strings.TrimPrefix(issuer, "https://"))
			},
		).(pulumi.StringOutput),
		ready: ready,
	}, nil
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
