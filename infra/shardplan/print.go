package shardplan

import (
	"encoding/json"
	"fmt"
	"io"

	"gopkg.in/yaml.v3"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
)

// Printed is what Print plans and prints: a stack's file, its keys as PULUMI_CONFIG holds them (Values) and its
// configuration, the limit in MB (0: the stack's providerBudgetMB), the project's name, the hub's secrets provider
// and the type token of a cluster's component, for the commands.
type Printed struct {
	File        string
	Values      map[string]string
	Config      config.Config
	Limit       int
	Project     string
	Secrets     string
	ClusterType string
}

// Print plans the split of p's stack (Plan) and writes what make shards prints: each shard's stack file, the hub's
// clusters afterwards, and the commands that create the shards and move each cluster's state. A limit that is not
// the default is carried into every shard's file (else each shard would refuse what it was cut for), and into the
// hub's when the stack's own providerBudgetMB differs from it.
func Print(w io.Writer, p Printed) error {
	cfg, stack := p.Config, p.Config.Stack
	limit := p.Limit
	if limit == 0 {
		limit = cfg.ProviderBudgetMB
	}
	hub, shards, err := Plan(cfg, limit)
	if err != nil {
		return err
	}
	var rawClusters []map[string]any
	rawAccounts := map[string]any{}
	if err := json.Unmarshal([]byte(p.Values[config.Namespace+":clusters"]), &rawClusters); err != nil {
		return fmt.Errorf("%s: clusters: %w", p.File, err)
	}
	if text := p.Values[config.Namespace+":accounts"]; text != "" {
		if err := json.Unmarshal([]byte(text), &rawAccounts); err != nil {
			return fmt.Errorf("%s: accounts: %w", p.File, err)
		}
	}
	whole := Of(cfg)
	fmt.Fprintf(w, "# %s starts %d provider processes, about %d MB; the limit is %d MB.\n", stack, whole.Providers(), whole.MemoryMB(), limit)
	if len(shards) == 0 {
		if !whole.Fits(cfg.ProviderBudgetMB) {
			fmt.Fprintf(w, "# It needs no shard at this limit, past its providerBudgetMB (%d MB), which refuses it: set\n"+
				"# %s:providerBudgetMB: %d in %s.\n", cfg.ProviderBudgetMB, config.Namespace, limit, p.File)
			return nil
		}
		fmt.Fprintln(w, "# It needs no shard.")
		return nil
	}
	for _, s := range shards {
		keys := map[string]any{
			"aws:region":                     p.Values["aws:region"],
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
		fmt.Fprintf(w, "\n# Pulumi.%s.yaml: %d provider processes, about %d MB\n%s", s.Name, s.Providers(), s.MemoryMB(), b)
	}
	hubKeys := map[string]any{config.Namespace + ":clusters": entries(rawClusters, hub.Clusters)}
	if limit != cfg.ProviderBudgetMB {
		hubKeys[config.Namespace+":providerBudgetMB"] = limit
	}
	b, err := yaml.Marshal(hubKeys)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\n# Pulumi.%s.yaml keeps these clusters (%d provider processes, about %d MB), and, in accounts, only their accounts:\n%s",
		stack, hub.Providers(), hub.MemoryMB(), b)
	fmt.Fprintln(w, "\n# Then, from the project's directory, with the hub's backend:")
	for _, c := range Commands(hub, shards, p.Project, p.Secrets, p.ClusterType) {
		fmt.Fprintln(w, c)
	}
	fmt.Fprintf(w, "# then write the files above, and run pulumi preview in each stack: it shows no change but the hub's dashboard.\n")
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
func accountsOf(raw map[string]any, s Stack) map[string]any {
	out := map[string]any{}
	for id := range s.Accounts {
		out[id] = raw[id]
	}
	return out
}
