package infra_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
)

// TestEveryCentralTargetGroupsBySourceAccount: every rule that delivers into the central queue, the hub's own and
// each member's forwarding rules (through the members' providers or the StackSet's template), puts its events in
// the message group of the account the rule runs in, so the central queue is fair between accounts.
func TestEveryCentralTargetGroupsBySourceAccount(t *testing.T) {
	for name, cfg := range map[string]map[string]string{
		"one account":                  clusters(`{"name":"solo"}`),
		"members through providers":    hubStack(accountA, accountB),
		"organization":                 withOrganization(hubStack(accountA, accountB, accountC)),
		"organization with a StackSet": withOrganization(hubStack(accountA, accountB), testOU),
	} {
		t.Run(name, func(t *testing.T) {
			r := mustRun(t, "dev", cfg)
			accounts := map[string]int{}
			for _, x := range r.resources.OfType("aws:cloudwatch/eventTarget:EventTarget") {
				if !strings.HasSuffix(stacktest.Str(t, x, "arn"), ":kib-dev-central") {
					continue
				}
				account := x.Account
				if account == "" {
					account = hubAccount
				}
				sqsTarget, _ := stacktest.Plain(x)["sqsTarget"].(map[string]any)
				if got := sqsTarget["messageGroupId"]; got != account {
					t.Errorf("target %s in %s: message group %v, want the account", x.Name, account, got)
				}
				accounts[account]++
			}
			if accounts[hubAccount] == 0 {
				t.Errorf("no target of the hub's own rules into the central queue: %v", accounts)
			}
			for _, set := range r.resources.OfType("aws:cloudformation/stackSet:StackSet") {
				var tmpl struct {
					Resources map[string]struct {
						Type       string
						Properties struct{ Targets []map[string]any }
					}
				}
				if err := json.Unmarshal([]byte(stacktest.Str(t, set, "templateBody")), &tmpl); err != nil {
					t.Fatal(err)
				}
				rules := 0
				for id, res := range tmpl.Resources {
					if res.Type != "AWS::Events::Rule" {
						continue
					}
					rules++
					for _, target := range res.Properties.Targets {
						params, _ := json.Marshal(target["SqsParameters"])
						if string(params) != `{"MessageGroupId":{"Ref":"AWS::AccountId"}}` {
							t.Errorf("the template's rule %s: SqsParameters %s, want the member's account", id, params)
						}
					}
				}
				if rules == 0 {
					t.Error("the StackSet's template has no rule")
				}
			}
		})
	}
}
