package shardplan_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/shardplan"
)

const hubAccount = "111111111111"

func member(i int) string { return fmt.Sprintf("%012d", 200000000000+i) }

// fleet is a hub's configuration: n clusters in its own account, and per member account m clusters.
func fleet(t *testing.T, own, members, perMember int, ous bool) config.Config {
	t.Helper()
	var clusters []string
	accounts := map[string]string{}
	for i := range own {
		clusters = append(clusters, fmt.Sprintf(`{"name":"own-%03d"}`, i))
	}
	for a := range members {
		for i := range perMember {
			clusters = append(clusters, fmt.Sprintf(`{"name":"m%d-%03d","account":"%s"}`, a, i, member(a)))
		}
		accounts[member(a)] = fmt.Sprintf(`{"deployRoleArn":"arn:aws:iam::%s:role/deploy"}`, member(a))
	}
	values := map[string]string{"clusters": "[" + strings.Join(clusters, ",") + "]"}
	if members > 0 {
		var entries []string
		for id, v := range accounts {
			entries = append(entries, fmt.Sprintf("%q:%s", id, v))
		}
		values["accounts"] = "{" + strings.Join(entries, ",") + "}"
		org := `{"id":"o-a1b2c3d4e5"}`
		if ous {
			org = `{"id":"o-a1b2c3d4e5","memberOUs":["ou-ab12-cd34ef56"]}`
		}
		values["organization"] = org
	}
	cfg, err := config.Load("prod", hubAccount, values)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name                    string
		own, members, perMember int
		ous                     bool
		limit                   int
		wantShards              int
		wantHubKeepsEveryMember bool
		wantErr                 string
	}{
		{"fits", 20, 0, 0, false, shardplan.BudgetMB, 0, false, ""},
		{"200 clusters of the hub's account", 200, 0, 0, false, shardplan.BudgetMB, 2, false, ""},
		{"500 member accounts by the StackSet", 0, 500, 1, true, shardplan.BudgetMB, 22, false, ""},
		{"members with many clusters each", 0, 5, 20, true, shardplan.BudgetMB, 1, false, ""},
		{"members the hub baselines stay", 100, 5, 2, false, shardplan.BudgetMB, 1, true, ""},
		{"too many members the hub baselines", 0, 30, 1, false, shardplan.BudgetMB, 0, false, "organization.memberOUs"},
		{"an account larger than a stack", 0, 1, 100, true, shardplan.BudgetMB, 1, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := fleet(t, tt.own, tt.members, tt.perMember, tt.ous)
			hub, shards, err := shardplan.Plan(cfg, tt.limit)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(shards) != tt.wantShards {
				t.Errorf("%d shards, want %d", len(shards), tt.wantShards)
			}
			seen := map[string]string{}
			for i, s := range append([]shardplan.Stack{hub}, shards...) {
				if s.MemoryMB() > tt.limit {
					t.Errorf("%s's %d provider processes take %d MB, over %d", s.Name, s.Providers(), s.MemoryMB(), tt.limit)
				}
				if want := fmt.Sprintf("prod-shard-%d", i); i > 0 && s.Name != want {
					t.Errorf("shard %d is named %s, want %s", i, s.Name, want)
				}
				for _, cl := range s.Clusters {
					if other, dup := seen[cl.Name]; dup {
						t.Errorf("%s is in %s and %s", cl.Name, other, s.Name)
					}
					seen[cl.Name] = s.Name
					if cfg.IsMember(cl.Account) && s.Accounts[cl.Account].DeployRoleARN == "" {
						t.Errorf("%s holds %s without its account's entry", s.Name, cl.Name)
					}
				}
				for id := range s.Accounts {
					found := false
					for _, cl := range s.Clusters {
						found = found || cl.Account == id
					}
					if !found {
						t.Errorf("%s names account %s, with no cluster of it", s.Name, id)
					}
				}
			}
			if len(seen) != len(cfg.Clusters) {
				t.Errorf("%d clusters placed, of %d", len(seen), len(cfg.Clusters))
			}
			if tt.wantHubKeepsEveryMember {
				for _, cl := range cfg.Clusters {
					if cfg.IsMember(cl.Account) && seen[cl.Name] != "prod" {
						t.Errorf("%s, of a member the hub baselines, went to %s", cl.Name, seen[cl.Name])
					}
				}
			}
		})
	}
}

// TestAMembersClustersStayTogether: a member account's clusters land in one stack where they fit, so that its
// provider is started once.
func TestAMembersClustersStayTogether(t *testing.T) {
	cfg := fleet(t, 0, 6, 4, true)
	// Room for the stack's own provider and three accounts of four clusters each, not four.
	hub, shards, err := shardplan.Plan(cfg, 5000)
	if err != nil {
		t.Fatal(err)
	}
	stacks := map[string]map[string]bool{}
	for _, s := range append([]shardplan.Stack{hub}, shards...) {
		for _, cl := range s.Clusters {
			if stacks[cl.Account] == nil {
				stacks[cl.Account] = map[string]bool{}
			}
			stacks[cl.Account][s.Name] = true
		}
	}
	for id, in := range stacks {
		if len(in) != 1 {
			t.Errorf("account %s's clusters are in %d stacks", id, len(in))
		}
	}
	if len(shards) != 1 {
		t.Errorf("%d shards, want 1: three accounts in each stack", len(shards))
	}
}

func TestCommands(t *testing.T) {
	cfg := fleet(t, 3, 0, 0, false)
	hub, shards, err := shardplan.Plan(cfg, shardplan.AWSProviderMB+2*shardplan.KubernetesProviderMB)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(shardplan.Commands(hub, shards, "kib", "passphrase", "kib:index:ClusterInterruption"), "\n")
	want := "pulumi stack init prod-shard-1 --secrets-provider passphrase\n" +
		"pulumi state move --source prod --dest prod-shard-1 --yes 'urn:pulumi:prod::kib::kib:index:ClusterInterruption::own-002'"
	if got != want {
		t.Errorf("commands:\n%s\nwant:\n%s", got, want)
	}
}

// TestMemory: the stack's providers by the figures the package cites.
func TestMemory(t *testing.T) {
	cfg := fleet(t, 3, 2, 1, true)
	s := shardplan.Of(cfg)
	if s.Providers() != 1+2+5 || s.MemoryMB() != 3*shardplan.AWSProviderMB+5*shardplan.KubernetesProviderMB {
		t.Errorf("%d providers, %d MB; want 8 and %d", s.Providers(), s.MemoryMB(), 3*shardplan.AWSProviderMB+5*shardplan.KubernetesProviderMB)
	}
	if !s.Fits(shardplan.BudgetMB) || (shardplan.Stack{Accounts: map[string]config.Account{}, Clusters: make([]config.Cluster, 0)}).MemoryMB() != shardplan.AWSProviderMB {
		t.Error("a small stack does not fit, or an empty one starts more than its own provider")
	}
	// The least providerBudgetMB a stack may set still holds a stack of no cluster, which the program never refuses.
	if empty := (shardplan.Stack{}); !empty.Fits(config.MinProviderBudgetMB) {
		t.Errorf("a stack with no cluster takes %d MB, past the least providerBudgetMB, %d", empty.MemoryMB(), config.MinProviderBudgetMB)
	}
}

// TestCreatedClustersStay: a cluster the hub creates is never planned out of it.
func TestCreatedClustersStay(t *testing.T) {
	var entries []string
	for i := range 100 {
		entries = append(entries, fmt.Sprintf(`{"name":"own-%03d"}`, i))
	}
	entries = append(entries, `{"name":"made","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]}}`)
	cfg, err := config.Load("prod", hubAccount, map[string]string{"clusters": "[" + strings.Join(entries, ",") + "]"})
	if err != nil {
		t.Fatal(err)
	}
	hub, shards, err := shardplan.Plan(cfg, shardplan.BudgetMB)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(hub.Clusters, func(cl config.Cluster) bool { return cl.Name == "made" }) || len(shards) == 0 {
		t.Errorf("the created cluster is not in the hub (%d shards)", len(shards))
	}
}

// TestTheBudgetsEdge: 77 clusters with Karpenter installed fit a runner, 78 do not; so do 22 member accounts with
// a cluster each, and 23 do not (docs/deploying.md, "One stack or shards").
func TestTheBudgetsEdge(t *testing.T) {
	for _, tt := range []struct {
		own, members int
		fits         bool
	}{{77, 0, true}, {78, 0, false}, {0, 22, true}, {0, 23, false}} {
		if got := shardplan.Of(fleet(t, tt.own, tt.members, 1, true)).Fits(shardplan.BudgetMB); got != tt.fits {
			t.Errorf("%d clusters and %d member accounts fit: %t, want %t", tt.own, tt.members, got, tt.fits)
		}
	}
}

// TestOneEKSProviderForEveryCreatedCluster: the engine starts one process per provider configuration; pulumi-eks's
// components share its one default provider, however many clusters the stack creates.
func TestOneEKSProviderForEveryCreatedCluster(t *testing.T) {
	create := `"mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]}`
	cfg, err := config.Load("prod", hubAccount, map[string]string{"clusters": `[{"name":"a",` + create + `},{"name":"b",` + create + `},{"name":"c",` + create + `}]`})
	if err != nil {
		t.Fatal(err)
	}
	s := shardplan.Of(cfg)
	if aws, kubernetes, eks := s.Counts(); aws != 1 || kubernetes != 3 || eks != 1 {
		t.Errorf("three created clusters: %d AWS, %d Kubernetes, %d pulumi-eks providers; want 1, 3, 1", aws, kubernetes, eks)
	}
	if s.Providers() != 5 || s.MemoryMB() != 2*shardplan.AWSProviderMB+3*shardplan.KubernetesProviderMB {
		t.Errorf("%d providers, %d MB; want 5, %d", s.Providers(), s.MemoryMB(), 2*shardplan.AWSProviderMB+3*shardplan.KubernetesProviderMB)
	}
}

// TestPrintCarriesTheBudget: a hub whose providerBudgetMB is raised is cut to that budget, and every shard's stack
// file carries it (else each shard would be refused at preview by the default it was not cut for); the hub's file
// gets the key only when the limit is not its own.
func TestPrintCarriesTheBudget(t *testing.T) {
	var entries []string
	for i := range 150 {
		entries = append(entries, fmt.Sprintf(`{"name":"own-%03d"}`, i))
	}
	values := map[string]string{"clusters": "[" + strings.Join(entries, ",") + "]", "providerBudgetMB": "20000"}
	cfg, err := config.Load("prod", hubAccount, values)
	if err != nil {
		t.Fatal(err)
	}
	pulumiConfig := map[string]string{"aws:region": "eu-west-1"}
	for k, v := range values {
		pulumiConfig[config.Namespace+":"+k] = v
	}
	for _, tt := range []struct {
		limit          int
		wantShardKey   string
		wantHubKey     bool
		wantShardFiles int
	}{
		{0, "providerBudgetMB: 20000", false, 1},
		{config.DefaultProviderBudgetMB, "", true, 1},
	} {
		var out strings.Builder
		if err := shardplan.Print(&out, shardplan.Printed{File: "Pulumi.prod.yaml", Values: pulumiConfig, Config: cfg, Limit: tt.limit, Project: "p",
			ClusterType: "karpenter-interruption-bus:index:ClusterInterruption"}); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		hubAt := strings.Index(text, "# Pulumi.prod.yaml keeps")
		files := strings.Split(text[:hubAt], "\n# Pulumi.prod-shard-")
		if len(files)-1 != tt.wantShardFiles {
			t.Fatalf("limit %d: %d shard files, want %d:\n%s", tt.limit, len(files)-1, tt.wantShardFiles, text)
		}
		for _, f := range files[1:] {
			if got := strings.Contains(f, "providerBudgetMB"); got != (tt.wantShardKey != "") || tt.wantShardKey != "" && !strings.Contains(f, tt.wantShardKey) {
				t.Errorf("limit %d: a shard's file says providerBudgetMB %t, want %q:\n%s", tt.limit, got, tt.wantShardKey, f)
			}
		}
		hub := text[hubAt:]
		if strings.Contains(text[:hubAt], config.Namespace+":accounts") {
			t.Errorf("limit %d: a shard with no member account names accounts", tt.limit)
		}
		if got := strings.Contains(hub, "providerBudgetMB"); got != tt.wantHubKey {
			t.Errorf("limit %d: the hub's keys name providerBudgetMB %t, want %t:\n%s", tt.limit, got, tt.wantHubKey, hub)
		}
	}
}

// TestPrintWritesEachShardsOwn: each shard's file holds its own clusters' entries, as the stack file wrote them, and
// the accounts of its own members only (none, when it has none).
func TestPrintWritesEachShardsOwn(t *testing.T) {
	cfg := fleet(t, 70, 12, 1, true) // 70 of the hub's own, 12 members with one each: more than one stack holds
	pulumiConfig := map[string]string{"aws:region": "eu-west-1"}
	var entries []string
	for _, cl := range cfg.Clusters {
		e := `{"name":"` + cl.Name + `"`
		if cl.Account != hubAccount {
			e += `,"account":"` + cl.Account + `"`
		}
		entries = append(entries, e+"}")
	}
	pulumiConfig[config.Namespace+":clusters"] = "[" + strings.Join(entries, ",") + "]"
	var accounts []string
	for id := range cfg.Accounts {
		accounts = append(accounts, fmt.Sprintf(`%q:{"deployRoleArn":"arn:aws:iam::%s:role/deploy"}`, id, id))
	}
	pulumiConfig[config.Namespace+":accounts"] = "{" + strings.Join(accounts, ",") + "}"
	hub, shards, err := shardplan.Plan(cfg, shardplan.BudgetMB)
	if err != nil || len(shards) == 0 {
		t.Fatalf("%d shards, %v", len(shards), err)
	}
	var out strings.Builder
	if err := shardplan.Print(&out, shardplan.Printed{File: "Pulumi.prod.yaml", Values: pulumiConfig, Config: cfg, Project: "p", ClusterType: "k:index:C"}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, sh := range shards {
		_, file, ok := strings.Cut(text, "# Pulumi."+sh.Name+".yaml:")
		if !ok {
			t.Fatalf("no file for %s:\n%s", sh.Name, text)
		}
		if end := strings.Index(file, "\n# "); end >= 0 {
			file = file[:end]
		}
		for _, cl := range sh.Clusters {
			if !strings.Contains(file, "name: "+cl.Name+"\n") {
				t.Errorf("%s's file lacks its cluster %s:\n%s", sh.Name, cl.Name, file)
			}
		}
		for _, cl := range hub.Clusters {
			if strings.Contains(file, "name: "+cl.Name+"\n") {
				t.Errorf("%s's file holds the hub's cluster %s", sh.Name, cl.Name)
			}
		}
		if got, want := strings.Contains(file, config.Namespace+":accounts"), len(sh.Accounts) > 0; got != want {
			t.Errorf("%s's file names accounts %t, want %t", sh.Name, got, want)
		}
		for id := range sh.Accounts {
			if !strings.Contains(file, id) {
				t.Errorf("%s's file lacks its member %s", sh.Name, id)
			}
		}
	}
}
