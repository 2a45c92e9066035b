package metrics

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

type emfDoc struct {
	AWS struct {
		Timestamp         int64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	} `json:"_aws"`
}

// decode parses each line as an EMF document, checks the spec's rules that apply, and returns the lines as maps.
func decode(t *testing.T, out string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var doc emfDoc
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		_ = json.Unmarshal([]byte(line), &rec)
		if len(doc.AWS.CloudWatchMetrics) != 1 || doc.AWS.Timestamp != 1700000000000 {
			t.Fatalf("line %q: want one directive and the flush timestamp", line)
		}
		d := doc.AWS.CloudWatchMetrics[0]
		if d.Namespace != "NS" {
			t.Errorf("namespace %q, want NS", d.Namespace)
		}
		// Every dimension and metric a directive names must be a member of the root.
		for _, set := range d.Dimensions {
			for _, dim := range set {
				if _, ok := rec[dim].(string); !ok {
					t.Errorf("line %q: dimension %s has no string value", line, dim)
				}
			}
		}
		for _, m := range d.Metrics {
			v, ok := rec[m.Name]
			if !ok {
				t.Errorf("line %q: metric %s has no value", line, m.Name)
			}
			if arr, isArr := v.([]any); isArr && len(arr) > maxValues {
				t.Errorf("metric %s has %d values, EMF allows %d", m.Name, len(arr), maxValues)
			}
		}
		if rec[contract.DimBus] != "prod" {
			t.Errorf("line %q: Bus = %v, want prod", line, rec[contract.DimBus])
		}
		recs = append(recs, rec)
	}
	return recs
}

func TestFlush(t *testing.T) {
	var b Batch
	for range 3 {
		b.Receive(contract.KindSpotInterruption)
	}
	b.Receive("")
	b.Forward("a")
	b.Lag(1500 * time.Millisecond)
	b.Forward("a")
	b.Lag(2 * time.Second)
	b.Forward("b")
	b.Lag(time.Second)
	b.Drop("no_owner")
	b.Retry()
	b.ForgedSender()
	b.ForgedSender()
	b.ServiceSender()
	b.Receive(contract.KindCanary)
	b.Canary("a")
	b.Canary("a")

	var buf bytes.Buffer
	if err := NewWriter(&buf, "NS", "prod").Flush(&b, time.UnixMilli(1700000000000)); err != nil {
		t.Fatal(err)
	}
	recs := decode(t, buf.String())
	find := func(dim, val, metric string) any {
		for _, r := range recs {
			if (dim == "" && len(r) == 2+countMetrics(r)) || (dim != "" && r[dim] == val) {
				if v, ok := r[metric]; ok {
					return v
				}
			}
		}
		return nil
	}
	checks := []struct {
		dim, val, metric string
		want             any
	}{
		{"", "", contract.MetricReceived, 5.0},
		{"", "", contract.MetricForwarded, 3.0},
		{"", "", contract.MetricDropped, 1.0},
		{"", "", contract.MetricRetried, 1.0},
		{"", "", contract.MetricForgedSender, 2.0},
		{"", "", contract.MetricServiceSender, 1.0},
		{contract.DimKind, "spot_interruption", contract.MetricReceived, 3.0},
		{contract.DimKind, unknown, contract.MetricReceived, 1.0},
		{contract.DimCluster, "a", contract.MetricForwarded, 2.0},
		{contract.DimCluster, "b", contract.MetricForwarded, 1.0},
		{contract.DimReason, "no_owner", contract.MetricDropped, 1.0},
		{contract.DimKind, "canary", contract.MetricReceived, 1.0},
		{contract.DimCluster, "a", contract.MetricCanaryForwarded, 2.0},
		{contract.DimCluster, "b", contract.MetricCanaryForwarded, nil}, // no canary for b: no value
	}
	for _, c := range checks {
		if got := find(c.dim, c.val, c.metric); got != c.want {
			t.Errorf("%s with %s=%q = %v, want %v", c.metric, c.dim, c.val, got, c.want)
		}
	}
	lags, _ := find("", "", contract.MetricForwardLag).([]any)
	if len(lags) != 3 || lags[0] != 1500.0 {
		t.Errorf("ForwardLag = %v, want 3 values in milliseconds starting 1500", lags)
	}
}

// countMetrics counts the members of r that are metric values (not _aws, not dimensions).
func countMetrics(r map[string]any) int {
	n := 0
	for k := range r {
		switch k {
		case "_aws", contract.DimBus, contract.DimKind, contract.DimCluster, contract.DimReason:
		default:
			n++
		}
	}
	return n
}

func TestFlushSplitsLagsAt100Values(t *testing.T) {
	var b Batch
	for range 250 {
		b.Lag(time.Second)
	}
	var buf bytes.Buffer
	if err := NewWriter(&buf, "NS", "prod").Flush(&b, time.UnixMilli(1700000000000)); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range decode(t, buf.String()) {
		if v, ok := r[contract.MetricForwardLag].([]any); ok {
			n += len(v)
		}
	}
	if n != 250 {
		t.Fatalf("lag values written = %d, want 250", n)
	}
}

// TestWriterDeclaresTheContractsSets: the records the writer declares are exactly contract.MetricSets (from which
// the documentation's metrics table is generated), with the contract's units.
func TestWriterDeclaresTheContractsSets(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out, "NS", "prod")
	var b Batch
	b.Receive(contract.KindSpotInterruption)
	b.Forward("alpha")
	b.Canary("alpha")
	b.Drop(contract.ReasonNoQueue)
	b.Retry()
	b.Lag(time.Second)
	if err := w.Flush(&b, time.UnixMilli(1700000000000)); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var doc emfDoc
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatal(err)
		}
		for _, d := range doc.AWS.CloudWatchMetrics {
			var names []string
			for _, m := range d.Metrics {
				names = append(names, m.Name+"/"+m.Unit)
			}
			got[strings.Join(d.Dimensions[0], ",")+" "+strings.Join(names, ",")] = true
		}
	}
	want := map[string]bool{}
	for _, s := range contract.MetricSets {
		dims := contract.DimBus
		if s.Dimension != "" {
			dims += "," + s.Dimension
		}
		var names []string
		for _, m := range s.Metrics {
			names = append(names, m+"/"+contract.Unit(m))
		}
		want[dims+" "+strings.Join(names, ",")] = true
	}
	if len(got) != len(want) {
		t.Errorf("the writer declares %v, the contract %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("the contract's %q is not declared by the writer (it declares %v)", k, got)
		}
	}
}
