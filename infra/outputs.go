package infra

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/outputs"
)

type (
	// Outputs are the stack's outputs as the program and the component package write them (outputs.Stack).
	Outputs = outputs.Stack[pulumi.StringInput, pulumi.IntInput, pulumi.StringMapInput, pulumi.MapInput]
	// joinOutputs and busOutputs are its parts.
	joinOutputs = outputs.Join[pulumi.StringInput, pulumi.IntInput]
	busOutputs  = outputs.Bus[pulumi.StringInput, pulumi.StringMapInput]
	// clusterRecord is a cluster's record in Outputs.Clusters.
	clusterRecord = outputs.Cluster[pulumi.StringInput]
)

// Exports are the outputs o sets, by name, as ctx.Export and RegisterResourceOutputs take them.
func Exports(o any) pulumi.Map {
	out := pulumi.Map{}
	for name, v := range outputs.Set(o) {
		out[name] = v.(pulumi.Input)
	}
	return out
}
