package components_test

import (
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
)

// testOptions declare the router from a stub artifact, find every command and read Lambda's account settings as an
// account of the default quota, as the offline render does.
func testOptions() infra.Options {
	return render.Offline()
}
