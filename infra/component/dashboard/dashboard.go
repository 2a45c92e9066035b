// Package dashboard declares the bus's CloudWatch dashboard: events in by kind, forwarded per cluster, dropped
// by reason, forward lag, the queues' depth and age, and the router's errors and throttles.
package dashboard

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pulumi/pulumi-aws/sdk/v6/go/aws/cloudwatch"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/infra/dependency"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

// Type is the component's type token.
const Type = "karpenter-interruption-bus:index:Dashboard"

// Args name the dashboard and what it shows.
type Args struct {
	// Name is the dashboard's; Bus is the router's Bus dimension, Namespace its metrics namespace.
	Name, Bus, Namespace, Region string
	// MaximumConcurrency is the router's limit, drawn on its concurrency graph.
	MaximumConcurrency int
	CentralQueueName   pulumi.StringInput
	DLQName            pulumi.StringInput
	FunctionName       pulumi.StringInput
	// Clusters each get a row: their canaries and interruptions forwarded, and their queue's deletes and age.
	Clusters []Cluster
}

// Cluster is one cluster's row: its name and its queue's.
type Cluster struct{ Name, Queue string }

// Dashboard is the declared dashboard.
type Dashboard struct {
	pulumi.ResourceState
	dependency.Recorder // what depending on it means (dependency.On)

	DashboardName pulumi.StringOutput `pulumi:"dashboardName"`
}

// New declares the dashboard.
func New(ctx *pulumi.Context, name string, args *Args, opts ...pulumi.ResourceOption) (*Dashboard, error) {
	d := &Dashboard{}
	if err := dependency.Register(ctx, Type, name, d, opts...); err != nil {
		return nil, err
	}
	body := pulumi.All(args.CentralQueueName, args.DLQName, args.FunctionName).ApplyT(func(v []any) string {
		return NewBody(Names{
			Namespace: args.Namespace, Bus: args.Bus, Region: args.Region, MaximumConcurrency: args.MaximumConcurrency,
			CentralQueue: v[0].(string), DLQ: v[1].(string), Function: v[2].(string), Clusters: args.Clusters,
		}).JSON()
	}).(pulumi.StringOutput)
	db, err := cloudwatch.NewDashboard(ctx, name, &cloudwatch.DashboardArgs{
		DashboardName: pulumi.String(args.Name), DashboardBody: body,
	}, pulumi.Parent(d))
	if err != nil {
		return nil, fmt.Errorf("declaring the dashboard: %w", err)
	}
	d.DashboardName = db.DashboardName
	if err := ctx.RegisterResourceOutputs(d, pulumi.Map{"dashboardName": d.DashboardName}); err != nil {
		return nil, err
	}
	return d, nil
}

// Names are what the dashboard's body shows.
type Names struct {
	Namespace, Bus, Region, CentralQueue, DLQ, Function string
	MaximumConcurrency                                  int
	Clusters                                            []Cluster
}

// BusWidgets are the widgets before the clusters' rows: the title and the bus's graphs.
const BusWidgets = 10

// MaxWidgets is CloudWatch's limit on a dashboard's widgets (CloudWatch quotas: "500 widgets per dashboard").
const MaxWidgets = 500

// MaxClusterRows is how many clusters get a row: the bus's own widgets first, then one more says how many clusters
// have no row.
const MaxClusterRows = MaxWidgets - BusWidgets - 1

// Body is a dashboard body (the CloudWatch dashboard body structure).
type Body struct {
	Widgets []Widget `json:"widgets"`
}

// Widget is one metric or text widget on a 24-column grid.
type Widget struct {
	Type       string     `json:"type"`
	X          int        `json:"x"`
	Y          int        `json:"y"`
	Width      int        `json:"width"`
	Height     int        `json:"height"`
	Properties Properties `json:"properties"`
}

// Properties of a widget; Markdown is for text widgets only.
type Properties struct {
	Title    string  `json:"title,omitempty"`
	Markdown string  `json:"markdown,omitempty"`
	Region   string  `json:"region,omitempty"`
	View     string  `json:"view,omitempty"`
	Stat     string  `json:"stat,omitempty"`
	Period   int     `json:"period,omitempty"`
	Metrics  [][]any `json:"metrics,omitempty"`
	// Annotations are horizontal lines: a limit, a threshold.
	Annotations *Annotations `json:"annotations,omitempty"`
}

// Annotations of a metric widget.
type Annotations struct {
	Horizontal []Annotation `json:"horizontal"`
}

// Annotation is one horizontal line.
type Annotation struct {
	Label string  `json:"label"`
	Value float64 `json:"value"`
}

// NewBody returns the dashboard body for the bus named in n.
func NewBody(n Names) Body {
	// The router's dimension values (kinds, clusters, reasons) are not known in advance: SEARCH finds them.
	search := func(dim, metric, stat string) [][]any {
		expr := fmt.Sprintf(`SEARCH('{%s,%s,%s} MetricName="%s" %s="%s"', '%s', 60)`,
			n.Namespace, contract.DimBus, dim, metric, contract.DimBus, n.Bus, stat)
		return [][]any{{map[string]any{"expression": expr, "id": "e1", "label": ""}}}
	}
	metric := func(title, stat string, metrics [][]any) Properties {
		return Properties{Title: title, Region: n.Region, View: "timeSeries", Stat: stat, Period: 60, Metrics: metrics}
	}
	busMetric := func(name, stat, label string) []any {
		return []any{n.Namespace, name, contract.DimBus, n.Bus, map[string]any{"stat": stat, "label": label}}
	}
	concurrency := metric("Router concurrency (alarmed on at its maximum)", "Maximum", [][]any{
		{"AWS/Lambda", "ConcurrentExecutions", "FunctionName", n.Function, map[string]any{"label": "concurrent executions"}},
	})
	concurrency.Annotations = &Annotations{Horizontal: []Annotation{{Label: "concurrency limit", Value: float64(n.MaximumConcurrency)}}}
	widgets := []Properties{
		metric("Events in, by kind", "Sum", search(contract.DimKind, contract.MetricReceived, "Sum")),
		metric("Forwarded, per cluster", "Sum", search(contract.DimCluster, contract.MetricForwarded, "Sum")),
		metric("Dropped, by reason", "Sum", search(contract.DimReason, contract.MetricDropped, "Sum")),
		metric("Forward lag (event time to forwarding)", "p99", [][]any{
			busMetric(contract.MetricForwardLag, "p50", "p50"), busMetric(contract.MetricForwardLag, "p99", "p99"),
			busMetric(contract.MetricForwardLag, "Maximum", "max"),
		}),
		metric("Queues", "Maximum", [][]any{
			{"AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", n.DLQ, map[string]any{"label": "dead-letter queue depth"}},
			{"AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", n.CentralQueue, map[string]any{"label": "central queue depth"}},
			{"AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", n.CentralQueue, map[string]any{"label": "central oldest message (s)", "yAxis": "right"}},
		}),
		metric("Router", "Sum", [][]any{
			{"AWS/Lambda", "Errors", "FunctionName", n.Function, map[string]any{"label": "errors"}},
			{"AWS/Lambda", "Throttles", "FunctionName", n.Function, map[string]any{"label": "throttles"}},
			busMetric(contract.MetricRetried, "Sum", "messages retried"),
		}),
		// Alarmed on: a cluster or an account running instances the bus does not know misses its interruptions.
		metric("Events for clusters and accounts not on the bus", "Sum", [][]any{
			{n.Namespace, contract.MetricDropped, contract.DimBus, n.Bus, contract.DimReason, string(contract.ReasonNoQueue), map[string]any{"label": "no queue (cluster not on the bus)"}},
			{n.Namespace, contract.MetricDropped, contract.DimBus, n.Bus, contract.DimReason, string(contract.ReasonUnknownAccount), map[string]any{"label": "unknown account"}},
		}),
		concurrency,
		// The central queue is fair between accounts (bus.MessageGroup): how many accounts SQS holds back as noisy,
		// and how long the others' events wait beside the oldest of all ("Available CloudWatch metrics for Amazon
		// SQS", fair queues).
		metric("Fairness between accounts (central queue)", "Maximum", [][]any{
			{"AWS/SQS", "ApproximateNumberOfNoisyGroups", "QueueName", n.CentralQueue, map[string]any{"label": "accounts held back as noisy"}},
			{"AWS/SQS", "ApproximateAgeOfOldestMessageInQuietGroups", "QueueName", n.CentralQueue, map[string]any{"label": "oldest of the other accounts (s)", "yAxis": "right"}},
			{"AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", n.CentralQueue, map[string]any{"label": "oldest of all (s)", "yAxis": "right"}},
		}),
	}
	b := Body{Widgets: []Widget{{Type: "text", Width: 24, Height: 2, Properties: Properties{
		Markdown: fmt.Sprintf("# Karpenter interruption bus `%s`\nEvents from EC2 and AWS Health, routed to each cluster's Karpenter queue. Runbook: the project's docs/operations.md, *Troubleshooting*.", n.Bus),
	}}}}
	for i, p := range widgets {
		b.Widgets = append(b.Widgets, Widget{Type: "metric", X: (i % 2) * 12, Y: 2 + (i/2)*6, Width: 12, Height: 6, Properties: p})
	}
	// A row per cluster, by name, so the order of the configuration changes nothing.
	clusters := slices.SortedFunc(slices.Values(n.Clusters), func(a, b Cluster) int { return strings.Compare(a.Name, b.Name) })
	y := 2 + (len(widgets)+1)/2*6
	for i, c := range clusters {
		if i == MaxClusterRows {
			b.Widgets = append(b.Widgets, Widget{Type: "text", Y: y, Width: 24, Height: 2, Properties: Properties{
				Markdown: fmt.Sprintf("%d more clusters have no row: CloudWatch takes 500 widgets per dashboard.", len(clusters)-i),
			}})
			break
		}
		clusterMetric := func(name, label string) []any {
			return []any{n.Namespace, name, contract.DimBus, n.Bus, contract.DimCluster, c.Name, map[string]any{"stat": "Sum", "label": label}}
		}
		b.Widgets = append(b.Widgets, Widget{Type: "metric", Y: y, Width: 24, Height: 5, Properties: metric("Cluster "+c.Name, "Sum", [][]any{
			clusterMetric(contract.MetricCanaryForwarded, "canaries forwarded"),
			clusterMetric(contract.MetricForwarded, "interruptions forwarded"),
			{"AWS/SQS", "NumberOfMessagesDeleted", "QueueName", c.Queue, map[string]any{"stat": "Sum", "label": "deleted by Karpenter"}},
			{"AWS/SQS", "ApproximateAgeOfOldestMessage", "QueueName", c.Queue, map[string]any{"stat": "Maximum", "label": "oldest message (s)", "yAxis": "right"}},
		})})
		y += 5
	}
	return b
}

// JSON is the body as CloudWatch takes it.
func (b Body) JSON() string {
	out, err := json.Marshal(b)
	if err != nil {
		panic(err) // plain data
	}
	return string(out)
}
