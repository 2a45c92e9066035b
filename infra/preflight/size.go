package preflight

import (
	"fmt"
	"strings"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/shardplan"
)

// size refuses, before anything is declared, a stack whose provider processes would take more than its
// budget (providerBudgetMB, by default what a standard CI runner holds): the preview would not finish there. The
// refusal names the stack's size, the limit, the command that plans the split and the key a larger machine raises.
func size(cfg config.Config) error {
	s := shardplan.Of(cfg)
	if s.Fits(cfg.ProviderBudgetMB) {
		return nil
	}
	aws, kubernetes, _ := s.Counts()
	var what []string
	if members := aws - 1; members > 0 {
		what = append(what, fmt.Sprintf("%d member accounts", members))
	}
	if kubernetes > 0 {
		what = append(what, fmt.Sprintf("%d clusters with Karpenter installed", kubernetes))
	}
	return &config.Error{Problems: []config.Problem{config.Problemf("clusters", "this stack starts %d provider processes in one preview (%s, one "+
		"provider each, and the stack's own), about %.1f GB with pulumi-aws at %d MB and pulumi-kubernetes at %d MB a process: "+
		"past providerBudgetMB, %d MB (%s). Split it into shards: make shards STACK=%s prints the shards' configurations and the "+
		"pulumi state move commands that move each cluster without touching AWS (docs/deploying.md, \"One stack or shards\"); "+
		"where previews and updates run on a machine with more memory, raise providerBudgetMB instead",
		s.Providers(), strings.Join(what, " and "), float64(s.MemoryMB())/1024, shardplan.AWSProviderMB, shardplan.KubernetesProviderMB,
		cfg.ProviderBudgetMB, budgetWhy(cfg.ProviderBudgetMB), cfg.Stack)}}
}

func budgetWhy(mb int) string {
	if mb == config.DefaultProviderBudgetMB {
		return "the default: a standard CI runner's 16 GB, less 2 GB for the CLI and the program"
	}
	return "this stack's"
}
