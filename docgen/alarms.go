package docgen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/component/alarms"
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
