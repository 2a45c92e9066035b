package cluster_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/awsenv"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/cluster"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/policy"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/stacktest"
)

const (
	routerRole = "arn:aws:iam::123456789012:role/kib-test-router"
	oidcARN    = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.us-east-1.amazonaws.com/id/ABC"
	queueARN   = "arn:aws:sqs:us-east-1:123456789012:kib-test-a"
)

// entry is the cluster entry of the stack configuration clusters: [<entryJSON>], defaults applied.
func entry(t *testing.T, entryJSON string) config.Cluster {
	t.Helper()
	cfg, err := config.Load("test", mocks.DefaultAccount, map[string]string{"clusters": "[" + entryJSON + "]"})
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Clusters[0]
}

// declare runs the component alone, under the mocks, for the entry, and returns what it declared.
func declare(t *testing.T, entryJSON string) stacktest.Resources {
	t.Helper()
	return declareIn(t, mocks.DefaultRegion, entryJSON)
}

// declareIn declares the entry in region.
func declareIn(t *testing.T, region, entryJSON string) stacktest.Resources {
	t.Helper()
	cl := entry(t, entryJSON)
	m, err := (&mocks.Mocks{Region: region}).Run("test", "test", func(ctx *pulumi.Context) error {
		env, err := awsenv.Lookup(ctx)
		if err != nil {
			return err
		}
		_, err = cluster.New(ctx, &cluster.Args{
			Cluster: cl, QueueName: "kib-test-" + cl.Name, PolicyName: "kib-test-interruption-queue", Env: env,
			Tags: pulumi.StringMap{"team": pulumi.String("platform")}, RouterRoleARN: pulumi.String(routerRole),
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m.Resources()
}

func TestInventoryPerMode(t *testing.T) {
	tests := []struct {
		name, entry string
		want        map[string]int
	}{
		{"install with pod identity", `{"name":"a"}`, map[string]int{
			"aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1, "aws:iam/role:Role": 2,
			"aws:iam/rolePolicyAttachment:RolePolicyAttachment": 4, "aws:iam/rolePolicy:RolePolicy": 1,
			"aws:eks/accessEntry:AccessEntry": 1, "aws:eks/podIdentityAssociation:PodIdentityAssociation": 1,
			"kubernetes:helm.sh/v3:Release": 1,
		}},
		{"install with IRSA", `{"name":"a","identity":"irsa","oidcProviderArn":"` + oidcARN + `"}`, map[string]int{
			"aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1, "aws:iam/role:Role": 2,
			"aws:iam/rolePolicyAttachment:RolePolicyAttachment": 4, "aws:iam/rolePolicy:RolePolicy": 1,
			"aws:eks/accessEntry:AccessEntry": 1, "kubernetes:helm.sh/v3:Release": 1,
		}},
		{"existing role", `{"name":"a","mode":"existing-role","controllerRoleName":"karpenter-a"}`, map[string]int{
			"aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1, "aws:iam/rolePolicy:RolePolicy": 1,
		}},
		{"create with FIS", `{"name":"a","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]},"fis":{"enabled":true}}`, map[string]int{
			"aws:sqs/queue:Queue": 1, "aws:sqs/queuePolicy:QueuePolicy": 1, "eks:index:Cluster": 1, "eks:index:ManagedNodeGroup": 1,
			"aws:ec2/tag:Tag": 3, "aws:iam/role:Role": 4, "aws:iam/rolePolicyAttachment:RolePolicyAttachment": 7,
			"aws:iam/rolePolicy:RolePolicy": 2, "aws:eks/addon:Addon": 1, "aws:eks/accessEntry:AccessEntry": 1,
			"aws:eks/podIdentityAssociation:PodIdentityAssociation": 1,
			"kubernetes:helm.sh/v3:Release":                         1, "aws:fis/experimentTemplate:ExperimentTemplate": 1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := declare(t, tt.entry)
			if got := rs.Under("a").Count(); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("resources of cluster a:\n got %v\nwant %v", got, tt.want)
			}
			comp := rs.One(t, cluster.Type)
			if comp.Name != "a" || comp.Parent != "" {
				t.Errorf("component = %+v, want one named a", comp)
			}
			// Every resource hangs from the component but the Kubernetes provider, which hangs from the stack: pulumi
			// state move copies providers ahead of what it moves, and refuses one whose parent comes after it.
			for _, x := range rs.Where(func(x mocks.Resource) bool { return x.Custom }) {
				if provider := x.Type == "pulumi:providers:kubernetes"; provider && (x.Parent != "" || x.Name != "a-k8s") || !provider && x.Parent != "a" {
					t.Errorf("%s %s hangs from %q", x.Type, x.Name, x.Parent)
				}
			}
		})
	}
}

func TestQueue(t *testing.T) {
	rs := declare(t, `{"name":"a"}`)
	q := rs.One(t, "aws:sqs/queue:Queue")
	if stacktest.Str(t, q, "name") != "kib-test-a" || stacktest.Num(t, q, "messageRetentionSeconds") != 300 ||
		!q.Inputs["sqsManagedSseEnabled"].BoolValue() {
		t.Errorf("queue = %v", q.Inputs)
	}
	d := stacktest.Doc(t, rs.One(t, "aws:sqs/queuePolicy:QueuePolicy"), "policy")
	send := stacktest.Statement(t, d, "RouterForwards")
	// The router's account as the principal, the router's role as aws:PrincipalArn: settable before the role
	// exists, and still true if it is recreated.
	if fmt.Sprint(send.Principal) != "map[AWS:arn:aws:iam::123456789012:root]" || fmt.Sprint(send.Condition) != "map[ArnEquals:map[aws:PrincipalArn:"+routerRole+"]]" ||
		!slices.Equal(send.Action, []string{"sqs:SendMessage", "sqs:GetQueueUrl"}) ||
		!slices.Equal(send.Resource, []string{queueARN}) {
		t.Errorf("send statement = %+v, want only the router role to send to this queue", send)
	}
	if deny := stacktest.Statement(t, d, "DenyInsecureTransport"); deny.Effect != "Deny" {
		t.Errorf("deny = %+v", deny)
	}
	// Inside the account an identity policy alone would do: only an explicit Deny keeps other roles out.
	only := stacktest.Statement(t, d, "OnlyTheRouterSends")
	if only.Effect != "Deny" || only.Principal != "*" || !slices.Equal(only.Action, []string{"sqs:SendMessage"}) ||
		fmt.Sprint(only.Condition) != "map[ArnNotEquals:map[aws:PrincipalArn:"+routerRole+"]]" {
		t.Errorf("deny = %+v, want every principal but the router's role denied sending", only)
	}
}

func TestControllerPolicy(t *testing.T) {
	rs := declare(t, `{"name":"a"}`)
	d := stacktest.Doc(t, rs.One(t, "aws:iam/rolePolicy:RolePolicy"), "policy")
	q := stacktest.Statement(t, d, "AllowInterruptionQueueActions")
	if !slices.Equal(sorted(q.Action), []string{"sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}) ||
		!slices.Equal(q.Resource, []string{queueARN}) {
		t.Errorf("interruption statement = %+v, want receive, delete, get-url on this cluster's queue only", q)
	}
	// Read-only actions AWS scopes no further (the zonal shift read is limited to the cluster by its condition).
	starOK := map[string]bool{
		"AllowRegionalReadActions": true, "AllowPricingReadActions": true, "AllowUnscopedInstanceProfileListAction": true,
		"AllowZonalShiftStatusReadOnly": true,
	}
	readOnly := map[string]bool{"pricing:GetProducts": true, "iam:ListInstanceProfiles": true, "arc-zonal-shift:GetManagedResource": true}
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
				if !strings.HasPrefix(a, "ec2:Describe") && !readOnly[a] {
					t.Errorf("%s: %s on * is not a describe-only action", s.Sid, a)
				}
			}
		}
	}
	del := stacktest.Statement(t, d, "AllowScopedDeletion")
	if del.Condition["StringEquals"]["aws:ResourceTag/kubernetes.io/cluster/a"] != "owned" {
		t.Errorf("deletion is not scoped to cluster a's instances: %+v", del.Condition)
	}
	pass := stacktest.Statement(t, d, "AllowPassingInstanceRole")
	if !slices.Equal(pass.Resource, []string{"arn:aws:iam::123456789012:role/KarpenterNode-a-us-east-1"}) {
		t.Errorf("PassRole on %v, want only the node role", pass.Resource)
	}
}

// TestControllerPolicyFollowsTheVersion: each version is granted what its source calls, from the version that
// first calls it, and nothing a later version needs.
func TestControllerPolicyFollowsTheVersion(t *testing.T) {
	has := func(d policy.Document, action string) bool {
		for _, s := range d.Statement {
			if slices.Contains(s.Action, action) {
				return true
			}
		}
		return false
	}
	later := []string{"iam:ListInstanceProfiles", "ec2:DescribePlacementGroups", "ec2:DescribeInstanceStatus", "arc-zonal-shift:GetManagedResource", "ec2:RebootInstances"}
	upTo14 := later[:4]
	tests := []struct {
		version string
		want    []string // of later
	}{
		{"1.6.3", nil},
		{"1.7.0", []string{"iam:ListInstanceProfiles"}},
		{"1.10.2", []string{"iam:ListInstanceProfiles"}},
		{"1.11.3", []string{"iam:ListInstanceProfiles", "ec2:DescribePlacementGroups"}},
		{"1.12.0", upTo14},
		{"1.14.1", upTo14},
		{"1.15.0", later},
		{"1.15.1", later},
	}
	for _, tt := range tests {
		d := stacktest.Doc(t, declare(t, `{"name":"a","karpenter":{"version":"`+tt.version+`"}}`).One(t, "aws:iam/rolePolicy:RolePolicy"), "policy")
		for _, a := range later {
			if has(d, a) != slices.Contains(tt.want, a) {
				t.Errorf("Karpenter %s: %s granted %t, want %t", tt.version, a, has(d, a), slices.Contains(tt.want, a))
			}
		}
		if slices.Contains(tt.want, "ec2:RebootInstances") {
			// Rebooting is scoped as terminating is: the cluster's own instances of a node pool.
			reboot, del := stacktest.Statement(t, d, "AllowScopedInstanceReboot"), stacktest.Statement(t, d, "AllowScopedDeletion")
			if !slices.Equal(reboot.Resource, []string{"arn:aws:ec2:us-east-1:*:instance/*"}) || !reflect.DeepEqual(reboot.Condition, del.Condition) {
				t.Errorf("Karpenter %s: reboot on %v under %v, want instances under the deletion's condition %v", tt.version, reboot.Resource, reboot.Condition, del.Condition)
			}
		}
		placement := slices.Contains(stacktest.Statement(t, d, "AllowScopedEC2InstanceAccessActions").Resource, "arn:aws:ec2:us-east-1:*:placement-group/*")
		if want := slices.Contains(tt.want, "ec2:DescribePlacementGroups"); placement != want {
			t.Errorf("Karpenter %s: launching into placement groups %t, want %t", tt.version, placement, want)
		}
	}
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return out
}

func controllerRole(t *testing.T, rs stacktest.Resources) mocks.Resource {
	t.Helper()
	for _, role := range rs.OfType("aws:iam/role:Role") {
		if strings.HasPrefix(stacktest.Str(t, role, "name"), "KarpenterController-") {
			return role
		}
	}
	t.Fatal("no controller role")
	return mocks.Resource{}
}

// values returns the Helm release's values as plain JSON.
func values(t *testing.T, rs stacktest.Resources) map[string]any {
	t.Helper()
	v, _ := stacktest.Plain(rs.One(t, "kubernetes:helm.sh/v3:Release"))["values"].(map[string]any)
	return v
}

func TestIdentities(t *testing.T) {
	t.Run("pod identity", func(t *testing.T) {
		rs := declare(t, `{"name":"a","karpenter":{"namespace":"karpenter","serviceAccount":"kctl"}}`)
		trust := stacktest.Doc(t, controllerRole(t, rs), "assumeRolePolicy").Statement[0]
		if fmt.Sprint(trust.Principal) != "map[Service:pods.eks.amazonaws.com]" ||
			!slices.Equal(sorted(trust.Action), []string{"sts:AssumeRole", "sts:TagSession"}) {
			t.Errorf("trust = %+v", trust)
		}
		// Scoped to this cluster's service account by the session tags EKS Pod Identity sets.
		want := map[string]any{
			"aws:SourceAccount":                         "123456789012",
			"aws:RequestTag/eks-cluster-arn":            "arn:aws:eks:us-east-1:123456789012:cluster/a",
			"aws:RequestTag/kubernetes-namespace":       "karpenter",
			"aws:RequestTag/kubernetes-service-account": "kctl",
		}
		if got := trust.Condition["StringEquals"]; fmt.Sprint(got) != fmt.Sprint(want) || len(trust.Condition) != 1 {
			t.Errorf("trust conditions = %v, want %v", trust.Condition, want)
		}
		assoc := rs.One(t, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
		if stacktest.Str(t, assoc, "clusterName") != "a" || stacktest.Str(t, assoc, "namespace") != "karpenter" ||
			stacktest.Str(t, assoc, "serviceAccount") != "kctl" ||
			stacktest.Str(t, assoc, "roleArn") != "arn:aws:iam::123456789012:role/KarpenterController-a-us-east-1" {
			t.Errorf("association = %v", assoc.Inputs)
		}
		if sa := values(t, rs)["serviceAccount"].(map[string]any); sa["annotations"] != nil || sa["name"] != "kctl" {
			t.Errorf("service account values = %v, want the name and no IRSA annotation", sa)
		}
	})
	t.Run("IRSA", func(t *testing.T) {
		rs := declare(t, `{"name":"a","identity":"irsa","oidcProviderArn":"`+oidcARN+`"}`)
		var trust map[string]any
		_ = json.Unmarshal([]byte(stacktest.Str(t, controllerRole(t, rs), "assumeRolePolicy")), &trust)
		st := trust["Statement"].([]any)[0].(map[string]any)
		issuer := "oidc.eks.us-east-1.amazonaws.com/id/ABC" // the provider's, from its ARN
		cond := st["Condition"].(map[string]any)["StringEquals"].(map[string]any)
		if fmt.Sprint(st["Principal"]) != "map[Federated:"+oidcARN+"]" || fmt.Sprint(st["Action"]) != "[sts:AssumeRoleWithWebIdentity]" ||
			cond[issuer+":sub"] != "system:serviceaccount:kube-system:karpenter" || cond[issuer+":aud"] != "sts.amazonaws.com" || len(cond) != 2 {
			t.Errorf("IRSA trust = %v", st)
		}
		ann := values(t, rs)["serviceAccount"].(map[string]any)["annotations"].(map[string]any)
		if ann["eks.amazonaws.com/role-arn"] != "arn:aws:iam::123456789012:role/KarpenterController-a-us-east-1" {
			t.Errorf("service account annotations = %v", ann)
		}
	})
}

// TestIRSATrustFollowsTheProvider: the condition keys always name the issuer of the principal's provider.
func TestIRSATrustFollowsTheProvider(t *testing.T) {
	for _, arn := range []string{oidcARN, "arn:aws-cn:iam::123456789012:oidc-provider/oidc.eks.cn-north-1.amazonaws.com.cn/id/X1"} {
		d := cluster.IRSATrust(arn, "ns", "sa")
		host := arn[strings.Index(arn, "oidc-provider/")+len("oidc-provider/"):]
		cond := d.Statement[0].Condition["StringEquals"]
		if cond[host+":sub"] != "system:serviceaccount:ns:sa" || cond[host+":aud"] != "sts.amazonaws.com" {
			t.Errorf("trust through %s has conditions %v, want them on %s", arn, cond, host)
		}
	}
}

func TestHelmRelease(t *testing.T) {
	rs := declare(t, `{"name":"a","karpenter":{"values":{"replicas":1,"settings":{"batchMaxDuration":"15s"}}}}`)
	rel := rs.One(t, "kubernetes:helm.sh/v3:Release")
	if stacktest.Str(t, rel, "chart") != cluster.Chart || stacktest.Str(t, rel, "version") != config.DefaultKarpenterVersion ||
		stacktest.Str(t, rel, "namespace") != "kube-system" || !rel.RetainOnDelete || rel.DeleteBeforeReplace {
		t.Errorf("release = %v (retain %t, delete before replace %t)", rel.Inputs, rel.RetainOnDelete, rel.DeleteBeforeReplace)
	}
	v := values(t, rs)
	settings := v["settings"].(map[string]any)
	if settings["clusterName"] != "a" || settings["interruptionQueue"] != "kib-test-a" || settings["batchMaxDuration"] != "15s" || v["replicas"] != 1.0 {
		t.Errorf("values = %v, want the bus's settings merged over the configured ones", v)
	}
	// The provider's kubeconfig is a secret: the checkpoint holds it encrypted (the engine test reads it).
	var kc map[string]any
	if err := json.Unmarshal([]byte(stacktest.Secret(t, rs.One(t, "pulumi:providers:kubernetes"), "kubeconfig")), &kc); err != nil {
		t.Fatal(err)
	}
	user := kc["users"].([]any)[0].(map[string]any)["user"].(map[string]any)["exec"].(map[string]any)
	server := kc["clusters"].([]any)[0].(map[string]any)["cluster"].(map[string]any)["server"]
	if user["command"] != "aws" || fmt.Sprint(user["args"]) != "[eks get-token --cluster-name a --region us-east-1 --output json]" ||
		server != "https://A.gr7.us-east-1.eks.amazonaws.com" {
		t.Errorf("kubeconfig = %v", kc)
	}
}

// TestReleaseNamespaceIsCreated: Karpenter's chart has no Namespace manifest, so a release into any namespace but
// kube-system fails unless Helm creates it.
func TestReleaseNamespaceIsCreated(t *testing.T) {
	rel := declare(t, `{"name":"a","karpenter":{"namespace":"karpenter"}}`).One(t, "kubernetes:helm.sh/v3:Release")
	if stacktest.Str(t, rel, "namespace") != "karpenter" || !rel.Inputs["createNamespace"].IsBool() || !rel.Inputs["createNamespace"].BoolValue() {
		t.Errorf("release = %v, want namespace karpenter created with it", rel.Inputs)
	}
}

// TestReplaceRelease: with karpenter.replaceRelease the new release forgets the old one first (it was uninstalled
// by hand, and is retained on delete).
func TestReplaceRelease(t *testing.T) {
	rel := declare(t, `{"name":"a","karpenter":{"replaceRelease":true}}`).One(t, "kubernetes:helm.sh/v3:Release")
	if !rel.DeleteBeforeReplace || !rel.RetainOnDelete {
		t.Errorf("release: delete before replace %t, retain %t; want both", rel.DeleteBeforeReplace, rel.RetainOnDelete)
	}
}

// TestNodesPullImagesOnly: Karpenter's nodes get AmazonEC2ContainerRegistryPullOnly, as its template gives them,
// not ReadOnly.
func TestNodesPullImagesOnly(t *testing.T) {
	rs := declare(t, `{"name":"a","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"]}}`)
	var pull int
	for _, a := range rs.OfType("aws:iam/rolePolicyAttachment:RolePolicyAttachment") {
		switch arn := stacktest.Str(t, a, "policyArn"); arn {
		case "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly":
			pull++
		case "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly":
			t.Errorf("%s attaches %s", a.Name, arn)
		}
	}
	if pull != 2 { // Karpenter's nodes and the system nodes
		t.Errorf("%d roles may pull images, want 2", pull)
	}
}

// TestChinaServicePrincipals: in a China region EC2's principal is ec2.amazonaws.com.cn, for the node role's
// trust and for the controller's iam:PassedToService alike; every ARN is in the aws-cn partition.
func TestChinaServicePrincipals(t *testing.T) {
	rs := declareIn(t, "cn-north-1", `{"name":"a"}`)
	var node mocks.Resource
	for _, role := range rs.OfType("aws:iam/role:Role") {
		if strings.HasPrefix(stacktest.Str(t, role, "name"), "KarpenterNode-") {
			node = role
		}
	}
	if p := fmt.Sprint(stacktest.Doc(t, node, "assumeRolePolicy").Statement[0].Principal); p != "map[Service:ec2.amazonaws.com.cn]" {
		t.Errorf("node role trusts %s, want ec2.amazonaws.com.cn", p)
	}
	d := stacktest.Doc(t, rs.One(t, "aws:iam/rolePolicy:RolePolicy"), "policy")
	if got := fmt.Sprint(stacktest.Statement(t, d, "AllowPassingInstanceRole").Condition); got != "map[StringEquals:map[iam:PassedToService:[ec2.amazonaws.com.cn]]]" {
		t.Errorf("PassRole condition = %s, want ec2.amazonaws.com.cn", got)
	}
	for _, x := range rs {
		for _, v := range stacktest.Plain(x) {
			// (the router role is the test's own, given to the component)
			// (and its account, the principal admitting it)
			if s, ok := v.(string); ok && strings.Contains(strings.NewReplacer(routerRole, "", "arn:aws:iam::123456789012:root", "").Replace(s), "arn:aws:") {
				t.Errorf("%s %s names a resource of the aws partition: %s", x.Type, x.Name, s)
			}
		}
	}
}

func TestExistingRole(t *testing.T) {
	rs := declare(t, `{"name":"a","mode":"existing-role","controllerRoleName":"karpenter-a"}`)
	p := rs.One(t, "aws:iam/rolePolicy:RolePolicy")
	d := stacktest.Doc(t, p, "policy")
	if stacktest.Str(t, p, "role") != "karpenter-a" || stacktest.Str(t, p, "name") != "kib-test-interruption-queue" ||
		len(d.Statement) != 1 || d.Statement[0].Sid != "AllowInterruptionQueueActions" {
		t.Errorf("policy on %s = %+v", stacktest.Str(t, p, "role"), d)
	}
}

func TestCreateMode(t *testing.T) {
	rs := declare(t, `{"name":"a","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"],"kubernetesVersion":"1.33"}}`)
	eks := rs.One(t, "eks:index:Cluster")
	if stacktest.Str(t, eks, "name") != "a" || stacktest.Str(t, eks, "vpcId") != "vpc-0123456789abcdef0" || stacktest.Str(t, eks, "authenticationMode") != "API" ||
		!eks.Inputs["createOidcProvider"].BoolValue() || !eks.Inputs["skipDefaultNodeGroup"].BoolValue() || stacktest.Str(t, eks, "version") != "1.33" {
		t.Errorf("EKS cluster = %v", eks.Inputs)
	}
	ng := rs.One(t, "eks:index:ManagedNodeGroup")
	if !ng.Inputs["cluster"].IsResourceReference() || stacktest.Str(t, ng, "amiType") != "AL2023_ARM_64_STANDARD" {
		t.Errorf("node group = %v", ng.Inputs)
	}
	var tagged []string
	for _, tag := range rs.OfType("aws:ec2/tag:Tag") {
		if stacktest.Str(t, tag, "key") == cluster.DiscoveryTag && stacktest.Str(t, tag, "value") == "a" {
			tagged = append(tagged, tag.Name)
		}
	}
	// The cluster's own security group comes from the new cluster's outputs, unknown until it exists.
	want := []string{"a-discovery-cluster-sg", "a-discovery-subnet-0aaaaaaaaaaaaaaa1", "a-discovery-subnet-0aaaaaaaaaaaaaaa2"}
	if slices.Sort(tagged); !slices.Equal(tagged, want) {
		t.Errorf("discovery tags %v, want %v", tagged, want)
	}
	if stacktest.Str(t, rs.One(t, "aws:eks/addon:Addon"), "addonName") != "eks-pod-identity-agent" {
		t.Error("no pod identity agent on the new cluster")
	}
	// Nothing is looked up: the installation takes what it needs from the new cluster's outputs.
	if _, ok := rs.One(t, "pulumi:providers:kubernetes").Inputs["kubeconfig"]; ok {
		t.Error("the new cluster's kubeconfig is known before the cluster exists: it was looked up, not taken from its outputs")
	}
}

func TestFIS(t *testing.T) {
	rs := declare(t, `{"name":"a","fis":{"enabled":true}}`)
	tpl := stacktest.Plain(rs.One(t, "aws:fis/experimentTemplate:ExperimentTemplate"))
	action := tpl["actions"].([]any)[0].(map[string]any)
	target := tpl["targets"].([]any)[0].(map[string]any)
	if action["actionId"] != "aws:ec2:send-spot-instance-interruptions" || target["resourceType"] != "aws:ec2:spot-instance" ||
		fmt.Sprint(target["resourceTags"]) != "[map[key:eks:eks-cluster-name value:a]]" {
		t.Errorf("experiment = %v", tpl)
	}
	var fisPolicy mocks.Resource
	for _, p := range rs.OfType("aws:iam/rolePolicy:RolePolicy") {
		if stacktest.Str(t, p, "name") == "spot-interruption" {
			fisPolicy = p
		}
	}
	s := stacktest.Statement(t, stacktest.Doc(t, fisPolicy, "policy"), "InterruptClusterSpotInstances")
	if s.Condition["StringEquals"]["aws:ResourceTag/eks:eks-cluster-name"] != "a" {
		t.Errorf("FIS may interrupt instances of any cluster: %+v", s)
	}
}

// TestRemovingAClusterKeepsKarpenter: what a running Karpenter needs is retained when the cluster leaves the
// stack; its queue is not.
func TestRemovingAClusterKeepsKarpenter(t *testing.T) {
	retained := map[string]bool{
		"kubernetes:helm.sh/v3:Release": true, "aws:iam/role:Role": true, "aws:iam/rolePolicy:RolePolicy": true,
		"aws:iam/rolePolicyAttachment:RolePolicyAttachment": true, "aws:eks/accessEntry:AccessEntry": true,
		"aws:eks/podIdentityAssociation:PodIdentityAssociation": true,
	}
	for _, x := range declare(t, `{"name":"a"}`).Under("a") {
		if want := retained[x.Type]; x.RetainOnDelete != want {
			t.Errorf("%s %s: retain on delete %t, want %t", x.Type, x.Name, x.RetainOnDelete, want)
		}
	}
}
