// Package contract is what the router and the infrastructure must agree on, written once and imported by both
// modules: the router's settings and the environment variables that carry them, the metric names and
// dimensions the router writes and the alarms and dashboard read, and the event types the EventBridge rules
// match and the router parses.
package contract

import (
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// The router's environment variables. docs/configuration.md documents each.
const (
	EnvClusterQueuePrefix = "CLUSTER_QUEUE_PREFIX"
	EnvOwnerTagKeys       = "OWNER_TAG_KEYS"
	EnvCacheSize          = "CACHE_SIZE"
	EnvOwnerTTL           = "OWNER_CACHE_TTL"
	EnvNoOwnerTTL         = "NO_OWNER_CACHE_TTL"
	EnvQueueURLTTL        = "QUEUE_URL_CACHE_TTL"
	EnvMissingQueueTTL    = "MISSING_QUEUE_CACHE_TTL"
	EnvSendConcurrency    = "SEND_CONCURRENCY"
	EnvMetricsNamespace   = "METRICS_NAMESPACE"
	EnvBusName            = "BUS_NAME"
	EnvLogLevel           = "LOG_LEVEL"
	EnvBusQueues          = "BUS_QUEUES"
	EnvCentralQueueURL    = "CENTRAL_QUEUE_URL"
	EnvRetryDelay         = "RETRY_DELAY"
	EnvRetryMaxDelay      = "RETRY_MAX_DELAY"
	EnvAccount            = "ACCOUNT"
	EnvMemberReaderRoles  = "MEMBER_READER_ROLES"
	EnvCanaryInterval     = "CANARY_INTERVAL"
	EnvOrganizationID     = "ORGANIZATION_ID"
	EnvReaderRoleName     = "MEMBER_READER_ROLE_NAME"
	EnvPartition          = "PARTITION"
	EnvDeniedAccountTTL   = "DENIED_ACCOUNT_CACHE_TTL"
	EnvSenderCheck        = "SENDER_CHECK"
	EnvForwarderRoleName  = "FORWARDER_ROLE_NAME"
	EnvRedriveRoleName    = "REDRIVE_ROLE_NAME"
	EnvSenderRoleTTL      = "SENDER_ROLE_CACHE_TTL"
	EnvSenderRecheck      = "SENDER_ROLE_RECHECK"
	EnvQuarantineQueueURL = "QUARANTINE_QUEUE_URL"
	EnvHubDelivery        = "HUB_DELIVERY"
	EnvSealKey            = "SEAL_KEY_ARN"
	EnvArchiveBucket      = "ARCHIVE_BUCKET"
	EnvDeadLetterQueueURL = "DEAD_LETTER_QUEUE_URL"
	EnvDrain              = "DRAIN"
)

// The values of HubDelivery: how the hub's own rules deliver to the central queue (docs/security.md, "How the hub's
// rules deliver").
const (
	// HubDeliveryExecutionRole: as the hub's forwarder role, the target's RoleArn, as every member's rules do.
	HubDeliveryExecutionRole = "executionRole"
	// HubDeliveryQueuePolicy: through the central queue's policy, which admits EventBridge for the stack's own rules
	// (aws:SourceArn) and no other principal that is not a role: a sender that is no role speaks for the hub.
	HubDeliveryQueuePolicy = "queuePolicy"
)

// HubDeliveries are the values HubDelivery takes, the default first.
var HubDeliveries = []string{HubDeliveryExecutionRole, HubDeliveryQueuePolicy}

// The values of SenderCheck (docs/security.md, "Who sent each message").
const (
	// SenderEnforce drops, as forged_sender, a message whose sender may not speak for the account its event names.
	SenderEnforce = "enforce"
	// SenderObserve logs and counts such a message, and forwards it all the same: to roll the check out.
	SenderObserve = "observe"
)

// SenderChecks are the values SenderCheck takes, the default first.
var SenderChecks = []string{SenderEnforce, SenderObserve}

// Settings configure the router. The infrastructure renders them into the function's environment (Environ) and
// the router reads them back at start-up (LoadSettings); a zero field means the default.
type Settings struct {
	// ClusterQueuePrefix starts every cluster queue's name (queuename.For); required.
	ClusterQueuePrefix string
	// OwnerTagKeys are read, in order, after the built-in owner tags.
	OwnerTagKeys []string
	// CacheSize bounds each cache (owners, non-owners, queue URLs, missing queues), in entries.
	CacheSize int
	// OwnerTTL keeps a found owner; ownership never changes in an instance's life.
	OwnerTTL time.Duration
	// NoOwnerTTL keeps "no owner", briefly, so a late-tagged instance is found again.
	NoOwnerTTL time.Duration
	// QueueURLTTL keeps a resolved queue URL.
	QueueURLTTL time.Duration
	// MissingQueueTTL remembers a missing queue before GetQueueUrl is asked again.
	MissingQueueTTL time.Duration
	// SendConcurrency bounds the cluster queues sent to at once.
	SendConcurrency int
	// MetricsNamespace is the CloudWatch namespace of the router's metrics.
	MetricsNamespace string
	// BusName is the value of the Bus dimension, so several stacks in one account stay apart.
	BusName string
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// BusQueues are the bus's own queues (central, dead-letter): never a destination, whatever an owner tag
	// says, so an event can never loop back into the bus.
	BusQueues []string
	// CentralQueueURL is the queue the router reads; a retried message's visibility is changed there, so it
	// comes back after RetryDelay rather than after the queue's visibility timeout. Empty: not changed.
	CentralQueueURL string
	// RetryDelay is how soon a message left for redelivery comes back the first time; each later receive
	// doubles it, up to RetryMaxDelay.
	RetryDelay    time.Duration
	RetryMaxDelay time.Duration
	// Account is the router's own account (the hub's): its events are looked up with the router's own
	// credentials. Empty: every account is taken for the router's own (a bus of one account).
	Account string
	// MemberReaderRoles are the reader roles of the member accounts, one per account: an event of a member
	// account is looked up in EC2 with that account's role; an event of an account neither Account nor a
	// member is dropped as unknown_account.
	MemberReaderRoles []string
	// CanaryInterval is the least time between two canaries delivered to one cluster by one router instance
	// (docs/operations.md, "Heartbeat"): well below the fastest heartbeat, a minute, so the heartbeat is never held back.
	CanaryInterval time.Duration
	// OrganizationID, with ReaderRoleName and Partition, makes every account of the organization a member
	// without a list: an event of an account is looked up as arn:<Partition>:iam::<account>:role/<ReaderRoleName>;
	// an account whose reader role cannot be assumed (access denied) is dropped as unknown_account and
	// remembered for DeniedAccountTTL. Needs Account.
	OrganizationID   string
	ReaderRoleName   string
	Partition        string
	DeniedAccountTTL time.Duration
	// SenderCheck is what becomes of a message whose SQS sender may not speak for the account its event names:
	// SenderEnforce (dropped as forged_sender) or SenderObserve (logged, counted, forwarded).
	SenderCheck string
	// ForwarderRoleName names the role every member account's forwarding rules send to the central queue as (the
	// same name in each member): a message naming a member must come from that account's role of this name,
	// whose unique ID the router learns with iam:GetRole as the account's reader role.
	ForwarderRoleName string
	// RedriveRoleName names the hub's redrive role, the one role of the router's own account that may send to the
	// central queue (a DLQ redrive): its unique ID is learned with the router's own iam:GetRole.
	RedriveRoleName string
	// SenderRoleTTL keeps a learned role ID; a sender that differs is checked against a fresh answer first.
	SenderRoleTTL time.Duration
	// SenderRecheck is the least time between two iam:GetRole calls for one role: a sender that differs from a
	// role's ID learned before its message was sent is retried until IAM is asked again.
	SenderRecheck time.Duration
	// QuarantineQueueURL is the queue every message refused for one of QuarantineReasons is kept in, with why;
	// empty: such messages are deleted.
	QuarantineQueueURL string
	// HubDelivery is how the hub's own rules deliver to the central queue: HubDeliveryExecutionRole (as its
	// forwarder, ForwarderRoleName) or HubDeliveryQueuePolicy.
	HubDelivery string
	// SealKey is the ARN of the KMS key the router seals what it keeps with (router/sealing), and verifies what the
	// redrive role sends back with; empty: nothing is sealed, and nothing sent back is believed.
	SealKey string
	// ArchiveBucket is the bucket every kept refusal is also written to, once (router/archive); empty: none.
	ArchiveBucket string
	// DeadLetterQueueURL is the bus's dead-letter queue, whose messages the router seals into the quarantine when the
	// redrive role asks (AttrIntake); empty: it cannot.
	DeadLetterQueueURL string
	// Drain is the most messages an invocation takes from the central queue itself (CentralQueueURL), after a full
	// batch from its event source mapping (MaxReceive messages: a backlog), in chunks of DrainChunk, for as long as the
	// queue gives some and the invocation has time; DrainOff: none. The mapping's batches stay small and unbatched,
	// so a lone interruption is routed at once, and a burst is still taken in large chunks by each invocation
	// (internal/drain, docs/performance.md).
	Drain int
}

// DrainOff is Drain's value that takes nothing beyond the mapping's batches (the variable's "0"); MaxReceive is the
// most messages one ReceiveMessage gives ("ReceiveMessage", MaxNumberOfMessages); DrainChunk is how many messages an
// invocation gathers before it routes them, as one batch of the mapping would be.
const (
	DrainOff   = -1
	MaxReceive = 10
	DrainChunk = 1000
)

// MemberAccounts are the accounts of MemberReaderRoles, in order.
func (s Settings) MemberAccounts() []string {
	out := make([]string, 0, len(s.MemberReaderRoles))
	for _, arn := range s.MemberReaderRoles {
		out = append(out, AccountOfRole(arn))
	}
	return out
}

// AccountOfRole is the account of an IAM role ARN ("" when arn is not one).
func AccountOfRole(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || !IsPartition(parts[1]) || parts[2] != "iam" || !strings.HasPrefix(parts[5], "role/") || !IsAccount(parts[4]) {
		return ""
	}
	return parts[4]
}

// IsAccount reports whether a is a 12-digit AWS account ID (bytes for the event parser, which copies nothing).
func IsAccount[T ~string | ~[]byte](a T) bool {
	if len(a) != 12 {
		return false
	}
	for i := range len(a) {
		if c := a[i]; c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// MaxIDsPerDescribe is how many instance IDs the router asks about in one DescribeInstances call (the instance-id
// filter's values; the sizing model counts its calls by it).
const MaxIDsPerDescribe = 200

// DefaultSettings are the values a zero field takes.
var DefaultSettings = Settings{
	CacheSize:        50000,
	OwnerTTL:         6 * time.Hour,
	NoOwnerTTL:       time.Minute,
	QueueURLTTL:      time.Hour,
	MissingQueueTTL:  time.Minute,
	SendConcurrency:  32,
	Drain:            10000,
	MetricsNamespace: MetricsNamespace,
	BusName:          "default",
	LogLevel:         "info",
	RetryDelay:       2 * time.Second,
	RetryMaxDelay:    time.Minute,
	CanaryInterval:   30 * time.Second,
	DeniedAccountTTL: 5 * time.Minute,
	SenderCheck:      SenderEnforce,
	SenderRoleTTL:    time.Hour,
	SenderRecheck:    10 * time.Second,
	HubDelivery:      HubDeliveryExecutionRole,
}

// LogLevels are the values LogLevel takes.
var LogLevels = []string{"debug", "info", "warn", "error"}

// WithDefaults returns s with every zero field set to its default.
func (s Settings) WithDefaults() Settings {
	d := DefaultSettings
	or := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	orInt := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	orDur := func(v *time.Duration, def time.Duration) {
		if *v == 0 {
			*v = def
		}
	}
	orInt(&s.CacheSize, d.CacheSize)
	orDur(&s.OwnerTTL, d.OwnerTTL)
	orDur(&s.NoOwnerTTL, d.NoOwnerTTL)
	orDur(&s.QueueURLTTL, d.QueueURLTTL)
	orDur(&s.MissingQueueTTL, d.MissingQueueTTL)
	orInt(&s.SendConcurrency, d.SendConcurrency)
	orInt(&s.Drain, d.Drain)
	or(&s.MetricsNamespace, d.MetricsNamespace)
	or(&s.BusName, d.BusName)
	or(&s.LogLevel, d.LogLevel)
	orDur(&s.RetryDelay, d.RetryDelay)
	orDur(&s.RetryMaxDelay, d.RetryMaxDelay)
	orDur(&s.CanaryInterval, d.CanaryInterval)
	orDur(&s.DeniedAccountTTL, d.DeniedAccountTTL)
	or(&s.SenderCheck, d.SenderCheck)
	orDur(&s.SenderRoleTTL, d.SenderRoleTTL)
	orDur(&s.SenderRecheck, d.SenderRecheck)
	or(&s.HubDelivery, d.HubDelivery)
	return s
}

// Environ renders s as environment variables: one per non-zero field, so the router's defaults apply to the
// rest. LoadSettings reads them back.
func (s Settings) Environ() map[string]string {
	env := map[string]string{}
	set := func(name, v string) {
		if v != "" {
			env[name] = v
		}
	}
	setInt := func(name string, v int) {
		if v != 0 {
			env[name] = strconv.Itoa(v)
		}
	}
	setDur := func(name string, v time.Duration) {
		if v != 0 {
			env[name] = v.String()
		}
	}
	set(EnvClusterQueuePrefix, s.ClusterQueuePrefix)
	set(EnvOwnerTagKeys, strings.Join(s.OwnerTagKeys, ","))
	setInt(EnvCacheSize, s.CacheSize)
	setDur(EnvOwnerTTL, s.OwnerTTL)
	setDur(EnvNoOwnerTTL, s.NoOwnerTTL)
	setDur(EnvQueueURLTTL, s.QueueURLTTL)
	setDur(EnvMissingQueueTTL, s.MissingQueueTTL)
	setInt(EnvSendConcurrency, s.SendConcurrency)
	if s.Drain == DrainOff {
		env[EnvDrain] = "0"
	} else {
		setInt(EnvDrain, s.Drain)
	}
	set(EnvMetricsNamespace, s.MetricsNamespace)
	set(EnvBusName, s.BusName)
	set(EnvLogLevel, s.LogLevel)
	set(EnvBusQueues, strings.Join(s.BusQueues, ","))
	set(EnvCentralQueueURL, s.CentralQueueURL)
	setDur(EnvRetryDelay, s.RetryDelay)
	setDur(EnvRetryMaxDelay, s.RetryMaxDelay)
	set(EnvAccount, s.Account)
	set(EnvMemberReaderRoles, strings.Join(s.MemberReaderRoles, ","))
	setDur(EnvCanaryInterval, s.CanaryInterval)
	set(EnvOrganizationID, s.OrganizationID)
	set(EnvReaderRoleName, s.ReaderRoleName)
	set(EnvPartition, s.Partition)
	setDur(EnvDeniedAccountTTL, s.DeniedAccountTTL)
	set(EnvSenderCheck, s.SenderCheck)
	set(EnvForwarderRoleName, s.ForwarderRoleName)
	set(EnvRedriveRoleName, s.RedriveRoleName)
	setDur(EnvSenderRoleTTL, s.SenderRoleTTL)
	setDur(EnvSenderRecheck, s.SenderRecheck)
	set(EnvQuarantineQueueURL, s.QuarantineQueueURL)
	set(EnvHubDelivery, s.HubDelivery)
	set(EnvSealKey, s.SealKey)
	set(EnvArchiveBucket, s.ArchiveBucket)
	set(EnvDeadLetterQueueURL, s.DeadLetterQueueURL)
	return env
}

// EnvironSize is the size Lambda counts against its 4 KB limit on environment variables: names and values.
func EnvironSize(env map[string]string) int {
	n := 0
	for k, v := range env {
		n += len(k) + len(v)
	}
	return n
}

// MaxEnvironSize is Lambda's limit on a function's environment variables.
const MaxEnvironSize = 4096

// LoadSettings reads the settings through getenv (os.Getenv in the router), fills in the defaults and checks
// them, reporting every problem at once, each with its variable's name.
func LoadSettings(getenv func(string) string) (Settings, error) {
	var errs []error
	s := Settings{
		ClusterQueuePrefix: getenv(EnvClusterQueuePrefix),
		MetricsNamespace:   getenv(EnvMetricsNamespace),
		BusName:            getenv(EnvBusName),
		LogLevel:           getenv(EnvLogLevel),
	}
	s.OwnerTagKeys = list(getenv(EnvOwnerTagKeys))
	s.BusQueues = list(getenv(EnvBusQueues))
	s.CentralQueueURL = getenv(EnvCentralQueueURL)
	s.Account = getenv(EnvAccount)
	s.MemberReaderRoles = list(getenv(EnvMemberReaderRoles))
	s.OrganizationID = getenv(EnvOrganizationID)
	s.ReaderRoleName = getenv(EnvReaderRoleName)
	s.Partition = getenv(EnvPartition)
	s.SenderCheck = getenv(EnvSenderCheck)
	s.ForwarderRoleName = getenv(EnvForwarderRoleName)
	s.RedriveRoleName = getenv(EnvRedriveRoleName)
	s.QuarantineQueueURL = getenv(EnvQuarantineQueueURL)
	s.HubDelivery = getenv(EnvHubDelivery)
	s.SealKey = getenv(EnvSealKey)
	s.ArchiveBucket = getenv(EnvArchiveBucket)
	s.DeadLetterQueueURL = getenv(EnvDeadLetterQueueURL)
	positiveInt := func(name string) int {
		v := getenv(name)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive integer", name, v))
			return 0
		}
		return n
	}
	positiveDuration := func(name string) time.Duration {
		v := getenv(name)
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive duration such as 90s or 6h", name, v))
			return 0
		}
		return d
	}
	s.CacheSize = positiveInt(EnvCacheSize)
	s.SendConcurrency = positiveInt(EnvSendConcurrency)
	if getenv(EnvDrain) == "0" {
		s.Drain = DrainOff
	} else {
		s.Drain = positiveInt(EnvDrain)
	}
	s.OwnerTTL = positiveDuration(EnvOwnerTTL)
	s.NoOwnerTTL = positiveDuration(EnvNoOwnerTTL)
	s.QueueURLTTL = positiveDuration(EnvQueueURLTTL)
	s.MissingQueueTTL = positiveDuration(EnvMissingQueueTTL)
	s.RetryDelay = positiveDuration(EnvRetryDelay)
	s.RetryMaxDelay = positiveDuration(EnvRetryMaxDelay)
	s.CanaryInterval = positiveDuration(EnvCanaryInterval)
	s.DeniedAccountTTL = positiveDuration(EnvDeniedAccountTTL)
	s.SenderRoleTTL = positiveDuration(EnvSenderRoleTTL)
	s.SenderRecheck = positiveDuration(EnvSenderRecheck)
	if s.RetryDelay > 0 && s.RetryMaxDelay > 0 && s.RetryMaxDelay < s.RetryDelay {
		errs = append(errs, fmt.Errorf("%s: %s is shorter than %s (%s)", EnvRetryMaxDelay, s.RetryMaxDelay, EnvRetryDelay, s.RetryDelay))
	}
	if err := queuename.ValidatePrefix(s.ClusterQueuePrefix); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", EnvClusterQueuePrefix, err))
	}
	if s.Account != "" && !IsAccount(s.Account) {
		errs = append(errs, fmt.Errorf("%s: %q is not a 12-digit account ID", EnvAccount, s.Account))
	}
	if len(s.MemberReaderRoles) > 0 && s.Account == "" {
		errs = append(errs, fmt.Errorf("%s: needs %s, the router's own account", EnvMemberReaderRoles, EnvAccount))
	}
	if s.OrganizationID != "" {
		if !organizationRE.MatchString(s.OrganizationID) {
			errs = append(errs, fmt.Errorf("%s: %q is not an AWS Organizations ID such as o-a1b2c3d4e5", EnvOrganizationID, s.OrganizationID))
		}
		if s.Account == "" {
			errs = append(errs, fmt.Errorf("%s: needs %s, the router's own account", EnvOrganizationID, EnvAccount))
		}
		if !roleNameRE.MatchString(s.ReaderRoleName) {
			errs = append(errs, fmt.Errorf("%s: %q is not a role name, which %s needs", EnvReaderRoleName, s.ReaderRoleName, EnvOrganizationID))
		}
		if !IsPartition(s.Partition) {
			errs = append(errs, fmt.Errorf("%s: %q is not an AWS partition (%s), which %s needs", EnvPartition, s.Partition, strings.Join(Partitions, ", "), EnvOrganizationID))
		}
	}
	seen := map[string]bool{s.Account: true}
	for _, arn := range s.MemberReaderRoles {
		switch a := AccountOfRole(arn); {
		case a == "":
			errs = append(errs, fmt.Errorf("%s: %q is not an IAM role ARN", EnvMemberReaderRoles, arn))
		case seen[a]:
			errs = append(errs, fmt.Errorf("%s: account %s appears twice, or is the router's own", EnvMemberReaderRoles, a))
		default:
			seen[a] = true
		}
	}
	if s.SenderCheck != "" && !slices.Contains(SenderChecks, s.SenderCheck) {
		errs = append(errs, fmt.Errorf("%s: %q is not one of %s", EnvSenderCheck, s.SenderCheck, strings.Join(SenderChecks, ", ")))
	}
	// Without the forwarder's name no member's message could be attributed: every one would be refused.
	if (len(s.MemberReaderRoles) > 0 || s.OrganizationID != "" || s.ForwarderRoleName != "") && !roleNameRE.MatchString(s.ForwarderRoleName) {
		errs = append(errs, fmt.Errorf("%s: %q is not a role name, which member accounts (%s or %s) need", EnvForwarderRoleName, s.ForwarderRoleName,
			EnvMemberReaderRoles, EnvOrganizationID))
	}
	if s.RedriveRoleName != "" && !roleNameRE.MatchString(s.RedriveRoleName) {
		errs = append(errs, fmt.Errorf("%s: %q is not a role name", EnvRedriveRoleName, s.RedriveRoleName))
	}
	if s.Partition != "" && s.OrganizationID == "" && !IsPartition(s.Partition) {
		errs = append(errs, fmt.Errorf("%s: %q is not an AWS partition (%s)", EnvPartition, s.Partition, strings.Join(Partitions, ", ")))
	}
	if s.HubDelivery != "" && !slices.Contains(HubDeliveries, s.HubDelivery) {
		errs = append(errs, fmt.Errorf("%s: %q is not one of %s", EnvHubDelivery, s.HubDelivery, strings.Join(HubDeliveries, ", ")))
	}
	if s.SealKey != "" && !kmsKeyRE.MatchString(s.SealKey) {
		errs = append(errs, fmt.Errorf("%s: %q is not a KMS key ARN (arn:<partition>:kms:<region>:<account>:key/<id>)", EnvSealKey, s.SealKey))
	}
	if s.SealKey != "" && s.ArchiveBucket == "" {
		errs = append(errs, fmt.Errorf("%s is set and %s is not: a router that believes seals records the delivery of each sealed record "+
			"sent back in the archive's ledger, so that none is delivered twice; set %s", EnvSealKey, EnvArchiveBucket, EnvArchiveBucket))
	}
	if s.ArchiveBucket != "" && !BucketName(s.ArchiveBucket) {
		errs = append(errs, fmt.Errorf("%s: %q is not an S3 bucket name", EnvArchiveBucket, s.ArchiveBucket))
	}
	errs = append(errs, s.refusesEverything()...)
	if s.LogLevel != "" && !slices.Contains(LogLevels, s.LogLevel) {
		errs = append(errs, fmt.Errorf("%s: %q is not one of %s", EnvLogLevel, s.LogLevel, strings.Join(LogLevels, ", ")))
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, fmt.Errorf("invalid router configuration:\n%w", err)
	}
	return s.WithDefaults(), nil
}

// BucketName reports whether b follows S3's rules for a general purpose bucket's name: 3 to 63 lowercase letters,
// digits, dots and hyphens, starting and ending with a letter or digit, no two dots in a row, not an IP address, none
// of the reserved prefixes and suffixes ("General purpose bucket naming rules",
// https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html).
func BucketName(b string) bool {
	if !bucketRE.MatchString(b) || strings.Contains(b, "..") || ipRE.MatchString(b) {
		return false
	}
	for _, p := range []string{"xn--", "sthree-", "amzn-s3-demo-"} {
		if strings.HasPrefix(b, p) {
			return false
		}
	}
	for _, x := range []string{"-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"} {
		if strings.HasSuffix(b, x) {
			return false
		}
	}
	return true
}

var (
	bucketRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)
	ipRE     = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)
	kmsKeyRE = regexp.MustCompile(`^arn:[a-z-]+:kms:[a-z0-9-]+:\d{12}:key/[A-Za-z0-9-]+$`)
)

var (
	organizationRE = regexp.MustCompile(`^o-[a-z0-9]{10,32}$`)
	roleNameRE     = regexp.MustCompile(`^[\w+=,.@-]{1,64}$`)
)

// refusesEverything names what is missing when the sender check enforces and could attribute no message at all: the
// router's own account and partition (the hub's forwarder's ARN, and every member's reader and forwarder roles,
// need both), and the forwarder role's name (unless the hub's rules deliver through the queue's policy and there is
// no member). A router started so would keep every event of the bus in the quarantine; it refuses to start instead
// (observe mode, which refuses nothing, starts).
func (s Settings) refusesEverything() []error {
	if s.SenderCheck != "" && s.SenderCheck != SenderEnforce {
		return nil
	}
	why := fmt.Sprintf("with %s %s (the default), the router attributes a message to an account only through it, and would refuse every message without it", EnvSenderCheck, SenderEnforce)
	var errs []error
	if s.Account == "" {
		errs = append(errs, fmt.Errorf("%s: not set: the router's own account; %s", EnvAccount, why))
	}
	if s.Partition == "" && s.OrganizationID == "" { // with an organization, its own check names it
		errs = append(errs, fmt.Errorf("%s: not set: the partition of the bus's role ARNs; %s", EnvPartition, why))
	}
	members := len(s.MemberReaderRoles) > 0 || s.OrganizationID != ""
	// With members, the check of the forwarder's name below names it, in either mode.
	if s.ForwarderRoleName == "" && !members && s.HubDelivery != HubDeliveryQueuePolicy {
		errs = append(errs, fmt.Errorf("%s: not set: the role every account's rules deliver to the central queue as; %s", EnvForwarderRoleName, why))
	}
	return errs
}

// ReaderRole is the reader role the router looks account's instances up as: the one MemberReaderRoles names for
// it, or, in an organization, the role of ReaderRoleName there; "" when account is not a member.
func (s Settings) ReaderRole(account string) string {
	for _, arn := range s.MemberReaderRoles {
		if AccountOfRole(arn) == account {
			return arn
		}
	}
	if s.OrganizationID != "" && account != s.Account && IsAccount(account) {
		return "arn:" + s.Partition + ":iam::" + account + ":role/" + s.ReaderRoleName
	}
	return ""
}

// ForwarderRole is the ARN of account's forwarder role, the role its rules deliver to the central queue as, which
// may send the central queue events naming account: a member's reader role's ARN with ForwarderRoleName for a name,
// or, for the router's own account (the hub's rules), that account's role of ForwarderRoleName in Partition unless
// its rules deliver through the central queue's policy (HubDeliveryQueuePolicy); "" when account has none.
func (s Settings) ForwarderRole(account string) string {
	if s.ForwarderRoleName == "" {
		return ""
	}
	if account == s.Account && s.HubDelivery == HubDeliveryQueuePolicy {
		return "" // the hub's rules deliver as no role
	}
	if account == s.Account && IsAccount(account) && IsPartition(s.Partition) {
		return "arn:" + s.Partition + ":iam::" + account + ":role/" + s.ForwarderRoleName
	}
	reader := s.ReaderRole(account)
	if reader == "" {
		return ""
	}
	prefix, _, _ := strings.Cut(reader, ":role/") // a reader role ARN always has it (ReaderRole)
	return prefix + ":role/" + s.ForwarderRoleName
}

// list splits a comma-separated variable, dropping blanks.
func list(v string) []string {
	var out []string
	for _, k := range strings.Split(v, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// SlogLevel is LogLevel as a slog.Level.
func (s Settings) SlogLevel() slog.Level {
	var l slog.Level
	_ = l.UnmarshalText([]byte(s.LogLevel)) // validated by LoadSettings; "" is info
	return l
}
