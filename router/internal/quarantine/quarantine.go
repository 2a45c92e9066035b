// Package quarantine keeps the messages the router refuses (contract.QuarantineReasons) in the bus's quarantine
// queue instead of deleting them: the body byte for byte, and why it was refused in message attributes
// (contract.AttrReason, ...), so an operator can read it and send it back (cmd/requeue, docs/operations.md).
//
// Each kept message is sealed first (router/sealing: a KMS signature over what the way back relies on, carried as
// contract.AttrSeal), so that the router believes what a message sent back says of itself only when it said it
// first; and archived (router/archive: once, in a bucket with Object Lock), so that what the quarantine loses (its
// 14 days, a purge, its deletion) is still evidence.
//
// A message is kept when it was sealed, archived, and SendMessageBatch accepted its entry; a seal or an archive write
// that failed, an entry SQS failed, or a call that failed, leaves it unkept, and the router retries it rather than
// delete it: a refusal never loses a message, and it never waits on another (the router keeps while it sends the
// batch's deliveries). A retried refusal is archived once (the archive's writes are conditional).
package quarantine

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/archive"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sealing"
)

// SQS is the one call the quarantine makes.
type SQS interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

var _ SQS = (*sqs.Client)(nil)

// Sealer seals what is kept (sealing.Sealer).
type Sealer interface {
	Seal(ctx context.Context, rec sealing.Record) (string, error)
	PublicKey(ctx context.Context) (*ecdsa.PublicKey, []byte, error)
	Key() string
}

// Archiver writes what is kept to the archive, once each (archive.Archive).
type Archiver interface {
	Put(ctx context.Context, key string, e archive.Entry) error
	PutPublicKey(ctx context.Context, keyARN string, pemBytes []byte) error
}

var (
	_ Sealer   = (*sealing.Sealer)(nil)
	_ Archiver = (*archive.Archive)(nil)
)

// Message is a refused message and why.
type Message struct {
	Body   *string
	Reason contract.Reason
	Err    error
	// Account is the account the event names ("" when the body is no event); Sender and Sent are the SenderId and
	// SentTimestamp (epoch milliseconds, as SQS gives it) the router judged: the message's in the central queue, or
	// the first sender of a message sent back; MessageID its ID where it was first refused (a message sent back keeps
	// its first one), EventID its event's id.
	Account, Sender, Sent, MessageID, EventID string
	// Refused is the ID of the message refused now, in the queue it was read from (the archive's record is named by
	// it); "" is MessageID.
	Refused string
	// FromDLQ: Sender is the one the dead-letter queue held (contract.AttrOrigin).
	FromDLQ bool
}

// Record is what the seal of m covers.
func (m Message) Record() sealing.Record {
	return sealing.Record{
		BodySHA256: sealing.BodyDigest(aws.ToString(m.Body)), Account: m.Account, Reason: string(m.Reason),
		FirstSender: m.Sender, FirstSent: m.Sent, Origin: origin(m.FromDLQ), MessageID: m.MessageID, Refused: again(m),
	}
}

// again is the ID of the message m refuses, when m keeps a record again (its first refusal was another message's).
func again(m Message) string {
	if m.Refused == m.MessageID {
		return ""
	}
	return m.Refused
}

func origin(fromDLQ bool) string {
	if fromDLQ {
		return contract.OriginDLQ
	}
	return ""
}

// Options shape a Queue: without a Sealer nothing is sealed (and nothing sent back will verify), without an
// Archive nothing is archived.
type Options struct {
	Sealer  Sealer
	Archive Archiver
	// Bus names the bus in the archive's records.
	Bus string
	// Concurrency bounds the seals and archive writes at once (10 unless set).
	Concurrency int
	// Now defaults to time.Now.
	Now func() time.Time
}

// Queue keeps messages in one SQS queue, sealed and archived.
type Queue struct {
	sqs  SQS
	url  string
	opts Options

	mu        sync.Mutex
	keyStored bool   // the seal key's public key is in the archive
	keyPEM    string // the seal key's public key, as each record carries it
}

// New returns the quarantine at url.
func New(client SQS, url string, opts Options) *Queue {
	if opts.Concurrency <= 0 {
		opts.Concurrency = 10
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Queue{sqs: client, url: url, opts: opts}
}

// maxEntries is SendMessageBatch's entry limit; maxBytes, its limit on the sum of the entries' sizes (bodies and
// attributes: "SendMessageBatch", https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html).
const maxEntries, maxBytes = 10, 1 << 20

var entryIDs = [maxEntries]string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}

// ErrArchivedOnly: the message was sealed and archived, but is too large for the quarantine with the attributes it
// needs there (contract.MaxMessageBytes, its body and attributes counted together): kept, in the archive only, where
// make requeue FROM=archive lists it. An event near EventBridge's limit (256 KB) is: it fits the queues alone, not
// with the quarantine's attributes (the seal, the first sender, why it was refused).
var ErrArchivedOnly = errors.New("kept in the archive only: the body and the attributes the quarantine needs are over SQS's message size")

// Keep seals each message, archives it and sends it to the quarantine, and returns one error per message: nil when
// all three were done, ErrArchivedOnly when the quarantine cannot hold it but the archive does.
func (q *Queue) Keep(ctx context.Context, msgs []Message) []error {
	errs := make([]error, len(msgs))
	seals := q.seal(ctx, msgs, errs)
	q.archive(ctx, msgs, seals, errs)
	attrs := make([]map[string]types.MessageAttributeValue, len(msgs))
	sizes := make([]int, len(msgs))
	var pending []int
	for i := range msgs {
		if errs[i] != nil {
			continue
		}
		if attrs[i], sizes[i], errs[i] = q.fit(msgs[i], seals[i]); errs[i] == nil {
			pending = append(pending, i)
		}
	}
	for start := 0; start < len(pending); {
		end, size := start, 0
		for end < len(pending) && end-start < maxEntries {
			n := sizes[pending[end]]
			if end > start && size+n > maxBytes {
				break
			}
			size += n
			end++
		}
		batch := pending[start:end]
		out := make([]error, len(batch))
		q.send(ctx, msgs, attrs, batch, out)
		for j, i := range batch {
			errs[i] = out[j]
		}
		start = end
	}
	return errs
}

// fit returns m's attributes and its size as SQS counts it, within contract.MaxMessageBytes: without its error when
// that is what it takes (the archive keeps the error whole); ErrArchivedOnly when not even then, or an error when
// there is no archive either.
func (q *Queue) fit(m Message, seal string) (map[string]types.MessageAttributeValue, int, error) {
	a := attributes(m, seal)
	n := size(aws.ToString(m.Body), a)
	if n <= contract.MaxMessageBytes {
		return a, n, nil
	}
	if e, ok := a[contract.AttrError]; ok {
		delete(a, contract.AttrError)
		n -= contract.AttributeBytes(contract.AttrError, aws.ToString(e.DataType), aws.ToString(e.StringValue))
		if n <= contract.MaxMessageBytes {
			return a, n, nil
		}
	}
	if q.opts.Archive == nil {
		return nil, 0, fmt.Errorf("keeping the message in the quarantine: %d bytes with its attributes, over SQS's %d, and no archive", n, contract.MaxMessageBytes)
	}
	return nil, 0, ErrArchivedOnly
}

// seal seals every message (none without a Sealer), errs set for those it could not.
func (q *Queue) seal(ctx context.Context, msgs []Message, errs []error) []string {
	seals := make([]string, len(msgs))
	if q.opts.Sealer == nil {
		return seals
	}
	parallel(q.opts.Concurrency, len(msgs), func(i int) {
		s, err := q.opts.Sealer.Seal(ctx, msgs[i].Record())
		if err != nil {
			errs[i] = fmt.Errorf("keeping the message in the quarantine: %w", err)
			return
		}
		seals[i] = s
	})
	return seals
}

// archive writes every message sealed so far to the archive (when there is one), and, before the first, the seal
// key's public key, which verifies every record after the key is gone.
func (q *Queue) archive(ctx context.Context, msgs []Message, seals []string, errs []error) {
	if q.opts.Archive == nil {
		return
	}
	pemKey, err := q.storeKey(ctx)
	if err != nil {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = fmt.Errorf("keeping the message in the quarantine: %w", err)
			}
		}
		return
	}
	now := q.opts.Now()
	parallel(q.opts.Concurrency, len(msgs), func(i int) {
		if errs[i] != nil {
			return
		}
		m := msgs[i]
		e := archive.Entry{
			Bus: q.opts.Bus, KeptAt: now.UTC(), Refused: cmp(m.Refused, m.MessageID), Record: m.Record(), Seal: seals[i],
			Body: aws.ToString(m.Body), EventID: m.EventID,
		}
		if m.Err != nil {
			e.Error = m.Err.Error()
		}
		if q.opts.Sealer != nil {
			e.SealKey, e.SealAlgorithm, e.PublicKey = q.opts.Sealer.Key(), string(sealing.Algorithm), pemKey
		}
		if err := q.opts.Archive.Put(ctx, e.Key(millis(m.Sent)), e); err != nil {
			errs[i] = fmt.Errorf("keeping the message in the quarantine: %w", err)
		}
	})
}

// storeKey archives the seal key's public key, once per process (a failure is tried again next time), and returns it
// (PEM), which every record carries too: keys/<key id>.pem is written once, so its lock ends before the lock of the
// records written later; each record's own copy is locked as long as the record.
func (q *Queue) storeKey(ctx context.Context) (string, error) {
	if q.opts.Sealer == nil {
		return "", nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.keyStored {
		return q.keyPEM, nil
	}
	pub, _, err := q.opts.Sealer.PublicKey(ctx)
	if err != nil {
		return "", err
	}
	b, err := sealing.PEM(pub)
	if err != nil {
		return "", err
	}
	if err := q.opts.Archive.PutPublicKey(ctx, q.opts.Sealer.Key(), b); err != nil {
		return "", err
	}
	q.keyStored, q.keyPEM = true, string(b)
	return q.keyPEM, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// millis is an epoch-milliseconds string as a time; zero when it is none.
func millis(v string) time.Time {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// parallel runs fn(0..n-1), at most limit at a time.
func parallel(limit, n int, fn func(i int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}

// send sends the messages of msgs at batch (indexes), with their attributes, in one SendMessageBatch; errs is batch's.
func (q *Queue) send(ctx context.Context, msgs []Message, attrs []map[string]types.MessageAttributeValue, batch []int, errs []error) {
	entries := make([]types.SendMessageBatchRequestEntry, len(batch))
	for j, i := range batch {
		entries[j] = types.SendMessageBatchRequestEntry{Id: aws.String(entryIDs[j]), MessageBody: msgs[i].Body, MessageAttributes: attrs[i]}
	}
	out, err := q.sqs.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q.url), Entries: entries})
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("keeping the message in the quarantine: %w", err)
		}
		return
	}
	for i := range errs {
		errs[i] = errors.New("keeping the message in the quarantine: SQS answered nothing for its entry")
	}
	for _, s := range out.Successful {
		if i, err := strconv.Atoi(aws.ToString(s.Id)); err == nil && i < len(errs) {
			errs[i] = nil
		}
	}
	for _, f := range out.Failed {
		if i, err := strconv.Atoi(aws.ToString(f.Id)); err == nil && i < len(errs) {
			errs[i] = fmt.Errorf("keeping the message in the quarantine: %s: %s", aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
}

// attributes are the message attributes saying why m was refused: what its seal covers, with the seal
// (sealing.Record.Kept), its error and its event's id; empty values are left out (SQS refuses them).
func attributes(m Message, seal string) map[string]types.MessageAttributeValue {
	out := map[string]types.MessageAttributeValue{}
	m.Record().Kept(out, seal)
	if m.Err != nil && m.Err.Error() != "" {
		out[contract.AttrError] = types.MessageAttributeValue{DataType: aws.String("String"),
			StringValue: aws.String(contract.TruncateUTF8(m.Err.Error(), contract.MaxAttrError))}
	}
	if m.EventID != "" {
		out[contract.AttrEventID] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(m.EventID)}
	}
	return out
}

// size is what SQS counts of a message against its size and its batch's: its body, and each attribute's name, type
// and value.
func size(body string, attrs map[string]types.MessageAttributeValue) int {
	n := len(body)
	for k, v := range attrs {
		n += contract.AttributeBytes(k, aws.ToString(v.DataType), aws.ToString(v.StringValue))
	}
	return n
}
