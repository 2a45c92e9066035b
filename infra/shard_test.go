package infra_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/requeue"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/verify"
)

// hubOutputsOf are the outputs a shard reads of its hub "prod", whose members get their baseline as baseline says
// (outputs.BaselineStackSet or outputs.BaselineProviders), with clusters deployed.
func hubOutputsOf(baseline string, clusters map[string]any) map[string]any {
	return map[string]any{
		"busName": "kib-prod", "clusterQueuePrefix": "kib-prod_", "region": mocks.DefaultRegion, "routerLogGroupName": "/aws/lambda/kib-prod-router", "canaryIntervalSeconds": 30.0,
		"account": mocks.DefaultAccount, "heartbeatRate": "5m", "memberBaseline": baseline, "alarmTopicArn": "",
		"clusters": clusters, "retainedPodIdentityAssociations": map[string]any{},
	}
}

// shardOf is a shard of hub prod, its one cluster of member account A (the organization's).
func shardOf(movedFrom string) map[string]string {
	entry := `{"name":"m-pods","account":"` + accountA + `"`
	if movedFrom != "" {
		entry += `,"movedFrom":"` + movedFrom + `"`
	}
	cfg := withOrganization(clusters(entry + `}`))
	cfg["hub"], cfg["namePrefix"] = "prod", "kib-prod"
	cfg["accounts"] = `{"` + accountA + `":{"deployRoleArn":"arn:aws:iam::` + accountA + `:role/pulumi-deploy"}}`
	return cfg
}

// TestAShardTakesAStackSetHubsMembers: a shard of a hub whose StackSet gives every member its baseline (the
// documented layout of a large organization) declares its member accounts' clusters; a shard of a hub that
// baselines its members through its own list refuses them, naming the cluster, the hub and the fix.
func TestAShardTakesAStackSetHubsMembers(t *testing.T) {
	m := &mocks.Mocks{Stacks: map[string]map[string]any{"prod": hubOutputsOf("stackset", map[string]any{})}}
	r, err := runWith(t, m, render.AnyCommand, "prod-shard-1", shardOf(""))
	if err != nil {
		t.Fatalf("a shard of a StackSet hub refused its member's cluster: %v", err)
	}
	if len(r.resources.OfCluster("m-pods")) == 0 {
		t.Error("the member's cluster declared nothing")
	}
	m = &mocks.Mocks{Stacks: map[string]map[string]any{"prod": hubOutputsOf("providers", map[string]any{})}}
	_, err = runWith(t, m, render.AnyCommand, "prod-shard-1", shardOf(""))
	if err == nil || !strings.Contains(err.Error(), "clusters[0].account: "+accountA+" is a member account, and hub prod gives members their baseline "+
		"through its own list of accounts") {
		t.Errorf("a shard of a hub that baselines its members itself: %v, want the member's cluster refused", err)
	}
}

// TestAClusterMovedBetweenShardsIsReadFromWhereItCameFrom: a cluster a shard took from another shard (movedFrom) is
// read from that shard's outputs, not the hub's: its record there makes the preflight know the roles it finds.
func TestAClusterMovedBetweenShardsIsReadFromWhereItCameFrom(t *testing.T) {
	deployed := map[string]any{"m-pods": map[string]any{"mode": "install", "karpenterNamespace": "kube-system"}}
	m := &mocks.Mocks{Stacks: map[string]map[string]any{
		"prod":         hubOutputsOf("stackset", map[string]any{}),
		"prod-shard-2": {"clusters": deployed, "retainedPodIdentityAssociations": map[string]any{}},
	}}
	r, err := runWith(t, m, render.AnyCommand, "prod-shard-1", shardOf("prod-shard-2"))
	if err != nil {
		t.Fatal(err)
	}
	var read []string
	for _, ref := range r.resources.OfType("pulumi:pulumi:StackReference") {
		read = append(read, stacktest.Str(t, ref, "name"))
	}
	if !strings.Contains(strings.Join(read, ","), "prod-shard-2") {
		t.Errorf("the stacks read are %v: the moved cluster's source, prod-shard-2, is not among them", read)
	}
	// Moved from a stack that never deployed it: refused, naming the cluster and the source.
	m.Stacks["prod-shard-2"] = map[string]any{"clusters": map[string]any{}, "retainedPodIdentityAssociations": map[string]any{}}
	if _, err := runWith(t, m, render.AnyCommand, "prod-shard-1", shardOf("prod-shard-2")); err == nil ||
		!strings.Contains(err.Error(), "m-pods has movedFrom prod-shard-2, whose last update neither deployed nor retained it") {
		t.Errorf("a movedFrom naming a stack without the cluster: %v", err)
	}
}

// TestAShardReadsWhatItsHubWrote: the outputs a hub of this program exports are what a shard reads of it (one
// contract, package outputs): a shard of it joins; the same outputs lacking one a shard needs are refused, naming it.
func TestAShardReadsWhatItsHubWrote(t *testing.T) {
	hubCfg := withOrganization(clusters(`{"name":"h"}`), "ou-abcd-11111111")
	hubCfg["namePrefix"] = "kib-prod"
	hub, err := runWith(t, &mocks.Mocks{}, render.AnyCommand, "prod", hubCfg)
	if err != nil {
		t.Fatal(err)
	}
	written := map[string]any{}
	for k, v := range hub.outputs {
		// As a stack reference reads them: JSON's numbers.
		if n, ok := v.(int); ok {
			v = float64(n)
		}
		written[k] = v
	}
	// make verify and make requeue read them as pulumi stack output --json prints them.
	text, err := json.Marshal(written)
	if err != nil {
		t.Fatal(err)
	}
	v, err := verify.ReadOutputs(bytes.NewReader(text))
	if err != nil || v.BusName != "kib-prod" || v.Clusters["h"].QueueURL == "" || v.CanaryIntervalSeconds == 0 {
		t.Errorf("verify reads %+v, %v", v, err)
	}
	if q, err := requeue.ReadOutputs(bytes.NewReader(text)); err != nil || q.QuarantineQueueURL == "" || q.Account != mocks.DefaultAccount {
		t.Errorf("requeue reads %+v, %v", q, err)
	}
	shard, err := runWith(t, &mocks.Mocks{Stacks: map[string]map[string]any{"prod": written}}, render.AnyCommand, "prod-shard-1", shardOf(""))
	if err != nil {
		t.Fatalf("a shard of the hub's own outputs: %v", err)
	}
	if shard.outputs["routerLogGroupName"] != hub.outputs["routerLogGroupName"] || shard.outputs["canaryIntervalSeconds"] != hub.outputs["canaryIntervalSeconds"] {
		t.Errorf("the shard says of its hub %v, %v; the hub %v, %v", shard.outputs["routerLogGroupName"], shard.outputs["canaryIntervalSeconds"],
			hub.outputs["routerLogGroupName"], hub.outputs["canaryIntervalSeconds"])
	}
	// A secret of the hub's is read as any other; what a shard does without may be missing (a hub before 0.4.0 had no
	// canary interval).
	secret, err := runWith(t, &mocks.Mocks{Stacks: map[string]map[string]any{"prod": written}, SecretOutputs: []string{"routerLogGroupName", "busName"}},
		render.AnyCommand, "prod-shard-1", shardOf(""))
	if err != nil {
		t.Errorf("a hub whose routerLogGroupName and busName are secrets: %v", err)
	}
	if !secret.secret["routerLogGroupName"] || secret.secret["canaryIntervalSeconds"] || secret.outputs["routerLogGroupName"] != hub.outputs["routerLogGroupName"] {
		t.Errorf("the shard exports the hub's secret routerLogGroupName %v (secret: %v), its canary interval secret: %v",
			secret.outputs["routerLogGroupName"], secret.secret["routerLogGroupName"], secret.secret["canaryIntervalSeconds"])
	}
	delete(written, "canaryIntervalSeconds")
	delete(written, "clusterQueuePrefix")
	if _, err := runWith(t, &mocks.Mocks{Stacks: map[string]map[string]any{"prod": written}}, render.AnyCommand, "prod-shard-1", shardOf("")); err != nil {
		t.Errorf("a hub without canaryIntervalSeconds and clusterQueuePrefix: %v", err)
	}
	delete(written, "memberBaseline")
	_, err = runWith(t, &mocks.Mocks{Stacks: map[string]map[string]any{"prod": written}}, render.AnyCommand, "prod-shard-1", shardOf(""))
	if err == nil || !strings.Contains(err.Error(), "hub: stack prod has no output memberBaseline: it is not a hub of this program") {
		t.Errorf("a hub without memberBaseline: %v", err)
	}
}
