package bus

import "encoding/json"

// Rule is one shared EventBridge rule on the default bus (AWS service events arrive only there). Their number
// is fixed: it does not grow with the clusters.
type Rule struct {
	// Key names the rule's resources: "<namePrefix>-<Key>".
	Key, Description string
	Pattern          map[string]any
}

// Rules match exactly what the router forwards and Karpenter acts on, narrowed by detail where Karpenter
// ignores the rest (pending/running state changes, non-EC2 or non-scheduled Health events).
var Rules = []Rule{
	{
		Key: "spot-interruption", Description: "EC2 Spot Instance Interruption Warning to the interruption bus",
		Pattern: map[string]any{"source": []string{"aws.ec2"}, "detail-type": []string{"EC2 Spot Instance Interruption Warning"}},
	},
	{
		Key: "rebalance", Description: "EC2 Instance Rebalance Recommendation to the interruption bus",
		Pattern: map[string]any{"source": []string{"aws.ec2"}, "detail-type": []string{"EC2 Instance Rebalance Recommendation"}},
	},
	{
		Key: "state-change", Description: "EC2 instances stopping or terminating, to the interruption bus",
		Pattern: map[string]any{
			"source": []string{"aws.ec2"}, "detail-type": []string{"EC2 Instance State-change Notification"},
			"detail": map[string]any{"state": []string{"stopping", "stopped", "shutting-down", "terminated"}},
		},
	},
	{
		Key: "scheduled-change", Description: "AWS Health scheduled changes of EC2 to the interruption bus",
		Pattern: map[string]any{
			"source": []string{"aws.health"}, "detail-type": []string{"AWS Health Event"},
			"detail": map[string]any{"service": []string{"EC2"}, "eventTypeCategory": []string{"scheduledChange"}},
		},
	},
	{
		// Handled by Karpenter v1.11 and later; a no-op for older versions, which delete it.
		Key: "capacity-reservation", Description: "EC2 Capacity Reservation interruption warnings to the interruption bus",
		Pattern: map[string]any{"source": []string{"aws.ec2"}, "detail-type": []string{"EC2 Capacity Reservation Instance Interruption Warning"}},
	},
}

// PatternJSON is the rule's event pattern as EventBridge takes it (keys sorted, so it never diffs).
func (r Rule) PatternJSON() string {
	b, err := json.Marshal(r.Pattern)
	if err != nil {
		panic(err) // plain data
	}
	return string(b)
}
