package contract

import "encoding/json"

// Kind is the class of an event the router handles; its values are those of the Kind dimension.
type Kind string

// The kinds of interruption event.
const (
	KindSpotInterruption        Kind = "spot_interruption"
	KindRebalanceRecommendation Kind = "rebalance_recommendation"
	KindStateChange             Kind = "state_change"
	KindScheduledChange         Kind = "scheduled_change"
	// KindCapacityReservationInterruption warns that an instance in a capacity reservation is interrupted.
	KindCapacityReservationInterruption Kind = "capacity_reservation_interruption"
	// KindOtherEC2 is any other aws.ec2 event naming an instance in detail.instance-id: forwarded, so a
	// Karpenter newer than this table can act on it.
	KindOtherEC2 Kind = "other_ec2"
)

// EventVersion is the EventBridge envelope version Karpenter's parsers are keyed by.
const EventVersion = "0"

// Sources of the events the bus carries.
const (
	SourceEC2    = "aws.ec2"
	SourceHealth = "aws.health"
)

// Detail fields an event type is narrowed by.
const (
	DetailState             = "state"
	DetailService           = "service"
	DetailEventTypeCategory = "eventTypeCategory"
)

// EventType is one type of EventBridge event the bus carries: an EventBridge rule matches it (Pattern) and the
// router's parser accepts it, so the two are generated from this one table.
type EventType struct {
	Kind Kind
	// Rule names the type's EventBridge rule: "<namePrefix>-<Rule>".
	Rule        string
	Description string
	Source      string
	DetailType  string
	// Detail narrows the type to the values of detail fields Karpenter acts on, compared exactly (as
	// EventBridge does); nil accepts any detail.
	Detail map[string][]string
}

// EventTypes are the events the bus carries, one EventBridge rule each: the rule count does not grow with the
// clusters. Their detail filters drop on the rule what Karpenter would ignore (pending or running instances,
// Health events of other services or categories).
var EventTypes = []EventType{
	{
		Kind: KindSpotInterruption, Rule: "spot-interruption",
		Description: "EC2 Spot Instance Interruption Warning to the interruption bus",
		Source:      SourceEC2, DetailType: "EC2 Spot Instance Interruption Warning",
	},
	{
		Kind: KindRebalanceRecommendation, Rule: "rebalance",
		Description: "EC2 Instance Rebalance Recommendation to the interruption bus",
		Source:      SourceEC2, DetailType: "EC2 Instance Rebalance Recommendation",
	},
	{
		Kind: KindStateChange, Rule: "state-change",
		Description: "EC2 instances stopping or terminating, to the interruption bus",
		Source:      SourceEC2, DetailType: "EC2 Instance State-change Notification",
		Detail: map[string][]string{DetailState: {"stopping", "stopped", "shutting-down", "terminated"}},
	},
	{
		Kind: KindScheduledChange, Rule: "scheduled-change",
		Description: "AWS Health scheduled changes of EC2 to the interruption bus",
		Source:      SourceHealth, DetailType: "AWS Health Event",
		Detail: map[string][]string{DetailService: {"EC2"}, DetailEventTypeCategory: {"scheduledChange"}},
	},
	{
		// Parsed by Karpenter v1.10 and later; older versions take it for a no-op and delete it.
		Kind: KindCapacityReservationInterruption, Rule: "capacity-reservation",
		Description: "EC2 Capacity Reservation interruption warnings to the interruption bus",
		Source:      SourceEC2, DetailType: "EC2 Capacity Reservation Instance Interruption Warning",
	},
}

// EventTypeOf returns the event type of (source, detailType), if the bus carries it.
func EventTypeOf(source, detailType string) (EventType, bool) {
	for _, t := range EventTypes {
		if t.Source == source && t.DetailType == detailType {
			return t, true
		}
	}
	return EventType{}, false
}

// Pattern is the EventBridge event pattern matching t, as JSON with sorted keys (so it never diffs).
func (t EventType) Pattern() string {
	p := map[string]any{"source": []string{t.Source}, "detail-type": []string{t.DetailType}}
	if t.Detail != nil {
		p["detail"] = t.Detail
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // plain data
	}
	return string(b)
}
