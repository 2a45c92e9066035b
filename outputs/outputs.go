// Package outputs is the one contract of the stack's outputs: every output the program (a hub or a shard) and the
// component package's Bus export, by name and type, defined once. The writers (package infra) instantiate it with
// Pulumi inputs and export what Set gives; the readers instantiate it with Go values (Read) and fill it from JSON
// (pulumi stack output --json: make verify, make requeue) or from a stack reference (Decode: the program's next
// update, a shard reading its hub, a stack a cluster moved from). A writer sets the fields it has; Set leaves the
// others out. The package imports no Pulumi SDK: the commands that read outputs link none.
package outputs

// Stack are a stack's outputs. S is a string's type, I an integer's, M a map of strings', C the clusters' map's.
type Stack[S, I, M, C any] struct {
	Join[S, I]
	Bus[S, M]
	Record[M, C]
	// Hub is the hub a shard joined (key hub), on a shard only.
	Hub S `json:"hub"`
	// HubDelivery is how the hub's rules deliver, on the hub only (make verify says which to switch to).
	HubDelivery S `json:"hubDelivery"`
	// ClusterQueueNames are the clusters' queues, by cluster.
	ClusterQueueNames M `json:"clusterQueueNames"`
	// SpotServiceLinkedRoles records, per account where the stack installs Karpenter, who made its EC2 Spot
	// service-linked role (spotrole.Origin).
	SpotServiceLinkedRoles M `json:"spotServiceLinkedRoles"`
	// Version is the release of the program that made the stack (router/release.Version).
	Version S `json:"version"`
}

// Join is what joining a bus takes: what a shard reads of its hub (a shard exports the part make verify needs
// again), and what the package's Bus gives its ClusterInterruptions.
type Join[S, I any] struct {
	BusName            S `json:"busName"`
	Account            S `json:"account"`
	Region             S `json:"region"`
	ClusterQueuePrefix S `json:"clusterQueuePrefix"`
	RouterLogGroupName S `json:"routerLogGroupName"`
	// HeartbeatRate is the rate of the bus's heartbeat, "" without one: what its clusters' heartbeats take.
	HeartbeatRate S `json:"heartbeatRate"`
	// CanaryIntervalSeconds: make verify puts a canary the router held back again once this has passed.
	CanaryIntervalSeconds I `json:"canaryIntervalSeconds"`
	// MemberBaseline is where member accounts get their baseline: BaselineStackSet or BaselineProviders.
	MemberBaseline S `json:"memberBaseline"`
	// AlarmTopicARN is the topic the heartbeat alarms of the hub's account notify.
	AlarmTopicARN S `json:"alarmTopicArn"`
}

// Record is what a stack records of its clusters: the next update reads it back, and so does a stack a cluster moves
// to (pulumi state move).
type Record[M, C any] struct {
	// Clusters records each cluster the stack declared (a Cluster each).
	Clusters C `json:"clusters"`
	// RetainedPodIdentityAssociations remembers, for each cluster with a pod identity association that the stack
	// removed, the association's ID, which it retained on delete: should the cluster be added back, the program
	// adopts it, as it does the cluster's other retained resources, whose IDs follow from their names.
	RetainedPodIdentityAssociations M `json:"retainedPodIdentityAssociations"`
}

// Bus are the outputs of a bus's shared part, the program's hub's and the package's Bus's alike.
type Bus[S, M any] struct {
	CentralQueueURL    S `json:"centralQueueUrl"`
	CentralQueueARN    S `json:"centralQueueArn"`
	DeadLetterQueueURL S `json:"deadLetterQueueUrl"`
	DeadLetterQueueARN S `json:"deadLetterQueueArn"`
	QuarantineQueueURL S `json:"quarantineQueueUrl"`
	QuarantineQueueARN S `json:"quarantineQueueArn"`
	RouterFunctionName S `json:"routerFunctionName"`
	RouterRoleARN      S `json:"routerRoleArn"`
	// RedriveRoleARN is the bus's redrive role; "" when the stack names no one who may assume it.
	RedriveRoleARN S `json:"redriveRoleArn"`
	// SealKeyARN is the key the router seals with.
	SealKeyARN S `json:"sealKeyArn"`
	// ArchiveBucket is where every kept refusal is also written: a stack whose last update had one holds it in
	// its state, and adopts no other (an import over another ID in state would replace it).
	ArchiveBucket S `json:"archiveBucket"`
	// ArchiveBucketPrefix starts the name of every archive the bus has had: make requeue FROM=archive reads them
	// all.
	ArchiveBucketPrefix S `json:"archiveBucketPrefix"`
	RuleARNs            M `json:"ruleArns"`
	AlarmARNs           M `json:"alarmArns"`
}

// Cluster is the record of one cluster in Stack.Clusters.
type Cluster[S any] struct {
	Mode              S `json:"mode"`
	Account           S `json:"account"`
	QueueName         S `json:"queueName"`
	QueueURL          S `json:"queueUrl"`
	QueueARN          S `json:"queueArn"`
	ControllerRoleARN S `json:"controllerRoleArn"`
	NodeRoleName      S `json:"nodeRoleName"`
	ChartValue        S `json:"chartValue"`
	HeartbeatAlarmARN S `json:"heartbeatAlarmArn"`
	// KarpenterNamespace is the namespace of the release this stack installs ("" for none), which the next update
	// checks against.
	KarpenterNamespace S `json:"karpenterNamespace"`
	// PodIdentityAssociationID is the ID of the association the cluster's Karpenter runs with ("" without one).
	PodIdentityAssociationID S `json:"podIdentityAssociationId"`
	// ReleaseDigest digests the Karpenter release the stack last made ("" unknown: no release, or none recorded).
	ReleaseDigest S `json:"releaseDigest"`
}

// Where member accounts get their baseline (Join.MemberBaseline): the hub's StackSet, or the hub itself, through
// each listed account's provider.
const (
	BaselineStackSet  = "stackset"
	BaselineProviders = "providers"
)

type (
	// Read are the outputs as a reader gets them.
	Read = Stack[string, int, map[string]string, map[string]ReadCluster]
	// ReadCluster is a cluster's record as a reader gets it.
	ReadCluster = Cluster[string]
)
