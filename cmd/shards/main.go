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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/offline/stackconfig"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/shardplan"
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
	if limit == 0 {
		limit = cfg.ProviderBudgetMB
	}
	hub, shards, err := shardplan.Plan(cfg, limit)
	if err != nil {
		return err
	}
	var rawClusters []map[string]any
	rawAccounts := map[string]any{}
	if err := json.Unmarshal([]byte(values[config.Namespace+":clusters"]), &rawClusters); err != nil {
		return fmt.Errorf("%s: clusters: %w", file, err)
	}
	if text := values[config.Namespace+":accounts"]; text != "" {
		if err := json.Unmarshal([]byte(text), &rawAccounts); err != nil {
			return fmt.Errorf("%s: accounts: %w", file, err)
		}
	}
	whole := shardplan.Of(cfg)
	fmt.Printf("# %s starts %d provider processes, about %d MB; the limit is %d MB.\n", stack, whole.Providers(), whole.MemoryMB(), limit)
	if len(shards) == 0 {
		if !whole.Fits(cfg.ProviderBudgetMB) {
			fmt.Printf("# It needs no shard at this limit, past its providerBudgetMB (%d MB), which refuses it: set\n"+
				"# %s:providerBudgetMB: %d in %s.\n", cfg.ProviderBudgetMB, config.Namespace, limit, file)
			return nil
		}
		fmt.Println("# It needs no shard.")
		return nil
	}
	for _, s := range shards {
		keys := map[string]any{
			"aws:region":                     values["aws:region"],
			config.Namespace + ":namePrefix": cfg.NamePrefix,
			config.Namespace + ":hub":        stack,
			config.Namespace + ":clusters":   entries(rawClusters, s.Clusters),
		}
		if len(s.Accounts) > 0 {
			keys[config.Namespace+":accounts"] = accountsOf(rawAccounts, s)
		}
		if limit != config.DefaultProviderBudgetMB { // else each shard would refuse what it was cut for
			keys[config.Namespace+":providerBudgetMB"] = limit
		}
		b, err := yaml.Marshal(map[string]any{"config": keys})
		if err != nil {
			return err
		}
		fmt.Printf("\n# Pulumi.%s.yaml: %d provider processes, about %d MB\n%s", s.Name, s.Providers(), s.MemoryMB(), b)
	}
	hubKeys := map[string]any{config.Namespace + ":clusters": entries(rawClusters, hub.Clusters)}
	if limit != cfg.ProviderBudgetMB {
		hubKeys[config.Namespace+":providerBudgetMB"] = limit
	}
	b, err := yaml.Marshal(hubKeys)
	if err != nil {
		return err
	}
	fmt.Printf("\n# Pulumi.%s.yaml keeps these clusters (%d provider processes, about %d MB), and, in accounts, only their accounts:\n%s",
		stack, hub.Providers(), hub.MemoryMB(), b)
	fmt.Println("\n# Then, from the project's directory, with the hub's backend:")
	for _, c := range shardplan.Commands(hub, shards, project, secrets, cluster.Type) {
		fmt.Println(c)
	}
	fmt.Printf("# then write the files above, and run pulumi preview in each stack: it shows no change but the hub's dashboard.\n")
	return nil
}

// entries are the stack file's own entries of cls (defaults left unwritten, as the team wrote them).
func entries(raw []map[string]any, cls []config.Cluster) []map[string]any {
	var out []map[string]any
	for _, cl := range cls {
		for _, e := range raw {
			if e["name"] == cl.Name {
				out = append(out, e)
			}
		}
	}
	return out
}

// accountsOf are the stack file's own entries of accounts for the member accounts of s.
func accountsOf(raw map[string]any, s shardplan.Stack) map[string]any {
	out := map[string]any{}
	for id := range s.Accounts {
		out[id] = raw[id]
	}
	return out
}
