// Package sqsemu runs goaws (github.com/Admiral-Piett/goaws), a Go SQS emulator, in-process on loopback, behind
// a thin middleware that counts requests, injects faults and latency, and repairs four known goaws quirks:
// SendMessageBatch's JSON answer names its entry lists "SendMessageBatchResultEntry" and "BatchResultErrorEntry"
// instead of "Successful" and "Failed", ReceiveMessage answers ApproximateReceiveCount 1 every time, and it stamps
// every message's SenderId with its own account ID, where SQS stamps the sender's (caller.Sender: a role session's
// "<role ID>:<session>"), and its SentTimestamp with the time of the receive, where SQS's is the send's. The
// router itself is never adapted to the emulator.
package sqsemu

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/Admiral-Piett/goaws/app/gosqs"
	"github.com/Admiral-Piett/goaws/app/models"
	goawsrouter "github.com/Admiral-Piett/goaws/app/router"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sirupsen/logrus"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/sdkbody"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/internal/caller"
)

// Account and Region of every queue the emulator holds.
const (
	Account = "123456789012"
	Region  = "us-east-1"
)

// PeriodicTick is how often goaws returns messages whose visibility timeout ended (SQS does it continuously).
const PeriodicTick = 50 * time.Millisecond

// EmptyReceive counts ReceiveMessage calls that returned no message; "ReceiveMessage" counts the others.
const EmptyReceive = "ReceiveMessage(empty)"

func isEmptyReceive(body []byte) bool {
	var r struct{ Messages []json.RawMessage }
	return json.Unmarshal(body, &r) == nil && len(r.Messages) == 0
}

// Fault makes SendMessageBatch calls to one queue fail.
type Fault struct {
	// Status and Code make the whole call fail, as SQS's JSON protocol reports errors (e.g. 500 InternalError,
	// 400 RequestThrottled). Zero Status means no call-level failure.
	Status int
	Code   string
	// FailEntry, when not 0, is the 1-based position of an entry reported failed inside an HTTP 200 (and not
	// stored).
	FailEntry int
	// Times is how many calls fail; 0 means every call.
	Times int
}

// Server is the running emulator.
type Server struct {
	URL string
	srv *httptest.Server

	mu           sync.Mutex
	requests     map[string]int // action -> count
	faults       map[string]*Fault
	latency      map[string]time.Duration // action -> added to each call
	inFlight     map[string]int           // action -> calls being served now
	maxInFlight  map[string]int           // action -> the most served at once
	visibilities []int                    // VisibilityTimeout of every ChangeMessageVisibility, in order
	receives     map[string]int           // message id -> times received
	senders      map[string]sent          // message id -> who sent it, and when
	redriveAllow map[string]string        // "<account>/<queue>" -> its RedriveAllowPolicy, as set
}

// sent is a message's SenderId and SentTimestamp, as SQS stamps them.
type sent struct {
	sender string
	at     time.Time
}

var (
	startOnce sync.Once
	shared    *Server
)

// Start returns the process's emulator, starting it on a loopback port the first time. goaws keeps its queues in
// package globals, so there is one emulator per process; Reset empties it between tests.
func Start() *Server {
	startOnce.Do(func() {
		logrus.SetOutput(io.Discard) // goaws logs every empty receive; tests assert through the API instead
		s := &Server{}
		s.srv = httptest.NewUnstartedServer(s.middleware(goawsrouter.New()))
		s.srv.Start()
		host, port, _ := net.SplitHostPort(s.srv.Listener.Addr().String())
		models.CurrentEnvironment = models.Environment{
			Host: host, Port: port, Region: Region, AccountID: Account,
			QueueAttributeDefaults: models.EnvQueueAttributes{VisibilityTimeout: 30, MaximumMessageSize: 1 << 20},
		}
		s.URL = s.srv.URL
		// goaws makes received-but-undeleted messages visible again only in this loop, which its own main starts:
		// without it a message left for redelivery never comes back. Its tick bounds how late a message returns.
		go gosqs.PeriodicTasks(PeriodicTick, make(chan bool))
		shared = s
	})
	shared.Reset()
	return shared
}

// Reset deletes every queue and forgets counts and faults.
func (s *Server) Reset() {
	models.SyncQueues.Lock()
	models.SyncQueues.Queues = map[string]*models.Queue{}
	models.SyncQueues.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = map[string]int{}
	s.faults = map[string]*Fault{}
	s.latency = map[string]time.Duration{}
	s.inFlight = map[string]int{}
	s.maxInFlight = map[string]int{}
	s.visibilities = nil
	s.receives = map[string]int{}
	s.senders = map[string]sent{}
	s.redriveAllow = map[string]string{}
}

// SetLatency adds d to every call of action (e.g. "SendMessageBatch"), as a network and service would; 0 removes it.
func (s *Server) SetLatency(action string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.latency[action] = d
}

// MaxInFlight is the most calls of action served at once since the last Reset.
func (s *Server) MaxInFlight(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight[action]
}

// Visibilities are the VisibilityTimeout values of every ChangeMessageVisibility call since the last Reset.
func (s *Server) Visibilities() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.visibilities...)
}

// Client returns an SQS client of the real AWS SDK pointed at the emulator, in Account.
func (s *Server) Client() *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.URL),
		Credentials:  aws.AnonymousCredentials{},
		APIOptions:   sdkbody.APIOptions,
	})
}

// ClientIn returns an SQS client with credentials of account: queues named without an owner are that
// account's, as in SQS.
func (s *Server) ClientIn(account string) *sqs.Client {
	if account == Account {
		return s.Client()
	}
	return sqs.New(sqs.Options{
		Region:       Region,
		BaseEndpoint: aws.String(s.URL),
		Credentials:  credentials.NewStaticCredentialsProvider(caller.AccessKey(account, false), "stub", ""),
		APIOptions:   sdkbody.APIOptions,
	})
}

// SetFault injects f into SendMessageBatch calls to queue; nil removes it.
func (s *Server) SetFault(queue string, f *Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f == nil {
		delete(s.faults, queue)
		return
	}
	s.faults[queue] = f
}

// Snapshot returns a copy of all request counts by action.
func (s *Server) Snapshot() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.requests)
}

// CreateQueue creates name with attrs in Account and returns its URL.
func (s *Server) CreateQueue(ctx context.Context, name string, attrs map[string]string) (string, error) {
	return s.CreateQueueIn(ctx, Account, name, attrs)
}

// CreateQueueIn creates name with attrs in account and returns its URL.
func (s *Server) CreateQueueIn(ctx context.Context, account, name string, attrs map[string]string) (string, error) {
	out, err := s.ClientIn(account).CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
	if err != nil {
		return "", fmt.Errorf("creating queue %s: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

type request struct {
	// Attributes are CreateQueue's and SetQueueAttributes'.
	Attributes map[string]string `json:"Attributes"`
	// MessageBody and MessageAttributes are SendMessage's.
	MessageBody       string                      `json:"MessageBody"`
	MessageAttributes map[string]messageAttribute `json:"MessageAttributes"`
	QueueURL          string                      `json:"QueueUrl"`
	QueueName         string                      `json:"QueueName"`
	Owner             string                      `json:"QueueOwnerAWSAccountId"`
	Entries           []json.RawMessage           `json:"Entries"`
	// VisibilityTimeout is ChangeMessageVisibility's.
	VisibilityTimeout int `json:"VisibilityTimeout"`
}

// goaws holds every queue in one account (Account): a queue of another account is kept there as
// "<account>-<name>", and the middleware translates its names and URLs both ways, so clients see
// http://<emulator>/<account>/<name>. Unlike SQS it evaluates no queue policy across accounts (the IAM matrix
// judges them).
func (s *Server) inner(account, name string) string {
	if account == Account {
		return name
	}
	return account + "-" + name
}

// toInner rewrites the queue a request names (by name and owner, or by URL) to goaws's, and returns the
// queue's name as clients know it.
func (s *Server) toInner(body []byte, req request, from string) ([]byte, string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body, req.QueueName
	}
	switch {
	case req.QueueName != "":
		owner := req.Owner
		if owner == "" {
			owner = from
		}
		m["QueueName"], _ = json.Marshal(s.inner(owner, req.QueueName))
		delete(m, "QueueOwnerAWSAccountId")
	case req.QueueURL != "":
		u, err := url.Parse(req.QueueURL)
		path := strings.Split(strings.Trim(u.Path, "/"), "/")
		if err != nil || len(path) != 2 {
			return body, req.QueueURL
		}
		u.Path = "/" + Account + "/" + s.inner(path[0], path[1])
		m["QueueUrl"], _ = json.Marshal(u.String())
		req.QueueName = path[1]
	default:
		return body, ""
	}
	out, _ := json.Marshal(m)
	return out, req.QueueName
}

// innerURL matches goaws's URL of another account's queue: its host, then Account, then "<account>-".
var innerURL = regexp.MustCompile(`(https?://[^/"]+)/` + Account + `/([0-9]{12})-`)

// outerURLs rewrites goaws's URLs of other accounts' queues in a response to the ones clients know.
func (s *Server) outerURLs(body []byte) []byte { return innerURL.ReplaceAll(body, []byte("$1/$2/")) }

func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		action := r.Header.Get("X-Amz-Target")
		action = action[strings.LastIndex(action, ".")+1:]
		body, _ := io.ReadAll(r.Body)
		var req request
		_ = json.Unmarshal(body, &req)
		body, queue := s.toInner(body, req, caller.Account(r, Account))

		s.mu.Lock()
		s.requests[action]++
		s.inFlight[action]++
		s.maxInFlight[action] = max(s.maxInFlight[action], s.inFlight[action])
		delay := s.latency[action]
		if action == "ChangeMessageVisibility" {
			s.visibilities = append(s.visibilities, req.VisibilityTimeout)
		}
		var fault Fault
		faulty := false
		if f := s.faults[queue]; f != nil && action == "SendMessageBatch" {
			fault, faulty = *f, true
			if f.Times > 0 {
				if f.Times--; f.Times == 0 {
					delete(s.faults, queue)
				}
			}
		}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.inFlight[action]--
			s.mu.Unlock()
		}()
		if delay > 0 {
			time.Sleep(delay)
		}

		if faulty && fault.Status != 0 {
			writeError(w, fault.Status, fault.Code)
			return
		}
		if why := s.redrive(action, req, caller.Account(r, Account)); why != "" {
			writeErrorMessage(w, http.StatusBadRequest, "InvalidParameterValue", why)
			return
		}
		tooLong, code, why := s.sizes(action, req)
		if code != "" {
			writeErrorMessage(w, http.StatusBadRequest, code, why)
			return
		}
		if _, ok := req.Attributes["RedriveAllowPolicy"]; ok {
			// goaws refuses the attribute it does not know: the middleware keeps it (redrive) instead.
			var m map[string]any
			_ = json.Unmarshal(body, &m)
			if attrs, _ := m["Attributes"].(map[string]any); attrs != nil {
				delete(attrs, "RedriveAllowPolicy")
			}
			body, _ = json.Marshal(m)
		}
		failedID := ""
		if i := fault.FailEntry - 1; faulty && i >= 0 && i < len(req.Entries) {
			// Drop the entry before goaws stores it, and report it failed, as SQS does inside an HTTP 200.
			var e struct{ Id string }
			_ = json.Unmarshal(req.Entries[i], &e)
			failedID = e.Id
			tooLong = append(tooLong, i)
		}
		var failed []failure
		if len(tooLong) > 0 {
			var m map[string]json.RawMessage
			_ = json.Unmarshal(body, &m)
			var keep []json.RawMessage
			for i, e := range req.Entries {
				if !slices.Contains(tooLong, i) {
					keep = append(keep, e)
					continue
				}
				var x struct{ Id string }
				_ = json.Unmarshal(e, &x)
				if x.Id != failedID {
					failed = append(failed, failure{ID: x.Id, Code: "InvalidParameterValue", Message: why, SenderFault: true})
				}
			}
			m["Entries"], _ = json.Marshal(nonNil(keep))
			body, _ = json.Marshal(m)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		out := s.outerURLs(rec.Body.Bytes())
		switch {
		case action == "SendMessageBatch" && rec.Code == http.StatusOK:
			out = repairBatchResult(out, failedID, failed)
			s.stampSenders(out, caller.Sender(r))
		case action == "SendMessage" && rec.Code == http.StatusOK:
			s.stampSenders(out, caller.Sender(r))
		case action == "ReceiveMessage" && !isEmptyReceive(out):
			out = s.countReceives(out)
		case action == "ReceiveMessage" && isEmptyReceive(out):
			// Idle polling, which every design pays alike: counted apart from receives that carry messages.
			s.mu.Lock()
			s.requests[action]--
			s.requests[EmptyReceive]++
			s.mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	})
}

// stampSenders remembers sender as the SenderId of every message a SendMessage or SendMessageBatch answer names.
func (s *Server) stampSenders(body []byte, sender string) {
	var out struct {
		MessageID  string `json:"MessageId"`
		Successful []struct {
			MessageID string `json:"MessageId"`
		}
	}
	if json.Unmarshal(body, &out) != nil {
		return
	}
	st := sent{sender: sender, at: time.Now()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if out.MessageID != "" {
		s.senders[out.MessageID] = st
	}
	for _, e := range out.Successful {
		s.senders[e.MessageID] = st
	}
}

// countReceives repairs three goaws quirks: it answers ApproximateReceiveCount 1 on every receive (it never counts
// them), where SQS counts each message's receives, on which the router's backoff doubles; its SenderId is its own
// account's, where SQS's is the sender's; and its SentTimestamp the receive's (stampSenders keeps both).
func (s *Server) countReceives(body []byte) []byte {
	var resp map[string]any
	if json.Unmarshal(body, &resp) != nil {
		return body
	}
	msgs, _ := resp["Messages"].([]any)
	s.mu.Lock()
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		id, _ := msg["MessageId"].(string)
		s.receives[id]++
		if attrs, ok := msg["Attributes"].(map[string]any); ok {
			attrs["ApproximateReceiveCount"] = fmt.Sprint(s.receives[id])
			if st, ok := s.senders[id]; ok {
				attrs["SenderId"] = st.sender
				attrs["SentTimestamp"] = fmt.Sprint(st.at.UnixMilli())
			}
		}
	}
	s.mu.Unlock()
	out, err := json.Marshal(resp)
	if err != nil {
		return body
	}
	return out
}

// repairBatchResult renames goaws's entry lists to the names of the SQS JSON protocol and adds failedID, if
// any, and the entries refused (failed) to Failed.
func repairBatchResult(body []byte, failedID string, failed []failure) []byte {
	var in struct {
		Successful []json.RawMessage `json:"SendMessageBatchResultEntry"`
		Failed     []json.RawMessage `json:"BatchResultErrorEntry"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return body
	}
	if failedID != "" {
		failed = append(failed, failure{ID: failedID, Code: "InternalError", Message: "injected"})
	}
	for _, f := range failed {
		e, _ := json.Marshal(f)
		in.Failed = append(in.Failed, e)
	}
	out, _ := json.Marshal(map[string]any{"Successful": nonNil(in.Successful), "Failed": nonNil(in.Failed)})
	return out
}

func nonNil(xs []json.RawMessage) []json.RawMessage {
	if xs == nil {
		return []json.RawMessage{}
	}
	return xs
}

// writeError answers like SQS's JSON protocol: a __type, a message, and the query-compatible error header.
// redrive enforces what SQS enforces of dead-letter queues where goaws does not ("CreateQueue", RedrivePolicy and
// RedriveAllowPolicy, https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_CreateQueue.html): a
// queue's RedrivePolicy may name as its dead-letter queue only a queue of the same account whose RedriveAllowPolicy
// admits it ("allowAll", the default when none is set; "denyAll" admits none; "byQueue" the source queues it lists).
// It records each queue's RedriveAllowPolicy as CreateQueue and SetQueueAttributes set it, and returns why SQS would
// refuse the request, "" when it would not. What SQS checks besides (the target's existence and type, a FIFO
// queue's DLQ being FIFO, maxReceiveCount's range) it does not.
func (s *Server) redrive(action string, req request, from string) string {
	if action != "CreateQueue" && action != "SetQueueAttributes" {
		return ""
	}
	account, name := from, req.QueueName
	if req.QueueURL != "" {
		if u, err := url.Parse(req.QueueURL); err == nil {
			if p := strings.Split(strings.Trim(u.Path, "/"), "/"); len(p) == 2 {
				account, name = p[0], p[1]
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if text, ok := req.Attributes["RedrivePolicy"]; ok && text != "" {
		var rp struct {
			Target string `json:"deadLetterTargetArn"`
		}
		if err := json.Unmarshal([]byte(text), &rp); err != nil {
			return "RedrivePolicy is not JSON: " + err.Error()
		}
		parts := strings.Split(rp.Target, ":")
		if len(parts) != 6 || parts[4] != account {
			return fmt.Sprintf("Value %s for parameter RedrivePolicy is invalid. Reason: the dead-letter queue must be of the source queue's account", text)
		}
		var allow struct {
			Permission string   `json:"redrivePermission"`
			Sources    []string `json:"sourceQueueArns"`
		}
		source := "arn:aws:sqs:" + Region + ":" + account + ":" + name
		if p := s.redriveAllow[parts[4]+"/"+parts[5]]; p != "" {
			_ = json.Unmarshal([]byte(p), &allow)
		}
		switch {
		case allow.Permission == "denyAll", allow.Permission == "byQueue" && !slices.Contains(allow.Sources, source):
			return fmt.Sprintf("Value %s for parameter RedrivePolicy is invalid. Reason: the RedriveAllowPolicy of %s does not allow %s as a source queue", text, rp.Target, source)
		}
	}
	if p, ok := req.Attributes["RedriveAllowPolicy"]; ok {
		s.redriveAllow[account+"/"+name] = p
	}
	return ""
}

// writeErrorMessage writes an SQS JSON-protocol error of code with msg.
func writeErrorMessage(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-query-error", code+";Sender")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.sqs#" + code, "message": msg})
}

func writeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("x-amzn-query-error", code+";"+map[bool]string{true: "Sender", false: "Receiver"}[status < 500])
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": "com.amazonaws.sqs#" + code, "message": "injected fault"})
}

// messageAttribute is one message attribute as the JSON protocol carries it.
type messageAttribute struct {
	DataType    string `json:"DataType"`
	StringValue string `json:"StringValue"`
	BinaryValue []byte `json:"BinaryValue"`
}

// failure is an entry of a batch's Failed list.
type failure struct {
	ID          string `json:"Id"`
	Code        string `json:"Code"`
	Message     string `json:"Message"`
	SenderFault bool   `json:"SenderFault"`
}

// maxBatchBytes is the most all the messages of a batch may hold together ("SendMessageBatch": "The maximum allowed
// individual message size and the maximum total payload size (the sum of the individual lengths of all of the
// batched messages) are both 1 MiB", https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html).
const maxBatchBytes = 1 << 20

// messageSize is what SQS counts of a message against its queue's MaximumMessageSize: its body, and each attribute's
// name, data type and value ("Amazon SQS message attributes": they count toward the message's size). goaws counts
// the body alone.
func messageSize(body string, attrs map[string]messageAttribute) int {
	n := len(body)
	for k, v := range attrs {
		n += len(k) + len(v.DataType) + len(v.StringValue) + len(v.BinaryValue)
	}
	return n
}

// sizes enforces what SQS enforces of a message's size where goaws does not: a SendMessage over its queue's
// MaximumMessageSize, body and attributes together, is refused (code and why); so is a batch over 1 MiB in all
// (BatchRequestTooLong); a batch's entry over the queue's size fails alone (its index in tooLong, why it fails).
func (s *Server) sizes(action string, req request) (tooLong []int, code, why string) {
	if action != "SendMessage" && action != "SendMessageBatch" {
		return nil, "", ""
	}
	most := 1 << 20
	if u, err := url.Parse(req.QueueURL); err == nil {
		if p := strings.Split(strings.Trim(u.Path, "/"), "/"); len(p) == 2 {
			models.SyncQueues.RLock()
			if q, ok := models.SyncQueues.Queues[s.inner(p[0], p[1])]; ok && q.MaximumMessageSize > 0 {
				most = q.MaximumMessageSize
			}
			models.SyncQueues.RUnlock()
		}
	}
	why = fmt.Sprintf("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", most)
	if action == "SendMessage" {
		if messageSize(req.MessageBody, req.MessageAttributes) > most {
			return nil, "InvalidParameterValue", why
		}
		return nil, "", ""
	}
	total := 0
	for i, raw := range req.Entries {
		var e struct {
			MessageBody       string                      `json:"MessageBody"`
			MessageAttributes map[string]messageAttribute `json:"MessageAttributes"`
		}
		_ = json.Unmarshal(raw, &e)
		n := messageSize(e.MessageBody, e.MessageAttributes)
		total += n
		if n > most {
			tooLong = append(tooLong, i)
		}
	}
	if total > maxBatchBytes {
		return nil, "BatchRequestTooLong", fmt.Sprintf("Batch requests cannot be longer than %d bytes. You have sent %d bytes.", maxBatchBytes, total)
	}
	return tooLong, "", why
}
