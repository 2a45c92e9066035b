// Command sizing prints the model's table of docs/performance.md ("Sizing for a zone"): the zone's burst
// (config.Zone) through the event source mapping under the defaults and the settings around them, in the worst
// case AWS's words allow and in the best (router/sizing; docgen.Sizing writes the same table into the page).
package main

import (
	"fmt"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/docgen"
)

func main() { fmt.Print(docgen.Sizing()) }
