package components

import (
	"fmt"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
)

// descriptions are the package's own descriptions of its arguments (args.go), by "<type>.<argument>": the schema's,
// which the SDKs and the registry show. An argument the package does not describe takes its configuration field's
// doc comment (provider/internal/argsgen). The defaults quoted are the program's: a changed one cannot leave the
// schema behind.
var descriptions = map[string]string{
	"BusArgs.namePrefix":                  `Starts the physical name of every shared resource, and is the bus's name (its output busName), which clusters join by. Default "kib-<stack>".`,
	"BusArgs.accounts":                    "Member accounts, by account ID, whose clusters the bus serves and whose baseline (forwarding rules, reader role) the Bus declares through a role it assumes there. Without organization, the only way to admit another account.",
	"BusArgs.organization":                "Admits every account of an AWS Organization: the central queue and the router name the organization and fixed role names, so nothing grows with members (docs/organization.md).",
	"BusArgs.router":                      "The router Lambda and its event source mapping.",
	"BusArgs.centralQueue":                "The central buffering queue and its dead-letter queue.",
	"BusArgs.alarms":                      "The CloudWatch alarms on the bus.",
	"BusArgs.heartbeat":                   "Canaries put on a schedule for every cluster, and each cluster's alarm when its Karpenter stops reading them (docs/operations.md, \"Heartbeat\").",
	"BusArgs.redrive":                     "Who may assume the redrive role, the one identity that may read the quarantine and send messages back to the central queue; without it there is none (docs/operations.md, \"Refused messages: the quarantine\").",
	"BusArgs.archive":                     "The archive every refusal the router keeps is also written to, once, locked by S3 Object Lock (docs/security.md, \"The archive\").",
	"BusArgs.dashboard":                   "Declares a CloudWatch dashboard of the bus, with a row for each of clusterNames (default false).",
	"BusArgs.tags":                        "Tags for every resource that takes them, besides karpenter-interruption-bus/stack and managed-by.",
	"BusArgs.clusterNames":                "The clusters on the bus, each a row of the dashboard: their ClusterInterruption's clusterName. Clusters join without being listed here.",
	"MemberAccount.deployRoleArn":         "The role in the member account that Pulumi assumes to declare the account's resources.",
	"MemberAccount.alarmTopicArn":         "An SNS topic of the member account notified by the alarms declared there.",
	"Organization.id":                     "The organization's ID, o-....",
	"Organization.memberOUs":              "Organizational units whose accounts get the member baseline from a service-managed CloudFormation StackSet, automatically, accounts created or moved there later included.",
	"Organization.callAs":                 "How the hub creates the StackSet.",
	"Router.batchSize":                    fmt.Sprintf("Messages per invocation (default %d; over 10 takes maximumBatchingWindowSeconds of at least 1, as Lambda requires). A full batch drains the backlog itself.", config.DefaultRouter.BatchSize),
	"Router.maximumBatchingWindowSeconds": fmt.Sprintf("How long, in seconds, the event source mapping gathers a batch (default %d: none, a lone event is routed at once; with a window Lambda may wait up to 20 s in low traffic).", config.DefaultRouter.MaximumBatchingWindowSeconds),
	"Router.maximumConcurrency":           fmt.Sprintf("The most invocations at once (default %d); not with provisionedPollers.", config.DefaultRouter.MaximumConcurrency),
	"Router.memoryMb":                     fmt.Sprintf("The function's memory in MB (default %d).", config.DefaultRouter.MemoryMB),
	"Router.timeoutSeconds":               fmt.Sprintf("The function's timeout (default %d); the central queue's visibility timeout follows from it.", config.DefaultRouter.TimeoutSeconds),
	"Router.logRetentionDays":             fmt.Sprintf("Retention of the router's log group (default %d).", config.DefaultRouter.LogRetentionDays),
	"Router.reservedConcurrency": "The function's reserved concurrency, the most routers at once in every mode (default: maximumConcurrency, " +
		"or 10 invocations per poller of provisionedPollers.maximum; never below that, and never more than the account can reserve, " +
		"read from Lambda's account settings before anything is declared).",
	"Router.logLevel":                      "debug, info (default), warn or error.",
	"Router.ownerTagKeys":                  "EC2 tag keys naming an instance's cluster, tried in order (default Karpenter's and EKS's).",
	"Router.canaryIntervalSeconds":         fmt.Sprintf("The least time between two canaries the router delivers to one cluster, per router instance (default %d); below the heartbeat's rate.", config.DefaultRouter.CanaryIntervalSeconds),
	"Router.provisionedPollers":            "The event source mapping's provisioned mode: pollers kept ready for a burst, billed while provisioned; not with maximumConcurrency.",
	"Router.senderCheck":                   "enforce (default): a message whose SQS sender may not speak for the account its event names is dropped as forged_sender; observe: logged, counted and forwarded, to roll the check out.",
	"ProvisionedPollers.minimum":           "Pollers kept ready, 2 to 200.",
	"ProvisionedPollers.maximum":           "The most pollers, 2 to 2000 (the most the pinned pulumi-aws takes), at least minimum; each runs up to 10 invocations at once.",
	"CentralQueue.messageRetentionSeconds": fmt.Sprintf("How long the central queue keeps an event (default %d).", config.DefaultCentralQueue.MessageRetentionSeconds),
	"CentralQueue.maxReceiveCount":         fmt.Sprintf("Receives before an event moves to the dead-letter queue (default %d).", config.DefaultCentralQueue.MaxReceiveCount),
	"CentralQueue.eventMaxAgeSeconds":      fmt.Sprintf("How long EventBridge retries delivering an event to the central queue (default %d).", config.DefaultCentralQueue.EventMaxAgeSeconds),
	"CentralQueue.hubDelivery":             "How the bus's own rules deliver to the central queue (default executionRole; docs/security.md, \"How the hub's rules deliver\").",
	"Redrive.principals":                   "The IAM roles and users, by exact ARN, of the stack's partition, that may assume the redrive role (no account root, no wildcard).",
	"Redrive.trustPolicyLimit": fmt.Sprintf("The most characters the account lets a role's trust policy have (default %d, IAM's; up to %d once AWS raised the account's quota).",
		config.DefaultTrustPolicyLimit, config.MaxTrustPolicyLimit),
	"Archive.mode":                                        "The records' Object Lock mode (default governance).",
	"Archive.retentionDays":                               fmt.Sprintf("How long each record is locked, in days (default %d, at most %d).", config.DefaultArchive.RetentionDays, config.MaxArchiveRetentionDays),
	"Alarms.topicArn":                                     "An SNS topic of the hub's account notified on alarm and on recovery.",
	"Alarms.oldestMessageAgeSeconds":                      fmt.Sprintf("The central queue's age alarm threshold (default %d).", config.DefaultAlarms.OldestMessageAgeSeconds),
	"Heartbeat.enabled":                                   "Declares the heartbeat's shared part (default true); clusters then take heartbeatRate.",
	"Heartbeat.rate":                                      `How often each cluster gets a canary: whole minutes from "1m" to "1h" (default "5m").`,
	"ClusterInterruptionArgs.busName":                     "The bus to join: the Bus's output busName (its namePrefix).",
	"ClusterInterruptionArgs.hubAccountId":                "The hub's account (the Bus's output account), for a cluster in another account; default the cluster's own.",
	"ClusterInterruptionArgs.clusterName":                 "The EKS cluster's name; its queue is <clusterQueuePrefix><clusterName>.",
	"ClusterInterruptionArgs.mode":                        "How the cluster's Karpenter is wired to the bus.",
	"ClusterInterruptionArgs.identity":                    "How Karpenter's controller gets its IAM role (install and create modes).",
	"ClusterInterruptionArgs.oidcProviderArn":             "The cluster's IAM OIDC provider, for irsa in install mode.",
	"ClusterInterruptionArgs.controllerRoleName":          "Karpenter's existing controller role, for existing-role mode.",
	"ClusterInterruptionArgs.karpenter":                   "Karpenter's Helm release (install and create modes).",
	"ClusterInterruptionArgs.create":                      "The EKS cluster to create (create mode).",
	"ClusterInterruptionArgs.fis":                         "An AWS FIS experiment template that sends a Spot interruption to one of the cluster's nodes.",
	"ClusterInterruptionArgs.heartbeatRate":               `Gives the cluster a heartbeat at this rate and an alarm when its Karpenter stops reading it: the Bus's output heartbeatRate ("" or absent, none). The heartbeat's shared part must exist in the account: the hub's Bus, the hub's StackSet, or memberBaseline.`,
	"ClusterInterruptionArgs.heartbeatAlarmActions":       "Topics of the cluster's account notified by its heartbeat alarm, on alarm and on recovery (each checked: an SNS topic ARN of the cluster's account).",
	"ClusterInterruptionArgs.memberBaseline":              "Declares the member baseline in the cluster's account: the rules forwarding its EC2 events to the hub, the role the router reads its instances with, the heartbeat's shared part. For a member account that neither the hub's StackSet (organization.memberOUs) nor its accounts cover; the hub must admit it (organization). One cluster of an account at most.",
	"ClusterInterruptionArgs.ensureSpotServiceLinkedRole": "Declares the account's EC2 Spot service-linked role, created where absent, adopted where present, retained on delete. One cluster of an account at most; without it, installing Karpenter needs the role to exist.",
	"ClusterInterruptionArgs.tags":                        "Tags for every resource that takes them.",
	"Karpenter.version":                                   "Karpenter's chart version, within the supported range (docs/clusters.md, \"Karpenter versions\").",
	"Karpenter.namespace":                                 `The release's namespace (default "kube-system").`,
	"Karpenter.serviceAccount":                            `The controller's service account (default "karpenter").`,
	"Karpenter.values":                                    "Extra chart values, merged under the ones the bus sets.",
	"Karpenter.replaceRelease":                            "Acknowledges that the release in the former namespace (or the one managed elsewhere) was uninstalled, so a new one may take its place.",
	"NewCluster.vpcId":                                    "The VPC of the cluster.",
	"NewCluster.subnetIds":                                "The cluster's subnets, at least two.",
	"NewCluster.kubernetesVersion":                        "The cluster's Kubernetes version, within the Karpenter release's range.",
	"NewCluster.systemNodes":                              "The managed node group Karpenter itself runs on.",
	"SystemNodes.instanceType":                            `Instance type (default "m7g.large").`,
	"SystemNodes.min":                                     "Fewest nodes (default 2).",
	"SystemNodes.max":                                     "Most nodes (default 3).",
	"SystemNodes.desired":                                 "Nodes at creation (default 2).",
	"FisExperiment.enabled":                               "Declares the experiment template (default false)."}

// describe is the description of the argument at path ("<type>.<argument>"): the package's, or else doc.
func describe(path, doc string) string {
	if d, ok := descriptions[path]; ok {
		return d
	}
	return doc
}
