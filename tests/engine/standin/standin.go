// Package standin is a stand-in for the resource providers the program uses (aws, eks, kubernetes), speaking
// Pulumi's provider gRPC protocol (pulumirpc.ResourceProviderServer) to the real engine, so that the real Pulumi
// CLI can preview, update, import and destroy the program's stacks on a machine with no AWS account. The real
// providers cannot be built here (pulumi-aws's provider module replaces terraform-provider-aws with a local
// directory), and could not reach AWS if they could.
//
// One fake AWS serves the mocks and the stand-ins alike: lookups (Invoke) are answered by mocks.Mocks.Answer and
// computed outputs (IDs, ARNs, URLs) by mocks.Mocks.Outputs, from the world a test writes to a file (WorldEnv).
// Resources live in a directory (StateEnv), one file each, so every plugin process the engine starts (one per
// provider resource and operation) sees the same cloud, and a test sees what is left after destroy.
//
// What AWS refuses of names, they refuse too (uniqueKey): a create whose name AWS keeps unique and already holds,
// in the scope AWS keeps it, whether the stack or a stack before it (a resource retained on delete stays in the
// store, as it stays in AWS), and an SQS queue's name deleted less than 60 seconds ago.
//
// What the real providers do that these do not:
//   - validate inputs against AWS's own rules (policy grammar and size, quotas, what only the API refuses): Check
//     applies the providers' own validations (offline/providerrules: pulumi-aws's, transcribed from the Terraform
//     provider it bundles, and pulumi-eks's), and the program's own checks (config, quota) do the rest;
//   - call AWS, with its eventual consistency (IAM's above all), throttling, retries and API errors: every
//     operation succeeds at once, but for Read of a resource that is not there;
//   - compute a diff from each property's schema (ForceNew, defaults, normalised JSON): Diff compares inputs, and
//     replaces on a change of a property named in forceNew, the ones pulumi-aws marks ForceNew for the resources
//     the program declares;
//   - create what pulumi-eks creates inside its components (security groups, roles, the aws-auth map, the
//     Kubernetes provider): the eks stand-in constructs the component with the one AWS resource the program reads
//     (the EKS cluster, or the node group);
//   - install a Helm chart: a kubernetes release is a record of its inputs.
package standin

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/common/resource"
	"github.com/pulumi/pulumi/sdk/v3/go/common/resource/plugin"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	pprovider "github.com/pulumi/pulumi/sdk/v3/go/pulumi/provider"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/mocks"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/providerrules"
)

// The environment a stand-in reads: the world's file (a JSON World) and the state directory.
const (
	WorldEnv = "KIB_STANDIN_WORLD"
	StateEnv = "KIB_STANDIN_STATE"
)

// World is the fake AWS the stand-ins answer for: the mocks' world (region, account, clusters, Spot roles, the
// stack configuration whose clusters exist).
type World struct {
	Region                string   `json:"region"`
	Account               string   `json:"account"`
	Existing              []string `json:"existing,omitempty"`
	SpotServiceLinkedRole []string `json:"spotServiceLinkedRole,omitempty"`
	// Roles are IAM roles that exist besides the store's ("<account> <name>").
	Roles  []string          `json:"roles,omitempty"`
	Config map[string]string `json:"config"`
	// Clusters overrides what aws:eks/getCluster answers for a cluster (its Kubernetes version, say).
	Clusters map[string]mocks.EKSCluster `json:"clusters,omitempty"`
	// Versions are the plugins' versions by package: what pulumi-eks's SDK would ask of the aws plugin.
	Versions map[string]string `json:"versions"`
	// Unreachable are the clusters whose Kubernetes API cannot be reached (RealKubernetes leaves their releases to the
	// real provider, which finds them so).
	Unreachable []string `json:"unreachable,omitempty"`
	// MissingClusters do not exist (deleted): EKS lists and describes none of them.
	MissingClusters []string `json:"missingClusters,omitempty"`
	// Buckets exist besides the store's.
	Buckets []string `json:"buckets,omitempty"`
}

// Mocks is the world as mocks.Mocks answers for it.
func (w World) Mocks() *mocks.Mocks {
	return &mocks.Mocks{Region: w.Region, Account: w.Account, Existing: w.Existing, SpotServiceLinkedRole: w.SpotServiceLinkedRole, Roles: w.Roles, Config: w.Config, Clusters: w.Clusters, MissingClusters: w.MissingClusters,
		Buckets: w.Buckets}
}

// forceNew are the inputs whose change replaces a resource (pulumi-aws's ForceNew for the resources the program
// declares: names, the rule a target belongs to, the queue a policy is for, a role an attachment names, ...).
var forceNew = map[string]bool{
	"name": true, "namePrefix": true, "rule": true, "targetId": true, "queueUrl": true, "role": true, "policyArn": true,
	"eventSourceArn": true, "groupName": true, "clusterName": true, "awsServiceName": true, "path": true,
	"serviceAccount": true, "namespace": true, "principalArn": true, "stackSetName": true, "alarmName": true,
	"dashboardName": true, "logGroupName": true, "scheduleGroupName": true, "resourceId": true, "key": true,
}

// Provider is the stand-in of one package.
type Provider struct {
	pulumirpc.UnimplementedResourceProviderServer

	Package, Version string
	World            World
	Store            *Store
	// Engine is the connection to the engine (the host address a plugin is started with), for Construct.
	Engine *grpc.ClientConn

	mu sync.Mutex
	// account is where the configured provider's resources live: an AWS provider's account (its one allowed
	// account, the world's by default), a Kubernetes provider's cluster (its kubeconfig's context).
	account string
	// region is an AWS provider's configured region ("": the world's).
	region string
}

var _ pulumirpc.ResourceProviderServer = (*Provider)(nil)

func (p *Provider) callerAccount() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.account != "" {
		return p.account
	}
	return p.World.Account
}

// regional is w in the provider's region: the one it is configured with, the world's by default.
func (p *Provider) regional(w World) World {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.region != "" {
		w.Region = p.region
	}
	return w
}

// GetPluginInfo reports the version the engine installed the plugin at.
func (p *Provider) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: p.Version}, nil
}

// GetSchema answers the package with only the resources the YAML programs declare beside the component package's
// (pulumi-aws's schema has every one; the Go program is typed by its SDKs and reads none): an SNS topic and an EKS
// cluster, with the properties those programs give and read, as pulumi-aws names them.
func (p *Provider) GetSchema(context.Context, *pulumirpc.GetSchemaRequest) (*pulumirpc.GetSchemaResponse, error) {
	spec := map[string]any{"name": p.Package, "version": p.Version}
	if p.Package == "aws" {
		str := map[string]any{"type": "string"}
		strs := map[string]any{"type": "array", "items": str}
		spec["types"] = map[string]any{
			"aws:eks/ClusterVpcConfig:ClusterVpcConfig": map[string]any{"type": "object", "properties": map[string]any{"subnetIds": strs}},
		}
		spec["provider"] = map[string]any{"inputProperties": map[string]any{"region": str}}
		spec["resources"] = map[string]any{
			"aws:sns/topic:Topic": map[string]any{
				"inputProperties": map[string]any{"name": str},
				"properties":      map[string]any{"name": str, "arn": str},
			},
			"aws:eks/cluster:Cluster": map[string]any{
				"inputProperties": map[string]any{"name": str, "version": str, "roleArn": str, "vpcConfig": map[string]any{
					"$ref": "#/types/aws:eks/ClusterVpcConfig:ClusterVpcConfig",
				}},
				"properties": map[string]any{"name": str, "version": str, "arn": str, "status": str, "endpoint": str},
			},
		}
	}
	b, _ := json.Marshal(spec)
	return &pulumirpc.GetSchemaResponse{Schema: string(b)}, nil
}

// CheckConfig accepts any configuration.
func (p *Provider) CheckConfig(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	return &pulumirpc.CheckResponse{Inputs: req.GetNews()}, nil
}

// DiffConfig reports a changed configuration as an update, never a replacement of the provider.
func (p *Provider) DiffConfig(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	return p.diff(req.GetOldInputs(), req.GetOlds(), req.GetNews(), false)
}

// Configure records the provider's account: its only allowed account (a member account's provider), the
// world's otherwise.
func (p *Provider) Configure(_ context.Context, req *pulumirpc.ConfigureRequest) (*pulumirpc.ConfigureResponse, error) {
	args, err := unmarshal(req.GetArgs())
	if err != nil {
		return nil, err
	}
	if r := args["region"]; r.IsString() && r.StringValue() != "" {
		p.mu.Lock()
		p.region = r.StringValue()
		p.mu.Unlock()
	}
	if ids := args["allowedAccountIds"]; ids.IsArray() && len(ids.ArrayValue()) == 1 && ids.ArrayValue()[0].IsString() {
		p.mu.Lock()
		p.account = ids.ArrayValue()[0].StringValue()
		p.mu.Unlock()
	} else if v, ok := req.GetVariables()["aws:config:allowedAccountIds"]; ok { //nolint:staticcheck // deprecated in the SDK's proto, but what the engine sends where the args hold the list as JSON text, as the real aws provider still reads it
		var list []string
		if json.Unmarshal([]byte(v), &list) == nil && len(list) == 1 {
			p.mu.Lock()
			p.account = list[0]
			p.mu.Unlock()
		}
	}
	if kc := args["kubeconfig"]; kc.IsSecret() || kc.IsString() {
		if kc.IsSecret() {
			kc = kc.SecretValue().Element
		}
		var k struct {
			CurrentContext string `json:"current-context"`
		}
		if kc.IsString() && json.Unmarshal([]byte(kc.StringValue()), &k) == nil {
			p.mu.Lock()
			p.account = "kubernetes:" + k.CurrentContext
			p.mu.Unlock()
		}
	}
	return &pulumirpc.ConfigureResponse{AcceptSecrets: true, AcceptResources: true, SupportsPreview: true}, nil
}

// Check refuses what the real provider's Check refuses (offline/providerrules: pulumi-aws's rules, transcribed from
// the Terraform provider it bundles), with its message, as pulumi-terraform-bridge reports it: the property named in
// the reason, none in the failure's property. A property set that no rule covers is refused too, so that a property
// the program comes to set is read against its provider's source before it is previewed. The inputs are returned as
// they are.
func (p *Provider) Check(_ context.Context, req *pulumirpc.CheckRequest) (*pulumirpc.CheckResponse, error) {
	resp := &pulumirpc.CheckResponse{Inputs: req.GetNews()}
	urn := resource.URN(req.GetUrn())
	typ := string(urn.Type())
	if !providerrules.Checked(typ) {
		return resp, nil
	}
	inputs, err := unmarshal(req.GetNews())
	if err != nil {
		return nil, err
	}
	for _, f := range providerrules.Check(typ, inputs) {
		resp.Failures = append(resp.Failures, &pulumirpc.CheckFailure{Reason: providerrules.Reason(urn.Name(), f)})
	}
	for _, path := range providerrules.Uncovered(typ, inputs) {
		resp.Failures = append(resp.Failures, &pulumirpc.CheckFailure{Property: path,
			Reason: "the stand-in has no rule of offline/providerrules for this property: read what the provider checks of it and add one"})
	}
	return resp, nil
}

// Diff compares the old inputs with the new ones.
func (p *Provider) Diff(_ context.Context, req *pulumirpc.DiffRequest) (*pulumirpc.DiffResponse, error) {
	return p.diff(req.GetOldInputs(), req.GetOlds(), req.GetNews(), true)
}

func (p *Provider) diff(oldInputs, olds, news *structpb.Struct, replaces bool) (*pulumirpc.DiffResponse, error) {
	if oldInputs == nil {
		oldInputs = olds
	}
	before, err := unmarshal(oldInputs)
	if err != nil {
		return nil, err
	}
	after, err := unmarshal(news)
	if err != nil {
		return nil, err
	}
	var changed, replace []string
	for _, k := range slices.Sorted(maps.Keys(union(before, after))) {
		if equal(before[k], after[k]) {
			continue
		}
		changed = append(changed, string(k))
		if replaces && forceNew[string(k)] {
			replace = append(replace, string(k))
		}
	}
	resp := &pulumirpc.DiffResponse{Changes: pulumirpc.DiffResponse_DIFF_NONE, HasDetailedDiff: false}
	if len(changed) > 0 {
		resp.Changes, resp.Diffs, resp.Replaces = pulumirpc.DiffResponse_DIFF_SOME, changed, replace
	}
	return resp, nil
}

// Create records the resource with the outputs AWS would give it; a preview leaves them unknown.
func (p *Provider) Create(_ context.Context, req *pulumirpc.CreateRequest) (*pulumirpc.CreateResponse, error) {
	urn := resource.URN(req.GetUrn())
	inputs, err := unmarshal(req.GetProperties())
	if err != nil {
		return nil, err
	}
	id, outs := p.regional(p.World).Mocks().Outputs(string(urn.Type()), urn.Name(), true, named(string(urn.Type()), inputs), p.callerAccount())
	if req.GetPreview() {
		for k, v := range outs {
			if _, ok := inputs[k]; !ok {
				outs[k] = resource.MakeComputed(resource.NewStringProperty(""))
				_ = v
			}
		}
		props, err := marshal(outs)
		return &pulumirpc.CreateResponse{Properties: props}, err
	}
	rec := Record{Package: p.Package, Type: string(urn.Type()), ID: id, URN: string(urn), Account: p.callerAccount(), Region: p.regional(p.World).Region}
	if err := p.refuseTaken(rec, inputs); err != nil {
		return nil, err
	}
	if err := p.Store.Put(rec, inputs, outs); err != nil {
		return nil, err
	}
	props, err := marshal(outs)
	return &pulumirpc.CreateResponse{Id: id, Properties: props}, err
}

// uniqueKey is the name AWS (or Helm) keeps unique for a resource of typ with inputs in account, in the scope it
// keeps it (case folded where AWS folds it), and the error AWS answers a second create with; "" where nothing is
// refused on a name.
func uniqueKey(typ, account, region string, in resource.PropertyMap) (key, refusal string) {
	str := func(k resource.PropertyKey) string {
		if v, ok := in[k]; ok && v.IsString() {
			return v.StringValue()
		}
		return ""
	}
	switch typ {
	case "aws:iam/role:Role":
		// Unique per account, whatever the region, and "Names are not distinguished by case" (CreateRole,
		// https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreateRole.html).
		return "iam role " + account + " " + strings.ToLower(str("name")), "EntityAlreadyExists: Role with name " + str("name") + " already exists."
	case "aws:iam/policy:Policy":
		// As roles (CreatePolicy, https://docs.aws.amazon.com/IAM/latest/APIReference/API_CreatePolicy.html).
		return "iam policy " + account + " " + strings.ToLower(str("name")), "EntityAlreadyExists: A policy called " + str("name") + " already exists."
	case "aws:sqs/queue:Queue":
		// Per account and region (CreateQueue, https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html).
		return "sqs " + account + " " + region + " " + str("name"), "QueueAlreadyExists: A queue already exists with the same name and a different value for attribute(s)"
	case "aws:cloudwatch/logGroup:LogGroup":
		// Per account and region (CreateLogGroup, https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_CreateLogGroup.html).
		return "logs " + account + " " + region + " " + str("name"), "ResourceAlreadyExistsException: The specified log group already exists"
	case "aws:scheduler/scheduleGroup:ScheduleGroup":
		// Per account and region (CreateScheduleGroup, https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateScheduleGroup.html).
		return "schedule group " + account + " " + region + " " + str("name"), "ConflictException: Schedule group " + str("name") + " already exists."
	case "aws:scheduler/schedule:Schedule":
		// Per group (CreateSchedule, https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html).
		group := cmp.Or(str("groupName"), "default")
		return "schedule " + account + " " + region + " " + group + " " + str("name"), "ConflictException: Schedule " + str("name") + " already exists in group " + group + "."
	case "aws:eks/accessEntry:AccessEntry":
		// One per principal of a cluster (CreateAccessEntry, ResourceInUseException,
		// https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html).
		return "eks access entry " + account + " " + region + " " + str("clusterName") + " " + str("principalArn"),
			"ResourceInUseException: The specified access entry resource is already in use on this cluster."
	case "aws:eks/podIdentityAssociation:PodIdentityAssociation":
		// One per service account of a cluster (CreatePodIdentityAssociation, ResourceInUseException,
		// https://docs.aws.amazon.com/eks/latest/APIReference/API_CreatePodIdentityAssociation.html).
		return "eks pod identity " + account + " " + region + " " + str("clusterName") + " " + str("namespace") + "/" + str("serviceAccount"),
			"ResourceInUseException: Association already exists for the service account " + str("namespace") + "/" + str("serviceAccount") + "."
	case "aws:s3/bucketV2:BucketV2":
		// Global to all of S3, for a name the stack gives (General purpose bucket naming rules,
		// https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html); one of a prefix is unique (named).
		if str("bucket") != "" {
			return "s3 bucket " + str("bucket"), "BucketAlreadyExists: The requested bucket name is not available"
		}
	case "aws:kms/alias:Alias":
		// Per account and region (CreateAlias, AlreadyExistsException,
		// https://docs.aws.amazon.com/kms/latest/APIReference/API_CreateAlias.html).
		return "kms alias " + account + " " + region + " " + str("name"), "AlreadyExistsException: An alias with the name " + str("name") + " already exists"
	case "kubernetes:helm.sh/v3:Release":
		// Per namespace of a cluster (the account here is the cluster's context): Helm refuses an install whose
		// release name is in use ("cannot re-use a name that is still in use").
		ns := cmp.Or(str("namespace"), "default")
		return "helm " + account + " " + ns + " " + str("name"), "cannot re-use a name that is still in use: release " + ns + "/" + str("name")
	}
	// EventBridge's PutRule creates or updates a rule of the name ("PutRule",
	// https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutRule.html), and the provider creates it so:
	// a second rule of one name overwrites the first, as here. Other names are the stack's own (autonamed, or
	// unique by their parent: a role's inline policy, a rule's target).
	return "", ""
}

// named is inputs as AWS names the resource: a bucket of a bucketPrefix takes a unique suffix of 26 digits, as the
// provider asks S3 for ("bucket_prefix": a unique name beginning with the prefix), so that a stack deployed again
// after its retained bucket makes a new one beside it, as in AWS.
func named(typ string, inputs resource.PropertyMap) resource.PropertyMap {
	prefix, ok := inputs["bucketPrefix"]
	if typ != "aws:s3/bucketV2:BucketV2" || !ok || !prefix.IsString() {
		return inputs
	}
	if b, ok := inputs["bucket"]; ok && b.IsString() && b.StringValue() != "" {
		return inputs
	}
	out := inputs.Copy()
	out["bucket"] = resource.NewStringProperty(fmt.Sprintf("%s%026d", prefix.StringValue(), time.Now().UnixNano()))
	return out
}

// queueNameHold is how long SQS holds a deleted queue's name: "You must wait 60 seconds after deleting a queue
// before you can create another with the same name" (CreateQueue).
const queueNameHold = 60 * time.Second

// refuseTaken refuses the create of rec with inputs as AWS would when another resource of the store holds its
// name, or SQS still holds a deleted queue's.
func (p *Provider) refuseTaken(rec Record, inputs resource.PropertyMap) error {
	key, refusal := uniqueKey(rec.Type, rec.Account, p.regional(p.World).Region, inputs)
	if key == "" {
		return nil
	}
	if at, ok := p.Store.DeletedAt(key); ok && rec.Type == "aws:sqs/queue:Queue" && p.Store.now().Sub(at) < queueNameHold {
		return fmt.Errorf("creating %s: AWS.SimpleQueueService.QueueDeletedRecently: You must wait 60 seconds after deleting a queue before you can create another with the same name", rec.URN)
	}
	rs, err := p.Store.All()
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Type != rec.Type || r.ID == rec.ID && r.Account == rec.Account && r.URN == rec.URN {
			continue
		}
		_, held, _, err := p.Store.Get(r.Account, r.Package, r.Type, r.ID)
		if err != nil {
			return err
		}
		if k, _ := uniqueKey(r.Type, r.Account, cmp.Or(r.Region, p.World.Region), held); k == key {
			if rec.Type == "aws:sqs/queue:Queue" && plain(resource.NewObjectProperty(held)).DeepEquals(plain(resource.NewObjectProperty(inputs))) {
				// "If you provide the name of an existing queue along with the exact names and values of all the
				// queue's attributes, CreateQueue returns the queue URL for the existing queue" (CreateQueue).
				continue
			}
			return fmt.Errorf("creating %s: %s (held by %s)", rec.URN, refusal, r.URN)
		}
	}
	return nil
}

// Read returns a resource's state: a recorded one, or one that exists in the world without the stack (the EC2
// Spot service-linked role of an account that has it, which the program imports). An empty response is "not
// found", as the real providers answer.
func (p *Provider) Read(_ context.Context, req *pulumirpc.ReadRequest) (*pulumirpc.ReadResponse, error) {
	urn := resource.URN(req.GetUrn())
	typ, id := string(urn.Type()), p.importedID(string(urn.Type()), req.GetId())
	rec, inputs, outs, err := p.Store.Get(p.callerAccount(), p.Package, typ, id)
	if errors.Is(err, os.ErrNotExist) {
		if inputs, outs = p.existing(typ, id); inputs == nil {
			return &pulumirpc.ReadResponse{}, nil
		}
		rec = Record{Package: p.Package, Type: typ, ID: id, URN: string(urn), Account: p.callerAccount(), Region: p.regional(p.World).Region}
		if err := p.Store.Put(rec, inputs, outs); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	ins, err := marshal(inputs)
	if err != nil {
		return nil, err
	}
	props, err := marshal(outs)
	return &pulumirpc.ReadResponse{Id: rec.ID, Properties: props, Inputs: ins}, err
}

// importedID is the stored ID of the resource an import names by another ID than the one it got at create: a role
// policy attachment is imported as "<role>/<policy ARN>" ("aws_iam_role_policy_attachment", import), where its ID is
// generated.
func (p *Provider) importedID(typ, id string) string {
	role, policyARN, ok := strings.Cut(id, "/")
	if typ != "aws:iam/rolePolicyAttachment:RolePolicyAttachment" || !ok {
		return id
	}
	rs, err := p.Store.All()
	if err != nil {
		return id
	}
	for _, r := range rs {
		if r.Type != typ || r.Account != p.callerAccount() {
			continue
		}
		if _, in, _, err := p.Store.Get(r.Account, r.Package, r.Type, r.ID); err == nil &&
			in["role"].IsString() && in["role"].StringValue() == role && in["policyArn"].IsString() && in["policyArn"].StringValue() == policyARN {
			return r.ID
		}
	}
	return id
}

// existing is what AWS holds without the stack: the Spot service-linked role in the accounts the world says.
func (p *Provider) existing(typ, id string) (inputs, outs resource.PropertyMap) {
	account := p.callerAccount()
	if typ != spotRoleType || !slices.Contains(p.World.SpotServiceLinkedRole, account) || !strings.HasSuffix(id, ":role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot") {
		return nil, nil
	}
	inputs = resource.NewPropertyMapFromMap(map[string]any{"awsServiceName": "spot.amazonaws.com"})
	outs = inputs.Copy()
	outs["arn"], outs["name"] = resource.NewStringProperty(id), resource.NewStringProperty("AWSServiceRoleForEC2Spot")
	outs["path"] = resource.NewStringProperty("/aws-service-role/spot.amazonaws.com/")
	return inputs, outs
}

// Update records the new inputs and outputs under the same ID.
func (p *Provider) Update(_ context.Context, req *pulumirpc.UpdateRequest) (*pulumirpc.UpdateResponse, error) {
	urn := resource.URN(req.GetUrn())
	inputs, err := unmarshal(req.GetNews())
	if err != nil {
		return nil, err
	}
	_, outs := p.regional(p.World).Mocks().Outputs(string(urn.Type()), urn.Name(), true, inputs, p.callerAccount())
	if !req.GetPreview() {
		rec := Record{Package: p.Package, Type: string(urn.Type()), ID: req.GetId(), URN: string(urn), Account: p.callerAccount(), Region: p.regional(p.World).Region}
		if err := p.Store.Put(rec, inputs, outs); err != nil {
			return nil, err
		}
	}
	props, err := marshal(outs)
	return &pulumirpc.UpdateResponse{Properties: props}, err
}

// Delete forgets the resource; deleting one that is not there is an error, as AWS's NotFound would be to a
// provider that did not expect it. A deleted queue's name is remembered, as SQS holds it for a minute.
func (p *Provider) Delete(_ context.Context, req *pulumirpc.DeleteRequest) (*emptypb.Empty, error) {
	urn := resource.URN(req.GetUrn())
	typ, account := string(urn.Type()), p.callerAccount()
	if _, inputs, _, err := p.Store.Get(account, p.Package, typ, req.GetId()); err == nil {
		if key, _ := uniqueKey(typ, account, p.regional(p.World).Region, inputs); key != "" {
			if err := p.Store.MarkDeleted(key); err != nil {
				return nil, err
			}
		}
	}
	return &emptypb.Empty{}, p.Store.Delete(account, p.Package, typ, req.GetId())
}

// Invoke answers a lookup from the mocks' table, as the provider's account.
func (p *Provider) Invoke(_ context.Context, req *pulumirpc.InvokeRequest) (*pulumirpc.InvokeResponse, error) {
	args, err := unmarshal(req.GetArgs())
	if err != nil {
		return nil, err
	}
	out, err := p.world().Mocks().Answer(req.GetTok(), args, p.callerAccount())
	if err != nil {
		// A failed lookup is a failure the program sees, as the provider returns AWS's error: the protocol's
		// answer, not an error of the call.
		return &pulumirpc.InvokeResponse{Failures: []*pulumirpc.CheckFailure{{Reason: err.Error()}}}, nil //nolint:nilerr // see above
	}
	ret, err := marshal(out)
	return &pulumirpc.InvokeResponse{Return: ret}, err
}

// world is the world as it is now: the Spot service-linked roles and the EKS clusters the stand-ins created exist
// too (IAM and EKS list them), besides those the world had.
func (p *Provider) world() World {
	w := p.regional(p.World)
	rs, err := p.Store.All()
	if err != nil {
		return w
	}
	w.SpotServiceLinkedRole = slices.Clone(w.SpotServiceLinkedRole)
	w.Existing = slices.Clone(w.Existing)
	w.Roles = slices.Clone(w.Roles)
	w.Buckets = slices.Clone(w.Buckets)
	for _, r := range rs {
		if r.Type == spotRoleType && !slices.Contains(w.SpotServiceLinkedRole, r.Account) {
			w.SpotServiceLinkedRole = append(w.SpotServiceLinkedRole, r.Account)
		}
		if r.Type == "aws:eks/cluster:Cluster" && !slices.Contains(w.Existing, r.ID) { // EKS lists the clusters the stand-ins created
			w.Existing = append(w.Existing, r.ID)
		}
		if r.Type == "aws:iam/role:Role" { // IAM lists the roles the stand-ins hold, retained ones among them
			w.Roles = append(w.Roles, r.Account+" "+r.ID)
		}
		if r.Type == "aws:s3/bucketV2:BucketV2" { // S3 finds the buckets the stand-ins hold, retained ones among them
			w.Buckets = append(w.Buckets, r.ID)
		}
	}
	return w
}

const spotRoleType = "aws:iam/serviceLinkedRole:ServiceLinkedRole"

// Cancel has nothing to stop.
func (p *Provider) Cancel(context.Context, *emptypb.Empty) (*emptypb.Empty, error) {
	return &emptypb.Empty{}, nil
}

// Construct builds pulumi-eks's components with the one AWS resource of each that the program reads.
func (p *Provider) Construct(ctx context.Context, req *pulumirpc.ConstructRequest) (*pulumirpc.ConstructResponse, error) {
	return pprovider.Construct(ctx, req, p.Engine, func(pctx *pulumi.Context, typ, name string, inputs pprovider.ConstructInputs,
		options pulumi.ResourceOption,
	) (*pprovider.ConstructResult, error) {
		comp := &component{}
		if err := pctx.RegisterComponentResource(typ, name, comp, options); err != nil {
			return nil, err
		}
		in, err := inputs.Map()
		if err != nil {
			return nil, err
		}
		// What pulumi-eks refuses of its arguments (it throws from its constructor, failing the program), and what no
		// rule covers.
		args, err := unmarshal(req.GetInputs())
		if err != nil {
			return nil, err
		}
		if err := providerrules.Refuse(typ, name, args); err != nil {
			return nil, err
		}
		var child pulumi.CustomResourceState
		var state pulumi.Map
		switch typ {
		case "eks:index:Cluster":
			// pulumi-eks names the EKS cluster <name>-eksCluster and gives it the physical name of its argument name,
			// a generated one without; here, without it, the component's name, "<cluster>-eks" in the programs.
			var cluster pulumi.Input = pulumi.String(strings.TrimSuffix(name, "-eks"))
			if n, ok := in["name"]; ok {
				cluster = n
			}
			if err := pctx.RegisterResource("aws:eks/cluster:Cluster", name+"-eksCluster", pulumi.Map{
				"name": cluster, "version": in["version"], "tags": in["tags"],
			}, &child, pulumi.Parent(comp), pulumi.Version(p.World.Versions["aws"])); err != nil {
				return nil, err
			}
			state = pulumi.Map{"eksCluster": pulumi.NewResourceInput(&child)}
		case "eks:index:ManagedNodeGroup":
			if err := pctx.RegisterResource("aws:eks/nodeGroup:NodeGroup", name, pulumi.Map{
				"nodeRoleArn": in["nodeRoleArn"], "instanceTypes": in["instanceTypes"], "labels": in["labels"], "tags": in["tags"],
			}, &child, pulumi.Parent(comp), pulumi.Version(p.World.Versions["aws"])); err != nil {
				return nil, err
			}
			state = pulumi.Map{"nodeGroup": pulumi.NewResourceInput(&child)}
		default:
			return nil, fmt.Errorf("the %s stand-in constructs no %s", p.Package, typ)
		}
		if err := pctx.RegisterResourceOutputs(comp, state); err != nil {
			return nil, err
		}
		return &pprovider.ConstructResult{URN: comp.URN(), State: state}, nil
	})
}

type component struct{ pulumi.ResourceState }

func union(a, b resource.PropertyMap) resource.PropertyMap {
	out := resource.PropertyMap{}
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// equal compares two inputs as a provider would: secrets by their values, archives and assets by their hashes
// (the router's zip is rebuilt at another path, and only its bytes matter), an unknown as a change.
func equal(a, b resource.PropertyValue) bool {
	a, b = plain(a), plain(b)
	if a.ContainsUnknowns() || b.ContainsUnknowns() {
		return false
	}
	return a.DeepEquals(b)
}

// plain is v without secret markers, and with archives and assets reduced to their hashes.
func plain(v resource.PropertyValue) resource.PropertyValue {
	switch {
	case v.IsSecret():
		return plain(v.SecretValue().Element)
	case v.IsArchive():
		return resource.NewStringProperty("archive:" + v.ArchiveValue().Hash)
	case v.IsAsset():
		return resource.NewStringProperty("asset:" + v.AssetValue().Hash)
	case v.IsArray():
		out := make([]resource.PropertyValue, len(v.ArrayValue()))
		for i, e := range v.ArrayValue() {
			out[i] = plain(e)
		}
		return resource.NewArrayProperty(out)
	case v.IsObject():
		out := resource.PropertyMap{}
		for k, e := range v.ObjectValue() {
			out[k] = plain(e)
		}
		return resource.NewObjectProperty(out)
	}
	return v
}

var marshalOptions = plugin.MarshalOptions{KeepUnknowns: true, KeepSecrets: true, KeepResources: true, SkipNulls: true}

func unmarshal(s *structpb.Struct) (resource.PropertyMap, error) {
	if s == nil {
		return resource.PropertyMap{}, nil
	}
	return plugin.UnmarshalProperties(s, marshalOptions)
}

func marshal(m resource.PropertyMap) (*structpb.Struct, error) {
	return plugin.MarshalProperties(m, marshalOptions)
}

// Record is one resource in the store.
type Record struct {
	Package, Type, ID, URN, Account string
	// Region is where it lives: its provider's region.
	Region string
	// Inputs and Outputs are the properties in Pulumi's wire format (protobuf JSON).
	Inputs, Outputs json.RawMessage
}

// Store keeps the stand-ins' resources in a directory, one file each, named by account, package, type and ID
// (IDs are unique per account, as AWS's names are: two member accounts hold roles of the same name), and when each
// name was last deleted.
type Store struct {
	Dir string
	// Now defaults to time.Now.
	Now func() time.Time
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) deletedPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(s.Dir, "deleted", hex.EncodeToString(sum[:8]))
}

// MarkDeleted remembers that the resource holding key was deleted now.
func (s *Store) MarkDeleted(key string) error {
	p := s.deletedPath(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(s.now().UTC().Format(time.RFC3339Nano)), 0o600)
}

// Age moves every deletion d into the past, as time passing would.
func (s *Store) Age(d time.Duration) error {
	files, err := filepath.Glob(filepath.Join(s.Dir, "deleted", "*"))
	if err != nil {
		return err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, string(b))
		if err != nil {
			return err
		}
		if err := os.WriteFile(f, []byte(t.Add(-d).Format(time.RFC3339Nano)), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// DeletedAt is when the resource holding key was last deleted, if ever.
func (s *Store) DeletedAt(key string) (time.Time, bool) {
	b, err := os.ReadFile(s.deletedPath(key))
	if err != nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	return t, err == nil
}

func (s *Store) path(account, pkg, typ, id string) string {
	sum := sha256.Sum256([]byte(account + "\x00" + pkg + "\x00" + typ + "\x00" + id))
	return filepath.Join(s.Dir, pkg+"-"+hex.EncodeToString(sum[:8])+".json")
}

// Put writes a resource (atomically: another plugin process may be reading).
func (s *Store) Put(rec Record, inputs, outputs resource.PropertyMap) error {
	for _, f := range []struct {
		dst *json.RawMessage
		src resource.PropertyMap
	}{{&rec.Inputs, inputs}, {&rec.Outputs, outputs}} {
		st, err := marshal(f.src)
		if err != nil {
			return err
		}
		b, err := protojson.Marshal(st)
		if err != nil {
			return err
		}
		*f.dst = b
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	p := s.path(rec.Account, rec.Package, rec.Type, rec.ID)
	if err := os.WriteFile(p+".tmp", b, 0o600); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

// Get reads a resource of account; os.ErrNotExist when there is none.
func (s *Store) Get(account, pkg, typ, id string) (Record, resource.PropertyMap, resource.PropertyMap, error) {
	b, err := os.ReadFile(s.path(account, pkg, typ, id))
	if err != nil {
		return Record{}, nil, nil, err
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return Record{}, nil, nil, err
	}
	var maps [2]resource.PropertyMap
	for i, raw := range []json.RawMessage{rec.Inputs, rec.Outputs} {
		st := &structpb.Struct{}
		if err := protojson.Unmarshal(raw, st); err != nil {
			return Record{}, nil, nil, err
		}
		if maps[i], err = unmarshal(st); err != nil {
			return Record{}, nil, nil, err
		}
	}
	return rec, maps[0], maps[1], nil
}

// Delete removes a resource of account; it is an error if there is none.
func (s *Store) Delete(account, pkg, typ, id string) error {
	if err := os.Remove(s.path(account, pkg, typ, id)); err != nil {
		return fmt.Errorf("deleting %s %s: %w", typ, id, err)
	}
	return nil
}

// All are the records in the store, sorted by type and ID.
func (s *Store) All() ([]Record, error) {
	files, err := filepath.Glob(filepath.Join(s.Dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var rec Record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// ReadWorld reads the world's file.
func ReadWorld(path string) (World, error) {
	var w World
	if path == "" {
		return w, fmt.Errorf("%s is not set", WorldEnv)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return w, fmt.Errorf("reading the world: %w", err)
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return w, fmt.Errorf("reading the world %s: %w", path, err)
	}
	return w, nil
}
