// Command shards plans the split of a stack too large for one preview into its hub and shards (package shardplan,
// docs/deploying.md, "One stack or shards"):
//
//	make shards STACK=prod [ACCOUNT=123456789012] [LIMIT=14336]
//
// It prints each shard's stack file (Pulumi.<stack>-shard-<n>.yaml), the hub's clusters afterwards, and the
// commands that create the shards and move each cluster's state; it changes nothing itself. LIMIT is in MB: by
// default the stack's providerBudgetMB, which the shards' stack files carry when the stack sets it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/shardplan"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stackconfig"
)

func main() {
	stack := flag.String("stack", "dev", "the hub's stack: reads Pulumi.<stack>.yaml")
	account := flag.String("account", mocks.DefaultAccount, "the hub's AWS account (its clusters name no other)")
	limit := flag.Int("limit", 0, "the most memory, in MB, one stack's provider processes may take (default: the stack's providerBudgetMB)")
	project := flag.String("project", "karpenter-interruption-bus", "the Pulumi project's name (Pulumi.yaml)")
	secrets := flag.String("secrets-provider", "", "the hub's secrets provider, for the shards' stack init")
	flag.Parse()
	if err := run(*stack, *account, *project, *secrets, *limit); err != nil {
		var cfgErr *config.Error
		if errors.As(err, &cfgErr) {
			err = cfgErr
		}
		fmt.Fprintln(os.Stderr, "shards:", err)
		os.Exit(1)
	}
}

func run(stack, account, project, secrets string, limit int) error {
	file := "Pulumi." + stack + ".yaml"
	values, err := stackconfig.Load(file, project)
	if err != nil {
		return err
	}
	cfg, err := config.Load(stack, account, config.Values(values, config.Namespace))
	if err != nil {
		return err
	}
	return shardplan.Print(os.Stdout, shardplan.Printed{
		File: file, Values: values, Config: cfg, Limit: limit, Project: project, Secrets: secrets, ClusterType: cluster.Type,
	})
}
