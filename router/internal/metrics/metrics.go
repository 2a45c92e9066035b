// Package metrics writes the router's metrics as CloudWatch Embedded Metric Format (EMF) log lines, which
// CloudWatch Logs turns into metrics without any PutMetricData call.
package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"
	"time"
)

// Metric names, as they appear in CloudWatch.
const (
	Received   = "Received"
	Forwarded  = "Forwarded"
	Dropped    = "Dropped"
	Retried    = "Retried"
	ForwardLag = "ForwardLag"
)

// Dimension names.
const (
	DimBus     = "Bus"
	DimKind    = "Kind"
	DimCluster = "Cluster"
	DimReason  = "Reason"
)

// maxValues is EMF's limit on the values of one metric in one record.
const maxValues = 100

// Batch accumulates one invocation's figures. The zero value is ready; it is not safe for concurrent use.
type Batch struct {
	received  map[string]int
	forwarded map[string]int
	dropped   map[string]int
	retried   int
	lagMillis []float64
}

// Unknown replaces an empty dimension value: EMF needs every dimension to have one.
const Unknown = "unknown"

// Receive counts a message of kind ("" or Unknown for one that is not an interruption event).
func (b *Batch) Receive(kind string) { b.received = inc(b.received, kind) }

// Forward counts a delivery to cluster.
func (b *Batch) Forward(cluster string) { b.forwarded = inc(b.forwarded, cluster) }

// Lag records a delivery's forward lag: now minus the event's time.
func (b *Batch) Lag(lag time.Duration) {
	b.lagMillis = append(b.lagMillis, float64(lag.Microseconds())/1000)
}

// Drop counts a message dropped for reason.
func (b *Batch) Drop(reason string) { b.dropped = inc(b.dropped, reason) }

// Retry counts a message reported for redelivery.
func (b *Batch) Retry() { b.retried++ }

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func inc(m map[string]int, k string) map[string]int {
	if m == nil {
		m = make(map[string]int)
	}
	if k == "" {
		k = Unknown
	}
	m[k]++
	return m
}

// Writer emits EMF records, one JSON object a line. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	enc *json.Encoder
	bus string
	// The directives never change: built once, shared by every record.
	totals, byKind, byCluster, byReason, lag []directive
}

type directive struct {
	Namespace  string       `json:"Namespace"`
	Dimensions [][]string   `json:"Dimensions"`
	Metrics    []definition `json:"Metrics"`
}

type definition struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

type meta struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

// totalsRecord always carries all four counts, zeros included, so alarms see 0 rather than missing data.
type totalsRecord struct {
	AWS       meta   `json:"_aws"`
	Bus       string `json:"Bus"`
	Received  int    `json:"Received"`
	Forwarded int    `json:"Forwarded"`
	Dropped   int    `json:"Dropped"`
	Retried   int    `json:"Retried"`
}

// countRecord is one count under one extra dimension; exactly one dimension and one count are set.
type countRecord struct {
	AWS       meta   `json:"_aws"`
	Bus       string `json:"Bus"`
	Kind      string `json:"Kind,omitzero"`
	Cluster   string `json:"Cluster,omitzero"`
	Reason    string `json:"Reason,omitzero"`
	Received  int    `json:"Received,omitzero"`
	Forwarded int    `json:"Forwarded,omitzero"`
	Dropped   int    `json:"Dropped,omitzero"`
}

type lagRecord struct {
	AWS        meta      `json:"_aws"`
	Bus        string    `json:"Bus"`
	ForwardLag []float64 `json:"ForwardLag"`
}

// NewWriter writes records in namespace, each with the dimension Bus=bus, to w (stdout in Lambda).
func NewWriter(w io.Writer, namespace, bus string) *Writer {
	dir := func(dim string, names ...string) []directive {
		dims := []string{DimBus}
		if dim != "" {
			dims = append(dims, dim)
		}
		d := directive{Namespace: namespace, Dimensions: [][]string{dims}}
		for _, n := range names {
			unit := "Count"
			if n == ForwardLag {
				unit = "Milliseconds"
			}
			d.Metrics = append(d.Metrics, definition{Name: n, Unit: unit})
		}
		return []directive{d}
	}
	return &Writer{
		enc:       json.NewEncoder(w),
		bus:       bus,
		totals:    dir("", Received, Forwarded, Dropped, Retried),
		byKind:    dir(DimKind, Received),
		byCluster: dir(DimCluster, Forwarded),
		byReason:  dir(DimReason, Dropped),
		lag:       dir("", ForwardLag),
	}
}

// Flush writes b's figures timestamped at now: totals per bus, received per kind, forwarded per cluster,
// dropped per reason, and the forward lags.
func (w *Writer) Flush(b *Batch, now time.Time) error {
	ts := now.UnixMilli()
	m := func(d []directive) meta { return meta{Timestamp: ts, CloudWatchMetrics: d} }
	w.mu.Lock()
	defer w.mu.Unlock()
	// json.Encoder ends each record with a newline: one log event each.
	err := w.enc.Encode(totalsRecord{AWS: m(w.totals), Bus: w.bus, Received: total(b.received),
		Forwarded: total(b.forwarded), Dropped: total(b.dropped), Retried: b.retried})
	for _, k := range slices.Sorted(maps.Keys(b.received)) {
		err = errors.Join(err, w.enc.Encode(countRecord{AWS: m(w.byKind), Bus: w.bus, Kind: k, Received: b.received[k]}))
	}
	for _, k := range slices.Sorted(maps.Keys(b.forwarded)) {
		err = errors.Join(err, w.enc.Encode(countRecord{AWS: m(w.byCluster), Bus: w.bus, Cluster: k, Forwarded: b.forwarded[k]}))
	}
	for _, k := range slices.Sorted(maps.Keys(b.dropped)) {
		err = errors.Join(err, w.enc.Encode(countRecord{AWS: m(w.byReason), Bus: w.bus, Reason: k, Dropped: b.dropped[k]}))
	}
	for lags := b.lagMillis; len(lags) > 0; lags = lags[min(len(lags), maxValues):] {
		err = errors.Join(err, w.enc.Encode(lagRecord{AWS: m(w.lag), Bus: w.bus, ForwardLag: lags[:min(len(lags), maxValues)]}))
	}
	if err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
}
