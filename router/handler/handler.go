// Package handler builds the router's Lambda handler from its environment: the one composition root, used by
// the router's main and by the end-to-end tests and demo, which run it against emulators.
package handler

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/accounts"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/canary"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/drain"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/forward"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/intake"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/owner"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/quarantine"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/redeliver"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/route"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/release"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sdkbody"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// EvidenceCallTimeout bounds each attempt of a call to KMS or S3 (the seal, the archive, the ledger): the AWS SDK's
// standard retryer tries three times, so a stalled service costs a record at most about three of them and the backoff
// between, well within the invocation, after which the record is retried alone.
const EvidenceCallTimeout = 5 * time.Second

// Func handles one batch from the central queue; failed messages are listed in BatchItemFailures.
type Func func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error)

// FromEnv reads the router's variables through getenv and the AWS SDK's standard ones (credentials, region,
// AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_EC2, ...) from the process environment, and returns the handler.
// Logs and metrics go to out as JSON lines (stdout in Lambda, where EMF lines become metrics).
func FromEnv(ctx context.Context, getenv func(string) string, out io.Writer) (Func, error) {
	cfg, err := contract.LoadSettings(getenv)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: cfg.SlogLevel()}))
	// Once per cold start: which release's router the logs that follow come from.
	log.Info("router started", "version", release.Version, "bus", cfg.BusName)
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithAPIOptions(sdkbody.APIOptions))
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration: %w", err)
	}
	ownerOpts := owner.Options{ExtraTagKeys: cfg.OwnerTagKeys, CacheSize: cfg.CacheSize, OwnerTTL: cfg.OwnerTTL, NoOwnerTTL: cfg.NoOwnerTTL}
	sessions := accounts.NewSessions(sts.NewFromConfig(awsCfg))
	owners := accounts.New(owner.New(ec2.NewFromConfig(awsCfg), ownerOpts), accounts.Options{
		ReaderRole: cfg.ReaderRole,
		NewResolver: func(role string) (accounts.Resolver, error) {
			client, err := accounts.MemberEC2(awsCfg, sessions, role)
			if err != nil {
				return nil, err
			}
			return owner.New(client, ownerOpts), nil
		},
		DeniedTTL: cfg.DeniedAccountTTL,
		Log:       log,
	})
	sqsClient := sqs.NewFromConfig(awsCfg)
	forwarder := forward.New(sqsClient, forward.Options{
		CacheSize: cfg.CacheSize, URLTTL: cfg.QueueURLTTL, MissingTTL: cfg.MissingQueueTTL,
	})
	opts := route.Options{
		QueuePrefix:     cfg.ClusterQueuePrefix,
		Bus:             cfg.BusName,
		Hub:             cfg.Account,
		Accounts:        known(cfg),
		Canaries:        canary.NewLimiter(cfg.CanaryInterval, cfg.CacheSize, nil),
		BusQueues:       cfg.BusQueues,
		SendConcurrency: cfg.SendConcurrency,
		Metrics:         metrics.NewWriter(out, cfg.MetricsNamespace, cfg.BusName),
		Log:             log,
	}
	if cfg.CentralQueueURL != "" {
		opts.Redeliverer = redeliver.New(sqsClient, cfg.CentralQueueURL, cfg.RetryDelay, cfg.RetryMaxDelay)
	}
	// Every call of the evidence path within its own short deadline: a stalled KMS or S3 fails the call, and its
	// record is retried alone, while the invocation's live events are delivered beside it (route.Router.Handle).
	evidenceHTTP := awshttp.NewBuildableClient().WithTimeout(EvidenceCallTimeout)
	var sealer *sealing.Sealer
	if cfg.SealKey != "" {
		sealer = sealing.New(kms.NewFromConfig(awsCfg, func(o *kms.Options) { o.HTTPClient = evidenceHTTP }), cfg.SealKey)
		opts.Seals = sealer
	}
	var arch *archive.Archive
	if cfg.ArchiveBucket != "" {
		// Every call names the bus's account as the bucket's owner: a bucket of the archive's name in another account
		// is never written to nor read.
		arch = archive.New(s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.HTTPClient = evidenceHTTP }), cfg.ArchiveBucket, cfg.Account)
		opts.Ledger = arch // what the router delivers of what is sent back, recorded once
	}
	if cfg.QuarantineQueueURL != "" {
		qopts := quarantine.Options{Bus: cfg.BusName}
		if sealer != nil {
			qopts.Sealer = sealer
		}
		if arch != nil {
			qopts.Archive = arch
		}
		q := quarantine.New(sqsClient, cfg.QuarantineQueueURL, qopts)
		opts.Quarantine = q
		if cfg.DeadLetterQueueURL != "" {
			iopts := intake.Options{}
			if sealer != nil {
				iopts.Verifier = sealer
			}
			opts.Intake = intake.New(sqsClient, cfg.DeadLetterQueueURL, q, iopts)
		}
	}
	opts.SenderObserve = cfg.SenderCheck == contract.SenderObserve
	recheck := cfg.SenderRecheck
	if opts.SenderObserve {
		recheck = -1 // observe mode retries nothing: it asks IAM again rather than wait, so it counts what enforce would refuse
	}
	opts.Senders = sender.New(sender.Options{
		Hub: cfg.Account, RedriveRole: cfg.RedriveRoleName, ForwarderRole: cfg.ForwarderRole, HubByPolicy: cfg.HubDelivery == contract.HubDeliveryQueuePolicy,
		IAM: roleReaders(awsCfg, cfg, sessions), CacheSize: cfg.CacheSize, TTL: cfg.SenderRoleTTL, NegativeTTL: cfg.DeniedAccountTTL,
		Recheck: recheck,
	})
	r := route.New(owners, forwarder, opts)
	h := r.Handle
	if cfg.CentralQueueURL != "" && cfg.Drain != contract.DrainOff {
		d := drain.New(sqsClient, cfg.CentralQueueURL, r.Handle, drain.Options{Max: cfg.Drain})
		h = func(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
			resp, err := r.Handle(ctx, batch)
			if err != nil || !drain.Wraps(len(batch.Records)) {
				return resp, err
			}
			// The batch's own results are Lambda's to act on, whatever the drain meets.
			res, derr := d.Drain(ctx, batch.Records[0])
			attrs := []any{"received", res.Received, "deleted", res.Deleted, "retried", res.Retried}
			if derr != nil {
				log.WarnContext(ctx, contract.LogDrained, append(attrs, "error", derr.Error())...)
			} else if res.Received > 0 {
				log.InfoContext(ctx, contract.LogDrained, attrs...)
			}
			return resp, nil
		}
	}
	log.InfoContext(ctx, "router ready", "queuePrefix", cfg.ClusterQueuePrefix, "bus", cfg.BusName, "ownerTagKeys", cfg.OwnerTagKeys,
		"account", cfg.Account, "memberAccounts", cfg.MemberAccounts(), "organization", cfg.OrganizationID,
		"canaryInterval", cfg.CanaryInterval.String(), "senderCheck", cfg.SenderCheck, "hubDelivery", cfg.HubDelivery, "quarantine", cfg.QuarantineQueueURL,
		"sealKey", cfg.SealKey, "archiveBucket", cfg.ArchiveBucket, "drain", cfg.Drain)
	return h, nil
}

// known are the accounts on the bus: the router's own and its members'; none (every account) when the router's
// own is not set, or in an organization, whose accounts are found on their first event.
func known(cfg contract.Settings) []string {
	if cfg.Account == "" || cfg.OrganizationID != "" {
		return nil
	}
	return append([]string{cfg.Account}, cfg.MemberAccounts()...)
}

// roleReaders returns, for an account, the IAM client that reads its roles: the router's own for its own account,
// one acting as the account's reader role (the credentials its owner lookups use) for a member.
func roleReaders(awsCfg aws.Config, cfg contract.Settings, sessions *accounts.Sessions) func(account string) (sender.RoleGetter, error) {
	own := iam.NewFromConfig(awsCfg)
	var mu sync.Mutex
	members := map[string]*iam.Client{}
	return func(account string) (sender.RoleGetter, error) {
		role := cfg.ReaderRole(account)
		if role == "" {
			return own, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if c, ok := members[account]; ok {
			return c, nil
		}
		creds, err := sessions.For(role)
		if err != nil {
			return nil, err
		}
		c := iam.NewFromConfig(awsCfg, func(o *iam.Options) { o.Credentials = creds })
		members[account] = c
		return c, nil
	}
}
