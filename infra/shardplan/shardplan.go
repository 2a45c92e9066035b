// Package shardplan splits a stack whose one preview would start more provider processes than a CI runner holds
// (infra.MaxProviders) into its hub and shards (docs/deploying.md, "One stack or shards"): which clusters each
// stack keeps, and the commands that move them, state only, nothing in AWS.
package shardplan

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
)

// Stack is one stack of the split: its name and the clusters it declares, with the member accounts they need.
type Stack struct {
	Name     string
	Clusters []config.Cluster
	// Accounts are the member accounts of its clusters, as the stack's accounts key names them.
	Accounts map[string]config.Account
}

// Providers is how many provider processes the stack starts: the default AWS provider, one per member account,
// one Kubernetes provider per cluster whose Karpenter it installs, and pulumi-eks's when it creates one.
func (s Stack) Providers() int {
	n, create := 1+len(s.Accounts), false
	for _, cl := range s.Clusters {
		if cl.Mode.InstallsKarpenter() {
			n++
		}
		create = create || cl.Mode == config.ModeCreate
	}
	if create {
		n++
	}
	return n
}

// Plan splits cfg's clusters so that no stack starts more than limit provider processes. The hub keeps the
// clusters it must (those of member accounts it gives the baseline itself, which a shard cannot join: infra's
// joinHub), then as many as fit; the rest fill shards named <stack>-shard-<n>, the clusters of one member account
// kept together where they fit (they share its provider), in the configuration's order otherwise.
func Plan(cfg config.Config, limit int) (hub Stack, shards []Stack, err error) {
	hub = Stack{Name: cfg.Stack, Accounts: map[string]config.Account{}}
	add := func(s *Stack, cl config.Cluster) {
		s.Clusters = append(s.Clusters, cl)
		if cfg.IsMember(cl.Account) {
			s.Accounts[cl.Account] = cfg.Accounts[cl.Account]
		}
	}
	fits := func(s Stack, cl config.Cluster) bool {
		t := Stack{Clusters: slices.Clone(s.Clusters), Accounts: maps.Clone(s.Accounts)}
		add(&t, cl)
		return t.Providers() <= limit
	}
	// The members the hub baselines through its own list: their clusters stay in the hub.
	var rest []config.Cluster
	for _, cl := range cfg.Clusters {
		if cfg.IsMember(cl.Account) && !cfg.Baselined() {
			add(&hub, cl)
			continue
		}
		rest = append(rest, cl)
	}
	if hub.Providers() > limit {
		return Stack{}, nil, fmt.Errorf("the hub must keep the clusters of the %d member accounts it gives the baseline itself, %d provider "+
			"processes, over %d: give the hub organization.memberOUs, so that its StackSet gives members their baseline and their "+
			"clusters can move to shards (docs/organization.md)", len(hub.Accounts), hub.Providers(), limit)
	}
	// A member account's clusters side by side, so that they land in as few stacks as they can.
	slices.SortStableFunc(rest, func(a, b config.Cluster) int { return strings.Compare(a.Account, b.Account) })
	for _, cl := range rest {
		if fits(hub, cl) {
			add(&hub, cl)
			continue
		}
		if len(shards) == 0 || !fits(shards[len(shards)-1], cl) {
			shards = append(shards, Stack{Name: fmt.Sprintf("%s-shard-%d", cfg.Stack, len(shards)+1), Accounts: map[string]config.Account{}})
		}
		if !fits(shards[len(shards)-1], cl) {
			return Stack{}, nil, fmt.Errorf("limit %d is too small for one cluster with its account's provider and the stack's own", limit)
		}
		add(&shards[len(shards)-1], cl)
	}
	return hub, shards, nil
}

// Commands are what a platform team runs to carry the plan out, in order: create each shard stack, move each of
// its clusters' components there (pulumi state move takes their children with them and copies the providers they
// use), then set each stack's clusters. project is the Pulumi project's name, secrets the hub's --secrets-provider
// ("" for the backend's default).
func Commands(hub Stack, shards []Stack, project, secrets string, clusterType string) []string {
	var out []string
	for _, s := range shards {
		create := "pulumi stack init " + s.Name
		if secrets != "" {
			create += " --secrets-provider " + secrets
		}
		out = append(out, create)
		urns := make([]string, len(s.Clusters))
		for i, cl := range s.Clusters {
			urns[i] = fmt.Sprintf("'urn:pulumi:%s::%s::%s::%s'", hub.Name, project, clusterType, cl.Name)
		}
		out = append(out, fmt.Sprintf("pulumi state move --source %s --dest %s --yes %s", hub.Name, s.Name, strings.Join(urns, " ")))
	}
	return out
}
