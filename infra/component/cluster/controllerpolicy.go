package cluster

import (
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
)

// ControllerPolicy is Karpenter v1's controller policy (its getting-started CloudFormation template), scoped to
// the cluster, its region and account, plus the interruption statement for the cluster's own queue. Resource "*"
// remains only where AWS supports no narrower resource: the EC2 Describe* calls and pricing:GetProducts. The
// instance-profile statements, "*" in Karpenter's template, are narrowed to the account's instance profiles.
func ControllerPolicy(env awsenv.Env, cluster, nodeRoleARN, queueARN string) policy.Document {
	ec2 := func(res string) string { return "arn:" + env.Partition + ":ec2:" + env.Region + ":" + res }
	owned := "kubernetes.io/cluster/" + cluster
	profiles := "arn:" + env.Partition + ":iam::" + env.Account + ":instance-profile/*"
	cond := func(kv ...any) map[string]map[string]any {
		out := map[string]map[string]any{}
		for i := 0; i < len(kv); i += 3 {
			op := kv[i].(string)
			if out[op] == nil {
				out[op] = map[string]any{}
			}
			out[op][kv[i+1].(string)] = kv[i+2]
		}
		return out
	}
	launched := []string{ec2("*:fleet/*"), ec2("*:instance/*"), ec2("*:volume/*"), ec2("*:network-interface/*"), ec2("*:launch-template/*")}
	st := func(sid string, actions, resources []string, c map[string]map[string]any) policy.Statement {
		s := policy.Allow(sid, actions, resources)
		s.Condition = c
		return s
	}
	return policy.New(
		st("AllowScopedEC2InstanceAccessActions", []string{"ec2:RunInstances", "ec2:CreateFleet"},
			[]string{ec2(":image/*"), ec2(":snapshot/*"), ec2("*:security-group/*"), ec2("*:subnet/*"), ec2("*:capacity-reservation/*")}, nil),
		st("AllowScopedEC2LaunchTemplateAccessActions", []string{"ec2:RunInstances", "ec2:CreateFleet"},
			[]string{ec2("*:launch-template/*")},
			cond("StringEquals", "aws:ResourceTag/"+owned, "owned", "StringLike", "aws:ResourceTag/karpenter.sh/nodepool", "*")),
		st("AllowScopedEC2InstanceActionsWithTags", []string{"ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"},
			append(launched, ec2("*:spot-instances-request/*")),
			cond("StringEquals", "aws:RequestTag/"+owned, "owned", "StringEquals", "aws:RequestTag/eks:eks-cluster-name", cluster,
				"StringLike", "aws:RequestTag/karpenter.sh/nodepool", "*")),
		st("AllowScopedResourceCreationTagging", []string{"ec2:CreateTags"}, append(launched, ec2("*:spot-instances-request/*")),
			cond("StringEquals", "aws:RequestTag/"+owned, "owned", "StringEquals", "aws:RequestTag/eks:eks-cluster-name", cluster,
				"StringEquals", "ec2:CreateAction", []string{"RunInstances", "CreateFleet", "CreateLaunchTemplate"},
				"StringLike", "aws:RequestTag/karpenter.sh/nodepool", "*")),
		st("AllowScopedResourceTagging", []string{"ec2:CreateTags"}, []string{ec2("*:instance/*")},
			cond("StringEquals", "aws:ResourceTag/"+owned, "owned", "StringLike", "aws:ResourceTag/karpenter.sh/nodepool", "*",
				"StringEqualsIfExists", "aws:RequestTag/eks:eks-cluster-name", cluster,
				"ForAllValues:StringEquals", "aws:TagKeys", []string{"eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"})),
		st("AllowScopedDeletion", []string{"ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"},
			[]string{ec2("*:instance/*"), ec2("*:launch-template/*")},
			cond("StringEquals", "aws:ResourceTag/"+owned, "owned", "StringLike", "aws:ResourceTag/karpenter.sh/nodepool", "*")),
		st("AllowRegionalReadActions", []string{
			"ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceTypeOfferings",
			"ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory",
			"ec2:DescribeSubnets",
		}, []string{"*"}, cond("StringEquals", "aws:RequestedRegion", env.Region)),
		st("AllowSSMReadActions", []string{"ssm:GetParameter"},
			[]string{"arn:" + env.Partition + ":ssm:" + env.Region + "::parameter/aws/service/*"}, nil),
		st("AllowPricingReadActions", []string{"pricing:GetProducts"}, []string{"*"}, nil),
		InterruptionStatement(queueARN),
		st("AllowPassingInstanceRole", []string{"iam:PassRole"}, []string{nodeRoleARN},
			cond("StringEquals", "iam:PassedToService", []string{env.Principal("ec2")})),
		st("AllowScopedInstanceProfileCreationActions", []string{"iam:CreateInstanceProfile"}, []string{profiles},
			cond("StringEquals", "aws:RequestTag/"+owned, "owned", "StringEquals", "aws:RequestTag/eks:eks-cluster-name", cluster,
				"StringEquals", "aws:RequestTag/topology.kubernetes.io/region", env.Region,
				"StringLike", "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass", "*")),
		st("AllowScopedInstanceProfileTagActions", []string{"iam:TagInstanceProfile"}, []string{profiles},
			cond("StringEquals", "aws:ResourceTag/"+owned, "owned", "StringEquals", "aws:ResourceTag/topology.kubernetes.io/region", env.Region,
				"StringEquals", "aws:RequestTag/"+owned, "owned", "StringEquals", "aws:RequestTag/eks:eks-cluster-name", cluster,
				"StringEquals", "aws:RequestTag/topology.kubernetes.io/region", env.Region,
				"StringLike", "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass", "*", "StringLike", "aws:RequestTag/karpenter.k8s.aws/ec2nodeclass", "*")),
		st("AllowScopedInstanceProfileActions", []string{"iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"},
			[]string{profiles},
			cond("StringEquals", "aws:ResourceTag/"+owned, "owned", "StringEquals", "aws:ResourceTag/topology.kubernetes.io/region", env.Region,
				"StringLike", "aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass", "*")),
		st("AllowInstanceProfileReadActions", []string{"iam:GetInstanceProfile"}, []string{profiles}, nil),
		st("AllowAPIServerEndpointDiscovery", []string{"eks:DescribeCluster"},
			[]string{"arn:" + env.Partition + ":eks:" + env.Region + ":" + env.Account + ":cluster/" + cluster}, nil),
	)
}
