package infra_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
)

// globalTypes are the resources whose names IAM keeps unique per account across every region ("IAM
// identifiers", "Unique names", https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html): a
// second one of the same name in the account fails with EntityAlreadyExists, whatever its region. And CloudWatch's
// dashboards: "All dashboards in your account are global, not region-specific" (AWS::CloudWatch::Dashboard,
// https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-cloudwatch-dashboard.html): a second
// one of the same name overwrites the first.
var globalTypes = []string{"aws:iam/role:Role", "aws:iam/policy:Policy", "aws:iam/instanceProfile:InstanceProfile", "aws:iam/user:User", "aws:iam/group:Group",
	"aws:cloudwatch/dashboard:Dashboard"}

// globalNames are the global names stacks declare, by "<account> <type> <name>", with what declared each: the
// resources of globalTypes, and the roles a StackSet's template creates in every account of its units.
func globalNames(t *testing.T, units []string, stacks map[string]result) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for stack, r := range stacks {
		for _, x := range r.resources {
			if slices.Contains(globalTypes, x.Type) {
				// Compared as IAM compares names: without regard to case (a dashboard's, as it is).
				name := nameOf(t, x)
				if strings.HasPrefix(x.Type, "aws:iam/") {
					name = strings.ToLower(name)
				}
				key := x.Account + " " + x.Type + " " + name
				out[key] = append(out[key], stack+": "+x.Name)
			}
			if x.Type != "aws:cloudformation/stackSet:StackSet" {
				continue
			}
			var tmpl struct {
				Resources map[string]struct {
					Type       string
					Properties map[string]any
				}
			}
			if err := json.Unmarshal([]byte(stacktest.Str(t, x, "templateBody")), &tmpl); err != nil {
				t.Fatal(err)
			}
			for id, res := range tmpl.Resources {
				name, _ := res.Properties["RoleName"].(string)
				if res.Type != "AWS::IAM::Role" {
					continue
				}
				if name == "" {
					t.Errorf("%s: the StackSet's %s has no fixed name", stack, id)
				}
				for _, account := range units { // every account of the units gets it
					key := account + " aws:iam/role:Role " + strings.ToLower(name)
					out[key] = append(out[key], stack+": StackSet "+id)
				}
			}
		}
	}
	return out
}

// TestNoGlobalNameTwice: the stacks platform teams run side by side never declare one global name twice in an
// account: the same stack in two regions of one account (a prod cluster in each region), two hubs of two regions
// sharing a member account through its deploy role, and the same with their StackSets reaching the same accounts.
func TestNoGlobalNameTwice(t *testing.T) {
	const hub2 = "555555555555"
	inRegion := func(region string, kv map[string]string) map[string]string {
		kv["aws:region"] = region
		kv["dashboard"] = "true"
		kv["clusters"] = strings.ReplaceAll(kv["clusters"], `{"name":"hub-a"}`, `{"name":"prod","fis":{"enabled":true}},{"name":"sandbox","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0123456789abcdef0","subnet-0123456789abcdef1"]}}`)
		return kv
	}
	runIn := func(account, region string, kv map[string]string) result {
		t.Helper()
		r, err := runWith(t, &mocks.Mocks{Account: account, Region: region}, render.AnyCommand, "prod", inRegion(region, kv))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	tests := []struct {
		name   string
		units  []string // the accounts of the StackSets' units
		stacks func() map[string]result
	}{
		{"one account, two regions", nil, func() map[string]result {
			return map[string]result{
				"us-east-1": runIn(hubAccount, "us-east-1", hubStack(accountA)),
				"eu-west-1": runIn(hubAccount, "eu-west-1", hubStack(accountA)),
			}
		}},
		{"two hubs sharing a member through its deploy role", nil, func() map[string]result {
			return map[string]result{
				"hub " + hubAccount: runIn(hubAccount, "us-east-1", hubStack(accountA)),
				"hub " + hub2:       runIn(hub2, "eu-west-1", hubStack(accountA)),
			}
		}},
		// IAM takes Kib-prod and kib-prod for one name: two hubs of one region whose prefixes differ only in case, sharing
		// a member (each with its own clusters there), by its deploy role and by their StackSets.
		{"two hubs of one region whose namePrefix differs only in case", nil, func() map[string]result {
			return map[string]result{
				"hub Kib-prod": runIn(hubAccount, "us-east-1", withPrefix(hubStack(accountA), "Kib-prod")),
				"hub kib-prod": runIn(hub2, "us-east-1", otherClusters(withPrefix(hubStack(accountA), "kib-prod"))),
			}
		}},
		{"two hubs of one region whose namePrefix differs only in case, by StackSets", []string{accountA, accountB}, func() map[string]result {
			return map[string]result{
				"hub Kib-prod": runIn(hubAccount, "us-east-1", withOrganization(withPrefix(hubStack(accountA), "Kib-prod"), testOU)),
				"hub kib-prod": runIn(hub2, "us-east-1", otherClusters(withOrganization(withPrefix(hubStack(accountA), "kib-prod"), testOU))),
			}
		}},
		{"two stacks of one account and region whose namePrefix differs only in case", nil, func() map[string]result {
			return map[string]result{
				"stack KIB": runIn(hubAccount, "us-east-1", withPrefix(clusters(`{"name":"one"}`), "KIB")),
				"stack kib": runIn(hubAccount, "us-east-1", withPrefix(clusters(`{"name":"two"}`), "kib")),
			}
		}},
		{"two hubs whose StackSets reach the same accounts", []string{accountA, accountB}, func() map[string]result {
			return map[string]result{
				"hub " + hubAccount: runIn(hubAccount, "us-east-1", withOrganization(hubStack(accountA), testOU)),
				"hub " + hub2:       runIn(hub2, "eu-west-1", withOrganization(hubStack(accountA), testOU)),
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			names := globalNames(t, tt.units, tt.stacks())
			if len(names) < 10 {
				t.Fatalf("only %d global names declared", len(names))
			}
			for key, by := range names {
				if len(by) > 1 {
					t.Errorf("%s declared %d times: %v", key, len(by), by)
				}
				if name := key[strings.LastIndex(key, " ")+1:]; strings.Contains(key, " aws:iam/") && len(name) > 64 {
					t.Errorf("%s: %d characters, over IAM's 64", key, len(name))
				}
			}
		})
	}
}

// withPrefix sets the stack's namePrefix.
func withPrefix(cfg map[string]string, namePrefix string) map[string]string {
	cfg["namePrefix"] = namePrefix
	return cfg
}

// otherClusters renames the clusters of a hubStack, so a second hub has its own clusters in a shared member.
func otherClusters(cfg map[string]string) map[string]string {
	cfg["clusters"] = strings.NewReplacer(`"name":"c-`, `"name":"d-`, `"name":"legacy-a"`, `"name":"legacy-b"`, `"name":"hub-a"`, `"name":"hub-b"`).Replace(cfg["clusters"])
	return cfg
}

// TestLongNamesStayDistinct: names at IAM's limit are shortened (iamname) and still differ by region and cluster.
func TestLongNamesStayDistinct(t *testing.T) {
	long := strings.Repeat("c", 90)
	seen := map[string]string{}
	for _, region := range []string{"us-east-1", "us-east-2", "ap-southeast-2"} {
		for _, cl := range []string{long + "1", long + "2"} {
			kv := clusters(fmt.Sprintf(`{"name":%q}`, cl))
			kv["aws:region"] = region
			r, err := runWith(t, &mocks.Mocks{Region: region, Existing: []string{cl}}, render.AnyCommand, "prod", kv)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range r.resources.OfType("aws:iam/role:Role") {
				if !strings.HasPrefix(x.Name, cl) { // the cluster's roles, not the shared ones each run declares again
					continue
				}
				name := stacktest.Str(t, x, "name")
				if len(name) > 64 {
					t.Errorf("%s: %d characters", name, len(name))
				}
				if prev, ok := seen[name]; ok && prev != region+"/"+cl+"/"+x.Name {
					t.Errorf("%s named for both %s and %s/%s/%s", name, prev, region, cl, x.Name)
				}
				seen[name] = region + "/" + cl + "/" + x.Name
			}
		}
	}
}

// nameOf is x's name: a dashboard's dashboardName, any other's name.
func nameOf(t *testing.T, x mocks.Resource) string {
	t.Helper()
	if x.Type == "aws:cloudwatch/dashboard:Dashboard" {
		return stacktest.Str(t, x, "dashboardName")
	}
	return stacktest.Str(t, x, "name")
}
