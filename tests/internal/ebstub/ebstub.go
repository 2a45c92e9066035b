// Package ebstub stands in for EventBridge's PutEvents on loopback, where no emulator of it exists to use: an
// event put on the default bus is matched against the rules by quamina (an EventBridge pattern matcher), and each
// match is sent, in the envelope EventBridge builds, to the rule's SQS target through the real SQS API (goaws).
// Its wire protocol is the AWS SDK's (JSON 1.1, X-Amz-Target AWSEvents.PutEvents).
//
// What EventBridge does that the stub does not: it delivers asynchronously, retrying by the target's retry
// policy and then to its dead-letter queue (the stub dead-letters only what Refuse makes it); the target queue's policy is evaluated (the rule's aws:SourceArn);
// PutEvents is authorised by IAM (events:source, events:detail-type); events over 256 KB are refused; and there
// are other buses than the default.
package ebstub

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"quamina.net/go/quamina"
)

// Rule is an EventBridge rule on the default bus with one SQS target.
type Rule struct {
	Name, Pattern, QueueURL string
}

// Server is the running stub.
type Server struct {
	URL string
	srv *httptest.Server

	account, region string
	sqs             *sqs.Client
	mu              sync.Mutex
	q               *quamina.Quamina
	targets         map[string]string // rule name -> queue URL
	refusal         *Refusal
}

// Refusal makes every delivery fail as EventBridge reports a target it may not send to (its execution role refused,
// say): the event goes to the rule's dead-letter queue instead, with the attributes EventBridge gives it
// (ERROR_CODE, ERROR_MESSAGE, RULE_ARN: "Using dead-letter queues to process undelivered events in EventBridge",
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html), sent by DLQClient (EventBridge's own
// delivery, through the dead-letter queue's policy). EventBridge retries some errors first; permission errors it
// does not.
type Refusal struct {
	Code, Message string
	DLQURL        string
	DLQClient     *sqs.Client
}

// Refuse makes every delivery from now on fail as r says; nil delivers again.
func (s *Server) Refuse(r *Refusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusal = r
}

// Start serves PutEvents for account and region with rules, sending matches through client: a session of the rules'
// execution role (the account's forwarder), as EventBridge delivers to an SQS target whose RoleArn names one.
func Start(client *sqs.Client, account, region string, rules ...Rule) (*Server, error) {
	q, err := quamina.New()
	if err != nil {
		return nil, err
	}
	s := &Server{account: account, region: region, sqs: client, q: q, targets: map[string]string{}}
	for _, r := range rules {
		if err := q.AddPattern(r.Name, r.Pattern); err != nil {
			return nil, fmt.Errorf("rule %s: %w", r.Name, err)
		}
		s.targets[r.Name] = r.QueueURL
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s, nil
}

// Close stops the stub.
func (s *Server) Close() { s.srv.Close() }

type entry struct {
	Source, DetailType, Detail, EventBusName string
	Resources                                []string
}

type resultEntry struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:"ErrorCode,omitempty"`
	ErrorMessage string `json:"ErrorMessage,omitempty"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	if target := r.Header.Get("X-Amz-Target"); target != "AWSEvents.PutEvents" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"__type":"UnknownOperationException","message":"the stub serves PutEvents only, not %s"}`, target)
		return
	}
	var in struct{ Entries []entry }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || len(in.Entries) == 0 || len(in.Entries) > 10 {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"__type":"ValidationException","message":"1 to 10 entries"}`)
		return
	}
	out := struct {
		Entries          []resultEntry
		FailedEntryCount int
	}{}
	for _, e := range in.Entries {
		res := s.put(r.Context(), e)
		if res.ErrorCode != "" {
			out.FailedEntryCount++
		}
		out.Entries = append(out.Entries, res)
	}
	_ = json.NewEncoder(w).Encode(out)
}

// put builds the event as EventBridge does and sends it to the target of every rule it matches.
func (s *Server) put(ctx context.Context, e entry) resultEntry {
	switch {
	case e.EventBusName != "" && e.EventBusName != "default":
		return resultEntry{ErrorCode: "ResourceNotFoundException", ErrorMessage: "the stub has the default bus only"}
	case e.Source == "" || e.DetailType == "":
		return resultEntry{ErrorCode: "MalformedDetail", ErrorMessage: "Source and DetailType are required"}
	case strings.HasPrefix(e.Source, "aws."):
		return resultEntry{ErrorCode: "NotAuthorizedForSourceException", ErrorMessage: "aws. sources are AWS services'"}
	}
	var detail map[string]json.RawMessage
	if json.Unmarshal([]byte(e.Detail), &detail) != nil {
		return resultEntry{ErrorCode: "MalformedDetail", ErrorMessage: "Detail is not a JSON object"}
	}
	id := newID()
	resources := e.Resources
	if resources == nil {
		resources = []string{}
	}
	body, err := json.Marshal(map[string]any{
		"version": "0", "id": id, "detail-type": e.DetailType, "source": e.Source, "account": s.account,
		"time": time.Now().UTC().Format(time.RFC3339), "region": s.region, "resources": resources, "detail": json.RawMessage(e.Detail),
	})
	if err != nil {
		return resultEntry{ErrorCode: "InternalException", ErrorMessage: err.Error()}
	}
	s.mu.Lock()
	matches, err := s.q.MatchesForEvent(body)
	s.mu.Unlock()
	if err != nil {
		return resultEntry{ErrorCode: "InternalException", ErrorMessage: err.Error()}
	}
	s.mu.Lock()
	refusal := s.refusal
	s.mu.Unlock()
	for _, m := range matches {
		in := &sqs.SendMessageInput{QueueUrl: aws.String(s.targets[m.(string)]), MessageBody: aws.String(string(body))}
		client := s.sqs
		if refusal != nil {
			str := func(v string) types.MessageAttributeValue {
				return types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
			}
			in.QueueUrl, client = aws.String(refusal.DLQURL), refusal.DLQClient
			in.MessageAttributes = map[string]types.MessageAttributeValue{
				"ERROR_CODE": str(refusal.Code), "ERROR_MESSAGE": str(refusal.Message),
				"RULE_ARN": str("arn:aws:events:" + s.region + ":" + s.account + ":rule/" + m.(string)),
			}
		}
		if _, err := client.SendMessage(ctx, in); err != nil {
			return resultEntry{ErrorCode: "InternalException", ErrorMessage: fmt.Sprintf("delivering to rule %v: %v", m, err)}
		}
	}
	return resultEntry{EventID: id}
}

// newID is a random UUID (version 4), as EventBridge's event ids are.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
