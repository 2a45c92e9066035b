package contract

import (
	"encoding/json"
	"testing"
)

func TestEventTypesAreDistinct(t *testing.T) {
	rules, types := map[string]bool{}, map[[2]string]bool{}
	for _, et := range EventTypes {
		key := [2]string{et.Source, et.DetailType}
		if rules[et.Rule] || types[key] {
			t.Errorf("%s (%s %q) repeats a rule key or an event type", et.Rule, et.Source, et.DetailType)
		}
		rules[et.Rule], types[key] = true, true
		if got, ok := EventTypeOf(et.Source, et.DetailType); !ok || got.Rule != et.Rule {
			t.Errorf("EventTypeOf(%s, %q) = %v, %t", et.Source, et.DetailType, got.Rule, ok)
		}
	}
	if _, ok := EventTypeOf(SourceEC2, "EBS Volume Notification"); ok {
		t.Error("EventTypeOf knows a type the bus does not carry")
	}
}

func TestPattern(t *testing.T) {
	for _, et := range EventTypes {
		var p struct {
			Source     []string            `json:"source"`
			DetailType []string            `json:"detail-type"`
			Detail     map[string][]string `json:"detail"`
		}
		if err := json.Unmarshal([]byte(et.Pattern()), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Source) != 1 || p.Source[0] != et.Source || len(p.DetailType) != 1 || p.DetailType[0] != et.DetailType ||
			len(p.Detail) != len(et.Detail) {
			t.Errorf("%s: pattern %s does not say the type's source, detail-type and detail", et.Rule, et.Pattern())
		}
	}
}

func TestCanaryPattern(t *testing.T) {
	var p struct {
		Source     []string            `json:"source"`
		DetailType []string            `json:"detail-type"`
		Detail     map[string][]string `json:"detail"`
	}
	if err := json.Unmarshal([]byte(CanaryPattern("kib-dev")), &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Source) != 1 || p.Source[0] != SourceCanary || len(p.DetailType) != 1 || p.DetailType[0] != DetailTypeCanary ||
		len(p.Detail) != 1 || len(p.Detail["bus"]) != 1 || p.Detail["bus"][0] != "kib-dev" {
		t.Errorf("canary pattern %s does not narrow to the bus's canaries", CanaryPattern("kib-dev"))
	}
	if _, ok := EventTypeOf(SourceCanary, DetailTypeCanary); ok {
		t.Error("canaries are an event type of their own, not an interruption")
	}
	var d CanaryDetail
	if err := json.Unmarshal([]byte(CanaryDetail{Bus: "kib-dev", Clusters: []string{"a", "b"}}.JSON()), &d); err != nil ||
		d.Bus != "kib-dev" || len(d.Clusters) != 2 {
		t.Errorf("canary detail does not round-trip: %+v %v", d, err)
	}
}
