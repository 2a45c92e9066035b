// Package harness assembles the whole event path on loopback for the end-to-end tests and the demo: goaws
// holding the central and cluster queues, the EC2 stub, and the router built from its environment exactly as in
// Lambda, invoked through Lambda's SQS event-source semantics.
package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/handler"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sdkbody"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/ec2stub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/iamstub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/lambdaesm"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/motos3"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/s3stub"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/sqsemu"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/stsstub"
)

// NamePrefix names this bus's shared queues, as a stack's namePrefix does; Prefix starts its cluster queues;
// CentralQueue and DeadLetterQueue are the bus's own.
const (
	NamePrefix      = "kib-e2e"
	Prefix          = NamePrefix + queuename.Separator
	CentralQueue    = NamePrefix + "-central"
	DeadLetterQueue = NamePrefix + "-dlq"
	QuarantineQueue = NamePrefix + "-quarantine"
	// ArchiveBucket is the bus's archive, as S3 completes the stack's prefix (bus.ArchiveBucketPrefix).
	ArchiveBucket = NamePrefix + "-archive-20261127000000000000000001"
	// ArchiveDays is its default retention, governance mode, as the stack's defaults declare it.
	ArchiveDays = 365
)

// Options shape a Bus.
type Options struct {
	Clusters []string // a queue is created for each, in sqsemu.Account (the bus's)
	// Members are member accounts of the bus and their clusters: each cluster's queue is created in its
	// account, the router gets each member's reader role, assumed through the STS stub.
	Members map[string][]string
	// Organization, when set, admits the members by it (organization.id): the router is given no list, and
	// derives each account's reader role from the event's account and the role's fixed name.
	Organization string
	Env          map[string]string // router variables beyond, or instead of, those of Settings
	// BatchSize of the event source mapping; 10 when 0.
	BatchSize int
	// SDKRetries keeps the AWS SDK's own retries; off by default so each injected fault reaches the router.
	SDKRetries bool
	// Handler, when set, is invoked instead of a router built in this process (e.g. the real binary run
	// under the Lambda Runtime API); it inherits the environment New sets.
	Handler lambdaesm.Handler
	// RetryDelay is the router's first backoff for a message left for redelivery; 0 keeps its default.
	RetryDelay time.Duration
	// HubDelivery is how the hub's rules deliver (contract.HubDeliveryQueuePolicy: Publish sends the hub's events as
	// no role, as EventBridge through the queue's policy); "" as the hub's forwarder.
	HubDelivery string
	// Seal, when set, is the KMS the router seals what it keeps with (tests/kmsemu runs one): without it the router
	// seals nothing, and believes nothing the redrive role sends back.
	Seal *Seal
	// MotoS3 keeps the archive in moto's S3 (motos3) instead of the stand-in: a second S3 this project did not write,
	// which evaluates no bucket policy.
	MotoS3 bool
}

// Seal is a KMS endpoint and the seal key there, whose policy lets only the router's role (RouterRoleARN) sign.
type Seal struct{ URL, KeyARN string }

// Bus is the running path.
type Bus struct {
	SQS     *sqsemu.Server
	EC2     *ec2stub.Server
	Central string
	// DLQ and Quarantine are the URLs of the bus's dead-letter and quarantine queues.
	DLQ, Quarantine string
	ESM             lambdaesm.Mapping
	Out             *SyncBuffer // the router's stdout: JSON logs and EMF metrics
	Stderr          *SyncBuffer // the router binary's stderr (NewWithBinary); nil for a router in this process
	// Environments are the router binary's processes (NewWithBinaries); none for a router in this process.
	Environments []Environment
	// Settings are the router's: what the infrastructure would give it on this bus.
	Settings contract.Settings
	// STS answers the router's AssumeRole of the members' reader roles, and GetCallerIdentity.
	STS *stsstub.Server
	// IAM holds every account's roles and their unique IDs, and answers the router's GetRole of the redrive role
	// and, as each member's reader, of that member's forwarder role.
	IAM *iamstub.Server
	// S3 holds the archive (ArchiveBucket), with Object Lock and the archive's policy: only the router writes; Moto
	// holds it instead with Options.MotoS3 (S3 is nil then).
	S3   *s3stub.Server
	Moto *motos3.Server

	members map[string]bool
	env     map[string]string // router variables beyond those of Settings
	restore func()
	stop    func()            // stops the router binary, if any
	urls    map[string]string // queue name -> URL, resolved once as Karpenter does at start-up
	account map[string]string // queue name -> its account, when not the bus's
}

// New starts a Bus. It sets the AWS SDK's environment variables of this process, as Lambda would, until Close.
func New(ctx context.Context, opts Options) (*Bus, error) {
	b := &Bus{SQS: sqsemu.Start(), EC2: ec2stub.Start(), IAM: iamstub.Start(sqsemu.Account), Out: &SyncBuffer{}, urls: map[string]string{},
		account: map[string]string{}, members: map[string]bool{}, env: opts.Env}
	router := b.IAM.Create(sqsemu.Account, RouterRoleName) // the router runs as a session of it, as a Lambda function runs as its role
	if opts.MotoS3 {
		m, err := motos3.Start(ctx)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.Moto = m
		if err := m.CreateArchive(ctx, ArchiveBucket, "GOVERNANCE", ArchiveDays); err != nil {
			b.Close()
			return nil, err
		}
	} else {
		b.S3 = s3stub.Start()
		b.S3.CreateBucket(ArchiveBucket, sqsemu.Account, &s3stub.Retention{Mode: "GOVERNANCE", Days: ArchiveDays}, s3stub.Policy{Writer: router, Conditional: true, NoDeletes: true})
	}
	b.IAM.Create(sqsemu.Account, RedriveRoleName)
	b.IAM.Create(sqsemu.Account, ForwarderRoleName) // the hub's rules deliver as it
	readers := map[string]string{}                  // reader role -> the account allowed to assume it (the bus's)
	var roles []string
	for _, m := range slices.Sorted(maps.Keys(opts.Members)) {
		role := ReaderRole(m)
		readers[role] = sqsemu.Account
		roles = append(roles, role)
		b.members[m] = true
		b.IAM.Create(m, ReaderRoleName)
		b.IAM.Create(m, ForwarderRoleName)
	}
	b.IAM.Backdate(time.Now().Add(-time.Hour)) // deployed before the events: IAM gives CreateDate to the second
	// STS answers the router's AssumeRole of the members' reader roles, and who an operator is (requeue).
	b.STS = stsstub.Start(readers, sqsemu.Account)
	b.STS.SetRoleIDs(b.IAM.IDOfARN)
	b.STS.SetRoleNames(b.IAM.Name)
	b.STS.Allow(RedriveRoleARN, sqsemu.Account, true)
	b.STS.RequireSourceIdentity(RedriveRoleARN)
	sdkEnv := map[string]string{
		"AWS_ENDPOINT_URL_SQS": b.SQS.URL, "AWS_ENDPOINT_URL_EC2": b.EC2.URL, "AWS_REGION": sqsemu.Region,
		"AWS_ACCESS_KEY_ID": caller.SessionKey(sqsemu.Account, router, "router"), "AWS_SECRET_ACCESS_KEY": "test", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_PROFILE": "",
		"AWS_SESSION_TOKEN": "stub", "AWS_MAX_ATTEMPTS": "1", "AWS_ENDPOINT_URL_IAM": b.IAM.URL, "AWS_ENDPOINT_URL_S3": b.S3URL(),
	}
	if opts.Seal != nil {
		sdkEnv["AWS_ENDPOINT_URL_KMS"] = opts.Seal.URL
	}
	if opts.SDKRetries {
		delete(sdkEnv, "AWS_MAX_ATTEMPTS")
	}
	sdkEnv["AWS_ENDPOINT_URL_STS"] = b.STS.URL
	b.restore = setenv(sdkEnv)
	var err error
	// The bus's queues refuse to be dead-letter queues as the stack declares them (bus.DenyAllRedrive,
	// bus.OnlyFrom: TestTheQuarantineKeepsItsEvidence pins those values), which the emulator enforces.
	for _, q := range []struct {
		name  string
		url   *string
		allow string
	}{
		{CentralQueue, &b.Central, `{"redrivePermission":"denyAll"}`},
		{DeadLetterQueue, &b.DLQ, `{"redrivePermission":"byQueue","sourceQueueArns":["arn:aws:sqs:` + sqsemu.Region + `:` + sqsemu.Account + `:` + CentralQueue + `"]}`},
		{QuarantineQueue, &b.Quarantine, `{"redrivePermission":"denyAll"}`},
	} {
		// Every queue of the bus takes SQS's largest message, as the stack declares it.
		if *q.url, err = b.SQS.CreateQueue(ctx, q.name, map[string]string{"RedriveAllowPolicy": q.allow, "MaximumMessageSize": maxMessage}); err != nil {
			b.Close()
			return nil, err
		}
	}
	b.Settings = contract.Settings{
		ClusterQueuePrefix: Prefix, BusName: NamePrefix, BusQueues: []string{CentralQueue, DeadLetterQueue, QuarantineQueue}, CentralQueueURL: b.Central,
		RetryDelay: opts.RetryDelay, Account: sqsemu.Account, MemberReaderRoles: roles, RedriveRoleName: RedriveRoleName,
		ForwarderRoleName: ForwarderRoleName, Partition: "aws", QuarantineQueueURL: b.Quarantine, HubDelivery: opts.HubDelivery,
		ArchiveBucket: ArchiveBucket, DeadLetterQueueURL: b.DLQ,
	}
	if opts.Seal != nil {
		b.Settings.SealKey = opts.Seal.KeyARN
	}
	if opts.Organization != "" {
		b.Settings.MemberReaderRoles = nil
		b.Settings.OrganizationID, b.Settings.ReaderRoleName = opts.Organization, ReaderRoleName
	}
	for _, c := range opts.Clusters {
		if _, err := b.SQS.CreateQueue(ctx, QueueOf(c), map[string]string{"MessageRetentionPeriod": "300", "MaximumMessageSize": maxMessage}); err != nil {
			b.Close()
			return nil, err
		}
	}
	for m, clusters := range opts.Members {
		for _, c := range clusters {
			if _, err := b.SQS.CreateQueueIn(ctx, m, QueueOf(c), map[string]string{"MessageRetentionPeriod": "300", "MaximumMessageSize": maxMessage}); err != nil {
				b.Close()
				return nil, err
			}
			b.account[QueueOf(c)] = m
		}
	}
	h := opts.Handler
	if h == nil {
		routerEnv := b.RouterEnv()
		fn, err := handler.FromEnv(ctx, func(k string) string { return routerEnv[k] }, b.Out)
		if err != nil {
			b.Close()
			return nil, err
		}
		h = lambdaesm.Handler(fn)
	}
	batch := opts.BatchSize
	if batch == 0 {
		batch = 10
	}
	b.ESM = lambdaesm.Mapping{SQS: b.SQS.Client(), QueueURL: b.Central, BatchSize: batch, Handler: h}
	return b, nil
}

// RouterEnv is the router's environment on this bus: its settings', then Options.Env's.
func (b *Bus) RouterEnv() map[string]string {
	env := b.Settings.Environ()
	for k, v := range b.env {
		env[k] = v
	}
	return env
}

// Close stops the stubs and restores the environment. goaws stays up for the process; Start resets it.
func (b *Bus) Close() {
	if b.stop != nil {
		b.stop()
	}
	b.EC2.Close()
	b.IAM.Close()
	if b.S3 != nil {
		b.S3.Close()
	}
	if b.Moto != nil {
		b.Moto.Close()
	}
	if b.STS != nil {
		b.STS.Close()
	}
	b.restore()
}

// ReaderRoleName is the members' reader role's name, as a stack of this bus's name prefix names it in the
// emulator's region (infra's member.ReaderRoleName: IAM's names are global, so the region is in it).
const ReaderRoleName = NamePrefix + "-reader-" + sqsemu.Region

// ForwarderRoleName and RedriveRoleName name the accounts' forwarder role, which their rules send to the central
// queue as (the hub's and each member's), and the bus's redrive role, as the stack names them (bus.ForwarderRoleName,
// bus.RedriveRoleName).
const (
	ForwarderRoleName = NamePrefix + "-forward-" + sqsemu.Region
	RedriveRoleName   = NamePrefix + "-redrive-" + sqsemu.Region
	// RouterRoleName is the router's role: the one principal the seal key lets sign and the archive lets write.
	RouterRoleName = NamePrefix + "-router-" + sqsemu.Region
	RouterRoleARN  = "arn:aws:iam::" + sqsemu.Account + ":role/" + RouterRoleName
	// RedriveRoleARN is the redrive role, which an operator of the bus's account (a principal of redrive.principals)
	// assumes only with a source identity, as its trust requires.
	RedriveRoleARN = "arn:aws:iam::" + sqsemu.Account + ":role/" + RedriveRoleName
)

// ReaderRole is the reader role of member account m.
func ReaderRole(m string) string { return "arn:aws:iam::" + m + ":role/" + ReaderRoleName }

// AccountOf is the account of queue: a member's, or the bus's.
func (b *Bus) AccountOf(queue string) string {
	if a, ok := b.account[queue]; ok {
		return a
	}
	return sqsemu.Account
}

// QueueOf is the name of cluster's queue on this bus.
func QueueOf(cluster string) string { return queuename.For(Prefix, cluster) }

// Publish puts bodies on the central queue, one SendMessage each, as the EventBridge rules do: each account's as
// its rules send it, as its forwarder role (the hub's, a member's, or an account's not on the bus); with the hub's
// rules delivering through the queue's policy, the hub's as no role.
func (b *Bus) Publish(ctx context.Context, bodies ...string) error {
	for _, body := range bodies {
		var ev struct{ Account string }
		_ = json.Unmarshal([]byte(body), &ev)
		c := b.As(sqsemu.Account, ForwarderRoleName)
		switch {
		case ev.Account != sqsemu.Account && contract.IsAccount(ev.Account):
			// A member's rules, or an account not on the bus (its own rules, were it let in).
			c = b.As(ev.Account, ForwarderRoleName)
		case b.Settings.HubDelivery == contract.HubDeliveryQueuePolicy:
			c = b.SQS.Client() // no credentials: caller.ServiceSender, as a service's delivery
		}
		if err := b.PublishAs(ctx, c, body); err != nil {
			return err
		}
	}
	return nil
}

// PublishAs puts bodies on the central queue, one SendMessage each, with client: a forgery's, a redrive's.
func (b *Bus) PublishAs(ctx context.Context, client *sqs.Client, bodies ...string) error {
	return b.PublishWith(ctx, client, nil, bodies...)
}

// PublishWith is PublishAs with string message attributes attrs on each message (what make requeue sends back with).
func (b *Bus) PublishWith(ctx context.Context, client *sqs.Client, attrs map[string]string, bodies ...string) error {
	var ma map[string]sqstypes.MessageAttributeValue
	for k, v := range attrs {
		if ma == nil {
			ma = map[string]sqstypes.MessageAttributeValue{}
		}
		ma[k] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	for _, body := range bodies {
		if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &b.Central, MessageBody: aws.String(body), MessageAttributes: ma}); err != nil {
			return fmt.Errorf("publishing: %w", err)
		}
	}
	return nil
}

// As is an SQS client acting as a session of role roleName of account (its unique ID as IAM holds it now): what
// an EventBridge rule whose execution role it is sends as, or an operator who assumed it.
func (b *Bus) As(account, roleName string) *sqs.Client {
	key := caller.SessionKey(account, b.IAM.ID(account, roleName), "stub-session")
	return sqs.New(sqs.Options{
		Region: sqsemu.Region, BaseEndpoint: aws.String(b.SQS.URL),
		Credentials: credentials.NewStaticCredentialsProvider(key, "stub", "stub-token"), APIOptions: sdkbody.APIOptions,
	})
}

// STSAs is an STS client acting as the same session As gives: whom GetCallerIdentity names.
func (b *Bus) STSAs(account, roleName string) *sts.Client {
	key := caller.SessionKey(account, b.IAM.ID(account, roleName), "stub-session")
	return sts.New(sts.Options{
		Region: sqsemu.Region, BaseEndpoint: aws.String(b.STS.URL),
		Credentials: credentials.NewStaticCredentialsProvider(key, "stub", "stub-token"), APIOptions: sdkbody.APIOptions,
	})
}

// Drain runs invocations until the central queue holds no message, visible or in flight (at most 1000
// invocations, two minutes).
func (b *Bus) Drain(ctx context.Context) ([]lambdaesm.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return b.ESM.Drain(ctx, 1000)
}

// Consume reads queue as Karpenter does: its URL resolved once, receives of up to 10 messages, then one
// DeleteMessage per message, until the queue is empty. It returns the bodies in the order received.
func (b *Bus) Consume(ctx context.Context, queue string) ([]string, error) {
	c := b.SQS.ClientIn(b.AccountOf(queue))
	u, ok := b.urls[queue]
	if !ok {
		out, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &queue})
		if err != nil {
			return nil, fmt.Errorf("queue %s: %w", queue, err)
		}
		u = aws.ToString(out.QueueUrl)
		b.urls[queue] = u
	}
	var bodies []string
	for {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &u, MaxNumberOfMessages: 10})
		if err != nil {
			return nil, fmt.Errorf("receiving from %s: %w", queue, err)
		}
		if len(out.Messages) == 0 {
			return bodies, nil
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
			if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &u, ReceiptHandle: m.ReceiptHandle}); err != nil {
				return nil, fmt.Errorf("deleting from %s: %w", queue, err)
			}
		}
	}
}

// Serve runs the event source mapping until ctx ends, as Lambda's pollers do: an invocation whenever the
// central queue holds messages.
func (b *Bus) Serve(ctx context.Context) {
	for ctx.Err() == nil {
		if r, err := b.ESM.PollOnce(ctx); err != nil || r.Received == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// Karpenter reads the queue of cluster until ctx ends, as Karpenter's interruption controller does: receives of
// up to 10 messages (long polls), each handed to handle, then deleted.
func (b *Bus) Karpenter(ctx context.Context, cluster string, handle func(body string)) error {
	c := b.SQS.ClientIn(b.AccountOf(QueueOf(cluster)))
	u, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(QueueOf(cluster))})
	if err != nil {
		return fmt.Errorf("queue of %s: %w", cluster, err)
	}
	for ctx.Err() == nil {
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: u.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			continue // ctx ended, or a transient error Karpenter would retry
		}
		for _, m := range out.Messages {
			handle(aws.ToString(m.Body))
			_, _ = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: u.QueueUrl, ReceiptHandle: m.ReceiptHandle})
		}
	}
	return nil
}

// DeleteQueue deletes queue, as an operator removing a cluster would.
func (b *Bus) DeleteQueue(ctx context.Context, queue string) error {
	c := b.SQS.Client()
	u, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &queue})
	if err != nil {
		return fmt.Errorf("queue %s: %w", queue, err)
	}
	delete(b.urls, queue)
	_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: u.QueueUrl})
	return err
}

// Drop is one "message dropped" log line of the router.
type Drop struct {
	EventID, Reason, Error string
}

// Drops returns the router's drop log lines, keyed by event id (or, for unparseable bodies, their prefix).
func (b *Bus) Drops() map[string][]Drop {
	out := map[string][]Drop{}
	for _, l := range b.Out.Lines() {
		if l["msg"] != "message dropped" {
			continue
		}
		id, _ := l["eventId"].(string)
		if id == "" {
			id, _ = l["bodyPrefix"].(string)
		}
		reason, _ := l["reason"].(string)
		why, _ := l["error"].(string)
		out[id] = append(out[id], Drop{EventID: id, Reason: reason, Error: why})
	}
	return out
}

// Metric sums metric over the router's EMF lines whose dimension dim is val; with dim "", over the per-bus
// totals.
func (b *Bus) Metric(name, dim, val string) float64 {
	var sum float64
	for _, l := range b.Out.Lines() {
		if _, emf := l["_aws"]; !emf {
			continue
		}
		v, ok := l[name].(float64)
		if !ok {
			continue
		}
		_, k := l[contract.DimKind]
		_, c := l[contract.DimCluster]
		_, r := l[contract.DimReason]
		if (dim == "" && !k && !c && !r) || (dim != "" && l[dim] == val) {
			sum += v
		}
	}
	return sum
}

// SyncBuffer is a goroutine-safe buffer of JSON lines; or, once Direct gave processes a file to write to, that file's.
type SyncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	file string
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// Direct is a file processes write to as their stdout, which the buffer then reads: a write to a file is there when
// the write returns, so what a process wrote before it answered is read after its answer. Through a pipe (exec.Cmd
// with any other writer) it is copied by a goroutine of its own, maybe after the answer was read. The caller closes
// the file; the buffer reads it by name until Detach.
func (s *SyncBuffer) Direct() (*os.File, error) {
	f, err := os.CreateTemp("", "kib-process-out-*")
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	// Appending: every process of a bus writes to the file, each write whole at its end.
	if f, err = os.OpenFile(f.Name(), os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.file = f.Name()
	s.mu.Unlock()
	return f, nil
}

// Detach keeps what the file of Direct holds, once its writers are gone, and deletes the file.
func (s *SyncBuffer) Detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.file == "" {
		return
	}
	data, _ := os.ReadFile(s.file)
	s.b.Write(data)
	_ = os.Remove(s.file)
	s.file = ""
}

// text is everything written so far; s.mu is held.
func (s *SyncBuffer) text() string {
	if s.file == "" {
		return s.b.String()
	}
	data, _ := os.ReadFile(s.file) // removed: nothing more to read
	return s.b.String() + string(data)
}

// String is everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text()
}

// Text is every line written so far, as written.
func (s *SyncBuffer) Text() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.text()), "\n")
}

// Lines decodes every JSON line written so far.
func (s *SyncBuffer) Lines() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.text()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// setenv sets vars and returns a function restoring the previous environment.
func setenv(vars map[string]string) func() {
	prev := map[string]*string{}
	for k, v := range vars {
		if old, ok := os.LookupEnv(k); ok {
			prev[k] = &old
		} else {
			prev[k] = nil
		}
		os.Setenv(k, v)
	}
	return func() {
		for k, old := range prev {
			if old == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *old)
			}
		}
	}
}

// S3URL is the endpoint of the S3 that holds the archive.
func (b *Bus) S3URL() string {
	if b.Moto != nil {
		return b.Moto.URL
	}
	return b.S3.URL
}

// ArchiveKeys are the keys of the archive's objects, sorted, whichever S3 holds it.
func (b *Bus) ArchiveKeys(ctx context.Context) ([]string, error) {
	if b.Moto != nil {
		return b.Moto.Keys(ctx, ArchiveBucket)
	}
	return b.S3.Keys(ArchiveBucket), nil
}

// ArchiveObject is the latest version of the archive's key, whichever S3 holds it.
func (b *Bus) ArchiveObject(ctx context.Context, key string) ([]byte, error) {
	if b.Moto == nil {
		return b.S3.Object(ArchiveBucket, key), nil
	}
	out, err := b.Moto.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(ArchiveBucket), Key: aws.String(key)})
	if err != nil {
		return nil, err
	}
	defer out.Body.Close()
	return io.ReadAll(out.Body)
}

// maxMessage is every queue's MaximumMessageSize, as the stack declares it (contract.MaxMessageBytes).
var maxMessage = strconv.Itoa(contract.MaxMessageBytes)
