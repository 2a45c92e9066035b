package iam

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// caller is who makes a request: its principal, its identity policies, and the context keys AWS sets for it.
type caller struct {
	principal string
	account   string
	identity  []Policy
	context   map[string]any
}

// session is a request by a session of role r of stack s, over TLS, in s's region.
// In a stack whose accounts are of an organization, AWS also sets the principal's organization and the
// resource's (every resource of the bus is in it; a row on a resource outside sets its own).
func (s *Stack) session(r *Role) caller {
	c := caller{
		principal: fmt.Sprintf("arn:%s:sts::%s:assumed-role/%s/session", s.Partition, s.Account, r.Name),
		account:   s.Account,
		identity:  r.Policies,
		context: map[string]any{
			"aws:PrincipalArn": r.ARN, "aws:PrincipalAccount": s.Account, "aws:SecureTransport": "true",
			"aws:RequestedRegion": s.Region,
		},
	}
	if s.OrgID != "" {
		c.context["aws:PrincipalOrgID"], c.context["aws:ResourceOrgID"] = s.OrgID, s.OrgID
	}
	return c
}

// inOrganization says that the hub s and its members are accounts of the organization id.
func (s *Stack) inOrganization(id string) {
	s.OrgID = id
	for _, m := range s.Members {
		m.OrgID = id
	}
}

// outsider is a session of a role of another account that holds an identity policy allowing everything named.
func outsider(account string, actions ...string) caller {
	role := "arn:aws:iam::" + account + ":role/outsider"
	return caller{
		principal: "arn:aws:sts::" + account + ":assumed-role/outsider/session", account: account,
		identity: []Policy{{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": actions, "Resource": "*"}}}},
		context:  map[string]any{"aws:PrincipalArn": role, "aws:PrincipalAccount": account, "aws:SecureTransport": "true"},
	}
}

// admin is a role of s's own account whose identity policy allows the actions on every resource.
func (s *Stack) admin(actions ...string) caller {
	r := &Role{Name: "platform-admin", ARN: fmt.Sprintf("arn:%s:iam::%s:role/platform-admin", s.Partition, s.Account),
		Policies: []Policy{{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": actions, "Resource": "*"}}}}}
	return s.session(r)
}

// service is a request by an AWS service principal with the context keys AWS sets for it.
func service(principal, account string, context map[string]any) caller {
	return caller{principal: principal, account: account, context: context}
}

// with returns c with the context key k set to v (or removed when v is nil).
func (c caller) with(k string, v any) caller {
	c.context = maps.Clone(c.context)
	if v == nil {
		delete(c.context, k)
	} else {
		c.context[k] = v
	}
	return c
}

// verdict is what a row expects.
type verdict string

const (
	allowed verdict = "Allowed"
	// denied is either denial: no policy allows it, or one denies it.
	denied verdict = "Denied"
	// explicitlyDenied: a Deny statement refuses it, whatever any identity policy allows.
	explicitlyDenied verdict = "ExplicitlyDenied"
)

// row is one request of the matrix and the verdict it must get.
type row struct {
	name                  string
	who                   caller
	action                string
	resource, resourceAcc string
	resourcePolicy        Policy
	want                  verdict
	// unsafe: the context holds provider keys iam-simulate's catalogue does not know (see evaluator/evaluate.mjs).
	unsafe bool
	// scp, when set, is a service control policy of the caller's account, attached beside AWS's FullAWSAccess (every
	// level of an organization must allow a request, and one Deny anywhere refuses it).
	scp Policy
}

type simulation struct {
	Request struct {
		Principal string `json:"principal"`
		Action    string `json:"action"`
		Resource  struct {
			Resource  string `json:"resource"`
			AccountID string `json:"accountId"`
		} `json:"resource"`
		ContextVariables map[string]any `json:"contextVariables"`
	} `json:"request"`
	IdentityPolicies       []namedPolicy `json:"identityPolicies"`
	ResourcePolicy         Policy        `json:"resourcePolicy,omitempty"`
	ServiceControlPolicies []orgPolicies `json:"serviceControlPolicies,omitempty"`
}

// orgPolicies are the service control policies attached at one level of an organization (its root, an OU, an account).
type orgPolicies struct {
	OrgIdentifier string        `json:"orgIdentifier"`
	Policies      []namedPolicy `json:"policies"`
}

// fullAWSAccess is AWS's own SCP, attached everywhere by default: it allows everything, so that only a Deny of another
// SCP refuses.
var fullAWSAccess = Policy{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "*", "Resource": "*"}}}

type namedPolicy struct {
	Name   string `json:"name"`
	Policy Policy `json:"policy"`
}

type evaluation struct {
	ID                 int      `json:"id"`
	Result             string   `json:"result"`
	IgnoredContextKeys []string `json:"ignoredContextKeys"`
	Errors             string   `json:"errors"`
}

// evaluate runs every row in the evaluator, once, and checks each verdict: a failed row names the request.
func evaluate(t *testing.T, rows []row) {
	t.Helper()
	type input struct {
		ID         int        `json:"id"`
		Simulation simulation `json:"simulation"`
		Unsafe     bool       `json:"unsafe"`
	}
	in := make([]input, len(rows))
	for i, r := range rows {
		var s simulation
		s.Request.Principal, s.Request.Action = r.who.principal, r.action
		s.Request.Resource.Resource, s.Request.Resource.AccountID = r.resource, r.resourceAcc
		if s.Request.Resource.AccountID == "" {
			s.Request.Resource.AccountID = r.who.account
		}
		s.Request.ContextVariables = r.who.context
		for j, p := range r.who.identity {
			s.IdentityPolicies = append(s.IdentityPolicies, namedPolicy{Name: fmt.Sprintf("policy-%d", j), Policy: p})
		}
		s.IdentityPolicies = append([]namedPolicy{}, s.IdentityPolicies...)
		s.ResourcePolicy = r.resourcePolicy
		if r.scp != nil {
			s.ServiceControlPolicies = []orgPolicies{{OrgIdentifier: r.who.account, Policies: []namedPolicy{
				{Name: "FullAWSAccess", Policy: fullAWSAccess}, {Name: "example", Policy: r.scp},
			}}}
		}
		in[i] = input{ID: i, Simulation: s, Unsafe: r.unsafe}
	}
	payload, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const dir = "evaluator"
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@cloud-copilot", "iam-simulate")); err != nil {
		t.Fatalf("the IAM evaluator is not installed: run make test, which runs npm ci in tests/iam/evaluator (%v)", err)
	}
	cmd := exec.Command("node", "evaluate.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(payload)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node evaluate.mjs: %v\n%s", err, stderr.String())
	}
	var results []evaluation
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("evaluator output: %v", err)
	}
	if len(results) != len(rows) {
		t.Fatalf("%d results for %d rows", len(results), len(rows))
	}
	for _, res := range results {
		r := rows[res.ID]
		switch {
		case res.Errors != "":
			t.Errorf("%s: the evaluator rejects the simulation: %s", r.name, res.Errors)
		case len(res.IgnoredContextKeys) > 0:
			// A key AWS would not evaluate for this request makes the row prove nothing.
			t.Errorf("%s: context keys %v do not apply to %s", r.name, res.IgnoredContextKeys, r.action)
		case r.want == denied && res.Result == string(allowed), r.want != denied && res.Result != string(r.want):
			t.Errorf("%s: %s %s on %s is %s, want %s", r.name, r.who.principal, r.action, r.resource, res.Result, r.want)
		}
	}
}
