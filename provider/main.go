// Command pulumi-resource-karpenter-interruption-bus is the component package's provider: Pulumi runs it
// (provider/PulumiPlugin.yaml, beside this file: the Go language host builds this directory) for pulumi package add, and for every program using the package.
package main

import (
	"context"
	"fmt"
	"os"

	p "github.com/pulumi/pulumi-go-provider"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/components"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/version"
)

// buildRouter, when set, replaces the router's build from source (routerbuild.Embedded, which needs Go where the
// provider runs): a release build sets it to the router it carries (router_prebuilt.go).
var buildRouter func(context.Context) (routerbuild.Artifact, error)

func main() {
	opts := components.DefaultOptions()
	if buildRouter != nil {
		opts.BuildRouter = buildRouter
	}
	prov, err := components.New(opts)
	if err == nil {
		err = p.RunProvider(context.Background(), components.Name, version.Version(), prov)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
