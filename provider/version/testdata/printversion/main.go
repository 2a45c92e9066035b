// Command printversion prints the package's version as the provider reports it (TestBuilds builds it).
package main

import (
	"fmt"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/provider/version"
)

func main() { fmt.Print(version.Version()) }
