package iam

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The stacks the matrix judges: every mode and identity in one stack, a single-cluster stack elsewhere, and a
// second stack in the first one's account and region.
const (
	account      = "111122223333"
	otherAccount = "444455556666"
	providerARN  = "arn:aws:iam::" + account + ":oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/ABC123"
	issuer       = "oidc.eks.eu-west-1.amazonaws.com/id/ABC123"
	member1      = "555555555555"
	member2      = "666666666666"
	member3      = "777777777777"
	orgID        = "o-a1b2c3d4e5"
	// The principals the stacks name in redrive.principals: an on-call role of the hub's account, and a person of a
	// security account.
	oncall   = "arn:aws:iam::" + account + ":role/platform-oncall"
	security = "arn:aws:iam::888888888888:user/security-lead"
)

// redrive is the redrive key every stack but policyStack sets.
const redrive = `  karpenter-interruption-bus:redrive: {principals: ["` + oncall + `", "` + security + `"]}
`

var (
	devStack = `config:
  aws:region: eu-west-1
  karpenter-interruption-bus:clusters:
    - name: pods
    - name: irsa
      identity: irsa
      oidcProviderArn: ` + providerARN + `
      karpenter: {namespace: karpenter, serviceAccount: karpenter-controller}
      fis: {enabled: true}
    - name: legacy
      mode: existing-role
      controllerRoleName: KarpenterControllerRole-legacy
    - name: fresh
      mode: create
      create: {vpcId: vpc-0123456789abcdef0, subnetIds: [subnet-0aaaaaaaaaaaaaaa1, subnet-0aaaaaaaaaaaaaaa2]}
` + redrive
	prodStack = `config:
  aws:region: eu-west-1
  karpenter-interruption-bus:clusters:
    - name: payments
` + redrive
	// policyStack's rules deliver through the central queue's policy, and it names no one for the redrive role.
	policyStack = `config:
  aws:region: eu-west-1
  karpenter-interruption-bus:clusters:
    - name: orders
  karpenter-interruption-bus:centralQueue: {hubDelivery: queuePolicy}
`
	// orgStack is a hub with a cluster of its own and clusters in three member accounts.
	orgStack = `config:
  aws:region: eu-west-1
  karpenter-interruption-bus:clusters:
    - name: hub-pods
    - name: m1-pods
      account: "` + member1 + `"
    - name: m1-legacy
      account: "` + member1 + `"
      mode: existing-role
      controllerRoleName: KarpenterControllerRole-legacy
    - name: m2-pods
      account: "` + member2 + `"
    - name: m3-pods
      account: "` + member3 + `"
  karpenter-interruption-bus:accounts:
    "` + member1 + `": {deployRoleArn: "arn:aws:iam::` + member1 + `:role/deploy"}
    "` + member2 + `": {deployRoleArn: "arn:aws:iam::` + member2 + `:role/deploy"}
    "` + member3 + `": {deployRoleArn: "arn:aws:iam::` + member3 + `:role/deploy"}
` + redrive
	// orgIDStack admits the same members by their organization; ousStack gives them the member baseline as a
	// StackSet to an organizational unit (their clusters still declared through their providers).
	orgIDStack = orgStack + `  karpenter-interruption-bus:organization: {id: ` + orgID + `}
`
	ousStack = orgStack + `  karpenter-interruption-bus:organization: {id: ` + orgID + `, memberOUs: [ou-ab12-cd34ef56]}
`
	soloStack = `config:
  aws:region: us-east-2
  karpenter-interruption-bus:clusters:
    - name: only
` + redrive
)

// TestIAMMatrix evaluates, with an IAM evaluator this project did not write, who may do what to the bus: the
// docs/security.md states exactly these rows.
func TestIAMMatrix(t *testing.T) {
	dev := load(t, "dev", account, "eu-west-1", render(t, "dev", devStack, account))
	prod := load(t, "prod", account, "eu-west-1", render(t, "prod", prodStack, account))
	solo := load(t, "solo", otherAccount, "us-east-2", render(t, "solo", soloStack, otherAccount))

	var rows []row
	rows = append(rows, busRows(t, dev, prod)...)
	rows = append(rows, busRows(t, prod, dev)...)
	rows = append(rows, busRows(t, solo, dev)...)
	rows = append(rows, routerRows(t, dev, prod)...)
	rows = append(rows, routerRows(t, prod, dev)...)
	rows = append(rows, routerRows(t, solo, prod)...)
	rows = append(rows, controllerRows(t, dev, "pods", "irsa", "fresh")...)
	rows = append(rows, controllerRows(t, prod, "payments")...)
	rows = append(rows, controllerRows(t, solo, "only")...)
	rows = append(rows, existingRoleRows(t, dev, "legacy", "KarpenterControllerRole-legacy")...)
	rows = append(rows, trustRows(t, dev)...)
	rows = append(rows, redriveRows(t, dev)...)
	rows = append(rows, quarantineRows(t, dev)...)
	rows = append(rows, evidenceRows(t, dev)...)
	rows = append(rows, evidenceRows(t, solo)...)
	rows = append(rows, deployRows(t, dev)...)
	rows = append(rows, deployRows(t, solo)...)
	policy := load(t, "policy", account, "eu-west-1", render(t, "policy", policyStack, account))
	rows = append(rows, busRows(t, policy, dev)...)
	rows = append(rows, routerRows(t, policy, dev)...)
	rows = append(rows, quarantineRows(t, policy)...)
	rows = append(rows, hubPolicyRows(t, policy, dev)...)
	rows = append(rows, forwarderRows(t, dev)...)
	rows = append(rows, forwarderRows(t, solo)...)
	rows = append(rows, heartbeatRows(t, dev, prod)...)
	rows = append(rows, heartbeatRows(t, solo, dev)...)
	org := load(t, "org", account, "eu-west-1", render(t, "org", orgStack, account))
	rows = append(rows, busRows(t, org, dev)...)
	rows = append(rows, routerRows(t, org, dev)...)
	rows = append(rows, organizationRows(t, org)...)
	rows = append(rows, deployRows(t, org)...)
	ous := load(t, "ous", account, "eu-west-1", render(t, "ous", ousStack, account))
	ous.inOrganization(orgID)
	for m := range ous.Members {
		addBaseline(t, ous, m)
	}
	rows = append(rows, busRows(t, ous, dev)...)
	rows = append(rows, routerRows(t, ous, dev)...)
	rows = append(rows, organizationRows(t, ous)...)
	rows = append(rows, perimeterRows(t, ous)...)
	evaluate(t, rows)
	t.Logf("%d requests evaluated", len(rows))
}

// send is a SendMessage row to q.
func send(name string, who caller, q *Queue, acc string, want verdict) row {
	return row{name: name, who: who, action: "sqs:SendMessage", resource: q.ARN, resourceAcc: acc, resourcePolicy: q.Policy, want: want}
}

// on is a row of action on q.
func on(name string, who caller, action string, q *Queue, acc string, want verdict) row {
	return row{name: name, who: who, action: action, resource: q.ARN, resourceAcc: acc, resourcePolicy: q.Policy, want: want}
}

// busRows: only the stack's own rules, through EventBridge and over TLS, may put events on its DLQ; its central
// queue takes no service principal at all (the rules deliver as the forwarder role: forwarderRows), nor anything on
// the quarantine; another stack's rule, another account's, and anyone without TLS may not; and no role of the
// account, even one allowed sqs:* on *, may send to any queue of the bus.
func busRows(t *testing.T, s, other *Stack) []row {
	var rows []row
	events := func(rule string) caller {
		return service("events.amazonaws.com", s.Account, map[string]any{
			"aws:SourceArn": rule, "aws:SourceAccount": strings.Split(rule, ":")[4], "aws:SecureTransport": "true",
		})
	}
	for _, q := range []*Queue{s.Central(), s.DLQ(), s.Quarantine()} {
		// The DLQ: EventBridge's dead-letter delivery goes through the queue's policy; the central queue too when the
		// hub's rules deliver that way (a stack with no forwarder of its own).
		through := allowed
		if q == s.Quarantine() || q == s.Central() && s.ForwarderRole != "" {
			through = explicitlyDenied
		}
		for _, rule := range s.RuleARNs {
			rows = append(rows, send(fmt.Sprintf("%s: rule %s through the policy -> %s", s.Name, rule[strings.LastIndex(rule, "/")+1:], q.Name), events(rule), q, s.Account, through))
		}
		rows = append(rows,
			send(s.Name+": another stack's rule -> "+q.Name, events(other.RuleARNs[0]), q, s.Account, explicitlyDenied),
			send(s.Name+": a rule of another account -> "+q.Name, events(strings.Replace(s.RuleARNs[0], s.Account, "999999999999", 1)), q, s.Account, denied),
			send(s.Name+": the stack's rule without TLS -> "+q.Name, events(s.RuleARNs[0]).with("aws:SecureTransport", "false"), q, s.Account, explicitlyDenied),
			send(s.Name+": a role allowed sqs:* on * -> "+q.Name, s.admin("sqs:*"), q, s.Account, explicitlyDenied),
			send(s.Name+": another account's role -> "+q.Name, outsider("999999999999", "sqs:*"), q, s.Account, denied),
		)
	}
	for c := range s.ClusterQueues {
		q := s.ClusterQueue(t, c)
		rows = append(rows,
			send(s.Name+": a role allowed sqs:* on * -> cluster queue "+q.Name, s.admin("sqs:*"), q, s.Account, explicitlyDenied),
			send(s.Name+": another account's role -> cluster queue "+q.Name, outsider("999999999999", "sqs:*"), q, s.Account, denied),
			on(s.Name+": another account's role reads cluster queue "+q.Name, outsider("999999999999", "sqs:*"), "sqs:ReceiveMessage", q, s.Account, denied),
			send(s.Name+": the router without TLS -> "+q.Name, s.session(s.Role(t, s.RouterRole)).with("aws:SecureTransport", "false"), q, s.Account, explicitlyDenied),
		)
	}
	return rows
}

// routerRows: the router may read its central queue and send to (and look up) its stack's cluster queues, and
// describe instances in its region; nothing else: not its own shared queues, not another stack's queues, not
// an unrelated queue, no mutating EC2 action.
func routerRows(t *testing.T, s, other *Stack) []row {
	router := s.session(s.Role(t, s.RouterRole))
	var rows []row
	for c := range s.ClusterQueues {
		q := s.ClusterQueue(t, c)
		rows = append(rows,
			send(s.Name+": router -> cluster queue "+q.Name, router, q, s.Account, allowed),
			on(s.Name+": router looks up cluster queue "+q.Name, router, "sqs:GetQueueUrl", q, s.Account, allowed),
			on(s.Name+": router reads cluster queue "+q.Name, router, "sqs:ReceiveMessage", q, s.Account, denied),
		)
	}
	for _, action := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"} {
		rows = append(rows, on(s.Name+": router "+action+" central", router, action, s.Central(), s.Account, allowed))
	}
	unrelated := &Queue{Name: "orders", ARN: s.ARN("sqs", "orders")}
	rows = append(rows,
		send(s.Name+": router -> its own central queue", router, s.Central(), s.Account, explicitlyDenied),
		send(s.Name+": router -> its own DLQ", router, s.DLQ(), s.Account, explicitlyDenied),
		send(s.Name+": router -> an unrelated queue", router, unrelated, s.Account, denied),
		// It takes the DLQ into the quarantine when the redrive role asks: receives and deletes there, never sends.
		on(s.Name+": router receives from the DLQ", router, "sqs:ReceiveMessage", s.DLQ(), s.Account, allowed),
		on(s.Name+": router deletes from the DLQ", router, "sqs:DeleteMessage", s.DLQ(), s.Account, allowed),
		on(s.Name+": router purges the DLQ", router, "sqs:PurgeQueue", s.DLQ(), s.Account, denied),
		row{name: s.Name + ": router describes instances in its region", who: router, action: "ec2:DescribeInstances", resource: "*", want: allowed},
		row{name: s.Name + ": router describes instances elsewhere", who: router.with("aws:RequestedRegion", "ap-south-1"), action: "ec2:DescribeInstances", resource: "*", want: denied},
		// The sender check learns the IDs of its account's forwarder and redrive role (docs/security.md, "Who sent each
		// message"): those roles only.
		// A role the stack does not declare (no redrive.principals; the hub's rules through the queue's policy) the
		// router may not read either.
		getRole(s.Name+": router reads its redrive role", router, s.roleARN("kib-"+s.Name+"-redrive-"+s.Region), s.Account, map[bool]verdict{true: allowed, false: denied}[s.RedriveRole != ""]),
		getRole(s.Name+": router reads its forwarder role", router, s.roleARN("kib-"+s.Name+"-forward-"+s.Region), s.Account, map[bool]verdict{true: allowed, false: denied}[s.ForwarderRole != ""]),
		// What it refuses it keeps in the quarantine, and reads nothing there.
		send(s.Name+": router -> its quarantine", router, s.Quarantine(), s.Account, allowed),
		on(s.Name+": router reads its quarantine", router, "sqs:ReceiveMessage", s.Quarantine(), s.Account, denied),
		getRole(s.Name+": router reads its own role", router, s.Role(t, s.RouterRole).ARN, s.Account, denied),
		getRole(s.Name+": router reads another role of its account", router, s.roleARN("admin"), s.Account, denied),
		row{name: s.Name + ": router lists roles", who: router, action: "iam:ListRoles", resource: "*", want: denied},
	)
	instance := s.ARN("ec2", "instance/i-0123456789abcdef0")
	for _, action := range []string{"ec2:TerminateInstances", "ec2:StopInstances", "ec2:RunInstances", "ec2:CreateTags", "ec2:ModifyInstanceAttribute"} {
		rows = append(rows, row{name: s.Name + ": router " + action, who: router, action: action, resource: instance, resourceAcc: s.Account, want: denied})
	}
	if other.Account == s.Account && other.Name != s.Name {
		for c := range other.ClusterQueues {
			q := other.ClusterQueue(t, c)
			rows = append(rows, send(s.Name+": router -> "+other.Name+"'s cluster queue "+q.Name, router, q, other.Account, explicitlyDenied))
		}
		rows = append(rows, send(s.Name+": router -> "+other.Name+"'s central queue", router, other.Central(), other.Account, explicitlyDenied))
	}
	return rows
}

// controllerRows: each Karpenter controller may receive, delete and look up its own queue's messages, and may not
// read another cluster's queue or the central queue, nor send anywhere on the bus.
func controllerRows(t *testing.T, s *Stack, clusters ...string) []row {
	var rows []row
	for _, c := range clusters {
		rows = append(rows, queueReaderRows(t, s, c, s.session(s.Role(t, s.ControllerRoles[c])))...)
	}
	return rows
}

// existingRoleRows: in existing-role mode the stack's policy on Karpenter's own role grants the same, and only
// that.
func existingRoleRows(t *testing.T, s *Stack, cluster, roleName string) []row {
	r := s.Role(t, roleName)
	if r.Trust != nil || len(r.Policies) != 1 {
		t.Fatalf("the existing role %s: created %t, %d policies; want one policy on a role the stack does not create", roleName, r.Trust != nil, len(r.Policies))
	}
	return queueReaderRows(t, s, cluster, s.session(r))
}

func queueReaderRows(t *testing.T, s *Stack, cluster string, who caller) []row {
	own := s.ClusterQueue(t, cluster)
	var rows []row
	for _, action := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueUrl"} {
		rows = append(rows, on(s.Name+": "+cluster+"'s Karpenter "+action+" its queue", who, action, own, s.Account, allowed))
	}
	rows = append(rows,
		send(s.Name+": "+cluster+"'s Karpenter sends to its queue", who, own, s.Account, explicitlyDenied),
		on(s.Name+": "+cluster+"'s Karpenter reads the central queue", who, "sqs:ReceiveMessage", s.Central(), s.Account, denied),
		send(s.Name+": "+cluster+"'s Karpenter sends to the central queue", who, s.Central(), s.Account, explicitlyDenied),
	)
	for c := range s.ClusterQueues {
		if c != cluster {
			q := s.ClusterQueue(t, c)
			rows = append(rows, on(s.Name+": "+cluster+"'s Karpenter reads "+c+"'s queue", who, "sqs:ReceiveMessage", q, s.Account, denied))
		}
	}
	return rows
}

// assume is an sts action on role r, judged by its trust policy.
// getRole is a row of iam:GetRole on role (an ARN) of account acc: IAM roles have no resource policy for it.
func getRole(name string, who caller, role, acc string, want verdict) row {
	return row{name: name, who: who, action: "iam:GetRole", resource: role, resourceAcc: acc, want: want}
}

// firstKey is the least key of m, so a row made once per map is made once.
func firstKey[V any](m map[string]V) string {
	return slices.Min(slices.Collect(maps.Keys(m)))
}

func assume(name string, who caller, action string, r *Role, acc string, want verdict) row {
	return row{name: name, who: who, action: action, resource: r.ARN, resourceAcc: acc, resourcePolicy: r.Trust, want: want}
}

// trustRows: only the intended principal may assume each role: the router's by Lambda; a Pod Identity
// controller's by EKS Pod Identity for its cluster, namespace and service account; an IRSA controller's through
// its cluster's OIDC provider for its service account; the node roles by EC2; the FIS role by FIS of this account.
func trustRows(t *testing.T, s *Stack) []row {
	router := s.Role(t, s.RouterRole)
	rows := []row{
		assume(s.Name+": Lambda assumes the router role", service("lambda.amazonaws.com", s.Account, map[string]any{}), "sts:AssumeRole", router, s.Account, allowed),
		assume(s.Name+": EC2 assumes the router role", service("ec2.amazonaws.com", s.Account, map[string]any{}), "sts:AssumeRole", router, s.Account, denied),
		assume(s.Name+": a role of the account assumes the router role", s.admin("sts:AssumeRole"), "sts:AssumeRole", router, s.Account, denied),
	}

	// EKS Pod Identity: the session tags it sets, for the association's cluster, namespace and service account.
	pods := s.Role(t, s.ControllerRoles["pods"])
	podIdentity := func(clusterName, namespace, sa, sourceAccount string) caller {
		return service("pods.eks.amazonaws.com", s.Account, map[string]any{
			"aws:SourceAccount":                         sourceAccount,
			"aws:RequestTag/eks-cluster-arn":            s.ARN("eks", "cluster/"+clusterName),
			"aws:RequestTag/eks-cluster-name":           clusterName,
			"aws:RequestTag/kubernetes-namespace":       namespace,
			"aws:RequestTag/kubernetes-service-account": sa,
			"aws:TagKeys":                               []string{"eks-cluster-arn", "eks-cluster-name", "kubernetes-namespace", "kubernetes-service-account"},
		})
	}
	for _, action := range []string{"sts:AssumeRole", "sts:TagSession"} {
		rows = append(rows,
			assume(s.Name+": Pod Identity for pods/kube-system/karpenter "+action, podIdentity("pods", "kube-system", "karpenter", s.Account), action, pods, s.Account, allowed),
			assume(s.Name+": Pod Identity for another namespace "+action, podIdentity("pods", "default", "karpenter", s.Account), action, pods, s.Account, denied),
			assume(s.Name+": Pod Identity for another service account "+action, podIdentity("pods", "kube-system", "default", s.Account), action, pods, s.Account, denied),
			assume(s.Name+": Pod Identity for another cluster "+action, podIdentity("fresh", "kube-system", "karpenter", s.Account), action, pods, s.Account, denied),
			assume(s.Name+": Pod Identity for another account "+action, podIdentity("pods", "kube-system", "karpenter", "999999999999"), action, pods, s.Account, denied),
		)
	}

	// IRSA: the token's sub and aud, as the cluster's OIDC provider presents them.
	irsa := s.Role(t, s.ControllerRoles["irsa"])
	web := func(provider, sub, aud string) caller {
		host := provider[strings.Index(provider, "oidc-provider/")+len("oidc-provider/"):]
		return caller{principal: provider, account: s.Account, context: map[string]any{host + ":sub": sub, host + ":aud": aud}}
	}
	sa := "system:serviceaccount:karpenter:karpenter-controller"
	otherProvider := strings.Replace(providerARN, "ABC123", "XYZ789", 1)
	for _, r := range []struct {
		name string
		who  caller
		want verdict
	}{
		{"IRSA for karpenter/karpenter-controller", web(providerARN, sa, "sts.amazonaws.com"), allowed},
		{"IRSA for another service account", web(providerARN, "system:serviceaccount:karpenter:default", "sts.amazonaws.com"), denied},
		{"IRSA for another namespace", web(providerARN, "system:serviceaccount:kube-system:karpenter-controller", "sts.amazonaws.com"), denied},
		{"IRSA for another audience", web(providerARN, sa, "example.com"), denied},
		{"IRSA through another cluster's provider", web(otherProvider, sa, "sts.amazonaws.com"), denied},
	} {
		row := assume(s.Name+": "+r.name, r.who, "sts:AssumeRoleWithWebIdentity", irsa, s.Account, r.want)
		row.unsafe = true
		rows = append(rows, row)
	}
	if _, ok := s.Roles[s.ControllerRoles["irsa"]]; !ok || irsa.Trust["Statement"].([]any)[0].(map[string]any)["Principal"].(map[string]any)["Federated"] != providerARN {
		t.Fatalf("the IRSA controller's trust does not name the cluster's provider: %v", irsa.Trust)
	}

	for name, r := range s.Roles {
		switch {
		case strings.HasPrefix(name, "KarpenterNode-"), strings.HasPrefix(name, "KarpenterSystem-"):
			rows = append(rows,
				assume(s.Name+": EC2 assumes "+name, service("ec2.amazonaws.com", s.Account, map[string]any{}), "sts:AssumeRole", r, s.Account, allowed),
				assume(s.Name+": Lambda assumes "+name, service("lambda.amazonaws.com", s.Account, map[string]any{}), "sts:AssumeRole", r, s.Account, denied),
			)
		case strings.HasPrefix(name, "KarpenterBusFIS-"):
			rows = append(rows,
				assume(s.Name+": FIS of the account assumes "+name, service("fis.amazonaws.com", s.Account, map[string]any{"aws:SourceAccount": s.Account}), "sts:AssumeRole", r, s.Account, allowed),
				assume(s.Name+": FIS of another account assumes "+name, service("fis.amazonaws.com", s.Account, map[string]any{"aws:SourceAccount": "999999999999"}), "sts:AssumeRole", r, s.Account, denied),
			)
		}
	}
	return rows
}

// redriveRows: sending the quarantine's messages back takes the redrive role, which only the principals the stack
// names may assume (by their exact ARN, in any account), with a source identity: a named user only its own name (another
// is refused, which the trust as it was, any source identity, admits: the row can fail), a named role any (its word);
// not a role of the account allowed sts:AssumeRole on * (PowerUserAccess, most CI roles), not a member's, not another
// account's, not a role or user of the named principal's name in another account. It may send to the central queue
// only (the records back, and the request that the router take the DLQ in), read the quarantine, list the DLQ without
// deleting from it, and not start a message move task (a moved message's sender is undocumented: requeue carries each
// sealed first sender instead). Its trust is evaluated a second time as it was (the account's root, no condition),
// which must let the administrator in: the row can fail.
func redriveRows(t *testing.T, s *Stack) []row {
	r := s.Role(t, s.RedriveRole)
	redrive := s.session(r)
	// A principal named in redrive.principals, opening the session with a source identity, as make requeue does: its
	// own name (a user's, which AWS gives as aws:username; a role's session's, which nothing of AWS ties to the caller).
	named := func(arn string) caller {
		acct := strings.Split(arn, ":")[4]
		kind, name, _ := strings.Cut(arn[strings.LastIndex(arn, ":")+1:], "/")
		name = name[strings.LastIndex(name, "/")+1:]
		c := outsider(acct, "sts:AssumeRole", "sts:SetSourceIdentity")
		c.context["aws:PrincipalArn"] = arn
		c.context["sts:SourceIdentity"] = name
		if kind == "user" {
			c.principal = arn
			c.context["aws:username"] = name
		} else {
			c.principal = "arn:aws:sts::" + acct + ":assumed-role/" + name + "/session"
		}
		return c
	}
	admin := s.admin("sts:AssumeRole")
	// The trust as it was: any source identity, from any principal named.
	anySourceIdentity := func(w *row) {
		w.resourcePolicy = copyPolicy(r.Trust)
		for _, st := range statements(w.resourcePolicy) {
			cond := st["Condition"].(map[string]any)
			delete(cond, "StringEquals")
			cond["StringLike"] = map[string]any{"sts:SourceIdentity": "*"}
		}
	}
	posing := assume(s.Name+": the named user of a security account assumes the redrive role as someone else (another source identity)",
		named(security).with("sts:SourceIdentity", "alice"), "sts:AssumeRole", r, s.Account, denied)
	rows := []row{
		assume(s.Name+": the named on-call role assumes the redrive role, with a source identity", named(oncall), "sts:AssumeRole", r, s.Account, allowed),
		assume(s.Name+": the named on-call role sets its source identity", named(oncall), "sts:SetSourceIdentity", r, s.Account, allowed),
		assume(s.Name+": the named on-call role assumes the redrive role with any source identity (the caller's word)", named(oncall).with("sts:SourceIdentity", "alice"),
			"sts:AssumeRole", r, s.Account, allowed),
		assume(s.Name+": the named on-call role assumes the redrive role without a source identity", named(oncall).with("sts:SourceIdentity", nil),
			"sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": the named user of a security account assumes the redrive role, its own name as source identity", named(security), "sts:AssumeRole", r, s.Account, allowed),
		assume(s.Name+": the named user of a security account sets its own name as source identity", named(security), "sts:SetSourceIdentity", r, s.Account, allowed),
		posing,
		widened(posing, "the trust taking any source identity, as before", anySourceIdentity),
		assume(s.Name+": the named user of a security account sets another source identity", named(security).with("sts:SourceIdentity", "alice"),
			"sts:SetSourceIdentity", r, s.Account, denied),
		assume(s.Name+": the named user of a security account assumes the redrive role without a source identity", named(security).with("sts:SourceIdentity", nil),
			"sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": a user named as the security lead, of another account, with its own name", named(strings.Replace(security, "888888888888", "999999999999", 1)),
			"sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": a role of the account allowed sts:AssumeRole on * assumes the redrive role", admin, "sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": a role named as the on-call role, of another account", named(strings.Replace(oncall, s.Account, "999999999999", 1)), "sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": another account's role assumes the redrive role", outsider("999999999999", "sts:AssumeRole"), "sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": a member's role assumes the redrive role", outsider(member1, "sts:AssumeRole"), "sts:AssumeRole", r, s.Account, denied),
		widened(assume(s.Name+": a role of the account allowed sts:AssumeRole on * assumes the redrive role", admin, "sts:AssumeRole", r, s.Account, denied),
			"the redrive role trusting the account's root with no condition", func(w *row) {
				w.resourcePolicy = Policy{"Version": "2012-10-17", "Statement": []any{map[string]any{
					"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::" + s.Account + ":root"}, "Action": "sts:AssumeRole",
				}}}
			}),
		send(s.Name+": redrive role -> central", redrive, s.Central(), s.Account, allowed),
		send(s.Name+": redrive role -> DLQ", redrive, s.DLQ(), s.Account, explicitlyDenied),
		on(s.Name+": redrive role starts a message move task on the DLQ", redrive, "sqs:StartMessageMoveTask", s.DLQ(), s.Account, denied),
	}
	// The DLQ: listed; taken in by the router, on the redrive role's request, so the redrive role deletes nothing there.
	for _, action := range []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"} {
		rows = append(rows, on(s.Name+": redrive role "+action+" DLQ", redrive, action, s.DLQ(), s.Account, allowed))
	}
	rows = append(rows, on(s.Name+": redrive role deletes from the DLQ", redrive, "sqs:DeleteMessage", s.DLQ(), s.Account, denied))
	// The quarantine: read, and sent back (the requeue command); nothing put there.
	for _, action := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes"} {
		rows = append(rows, on(s.Name+": redrive role "+action+" quarantine", redrive, action, s.Quarantine(), s.Account, allowed))
	}
	rows = append(rows,
		send(s.Name+": redrive role -> quarantine", redrive, s.Quarantine(), s.Account, explicitlyDenied),
		on(s.Name+": redrive role StartMessageMoveTask quarantine", redrive, "sqs:StartMessageMoveTask", s.Quarantine(), s.Account, denied),
	)
	for c := range s.ClusterQueues {
		rows = append(rows, send(s.Name+": redrive role -> cluster queue of "+c, redrive, s.ClusterQueue(t, c), s.Account, explicitlyDenied))
	}
	return rows
}

// quarantineRows: the quarantine's evidence cannot be rewritten or erased. Only the redrive role may receive from
// it, delete from it or change a message's visibility; nobody may purge it, the redrive role and an administrator
// allowed sqs:* on * included; only the router may send to it. A stack without a redrive role lets nobody read it.
// Each Deny is evaluated a second time against the policy without it, which must then let the administrator do
// it: the rows can fail.
func quarantineRows(t *testing.T, s *Stack) []row {
	q := s.Quarantine()
	admin := s.admin("sqs:*")
	router := s.session(s.Role(t, s.RouterRole))
	rows := []row{
		on(s.Name+": the router receives from the quarantine", router, "sqs:ReceiveMessage", q, s.Account, denied),
		send(s.Name+": the router -> quarantine", router, q, s.Account, allowed),
	}
	for _, action := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:PurgeQueue"} {
		deny := on(s.Name+": a role allowed sqs:* on * "+action+" quarantine", admin, action, q, s.Account, explicitlyDenied)
		rows = append(rows, deny, widened(deny, "the quarantine's policy without its Denies but TLS's", func(w *row) {
			w.resourcePolicy = onlyStatements(q.Policy, "DenyInsecureTransport")
		}))
	}
	if s.RedriveRole != "" {
		rows = append(rows, on(s.Name+": the redrive role purges the quarantine", s.session(s.Role(t, s.RedriveRole)), "sqs:PurgeQueue", q, s.Account, explicitlyDenied))
	} else {
		redrive := &Role{Name: "kib-" + s.Name + "-redrive-" + s.Region, ARN: s.roleARN("kib-" + s.Name + "-redrive-" + s.Region),
			Policies: []Policy{{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}}}}}
		rows = append(rows, on(s.Name+": a role named as the redrive role, with none declared, receives from the quarantine", s.session(redrive),
			"sqs:ReceiveMessage", q, s.Account, explicitlyDenied))
	}
	return rows
}

// onlyStatements is p with only the statements whose Sid is among sids.
func onlyStatements(p Policy, sids ...string) Policy {
	out := copyPolicy(p)
	var keep []any
	for _, st := range statements(out) {
		if sid, _ := st["Sid"].(string); slices.Contains(sids, sid) {
			keep = append(keep, st)
		}
	}
	out["Statement"] = keep
	return out
}

// hubPolicyRows: with the hub's rules delivering through the central queue's policy (centralQueue.hubDelivery
// queuePolicy), EventBridge may send to it for the stack's own rules only: not for another stack's rule, not for a
// rule of another account, not without aws:SourceArn (a service acting for no rule), not without TLS; no principal
// that is no role may (an IAM user of the account allowed sqs:* on *), nor a role of the account. What the router's
// sender check rests on in this mode: a sender that is no role is the stack's own rules. The rules' row is evaluated
// a second time against the policy without the Allow, which must then refuse it: the row can fail.
func hubPolicyRows(t *testing.T, s, other *Stack) []row {
	events := func(rule string) caller {
		return service("events.amazonaws.com", s.Account, map[string]any{"aws:SourceArn": rule, "aws:SourceAccount": s.Account, "aws:SecureTransport": "true"})
	}
	user := s.admin("sqs:*")
	user.principal = "arn:aws:iam::" + s.Account + ":user/deployer"
	user.context["aws:PrincipalArn"] = user.principal
	own := send(s.Name+": the stack's own rule, through the policy -> central", events(s.RuleARNs[0]), s.Central(), s.Account, allowed)
	return []row{
		own,
		widened(own, "the central queue's policy without the rules' Allow", func(w *row) {
			w.resourcePolicy = onlyStatements(s.Central().Policy, "OnlyTheBusSends", "DenyInsecureTransport")
			w.want = denied
		}),
		send(s.Name+": another stack's rule -> central", events(other.RuleARNs[0]), s.Central(), s.Account, explicitlyDenied),
		send(s.Name+": EventBridge for no rule -> central", service("events.amazonaws.com", s.Account, map[string]any{"aws:SecureTransport": "true"}), s.Central(), s.Account, explicitlyDenied),
		send(s.Name+": an IAM user allowed sqs:* on * -> central", user, s.Central(), s.Account, explicitlyDenied),
		send(s.Name+": a role named as the hub's forwarder, with none declared -> central", s.session(&Role{Name: "kib-" + s.Name + "-forward-" + s.Region,
			ARN:      s.roleARN("kib-" + s.Name + "-forward-" + s.Region),
			Policies: []Policy{{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}}}}}),
			s.Central(), s.Account, explicitlyDenied),
	}
}

// forwarderRows: the hub's rules deliver to the central queue as its forwarder role, which only EventBridge may take
// and which may send to the central queue and nowhere else.
func forwarderRows(t *testing.T, s *Stack) []row {
	r := s.Role(t, s.ForwarderRole)
	fwd := s.session(r)
	rows := []row{
		assume(s.Name+": EventBridge assumes the forwarder", service("events.amazonaws.com", s.Account, map[string]any{}), "sts:AssumeRole", r, s.Account, allowed),
		assume(s.Name+": a role of the account assumes the forwarder", s.admin("sts:AssumeRole"), "sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": another account's role assumes the forwarder", outsider("999999999999", "sts:AssumeRole"), "sts:AssumeRole", r, s.Account, denied),
		send(s.Name+": forwarder -> central", fwd, s.Central(), s.Account, allowed),
		send(s.Name+": forwarder without TLS -> central", fwd.with("aws:SecureTransport", "false"), s.Central(), s.Account, explicitlyDenied),
		send(s.Name+": forwarder -> DLQ", fwd, s.DLQ(), s.Account, explicitlyDenied),
		send(s.Name+": forwarder -> quarantine", fwd, s.Quarantine(), s.Account, explicitlyDenied),
		on(s.Name+": forwarder reads central", fwd, "sqs:ReceiveMessage", s.Central(), s.Account, denied),
	}
	for c := range s.ClusterQueues {
		rows = append(rows, send(s.Name+": forwarder -> cluster queue of "+c, fwd, s.ClusterQueue(t, c), s.Account, explicitlyDenied))
	}
	return rows
}

// heartbeatRows: the heartbeat's schedules put canaries with a role only EventBridge Scheduler may take, for the
// stack's schedule group in its account; the role may put canaries, and only canaries, on the default event
// bus (no forged interruption, no other bus), and may send to no queue: canaries reach the central queue
// through the canary rule, which busRows judges with the other rules.
func heartbeatRows(t *testing.T, s, other *Stack) []row {
	r := s.Role(t, s.HeartbeatRole)
	beat := s.session(r)
	defaultBus, otherBus := s.ARN("events", "event-bus/default"), s.ARN("events", "event-bus/orders")
	// events:source and events:detail-type hold one value per entry of the PutEvents call.
	puts := func(name string, who caller, bus string, sources, detailTypes []string, want verdict) row {
		ctx := who.with("events:source", nil).with("events:detail-type", nil)
		if sources != nil {
			ctx = ctx.with("events:source", sources).with("events:detail-type", detailTypes)
		}
		return row{name: s.Name + ": heartbeat role puts " + name, who: ctx,
			action: "events:PutEvents", resource: bus, resourceAcc: s.Account, want: want}
	}
	put := func(name string, who caller, bus, source, detailType string, want verdict) row {
		return puts(name, who, bus, []string{source}, []string{detailType}, want)
	}
	const canarySource, canaryType = "karpenter-interruption-bus.canary", "Interruption Bus Canary"
	scheduler := func(account, group string) caller {
		return service("scheduler.amazonaws.com", s.Account, map[string]any{
			"aws:SourceAccount": account, "aws:SourceArn": fmt.Sprintf("arn:%s:scheduler:%s:%s:schedule-group/%s", s.Partition, s.Region, account, group),
		})
	}
	return []row{
		put("a canary on the default bus", beat, defaultBus, canarySource, canaryType, allowed),
		put("a spot interruption warning", beat, defaultBus, "aws.ec2", "EC2 Spot Instance Interruption Warning", denied),
		put("a canary-sourced spot warning", beat, defaultBus, canarySource, "EC2 Spot Instance Interruption Warning", denied),
		put("a canary on another bus", beat, otherBus, canarySource, canaryType, denied),
		puts("an event without source nor detail-type", beat, defaultBus, nil, nil, denied),
		puts("a canary and a spot warning in one call", beat, defaultBus, []string{canarySource, "aws.ec2"},
			[]string{canaryType, "EC2 Spot Instance Interruption Warning"}, denied),
		send(s.Name+": heartbeat role -> central", beat, s.Central(), s.Account, explicitlyDenied),
		assume(s.Name+": Scheduler assumes the heartbeat role for the stack's group", scheduler(s.Account, s.heartbeatGroup()), "sts:AssumeRole", r, s.Account, allowed),
		assume(s.Name+": Scheduler assumes it for another group", scheduler(s.Account, other.heartbeatGroup()), "sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": Scheduler assumes it for another account", scheduler("999999999999", s.heartbeatGroup()), "sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": EventBridge assumes the heartbeat role", service("events.amazonaws.com", s.Account, map[string]any{}), "sts:AssumeRole", r, s.Account, denied),
		assume(s.Name+": a role of the account assumes the heartbeat role", s.admin("sts:AssumeRole"), "sts:AssumeRole", r, s.Account, denied),
	}
}

// heartbeatGroup is the name of the stack's schedule group: its heartbeat role's, without the region that IAM's
// account-wide names need (infra/iamname).
func (s *Stack) heartbeatGroup() string { return strings.TrimSuffix(s.HeartbeatRole, "-"+s.Region) }

// memberSession is a request by a session of role r of member account m of hub s.
func (s *Stack) memberSession(m string, r *Role) caller {
	c := s.Members[m].session(r)
	c.context["aws:PrincipalAccount"] = m
	if s.OrgID != "" {
		c.context["aws:PrincipalOrgID"] = s.OrgID
	}
	return c
}

// organizationRows: across accounts, only the hub's router sends to (and looks up) a member's cluster queue; no
// role of that member, of another member, of the hub or of an account not on the bus does. A member's reader
// role is the hub router's alone, and may only describe instances in the region. A member's forwarder role is
// EventBridge's, for that member's own rules, and sends to the hub's central queue, which takes no other role of
// a member.
func organizationRows(t *testing.T, s *Stack) []row {
	if len(s.Members) != 3 {
		t.Fatalf("the organization stack has %d member accounts, want 3", len(s.Members))
	}
	router := s.session(s.Role(t, s.RouterRole))
	var rows []row
	for m, ms := range s.Members {
		reader, forwarder := ms.Role(t, s.memberRole("reader")), ms.Role(t, s.memberRole("forward"))
		admin := ms.admin("sqs:*", "sts:AssumeRole")
		for c, qn := range ms.ClusterQueues {
			q := ms.Queues[qn]
			rows = append(rows,
				send(s.Name+": hub router -> "+m+"'s cluster queue "+c, router, q, m, allowed),
				on(s.Name+": hub router looks up "+m+"'s cluster queue "+c, router, "sqs:GetQueueUrl", q, m, allowed),
				on(s.Name+": hub router reads "+m+"'s cluster queue "+c, router, "sqs:ReceiveMessage", q, m, denied),
				send(s.Name+": "+m+"'s own role allowed sqs:* -> its cluster queue "+c, admin, q, m, explicitlyDenied),
				send(s.Name+": "+m+"'s reader role -> its cluster queue "+c, s.memberSession(m, reader), q, m, explicitlyDenied),
				send(s.Name+": "+m+"'s forwarder role -> its cluster queue "+c, s.memberSession(m, forwarder), q, m, explicitlyDenied),
				send(s.Name+": the hub's redrive role -> "+m+"'s cluster queue "+c, s.session(s.Role(t, s.RedriveRole)), q, m, denied),
				send(s.Name+": an account not on the bus -> "+m+"'s cluster queue "+c, outsider("999999999999", "sqs:*"), q, m, denied),
				on(s.Name+": a hub role allowed sqs:GetQueueAttributes reads the counts of "+m+"'s cluster queue "+c, s.admin("sqs:GetQueueAttributes"), "sqs:GetQueueAttributes", q, m, allowed),
				on(s.Name+": a hub role allowed sqs:* receives from "+m+"'s cluster queue "+c, s.admin("sqs:*"), "sqs:ReceiveMessage", q, m, denied),
				on(s.Name+": an account not on the bus reads the counts of "+m+"'s cluster queue "+c, outsider("999999999999", "sqs:*"), "sqs:GetQueueAttributes", q, m, denied),
			)
			for other, os := range s.Members {
				if other != m && c == firstKey(ms.ClusterQueues) {
					rows = append(rows, getRole(s.Name+": "+m+"'s reader reads "+other+"'s forwarder role", s.memberSession(m, reader),
						os.Role(t, s.memberRole("forward")).ARN, other, denied))
				}
				if other != m {
					rows = append(rows,
						send(s.Name+": "+other+"'s role allowed sqs:* -> "+m+"'s cluster queue "+c, os.admin("sqs:*"), q, m, denied),
						send(s.Name+": "+other+"'s forwarder -> "+m+"'s cluster queue "+c, s.memberSession(other, os.Role(t, s.memberRole("forward"))), q, m, denied),
					)
				}
			}
		}
		inRegion := s.memberSession(m, reader)
		rows = append(rows,
			assume(s.Name+": the hub router assumes "+m+"'s reader role", router, "sts:AssumeRole", reader, m, allowed),
			assume(s.Name+": the hub's redrive role assumes "+m+"'s reader role", s.session(s.Role(t, s.RedriveRole)), "sts:AssumeRole", reader, m, denied),
			assume(s.Name+": "+m+"'s own role allowed sts:AssumeRole assumes its reader role", admin, "sts:AssumeRole", reader, m, denied),
			assume(s.Name+": an account not on the bus assumes "+m+"'s reader role", outsider("999999999999", "sts:AssumeRole"), "sts:AssumeRole", reader, m, denied),
			row{name: s.Name + ": " + m + "'s reader describes instances in the region", who: inRegion, action: "ec2:DescribeInstances", resource: "*", want: allowed},
			row{name: s.Name + ": " + m + "'s reader describes instances elsewhere", who: inRegion.with("aws:RequestedRegion", "us-east-1"), action: "ec2:DescribeInstances", resource: "*", want: denied},
			row{name: s.Name + ": " + m + "'s reader terminates an instance", who: inRegion, action: "ec2:TerminateInstances",
				resource: ms.ARN("ec2", "instance/i-0123456789abcdef0"), resourceAcc: m, want: denied},
			// The sender check: the reader may read its own account's forwarder role, and no other role.
			getRole(s.Name+": "+m+"'s reader reads its forwarder role", inRegion, forwarder.ARN, m, allowed),
			getRole(s.Name+": "+m+"'s reader reads itself", inRegion, reader.ARN, m, denied),
			getRole(s.Name+": "+m+"'s reader reads another role of its account", inRegion, ms.roleARN("admin"), m, denied),
			getRole(s.Name+": the hub router reads "+m+"'s forwarder role directly", router, forwarder.ARN, m, denied),
			row{name: s.Name + ": " + m + "'s reader lists roles", who: inRegion, action: "iam:ListRoles", resource: "*", want: denied},
			send(s.Name+": "+m+"'s forwarder -> the hub's central queue", s.memberSession(m, forwarder), s.Central(), s.Account, allowed),
			send(s.Name+": "+m+"'s forwarder -> the hub's DLQ", s.memberSession(m, forwarder), s.DLQ(), s.Account, denied),
			send(s.Name+": "+m+"'s reader -> the hub's central queue", s.memberSession(m, reader), s.Central(), s.Account, denied),
			send(s.Name+": "+m+"'s role allowed sqs:* -> the hub's central queue", admin, s.Central(), s.Account, denied),
			send(s.Name+": a role named like a forwarder, of an account not on the bus -> the hub's central queue",
				caller{principal: "arn:aws:sts::999999999999:assumed-role/" + forwarder.Name + "/s", account: "999999999999",
					identity: forwarder.Policies, context: map[string]any{"aws:PrincipalArn": "arn:aws:iam::999999999999:role/" + forwarder.Name,
						"aws:PrincipalAccount": "999999999999", "aws:SecureTransport": "true"}}, s.Central(), s.Account, denied),
		)
		// The forwarder's trust is the form EventBridge documents for a rule's execution role (no condition: it does
		// not document setting aws:SourceArn when it assumes one); who may give it to a rule is the member's
		// iam:PassRole, and what it may do, its identity policy.
		rows = append(rows,
			assume(s.Name+": EventBridge assumes "+m+"'s forwarder", service("events.amazonaws.com", m, map[string]any{}), "sts:AssumeRole", forwarder, m, allowed),
			assume(s.Name+": "+m+"'s own role allowed sts:AssumeRole assumes its forwarder", admin, "sts:AssumeRole", forwarder, m, denied),
			send(s.Name+": "+m+"'s forwarder -> an unrelated queue of its own account", s.memberSession(m, forwarder),
				&Queue{Name: "unrelated", ARN: ms.ARN("sqs", "unrelated"), Policy: Policy{"Version": "2012-10-17", "Statement": []any{}}}, m, denied),
		)
	}
	return rows
}

// memberRole names a member's role of the hub s: "forward", "reader".
func (s *Stack) memberRole(what string) string { return "kib-" + s.Name + "-" + what + "-" + s.Region }

// widened is r against a policy widened by change (described by how), which must then be allowed: it shows that
// r's verdict comes from what was taken away, and that r can fail.
func widened(r row, how string, change func(*row)) row {
	w := r
	w.who = r.who.with("", nil) // a copy of the context
	w.who.identity = append([]Policy{}, r.who.identity...)
	w.name, w.want = r.name+" (widened: "+how+")", allowed
	change(&w)
	return w
}

// copyPolicy is a deep copy of p.
func copyPolicy(p Policy) Policy {
	b, _ := json.Marshal(p)
	var out Policy
	_ = json.Unmarshal(b, &out)
	return out
}

// statements are p's statements, as maps (p is a copy to change).
func statements(p Policy) []map[string]any {
	var out []map[string]any
	list, _ := p["Statement"].([]any)
	for _, st := range list {
		out = append(out, st.(map[string]any))
	}
	return out
}

// withoutKey is p without any condition on key.
func withoutKey(p Policy, key string) Policy {
	p = copyPolicy(p)
	for _, st := range statements(p) {
		cond, _ := st["Condition"].(map[string]any)
		for op, kv := range cond {
			delete(kv.(map[string]any), key)
			if len(kv.(map[string]any)) == 0 {
				delete(cond, op)
			}
		}
		if len(cond) == 0 {
			delete(st, "Condition")
		}
	}
	return p
}

// anyResource is p with every statement on every resource.
func anyResource(p Policy) Policy {
	p = copyPolicy(p)
	for _, st := range statements(p) {
		st["Resource"] = "*"
	}
	return p
}

// openToOrganization is a queue policy p that lets any principal of organization org send, with no Deny.
func openToOrganization(p Policy, org string) Policy {
	p = copyPolicy(p)
	var kept []any
	for _, st := range statements(p) {
		if st["Effect"] == "Deny" {
			continue
		}
		st["Principal"] = "*"
		st["Condition"] = map[string]any{"StringEquals": map[string]any{"aws:PrincipalOrgID": org}}
		kept = append(kept, st)
	}
	p["Statement"] = kept
	return p
}

// perimeterRows: with organization.id, what names the organization instead of the members must keep out
// everything outside it, and keep members apart: a role named as the forwarder in an account of another
// organization cannot feed the central queue; the router cannot take a reader-named role, nor send to a
// prefix-named queue, in such an account (even one whose policies invite it); a member cannot reach another
// member's queues; the forwarder cannot send to an unrelated queue of its own account; a hub role allowed
// sts:AssumeRole on * cannot take a reader. Each row is evaluated a second time against the policy widened by
// what makes it hold, which must then allow the request.
func perimeterRows(t *testing.T, s *Stack) []row {
	const stranger, strangerOrg = "888888888888", "o-zzzzzzzzzz"
	if s.OrgID == "" || len(s.Members) < 2 {
		t.Fatalf("stack %s: organization %q, %d members; want an organization of at least two members", s.Name, s.OrgID, len(s.Members))
	}
	members := slices.Sorted(maps.Keys(s.Members))
	m, other := members[0], members[1]
	ms, os := s.Members[m], s.Members[other]
	routerRole := s.Role(t, s.RouterRole)
	router := s.session(routerRole)
	forwarder, reader := ms.Role(t, s.memberRole("forward")), ms.Role(t, s.memberRole("reader"))
	strangerARN := func(service, rest string) string {
		return fmt.Sprintf("arn:%s:%s:%s:%s:%s", s.Partition, service, s.Region, stranger, rest)
	}
	strangerRole := func(r *Role) caller {
		return caller{
			principal: fmt.Sprintf("arn:%s:sts::%s:assumed-role/%s/s", s.Partition, stranger, r.Name), account: stranger, identity: r.Policies,
			context: map[string]any{
				"aws:PrincipalArn": fmt.Sprintf("arn:%s:iam::%s:role/%s", s.Partition, stranger, r.Name), "aws:PrincipalAccount": stranger,
				"aws:PrincipalOrgID": strangerOrg, "aws:SecureTransport": "true",
			},
		}
	}
	// A stranger's reader and cluster queue, made as the bus makes them: they invite the hub's router.
	strangerReader := &Role{Name: reader.Name, ARN: fmt.Sprintf("arn:%s:iam::%s:role/%s", s.Partition, stranger, reader.Name), Trust: reader.Trust}
	var memberQueue *Queue
	for _, qn := range ms.ClusterQueues {
		memberQueue = ms.Queues[qn]
		break
	}
	var otherQueue *Queue
	for _, qn := range os.ClusterQueues {
		otherQueue = os.Queues[qn]
		break
	}
	strangerQueue := &Queue{Name: memberQueue.Name, ARN: strangerARN("sqs", memberQueue.Name)}
	b, _ := json.Marshal(memberQueue.Policy)
	_ = json.Unmarshal([]byte(strings.ReplaceAll(string(b), m, stranger)), &strangerQueue.Policy)
	outside := router.with("aws:ResourceOrgID", strangerOrg)
	routerWithoutPerimeter := func(w *row) {
		w.who.identity = nil
		for _, p := range routerRole.Policies {
			w.who.identity = append(w.who.identity, withoutKey(p, "aws:ResourceOrgID"))
		}
	}
	unrelated := &Queue{Name: "unrelated", ARN: ms.ARN("sqs", "unrelated"), Policy: Policy{"Version": "2012-10-17", "Statement": []any{}}}

	var rows []row
	add := func(r row, how string, change func(*row)) { rows = append(rows, r, widened(r, how, change)) }
	add(send(s.Name+": a forwarder-named role of another organization -> the hub's central queue", strangerRole(forwarder), s.Central(), s.Account, denied),
		"the central queue without aws:PrincipalOrgID", func(w *row) { w.resourcePolicy = withoutKey(w.resourcePolicy, "aws:PrincipalOrgID") })
	add(assume(s.Name+": the hub router assumes a reader-named role of another organization that trusts it", outside, "sts:AssumeRole", strangerReader, stranger, denied),
		"the router's policy without aws:ResourceOrgID", routerWithoutPerimeter)
	add(send(s.Name+": the hub router -> a prefix-named queue of another organization that admits it", outside, strangerQueue, stranger, denied),
		"the router's policy without aws:ResourceOrgID", routerWithoutPerimeter)
	add(send(s.Name+": "+m+"'s role allowed sqs:* -> "+other+"'s cluster queue "+otherQueue.Name, ms.admin("sqs:*"), otherQueue, other, denied),
		"the queue open to the organization", func(w *row) { w.resourcePolicy = openToOrganization(w.resourcePolicy, s.OrgID) })
	add(send(s.Name+": "+m+"'s forwarder -> an unrelated queue of its own account", s.memberSession(m, forwarder), unrelated, m, denied),
		"the forwarder's policy on every resource", func(w *row) { w.who.identity = []Policy{anyResource(forwarder.Policies[0])} })
	add(assume(s.Name+": a hub role allowed sts:AssumeRole on * assumes "+m+"'s reader", s.admin("sts:AssumeRole"), "sts:AssumeRole", reader, m, denied),
		"the reader's trust without aws:PrincipalArn", func(w *row) { w.resourcePolicy = withoutKey(w.resourcePolicy, "aws:PrincipalArn") })
	return rows
}
