package cluster

import (
	"reflect"

	"github.com/pulumi/pulumi-kubernetes/sdk/v4/go/kubernetes/utilities"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// releaseType is pulumi-kubernetes' Helm release resource.
const releaseType = "kubernetes:helm.sh/v3:Release"

// release declares a Helm release exactly as pulumi-kubernetes' own NewRelease does (the same type, inputs and
// default options), with the inputs this component sets. Its package, kubernetes/helm/v3, is not imported: for
// its Chart component it imports every Kubernetes API group the SDK generates, about 400 CPU-seconds of
// compilation, most of a cold `make test`, for one resource that needs none of them. TestReleaseMatchesTheSDK
// checks these inputs against the SDK's own source.
func release(ctx *pulumi.Context, name string, args *releaseArgs, opts ...pulumi.ResourceOption) error {
	args.Compat = pulumi.String("true") // as NewRelease sets it
	var r releaseState
	return ctx.RegisterResource(releaseType, name, args, &r, utilities.PkgResourceDefaultOpts(opts)...)
}

// releaseInputs has the SDK's releaseArgs field names, tags and types, for the fields set here.
type releaseInputs struct {
	Chart           string                 `pulumi:"chart"`
	Compat          *string                `pulumi:"compat"`
	CreateNamespace *bool                  `pulumi:"createNamespace"`
	Name            *string                `pulumi:"name"`
	Namespace       *string                `pulumi:"namespace"`
	Values          map[string]interface{} `pulumi:"values"`
	Version         *string                `pulumi:"version"`
}

// releaseArgs is releaseInputs as Pulumi inputs, the way the SDK's ReleaseArgs is.
type releaseArgs struct {
	Chart           pulumi.StringInput
	Compat          pulumi.StringPtrInput
	CreateNamespace pulumi.BoolPtrInput
	Name            pulumi.StringPtrInput
	Namespace       pulumi.StringPtrInput
	Values          pulumi.MapInput
	Version         pulumi.StringPtrInput
}

func (releaseArgs) ElementType() reflect.Type { return reflect.TypeOf((*releaseInputs)(nil)).Elem() }

// releaseState is the release's state; nothing here reads its outputs.
type releaseState struct {
	pulumi.CustomResourceState
}
