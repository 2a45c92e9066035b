// Package fleet is the stacks the bus is sized for, as configurations: one cluster, 300 clusters in one account,
// 500 member accounts admitted by organization (one cluster each, declared through accounts), and the same with
// the member baseline as a StackSet. The quota judge renders each and measures every resource against what AWS
// enforces (package quota); make docs writes the worst figures into docs/performance.md.
package fleet

import (
	"encoding/json"
	"fmt"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/quota"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
)

// Stack is one sized stack: its name, what it is, and its configuration ("namespace:key" -> value).
type Stack struct {
	Name, What string
	Config     map[string]string
}

// Hub is the account the stacks render as; Region their region; Organization and OU the organization's.
const (
	Hub          = "111111111111"
	Region       = "eu-west-1"
	Organization = "o-a1b2c3d4e5"
	OU           = "ou-ab12-cd34ef56"
)

// OneStackBudgetMB is the sized stacks' providerBudgetMB (configOf).
const OneStackBudgetMB = "1048576"

// Stacks are the sized stacks, smallest first.
func Stacks() []Stack {
	return []Stack{
		{Name: "one-cluster", What: "1 cluster", Config: Clusters(1)},
		{Name: "300-clusters", What: "300 clusters in one account", Config: Clusters(300)},
		{Name: "500-members", What: "500 member accounts, organization.id", Config: Members(500, false)},
		{Name: "500-members-ous", What: "500 member accounts, organization.memberOUs (StackSet)", Config: Members(500, true)},
	}
}

// Fleet is the largest configuration the docs describe, as one stack: n clusters in the hub's account and m member
// accounts of the organization with one cluster each, their baseline a StackSet.
func Fleet(n, m int) map[string]string {
	own := Clusters(n)
	members := Members(m, true)
	var a, b []map[string]any
	_ = json.Unmarshal([]byte(own[config.Namespace+":clusters"]), &a)
	_ = json.Unmarshal([]byte(members[config.Namespace+":clusters"]), &b)
	out, _ := json.Marshal(append(a, b...))
	members[config.Namespace+":clusters"] = string(out)
	return members
}

// Clusters is a stack of n clusters in the hub's account, each installed with Pod Identity. Every stack has the
// heartbeat (the default) and the dashboard, whose rows grow with the clusters.
func Clusters(n int) map[string]string {
	entries := make([]map[string]any, n)
	for i := range entries {
		entries[i] = map[string]any{"name": fmt.Sprintf("cluster-%03d", i+1)}
	}
	return configOf(map[string]any{"clusters": entries})
}

// Members is a stack of n member accounts of the organization, one cluster in each, declared through the
// account's provider, and none in the hub; with ous, the members' baseline is a StackSet to OU.
func Members(n int, ous bool) map[string]string {
	entries := make([]map[string]any, n)
	accounts := map[string]any{}
	for i := range entries {
		id := Account(i)
		entries[i] = map[string]any{"name": fmt.Sprintf("member-%03d", i+1), "account": id}
		accounts[id] = map[string]string{"deployRoleArn": "arn:aws:iam::" + id + ":role/pulumi-deploy"}
	}
	org := map[string]any{"id": Organization}
	if ous {
		org["memberOUs"] = []string{OU}
	}
	return configOf(map[string]any{"clusters": entries, "accounts": accounts, "organization": org})
}

// Account is the i-th member account's ID.
func Account(i int) string { return fmt.Sprintf("%012d", 200000000000+i) }

// configOf is a stack's configuration of keys. Its providerBudgetMB is as large as the key takes a number: the
// sized stacks are judged as one stack each, as on a machine with the memory for their providers, past which
// the default budget refuses them (docs/deploying.md, "One stack or shards").
func configOf(keys map[string]any) map[string]string {
	cfg := map[string]string{"aws:region": Region, config.Namespace + ":dashboard": "true", config.Namespace + ":providerBudgetMB": OneStackBudgetMB}
	for k, v := range keys {
		b, _ := json.Marshal(v)
		cfg[config.Namespace+":"+k] = string(b)
	}
	return cfg
}

// Render renders s as the hub.
func Render(s Stack) ([]render.Resource, error) {
	return render.Config(s.Config, s.Name, render.Offline(), render.Target{Account: Hub})
}

// Measure renders s and measures it against AWS's quotas: every figure, and the worst of each quota.
func Measure(s Stack) (all []quota.Figure, worst map[string]quota.Figure, err error) {
	rs, err := Render(s)
	if err != nil {
		return nil, nil, fmt.Errorf("rendering %s: %w", s.Name, err)
	}
	all, worst = quota.Measure(Resources(rs))
	return all, worst, nil
}

// Resources are rs as the quota judge takes them.
func Resources(rs []render.Resource) []quota.Resource {
	out := make([]quota.Resource, len(rs))
	for i, r := range rs {
		out[i] = quota.Resource{Type: r.Type, Name: r.Name, Account: r.Account, Inputs: r.Inputs}
	}
	return out
}
