// Package components is the component package: the program's Bus and a cluster's ClusterInterruption as Pulumi
// components of any language, through pulumi-go-provider's infer. They declare what the program declares, by
// the same code (infra.DeclareBus, infra.DeclareJoin); this package only maps typed, documented arguments onto
// the stack configuration's keys, which config.Load then validates, defaults and reports as for the program.
package components

import (
	"reflect"

	p "github.com/pulumi/pulumi-go-provider"
	"github.com/pulumi/pulumi-go-provider/infer"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
)

// Name is the package's name: its type tokens are "karpenter-interruption-bus:index:<Component>", the program's.
const Name = "karpenter-interruption-bus"

// PluginDownloadURL is the schema's pluginDownloadURL: the GitHub release of the version, whose assets are the
// archives .goreleaser.yml names (pulumi-resource-karpenter-interruption-bus-v<version>-<os>-<arch>.tar.gz). The CLI
// replaces ${VERSION} with the version it installs.
const PluginDownloadURL = "https://github.com/karpenter-interruption-bus/karpenter-interruption-bus/releases/download/v${VERSION}"

// New is the provider, its components declared with opts (the router's build, the commands' lookup).
func New(opts infra.Options) (p.Provider, error) {
	prov, err := infer.NewProviderBuilder().
		WithDisplayName("Karpenter interruption bus").
		WithDescription("One EC2 interruption bus per region for a fleet of EKS clusters running Karpenter: shared EventBridge rules, "+
			"a central queue and a router Lambda forwarding each event to the queue of the cluster that owns the instance.").
		WithKeywords("karpenter", "eks", "spot", "interruption", "aws", "kind/component", "category/cloud").
		WithRepository("https://github.com/karpenter-interruption-bus/karpenter-interruption-bus").
		// Where the CLI downloads a released version's provider, built for each platform by .goreleaser.yml: no
		// user needs Go (docs/package.md). A package added from git is built from its source instead.
		WithPluginDownloadURL(PluginDownloadURL).
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
	if err != nil {
		return p.Provider{}, err
	}
	args := map[string]reflect.Type{
		Name + ":index:Bus":                 reflect.TypeFor[BusArgs](),
		Name + ":index:ClusterInterruption": reflect.TypeFor[ClusterInterruptionArgs](),
	}
	// Numbers become strings first (a YAML account ID), then the inputs are resolved to the arguments' values.
	return withStringInputs(withInputs(prov, args), args), nil
}

// DefaultOptions are the program's: the router built from the source its module embeds (routerbuild.Embedded),
// so the provider needs no checkout beside it, whatever directory Pulumi starts it in.
func DefaultOptions() infra.Options { return infra.DefaultOptions() }
