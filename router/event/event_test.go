package event

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// edit returns the spot fixture with old replaced by repl, failing if old is absent so a broken edit
// cannot silently test the unmodified fixture.
func edit(t *testing.T, name, old, repl string) []byte {
	t.Helper()
	s := string(fixture(t, name))
	if !strings.Contains(s, old) {
		t.Fatalf("fixture %s has no %q", name, old)
	}
	return []byte(strings.Replace(s, old, repl, 1))
}

func TestParseKinds(t *testing.T) {
	tests := []struct {
		fixture string
		kind    contract.Kind
		ids     []string
	}{
		{"spot-interruption.json", contract.KindSpotInterruption, []string{"i-0a1b2c3d4e5f60001"}},
		{"rebalance-recommendation.json", contract.KindRebalanceRecommendation, []string{"i-0a1b2c3d4e5f60002"}},
		{"state-change-terminated.json", contract.KindStateChange, []string{"i-0a1b2c3d4e5f60003"}},
		{"state-change-stopping.json", contract.KindStateChange, []string{"i-0a1b2c3d4e5f60004"}},
		{"health-scheduled-change.json", contract.KindScheduledChange, []string{"i-0a1b2c3d4e5f60005", "i-0a1b2c3d4e5f60006"}},
		{"capacity-reservation-interruption.json", contract.KindCapacityReservationInterruption, []string{"i-0a1b2c3d4e5f60007"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			ev, err := Parse(fixture(t, tt.fixture))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if ev.Kind != tt.kind {
				t.Errorf("kind = %q, want %q", ev.Kind, tt.kind)
			}
			if !slices.Equal(ev.InstanceIDs, tt.ids) {
				t.Errorf("instance IDs = %v, want %v", ev.InstanceIDs, tt.ids)
			}
			if ev.Account != "123456789012" || ev.Region != "us-east-1" || ev.ID == "" {
				t.Errorf("envelope = %+v, want account, region and id from the fixture", ev)
			}
			if ev.Time.Year() != 2026 {
				t.Errorf("time = %v, want the fixture's 2026 time", ev.Time)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	const spot = "spot-interruption.json"
	const health = "health-scheduled-change.json"
	const state = "state-change-terminated.json"
	big := edit(t, spot, `"instance-action":"terminate"`, `"instance-action":"`+strings.Repeat("x", 1<<20)+`"`)
	tests := []struct {
		name string
		body []byte
		want error
		why  string
	}{
		{"not JSON", []byte("hello"), ErrUnparseable, "decoding event"},
		{"empty", []byte(""), ErrUnparseable, "decoding event"},
		{"JSON array", []byte("[1,2]"), ErrUnparseable, "decoding event"},
		{"truncated", fixture(t, spot)[:100], ErrUnparseable, "decoding event"},
		{"over 1 MiB", big, ErrUnparseable, "exceeds"},
		{"no detail", edit(t, spot, `,"detail":{"instance-id":"i-0a1b2c3d4e5f60001","instance-action":"terminate"}`, ""), ErrUnparseable, "without detail"},
		{"null detail", edit(t, spot, `"detail":{"instance-id":"i-0a1b2c3d4e5f60001","instance-action":"terminate"}`, `"detail":null`), ErrUnparseable, "without detail"},
		{"no instance id", edit(t, spot, `"instance-id":"i-0a1b2c3d4e5f60001",`, ""), ErrUnparseable, "without detail.instance-id"},
		{"empty instance id", edit(t, spot, `"instance-id":"i-0a1b2c3d4e5f60001"`, `"instance-id":""`), ErrUnparseable, "is not an instance ID"},
		{"numeric instance id", edit(t, spot, `"instance-id":"i-0a1b2c3d4e5f60001"`, `"instance-id":42`), ErrUnparseable, "not a JSON string"},
		{"malformed instance id", edit(t, spot, `"instance-id":"i-0a1b2c3d4e5f60001"`, `"instance-id":"i-XYZ"`), ErrUnparseable, "is not an instance ID"},
		{"bad time", edit(t, spot, `"2026-11-21T12:00:00Z"`, `"yesterday"`), ErrUnparseable, "decoding event"},
		{"resources not strings", edit(t, spot, `"resources":["arn:aws:ec2:us-east-1:123456789012:instance/i-0a1b2c3d4e5f60001"]`, `"resources":[1]`), ErrUnparseable, "decoding event"},
		{"no region", edit(t, spot, `"region":"us-east-1",`, ""), ErrUnparseable, "is not an AWS region"},
		{"bad region", edit(t, spot, `"region":"us-east-1"`, `"region":"moon base"`), ErrUnparseable, "is not an AWS region"},
		{"no account", edit(t, spot, `"account":"123456789012",`, ""), ErrUnparseable, "is not an AWS account ID"},
		{"bad account", edit(t, spot, `"account":"123456789012"`, `"account":"12345"`), ErrUnparseable, "is not an AWS account ID"},
		{"health without entities", edit(t, health, `"affectedEntities":[{"entityValue":"i-0a1b2c3d4e5f60005","tags":{"team":"a"}},{"entityValue":"i-0a1b2c3d4e5f60006"}]`, `"affectedEntities":[]`), ErrUnparseable, "without affectedEntities"},
		{"health entity not a string", edit(t, health, `{"entityValue":"i-0a1b2c3d4e5f60006"}`, `{"entityValue":7}`), ErrUnparseable, "not a JSON string"},
		{"health eventArn not a string", edit(t, health, `"eventArn":"arn:aws:health:us-east-1::event/EC2/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED/AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED_1"`, `"eventArn":{}`), ErrUnparseable, "not a JSON string"},
		{"unknown version", edit(t, spot, `"version":"0"`, `"version":"1"`), ErrNotInterruption, "version"},
		{"unknown source", edit(t, spot, `"source":"aws.ec2"`, `"source":"aws.s3"`), ErrNotInterruption, "source"},
		{"pending state", edit(t, state, `"state":"terminated"`, `"state":"pending"`), ErrNotInterruption, "state"},
		{"running state", edit(t, state, `"state":"terminated"`, `"state":"running"`), ErrNotInterruption, "state"},
		{"unknown health detail-type", edit(t, health, `"detail-type":"AWS Health Event"`, `"detail-type":"AWS Health Abuse Event"`), ErrNotInterruption, "aws.health"},
		{"health for another service", edit(t, health, `"service":"EC2"`, `"service":"RDS"`), ErrNotInterruption, "health service"},
		{"health issue, not scheduled", edit(t, health, `"eventTypeCategory":"scheduledChange"`, `"eventTypeCategory":"issue"`), ErrNotInterruption, "health service"},
		{"health naming only a host", edit(t, health, `[{"entityValue":"i-0a1b2c3d4e5f60005","tags":{"team":"a"}},{"entityValue":"i-0a1b2c3d4e5f60006"}]`, `[{"entityValue":"h-0123456789abcdef0"}]`), ErrNotInterruption, "names no instance"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.body)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse error = %v, want %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.why) {
				t.Errorf("error %q does not say %q", err, tt.why)
			}
		})
	}
}

func TestIdentifierFormats(t *testing.T) {
	tests := []struct {
		s    string
		f    func([]byte) bool
		want bool
	}{
		{"i-0a1b2c3d4e5f60001", IsInstanceID[[]byte], true},
		{"i-0a1b2c3d", IsInstanceID[[]byte], true},
		{"i-0a1b2c3d4e5f6000", IsInstanceID[[]byte], false},
		{"i-0A1B2C3D", IsInstanceID[[]byte], false},
		{"x-0a1b2c3d", IsInstanceID[[]byte], false},
		{"i-0a1b2c3g", IsInstanceID[[]byte], false},
		{"", IsInstanceID[[]byte], false},
		{"123456789012", contract.IsAccount[[]byte], true},
		{"12345678901", contract.IsAccount[[]byte], false},
		{"12345678901a", contract.IsAccount[[]byte], false},
		{"us-east-1", isRegion, true},
		{"us-gov-west-1", isRegion, true},
		{"cn-northwest-1", isRegion, true},
		{"ap-southeast-10", isRegion, true},
		{"eusc-de-east-1", isRegion, true},
		{"us-east", isRegion, false},
		{"useast1", isRegion, false},
		{"us--east-1", isRegion, false},
		{"US-EAST-1", isRegion, false},
		{"-us-east-1", isRegion, false},
		{"us-east-1 ", isRegion, false},
	}
	for _, tt := range tests {
		if got := tt.f([]byte(tt.s)); got != tt.want {
			t.Errorf("check(%q) = %t, want %t", tt.s, got, tt.want)
		}
	}
}

func TestParseEscapedStrings(t *testing.T) {
	body := edit(t, "spot-interruption.json", `"instance-id":"i-0a1b2c3d4e5f60001"`, `"instance-id":"i-0a1b2c3d4e5f6000\u0031"`)
	body = []byte(strings.Replace(string(body), `"account":"123456789012"`, `"account":"12345678901\u0032"`, 1))
	ev, err := Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if ev.InstanceIDs[0] != "i-0a1b2c3d4e5f60001" || ev.Account != "123456789012" {
		t.Fatalf("escaped strings decoded as %q and %q", ev.InstanceIDs[0], ev.Account)
	}
}

// TestParseTypeStrictness: every string field rejects other JSON types, as Karpenter's typed structs do.
func TestParseTypeStrictness(t *testing.T) {
	fields := []struct{ fixture, old string }{
		{"spot-interruption.json", `"version":"0"`},
		{"spot-interruption.json", `"id":"1e5527d7-bb36-4607-3370-4164db56a40e"`},
		{"spot-interruption.json", `"source":"aws.ec2"`},
		{"spot-interruption.json", `"detail-type":"EC2 Spot Instance Interruption Warning"`},
		{"spot-interruption.json", `"instance-action":"terminate"`},
		{"state-change-terminated.json", `"state":"terminated"`},
		{"health-scheduled-change.json", `"eventTypeCode":"AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED"`},
		{"health-scheduled-change.json", `"language":"en_US"`},
	}
	for _, f := range fields {
		key, _, _ := strings.Cut(f.old, ":")
		for _, v := range []string{`1`, `true`, `{}`, `["x"]`} {
			t.Run(key+"="+v, func(t *testing.T) {
				_, err := Parse(edit(t, f.fixture, f.old, key+":"+v))
				if !errors.Is(err, ErrUnparseable) {
					t.Fatalf("Parse error = %v, want ErrUnparseable", err)
				}
			})
		}
	}
}

func TestParseNotInterruptionKeepsEnvelope(t *testing.T) {
	body := edit(t, "state-change-terminated.json", `"state":"terminated"`, `"state":"running"`)
	ev, err := Parse(body)
	if !errors.Is(err, ErrNotInterruption) {
		t.Fatalf("Parse error = %v, want ErrNotInterruption", err)
	}
	if ev.ID != "3e5527d7-bb36-4607-3370-4164db56a40e" || ev.Region != "us-east-1" || ev.Kind != "" || ev.InstanceIDs != nil {
		t.Fatalf("event = %+v, want only the envelope", ev)
	}
}

// TestParseChecksOnlyTheKindsOwnFields: like Karpenter's per-kind structs, a kind ignores the types of fields
// only other kinds read.
func TestParseChecksOnlyTheKindsOwnFields(t *testing.T) {
	tests := []struct{ fixture, old, repl string }{
		{"spot-interruption.json", `"instance-action":"terminate"`, `"instance-action":"terminate","state":5,"affectedEntities":7`},
		{"rebalance-recommendation.json", `"instance-id":"i-0a1b2c3d4e5f60002"`, `"instance-id":"i-0a1b2c3d4e5f60002","instance-action":[]`},
		{"state-change-terminated.json", `"state":"terminated"`, `"state":"terminated","service":{}`},
		{"health-scheduled-change.json", `"service":"EC2"`, `"service":"EC2","instance-id":1,"state":true`},
	}
	for _, tt := range tests {
		if _, err := Parse(edit(t, tt.fixture, tt.old, tt.repl)); err != nil {
			t.Errorf("%s with %s: %v", tt.fixture, tt.repl, err)
		}
	}
}

// TestParseRepeatedKeys: encoding/json decodes every occurrence of a repeated key, so a wrong-typed earlier one
// fails Karpenter's parse and must fail ours; a null one leaves the earlier value.
func TestParseRepeatedKeys(t *testing.T) {
	tests := []struct {
		name, fixture, old, repl string
		want                     error
	}{
		{"wrong type then right", "state-change-terminated.json", `"state":"terminated"`, `"state":5,"state":"terminated"`, ErrUnparseable},
		{"right then null", "state-change-terminated.json", `"state":"terminated"`, `"state":"terminated","state":null`, nil},
		{"right then running", "state-change-terminated.json", `"state":"terminated"`, `"state":"terminated","state":"running"`, ErrNotInterruption},
		{"entities wrong then right", "health-scheduled-change.json", `"affectedEntities":[`, `"affectedEntities":{},"affectedEntities":[`, ErrUnparseable},
		{"two detail objects", "spot-interruption.json", `"detail":{`, `"detail":{"instance-id":7},"detail":{`, ErrUnparseable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse(edit(t, tt.fixture, tt.old, tt.repl)); !errors.Is(err, tt.want) {
				t.Fatalf("Parse error = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestParseOtherEC2(t *testing.T) {
	tests := []struct {
		name   string
		detail string
		want   error
	}{
		{"with instance", `{"instance-id":"i-0a1b2c3d4e5f60007"}`, nil},
		{"without instance", `{"volume-id":"vol-1"}`, ErrNotInterruption},
		{"without detail", `null`, ErrNotInterruption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"version":"0","id":"x","detail-type":"Something New","source":"aws.ec2","account":"123456789012",` +
				`"time":"2026-11-21T12:00:05Z","region":"us-east-1","resources":[],"detail":` + tt.detail + `}`
			ev, err := Parse([]byte(body))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse error = %v, want %v", err, tt.want)
			}
			if tt.want == nil && ev.Kind != contract.KindOtherEC2 {
				t.Errorf("kind = %q, want %q", ev.Kind, contract.KindOtherEC2)
			}
		})
	}
}

func TestParseStateIsCaseInsensitiveLikeKarpenter(t *testing.T) {
	body := edit(t, "state-change-terminated.json", `"state":"terminated"`, `"state":"Shutting-Down"`)
	ev, err := Parse(body)
	if err != nil || ev.Kind != contract.KindStateChange {
		t.Fatalf("Parse = %+v, %v; want a state change", ev, err)
	}
}

func TestParseDeduplicatesHealthInstances(t *testing.T) {
	body := edit(t, "health-scheduled-change.json", `{"entityValue":"i-0a1b2c3d4e5f60006"}`,
		`{"entityValue":"i-0a1b2c3d4e5f60006"},{"entityValue":"i-0a1b2c3d4e5f60005"},{"entityValue":"h-0123456789abcdef0"},{"entityValue":"i-0a1b2c3d4e5f60006"}`)
	ev, err := Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"i-0a1b2c3d4e5f60005", "i-0a1b2c3d4e5f60006"}
	if !slices.Equal(ev.InstanceIDs, want) {
		t.Fatalf("instance IDs = %v, want %v", ev.InstanceIDs, want)
	}
}

func TestParseAcceptsLargeValidBody(t *testing.T) {
	// A valid event just under the limit is still an event; only the limit itself is enforced.
	fill := strings.Repeat("x", maxBodyBytes-len(fixture(t, "spot-interruption.json"))-64)
	body := edit(t, "spot-interruption.json", `"instance-action":"terminate"`, `"instance-action":"terminate","note":"`+fill+`"`)
	if len(body) > maxBodyBytes {
		t.Fatalf("test body of %d bytes is over the limit", len(body))
	}
	if _, err := Parse(body); err != nil {
		t.Fatalf("Parse of a %d-byte event: %v", len(body), err)
	}
}

// FuzzParse checks Parse never panics and that whatever it accepts is a complete, valid event. Seeds are the
// fixtures; `make fuzz` runs it longer.
func FuzzParse(f *testing.F) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			f.Add(fixture(f, e.Name()))
		}
	}
	f.Add([]byte(`{"version":"0","source":"aws.ec2","detail":{"instance-id":null}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := Parse(body)
		if err != nil {
			if !errors.Is(err, ErrUnparseable) && !errors.Is(err, ErrNotInterruption) {
				t.Fatalf("error %v wraps neither sentinel", err)
			}
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if ev.Kind == contract.KindCanary {
			if ev.Bus == "" || len(ev.Clusters) == 0 || len(ev.InstanceIDs) != 0 || len(ev.Clusters) > contract.MaxCanaryClusters {
				t.Fatalf("accepted an incomplete canary %+v", ev)
			}
			for i, c := range ev.Clusters {
				if queuename.ValidateCluster(c) != nil || slices.Contains(ev.Clusters[:i], c) {
					t.Fatalf("canary clusters %v: invalid or repeated %q", ev.Clusters, c)
				}
			}
			return
		}
		if ev.Kind == "" || ev.Region == "" || ev.Account == "" || len(ev.InstanceIDs) == 0 {
			t.Fatalf("accepted an incomplete event %+v", ev)
		}
		seen := map[string]bool{}
		for _, id := range ev.InstanceIDs {
			if !IsInstanceID(id) || seen[id] {
				t.Fatalf("instance IDs %v: invalid or repeated %q", ev.InstanceIDs, id)
			}
			seen[id] = true
		}
	})
}

func TestParseCanary(t *testing.T) {
	ev, err := Parse(fixture(t, "canary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != contract.KindCanary || ev.Bus != "kib-test" || ev.To != ev.Account || !slices.Equal(ev.Clusters, []string{"alpha", "beta"}) || ev.InstanceIDs != nil ||
		ev.ID != "7f7a0a6e-5c1e-4b0b-9d55-1b2a6a8c0c01" || ev.Account != "123456789012" {
		t.Fatalf("canary = %+v, want bus kib-test for alpha and beta, no instance", ev)
	}
	tests := []struct {
		name, old, repl string
		want            error
		clusters        []string
	}{
		{"repeated cluster", `["alpha","beta"]`, `["alpha","beta","alpha"]`, nil, []string{"alpha", "beta"}},
		{"no bus", `"bus":"kib-test",`, ``, ErrUnparseable, nil},
		{"bus not a string", `"bus":"kib-test"`, `"bus":7`, ErrUnparseable, nil},
		{"no clusters", `,"clusters":["alpha","beta"]`, ``, ErrUnparseable, nil},
		{"empty clusters", `["alpha","beta"]`, `[]`, ErrUnparseable, nil},
		{"clusters not strings", `["alpha","beta"]`, `[1]`, ErrUnparseable, nil},
		{"a name no queue can bear", `["alpha","beta"]`, `["alpha","no/such"]`, ErrUnparseable, nil},
		{"too many clusters", `["alpha","beta"]`, `["a"` + strings.Repeat(`,"a"`, contract.MaxCanaryClusters) + `]`, ErrUnparseable, nil},
		{"another source", `"source":"karpenter-interruption-bus.canary"`, `"source":"someone.else"`, ErrNotInterruption, nil},
		{"the clusters' account", `"bus":"kib-test",`, `"bus":"kib-test","account":"222222222222",`, nil, []string{"alpha", "beta"}},
		{"an account that is no account ID", `"bus":"kib-test",`, `"bus":"kib-test","account":"22",`, ErrUnparseable, nil},
		{"an account not a string", `"bus":"kib-test",`, `"bus":"kib-test","account":222222222222,`, ErrUnparseable, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := Parse(edit(t, "canary.json", tt.old, tt.repl))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse error = %v, want %v", err, tt.want)
			}
			if tt.want == nil && !slices.Equal(ev.Clusters, tt.clusters) {
				t.Errorf("clusters = %v, want %v", ev.Clusters, tt.clusters)
			}
			if tt.name == "the clusters' account" && ev.To != "222222222222" {
				t.Errorf("canary for account %q, want 222222222222", ev.To)
			}
		})
	}
}
