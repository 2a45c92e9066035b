// Package mocks runs the program under the Pulumi Go SDK's mocks: it records every declared resource with its
// type, name, parent and inputs, answers the provider lookups (partition, region, account, service principals,
// EKS clusters), and gives resources the outputs AWS would (ARNs, URLs, names). The tests and the offline render
// (cmd/render) both use it.
package mocks

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

// The environment the mocks pretend to be unless told otherwise.
const (
	DefaultRegion  = "us-east-1"
	DefaultAccount = "123456789012"
)

// Resource is one declared resource.
type Resource struct {
	Type, Name string
	// Parent is the parent's logical name, "" for the stack itself.
	Parent string
	URN    string
	Custom bool
	Inputs resource.PropertyMap
	// RetainOnDelete: deleting the resource from the program leaves it in the cloud.
	RetainOnDelete bool
	// DeleteBeforeReplace: a replacement deletes (or, retained, forgets) the old resource first.
	DeleteBeforeReplace bool
	// Account is the account the resource is declared in: its provider's (an AWS provider's allowed account),
	// the stack's for the default provider.
	Account string
}

// Mocks records resources; it implements pulumi.MockResourceMonitor. Its zero value is account 123456789012 in
// us-east-1, on a stack's first update.
type Mocks struct {
	// Region and Account are where the stack deploys; the partition, DNS suffix and service principals follow
	// from the region, as AWS's would.
	Region, Account string
	// Clusters answers aws:eks/getCluster lookups: name -> endpoint, CA and OIDC issuer (made up when absent).
	Clusters map[string]EKSCluster
	// Previous are the outputs of the stack's last update, which a stack reference to itself reads; nil on the
	// first update.
	Previous map[string]any

	mu        sync.Mutex
	resources []Resource
	providers map[string]string // AWS provider name -> its account
}

func (m *Mocks) region() string {
	if m.Region == "" {
		return DefaultRegion
	}
	return m.Region
}

func (m *Mocks) account() string {
	if m.Account == "" {
		return DefaultAccount
	}
	return m.Account
}

// Partition is the partition of region, and its DNS suffix.
func Partition(region string) (partition, dnsSuffix string) {
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "aws-cn", "amazonaws.com.cn"
	case strings.HasPrefix(region, "us-gov-"):
		return "aws-us-gov", "amazonaws.com"
	default:
		return "aws", "amazonaws.com"
	}
}

// ServicePrincipal is what aws:index/getServicePrincipal answers for service in region: most services keep
// "<service>.amazonaws.com" everywhere, a few take their partition's DNS suffix (the AWS provider's table).
func ServicePrincipal(service, region string) string {
	partition, suffix := Partition(region)
	if partition == "aws-cn" && slices.Contains([]string{"codedeploy", "elasticmapreduce", "logs", "ec2", "s3"}, service) {
		return service + "." + suffix
	}
	return service + ".amazonaws.com"
}

// EKSCluster is what aws:eks/getCluster returns for a cluster.
type EKSCluster struct {
	Endpoint, CertificateAuthority, OIDCIssuer string
}

var _ pulumi.MockResourceMonitor = (*Mocks)(nil)

// Run runs program as a preview (a dry run: what the engine cannot know yet stays unknown) of project's stack
// under m, reading its configuration from PULUMI_CONFIG, and returns m.
func (m *Mocks) Run(project, stack string, program pulumi.RunFunc) (*Mocks, error) {
	preview := func(info *pulumi.RunInfo) { info.DryRun = true }
	return m, pulumi.RunErr(program, pulumi.WithMocks(project, stack, m), preview)
}

// Resources returns what was declared, in declaration order.
func (m *Mocks) Resources() []Resource {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Resource(nil), m.resources...)
}

// NewResource records a resource and returns its id and the outputs AWS would compute.
func (m *Mocks) NewResource(args pulumi.MockResourceArgs) (string, resource.PropertyMap, error) {
	r := Resource{Type: args.TypeToken, Name: args.Name, Custom: args.Custom, Inputs: args.Inputs}
	if rpc := args.RegisterRPC; rpc != nil {
		r.Parent = nameOfURN(rpc.GetParent())
		r.RetainOnDelete = rpc.GetRetainOnDelete()
		r.DeleteBeforeReplace = rpc.GetDeleteBeforeReplace()
	}
	r.URN = fmt.Sprintf("urn:pulumi:stack::project::%s::%s", args.TypeToken, args.Name)
	r.Account = m.accountOf(args.Provider)

	if args.TypeToken == "pulumi:providers:aws" {
		if ids := args.Inputs["allowedAccountIds"]; ids.IsArray() && len(ids.ArrayValue()) == 1 {
			r.Account = ids.ArrayValue()[0].StringValue()
		}
		m.mu.Lock()
		if m.providers == nil {
			m.providers = map[string]string{}
		}
		m.providers[args.Name] = r.Account
		m.mu.Unlock()
	}
	m.mu.Lock()
	m.resources = append(m.resources, r)
	m.mu.Unlock()

	if args.TypeToken == "pulumi:pulumi:StackReference" { // read, not created
		return args.Name, resource.NewPropertyMapFromMap(map[string]any{
			"name": args.Inputs["name"], "outputs": m.Previous, "secretOutputNames": []any{},
		}), nil
	}
	region, account := m.region(), r.Account
	partition, suffix := Partition(region)
	arn := func(svc, res string) string {
		return fmt.Sprintf("arn:%s:%s:%s:%s:%s", partition, svc, region, account, res)
	}
	outs := args.Inputs.Copy()
	name := args.Name
	if v, ok := args.Inputs["name"]; ok && v.IsString() {
		name = v.StringValue()
	} else {
		outs["name"] = resource.NewStringProperty(name)
	}
	id := name + "-id"
	set := func(k, v string) { outs[resource.PropertyKey(k)] = resource.NewStringProperty(v) }
	switch args.TypeToken {
	case "aws:sqs/queue:Queue":
		set("arn", arn("sqs", name))
		set("url", fmt.Sprintf("https://sqs.%s.%s/%s/%s", region, suffix, account, name))
		id = outs["url"].StringValue()
	case "aws:iam/role:Role":
		set("arn", fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, account, name))
	case "aws:iam/policy:Policy":
		set("arn", fmt.Sprintf("arn:%s:iam::%s:policy/%s", partition, account, name))
	case "aws:lambda/function:Function":
		set("arn", arn("lambda", "function:"+name))
	case "aws:cloudwatch/eventRule:EventRule":
		set("arn", arn("events", "rule/"+name))
	case "aws:cloudwatch/logGroup:LogGroup":
		set("arn", arn("logs", "log-group:"+name))
	case "aws:cloudwatch/metricAlarm:MetricAlarm":
		set("arn", arn("cloudwatch", "alarm:"+name))
	case "aws:scheduler/scheduleGroup:ScheduleGroup":
		set("arn", arn("scheduler", "schedule-group/"+name))
	case "aws:scheduler/schedule:Schedule":
		group := "default"
		if g, ok := args.Inputs["groupName"]; ok && g.IsString() {
			group = g.StringValue()
		}
		set("arn", arn("scheduler", "schedule/"+group+"/"+name))
	case "eks:index:Cluster":
		// pulumi-eks's outputs refer to the resources it creates inside its component, which a mock cannot
		// create: they stay unknown, as in a preview of a new cluster.
		for _, k := range []resource.PropertyKey{"eksCluster", "core", "kubeconfig", "kubeconfigJson"} {
			outs[k] = resource.MakeComputed(resource.NewStringProperty(""))
		}
	default:
		if _, ok := outs["arn"]; !ok && args.Custom {
			set("arn", arn(service(args.TypeToken), name))
		}
	}
	return id, outs, nil
}

// accountOf is the account of the provider reference ref ("<URN>::<ID>", the URN ending in the provider's
// name): the stack's for the default provider.
func (m *Mocks) accountOf(ref string) string {
	if i := strings.LastIndex(ref, "::"); i > 0 {
		urn := ref[:i]
		name := urn[strings.LastIndex(urn, "::")+2:]
		m.mu.Lock()
		defer m.mu.Unlock()
		if a, ok := m.providers[name]; ok {
			return a
		}
	}
	return m.account()
}

// Call answers provider functions (invokes).
func (m *Mocks) Call(args pulumi.MockCallArgs) (resource.PropertyMap, error) {
	region, account := m.region(), m.account()
	partition, suffix := Partition(region)
	arn := func(svc, res string) string {
		return fmt.Sprintf("arn:%s:%s:%s:%s:%s", partition, svc, region, account, res)
	}
	switch args.Token {
	case "aws:index/getCallerIdentity:getCallerIdentity":
		return resource.NewPropertyMapFromMap(map[string]any{
			"accountId": account, "arn": fmt.Sprintf("arn:%s:iam::%s:user/render", partition, account), "userId": "AIDRENDER", "id": account,
		}), nil
	case "aws:index/getPartition:getPartition":
		return resource.NewPropertyMapFromMap(map[string]any{
			"partition": partition, "dnsSuffix": suffix, "id": partition, "reverseDnsPrefix": "com.amazonaws",
		}), nil
	case "aws:index/getRegion:getRegion":
		return resource.NewPropertyMapFromMap(map[string]any{"name": region, "id": region, "description": region, "endpoint": "ec2." + region + "." + suffix}), nil
	case "aws:index/getServicePrincipal:getServicePrincipal":
		svc := args.Args["serviceName"].StringValue()
		name := ServicePrincipal(svc, region)
		return resource.NewPropertyMapFromMap(map[string]any{
			"name": name, "id": svc + "." + region + "." + suffix, "serviceName": svc, "region": region,
			"suffix": strings.TrimPrefix(name, svc+"."),
		}), nil
	case "aws:eks/getCluster:getCluster":
		name := args.Args["name"].StringValue()
		c, ok := m.Clusters[name]
		if !ok {
			c = EKSCluster{
				Endpoint:             fmt.Sprintf("https://%s.gr7.%s.eks.%s", strings.ToUpper(name), region, suffix),
				CertificateAuthority: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1PQ0sKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=",
				OIDCIssuer:           fmt.Sprintf("https://oidc.eks.%s.%s/id/%s", region, suffix, strings.ToUpper(name)),
			}
		}
		return resource.NewPropertyMapFromMap(map[string]any{
			"name": name, "id": name, "arn": arn("eks", "cluster/"+name), "endpoint": c.Endpoint,
			"certificateAuthorities": []any{map[string]any{"data": c.CertificateAuthority}},
			"identities":             []any{map[string]any{"oidcs": []any{map[string]any{"issuer": c.OIDCIssuer}}}},
			"version":                "1.33", "status": "ACTIVE", "roleArn": fmt.Sprintf("arn:%s:iam::%s:role/%s-cluster", partition, account, name),
			"vpcConfig":     map[string]any{"vpcId": "vpc-0mock", "subnetIds": []any{"subnet-0mock1", "subnet-0mock2"}, "clusterSecurityGroupId": "sg-0mock-" + name},
			"accessConfigs": []any{map[string]any{"authenticationMode": "API_AND_CONFIG_MAP"}},
		}), nil
	}
	return nil, fmt.Errorf("mocks: no answer for %s", args.Token)
}

// service is the AWS service of a type token such as aws:fis/experimentTemplate:ExperimentTemplate.
func service(token string) string {
	parts := strings.Split(token, ":")
	if len(parts) < 2 {
		return "unknown"
	}
	return strings.Split(parts[1], "/")[0]
}

// nameOfURN is the logical name in urn; the stack itself, the root of everything, is "".
func nameOfURN(urn string) string {
	if urn == "" || strings.Contains(urn, "::pulumi:pulumi:Stack::") {
		return ""
	}
	i := strings.LastIndex(urn, "::")
	if i < 0 {
		return urn
	}
	return urn[i+2:]
}
