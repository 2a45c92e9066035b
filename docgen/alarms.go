package docgen

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/alarms"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/heartbeat"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/config"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Alarms is the table of the bus's alarms as alarms.Specs declares them, with the default settings: each alarm's
// metric, its condition and its description (the alarm's own AlarmDescription).
func Alarms() string {
	specs := alarms.Specs(&alarms.Args{
		NamePrefix: "<namePrefix>", Bus: "<namePrefix>", Namespace: contract.MetricsNamespace,
		OldestMessageAgeSeconds: config.DefaultAlarms.OldestMessageAgeSeconds,
		MaximumConcurrency:      config.DefaultRouter.MaximumConcurrency,
	})
	operators := map[string]string{"GreaterThanThreshold": ">", "GreaterThanOrEqualToThreshold": "≥", "LessThanThreshold": "<"}
	var b strings.Builder
	b.WriteString("| alarm | metric | fires when | first look | description |\n|---|---|---|---|---|\n")
	for _, s := range specs {
		var dims []string
		for _, k := range slices.Sorted(maps.Keys(s.Dimensions)) {
			if v, ok := s.Dimensions[k].(pulumi.String); ok && k != contract.DimBus {
				dims = append(dims, fmt.Sprintf("%s=%s", k, string(v)))
			} else {
				dims = append(dims, k)
			}
		}
		m, n := s.MOfN()
		period := fmt.Sprintf("%d min", s.Period()/60)
		look := "the router's log group"
		if s.Runbook != "" {
			look = fmt.Sprintf("[%s](#%s)", s.Runbook, Anchor(s.Runbook))
		}
		fmt.Fprintf(&b, "| `<namePrefix>-%s` | `%s` `%s` (%s; %s) | %s %g in %d of %d periods of %s | %s | %s |\n",
			s.Key, s.Namespace, s.Metric, s.Statistic, strings.Join(dims, ", "), operators[s.Operator()], s.Threshold, m, n, period,
			look, strings.ReplaceAll(s.Description, "|", "\\|"))
	}
	return b.String()
}

// Metrics is the table of the router's metrics, as contract.MetricSets declares its records.
func Metrics() string {
	var b strings.Builder
	b.WriteString("| metric | unit | dimensions | what |\n|---|---|---|---|\n")
	for _, s := range contract.MetricSets {
		dims := "`" + contract.DimBus + "`"
		if s.Dimension != "" {
			dims += ", `" + s.Dimension + "`"
		}
		names := make([]string, len(s.Metrics))
		for i, m := range s.Metrics {
			names[i] = "`" + m + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", strings.Join(names, ", "), contract.Unit(s.Metrics[0]), dims, s.About)
	}
	return b.String()
}

// HeartbeatAlarm is the table of the heartbeat alarm's rule and time to alarm at each rate, as
// heartbeat.EvaluationFor computes them (indented: it sits in a list item of docs/operations.md).
func HeartbeatAlarm() string {
	var b strings.Builder
	b.WriteString("  | `heartbeat.rate` | M of N | alarm after Karpenter stops |\n  |---|---|---|\n")
	def := config.DefaultHeartbeat.Interval()
	for _, rate := range []time.Duration{time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour} {
		e := heartbeat.EvaluationFor(rate)
		lo, hi := e.TimeToAlarm()
		name := fmt.Sprintf("%dm", int(rate.Minutes()))
		if rate == def {
			name += " (default)"
		}
		fmt.Fprintf(&b, "  | %s | %d of %d | %s to %s |\n", name, e.DatapointsToAlarm, e.EvaluationPeriods, span(lo), span(hi))
	}
	return b.String()
}

// span writes a duration of whole minutes as the docs do: "7 minutes", "2 hours", "4 h 2 min".
func span(d time.Duration) string {
	m := int(d.Minutes())
	switch {
	case m < 60:
		return fmt.Sprintf("%d minutes", m)
	case m%60 == 0 && m == 60:
		return "1 hour"
	case m%60 == 0:
		return fmt.Sprintf("%d hours", m/60)
	}
	return fmt.Sprintf("%d h %d min", m/60, m%60)
}
