package components_test

import (
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/render"
)

// testOptions declare the router from a stub artifact, as the offline render does, and find every command.
func testOptions() infra.Options {
	return infra.Options{BuildRouter: render.StubRouter, LookPath: render.AnyCommand}
}
