package outputs_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/outputs"
)

// TestDecodeReadsEachOutputByItsName: every field is read by its name, an embedded part's included; a number read
// as JSON gives an int field; what the stack lacks is named, and left zero.
func TestDecodeReadsEachOutputByItsName(t *testing.T) {
	stack := map[string]any{
		"busName": "kib-prod", "canaryIntervalSeconds": 30.0, "centralQueueUrl": "https://sqs/central", "hub": "prod",
		"ruleArns":        map[string]any{"spot": "arn:rule"},
		"clusters":        map[string]any{"payments": map[string]any{"queueUrl": "https://sqs/payments", "mode": "install"}},
		"unknownToReader": "ignored",
	}
	var asked []string
	var o outputs.Read
	missing, err := outputs.Decode(func(name string) (any, error) {
		asked = append(asked, name)
		return stack[name], nil
	}, &o)
	if err != nil {
		t.Fatal(err)
	}
	if o.BusName != "kib-prod" || o.CanaryIntervalSeconds != 30 || o.CentralQueueURL != "https://sqs/central" || o.Hub != "prod" ||
		o.RuleARNs["spot"] != "arn:rule" || o.Clusters["payments"].QueueURL != "https://sqs/payments" || o.Clusters["payments"].Mode != "install" {
		t.Errorf("decoded %+v", o)
	}
	if !slices.Equal(asked, outputs.Names(outputs.Read{})) {
		t.Errorf("asked for %v, want every output once, in order: %v", asked, outputs.Names(outputs.Read{}))
	}
	if slices.Contains(missing, "busName") || !slices.Contains(missing, "region") || !slices.Contains(missing, "version") || len(missing) != len(asked)-6 {
		t.Errorf("missing = %v", missing)
	}
}

// TestDecodeNamesTheOutputItCannotRead: a failed read and a value of the wrong type name the output.
func TestDecodeNamesTheOutputItCannotRead(t *testing.T) {
	var o outputs.Read
	_, err := outputs.Decode(func(name string) (any, error) {
		if name == "canaryIntervalSeconds" {
			return "thirty", nil
		}
		return nil, nil
	}, &o)
	if err == nil || !strings.Contains(err.Error(), "output canaryIntervalSeconds") {
		t.Errorf("a string for a number: %v", err)
	}
	boom := errors.New("boom")
	_, err = outputs.Decode(func(name string) (any, error) { return nil, boom }, &o.Join)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "reading output busName") {
		t.Errorf("a failed read: %v", err)
	}
}

// TestSetLeavesOutWhatAWriterDidNotSet: a writer's struct of interfaces gives the fields it set, by their names,
// an embedded part's as its own.
func TestSetLeavesOutWhatAWriterDidNotSet(t *testing.T) {
	var w outputs.Stack[any, any, any, any]
	w.BusName, w.CanaryIntervalSeconds, w.SealKeyARN, w.Version = "kib", 30, "arn:key", "0.5.0"
	got := outputs.Set(w)
	want := map[string]any{"busName": "kib", "canaryIntervalSeconds": 30, "sealKeyArn": "arn:key", "version": "0.5.0"}
	if len(got) != len(want) {
		t.Errorf("Set = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("Set[%s] = %v, want %v", k, got[k], v)
		}
	}
}

// TestEveryOutputHasOneName: no two fields of the contract share a name (encoding/json would drop both), and
// every field has one.
func TestEveryOutputHasOneName(t *testing.T) {
	names := outputs.Names(outputs.Read{})
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("%s: twice", n)
		}
		seen[n] = true
	}
	if len(names) != 30 {
		t.Errorf("%d outputs, want 30: %v", len(names), names)
	}
	if c := outputs.Names(outputs.ReadCluster{}); len(c) != 12 {
		t.Errorf("a cluster's record has %d fields, want 12: %v", len(c), c)
	}
}

// TestEmptyNamesTheZeroFieldsAsked: only the fields given, and only when zero.
func TestEmptyNamesTheZeroFieldsAsked(t *testing.T) {
	var o outputs.Read
	o.Region = "eu-west-1"
	if got := outputs.Empty(&o, &o.BusName, &o.Region, &o.CentralQueueURL); !slices.Equal(got, []string{"busName", "centralQueueUrl"}) {
		t.Errorf("Empty = %v", got)
	}
}

// TestParseLeavesOutWhatIsMasked: pulumi stack output --json prints a secret as "[secret]": Parse leaves such an
// output zero and names it, whatever its type; text that is not a JSON object is an error.
func TestParseLeavesOutWhatIsMasked(t *testing.T) {
	var o outputs.Read
	missing, err := outputs.Parse(strings.NewReader(`{"busName":"b","clusters":"[secret]","canaryIntervalSeconds":"[secret]","region":"[secret]","ruleArns":{"a":"r"}}`), &o)
	if err != nil {
		t.Fatal(err)
	}
	if o.BusName != "b" || o.Clusters != nil || o.CanaryIntervalSeconds != 0 || o.Region != "" || o.RuleARNs["a"] != "r" {
		t.Errorf("parsed %+v", o)
	}
	for _, name := range []string{"clusters", "canaryIntervalSeconds", "region", "version"} {
		if !slices.Contains(missing, name) {
			t.Errorf("missing %v lacks %s", missing, name)
		}
	}
	if slices.Contains(missing, "busName") || slices.Contains(missing, "ruleArns") {
		t.Errorf("missing %v names an output that is there", missing)
	}
	if _, err := outputs.Parse(strings.NewReader(`busName`), &o); err == nil {
		t.Error("text that is not JSON parsed")
	}
}

// TestFieldsNamesTheFieldsGiven: by their addresses, an embedded part's included, in the order declared.
func TestFieldsNamesTheFieldsGiven(t *testing.T) {
	var o outputs.Read
	if got := outputs.Fields(&o, &o.Version, &o.Clusters, &o.BusName); !slices.Equal(got, []string{"busName", "clusters", "version"}) {
		t.Errorf("Fields = %v", got)
	}
}
