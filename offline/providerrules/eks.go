package providerrules

import (
	"fmt"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
)

// The rules of pulumi-eks v2.8.1's components (github.com/pulumi/pulumi-eks, tag v2.8.1, nodejs/eks): what the
// component's constructor throws of the arguments it is given, with its own message (the engine reports the
// component's construction failing with it), and what pulumi-aws refuses of the children the component declares
// from an argument passed through unchanged (its Source says so: the real refusal names the child's type).
//
// pulumi-eks tests JavaScript values: a property is truthy when present and not null, false, 0 or "" (truthy); a
// value unknown at a preview reaches the component as an Output, an object, which is truthy.

// eksModes are pulumi-eks's authentication modes (nodejs/eks/authenticationMode.ts: CONFIG_MAP, API_AND_CONFIG_MAP,
// API).
var eksModes = []string{"CONFIG_MAP", "API_AND_CONFIG_MAP", "API"}

func init() {
	Rules["eks:index:Cluster"] = []Rule{
		{Property: "authenticationMode", Attr: "authenticationMode", Check: eksAuthenticationMode(),
			Source: "nodejs/eks/authenticationMode.ts, validateAuthenticationMode: \"Invalid value for authenticationMode: ${args.authenticationMode}. " +
				"Allowed values are: CONFIG_MAP, API_AND_CONFIG_MAP, API.\" (called first by createCore, nodejs/eks/cluster.ts)"},
		{Property: "roleMappings", Attr: "roleMappings", Check: eksConfigMapOnly("roleMappings"),
			Source: "nodejs/eks/authenticationMode.ts, validateAuthenticationMode: \"The 'roleMappings' property does not support non-empty values when " +
				"'authenticationMode' is set to '${args.authenticationMode}'.\" unless the mode supports the aws-auth ConfigMap (unset, CONFIG_MAP, API_AND_CONFIG_MAP)"},
		{Property: "userMappings", Attr: "userMappings", Check: eksConfigMapOnly("userMappings"),
			Source: "nodejs/eks/authenticationMode.ts, validateAuthenticationMode: as roleMappings, for userMappings"},
		{Property: "instanceRoles", Attr: "instanceRoles", Check: eksConfigMapOnly("instanceRoles"),
			Source: "nodejs/eks/authenticationMode.ts, validateAuthenticationMode: as roleMappings, for instanceRoles"},
		{Property: "accessEntries", Attr: "accessEntries", Check: eksAccessEntries(),
			Source: "nodejs/eks/authenticationMode.ts, validateAuthenticationMode: \"The 'accessEntries' property is not supported when 'authenticationMode' is " +
				"set to '${mode}'.\" (or \"is not set.\") unless the mode is API or API_AND_CONFIG_MAP"},
		{Property: "instanceRole", Attr: "instanceRole", Check: eksWhenTruthy([]string{"instanceRoles"},
			"instanceRole and instanceRoles are mutually exclusive, and cannot both be set."),
			Source: "nodejs/eks/cluster.ts, createCore: \"instanceRole and instanceRoles are mutually exclusive, and cannot both be set.\""},
		{Property: "subnetIds", Attr: "subnetIds", Check: eksWhenTruthy([]string{"publicSubnetIds", "privateSubnetIds"},
			"subnetIds, and the use of publicSubnetIds and/or privateSubnetIds are mutually exclusive. Choose a single approach."),
			Source: "nodejs/eks/cluster.ts, createCore: \"subnetIds, and the use of publicSubnetIds and/or privateSubnetIds are mutually exclusive. " +
				"Choose a single approach.\" (no check of the IDs themselves: they go to the child aws:eks/cluster:Cluster's vpc_config)"},
		{Property: "subnetIds[]", Attr: "subnetIds.#",
			Source: "nodejs/eks/cluster.ts, createCore: no check of the IDs (they go to the child aws:eks/cluster:Cluster's vpc_config.subnet_ids)"},
		{Property: "publicSubnetIds", Attr: "publicSubnetIds",
			Source: "nodejs/eks/cluster.ts, createCore: checked with subnetIds (the rule of subnetIds), nothing of its own"},
		{Property: "privateSubnetIds", Attr: "privateSubnetIds",
			Source: "nodejs/eks/cluster.ts, createCore: checked with subnetIds (the rule of subnetIds), nothing of its own"},
		{Property: "nodeGroupOptions", Attr: "nodeGroupOptions", Check: eksWhenTruthy([]string{
			"nodeSubnetIds", "nodeAssociatePublicIpAddress", "instanceType", "instanceProfileName", "nodePublicKey", "nodeRootVolumeSize",
			"nodeUserData", "minSize", "maxSize", "desiredCapacity", "nodeAmiId", "gpu",
		}, "Setting nodeGroupOptions, and any set of singular node group option(s) on the cluster, is mutually exclusive. Choose a single approach."),
			Source: "nodejs/eks/cluster.ts, createCore: \"Setting nodeGroupOptions, and any set of singular node group option(s) on the cluster, is mutually " +
				"exclusive. Choose a single approach.\""},
		{Property: "creationRoleProvider", Attr: "creationRoleProvider", Check: eksWhenTruthy([]string{"creationRoleProvider.provider"},
			"The `creationRoleProvider.provider` option is not supported in non-nodejs Pulumi programs. Please use the `providerCredentialOpts` option instead."),
			Source: "nodejs/eks/cluster.ts, ClusterInternal (the multi-language component): \"The `creationRoleProvider.provider` option is not supported " +
				"in non-nodejs Pulumi programs. Please use the `providerCredentialOpts` option instead.\""},
		{Property: "name", Attr: "name", Check: eksClusterName(),
			Source: "nodejs/eks/cluster.ts, createCore: pulumi-eks checks nothing of it and names the child aws:eks/cluster:Cluster with it, whose " +
				"terraform-provider-aws v5.100.0 internal/service/eks/cluster.go name: validClusterName (internal/service/eks/validate.go) refuses it " +
				"(the refusal names the child's type)"},
		{Property: "vpcId", Attr: "vpcId",
			Source: "nodejs/eks/cluster.ts, createCore: no check (the cluster's security groups are declared in it; absent, the default VPC is looked up)"},
		{Property: "createOidcProvider", Attr: "createOidcProvider",
			Source: "nodejs/eks/cluster.ts, createCore: `if (args.createOidcProvider)`, no check"},
		{Property: "skipDefaultNodeGroup", Attr: "skipDefaultNodeGroup",
			Source: "nodejs/eks/cluster.ts, createCore and createCluster: `args.skipDefaultNodeGroup || args.fargate`, no check"},
		{Property: "nodeSecurityGroupTags", Attr: "nodeSecurityGroupTags",
			Source: "nodejs/eks/cluster.ts, createCore: passed to the node security group's tags, no check"},
		{Property: "tags", Attr: "tags",
			Source: "nodejs/eks/cluster.ts, createCore: passed to the cluster's resources, no check"},
		{Property: "version", Attr: "version",
			Source: "nodejs/eks/cluster.ts, createCore: passed to the child aws:eks/cluster:Cluster (internal/service/eks/cluster.go version: no ValidateFunc), no check"},
	}

	Rules["eks:index:ManagedNodeGroup"] = []Rule{
		{Property: "cluster", Attr: "cluster", Check: eksNodeRoleRequired(),
			Source: "nodejs/eks/nodegroup.ts, createManagedNodeGroupInternal: \"An IAM role, or role ARN must be provided to create a managed node group\" " +
				"when neither nodeRole nor nodeRoleArn is given (checked here, from the argument every node group has)"},
		{Property: "nodeRoleArn", Attr: "nodeRoleArn", Check: All(
			eksWhenTruthy([]string{"nodeRole"}, "nodeRole and nodeRoleArn are mutually exclusive to create a managed node group"),
			eksChild("node_role_arn", NoZeroValues()),
		), Source: "nodejs/eks/nodegroup.ts, createManagedNodeGroupInternal: \"nodeRole and nodeRoleArn are mutually exclusive to create a managed node group\"; " +
			"then the child aws:eks/nodeGroup:NodeGroup's node_role_arn: validation.NoZeroValues (internal/service/eks/node_group.go)"},
		{Property: "nodeRole", Attr: "nodeRole",
			Source: "nodejs/eks/nodegroup.ts, createManagedNodeGroupInternal: checked with nodeRoleArn (the rules of cluster and nodeRoleArn)"},
		{Property: "launchTemplate", Attr: "launchTemplate", Check: eksWhenTruthy([]string{"kubeletExtraArgs", "bootstrapExtraArgs", "enableIMDSv2"},
			"If you provide a custom launch template, you cannot provide kubeletExtraArgs, bootstrapExtraArgs or enableIMDSv2. Please include these in the launch template that you are providing."),
			Source: "nodejs/eks/nodegroup.ts, createManagedNodeGroupInternal: \"If you provide a custom launch template, you cannot provide kubeletExtraArgs, " +
				"bootstrapExtraArgs or enableIMDSv2. Please include these in the launch template that you are providing.\""},
		{Property: "amiType", Attr: "ami_type", Check: Enum(eksAMITypes...),
			Source: "nodejs/eks/nodegroup.ts: passed through to the child aws:eks/nodeGroup:NodeGroup, whose internal/service/eks/node_group.go ami_type: " +
				"enum.Validate[types.AMITypes]() refuses it (aws-sdk-go-v2 service/eks v1.66.1, 2025-06-17)"},
		{Property: "instanceTypes", Attr: "instance_types",
			Source: "nodejs/eks/nodegroup.ts: passed through (getAMIType reads them only for a custom launch template's user data); " +
				"internal/service/eks/node_group.go instance_types: TypeList of strings, no ValidateFunc"},
		{Property: "instanceTypes[]", Attr: "instance_types.#",
			Source: "internal/service/eks/node_group.go instance_types elements: schema.TypeString, no ValidateFunc"},
		{Property: "subnetIds", Attr: "subnet_ids", Check: MinItems(1),
			Source: "nodejs/eks/nodegroup.ts: passed through when given; internal/service/eks/node_group.go subnet_ids: TypeSet, Required, MinItems 1"},
		{Property: "subnetIds[]", Attr: "subnet_ids.#",
			Source: "internal/service/eks/node_group.go subnet_ids elements: schema.TypeString, no ValidateFunc"},
		{Property: "scalingConfig.minSize", Attr: "scaling_config.0.min_size", Check: IntAtLeast(0),
			Source: "nodejs/eks/nodegroup.ts: scalingConfig passed with defaults (desired 2, min 1, max 2); internal/service/eks/node_group.go " +
				"scaling_config.min_size: validation.IntAtLeast(0)"},
		{Property: "scalingConfig.maxSize", Attr: "scaling_config.0.max_size", Check: IntAtLeast(1),
			Source: "internal/service/eks/node_group.go scaling_config.max_size: validation.IntAtLeast(1) (the child aws:eks/nodeGroup:NodeGroup)"},
		{Property: "scalingConfig.desiredSize", Attr: "scaling_config.0.desired_size", Check: IntAtLeast(0),
			Source: "internal/service/eks/node_group.go scaling_config.desired_size: validation.IntAtLeast(0) (the child aws:eks/nodeGroup:NodeGroup)"},
		{Property: "labels", Attr: "labels",
			Source: "nodejs/eks/nodegroup.ts: passed through; internal/service/eks/node_group.go labels: TypeMap of strings, no ValidateFunc"},
		{Property: "tags", Attr: "tags",
			Source: "nodejs/eks/nodegroup.ts: passed through; internal/service/eks/node_group.go tags: tftags.TagsSchema(), no ValidateFunc"},
	}
}

// eksAMITypes are aws-sdk-go-v2 service/eks types.AMITypes (v1.66.1, 2025-06-17).
var eksAMITypes = []string{
	"AL2_x86_64", "AL2_x86_64_GPU", "AL2_ARM_64", "CUSTOM", "BOTTLEROCKET_ARM_64", "BOTTLEROCKET_x86_64", "BOTTLEROCKET_ARM_64_FIPS",
	"BOTTLEROCKET_x86_64_FIPS", "BOTTLEROCKET_ARM_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA", "WINDOWS_CORE_2019_x86_64", "WINDOWS_FULL_2019_x86_64",
	"WINDOWS_CORE_2022_x86_64", "WINDOWS_FULL_2022_x86_64", "AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD", "AL2023_x86_64_NEURON",
	"AL2023_x86_64_NVIDIA", "AL2023_ARM_64_NVIDIA",
}

// eksAuthenticationMode is validateAuthenticationMode's first check.
func eksAuthenticationMode() Validator {
	return func(attr string, v resource.PropertyValue, _ Inputs) []string {
		s, ok := stringOf(v)
		if !ok || s == "" {
			return nil
		}
		for _, m := range eksModes {
			if s == m {
				return nil
			}
		}
		return []string{fmt.Sprintf("Invalid value for authenticationMode: %s. Allowed values are: CONFIG_MAP, API_AND_CONFIG_MAP, API.", s)}
	}
}

// eksMode is the cluster's authentication mode as pulumi-eks reads it: "" when unset.
func eksMode(in Inputs) string {
	if v, ok := in.get("authenticationMode"); ok && v.IsString() {
		return v.StringValue()
	}
	return ""
}

// eksConfigMapOnly is validateAuthenticationMode's check of a property only the aws-auth ConfigMap takes: non-empty
// values are refused unless the mode is unset, CONFIG_MAP or API_AND_CONFIG_MAP.
func eksConfigMapOnly(prop string) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		mode := eksMode(in)
		if mode == "" || mode == "CONFIG_MAP" || mode == "API_AND_CONFIG_MAP" {
			return nil
		}
		v = plain(v)
		if (v.IsArray() && len(v.ArrayValue()) == 0) || (v.IsString() && v.StringValue() == "") {
			return nil
		}
		return []string{fmt.Sprintf("The '%s' property does not support non-empty values when 'authenticationMode' is set to '%s'.", prop, mode)}
	}
}

// eksAccessEntries is validateAuthenticationMode's check of accessEntries: only API and API_AND_CONFIG_MAP take them.
func eksAccessEntries() Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		if !truthy(in, "accessEntries") {
			return nil
		}
		mode := eksMode(in)
		if mode == "API" || mode == "API_AND_CONFIG_MAP" {
			return nil
		}
		if mode == "" {
			return []string{"The 'accessEntries' property is not supported when 'authenticationMode' is not set."}
		}
		return []string{fmt.Sprintf("The 'accessEntries' property is not supported when 'authenticationMode' is set to '%s'.", mode)}
	}
}

// eksWhenTruthy refuses, with message, a property that is truthy beside any of others.
func eksWhenTruthy(others []string, message string) Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		if !truthyValue(v) {
			return nil
		}
		for _, o := range others {
			if truthy(in, o) {
				return []string{message}
			}
		}
		return nil
	}
}

// eksNodeRoleRequired is createManagedNodeGroupInternal's first check: a node role or its ARN.
func eksNodeRoleRequired() Validator {
	return func(attr string, v resource.PropertyValue, in Inputs) []string {
		if !truthy(in, "nodeRole") && !truthy(in, "nodeRoleArn") {
			return []string{"An IAM role, or role ARN must be provided to create a managed node group"}
		}
		return nil
	}
}

// eksChild checks a value pulumi-eks passes unchanged to a child resource as the child's provider does, naming the
// child's attribute.
func eksChild(attr string, f Validator) Validator {
	return func(_ string, v resource.PropertyValue, in Inputs) []string {
		return f(attr, v, in)
	}
}

// truthyValue is JavaScript's truthiness of a known value.
func truthyValue(v resource.PropertyValue) bool {
	v = plain(v)
	switch {
	case v.IsNull():
		return false
	case v.IsBool():
		return v.BoolValue()
	case v.IsString():
		return v.StringValue() != ""
	case v.IsNumber():
		return v.NumberValue() != 0
	}
	return true
}
