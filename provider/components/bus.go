package components

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/pulumi/pulumi-go-provider/infer"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/bus"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/preflight"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// BusArgs are the Bus's arguments: the keys of the program's stack configuration, but for clusters, which join
// as ClusterInterruption components. Every one is optional; an absent one takes the program's default.
type BusArgs struct {
	NamePrefix   *string                  `pulumi:"namePrefix,optional" json:"namePrefix,omitempty"`
	Accounts     map[string]MemberAccount `pulumi:"accounts,optional" json:"accounts,omitempty" plain:"one baseline per member account, named by its ID"`
	Organization *Organization            `pulumi:"organization,optional" json:"organization,omitempty"`
	Router       *Router                  `pulumi:"router,optional" json:"router,omitempty"`
	CentralQueue *CentralQueue            `pulumi:"centralQueue,optional" json:"centralQueue,omitempty"`
	Alarms       *Alarms                  `pulumi:"alarms,optional" json:"alarms,omitempty"`
	Heartbeat    *Heartbeat               `pulumi:"heartbeat,optional" json:"heartbeat,omitempty"`
	Redrive      *Redrive                 `pulumi:"redrive,optional" json:"redrive,omitempty"`
	Archive      *Archive                 `pulumi:"archive,optional" json:"archive,omitempty"`
	Dashboard    *bool                    `pulumi:"dashboard,optional" json:"dashboard,omitempty"`
	Tags         map[string]string        `pulumi:"tags,optional" json:"tags,omitempty"`
	// ClusterNames are not a configuration key: the program reads them off its clusters.
	ClusterNames []string `pulumi:"clusterNames,optional" json:"-" plain:"one dashboard row per cluster"`
}

// Annotate documents the arguments.
func (a *BusArgs) Annotate(an infer.Annotator) {
	an.Describe(&a.NamePrefix, `Starts the physical name of every shared resource, and is the bus's name (its output busName), which clusters join by. Default "kib-<stack>".`)
	an.Describe(&a.Accounts, "Member accounts, by account ID, whose clusters the bus serves and whose baseline (forwarding rules, reader role) the Bus declares through a role it assumes there. Without organization, the only way to admit another account.")
	an.Describe(&a.Organization, "Admits every account of an AWS Organization: the central queue and the router name the organization and fixed role names, so nothing grows with members (docs/organization.md).")
	an.Describe(&a.Router, "The router Lambda and its event source mapping.")
	an.Describe(&a.CentralQueue, "The central buffering queue and its dead-letter queue.")
	an.Describe(&a.Alarms, "The CloudWatch alarms on the bus.")
	an.Describe(&a.Heartbeat, "Canaries put on a schedule for every cluster, and each cluster's alarm when its Karpenter stops reading them (docs/operations.md, \"Heartbeat\").")
	an.Describe(&a.Redrive, "Who may assume the redrive role, the one identity that may read the quarantine and send messages back to the central queue; without it there is none (docs/operations.md, \"Refused messages: the quarantine\").")
	an.Describe(&a.Archive, "The archive every refusal the router keeps is also written to, once, locked by S3 Object Lock (docs/security.md, \"The archive\").")
	an.Describe(&a.Dashboard, "Declares a CloudWatch dashboard of the bus, with a row for each of clusterNames (default false).")
	an.Describe(&a.Tags, "Tags for every resource that takes them, besides karpenter-interruption-bus/stack and managed-by.")
	an.Describe(&a.ClusterNames, "The clusters on the bus, each a row of the dashboard: their ClusterInterruption's clusterName. Clusters join without being listed here.")
}

// MemberAccount are a member account's (key accounts.<id>).
type MemberAccount struct {
	DeployRoleARN string  `pulumi:"deployRoleArn" json:"deployRoleArn"`
	AlarmTopicARN *string `pulumi:"alarmTopicArn,optional" json:"alarmTopicArn,omitempty"`
}

// Annotate documents the arguments.
func (a *MemberAccount) Annotate(an infer.Annotator) {
	an.Describe(&a.DeployRoleARN, "The role in the member account that Pulumi assumes to declare the account's resources.")
	an.Describe(&a.AlarmTopicARN, "An SNS topic of the member account notified by the alarms declared there.")
}

// CallAs is how the hub creates the organization's StackSet.
type CallAs string

// Values are CallAs's values.
func (CallAs) Values() []infer.EnumValue[CallAs] {
	return []infer.EnumValue[CallAs]{
		{Name: "DelegatedAdmin", Value: "DELEGATED_ADMIN", Description: "The hub is a delegated administrator for CloudFormation StackSets (the default)."},
		{Name: "Self", Value: "SELF", Description: "The hub is the organization's management account."},
	}
}

// Organization admit an organization's accounts (key organization).
type Organization struct {
	ID        string   `pulumi:"id" json:"id"`
	MemberOUs []string `pulumi:"memberOUs,optional" json:"memberOUs,omitempty"`
	CallAs    *CallAs  `pulumi:"callAs,optional" json:"callAs,omitempty"`
}

// Annotate documents the arguments.
func (a *Organization) Annotate(an infer.Annotator) {
	an.Describe(&a.ID, "The organization's ID, o-....")
	an.Describe(&a.MemberOUs, "Organizational units whose accounts get the member baseline from a service-managed CloudFormation StackSet, automatically, accounts created or moved there later included.")
	an.Describe(&a.CallAs, "How the hub creates the StackSet.")
}

// Router configure the router (key router).
type Router struct {
	BatchSize                    *int     `pulumi:"batchSize,optional" json:"batchSize,omitempty"`
	MaximumBatchingWindowSeconds *int     `pulumi:"maximumBatchingWindowSeconds,optional" json:"maximumBatchingWindowSeconds,omitempty"`
	MaximumConcurrency           *int     `pulumi:"maximumConcurrency,optional" json:"maximumConcurrency,omitempty"`
	MemoryMB                     *int     `pulumi:"memoryMb,optional" json:"memoryMb,omitempty"`
	TimeoutSeconds               *int     `pulumi:"timeoutSeconds,optional" json:"timeoutSeconds,omitempty"`
	LogRetentionDays             *int     `pulumi:"logRetentionDays,optional" json:"logRetentionDays,omitempty"`
	LogLevel                     *string  `pulumi:"logLevel,optional" json:"logLevel,omitempty"`
	OwnerTagKeys                 []string `pulumi:"ownerTagKeys,optional" json:"ownerTagKeys,omitempty"`
	CanaryIntervalSeconds        *int     `pulumi:"canaryIntervalSeconds,optional" json:"canaryIntervalSeconds,omitempty"`
	// ProvisionedPollers replaces MaximumConcurrency with provisioned mode.
	ProvisionedPollers *ProvisionedPollers `pulumi:"provisionedPollers,optional" json:"provisionedPollers,omitempty"`
	SenderCheck        *string             `pulumi:"senderCheck,optional" json:"senderCheck,omitempty" plain:"a mode of the router (enforce or observe)"`
	// ReservedConcurrency caps the routers at once, in every mode.
	ReservedConcurrency *int `pulumi:"reservedConcurrency,optional" json:"reservedConcurrency,omitempty"`
}

// ProvisionedPollers configure the event source mapping's provisioned mode (key router.provisionedPollers).
type ProvisionedPollers struct {
	Minimum int `pulumi:"minimum" json:"minimum"`
	Maximum int `pulumi:"maximum" json:"maximum"`
}

// Annotate documents the arguments.
func (a *ProvisionedPollers) Annotate(an infer.Annotator) {
	an.Describe(&a.Minimum, "Pollers kept ready, 2 to 200.")
	an.Describe(&a.Maximum, "The most pollers, 2 to 10000, at least minimum; each runs up to 10 invocations at once.")
}

// Annotate documents the arguments.
func (a *Router) Annotate(an infer.Annotator) {
	d := config.DefaultRouter // the defaults are the program's: a changed one cannot leave the schema behind
	an.Describe(&a.BatchSize, fmt.Sprintf("Messages per invocation (default %d; over 10 takes maximumBatchingWindowSeconds of at least 1, as Lambda requires). A full batch drains the backlog itself.", d.BatchSize))
	an.Describe(&a.MaximumBatchingWindowSeconds, fmt.Sprintf("How long, in seconds, the event source mapping gathers a batch (default %d: none, a lone event is routed at once; with a window Lambda may wait up to 20 s in low traffic).", d.MaximumBatchingWindowSeconds))
	an.Describe(&a.MaximumConcurrency, fmt.Sprintf("The most invocations at once (default %d); not with provisionedPollers.", d.MaximumConcurrency))
	an.Describe(&a.MemoryMB, fmt.Sprintf("The function's memory in MB (default %d).", d.MemoryMB))
	an.Describe(&a.TimeoutSeconds, fmt.Sprintf("The function's timeout (default %d); the central queue's visibility timeout follows from it.", d.TimeoutSeconds))
	an.Describe(&a.LogRetentionDays, fmt.Sprintf("Retention of the router's log group (default %d).", d.LogRetentionDays))
	an.Describe(&a.ReservedConcurrency, "The function's reserved concurrency, the most routers at once in every mode (default: maximumConcurrency, "+
		"or 10 invocations per poller of provisionedPollers.maximum; never below that, and never more than the account can reserve, "+
		"read from Lambda's account settings before anything is declared).")
	an.Describe(&a.LogLevel, "debug, info (default), warn or error.")
	an.Describe(&a.OwnerTagKeys, "EC2 tag keys naming an instance's cluster, tried in order (default Karpenter's and EKS's).")
	an.Describe(&a.CanaryIntervalSeconds, fmt.Sprintf("The least time between two canaries the router delivers to one cluster, per router instance (default %d); below the heartbeat's rate.", d.CanaryIntervalSeconds))
	an.Describe(&a.ProvisionedPollers, "The event source mapping's provisioned mode: pollers kept ready for a burst, billed while provisioned; not with maximumConcurrency.")
	an.Describe(&a.SenderCheck, "enforce (default): a message whose SQS sender may not speak for the account its event names is dropped as forged_sender; observe: logged, counted and forwarded, to roll the check out.")
}

// CentralQueue configure the central queue (key centralQueue).
type CentralQueue struct {
	MessageRetentionSeconds *int         `pulumi:"messageRetentionSeconds,optional" json:"messageRetentionSeconds,omitempty"`
	MaxReceiveCount         *int         `pulumi:"maxReceiveCount,optional" json:"maxReceiveCount,omitempty"`
	EventMaxAgeSeconds      *int         `pulumi:"eventMaxAgeSeconds,optional" json:"eventMaxAgeSeconds,omitempty"`
	HubDelivery             *HubDelivery `pulumi:"hubDelivery,optional" json:"hubDelivery,omitempty"`
}

// HubDelivery is how the hub's own rules deliver to the central queue (key centralQueue.hubDelivery).
type HubDelivery string

// Values are HubDelivery's values.
func (HubDelivery) Values() []infer.EnumValue[HubDelivery] {
	return []infer.EnumValue[HubDelivery]{
		{Name: "ExecutionRole", Value: HubDelivery(contract.HubDeliveryExecutionRole), Description: "As the hub's forwarder role, as every member's rules do (the default)."},
		{Name: "QueuePolicy", Value: HubDelivery(contract.HubDeliveryQueuePolicy), Description: "Through the central queue's policy, which admits EventBridge for the bus's own rules only: the setting make verify names when the hub's rules do not deliver as an execution role."},
	}
}

// Redrive configure the redrive role (key redrive).
type Redrive struct {
	Principals       []string `pulumi:"principals" json:"principals"`
	TrustPolicyLimit *int     `pulumi:"trustPolicyLimit,optional" json:"trustPolicyLimit,omitempty"`
}

// Annotate documents the arguments.
func (a *Redrive) Annotate(an infer.Annotator) {
	an.Describe(&a.Principals, "The IAM roles and users, by exact ARN, of the stack's partition, that may assume the redrive role (no account root, no wildcard).")
	an.Describe(&a.TrustPolicyLimit, fmt.Sprintf("The most characters the account lets a role's trust policy have (default %d, IAM's; up to %d once AWS raised the account's quota).",
		config.DefaultTrustPolicyLimit, config.MaxTrustPolicyLimit))
}

// Archive configure the archive (key archive).
type Archive struct {
	Mode          *ArchiveMode `pulumi:"mode,optional" json:"mode,omitempty"`
	RetentionDays *int         `pulumi:"retentionDays,optional" json:"retentionDays,omitempty"`
}

// ArchiveMode is the archive's Object Lock retention mode.
type ArchiveMode string

// Values are the modes.
func (ArchiveMode) Values() []infer.EnumValue[ArchiveMode] {
	return []infer.EnumValue[ArchiveMode]{
		{Name: "Governance", Value: ArchiveMode(config.ArchiveGovernance), Description: "A principal allowed s3:BypassGovernanceRetention, which the bucket's policy denies to all until an administrator changes it, may delete a locked record: a test stack's archive can be emptied."},
		{Name: "Compliance", Value: ArchiveMode(config.ArchiveCompliance), Description: "Nobody, the account's root included, deletes a record before its retention ends."},
	}
}

// Annotate documents the arguments.
func (a *Archive) Annotate(an infer.Annotator) {
	an.Describe(&a.Mode, "The records' Object Lock mode (default governance).")
	an.Describe(&a.RetentionDays, fmt.Sprintf("How long each record is locked, in days (default %d, at most %d).", config.DefaultArchive.RetentionDays, config.MaxArchiveRetentionDays))
}

// Annotate documents the arguments.
func (a *CentralQueue) Annotate(an infer.Annotator) {
	d := config.DefaultCentralQueue
	an.Describe(&a.MessageRetentionSeconds, fmt.Sprintf("How long the central queue keeps an event (default %d).", d.MessageRetentionSeconds))
	an.Describe(&a.MaxReceiveCount, fmt.Sprintf("Receives before an event moves to the dead-letter queue (default %d).", d.MaxReceiveCount))
	an.Describe(&a.EventMaxAgeSeconds, fmt.Sprintf("How long EventBridge retries delivering an event to the central queue (default %d).", d.EventMaxAgeSeconds))
	an.Describe(&a.HubDelivery, "How the bus's own rules deliver to the central queue (default executionRole; docs/security.md, \"How the hub's rules deliver\").")
}

// Alarms configure the alarms (key alarms).
type Alarms struct {
	TopicARN                *string `pulumi:"topicArn,optional" json:"topicArn,omitempty"`
	OldestMessageAgeSeconds *int    `pulumi:"oldestMessageAgeSeconds,optional" json:"oldestMessageAgeSeconds,omitempty"`
}

// Annotate documents the arguments.
func (a *Alarms) Annotate(an infer.Annotator) {
	an.Describe(&a.TopicARN, "An SNS topic of the hub's account notified on alarm and on recovery.")
	an.Describe(&a.OldestMessageAgeSeconds, fmt.Sprintf("The central queue's age alarm threshold (default %d).", config.DefaultAlarms.OldestMessageAgeSeconds))
}

// Heartbeat configure the heartbeat (key heartbeat).
type Heartbeat struct {
	Enabled *bool   `pulumi:"enabled,optional" json:"enabled,omitempty"`
	Rate    *string `pulumi:"rate,optional" json:"rate,omitempty"`
}

// Annotate documents the arguments.
func (a *Heartbeat) Annotate(an infer.Annotator) {
	an.Describe(&a.Enabled, "Declares the heartbeat's shared part (default true); clusters then take heartbeatRate.")
	an.Describe(&a.Rate, `How often each cluster gets a canary: whole minutes from "1m" to "1h" (default "5m").`)
}

// Bus is the shared part of an interruption bus in one account and region: rules, central queue, router,
// alarms, heartbeat, member baselines and dashboard.
type Bus struct {
	pulumi.ResourceState

	BusName            pulumi.StringOutput    `pulumi:"busName"`
	Account            pulumi.StringOutput    `pulumi:"account"`
	Region             pulumi.StringOutput    `pulumi:"region"`
	HeartbeatRate      pulumi.StringOutput    `pulumi:"heartbeatRate"`
	ClusterQueuePrefix pulumi.StringOutput    `pulumi:"clusterQueuePrefix"`
	CentralQueueURL    pulumi.StringOutput    `pulumi:"centralQueueUrl"`
	CentralQueueARN    pulumi.StringOutput    `pulumi:"centralQueueArn"`
	DeadLetterQueueURL pulumi.StringOutput    `pulumi:"deadLetterQueueUrl"`
	DeadLetterQueueARN pulumi.StringOutput    `pulumi:"deadLetterQueueArn"`
	RouterFunctionName pulumi.StringOutput    `pulumi:"routerFunctionName"`
	RouterRoleARN      pulumi.StringOutput    `pulumi:"routerRoleArn"`
	RouterLogGroupName pulumi.StringOutput    `pulumi:"routerLogGroupName"`
	RedriveRoleARN     pulumi.StringOutput    `pulumi:"redriveRoleArn"`
	QuarantineQueueURL pulumi.StringOutput    `pulumi:"quarantineQueueUrl"`
	QuarantineQueueARN pulumi.StringOutput    `pulumi:"quarantineQueueArn"`
	SealKeyARN         pulumi.StringOutput    `pulumi:"sealKeyArn"`
	ArchiveBucket      pulumi.StringOutput    `pulumi:"archiveBucket"`
	RuleARNs           pulumi.StringMapOutput `pulumi:"ruleArns"`
	AlarmARNs          pulumi.StringMapOutput `pulumi:"alarmArns"`
}

// Annotate documents the component and its outputs.
func (b *Bus) Annotate(an infer.Annotator) {
	an.Describe(&b, "The shared part of an interruption bus in one account and region, the hub: the EventBridge rules, the central queue "+
		"and its dead-letter queue, the router Lambda, the alarms, the heartbeat's shared part, the member accounts' baselines and the "+
		"dashboard. Clusters join it with ClusterInterruption, from this stack or their own, given busName and account.")
	an.Describe(&b.BusName, "The bus's name (namePrefix): a ClusterInterruption's busName.")
	an.Describe(&b.Account, "The hub's account: a ClusterInterruption's hubAccountId, from another account.")
	an.Describe(&b.Region, "The bus's region; clusters join from the same region.")
	an.Describe(&b.HeartbeatRate, `The heartbeat's rate, "" without one: a ClusterInterruption's heartbeatRate.`)
	an.Describe(&b.ClusterQueuePrefix, "Starts every cluster queue's name: <prefix><cluster>.")
	an.Describe(&b.CentralQueueURL, "The central buffering queue's URL.")
	an.Describe(&b.CentralQueueARN, "The central buffering queue's ARN.")
	an.Describe(&b.DeadLetterQueueURL, "The dead-letter queue's URL.")
	an.Describe(&b.DeadLetterQueueARN, "The dead-letter queue's ARN.")
	an.Describe(&b.RouterFunctionName, "The router Lambda's name.")
	an.Describe(&b.RouterRoleARN, "The router's role, the only principal a cluster queue lets send.")
	an.Describe(&b.RouterLogGroupName, "The router's log group.")
	an.Describe(&b.RedriveRoleARN, "The role the principals of redrive assume to read the quarantine and send messages of the dead-letter and quarantine queues back to the central queue; \"\" without them.")
	an.Describe(&b.QuarantineQueueURL, "The queue the router keeps the messages it refuses in, with why (docs/operations.md).")
	an.Describe(&b.QuarantineQueueARN, "The quarantine queue's ARN.")
	an.Describe(&b.SealKeyARN, "The KMS key the router seals what it keeps with: only the router may sign with it (docs/security.md, \"Sealed refusals\").")
	an.Describe(&b.ArchiveBucket, "The bucket every refusal the router keeps is also written to, once, locked; retained on delete.")
	an.Describe(&b.RuleARNs, "The EventBridge rules, by event type.")
	an.Describe(&b.AlarmARNs, "The bus's CloudWatch alarms, by name.")
}

// busConstructor is the Bus's constructor with opts.
func busConstructor(opts infra.Options) func(ctx *pulumi.Context, name string, args BusArgs, ro ...pulumi.ResourceOption) (*Bus, error) {
	return func(ctx *pulumi.Context, name string, args BusArgs, ro ...pulumi.ResourceOption) (*Bus, error) {
		b := &Bus{}
		res := resolutionOf(ctx.Context())
		// Aliased to the names they had after the namePrefix (0.3.0 and before), unless it is a secret or unknown,
		// which an alias would write to the state, or cannot give.
		if prefix := cmp.Or(deref(args.NamePrefix), config.DefaultNamePrefix(ctx.Stack())); prefix != name &&
			!slices.Contains(res.secrets, prefix) && !slices.Contains(res.deferred, "namePrefix") {
			ro = append(ro, formerNames(func(child string) (string, bool) { return infra.FormerBusName(name, prefix, child) }))
		}
		if err := ctx.RegisterComponentResource(bus.Type, name, b, ro...); err != nil { // the token of the program's bus component
			return nil, err
		}
		// Stand-ins take the places of the arguments unknown at a preview, so the children are the update's, with
		// unknown values there; the checks of the known arguments run first, as with no unknown.
		deferred, err := standInUnknowns(ctx, b, component{"Bus", name, "the bus's", busChecks}, &args, res, func() error {
			values, err := configValues(args)
			if err != nil {
				return err
			}
			return infra.BusForm(ctx, b, values, args.ClusterNames, res.deferred)
		})
		if err != nil {
			return nil, err
		}
		if deferred {
			return b, nil
		}
		values, err := configValues(args)
		if err != nil {
			return nil, err
		}
		out, err := infra.DeclareBus(ctx, b, name, values, args.ClusterNames, preflight.Unknowns{Marks: res.marks, FromResource: res.fromResource}, opts)
		if err != nil {
			return nil, redacted(err, res.secrets)
		}
		if err := setOutputs(b, infra.Exports(out.Outputs)); err != nil {
			return nil, err
		}
		return b, nil
	}
}

// configValues are args as the stack configuration's keys: each key's JSON text, a string key's own text.
func configValues(args any) (map[string]string, error) {
	text, err := json.Marshal(args)
	if err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(text, &keys); err != nil {
		return nil, err
	}
	values := map[string]string{}
	for k, v := range keys {
		var s string
		if json.Unmarshal(v, &s) == nil {
			values[k] = s
			continue
		}
		values[k] = string(v)
	}
	return values, nil
}

// setOutputs sets the output fields of component (a pointer to a struct) from outputs, by their pulumi tags;
// every field must have one.
func setOutputs(component any, outputs map[string]pulumi.Input) error {
	return eachOutput(component, func(tag string, f reflect.Value) error {
		in, ok := outputs[tag]
		if !ok {
			return fmt.Errorf("output %s: not declared", tag)
		}
		conv := reflect.ValueOf(in).MethodByName("To" + f.Type().Name())
		if !conv.IsValid() {
			return fmt.Errorf("output %s: %T is not a %s", tag, in, f.Type().Name())
		}
		f.Set(conv.Call(nil)[0])
		return nil
	})
}

// eachOutput calls set with each output field of component (a pointer to a struct), by its pulumi tag, until one
// fails.
func eachOutput(component any, set func(tag string, f reflect.Value) error) error {
	v := reflect.ValueOf(component).Elem()
	for i := range v.NumField() {
		if tag := v.Type().Field(i).Tag.Get("pulumi"); tag != "" {
			if err := set(tag, v.Field(i)); err != nil {
				return err
			}
		}
	}
	return nil
}
