package infra_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/quota"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/fleet"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
)

// TestMemberQuotaFiguresCoverWhatIsDeclared: what the check of a member list measures before declaring anything
// is, for each quota, at least what the stack then declares, measured by the quota judge on the declared
// resources: the central queue's policy, the router's whole environment (its central queue URL, its settings, and
// anything else the function carries) and its role's inline policies. A check that left out a part of a document
// (the central queue's URL in the environment, say) would pass a stack that AWS refuses.
func TestMemberQuotaFiguresCoverWhatIsDeclared(t *testing.T) {
	prefix := strings.Repeat("p", config.MaxNamePrefix) // the longest names the documents can hold
	for _, region := range []string{"us-east-1", "cn-north-1", "us-gov-west-1"} {
		for _, n := range []int{1, 12, 25} {
			t.Run(fmt.Sprintf("%s, %d members", region, n), func(t *testing.T) {
				var members []string
				for i := range n {
					members = append(members, fmt.Sprintf("%012d", 500000000000+i))
				}
				kv := hubStack(members...)
				kv["namePrefix"] = prefix
				kv["aws:region"] = region
				kv["providerBudgetMB"] = fleet.OneStackBudgetMB // one stack's figures, past the default budget (checkSize)
				r, err := run(t, "dev", kv)
				if err != nil {
					t.Fatal(err)
				}
				values := map[string]string{}
				for k, v := range kv {
					if !strings.Contains(k, ":") {
						values[k] = v
					}
				}
				cfg, err := config.Load("dev", hubAccount, values)
				if err != nil {
					t.Fatal(err)
				}
				partition, _ := mocks.Partition(region)
				env := awsenv.Env{Partition: partition, Region: region, Account: hubAccount, Principals: map[string]string{}}
				for _, svc := range []string{"events", "lambda", "pods.eks", "ec2", "fis", "scheduler"} {
					env.Principals[svc] = mocks.ServicePrincipal(svc, region)
				}
				checked := map[string]int{}
				for _, f := range preflight.MemberQuotaFigures(cfg, env) {
					checked[f.Quota.What] = max(checked[f.Quota.What], f.Value)
				}
				var hub []quota.Resource
				for _, x := range r.resources {
					if x.Account == hubAccount {
						hub = append(hub, quota.Resource{Type: x.Type, Name: x.Name, Account: x.Account, Inputs: render.Plain(x.Inputs)})
					}
				}
				all, _ := quota.Measure(hub)
				measured := 0
				for _, f := range all {
					if !strings.Contains(f.Where, prefix+"-router") && !strings.Contains(f.Where, "QueuePolicy "+prefix+"-central") {
						continue
					}
					want, ok := checked[f.Quota.What]
					if !ok {
						continue
					}
					measured++
					if f.Value > want {
						t.Errorf("%s: declared %d %s, the check measured %d", f.Where, f.Value, f.Quota.What, want)
					}
				}
				if measured < 3 {
					t.Errorf("compared %d figures of the router and the central queue's policy, want the environment, the inline policies and the policy's", measured)
				}
			})
		}
	}
}
