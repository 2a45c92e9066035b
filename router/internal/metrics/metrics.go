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

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// maxValues is EMF's limit on the values of one metric in one record.
const maxValues = 100

// Batch accumulates one invocation's figures. The zero value is ready; it is not safe for concurrent use.
type Batch struct {
	received  map[string]int
	forwarded map[string]int
	canaries  map[string]int // canary deliveries per cluster
	dropped   map[string]int
	retried   int
	forged    int
	service   int
	kept      int
	unsealed  int
	taken     int // dead-letter queue messages sealed into the quarantine
	replayed  int
	lagMillis []float64
}

// unknown replaces an empty dimension value: EMF needs every dimension to have one.
const unknown = string(contract.KindUnknown)

// Receive counts a message of kind ("" for one that is not an interruption event).
func (b *Batch) Receive(kind contract.Kind) { b.received = inc(b.received, string(kind)) }

// Forward counts a delivery to cluster.
func (b *Batch) Forward(cluster string) { b.forwarded = inc(b.forwarded, cluster) }

// Canary counts one canary delivered to cluster's queue.
func (b *Batch) Canary(cluster string) { b.canaries = inc(b.canaries, cluster) }

// Lag records a delivery's forward lag: now minus the event's time.
func (b *Batch) Lag(lag time.Duration) {
	b.lagMillis = append(b.lagMillis, float64(lag.Microseconds())/1000)
}

// Drop counts a message dropped for reason.
func (b *Batch) Drop(reason contract.Reason) { b.dropped = inc(b.dropped, string(reason)) }

// Retry counts a message reported for redelivery.
func (b *Batch) Retry() { b.retried++ }

// ForgedSender counts a message whose sender may not speak for the account its event names.
func (b *Batch) ForgedSender() { b.forged++ }

// ServiceSender counts a message sent by no IAM role.
func (b *Batch) ServiceSender() { b.service++ }

// Quarantine counts a refused message kept in the quarantine queue.
func (b *Batch) Quarantine() { b.kept++ }

// Unsealed counts a message of the redrive role whose seal does not verify.
func (b *Batch) Unsealed() { b.unsealed++ }

// DeadLettered counts n messages of the dead-letter queue sealed into the quarantine.
func (b *Batch) DeadLettered(n int) { b.taken += n }

// Replayed counts a sealed record sent back once more after it was delivered.
func (b *Batch) Replayed() { b.replayed++ }

// Add adds o's figures to b's (a batch's waves counted apart, then together).
func (b *Batch) Add(o *Batch) {
	for _, p := range []struct {
		to   *map[string]int
		from map[string]int
	}{
		{&b.received, o.received}, {&b.forwarded, o.forwarded}, {&b.canaries, o.canaries}, {&b.dropped, o.dropped},
	} {
		for k, n := range p.from {
			if *p.to == nil {
				*p.to = map[string]int{}
			}
			(*p.to)[k] += n
		}
	}
	b.retried += o.retried
	b.forged += o.forged
	b.service += o.service
	b.kept += o.kept
	b.unsealed += o.unsealed
	b.taken += o.taken
	b.replayed += o.replayed
	b.lagMillis = append(b.lagMillis, o.lagMillis...)
}

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
		k = unknown
	}
	m[k]++
	return m
}

// Writer emits EMF records, one JSON object a line. It is safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	enc    *json.Encoder
	record map[string]any // one line's members, reused
	bus    string
	// The directives never change: built once, shared by every record.
	totals, byKind, byCluster, byReason, lag, canaries []directive
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

// NewWriter writes records in namespace, each with the dimension Bus=bus, to w (stdout in Lambda).
func NewWriter(w io.Writer, namespace, bus string) *Writer {
	dir := func(dim string, names ...string) []directive {
		dims := []string{contract.DimBus}
		if dim != "" {
			dims = append(dims, dim)
		}
		d := directive{Namespace: namespace, Dimensions: [][]string{dims}}
		for _, n := range names {
			d.Metrics = append(d.Metrics, definition{Name: n, Unit: contract.Unit(n)})
		}
		return []directive{d}
	}
	return &Writer{
		record: map[string]any{},
		enc:    json.NewEncoder(w),
		bus:    bus,
		totals: dir("", contract.MetricReceived, contract.MetricForwarded, contract.MetricDropped, contract.MetricRetried,
			contract.MetricForgedSender, contract.MetricServiceSender, contract.MetricQuarantined, contract.MetricUnsealed, contract.MetricDeadLettered,
			contract.MetricReplayed),
		byKind:    dir(contract.DimKind, contract.MetricReceived),
		byCluster: dir(contract.DimCluster, contract.MetricForwarded),
		byReason:  dir(contract.DimReason, contract.MetricDropped),
		canaries:  dir(contract.DimCluster, contract.MetricCanaryForwarded),
		lag:       dir("", contract.MetricForwardLag),
	}
}

// Flush writes b's figures timestamped at now: totals per bus (all ten, zeros included, so alarms see 0
// rather than missing data), received per kind, forwarded per cluster, dropped per reason, and the forward lags.
func (w *Writer) Flush(b *Batch, now time.Time) error {
	ts := now.UnixMilli()
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.encode(w.totals, ts, contract.MetricReceived, total(b.received), contract.MetricForwarded, total(b.forwarded),
		contract.MetricDropped, total(b.dropped), contract.MetricRetried, b.retried,
		contract.MetricForgedSender, b.forged, contract.MetricServiceSender, b.service, contract.MetricQuarantined, b.kept,
		contract.MetricUnsealed, b.unsealed, contract.MetricDeadLettered, b.taken, contract.MetricReplayed, b.replayed)
	counts := func(d []directive, dim, metric string, by map[string]int) {
		for _, k := range slices.Sorted(maps.Keys(by)) {
			err = errors.Join(err, w.encode(d, ts, dim, k, metric, by[k]))
		}
	}
	counts(w.byKind, contract.DimKind, contract.MetricReceived, b.received)
	counts(w.byCluster, contract.DimCluster, contract.MetricForwarded, b.forwarded)
	counts(w.byReason, contract.DimReason, contract.MetricDropped, b.dropped)
	counts(w.canaries, contract.DimCluster, contract.MetricCanaryForwarded, b.canaries)
	for lags := b.lagMillis; len(lags) > 0; lags = lags[min(len(lags), maxValues):] {
		err = errors.Join(err, w.encode(w.lag, ts, contract.MetricForwardLag, lags[:min(len(lags), maxValues)]))
	}
	if err != nil {
		return fmt.Errorf("writing metrics: %w", err)
	}
	return nil
}

// encode writes one EMF line (json.Encoder ends it with a newline: one log event) with the directives d, the Bus
// dimension, and the members kv (name, value, ...) keyed by the contract's names. w.mu is held.
func (w *Writer) encode(d []directive, ts int64, kv ...any) error {
	defer clear(w.record)
	w.record["_aws"] = meta{Timestamp: ts, CloudWatchMetrics: d}
	w.record[contract.DimBus] = w.bus
	for i := 0; i+1 < len(kv); i += 2 {
		w.record[kv[i].(string)] = kv[i+1]
	}
	return w.enc.Encode(w.record)
}
