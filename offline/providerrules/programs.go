package providerrules

import "regexp"

// The rules of the pulumi-aws resources the engine tests' programs and the examples declare beside the package's
// components (a team's own EKS cluster, an SNS topic for its alarms), and of the children the eks stand-in declares
// for pulumi-eks's components: the stand-in refuses what the real provider would of them too.
func init() {
	Rules["aws:eks/cluster:Cluster"] = []Rule{
		{Property: "name", Attr: "name", Check: eksClusterName(),
			Source: "internal/service/eks/cluster.go, name: Required, ForceNew, validClusterName (internal/service/eks/validate.go)"},
		{Property: "version", Attr: "version",
			Source: "internal/service/eks/cluster.go, version: Optional, Computed, no ValidateFunc (EKS refuses an unsupported version)"},
		{Property: "roleArn", Attr: "role_arn", Check: ValidARN(),
			Source: "internal/service/eks/cluster.go, role_arn: Required, ForceNew, verify.ValidARN"},
		{Property: "vpcConfig", Attr: "vpc_config",
			Source: "internal/service/eks/cluster.go, vpc_config: Required, MinItems 1, MaxItems 1 (one object in Pulumi)"},
		{Property: "vpcConfig.subnetIds", Attr: "vpc_config.0.subnet_ids", Check: MinItems(1),
			Source: "internal/service/eks/cluster.go, vpc_config.subnet_ids: TypeSet, Required, MinItems 1, elements with no ValidateFunc"},
		{Property: "tags", Attr: "tags",
			Source: "internal/service/eks/cluster.go, tags: tftags.TagsSchema() (internal/tags/tags.go: TypeMap of strings, no ValidateFunc)"},
	}
	Rules["aws:eks/nodeGroup:NodeGroup"] = []Rule{
		{Property: "nodeRoleArn", Attr: "node_role_arn", Check: ValidARN(),
			Source: "internal/service/eks/node_group.go, node_role_arn: Required, ForceNew, verify.ValidARN"},
		{Property: "instanceTypes", Attr: "instance_types",
			Source: "internal/service/eks/node_group.go, instance_types: TypeList of strings, Optional, Computed, ForceNew, no ValidateFunc"},
		{Property: "labels", Attr: "labels",
			Source: "internal/service/eks/node_group.go, labels: TypeMap of strings, no ValidateFunc"},
		{Property: "tags", Attr: "tags",
			Source: "internal/service/eks/node_group.go, tags: tftags.TagsSchema(), no ValidateFunc"},
	}
	Rules["aws:sns/topic:Topic"] = []Rule{
		{Property: "name", Attr: "name", Check: StringMatch(regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`), "must contain only alphanumeric characters, hyphens and underscores, at most 256"),
			Source: "internal/service/sns/topic.go, name: Optional, Computed, ForceNew, ConflictsWith name_prefix; checked by the resource's CustomizeDiff " +
				"(resourceTopicCustomizeDiff, at the plan, as a preview runs it): ^[A-Za-z0-9_-]{1,256}$ for a standard topic"},
	}
}
