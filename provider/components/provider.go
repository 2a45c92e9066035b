// Package components is the component package: the program's Bus and a cluster's ClusterInterruption as Pulumi
// components of any language, through pulumi-go-provider's infer. They declare what the program declares, by
// the same code (infra.DeclareBus, infra.DeclareJoin); this package only maps typed, documented arguments onto
// the stack configuration's keys, which config.Load then validates, defaults and reports as for the program.
package components

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	p "github.com/pulumi/pulumi-go-provider"
	"github.com/pulumi/pulumi-go-provider/infer"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
)

// Name is the package's name: its type tokens are "karpenter-interruption-bus:index:<Component>", the program's.
const Name = "karpenter-interruption-bus"

// RouterSourceEnv names the router module's directory, for a provider run away from its source.
const RouterSourceEnv = "KARPENTER_INTERRUPTION_BUS_ROUTER"

// New is the provider, its components declared with opts (the router's build, the commands' lookup).
func New(opts infra.Options) (p.Provider, error) {
	return infer.NewProviderBuilder().
		WithDisplayName("Karpenter interruption bus").
		WithDescription("One EC2 interruption bus per region for a fleet of EKS clusters running Karpenter: shared EventBridge rules, "+
			"a central queue and a router Lambda forwarding each event to the queue of the cluster that owns the instance.").
		WithKeywords("karpenter", "eks", "spot", "interruption", "aws", "kind/component", "category/cloud").
		WithRepository("https://github.com/karpenter-interruption-bus/karpenter-interruption-bus").
		WithPublisher("karpenter-interruption-bus").
		WithLicense("Apache-2.0").
		WithModuleMap(map[tokens.ModuleName]tokens.ModuleName{"components": "index"}).
		WithLanguageMap(map[string]any{
			"nodejs": map[string]any{"packageName": "@karpenter-interruption-bus/pulumi", "respectSchemaVersion": true},
			"python": map[string]any{"packageName": "karpenter_interruption_bus", "respectSchemaVersion": true},
			// Go programs use the components directly (infra), as main.go does; a generated Go SDK would live here.
			"go": map[string]any{"importBasePath": "github.com/karpenter-interruption-bus/karpenter-interruption-bus/sdk/go/kib"},
		}).
		WithComponents(
			infer.ComponentF(busConstructor(opts)),
			infer.ComponentF(clusterConstructor(opts)),
		).
		Build()
}

// DefaultOptions build the router from its source (SourceRouter) and look commands up in PATH.
func DefaultOptions() infra.Options {
	o := infra.DefaultOptions()
	o.BuildRouter = SourceRouter
	return o
}

// SourceRouter builds the router from the router module next to the provider's source: Pulumi runs a source
// package's provider from its directory, provider/ of this repository (or RouterSourceEnv says where it is).
// The Go toolchain that built the provider builds the router.
func SourceRouter(ctx context.Context) (routerbuild.Artifact, error) {
	dir, err := routerSource()
	if err != nil {
		return routerbuild.Artifact{}, err
	}
	return routerbuild.Build(ctx, dir, filepath.Join(filepath.Dir(dir), "build", "router"))
}

func routerSource() (string, error) {
	candidates := []string{os.Getenv(RouterSourceEnv), "router", filepath.Join("..", "router")}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(c, "go.mod")); err == nil {
			return filepath.Abs(c)
		}
	}
	wd, _ := os.Getwd()
	return "", fmt.Errorf("the router's source (router/go.mod) is neither in %s nor beside it; set %s to its directory", wd, RouterSourceEnv)
}
