// Command stacks lists the project's stacks (Pulumi.<stack>.yaml) as a JSON array of names, for the workflows'
// matrices: with -deployable, only those not marked example: true, the ones to preview against AWS and deploy.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stackconfig"
)

func main() {
	deployable := flag.Bool("deployable", false, "only the stacks to preview against AWS and deploy (not examples)")
	dir := flag.String("dir", ".", "the project's directory")
	flag.Parse()
	stacks, err := stackconfig.Stacks(*dir, config.Namespace)
	if err != nil {
		fmt.Fprintln(os.Stderr, "stacks:", err)
		os.Exit(1)
	}
	names := stackconfig.Deployable(stacks)
	if !*deployable {
		names = []string{}
		for _, s := range stacks {
			names = append(names, s.Name)
		}
	}
	if err := json.NewEncoder(os.Stdout).Encode(names); err != nil {
		fmt.Fprintln(os.Stderr, "stacks:", err)
		os.Exit(1)
	}
}
