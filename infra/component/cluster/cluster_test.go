package infra_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/render"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

const (
	clusterType = "karpenter-interruption-bus:index:ClusterInterruption"
	oidcARN     = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"
)

func clusters(entries ...string) map[string]string {
	return map[string]string{"clusters": "[" + strings.Join(entries, ",") + "]"}
}

func countTypes(resources []mocks.Resource) map[string]int {
	out := map[string]int{}
	for _, x := range resources {
		out[x.Type]++
	}
	return out
}

func (r result) in(cluster, typ string) []mocks.Resource {
	return r.where(func(x mocks.Resource) bool { return x.Parent == cluster && x.Type == typ })
}

func (r result) one(t *testing.T, cluster, typ string) mocks.Resource {
	t.Helper()
	xs := r.in(cluster, typ)
	if len(xs) != 1 {
		t.Fatalf("cluster %s has %d %s, want 1", cluster, len(xs), typ)
	}
	return xs[0]
}

func TestClusterInventoryPerMode(t *testing.T) {
	tests := []struct {
		name, entry string
		want        map[string]int
	}{
		{"install with pod identity", `{"name":"a"}`, map[string]int{
			"aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1, "aws:iam/role:Role": 2,
			"aws:iam/rolePolicyAttachment:RolePolicyAttachment": 4, "aws:iam/rolePolicy:RolePolicy": 1,
			"aws:eks/accessEntry:AccessEntry": 1, "aws:eks/podIdentityAssociation:PodIdentityAssociation": 1,
			"pulumi:providers:kubernetes": 1, "kubernetes:helm.sh/v3:Release": 1,
		}},
		{"install with IRSA", `{"name":"a","identity":"irsa","oidcProviderArn":"` + oidcARN + `"}`, map[string]int{
			"aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1, "aws:iam/role:Role": 2,
			"aws:iam/rolePolicyAttachment:RolePolicyAttachment": 4, "aws:iam/rolePolicy:RolePolicy": 1,
			"aws:eks/accessEntry:AccessEntry": 1, "pulumi:providers:kubernetes": 1, "kubernetes:helm.sh/v3:Release": 1,
		}},
		{"existing role", `{"name":"a","mode":"existing-role","controllerRoleName":"karpenter-a"}`, map[string]int{
			"aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1, "aws:iam/rolePolicy:RolePolicy": 1,
		}},
		{"create with FIS", `{"name":"a","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]},"fis":{"enabled":true}}`, map[string]int{
			"aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1, "eks:index:Cluster": 1, "eks:index:ManagedNodeGroup": 1,
			"aws:ec2/tag:Tag": 3, "aws:iam/role:Role": 4, "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 7,
			"aws:iam/rolePolicy:RolePolicy": 2, "aws:eks/addon:Addon": 1, "aws:eks/accessEntry:AccessEntry": 1,
			"aws:eks/podIdentityAssociation:PodIdentityAssociation": 1, "pulumi:providers:kubernetes": 1,
			"kubernetes:helm.sh/v3:Release": 1, "aws:fis/experimentTemplate:ExperimentTemplate": 1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRun(t, "dev", clusters(tt.entry))
			got := countTypes(r.under("a"))
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("resources of cluster a:\n got %v\nwant %v", got, tt.want)
			}
			if comps := r.ofType(clusterType); len(comps) != 1 || comps[0].Name != "a" || comps[0].Parent != "" {
				t.Errorf("components = %+v, want one named a under the stack", comps)
			}
		})
	}
}

func TestClusterQueue(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"payments"}`))
	q := r.one(t, "payments", "aws:sqs/queue:Queue")
	if str(t, q, "name") != queuename.For("kib-dev-", "payments") || num(t, q, "messageRetentionSeconds") != 300 ||
		!q.Inputs["sqsManagedSseEnabled"].BoolValue() {
		t.Errorf("queue = %v", q.Inputs)
	}
	d := doc(t, r.one(t, "payments", "aws:sqs/queuePolicy:QueuePolicy"), "policy")
	send := statement(t, d, "RouterForwards")
	if fmt.Sprint(send.Principal) != "map[AWS:arn:aws:iam::123456789012:role/kib-dev-router]" ||
		!slices.Equal(send.Action, []string{"sqs:SendMessage"}) || !slices.Equal(send.Resource, []string{arnPrefix + "kib-dev-payments"}) {
		t.Errorf("send statement = %+v, want only the router role to send to this queue", send)
	}
	if deny := statement(t, d, "DenyInsecureTransport"); deny.Effect != "Deny" {
		t.Errorf("deny = %+v", deny)
	}
	queues, _ := r.outputs["clusterQueueNames"].(map[string]string)
	if queues["payments"] != "kib-dev-payments" {
		t.Errorf("clusterQueueNames = %v", r.outputs["clusterQueueNames"])
	}
}

// TestLongClusterNames: a 100-character cluster name works, and the queue the component creates is the queue the
// router derives (both call queuename.For).
func TestLongClusterNames(t *testing.T) {
	name := strings.Repeat("c", 99) + "x"
	r := mustRun(t, "dev", clusters(`{"name":"`+name+`"}`))
	created := str(t, r.one(t, name, "aws:sqs/queue:Queue"), "name")
	derived := queuename.For("kib-dev-", name) // what the router computes from the instance's tag
	if created != derived || len(created) > queuename.MaxLen {
		t.Fatalf("component queue %q, router queue %q: want the same name of at most 80 characters", created, derived)
	}
	for _, role := range r.in(name, "aws:iam/role:Role") {
		if n := str(t, role, "name"); len(n) > 64 {
			t.Errorf("role name %q is %d characters, IAM allows 64", n, len(n))
		}
	}
	pol := str(t, r.one(t, name, "aws:iam/rolePolicy:RolePolicy"), "policy")
	if len(pol) > 10240 {
		t.Errorf("controller policy is %d characters, over IAM's 10240 for inline role policies", len(pol))
	}
}

func TestControllerPolicy(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"a"}`))
	d := doc(t, r.one(t, "a", "aws:iam/rolePolicy:RolePolicy"), "policy")
	q := statement(t, d, "AllowInterruptionQueueActions")
	if !slices.Equal(sorted(q.Action), []string{"sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}) ||
		!slices.Equal(q.Resource, []string{arnPrefix + "kib-dev-a"}) {
		t.Errorf("interruption statement = %+v, want receive, delete, get-url on this cluster's queue only", q)
	}
	starOK := map[string]bool{"AllowRegionalReadActions": true, "AllowPricingReadActions": true}
	for _, s := range d.Statement {
		if s.Effect != "Allow" {
			t.Errorf("%s: effect %s", s.Sid, s.Effect)
		}
		for _, a := range s.Action {
			if strings.Contains(a, "*") {
				t.Errorf("%s grants wildcard action %s", s.Sid, a)
			}
		}
		if slices.Contains(s.Resource, "*") {
			if !starOK[s.Sid] {
				t.Errorf("%s grants %v on *", s.Sid, s.Action)
			}
			for _, a := range s.Action {
				if !strings.HasPrefix(a, "ec2:Describe") && a != "pricing:GetProducts" {
					t.Errorf("%s: %s on * is not a describe-only action", s.Sid, a)
				}
			}
		}
	}
	del := statement(t, d, "AllowScopedDeletion")
	if del.Condition["StringEquals"]["aws:ResourceTag/kubernetes.io/cluster/a"] != "owned" {
		t.Errorf("deletion is not scoped to cluster a's instances: %+v", del.Condition)
	}
	pass := statement(t, d, "AllowPassingInstanceRole")
	if !slices.Equal(pass.Resource, []string{"arn:aws:iam::123456789012:role/KarpenterNode-a"}) {
		t.Errorf("PassRole on %v, want only the node role", pass.Resource)
	}
}

func TestIdentities(t *testing.T) {
	t.Run("pod identity", func(t *testing.T) {
		r := mustRun(t, "dev", clusters(`{"name":"a","karpenter":{"namespace":"karpenter","serviceAccount":"kctl"}}`))
		var controller mocks.Resource
		for _, role := range r.in("a", "aws:iam/role:Role") {
			if strings.HasPrefix(str(t, role, "name"), "KarpenterController-") {
				controller = role
			}
		}
		trust := doc(t, controller, "assumeRolePolicy").Statement[0]
		if fmt.Sprint(trust.Principal) != "map[Service:pods.eks.amazonaws.com]" ||
			!slices.Equal(sorted(trust.Action), []string{"sts:AssumeRole", "sts:TagSession"}) {
			t.Errorf("trust = %+v", trust)
		}
		assoc := r.one(t, "a", "aws:eks/podIdentityAssociation:PodIdentityAssociation")
		if str(t, assoc, "clusterName") != "a" || str(t, assoc, "namespace") != "karpenter" || str(t, assoc, "serviceAccount") != "kctl" ||
			str(t, assoc, "roleArn") != "arn:aws:iam::123456789012:role/KarpenterController-a" {
			t.Errorf("association = %v", assoc.Inputs)
		}
		if sa := values(t, r, "a")["serviceAccount"].(map[string]any); sa["annotations"] != nil || sa["name"] != "kctl" {
			t.Errorf("service account values = %v, want the name and no IRSA annotation", sa)
		}
	})
	t.Run("IRSA", func(t *testing.T) {
		r := mustRun(t, "dev", clusters(`{"name":"a","identity":"irsa","oidcProviderArn":"`+oidcARN+`"}`))
		var trust map[string]any
		for _, role := range r.in("a", "aws:iam/role:Role") {
			if strings.HasPrefix(str(t, role, "name"), "KarpenterController-") {
				_ = json.Unmarshal([]byte(str(t, role, "assumeRolePolicy")), &trust)
			}
		}
		st := trust["Statement"].([]any)[0].(map[string]any)
		issuer := "oidc.eks.us-east-1.amazonaws.com/id/A" // the mocked cluster's issuer, for cluster "a"
		cond := st["Condition"].(map[string]any)["StringEquals"].(map[string]any)
		if fmt.Sprint(st["Principal"]) != "map[Federated:"+oidcARN+"]" || fmt.Sprint(st["Action"]) != "[sts:AssumeRoleWithWebIdentity]" ||
			cond[issuer+":sub"] != "system:serviceaccount:kube-system:karpenter" || cond[issuer+":aud"] != "sts.amazonaws.com" {
			t.Errorf("IRSA trust = %v", st)
		}
		ann := values(t, r, "a")["serviceAccount"].(map[string]any)["annotations"].(map[string]any)
		if ann["eks.amazonaws.com/role-arn"] != "arn:aws:iam::123456789012:role/KarpenterController-a" {
			t.Errorf("service account annotations = %v", ann)
		}
	})
}

// values returns the Helm release values of cluster as plain JSON.
func values(t *testing.T, r result, cluster string) map[string]any {
	t.Helper()
	rel := r.one(t, cluster, "kubernetes:helm.sh/v3:Release")
	v, _ := render.Plain(resource.PropertyMap{"values": rel.Inputs["values"]})["values"].(map[string]any)
	return v
}

func TestHelmRelease(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"a","karpenter":{"values":{"replicas":1,"settings":{"batchMaxDuration":"15s"}}}}`))
	rel := r.one(t, "a", "kubernetes:helm.sh/v3:Release")
	if str(t, rel, "chart") != "oci://public.ecr.aws/karpenter/karpenter" || str(t, rel, "version") != "1.6.3" ||
		str(t, rel, "namespace") != "kube-system" || !rel.RetainOnDelete {
		t.Errorf("release = %v (retain %t)", rel.Inputs, rel.RetainOnDelete)
	}
	v := values(t, r, "a")
	settings := v["settings"].(map[string]any)
	if settings["clusterName"] != "a" || settings["interruptionQueue"] != "kib-dev-a" || settings["batchMaxDuration"] != "15s" || v["replicas"] != 1.0 {
		t.Errorf("values = %v, want the bus's settings merged over the configured ones", v)
	}
	prov := r.one(t, "a", "pulumi:providers:kubernetes")
	var kc map[string]any
	if err := json.Unmarshal([]byte(str(t, prov, "kubeconfig")), &kc); err != nil {
		t.Fatal(err)
	}
	user := kc["users"].([]any)[0].(map[string]any)["user"].(map[string]any)["exec"].(map[string]any)
	server := kc["clusters"].([]any)[0].(map[string]any)["cluster"].(map[string]any)["server"]
	if user["command"] != "aws" || fmt.Sprint(user["args"]) != "[eks get-token --cluster-name a --region us-east-1 --output json]" ||
		server != "https://A.gr7.us-east-1.eks.amazonaws.com" {
		t.Errorf("kubeconfig = %v", kc)
	}
}

func TestExistingRole(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"a","mode":"existing-role","controllerRoleName":"karpenter-a"}`))
	p := r.one(t, "a", "aws:iam/rolePolicy:RolePolicy")
	d := doc(t, p, "policy")
	if str(t, p, "role") != "karpenter-a" || len(d.Statement) != 1 || d.Statement[0].Sid != "AllowInterruptionQueueActions" {
		t.Errorf("policy on %s = %+v", str(t, p, "role"), d)
	}
	c := r.outputs["clusters"].(map[string]any)["a"].(map[string]any)
	if c["chartValue"] != "settings.interruptionQueue=kib-dev-a" || c["controllerRoleArn"] != "arn:aws:iam::123456789012:role/karpenter-a" {
		t.Errorf("cluster outputs = %v", c)
	}
}

func TestCreateMode(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"new","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"],"kubernetesVersion":"1.33"}}`))
	eks := r.one(t, "new", "eks:index:Cluster")
	if str(t, eks, "name") != "new" || str(t, eks, "vpcId") != "vpc-0123456789abcdef0" || str(t, eks, "authenticationMode") != "API" ||
		!eks.Inputs["createOidcProvider"].BoolValue() || !eks.Inputs["skipDefaultNodeGroup"].BoolValue() || str(t, eks, "version") != "1.33" {
		t.Errorf("EKS cluster = %v", eks.Inputs)
	}
	ng := r.one(t, "new", "eks:index:ManagedNodeGroup")
	if !ng.Inputs["cluster"].IsResourceReference() || str(t, ng, "amiType") != "AL2023_ARM_64_STANDARD" {
		t.Errorf("node group = %v", ng.Inputs)
	}
	tagged := map[string]bool{}
	for _, tag := range r.in("new", "aws:ec2/tag:Tag") {
		if str(t, tag, "key") == "karpenter.sh/discovery" && str(t, tag, "value") == "new" {
			tagged[str(t, tag, "resourceId")] = true
		}
	}
	for _, id := range []string{"subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa2", "sg-0mock-new"} {
		if !tagged[id] {
			t.Errorf("%s is not tagged for Karpenter discovery (tagged: %v)", id, tagged)
		}
	}
	if str(t, r.one(t, "new", "aws:eks/addon:Addon"), "addonName") != "eks-pod-identity-agent" {
		t.Error("no pod identity agent on the new cluster")
	}
}

func TestFIS(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"a","fis":{"enabled":true}}`))
	tpl := render.Plain(r.one(t, "a", "aws:fis/experimentTemplate:ExperimentTemplate").Inputs)
	action := tpl["actions"].([]any)[0].(map[string]any)
	target := tpl["targets"].([]any)[0].(map[string]any)
	if action["actionId"] != "aws:ec2:send-spot-instance-interruptions" || target["resourceType"] != "aws:ec2:spot-instance" ||
		fmt.Sprint(target["resourceTags"]) != "[map[key:eks:eks-cluster-name value:a]]" {
		t.Errorf("experiment = %v", tpl)
	}
	var fisPolicy mocks.Resource
	for _, p := range r.in("a", "aws:iam/rolePolicy:RolePolicy") {
		if str(t, p, "name") == "spot-interruption" {
			fisPolicy = p
		}
	}
	s := statement(t, doc(t, fisPolicy, "policy"), "InterruptClusterSpotInstances")
	if s.Condition["StringEquals"]["aws:ResourceTag/eks:eks-cluster-name"] != "a" {
		t.Errorf("FIS may interrupt instances of any cluster: %+v", s)
	}
}

// TestRemovingAClusterKeepsKarpenter: what a running Karpenter needs is retained when the cluster leaves the
// stack; its queue is not.
func TestRemovingAClusterKeepsKarpenter(t *testing.T) {
	r := mustRun(t, "dev", clusters(`{"name":"a"}`))
	retained := map[string]bool{
		"kubernetes:helm.sh/v3:Release": true, "aws:iam/role:Role": true, "aws:iam/rolePolicy:RolePolicy": true,
		"aws:iam/rolePolicyAttachment:RolePolicyAttachment": true, "aws:eks/accessEntry:AccessEntry": true,
		"aws:eks/podIdentityAssociation:PodIdentityAssociation": true,
	}
	for _, x := range r.under("a") {
		if want := retained[x.Type]; x.RetainOnDelete != want {
			t.Errorf("%s %s: retain on delete %t, want %t", x.Type, x.Name, x.RetainOnDelete, want)
		}
	}
}

// identity of a resource for comparisons across runs: its type, name and parent (what its URN is made of).
func identity(x mocks.Resource) string { return x.Type + "::" + x.Parent + "::" + x.Name }

func inputsJSON(x mocks.Resource) string {
	b, _ := json.Marshal(render.Plain(x.Inputs))
	return string(b)
}

// TestAddingAClusterChangesNoSharedResource: the second cluster adds only its own resources; every shared
// resource keeps its inputs, and the first cluster's too.
func TestAddingAClusterChangesNoSharedResource(t *testing.T) {
	one := mustRun(t, "dev", clusters(`{"name":"a"}`))
	two := mustRun(t, "dev", clusters(`{"name":"a"}`, `{"name":"b","identity":"irsa","oidcProviderArn":"`+oidcARN+`"}`))
	before := map[string]string{}
	for _, x := range one.resources {
		before[identity(x)] = inputsJSON(x)
	}
	for _, x := range two.resources {
		id := identity(x)
		was, existed := before[id]
		switch {
		case !existed && x.Parent != "b" && (x.Type != clusterType || x.Name != "b"):
			t.Errorf("adding b added %s outside b's component", id)
		case existed && was != inputsJSON(x):
			t.Errorf("adding b changed the inputs of %s", id)
		}
	}
}

func TestReorderingClustersChangesNoURN(t *testing.T) {
	entries := []string{`{"name":"a"}`, `{"name":"b","mode":"existing-role","controllerRoleName":"k"}`, `{"name":"c","fis":{"enabled":true}}`}
	set := func(r result) []string {
		var ids []string
		for _, x := range r.resources {
			ids = append(ids, identity(x)+" "+inputsJSON(x))
		}
		slices.Sort(ids)
		return ids
	}
	first := set(mustRun(t, "dev", clusters(entries...)))
	second := set(mustRun(t, "dev", clusters(entries[2], entries[0], entries[1])))
	if !slices.Equal(first, second) {
		t.Fatal("reordering clusters changed the declared resources")
	}
}

// TestSharedResourcesIndependentOfClusterCount: at 1, 10 and 200 clusters the shared resources are the same
// set with the same inputs.
func TestSharedResourcesIndependentOfClusterCount(t *testing.T) {
	shared := func(n int) []string {
		var entries []string
		for i := range n {
			entries = append(entries, fmt.Sprintf(`{"name":"cluster-%03d"}`, i))
		}
		r := mustRun(t, "dev", clusters(entries...))
		if got := len(r.ofType(clusterType)); got != n {
			t.Fatalf("%d cluster components for %d clusters", got, n)
		}
		var ids []string
		for _, x := range r.shared() {
			ids = append(ids, identity(x)+" "+inputsJSON(x))
		}
		slices.Sort(ids)
		return ids
	}
	base := shared(1)
	for _, n := range []int{10, 200} {
		if got := shared(n); !slices.Equal(got, base) {
			t.Errorf("shared resources at %d clusters differ from those at 1", n)
		}
	}
}
