// Command karpenter-interruption-bus is the Pulumi program (Pulumi.yaml): pulumi preview / pulumi up.
package main

import (
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
)

func main() {
	pulumi.Run(infra.Program(infra.DefaultOptions()))
}
