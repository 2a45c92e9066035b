// Package iam proves the stack's IAM policies with an implementation of AWS's policy logic this project did not
// write: @cloud-copilot/iam-simulate (npm, pinned in evaluator/package-lock.json, installed by make test with npm
// ci). The policies come from the offline render of several stacks, exactly as pulumi up would declare them; the
// request context of each row holds the keys AWS would set for that request.
package iam

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// declared is one resource of the offline render.
type declared struct {
	Type, Name, Parent, Account string
	Inputs                      map[string]any
}

var (
	buildOnce sync.Once
	renderBin string
	errBuild  error
)

// render renders the stack file text for stack, in account, with the project's own render command, built once.
func render(t *testing.T, stack, text, account string) []declared {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kib-iam-render")
		if err != nil {
			errBuild = err
			return
		}
		renderBin = filepath.Join(dir, "render")
		// go run -exec cp runs `cp <render> renderBin`: Go keeps the executable go run links in its build cache, so
		// the test binaries of every module that renders (each Karpenter version's, the IAM matrix's) link it once.
		cmd := exec.Command("go", "run", "-exec", "cp", "./cmd/render", renderBin)
		cmd.Dir = filepath.Join("..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			errBuild = fmt.Errorf("building cmd/render: %w\n%s", err, out)
		}
	})
	if errBuild != nil {
		t.Fatal(errBuild)
	}
	file := filepath.Join(t.TempDir(), "Pulumi."+stack+".yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(renderBin, "-stack", stack, "-file", file, "-format", "json", "-account", account)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render %s: %v\n%s", stack, err, stderr.String())
	}
	var rs []declared
	if err := json.Unmarshal(out, &rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// Stack is what the evaluator needs of a rendered stack: its roles with their trust and inline policies, its
// queues with their policies, its rules.
type Stack struct {
	Name, Account, Region, Partition string
	// Roles by name; a role the stack does not create (existing-role mode) has only the policies attached to it.
	Roles map[string]*Role
	// Queues by name.
	Queues map[string]*Queue
	// RuleARNs are the stack's EventBridge rules.
	RuleARNs []string
	// ClusterQueues maps a cluster to its queue's name.
	ClusterQueues map[string]string
	// ControllerRoles maps a cluster whose Karpenter the stack installs to its controller role's name.
	ControllerRoles map[string]string
	RouterRole      string
	// RouterFunction is the router's Lambda function's name.
	RouterFunction string
	RedriveRole    string
	HeartbeatRole  string
	// ForwarderRole is the role the account's rules deliver to the central queue as (the hub's, or a member's).
	ForwarderRole string
	// Members are the member accounts of a hub, each as the stack of its roles and queues; ClusterAccounts is
	// the account of each cluster of a member.
	Members         map[string]*Stack
	ClusterAccounts map[string]string
	// Baseline is the template of the member baseline's StackSet (organization.memberOUs), which declares the
	// members' forwarding rules and roles instead of their providers; OrgID the organization, when the stack
	// admits members by it (every principal and resource of the bus is then in it).
	Baseline string
	OrgID    string
	// SealKey is the key the router seals what it keeps with, and Archive the bucket it archives it in.
	SealKey *Key
	Archive *Bucket
}

// Key is a KMS key: its ARN and its key policy.
type Key struct {
	ARN    string
	Policy Policy
}

// Bucket is an S3 bucket: its name, its ARN and its policy.
type Bucket struct {
	Name, ARN string
	Policy    Policy
}

// Role is one IAM role.
type Role struct {
	Name, ARN string
	Trust     Policy // nil for a role the stack does not create
	Policies  []Policy
}

// Queue is one SQS queue.
type Queue struct {
	Name, ARN string
	Policy    Policy
}

// Policy is a policy document as JSON values.
type Policy map[string]any

// load reads the render of a stack into a Stack.
func load(t *testing.T, name, account, region string, rs []declared) *Stack {
	t.Helper()
	partition := "aws"
	if strings.HasPrefix(region, "cn-") {
		partition = "aws-cn"
	}
	newStack := func(account string) *Stack {
		return &Stack{
			Name: name, Account: account, Region: region, Partition: partition,
			Roles: map[string]*Role{}, Queues: map[string]*Queue{}, ClusterQueues: map[string]string{}, ControllerRoles: map[string]string{},
			Members: map[string]*Stack{}, ClusterAccounts: map[string]string{},
		}
	}
	hub := newStack(account)
	// in is the stack of the account a resource is declared in: the hub's, or one of its members'.
	in := func(r declared) *Stack {
		if r.Account == "" || r.Account == account {
			return hub
		}
		if hub.Members[r.Account] == nil {
			hub.Members[r.Account] = newStack(r.Account)
		}
		return hub.Members[r.Account]
	}
	role := func(s *Stack, n string) *Role {
		if s.Roles[n] == nil {
			s.Roles[n] = &Role{Name: n, ARN: fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, s.Account, n)}
		}
		return s.Roles[n]
	}
	doc := func(r declared, key string) Policy {
		var p Policy
		if err := json.Unmarshal([]byte(r.Inputs[key].(string)), &p); err != nil {
			t.Fatalf("%s %s: %s: %v", r.Type, r.Name, key, err)
		}
		return p
	}
	for _, r := range rs {
		s := in(r)
		switch r.Type {
		case "aws:iam/role:Role":
			n := r.Inputs["name"].(string)
			role(s, n).Trust = doc(r, "assumeRolePolicy")
			// Role names end with their region (infra/iamname: IAM keeps names for the whole account); what the
			// role is for is the part before it.
			switch base := strings.TrimSuffix(n, "-"+region); {
			case strings.HasSuffix(base, "-router"):
				s.RouterRole = n
			case strings.HasSuffix(base, "-redrive"):
				s.RedriveRole = n
			case strings.HasSuffix(base, "-heartbeat"):
				s.HeartbeatRole = n
			case strings.HasSuffix(base, "-forward"):
				s.ForwarderRole = n
			case strings.HasPrefix(n, "KarpenterController-"):
				s.ControllerRoles[r.Parent] = n
			}
		case "aws:iam/rolePolicy:RolePolicy":
			rl := role(s, r.Inputs["role"].(string))
			rl.Policies = append(rl.Policies, doc(r, "policy"))
		case "aws:sqs/queue:Queue":
			n := r.Inputs["name"].(string)
			s.queue(n)
			if r.Parent != "" && strings.Contains(n, "_") {
				s.ClusterQueues[r.Parent] = n
				if s != hub {
					hub.ClusterAccounts[r.Parent] = s.Account
				}
			}
		case "aws:sqs/queuePolicy:QueuePolicy":
			u, err := url.Parse(r.Inputs["queueUrl"].(string))
			if err != nil {
				t.Fatal(err)
			}
			s.queue(u.Path[strings.LastIndex(u.Path, "/")+1:]).Policy = doc(r, "policy")
		case "aws:lambda/function:Function":
			s.RouterFunction = r.Inputs["name"].(string)
		case "aws:kms/key:Key":
			s.SealKey = &Key{Policy: doc(r, "policy")}
		case "aws:s3/bucketPolicy:BucketPolicy":
			n := r.Inputs["bucket"].(string)
			s.Archive = &Bucket{Name: n, ARN: "arn:" + partition + ":s3:::" + n, Policy: doc(r, "policy")}
		case "aws:cloudformation/stackSet:StackSet":
			hub.Baseline = r.Inputs["templateBody"].(string)
		case "aws:cloudwatch/eventRule:EventRule":
			s.RuleARNs = append(s.RuleARNs, fmt.Sprintf("arn:%s:events:%s:%s:rule/%s", partition, region, s.Account, r.Inputs["name"]))
		}
	}
	for _, st := range append([]*Stack{hub}, slices.Collect(maps.Values(hub.Members))...) {
		for q, v := range st.Queues {
			if v.Policy == nil {
				t.Fatalf("queue %s of stack %s in %s has no policy", q, name, st.Account)
			}
		}
	}
	s := hub
	// The key's ARN is AWS's to choose: the router's policy names it.
	if s.SealKey != nil {
		for _, p := range s.Roles[s.RouterRole].Policies {
			for _, st := range statements(p) {
				if st["Sid"] == "SealWhatItKeeps" {
					s.SealKey.ARN = fmt.Sprint(st["Resource"].([]any)[0])
				}
			}
		}
	}
	// A stack with no redrive.principals has no redrive role; one whose rules deliver through the queue's policy no
	// forwarder of the hub: the rows that need them ask for them.
	if s.RouterRole == "" || len(s.RuleARNs) == 0 || s.Quarantine() == nil {
		t.Fatalf("stack %s: router role %q, %d rules, quarantine %v", name, s.RouterRole, len(s.RuleARNs), s.Quarantine())
	}
	return s
}

func (s *Stack) queue(name string) *Queue {
	if s.Queues[name] == nil {
		s.Queues[name] = &Queue{Name: name, ARN: fmt.Sprintf("arn:%s:sqs:%s:%s:%s", s.Partition, s.Region, s.Account, name)}
	}
	return s.Queues[name]
}

// ARN of a resource of service in the stack's partition, region and account.
func (s *Stack) ARN(service, resource string) string {
	return fmt.Sprintf("arn:%s:%s:%s:%s:%s", s.Partition, service, s.Region, s.Account, resource)
}

// roleARN is the ARN of the role name of the stack's account (IAM's ARNs have no region).
func (s *Stack) roleARN(name string) string {
	return fmt.Sprintf("arn:%s:iam::%s:role/%s", s.Partition, s.Account, name)
}

// Central and DLQ are the bus's own queues.
func (s *Stack) Central() *Queue { return s.Queues["kib-"+s.Name+"-central"] }

// DLQ is the dead-letter queue.
func (s *Stack) DLQ() *Queue { return s.Queues["kib-"+s.Name+"-dlq"] }

// Quarantine is the stack's quarantine queue, where the router keeps what it refuses.
func (s *Stack) Quarantine() *Queue { return s.Queues["kib-"+s.Name+"-quarantine"] }

// ClusterQueue is cluster's queue.
func (s *Stack) ClusterQueue(t *testing.T, cluster string) *Queue {
	t.Helper()
	q := s.Queues[s.ClusterQueues[cluster]]
	if q == nil {
		t.Fatalf("stack %s has no queue for cluster %s", s.Name, cluster)
	}
	return q
}

// Role returns the role named n.
func (s *Stack) Role(t *testing.T, n string) *Role {
	t.Helper()
	r := s.Roles[n]
	if r == nil {
		t.Fatalf("stack %s has no role %s", s.Name, n)
	}
	return r
}
