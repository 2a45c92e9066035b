// Package config reads the stack configuration once into typed structs and validates all of it before any
// resource is declared. It has three parts: the schema with its defaults (this file), decoding (decode.go),
// and validation (validate.go), which checks and never fills in. Every problem is reported at once, each with
// its path and reason ("clusters[2].name: duplicate of clusters[0]").
package config

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/karpenter"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sizing"
)

// Namespace is the project's configuration namespace: keys are "karpenter-interruption-bus:<key>".
const Namespace = "karpenter-interruption-bus"

// Config is the validated stack configuration. A field with a key tag is the configuration key so named, in the
// order the reference lists them: decode reads it (JSON text into its type, or a string as it is), docs/
// configuration.md documents it, and the component package's Bus takes it (provider/internal/argsgen) unless the
// package leaves it out.
type Config struct {
	// Stack is the Pulumi stack name.
	Stack string
	// Account is the stack's own account (the hub's), from the provider's lookup, not a key.
	Account string
	// QueuePrefix starts every cluster queue name: NamePrefix and "_" (queuename.Prefix), never a key of its own,
	// so a cluster queue can never be named as a shared queue or another stack's queue.
	QueuePrefix string
	// NamePrefix starts the physical name of every shared resource, so two stacks in one account and region do
	// not collide. Key namePrefix; default "kib-<stack>".
	NamePrefix string    `key:"namePrefix"`
	Clusters   []Cluster `key:"clusters"`
	// Accounts are the member accounts whose clusters the bus also serves (key accounts), by account ID.
	Accounts     map[string]Account `key:"accounts"`
	Router       Router             `key:"router"`
	CentralQueue CentralQueue       `key:"centralQueue"`
	Alarms       Alarms             `key:"alarms"`
	Heartbeat    Heartbeat          `key:"heartbeat"`
	Tags         map[string]string  `key:"tags"`
	Dashboard    bool               `key:"dashboard"`
	// Example marks a stack file as documentation, never deployed: pulumi up refuses it, and the workflows preview
	// and deploy no stack so marked (key example).
	Example bool `key:"example"`
	// Organization, when set, admits member accounts by their AWS Organization instead of by a list (key
	// organization; docs/organization.md, "An organization of any size").
	Organization *Organization `key:"organization"`
	// Hub, when set, makes the stack a shard of the bus that stack deploys (key hub: the hub stack's name, as
	// pulumi stack ls -a names it): the shard declares only its clusters, joined to the hub's bus, whose name,
	// account, region and heartbeat it reads from the hub's outputs (docs/deploying.md, "One stack or shards").
	Hub string `key:"hub"`
	// ProviderBudgetMB is the most memory, in MB, the provider processes of one preview or update of the stack
	// may take (key providerBudgetMB; docs/deploying.md, "One stack or shards"): a stack past it is refused before
	// anything is declared, naming the split.
	ProviderBudgetMB int `key:"providerBudgetMB"`
	// Redrive names who may assume the redrive role, the one identity that may read the quarantine and send
	// messages back to the central queue (key redrive; docs/operations.md, "Refused messages: the quarantine").
	Redrive Redrive `key:"redrive"`
	// Archive shapes the bucket every refusal the router keeps is also written to, once, locked (key archive;
	// docs/security.md, "The archive").
	Archive Archive `key:"archive"`
}

// DefaultProviderBudgetMB is what a standard hosted CI runner's 16 GB leaves the providers once the CLI, the
// program and the system have 2 GB; MinProviderBudgetMB is the least the key takes: the stack's own AWS provider
// alone takes up to 430 MB (infra/shardplan).
const (
	DefaultProviderBudgetMB = 14 * 1024
	MinProviderBudgetMB     = 512
)

// IsShard reports whether the stack is a shard of a hub (key hub).
func (c Config) IsShard() bool { return c.Hub != "" }

// HubOnlyKeys are the keys of what only the hub declares (the bus, the router, its alarms and dashboard, the
// heartbeat's rate): a shard sets none of them, and takes the heartbeat from the hub.
var HubOnlyKeys = []string{"router", "centralQueue", "alarms", "dashboard", "heartbeat", "redrive", "archive"}

// Mode is how a cluster's Karpenter is wired to the bus.
type Mode string

const (
	// ModeInstall installs Karpenter on an existing EKS cluster: controller and node roles, identity, access
	// entry, Helm release reading this cluster's queue.
	ModeInstall Mode = "install"
	// ModeExistingRole leaves Karpenter to whoever manages it: the interruption policy is attached to its
	// controller role, and the chart value to set is an output.
	ModeExistingRole Mode = "existing-role"
	// ModeCreate creates the EKS cluster too (pulumi-eks), then installs as ModeInstall does.
	ModeCreate Mode = "create"
)

// Modes are the values of Mode, the default first.
var Modes = []Mode{ModeInstall, ModeExistingRole, ModeCreate}

// IsMember reports whether account is one of the bus's member accounts, not the stack's own.
func (c Config) IsMember(account string) bool {
	_, ok := c.Accounts[account]
	return ok && account != c.Account
}

// MemberAccounts are the member accounts, sorted.
func (c Config) MemberAccounts() []string { return slices.Sorted(maps.Keys(c.Accounts)) }

// InstallsKarpenter reports whether the stack installs Karpenter in this mode.
func (m Mode) InstallsKarpenter() bool { return m == ModeInstall || m == ModeCreate }

// Identity is how Karpenter's controller gets its IAM role.
type Identity string

const (
	// IdentityPodIdentity uses EKS Pod Identity.
	IdentityPodIdentity Identity = "pod-identity"
	// IdentityIRSA uses IAM roles for service accounts, through the cluster's IAM OIDC provider.
	IdentityIRSA Identity = "irsa"
)

// Identities are the values of Identity, the default first.
var Identities = []Identity{IdentityPodIdentity, IdentityIRSA}

// DefaultKarpenterVersion is the chart installed when karpenter.version is not set.
const DefaultKarpenterVersion = karpenter.Default

// Organization admits every account of an AWS Organization as a member: policies name the organization and the
// fixed role names, and grow with nothing.
type Organization struct {
	// ID is the organization's ID, o-....
	ID string `json:"id"`
	// MemberOUs, when set, are the organizational units whose accounts get the member baseline from a
	// service-managed CloudFormation StackSet, automatically, an account moved or created there included.
	MemberOUs []string `json:"memberOUs"`
	// CallAs is how the hub creates the StackSet: DELEGATED_ADMIN (the hub is a delegated administrator for
	// CloudFormation StackSets, the default) or SELF (the hub is the organization's management account).
	CallAs string `json:"callAs"`
}

// CallAs values of Organization.
const (
	CallAsDelegatedAdmin = "DELEGATED_ADMIN"
	CallAsSelf           = "SELF"
)

// IsOrganization reports whether members are admitted by organization.
func (c Config) IsOrganization() bool { return c.Organization != nil }

// Baselined reports whether the members' baseline comes from the StackSet (organization.memberOUs) rather than
// from the hub through each member's provider.
func (c Config) Baselined() bool { return c.Organization != nil && len(c.Organization.MemberOUs) > 0 }

// Account is a member account of the bus (docs/organization.md, "One bus for an organization").
type Account struct {
	// DeployRoleARN is the role in the account that Pulumi assumes to declare the account's resources.
	DeployRoleARN string `json:"deployRoleArn"`
	// AlarmTopicARN, in the account, is notified by the alarms declared there (CloudWatch alarms notify topics
	// of their own account); none when empty.
	AlarmTopicARN string `json:"alarmTopicArn"`
}

// Cluster is one entry of clusters.
type Cluster struct {
	Name string `json:"name"`
	// Account is the account the cluster runs in: the stack's own (default) or a member's.
	Account  string   `json:"account"`
	Mode     Mode     `json:"mode"`
	Identity Identity `json:"identity"`
	// OIDCProviderARN is the cluster's IAM OIDC provider, for irsa in install mode.
	OIDCProviderARN string `json:"oidcProviderArn"`
	// ControllerRoleName is Karpenter's existing controller role, for existing-role mode.
	ControllerRoleName string    `json:"controllerRoleName"`
	Karpenter          Karpenter `json:"karpenter"`
	Create             *Create   `json:"create"`
	FIS                FIS       `json:"fis"`
	// MovedFrom names the stack the cluster's state was moved from by pulumi state move (docs/deploying.md, "One
	// stack or shards"): its last outputs say how the cluster was deployed, which this stack's own do not yet. A
	// shard needs none for a cluster moved from its hub, whose outputs it reads anyway. Remove it after the first
	// update.
	MovedFrom string `json:"movedFrom"`
}

// Karpenter configures the Helm release (install and create modes).
type Karpenter struct {
	Version        string `json:"version"`
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount"`
	// Values are extra chart values, merged under the ones the bus sets.
	Values map[string]any `json:"values"`
	// ReplaceRelease acknowledges that the Karpenter release this stack deployed in another namespace, or the one
	// managed elsewhere before the cluster moved to install mode, has been uninstalled, so a new release may
	// take its place (docs/clusters.md, "Changing a cluster").
	ReplaceRelease bool `json:"replaceRelease"`
	// PodIdentityAssociationID is the ID of the pod identity association an earlier deployment of the cluster
	// retained (a-…), for the stack to adopt where it cannot know it: after a destroy (docs/clusters.md, "Adding a
	// cluster back, or deploying again after destroy").
	PodIdentityAssociationID string `json:"podIdentityAssociationId"`
}

// Create configures a new EKS cluster (create mode).
type Create struct {
	VpcID             string   `json:"vpcId"`
	SubnetIDs         []string `json:"subnetIds"`
	KubernetesVersion string   `json:"kubernetesVersion"`
	// SystemNodes is the managed node group Karpenter itself runs on.
	SystemNodes SystemNodes `json:"systemNodes"`
}

// SystemNodes sizes the system node group.
type SystemNodes struct {
	InstanceType string `json:"instanceType"`
	Min          int    `json:"min"`
	Max          int    `json:"max"`
	Desired      int    `json:"desired"`
}

// FIS configures the optional spot interruption experiment.
type FIS struct {
	Enabled bool `json:"enabled"`
}

// Router configures the router Lambda and its event source mapping (key router).
type Router struct {
	BatchSize                    int      `json:"batchSize"`
	MaximumBatchingWindowSeconds int      `json:"maximumBatchingWindowSeconds"`
	MaximumConcurrency           int      `json:"maximumConcurrency"`
	MemoryMB                     int      `json:"memoryMb"`
	TimeoutSeconds               int      `json:"timeoutSeconds"`
	LogRetentionDays             int      `json:"logRetentionDays"`
	LogLevel                     string   `json:"logLevel"`
	OwnerTagKeys                 []string `json:"ownerTagKeys"`
	// CanaryIntervalSeconds is the least time between two canaries the router delivers to one cluster, per
	// router instance (contract.Settings.CanaryInterval): below the heartbeat's rate, so no beat is held back.
	CanaryIntervalSeconds int `json:"canaryIntervalSeconds"`
	// ProvisionedPollers, when set, runs the event source mapping in provisioned mode: pollers kept ready for a
	// burst, scaling three times faster, billed while provisioned (docs/performance.md, "Sizing for a zone").
	// Lambda takes either this or MaximumConcurrency, never both.
	ProvisionedPollers *ProvisionedPollers `json:"provisionedPollers"`
	// SenderCheck is enforce (a message whose SQS sender may not speak for the account its event names is dropped
	// as forged_sender) or observe (logged and counted, forwarded all the same): docs/security.md, "Who sent each
	// message".
	SenderCheck string `json:"senderCheck"`
	// ReservedConcurrency is the function's reserved concurrency, the ceiling on how many routers run at once in
	// every mode; 0: the mode's own ceiling (ModeCeiling). Never below the mode's ceiling (validated), and never more
	// than the account can give (read from Lambda before anything is declared: infra/concurrency).
	ReservedConcurrency int `json:"reservedConcurrency"`

	// maximumConcurrencySet: the stack sets maximumConcurrency itself, rather than keeping the default.
	maximumConcurrencySet bool
}

// ProvisionedPollers are the event source mapping's provisioned mode (ProvisionedPollerConfig).
type ProvisionedPollers struct {
	Minimum int `json:"minimum"`
	Maximum int `json:"maximum"`
}

// ModeCeiling is the most invocations the event source mapping can run at once: its maximum concurrency, or in
// provisioned mode its maximum pollers times the invocations each may run ("each event poller … up to 10
// concurrent invocations", https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html).
func (r Router) ModeCeiling() int {
	if r.ProvisionedPollers != nil {
		return r.ProvisionedPollers.Maximum * sizing.PollerInvocations
	}
	return r.MaximumConcurrency
}

// Reserved is the function's reserved concurrency: ReservedConcurrency, or the mode's ceiling.
func (r Router) Reserved() int {
	if r.ReservedConcurrency > 0 {
		return r.ReservedConcurrency
	}
	return r.ModeCeiling()
}

// ConcurrencyLimit is the most routers that run at once: the mode's ceiling, or the function's reserved
// concurrency if lower. The saturation alarm and the dashboard draw against it.
func (r Router) ConcurrencyLimit() int {
	return min(r.ModeCeiling(), r.Reserved())
}

// VisibilityTimeout is the central queue's visibility timeout: AWS asks for at least 6 times the function
// timeout, plus the batching window.
func (r Router) VisibilityTimeout() int {
	return 6*r.TimeoutSeconds + r.MaximumBatchingWindowSeconds
}

// CentralQueue configures the buffering queue and its dead-letter queue (key centralQueue).
type CentralQueue struct {
	MessageRetentionSeconds int `json:"messageRetentionSeconds"`
	MaxReceiveCount         int `json:"maxReceiveCount"`
	// EventMaxAgeSeconds bounds how long EventBridge keeps retrying delivery to the central queue.
	EventMaxAgeSeconds int `json:"eventMaxAgeSeconds"`
	// HubDelivery is how the hub's own rules deliver to the central queue: contract.HubDeliveryExecutionRole (as the
	// hub's forwarder role, the target's RoleArn, the default) or contract.HubDeliveryQueuePolicy (through the
	// queue's policy, admitting EventBridge for the stack's own rules), the way out should AWS refuse an execution
	// role on a target of its own account (docs/security.md, "How the hub's rules deliver").
	HubDelivery string `json:"hubDelivery"`
}

// ByPolicy reports whether the hub's rules deliver through the central queue's policy.
func (q CentralQueue) ByPolicy() bool { return q.HubDelivery == contract.HubDeliveryQueuePolicy }

// Redrive configures the redrive role (key redrive).
type Redrive struct {
	// Principals are the IAM roles and users, by ARN, of the stack's partition, that may assume the redrive role; none:
	// the stack declares no redrive role, and nobody can read the quarantine or send anything back.
	Principals []string `json:"principals"`
	// TrustPolicyLimit is the most characters the account lets a role's trust policy have: IAM's default, 2,048, unless
	// the account's quota "Role trust policy length" was raised (at most to 4,096: "IAM and AWS STS quotas",
	// https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html), which this key then says.
	TrustPolicyLimit int `json:"trustPolicyLimit"`
}

// The bounds of redrive.trustPolicyLimit: IAM's default quota, and the most AWS raises it to.
const (
	DefaultTrustPolicyLimit = 2048
	MaxTrustPolicyLimit     = 4096
)

// Archive configures the archive of refusals (key archive): an S3 bucket with Object Lock, whose every record keeps
// the bucket's default retention.
type Archive struct {
	// Mode is the default retention's mode: governance (a principal allowed s3:BypassGovernanceRetention, which the
	// bucket's policy denies to everyone until an administrator changes it, can delete a locked version: a test
	// stack's archive can be emptied) or compliance (nobody, the account's root included, until the date).
	Mode string `json:"mode"`
	// RetentionDays is how long each record is locked, counted from its writing.
	RetentionDays int `json:"retentionDays"`
}

// The values of Archive.Mode, the default first, and S3's names of them ("Object Lock retention modes",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/object-lock.html#object-lock-retention-modes).
const (
	ArchiveGovernance = "governance"
	ArchiveCompliance = "compliance"
)

// ArchiveModes are the values of Archive.Mode, the default first.
var ArchiveModes = []string{ArchiveGovernance, ArchiveCompliance}

// S3Mode is Mode as S3 names it.
func (a Archive) S3Mode() string { return strings.ToUpper(a.Mode) }

// MaxArchiveRetentionDays is the longest default retention S3 takes: 100 years ("PutObjectLockConfiguration",
// DefaultRetention, Days: "must be a positive integer"; the Object Lock page bounds a retention period to 100 years).
const MaxArchiveRetentionDays = 36500

// Alarms configures the CloudWatch alarms (key alarms).
type Alarms struct {
	// TopicARN receives alarm and OK notifications when set.
	TopicARN string `json:"topicArn"`
	// OldestMessageAgeSeconds is the central queue's age alarm threshold.
	OldestMessageAgeSeconds int `json:"oldestMessageAgeSeconds"`
}

// Heartbeat configures the canaries the bus puts on a schedule for every cluster, and each cluster's alarm on
// them (key heartbeat; docs/operations.md, "Heartbeat").
type Heartbeat struct {
	Enabled bool `json:"enabled"`
	// Rate is how often a canary is put for each cluster: a duration of whole minutes ("5m", "1h"), from
	// MinHeartbeatRate to MaxHeartbeatRate; Interval reads it once validated.
	Rate string `json:"rate"`
}

// The bounds of heartbeat.rate: EventBridge Scheduler's finest rate, and the longest a cluster may go without
// anyone knowing that its Karpenter no longer reads its queue (an alarm takes two beats).
const (
	MinHeartbeatRate = time.Minute
	MaxHeartbeatRate = time.Hour
)

// Interval is the heartbeat's rate; zero if Rate is not a duration (validation reports it).
func (h Heartbeat) Interval() time.Duration {
	d, _ := time.ParseDuration(h.Rate)
	return d
}

// Defaults of the objects whose keys are all optional. A key absent from the stack keeps its default; decoding
// starts from these.
var (
	// The router's defaults bring a lone interruption on a quiet queue to its Karpenter within 2 s at p99 (batches
	// of 10 and no window: Lambda invokes at once, where a window may wait 20 s in low traffic), and a 10,000-event
	// burst over 200 clusters within 5 s at p99 in the worst case AWS's words allow (no scale-up during the burst),
	// also with every AWS call twice as slow: an invocation whose batch was full drains the backlog itself in chunks of
	// 1,000 (the router's DRAIN) (router/sizing's model, docs/performance.md "Sizing for a zone";
	// TestDefaultsMeetAZone, BenchmarkTheDefaults).
	DefaultRouter = Router{
		BatchSize: 10, MaximumBatchingWindowSeconds: 0, MaximumConcurrency: 20, MemoryMB: 512, TimeoutSeconds: 30,
		LogRetentionDays: 30, LogLevel: contract.DefaultSettings.LogLevel, SenderCheck: contract.DefaultSettings.SenderCheck,
		CanaryIntervalSeconds: int(contract.DefaultSettings.CanaryInterval.Seconds()),
	}
	// MaxReceiveCount gives a message about four minutes of retries before the dead-letter queue, at the router's
	// backoff (contract.DefaultSettings: 2 s doubling to 60 s).
	DefaultCentralQueue = CentralQueue{MessageRetentionSeconds: 3600, MaxReceiveCount: 10, EventMaxAgeSeconds: 300, HubDelivery: contract.HubDeliveryExecutionRole}
	DefaultAlarms       = Alarms{OldestMessageAgeSeconds: 60}
	// A year: the records outlive the quarantine's 14 days by far, for an audit of the last year.
	DefaultArchive     = Archive{Mode: ArchiveGovernance, RetentionDays: 365}
	DefaultHeartbeat   = Heartbeat{Enabled: true, Rate: "5m"}
	DefaultSystemNodes = SystemNodes{InstanceType: "m7g.large", Min: 2, Max: 3, Desired: 2}
)

// Defaults of a cluster entry's Karpenter release.
const (
	DefaultNamespace      = "kube-system"
	DefaultServiceAccount = "karpenter"
)

// defaults returns a new configuration of stack with every default.
func defaults(stack, account string) Config {
	return Config{Stack: stack, Account: account, Router: DefaultRouter, CentralQueue: DefaultCentralQueue, Alarms: DefaultAlarms, Heartbeat: DefaultHeartbeat,
		ProviderBudgetMB: DefaultProviderBudgetMB, Archive: DefaultArchive, Redrive: Redrive{TrustPolicyLimit: DefaultTrustPolicyLimit}}
}

// DefaultNamePrefix is the namePrefix of stack when none is set.
func DefaultNamePrefix(stack string) string { return "kib-" + stack }

// applyDefaults fills in what the defaults of c's decoded keys depend on: the prefixes and each cluster entry's
// unset fields.
func applyDefaults(c *Config) {
	if c.NamePrefix == "" {
		c.NamePrefix = DefaultNamePrefix(c.Stack)
	}
	if o := c.Organization; o != nil && o.CallAs == "" {
		o.CallAs = CallAsDelegatedAdmin
	}
	c.QueuePrefix = queuename.Prefix(c.NamePrefix)
	for i := range c.Clusters {
		c.Clusters[i].applyDefaults()
		if c.Clusters[i].Account == "" {
			c.Clusters[i].Account = c.Account
		}
	}
}

func (cl *Cluster) applyDefaults() {
	if cl.Mode == "" {
		cl.Mode = Modes[0]
	}
	if cl.Identity == "" && cl.Mode.InstallsKarpenter() {
		cl.Identity = Identities[0]
	}
	if cl.Karpenter.Version == "" {
		cl.Karpenter.Version = DefaultKarpenterVersion
	}
	if cl.Karpenter.Namespace == "" {
		cl.Karpenter.Namespace = DefaultNamespace
	}
	if cl.Karpenter.ServiceAccount == "" {
		cl.Karpenter.ServiceAccount = DefaultServiceAccount
	}
	if c := cl.Create; c != nil {
		d := DefaultSystemNodes
		if c.SystemNodes.InstanceType == "" {
			c.SystemNodes.InstanceType = d.InstanceType
		}
		if c.SystemNodes.Min == 0 {
			c.SystemNodes.Min = d.Min
		}
		if c.SystemNodes.Max == 0 {
			c.SystemNodes.Max = max(d.Max, c.SystemNodes.Min)
		}
		if c.SystemNodes.Desired == 0 {
			c.SystemNodes.Desired = min(max(d.Desired, c.SystemNodes.Min), c.SystemNodes.Max)
		}
	}
}
