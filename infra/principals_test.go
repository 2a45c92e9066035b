package infra_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
)

// principals are the AWS and Federated principals every statement of every policy document among r's inputs
// names (resource policies, trust policies; identity policies name none).
func principals(r mocks.Resource) []string {
	var out []string
	for _, v := range stacktest.Plain(r) {
		text, ok := v.(string)
		if !ok {
			continue
		}
		var doc struct {
			Statement []struct{ Principal any }
		}
		if json.Unmarshal([]byte(text), &doc) != nil {
			continue
		}
		for _, st := range doc.Statement {
			p, _ := st.Principal.(map[string]any)
			for _, kind := range []string{"AWS", "Federated"} {
				switch x := p[kind].(type) {
				case string:
					out = append(out, x)
				case []any:
					for _, y := range x {
						out = append(out, fmt.Sprint(y))
					}
				}
			}
		}
	}
	return out
}

// waitsFor is every resource r waits for before it is created: its dependencies, theirs, and, for a component
// among them, everything under it.
func waitsFor(rs stacktest.Resources, r mocks.Resource) map[string]bool {
	byURN := map[string]mocks.Resource{}
	for _, x := range rs {
		byURN[x.URN] = x
	}
	under := func(component string) []mocks.Resource {
		var out []mocks.Resource
		for _, x := range rs {
			for p := x.Parent; p != ""; {
				if p == component {
					out = append(out, x)
					break
				}
				next := ""
				for _, y := range rs {
					if !y.Custom && y.Name == p {
						next = y.Parent
					}
				}
				p = next
			}
		}
		return out
	}
	seen := map[string]bool{}
	var visit func(urn string)
	visit = func(urn string) {
		if seen[urn] {
			return
		}
		seen[urn] = true
		x := byURN[urn]
		for _, d := range x.Dependencies {
			visit(d)
		}
		if !x.Custom {
			for _, y := range under(x.Name) {
				visit(y.URN)
			}
		}
	}
	for _, d := range r.Dependencies {
		visit(d)
	}
	return seen
}

// earlyPrincipals lists the policies among rs that name, as a principal, a role rs declares without waiting for it.
func earlyPrincipals(t *testing.T, rs stacktest.Resources) (problems []string, checked int) {
	t.Helper()
	roles := map[string]mocks.Resource{}
	for _, x := range rs.OfType("aws:iam/role:Role") {
		roles[fmt.Sprintf("arn:aws:iam::%s:role/%s", x.Account, stacktest.Str(t, x, "name"))] = x
	}
	for _, x := range rs {
		named := principals(x)
		checked += len(named)
		var before map[string]bool
		for _, p := range named {
			role, ours := roles[p]
			if !ours {
				continue
			}
			if before == nil {
				before = waitsFor(rs, x)
			}
			if !before[role.URN] {
				problems = append(problems, fmt.Sprintf("%s %s names the role %s as a principal before it exists (it does not wait for %s)", x.Type, x.Name, p, role.Name))
			}
		}
	}
	return problems, checked
}

// TestPrincipalsExistBeforeThePolicies: AWS refuses a policy whose principal does not exist yet (SQS answers
// InvalidAttributeValue, IAM "Invalid principal in policy"), and stores a principal as its unique ID, so a role
// recreated later silently loses access. The mocks accept both: this test walks every policy of the stacks, and
// each principal the stack itself declares (a role, by its ARN) must be created before the policy, through its
// dependencies; the program's own policies name accounts instead, and roles in aws:PrincipalArn.
func TestPrincipalsExistBeforeThePolicies(t *testing.T) {
	stacks := map[string]map[string]string{
		"dev": devConfig(t), "hub": hubStack(accountA, accountB, accountC),
		"organization": withOrganization(hubStack(accountA, accountB)),
		"baselined":    withOrganization(hubStack(accountA, accountB), testOU),
	}
	for name, cfg := range stacks {
		t.Run(name, func(t *testing.T) {
			r, err := runWith(t, &mocks.Mocks{}, render.AnyCommand, "dev", cfg)
			if err != nil {
				t.Fatal(err)
			}
			problems, checked := earlyPrincipals(t, r.resources)
			for _, p := range problems {
				t.Error(p)
			}
			if checked == 0 {
				t.Fatal("no principal found: the walk reads no policy")
			}
		})
	}
	t.Run("the walk catches a role named too early", func(t *testing.T) {
		policy := `{"Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::123456789012:role/r"},"Action":"sqs:SendMessage"}]}`
		role := mocks.Resource{Type: "aws:iam/role:Role", Name: "r", URN: "urn:role", Custom: true, Account: "123456789012",
			Inputs: resource.NewPropertyMapFromMap(map[string]any{"name": "r"})}
		early := mocks.Resource{Type: "aws:sqs/queuePolicy:QueuePolicy", Name: "early", URN: "urn:early", Custom: true,
			Inputs: resource.NewPropertyMapFromMap(map[string]any{"policy": policy})}
		late := early
		late.Name, late.URN, late.Dependencies = "late", "urn:late", []string{"urn:role"}
		problems, _ := earlyPrincipals(t, stacktest.Resources{role, early, late})
		if len(problems) != 1 || !strings.Contains(problems[0], " early ") {
			t.Errorf("problems = %v, want the policy that does not wait for the role only", problems)
		}
	})
}
