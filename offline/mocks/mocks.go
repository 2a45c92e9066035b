// Package mocks runs the program under the Pulumi Go SDK's mocks: it records every declared resource with its
// type, name, parent and inputs, answers the provider lookups (partition, region, account, service principals,
// EKS clusters), and gives resources the outputs AWS would (ARNs, URLs, names). The tests and the offline render
// (cmd/render) both use it.
package mocks

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/tokens"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/bucketowner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/concurrency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/providerrules"
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
	// URN is the resource's URN as the engine forms it (its parent's type chain, its type, its name): unique.
	URN    string
	Custom bool
	// Dependencies are the URNs of the resources it waits for (its dependsOn and the resources its inputs come
	// from), as the SDK registers them.
	Dependencies []string
	Inputs       resource.PropertyMap
	// RetainOnDelete: deleting the resource from the program leaves it in the cloud.
	RetainOnDelete bool
	// DeleteBeforeReplace: a replacement deletes (or, retained, forgets) the old resource first.
	DeleteBeforeReplace bool
	// ImportID is the ID of the existing resource the stack adopts instead of creating (the import option).
	ImportID string
	// IgnoreChanges are the inputs whose change the engine ignores (the ignoreChanges option).
	IgnoreChanges []string
	// Aliases are the logical names of its aliases ("" for an alias that keeps the name and changes the parent).
	Aliases []string
	// Account is the account the resource is declared in: its provider's (an AWS provider's allowed account),
	// the stack's for the default provider.
	Account string
}

// Mocks records resources; it implements pulumi.MockResourceMonitor. Its zero value is account 123456789012 in
// us-east-1, on a stack's first update.
type Mocks struct {
	configuredMu   sync.Mutex
	configuredText string
	configuredList []configuredCluster

	// Region and Account are where the stack deploys; the partition, DNS suffix and service principals follow
	// from the region, as AWS's would.
	Region, Account string
	// Organization is the Pulumi organization the backend gives the program ("" for a self-managed backend).
	Organization string
	// Update runs the program as pulumi up does; a preview (a dry run) otherwise.
	Update bool
	// Project and Stack name the stack when the SDK does not: a component a provider constructs under
	// pulumi-go-provider's fake engine is registered with no stack above it ("project" and "stack" unless set).
	Project, Stack string
	// Previous are the outputs of the stack's last update, which a stack reference to itself reads; nil on the
	// first update.
	Previous map[string]any
	// Stacks are the outputs of other stacks, by the name a stack reference gives (a shard's hub, the stack a
	// cluster was moved from); a reference to a stack not there reads Previous.
	Stacks map[string]map[string]any
	// SecretOutputs name the outputs of Previous and Stacks that are secrets.
	SecretOutputs []string

	// What the lookups find. The zero value is an AWS in which the stack's configuration holds: every EKS cluster
	// it names exists in the account it names, runs Kubernetes 1.33 with access entries enabled, has the Pod
	// Identity agent add-on, and an IRSA cluster's oidcProviderArn is its own OIDC provider; no account has the
	// EC2 Spot service-linked role yet. The fields below change that world, for tests of what the program does
	// when the configuration does not hold. The offline render assumes the zero value, since it cannot look.

	// Clusters overrides what aws:eks/getCluster answers for a cluster, field by field (empty fields keep the
	// defaults): its endpoint, CA, OIDC issuer, Kubernetes version, status, authentication mode.
	Clusters map[string]EKSCluster
	// MissingClusters do not exist: aws:eks/getClusters does not list them and aws:eks/getCluster fails.
	MissingClusters []string
	// NoPodIdentityAgent are clusters without the eks-pod-identity-agent add-on: aws:eks/getAddon fails.
	NoPodIdentityAgent []string
	// OIDCProviders overrides what aws:iam/getOpenIdConnectProvider answers by ARN; a provider with an empty URL
	// does not exist (the lookup fails). Without an entry, the provider exists, its URL taken from its ARN.
	OIDCProviders map[string]OIDCProvider
	// Buckets are the S3 buckets of the stack's account that exist without the stack: an archive an earlier deployment
	// retained on delete. aws:s3/getBucket finds them by name, and fails as the provider does for any other ("couldn't
	// find resource"); S3 answers them as the account's (ReadArchiveOwner).
	Buckets []string
	// ForeignBuckets are bucket names another account holds (S3's names are global), each letting anyone list it:
	// aws:s3/getBucket finds them as it finds the account's own, and S3 answers them as another account's
	// (ReadArchiveOwner, ExpectedBucketOwner).
	ForeignBuckets []string
	// Existing are EKS clusters of the stack's account besides the configured ones: the component package's
	// clusters, which a ClusterInterruption names in its arguments, not in the stack's configuration.
	Existing []string
	// SpotServiceLinkedRole lists the accounts where the EC2 Spot service-linked role (AWSServiceRoleForEC2Spot)
	// exists: aws:iam/getRoles finds it there.
	SpotServiceLinkedRole []string
	// Roles are IAM roles that exist without the stack ("<account> <name>"): what an earlier deployment retained on
	// delete. aws:iam/getRoles finds them by name.
	Roles []string
	// Config is the stack configuration whose clusters exist ("<namespace>:<key>" to value, as PULUMI_CONFIG
	// holds it); nil reads PULUMI_CONFIG, which the program reads too. A process that does not run the program
	// (the engine test's stand-in providers) is given it.
	Config map[string]string
	// Lambda is what Lambda's account settings say of the account's concurrency and of the router's function's
	// reservation (infra.Options.ReadConcurrency, ReadConcurrency below); nil: DefaultLambda.
	Lambda *concurrency.Account

	mu        sync.Mutex
	resources []Resource
	providers map[string]string // AWS provider name -> its account
}

func (m *Mocks) region() string { return cmp.Or(m.Region, DefaultRegion) }

// DefaultLambda is an account of Lambda's default quota, 1,000 concurrent executions, none of it reserved, and no
// router function yet: what the offline render assumes, since it cannot look. Lambda itself answers for the
// account it is asked in; the mocks answer this for every account, and the program's check refuses what Lambda
// would (infra/concurrency).
var DefaultLambda = concurrency.Account{Limit: 1000, Unreserved: 1000}

// ReadConcurrency answers as Lambda's GetAccountSettings and GetFunctionConcurrency would in m's world, read in m's
// account (a nil m's is not known: the offline render's world has no account of its own).
func (m *Mocks) ReadConcurrency(context.Context, string, concurrency.Identity, string) (concurrency.Account, error) {
	if m == nil {
		return DefaultLambda, nil
	}
	a := DefaultLambda
	if m.Lambda != nil {
		a = *m.Lambda
	}
	if a.Caller == "" {
		a.Caller = m.account()
	}
	return a, nil
}

func (m *Mocks) account() string { return cmp.Or(m.Account, DefaultAccount) }

// ReadArchiveOwner answers as S3's HeadBucket would in m's world, asked with the account as the bucket's expected owner
// (infra/bucketowner): a bucket of ForeignBuckets is another account's, one of Buckets the account's own (when the
// account asked is m's), any other missing. A nil m's world is not known (the offline render cannot look): nothing is
// checked, and the provider's lookup decides, as it answers in the render.
func (m *Mocks) ReadArchiveOwner(_ context.Context, _ string, _ concurrency.Identity, bucket, account string) (bucketowner.Answer, error) {
	switch {
	case m == nil:
		return bucketowner.NotChecked, nil
	case slices.Contains(m.ForeignBuckets, bucket), slices.Contains(m.Buckets, bucket) && account != m.account():
		return bucketowner.Foreign, nil
	case slices.Contains(m.Buckets, bucket):
		return bucketowner.Owned, nil
	}
	return bucketowner.Missing, nil
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
	// Version is its Kubernetes version (1.33 by default), Status its status (ACTIVE), AuthenticationMode its
	// access configuration's (API_AND_CONFIG_MAP).
	Version, Status, AuthenticationMode string
	// Bare is a cluster described without its certificate authority's data and its OIDC identity, which EKS fills
	// in once the cluster is created: the provider's lookup then answers empty lists. NoOIDC is a cluster whose
	// identity block holds no OIDC entry (an empty oidcs list), as the provider answers when EKS omits it.
	Bare, NoOIDC bool
}

// OIDCProvider is what aws:iam/getOpenIdConnectProvider returns: the provider's URL (its issuer without
// https://) and its audiences (sts.amazonaws.com when none are given).
type OIDCProvider struct {
	URL       string
	Audiences []string
}

var _ pulumi.MockResourceMonitor = (*Mocks)(nil)

// Run runs program as a preview (a dry run: what the engine cannot know yet stays unknown), or as an update with
// m.Update, of project's stack under m, reading its configuration from PULUMI_CONFIG, and returns m.
func (m *Mocks) Run(project, stack string, program pulumi.RunFunc) (*Mocks, error) {
	preview := func(info *pulumi.RunInfo) { info.DryRun = !m.Update }
	return m, pulumi.RunErr(program, pulumi.WithMocksWithOrganization(m.Organization, project, stack, m), preview)
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
	r.URN = fmt.Sprintf("urn:pulumi:stack::project::%s::%s", args.TypeToken, args.Name)
	if rpc := args.RegisterRPC; rpc != nil {
		r.Parent = nameOfURN(rpc.GetParent())
		r.RetainOnDelete = rpc.GetRetainOnDelete()
		r.DeleteBeforeReplace = rpc.GetDeleteBeforeReplace()
		r.ImportID = rpc.GetImportId()
		r.IgnoreChanges = rpc.GetIgnoreChanges()
		for _, a := range rpc.GetAliases() { // as specs, or as URNs where the monitor takes no specs
			if spec := a.GetSpec(); spec != nil {
				r.Aliases = append(r.Aliases, spec.GetName())
			} else if u := a.GetUrn(); u != "" {
				r.Aliases = append(r.Aliases, nameOfURN(u))
			}
		}
		for _, u := range rpc.GetAliasURNs() {
			r.Aliases = append(r.Aliases, nameOfURN(u))
		}
		r.URN = string(m.urnOf(resource.URN(rpc.GetParent()), args.TypeToken, args.Name))
		deps := map[string]bool{}
		for _, d := range rpc.GetDependencies() {
			deps[d] = true
		}
		for _, pd := range rpc.GetPropertyDependencies() {
			for _, d := range pd.GetUrns() {
				deps[d] = true
			}
		}
		r.Dependencies = slices.Sorted(maps.Keys(deps))
	}
	r.Account = m.accountOf(args.Provider)
	// What the real provider's Check refuses, at a preview as at an update, the mocks refuse too.
	if err := providerrules.Refuse(args.TypeToken, args.Name, args.Inputs); err != nil {
		return "", nil, err
	}

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
		outputs := m.Previous
		if o, ok := m.Stacks[args.Inputs["name"].StringValue()]; ok {
			outputs = o
		}
		outs := resource.NewPropertyMapFromMap(outputs)
		var secret []any
		for _, k := range m.SecretOutputs {
			if v, ok := outs[resource.PropertyKey(k)]; ok {
				outs[resource.PropertyKey(k)], secret = resource.MakeSecret(v), append(secret, k)
			}
		}
		return args.Name, resource.PropertyMap{
			"name": args.Inputs["name"], "outputs": resource.NewObjectProperty(outs),
			"secretOutputNames": resource.NewPropertyValue(secret),
		}, nil
	}
	id, outs := m.Outputs(args.TypeToken, args.Name, args.Custom, args.Inputs, r.Account)
	return id, outs, nil
}

// Outputs are the ID and outputs AWS gives a resource of type typ named name (its logical name, the physical
// one when its inputs have none) with inputs, created in account: its inputs, its name, and its ARN, URL or
// other computed outputs in AWS's formats.
func (m *Mocks) Outputs(typ, name string, custom bool, inputs resource.PropertyMap, account string) (string, resource.PropertyMap) {
	region := m.region()
	partition, suffix := Partition(region)
	arn := func(svc, res string) string {
		return fmt.Sprintf("arn:%s:%s:%s:%s:%s", partition, svc, region, account, res)
	}
	outs := inputs.Copy()
	// What the provider's schema defaults, it answers for a property the inputs leave unset (a queue's size, say).
	for k, v := range providerrules.Defaults[typ] {
		if _, ok := outs[resource.PropertyKey(k)]; !ok {
			outs[resource.PropertyKey(k)] = resource.NewPropertyValue(v)
		}
	}
	if v, ok := inputs["name"]; ok && v.IsString() {
		name = v.StringValue()
	} else {
		outs["name"] = resource.NewStringProperty(name)
	}
	id := awsID(typ, name, inputs)
	set := func(k, v string) { outs[resource.PropertyKey(k)] = resource.NewStringProperty(v) }
	switch typ {
	case "aws:sqs/queue:Queue":
		set("arn", arn("sqs", name))
		set("url", fmt.Sprintf("https://sqs.%s.%s/%s/%s", region, suffix, account, name))
		id = outs["url"].StringValue()
	case "aws:iam/role:Role":
		set("arn", fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, account, name))
	case "aws:iam/serviceLinkedRole:ServiceLinkedRole":
		svc := "spot.amazonaws.com"
		if v, ok := inputs["awsServiceName"]; ok && v.IsString() {
			svc = v.StringValue()
		}
		set("arn", fmt.Sprintf("arn:%s:iam::%s:role/aws-service-role/%s/AWSServiceRoleForEC2Spot", partition, account, svc))
		set("path", "/aws-service-role/"+svc+"/")
		id = outs["arn"].StringValue()
	case "aws:iam/policy:Policy":
		set("arn", fmt.Sprintf("arn:%s:iam::%s:policy/%s", partition, account, name))
	case "aws:sns/topic:Topic":
		set("arn", arn("sns", name))
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
		if g, ok := inputs["groupName"]; ok && g.IsString() {
			group = g.StringValue()
		}
		set("arn", arn("scheduler", "schedule/"+group+"/"+name))
	case "aws:kms/key:Key":
		// KMS names a key by an ID it chooses (a UUID): one derived from the logical name keeps renders stable.
		keyID := uuidOf(account + "/" + name)
		set("keyId", keyID)
		set("arn", arn("kms", "key/"+keyID))
		id = keyID
	case "aws:kms/alias:Alias":
		set("arn", arn("kms", str(inputs, "name")))
	case "aws:s3/bucketV2:BucketV2":
		// The provider completes a bucketPrefix with a unique suffix of 26 digits (a time and a counter): one derived
		// from the logical name keeps renders stable. Bucket ARNs name neither region nor account.
		bucket := str(inputs, "bucket")
		if bucket == "" {
			bucket = str(inputs, "bucketPrefix") + digitsOf(account+"/"+name, 26)
		}
		set("bucket", bucket)
		set("arn", "arn:"+partition+":s3:::"+bucket)
		id = bucket
	case "aws:eks/podIdentityAssociation:PodIdentityAssociation":
		_, assoc, _ := strings.Cut(id, ",")
		set("associationId", assoc)
		set("associationArn", arn("eks", "podidentityassociation/"+str(inputs, "clusterName")+"/"+assoc))
	case "aws:eks/cluster:Cluster":
		// What EKS gives a new cluster, as getCluster answers for one (the engine test's eks stand-in creates it).
		c := m.cluster(name, region, suffix)
		set("arn", arn("eks", "cluster/"+name))
		set("endpoint", c.Endpoint)
		outs["certificateAuthority"] = resource.NewObjectProperty(resource.NewPropertyMapFromMap(map[string]any{"data": c.CertificateAuthority}))
		outs["identities"] = resource.NewPropertyValue([]any{map[string]any{"oidcs": []any{map[string]any{"issuer": c.OIDCIssuer}}}})
		outs["vpcConfig"] = resource.NewPropertyValue(map[string]any{"clusterSecurityGroupId": "sg-0mock-" + name, "vpcId": "vpc-0mock"})
	case "eks:index:Cluster":
		// pulumi-eks's outputs refer to the resources it creates inside its component, which a mock cannot
		// create: they stay unknown, as in a preview of a new cluster.
		for _, k := range []resource.PropertyKey{"eksCluster", "core", "kubeconfig", "kubeconfigJson"} {
			outs[k] = resource.MakeComputed(resource.NewStringProperty(""))
		}
	default:
		if _, ok := outs["arn"]; !ok && custom {
			set("arn", arn(service(typ), name))
		}
	}
	return id, outs
}

// uuidOf is a UUID-shaped ID derived from s.
func uuidOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:16])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// digitsOf is n decimal digits derived from s.
func digitsOf(s string, n int) string {
	sum := sha256.Sum256([]byte(s))
	out := make([]byte, n)
	for i := range out {
		out[i] = '0' + sum[i%len(sum)]%10
	}
	return string(out)
}

func str(in resource.PropertyMap, k resource.PropertyKey) string {
	if v, ok := in[k]; ok && v.IsString() {
		return v.StringValue()
	}
	return ""
}

// awsID is the ID the AWS provider gives a resource of type typ named name with inputs, in its format (the
// Terraform provider's): unique where AWS's names are, in an account and region (a role policy's name is unique
// per role, a target's per rule); a hash of the inputs stands in for what AWS generates.
func awsID(typ, name string, inputs resource.PropertyMap) string {
	str := func(k resource.PropertyKey) string {
		if v, ok := inputs[k]; ok && v.IsString() {
			return v.StringValue()
		}
		return ""
	}
	digest := func() string {
		b, _ := json.Marshal(inputs.Mappable())
		sum := sha256.Sum256(b)
		return hex.EncodeToString(sum[:8])
	}
	switch typ {
	case "aws:iam/rolePolicy:RolePolicy":
		return str("role") + ":" + name
	case "aws:iam/rolePolicyAttachment:RolePolicyAttachment":
		return str("role") + "-" + digest()
	case "aws:cloudwatch/eventTarget:EventTarget":
		return str("rule") + "-" + str("targetId")
	case "aws:sqs/queuePolicy:QueuePolicy":
		return str("queueUrl")
	case "aws:eks/accessEntry:AccessEntry":
		return str("clusterName") + ":" + str("principalArn")
	case "aws:eks/podIdentityAssociation:PodIdentityAssociation":
		return str("clusterName") + ",a-" + digest()
	case "aws:eks/addon:Addon":
		return str("clusterName") + ":" + str("addonName")
	case "aws:lambda/eventSourceMapping:EventSourceMapping", "aws:lambda/permission:Permission":
		return digest()
	case "aws:scheduler/schedule:Schedule":
		return cmp.Or(str("groupName"), "default") + "/" + name
	case "kubernetes:helm.sh/v3:Release":
		return cmp.Or(str("namespace"), "default") + "/" + name
	case "aws:s3/bucketVersioningV2:BucketVersioningV2", "aws:s3/bucketObjectLockConfigurationV2:BucketObjectLockConfigurationV2",
		"aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
		"aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "aws:s3/bucketPolicy:BucketPolicy":
		// A bucket's settings are named by their bucket, as the provider imports them.
		return cmp.Or(str("bucket"), name)
	}
	return name
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
	return m.Answer(args.Token, args.Args, m.accountOf(args.Provider))
}

// Answer answers the provider function token called with args through a provider of account caller.
func (m *Mocks) Answer(token string, args resource.PropertyMap, caller string) (resource.PropertyMap, error) {
	region, account := m.region(), m.account()
	partition, suffix := Partition(region)
	arn := func(svc, res string) string {
		return fmt.Sprintf("arn:%s:%s:%s:%s:%s", partition, svc, region, account, res)
	}
	switch token {
	case "aws:index/getCallerIdentity:getCallerIdentity":
		return resource.NewPropertyMapFromMap(map[string]any{
			"accountId": caller, "arn": fmt.Sprintf("arn:%s:iam::%s:user/render", partition, caller), "userId": "AIDRENDER", "id": caller,
		}), nil
	case "aws:index/getPartition:getPartition":
		return resource.NewPropertyMapFromMap(map[string]any{
			"partition": partition, "dnsSuffix": suffix, "id": partition, "reverseDnsPrefix": "com.amazonaws",
		}), nil
	case "aws:index/getRegion:getRegion":
		return resource.NewPropertyMapFromMap(map[string]any{"name": region, "id": region, "description": region, "endpoint": "ec2." + region + "." + suffix}), nil
	case "aws:index/getServicePrincipal:getServicePrincipal":
		svc := args["serviceName"].StringValue()
		name := ServicePrincipal(svc, region)
		return resource.NewPropertyMapFromMap(map[string]any{
			"name": name, "id": svc + "." + region + "." + suffix, "serviceName": svc, "region": region,
			"suffix": strings.TrimPrefix(name, svc+"."),
		}), nil
	case "aws:s3/getBucket:getBucket":
		// The provider's data source reads a bucket with HeadBucket and answers a missing one with its not-found error
		// (terraform-provider-aws, internal/service/s3/bucket_data_source.go, findBucket: retry.NotFoundError).
		name := args["bucket"].StringValue()
		if !slices.Contains(m.Buckets, name) && !slices.Contains(m.ForeignBuckets, name) {
			return nil, fmt.Errorf("reading S3 Bucket (%s): couldn't find resource", name)
		}
		return resource.NewPropertyMapFromMap(map[string]any{
			"id": name, "bucket": name, "arn": "arn:" + partition + ":s3:::" + name, "region": region,
			"bucketDomainName": name + ".s3.amazonaws.com", "bucketRegionalDomainName": name + ".s3." + region + "." + suffix,
		}), nil
	case "aws:eks/getClusters:getClusters":
		var names []any
		for _, c := range m.configured() {
			if c.account(m.account()) == caller && !slices.Contains(m.MissingClusters, c.Name) {
				names = append(names, c.Name)
			}
		}
		if caller == m.account() {
			for _, n := range m.Existing {
				if !slices.Contains(m.MissingClusters, n) {
					names = append(names, n)
				}
			}
		}
		return resource.NewPropertyMapFromMap(map[string]any{"id": region, "names": names}), nil
	case "aws:eks/getCluster:getCluster":
		name := args["name"].StringValue()
		if slices.Contains(m.MissingClusters, name) {
			return nil, fmt.Errorf("reading EKS Cluster (%s): couldn't find resource", name)
		}
		c := m.cluster(name, region, suffix)
		account := caller
		return resource.NewPropertyMapFromMap(map[string]any{
			"name": name, "id": name, "arn": fmt.Sprintf("arn:%s:eks:%s:%s:cluster/%s", partition, region, account, name), "endpoint": c.Endpoint,
			"certificateAuthorities": bare(c.Bare, []any{map[string]any{"data": c.CertificateAuthority}}),
			"identities":             bare(c.Bare, []any{map[string]any{"oidcs": bare(c.NoOIDC, []any{map[string]any{"issuer": c.OIDCIssuer}})}}),
			"version":                c.Version, "status": c.Status, "roleArn": fmt.Sprintf("arn:%s:iam::%s:role/%s-cluster", partition, account, name),
			"vpcConfig":     map[string]any{"vpcId": "vpc-0mock", "subnetIds": []any{"subnet-0mock1", "subnet-0mock2"}, "clusterSecurityGroupId": "sg-0mock-" + name},
			"accessConfigs": []any{map[string]any{"authenticationMode": c.AuthenticationMode}},
		}), nil
	case "aws:eks/getAddon:getAddon":
		cluster, addon := args["clusterName"].StringValue(), args["addonName"].StringValue()
		if addon != "eks-pod-identity-agent" || slices.Contains(m.NoPodIdentityAgent, cluster) || slices.Contains(m.MissingClusters, cluster) {
			return nil, fmt.Errorf("reading EKS Add-On (%s:%s): couldn't find resource", cluster, addon)
		}
		return resource.NewPropertyMapFromMap(map[string]any{
			"id": cluster + ":" + addon, "addonName": addon, "clusterName": cluster, "addonVersion": "v1.3.8-eksbuild.2",
			"arn": arn("eks", "addon/"+cluster+"/"+addon+"/mock"),
		}), nil
	case "aws:iam/getOpenIdConnectProvider:getOpenIdConnectProvider":
		providerARN := args["arn"].StringValue()
		p, ok := m.OIDCProviders[providerARN]
		if !ok {
			_, url, _ := strings.Cut(providerARN, ":oidc-provider/")
			p = OIDCProvider{URL: url}
		}
		if p.URL == "" {
			return nil, fmt.Errorf("reading IAM OIDC Provider (%s): couldn't find resource", providerARN)
		}
		audiences := p.Audiences
		if audiences == nil {
			audiences = []string{"sts.amazonaws.com"}
		}
		return resource.NewPropertyMapFromMap(map[string]any{
			"id": providerARN, "arn": providerARN, "url": p.URL, "clientIdLists": toAny(audiences), "thumbprintLists": []any{},
		}), nil
	case "aws:iam/getRoles:getRoles":
		account := caller
		var arns, names []any
		const spotRolePath = "/aws-service-role/spot.amazonaws.com/"
		if path := args["pathPrefix"]; path.IsString() && strings.HasPrefix(spotRolePath, path.StringValue()) &&
			slices.Contains(m.SpotServiceLinkedRole, account) {
			arns = append(arns, fmt.Sprintf("arn:%s:iam::%s:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot", partition, account))
			names = append(names, "AWSServiceRoleForEC2Spot")
		}
		if re := args["nameRegex"]; re.IsString() && !args["pathPrefix"].IsString() {
			match, err := regexp.Compile(re.StringValue())
			if err != nil {
				return nil, err
			}
			for _, r := range m.Roles {
				if a, name, _ := strings.Cut(r, " "); a == account && match.MatchString(name) {
					arns = append(arns, fmt.Sprintf("arn:%s:iam::%s:role/%s", partition, account, name))
					names = append(names, name)
				}
			}
		}
		return resource.NewPropertyMapFromMap(map[string]any{"id": account, "arns": arns, "names": names}), nil
	}
	return nil, fmt.Errorf("mocks: no answer for %s", token)
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

// configuredCluster is what the mocks read of a cluster entry of the stack's configuration.
type configuredCluster struct {
	Name            string `json:"name"`
	Account         string `json:"account"`
	OIDCProviderARN string `json:"oidcProviderArn"`
}

func (c configuredCluster) account(stack string) string {
	if c.Account == "" {
		return stack
	}
	return c.Account
}

// configured are the clusters of the stack's configuration (PULUMI_CONFIG, which the program reads too): the
// world the mocks answer for unless told otherwise. A configuration the program will refuse yields none.
func (m *Mocks) configured() []configuredCluster {
	// Every lookup of a cluster asks: decoded once per configuration, not once per lookup, which made a render
	// quadratic in the clusters (BenchmarkRenderFleet).
	m.configuredMu.Lock()
	defer m.configuredMu.Unlock()
	key := os.Getenv(pulumi.EnvConfig)
	if m.Config != nil {
		key = m.Config[config.Namespace+":clusters"]
	}
	if m.configuredList != nil && m.configuredText == key {
		return m.configuredList
	}
	text := key
	if m.Config == nil {
		var all map[string]string
		_ = json.Unmarshal([]byte(key), &all)
		text = all[config.Namespace+":clusters"]
	}
	m.configuredList = []configuredCluster{}
	_ = json.Unmarshal([]byte(text), &m.configuredList)
	m.configuredText = key
	return m.configuredList
}

// cluster is what getCluster answers for name: the overrides of Clusters over the defaults.
func (m *Mocks) cluster(name, region, suffix string) EKSCluster {
	c := EKSCluster{
		Endpoint:             fmt.Sprintf("https://%s.gr7.%s.eks.%s", strings.ToUpper(name), region, suffix),
		CertificateAuthority: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1PQ0sKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=",
		OIDCIssuer:           fmt.Sprintf("https://oidc.eks.%s.%s/id/%s", region, suffix, strings.ToUpper(name)),
		Version:              "1.33", Status: "ACTIVE", AuthenticationMode: "API_AND_CONFIG_MAP",
	}
	for _, cc := range m.configured() {
		if _, url, ok := strings.Cut(cc.OIDCProviderARN, ":oidc-provider/"); ok && cc.Name == name {
			c.OIDCIssuer = "https://" + url // its configured provider is its own
		}
	}
	o := m.Clusters[name]
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&c.Endpoint, o.Endpoint}, {&c.CertificateAuthority, o.CertificateAuthority}, {&c.OIDCIssuer, o.OIDCIssuer},
		{&c.Version, o.Version}, {&c.Status, o.Status}, {&c.AuthenticationMode, o.AuthenticationMode},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	c.Bare, c.NoOIDC = o.Bare, o.NoOIDC
	return c
}

func toAny(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// urnOf is the URN the engine gives a resource of type typ named name under parent (the stack's children carry
// no parent type).
func (m *Mocks) urnOf(parent resource.URN, typ, name string) resource.URN {
	if !parent.IsValid() { // a component a provider constructs, under the engine's fake monitor: no stack above
		return resource.NewURN(tokens.QName(cmp.Or(m.Stack, "stack")), tokens.PackageName(cmp.Or(m.Project, "project")), "", tokens.Type(typ), name)
	}
	var parentType tokens.Type
	if parent.IsValid() && parent.QualifiedType() != resource.RootStackType {
		parentType = parent.QualifiedType()
	}
	return resource.NewURN(parent.Stack(), parent.Project(), parentType, tokens.Type(typ), name)
}

// bare is list, or an empty list for a bare cluster (EKSCluster.Bare).
func bare(isBare bool, list []any) []any {
	if isBare {
		return []any{}
	}
	return list
}
