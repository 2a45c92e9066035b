package route

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/intake"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/metrics"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/internal/sender"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// TestTheBatchLineCounts: the "batch routed" line counts what was forwarded, dropped and retried.
func TestTheBatchLineCounts(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	now := h.r.now()
	in := events.SQSEvent{Records: []events.SQSMessage{
		record(spotIn(memberA, instance(2)), idAFwd+":s", now, nil),
		record(spotIn(memberA, instance(2)), idAFwd+":s", now, nil),
		record(spotIn(memberB, instance(3)), idAFwd+":s", now, nil),
		record("not json", idAFwd+":s", now, nil),
	}}
	for i := range in.Records {
		in.Records[i].MessageId = fmt.Sprintf("m%d", i)
	}
	if _, err := h.r.Handle(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(h.logs.String()), "\n") {
		if strings.Contains(l, `"msg":"batch routed"`) {
			_ = json.Unmarshal([]byte(l), &line)
		}
	}
	if line["received"] != 4.0 || line["forwarded"] != 2.0 || line["dropped"] != 2.0 || line["retried"] != 0.0 {
		t.Errorf("batch routed %v, want 4 received, 2 forwarded, 2 dropped, 0 retried", line)
	}
}

// failingWriter refuses every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestAMetricsFailureIsLogged: metrics that cannot be written are logged, and the batch is routed all the same.
func TestAMetricsFailureIsLogged(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	h.r.metrics = metrics.NewWriter(failingWriter{}, "NS", "test")
	resp, err := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{record(spotIn(memberA, instance(2)), idAFwd+":s", h.r.now(), nil)}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%v, %v", resp, err)
	}
	if !strings.Contains(h.logs.String(), `"msg":"writing metrics"`) || !strings.Contains(h.logs.String(), "disk full") {
		t.Errorf("no log line of the metrics' failure:\n%s", h.logs.String())
	}
	if strings.Count(h.logs.String(), `"msg":"writing metrics"`) != 1 {
		t.Error("the failure is logged more than once")
	}
}

// fakeIntake counts its takes and answers res, or err.
type fakeIntake struct {
	takes int
	res   intake.Result
	err   error
}

func (f *fakeIntake) Take(context.Context) (intake.Result, error) {
	f.takes++
	return f.res, f.err
}

// intakeRequest is what make requeue FROM=dlq SEND=1 sends, as from.
func intakeRequest(from string, sent time.Time) events.SQSMessage {
	return record(`{"intake":"dlq"}`, from, sent, map[string]string{contract.AttrIntake: contract.IntakeDLQ})
}

// TestTheDeadLetterQueueIsTakenInWhenTheRedriveRoleAsks: the redrive role's requests take the dead-letter queue in
// once a batch, each acknowledged, counted in DeadLettered and logged; another sender's is refused (not
// interruption), and the batch's events are routed as ever; a request whose sender IAM cannot tell, or whose intake
// failed, is retried; a router with no intake refuses the request.
func TestTheDeadLetterQueueIsTakenInWhenTheRedriveRoleAsks(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	in := &fakeIntake{res: intake.Result{Kept: 7, More: true}}
	h.r.intake = in
	now := h.r.now()
	batch := events.SQSEvent{Records: []events.SQSMessage{
		intakeRequest(idRedrive+":op", now), intakeRequest(idRedrive+":op", now), intakeRequest(idAFwd+":s", now),
		record(spotIn(memberA, instance(2)), idAFwd+":s", now, nil),
	}}
	for i := range batch.Records {
		batch.Records[i].MessageId = fmt.Sprintf("m%d", i)
	}
	resp, err := h.r.Handle(context.Background(), batch)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%v, %v", failedIDs(resp), err)
	}
	if in.takes != 1 {
		t.Errorf("%d takes, want 1 for the batch", in.takes)
	}
	if got := h.metric(t, "", "", contract.MetricDeadLettered); got != 7 {
		t.Errorf("DeadLettered = %v, want 7", got)
	}
	drops := h.logsOf(t, contract.LogMessageDropped, "messageId", contract.LogReason)
	if len(drops) != 1 || fmt.Sprint(drops["m2"]) != "["+string(contract.ReasonNotInterruption)+"]" {
		t.Errorf("drops %v, want only the forwarder's request, as not an interruption", drops)
	}
	if got := h.logsOf(t, contract.LogDeadLettersTaken, contract.LogSender, "kept"); fmt.Sprint(got) != "map[AROAREDRIVEROLE00001:op:[7]]" {
		t.Errorf("intake lines %v, want one saying 7 kept, more left", got)
	}
	if got := h.sqs.byURL["https://sqs/"+memberA+"/"+queuename.For(qprefix, "beta")]; len(got) != 1 {
		t.Errorf("beta received %d, want A's event", len(got))
	}

	in.err = errors.New("the quarantine refused them")
	h.logs.Reset()
	resp, _ = h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{intakeRequest(idRedrive+":op", now)}})
	if len(resp.BatchItemFailures) != 1 {
		t.Errorf("a failed intake: retried %v, want the request", failedIDs(resp))
	}
	if got := h.logsOf(t, contract.LogDeadLettersTaken, contract.LogSender, "kept"); len(got) != 0 {
		t.Errorf("a failed intake logged as taken: %v", got)
	}
	h.r.intake = nil
	resp, _ = h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{intakeRequest(idRedrive+":op", now)}})
	if len(resp.BatchItemFailures) != 0 || !strings.Contains(h.logs.String(), "DEAD_LETTER_QUEUE_URL") {
		t.Errorf("no intake: retried %v, want the request refused, naming DEAD_LETTER_QUEUE_URL", failedIDs(resp))
	}
}

// TestAnIntakeWhoseSenderIAMCannotTellIsRetried: IAM failing on the redrive role leaves the request for later.
func TestAnIntakeWhoseSenderIAMCannotTellIsRetried(t *testing.T) {
	born := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h, _ := judgedHarness(t, born, born)
	in := &fakeIntake{}
	h.r.intake = in
	h.r.senders = sender.New(sender.Options{Hub: account, RedriveRole: redriveName,
		IAM: func(string) (sender.RoleGetter, error) { return nil, errors.New("sts down") }, CacheSize: 10, Now: h.r.now})
	resp, _ := h.r.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{intakeRequest(idRedrive+":op", h.r.now())}})
	if len(resp.BatchItemFailures) != 1 || in.takes != 0 {
		t.Errorf("retried %v, %d takes; want the request retried, nothing taken", failedIDs(resp), in.takes)
	}
}
