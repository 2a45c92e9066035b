package cluster

import (
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
)

// ControllerPolicy is the controller policy of Karpenter v (its getting-started CloudFormation template of that
// version, checked against the AWS calls its source makes: tests/karpenter/), scoped to the cluster, its region
// and account, plus the interruption statement for the cluster's own queue. What a version adds is granted from
// the version whose source first calls it:
//
//   - 1.7: iam:ListInstanceProfiles (instance profile garbage collection);
//   - 1.11: ec2:DescribePlacementGroups, and launching into placement groups;
//   - 1.12: ec2:DescribeInstanceStatus (instance status polling) and arc-zonal-shift:GetManagedResource;
//   - 1.15: ec2:RebootInstances (node repair reboots a node in place, behind the rebootForRepair feature gate),
//     scoped as the template scopes the other call on running instances, TerminateInstances: the cluster's own
//     instances of a node pool.
//
// Resource "*" remains only where the template has it because AWS supports no narrower resource: the EC2
// Describe* calls (limited to the region), pricing:GetProducts, iam:ListInstanceProfiles, and
// arc-zonal-shift:GetManagedResource (limited to the cluster by its condition). Narrower than the template:
// iam:PassedToService names the partition's EC2 principal only (the template lists both partitions'), and
// AllowScopedEC2InstanceActionsWithTags leaves out capacity-reservation/*, which RunInstances and CreateFleet
// never create nor tag (the template itself drops it from v1.10).
func ControllerPolicy(env awsenv.Env, cluster, nodeRoleARN, queueARN string, v karpenter.Version) policy.Document {
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
	launchInto := []string{ec2(":image/*"), ec2(":snapshot/*"), ec2("*:security-group/*"), ec2("*:subnet/*"), ec2("*:capacity-reservation/*")}
	reads := []string{
		"ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceTypeOfferings",
		"ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory",
		"ec2:DescribeSubnets",
	}
	if v.AtLeast(1, 11) {
		launchInto = append(launchInto, ec2("*:placement-group/*"))
		reads = append(reads, "ec2:DescribePlacementGroups")
	}
	if v.AtLeast(1, 12) {
		reads = append(reads, "ec2:DescribeInstanceStatus")
	}
	clusterARN := "arn:" + env.Partition + ":eks:" + env.Region + ":" + env.Account + ":cluster/" + cluster
	st := func(sid string, actions, resources []string, c map[string]map[string]any) policy.Statement {
		s := policy.Allow(sid, actions, resources)
		s.Condition = c
		return s
	}
	statements := []policy.Statement{
		st("AllowScopedEC2InstanceAccessActions", []string{"ec2:RunInstances", "ec2:CreateFleet"}, launchInto, nil),
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
		st("AllowRegionalReadActions", reads, []string{"*"}, cond("StringEquals", "aws:RequestedRegion", env.Region)),
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
		st("AllowAPIServerEndpointDiscovery", []string{"eks:DescribeCluster"}, []string{clusterARN}, nil),
	}
	if v.AtLeast(1, 7) {
		statements = append(statements, st("AllowUnscopedInstanceProfileListAction", []string{"iam:ListInstanceProfiles"}, []string{"*"}, nil))
	}
	if v.AtLeast(1, 15) {
		statements = append(statements, st("AllowScopedInstanceReboot", []string{"ec2:RebootInstances"}, []string{ec2("*:instance/*")},
			cond("StringEquals", "aws:ResourceTag/"+owned, "owned", "StringLike", "aws:ResourceTag/karpenter.sh/nodepool", "*")))
	}
	if v.AtLeast(1, 12) {
		statements = append(statements, st("AllowZonalShiftStatusReadOnly", []string{"arc-zonal-shift:GetManagedResource"}, []string{"*"},
			cond("StringEquals", "arc-zonal-shift:ResourceIdentifier", clusterARN)))
	}
	return policy.New(statements...)
}
