package components_test

import (
	"context"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/routerbuild"
)

// testOptions declare the router from a stub artifact, as the offline render does, and find every command.
func testOptions() infra.Options {
	return infra.Options{BuildRouter: func(ctx context.Context) (routerbuild.Artifact, error) { return render.StubRouter(ctx) }, LookPath: render.AnyCommand}
}
