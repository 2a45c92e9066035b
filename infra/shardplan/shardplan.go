// Package shardplan sizes a stack by the provider processes one preview of it starts, and splits a stack that a CI
// runner cannot preview into its hub and shards (docs/deploying.md, "One stack or shards"): which clusters each
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

// Of Stack fills a Stack from a stack's configuration.
func Of(cfg config.Config) Stack {
	return Stack{Name: cfg.Stack, Clusters: cfg.Clusters, Accounts: cfg.Accounts}
}

// What one provider process takes, and what a preview may take in all (docs/performance.md, "One stack in the real
// engine"):
//   - pulumi-aws: "Each pulumi-resource process consumes ~300-430MB of memory" (pulumi/pulumi-aws#5860), the most
//     of that range; pulumi-eks's, whose figure nobody published, is counted as much;
//   - pulumi-kubernetes: 163 MB configured, 178 MB once it served its schema, measured here on the provider built
//     from the Go module proxy (v4.0.0-20260115033456-f47bc2d6f199), rounded up;
//   - the budget, unless the stack's providerBudgetMB says otherwise: a standard hosted runner's 16 GB, less 2 GB for
//     the CLI, the program and the system (config.DefaultProviderBudgetMB).
const (
	AWSProviderMB        = 430
	KubernetesProviderMB = 180
	BudgetMB             = config.DefaultProviderBudgetMB
)

// Counts are the stack's provider processes by plugin: AWS (the default and one per member account), Kubernetes
// (one per cluster whose Karpenter it installs), and pulumi-eks's when it creates a cluster.
func (s Stack) Counts() (aws, kubernetes, eks int) {
	aws = 1 + len(s.Accounts)
	for _, cl := range s.Clusters {
		if cl.Mode.InstallsKarpenter() {
			kubernetes++
		}
		if cl.Mode == config.ModeCreate {
			eks = 1
		}
	}
	return aws, kubernetes, eks
}

// Providers is how many provider processes one preview or update of the stack starts in the real engine, which
// starts one per provider configuration (pulumi/pulumi#19534).
func (s Stack) Providers() int {
	aws, kubernetes, eks := s.Counts()
	return aws + kubernetes + eks
}

// MemoryMB is what those processes take, by the figures above.
func (s Stack) MemoryMB() int {
	aws, kubernetes, eks := s.Counts()
	return (aws+eks)*AWSProviderMB + kubernetes*KubernetesProviderMB
}

// Fits reports whether the stack's providers take at most budgetMB (BudgetMB: what a CI runner holds).
func (s Stack) Fits(budgetMB int) bool { return s.MemoryMB() <= budgetMB }

// Plan splits cfg's clusters so that no stack's providers take more than limitMB. The hub keeps the clusters it
// must (those of member accounts it gives the baseline itself, which a shard cannot join: infra's joinHub; and
// those it creates), then
// as many as fit; the rest fill shards named <stack>-shard-<n>, in the configuration's order. A member account's
// clusters go together, into the last stack or a new one, so that its provider is started once; only an account
// too large for one stack is spread over several.
func Plan(cfg config.Config, limitMB int) (hub Stack, shards []Stack, err error) {
	hub = Stack{Name: cfg.Stack, Accounts: map[string]config.Account{}}
	// Groups: a member account's clusters together, each cluster of the hub's own account on its own.
	var groups [][]config.Cluster
	at := map[string]int{}
	for _, cl := range cfg.Clusters {
		if !cfg.IsMember(cl.Account) {
			groups = append(groups, []config.Cluster{cl})
			continue
		}
		i, ok := at[cl.Account]
		if !ok {
			i = len(groups)
			at[cl.Account] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], cl)
	}
	with := func(s Stack, cls ...config.Cluster) Stack {
		t := Stack{Name: s.Name, Clusters: slices.Clone(s.Clusters), Accounts: maps.Clone(s.Accounts)}
		for _, cl := range cls {
			t.Clusters = append(t.Clusters, cl)
			if cfg.IsMember(cl.Account) {
				t.Accounts[cl.Account] = cfg.Accounts[cl.Account]
			}
		}
		return t
	}
	// The members the hub baselines through its own list: their clusters stay in the hub. So do the clusters the
	// hub creates: pulumi-eks's providers are children of its component, which pulumi state move cannot copy
	// ahead of their parent.
	var rest [][]config.Cluster
	for _, g := range groups {
		if cfg.IsMember(g[0].Account) && !cfg.Baselined() || slices.ContainsFunc(g, func(cl config.Cluster) bool { return cl.Mode == config.ModeCreate }) {
			hub = with(hub, g...)
			continue
		}
		rest = append(rest, g)
	}
	if !hub.Fits(limitMB) {
		return Stack{}, nil, fmt.Errorf("the hub must keep the clusters of the %d member accounts it gives the baseline itself, %d provider "+
			"processes taking %d MB, over %d MB: give the hub organization.memberOUs, so that its StackSet gives members their "+
			"baseline and their clusters can move to shards (docs/organization.md)", len(hub.Accounts), hub.Providers(), hub.MemoryMB(), limitMB)
	}
	newShard := func() *Stack {
		shards = append(shards, Stack{Name: fmt.Sprintf("%s-shard-%d", cfg.Stack, len(shards)+1), Accounts: map[string]config.Account{}})
		return &shards[len(shards)-1]
	}
	last := &hub
	for _, g := range rest {
		switch {
		case with(*last, g...).Fits(limitMB):
		case with(Stack{Accounts: map[string]config.Account{}}, g...).Fits(limitMB):
			last = newShard()
		default: // an account too large for one stack: cluster by cluster
			for _, cl := range g {
				if !with(*last, cl).Fits(limitMB) {
					last = newShard()
					if !with(*last, cl).Fits(limitMB) {
						return Stack{}, nil, fmt.Errorf("%d MB is too little for one cluster with its account's provider and the stack's own", limitMB)
					}
				}
				*last = with(*last, cl)
			}
			continue
		}
		*last = with(*last, g...)
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
