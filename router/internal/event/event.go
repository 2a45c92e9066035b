// Package event parses the EventBridge events the router forwards and decides which of them are interruptions
// Karpenter acts on. It mirrors Karpenter's own parser (pkg/controllers/interruption in
// github.com/aws/karpenter-provider-aws) so that every event it accepts is one Karpenter can parse.
package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Kind is the class of an interruption event. Values are metric dimension values.
type Kind string

const (
	SpotInterruption        Kind = "spot_interruption"
	RebalanceRecommendation Kind = "rebalance_recommendation"
	StateChange             Kind = "state_change"
	ScheduledChange         Kind = "scheduled_change"
	// OtherEC2 is any other aws.ec2 event naming an instance in detail.instance-id, such as a capacity
	// reservation interruption warning, which newer Karpenter versions handle.
	OtherEC2 Kind = "other_ec2"
)

// The event identities Karpenter keys its parsers by: (version, source, detail-type).
const (
	version                   = "0"
	sourceEC2                 = "aws.ec2"
	sourceHealth              = "aws.health"
	detailSpotInterruption    = "EC2 Spot Instance Interruption Warning"
	detailRebalance           = "EC2 Instance Rebalance Recommendation"
	detailStateChange         = "EC2 Instance State-change Notification"
	detailHealth              = "AWS Health Event"
	healthService             = "EC2"
	healthCategoryScheduled   = "scheduledChange"
	maxBodyBytes              = 1 << 20 // SQS's message size limit
	maxInstancesPerHealthItem = 1000
)

var (
	// ErrUnparseable marks a body that is not a well-formed event of a kind the router knows.
	ErrUnparseable = errors.New("unparseable")
	// ErrNotInterruption marks a well-formed event that Karpenter would ignore.
	ErrNotInterruption = errors.New("not an interruption")
)

// instanceIDRE is the EC2 instance ID format: "i-" and 8 (older) or 17 lowercase hex digits.
var instanceIDRE = regexp.MustCompile(`^i-(?:[0-9a-f]{8}|[0-9a-f]{17})$`)

// Event is what the router needs of an interruption event; the body itself is forwarded untouched.
type Event struct {
	Kind    Kind
	ID      string
	Account string
	Region  string
	Time    time.Time
	// InstanceIDs holds each instance the event names, once, in order of first appearance.
	InstanceIDs []string
}

// envelope mirrors Karpenter's messages.Metadata plus the detail fields its parsers read, with the same Go
// types, so a body that decodes here decodes there.
type envelope struct {
	Version    string    `json:"version"`
	ID         string    `json:"id"`
	Source     string    `json:"source"`
	DetailType string    `json:"detail-type"`
	Account    string    `json:"account"`
	Region     string    `json:"region"`
	Time       time.Time `json:"time"`
	Resources  []string  `json:"resources"`
	Detail     *detail   `json:"detail"`
}

type detail struct {
	InstanceID        *string          `json:"instance-id"`
	InstanceAction    string           `json:"instance-action"`
	State             string           `json:"state"`
	Service           string           `json:"service"`
	EventTypeCategory string           `json:"eventTypeCategory"`
	EventARN          string           `json:"eventArn"`
	EventTypeCode     string           `json:"eventTypeCode"`
	StartTime         string           `json:"startTime"`
	EndTime           string           `json:"endTime"`
	EventDescription  []description    `json:"eventDescription"`
	AffectedEntities  []affectedEntity `json:"affectedEntities"`
}

type description struct {
	LatestDescription string `json:"latestDescription"`
	Language          string `json:"language"`
}

type affectedEntity struct {
	EntityValue string `json:"entityValue"`
}

// Parse decodes body. Its error wraps ErrUnparseable or ErrNotInterruption and says why.
func Parse(body []byte) (Event, error) {
	if len(body) > maxBodyBytes {
		return Event{}, fmt.Errorf("%w: body of %d bytes exceeds %d", ErrUnparseable, len(body), maxBodyBytes)
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Event{}, fmt.Errorf("%w: decoding event: %w", ErrUnparseable, err)
	}
	if env.Version != version {
		return Event{}, fmt.Errorf("%w: version %q", ErrNotInterruption, env.Version)
	}
	ev := Event{ID: env.ID, Account: env.Account, Region: env.Region, Time: env.Time}
	if env.Region == "" {
		return Event{}, fmt.Errorf("%w: no region", ErrUnparseable)
	}
	if env.Account == "" {
		return Event{}, fmt.Errorf("%w: no account", ErrUnparseable)
	}
	var err error
	switch env.Source {
	case sourceEC2:
		ev.Kind, ev.InstanceIDs, err = parseEC2(env.DetailType, env.Detail)
	case sourceHealth:
		ev.Kind, ev.InstanceIDs, err = parseHealth(env.DetailType, env.Detail)
	default:
		err = fmt.Errorf("%w: source %q", ErrNotInterruption, env.Source)
	}
	if err != nil {
		return Event{}, err
	}
	return ev, nil
}

func parseEC2(detailType string, d *detail) (Kind, []string, error) {
	var kind Kind
	switch detailType {
	case detailSpotInterruption:
		kind = SpotInterruption
	case detailRebalance:
		kind = RebalanceRecommendation
	case detailStateChange:
		kind = StateChange
	default:
		kind = OtherEC2
	}
	if d == nil {
		if kind == OtherEC2 {
			return "", nil, fmt.Errorf("%w: aws.ec2 %q without detail", ErrNotInterruption, detailType)
		}
		return "", nil, fmt.Errorf("%w: %q without detail", ErrUnparseable, detailType)
	}
	if kind == OtherEC2 && d.InstanceID == nil {
		return "", nil, fmt.Errorf("%w: aws.ec2 %q names no instance", ErrNotInterruption, detailType)
	}
	if kind == StateChange && !interruptingState(d.State) {
		return "", nil, fmt.Errorf("%w: state %q", ErrNotInterruption, d.State)
	}
	if d.InstanceID == nil {
		return "", nil, fmt.Errorf("%w: %q without detail.instance-id", ErrUnparseable, detailType)
	}
	if !instanceIDRE.MatchString(*d.InstanceID) {
		return "", nil, fmt.Errorf("%w: detail.instance-id %q is not an instance ID", ErrUnparseable, *d.InstanceID)
	}
	return kind, []string{*d.InstanceID}, nil
}

// interruptingState matches Karpenter's statechange parser, which lowercases the state first.
func interruptingState(state string) bool {
	switch strings.ToLower(state) {
	case "stopping", "stopped", "shutting-down", "terminated":
		return true
	}
	return false
}

func parseHealth(detailType string, d *detail) (Kind, []string, error) {
	if detailType != detailHealth {
		return "", nil, fmt.Errorf("%w: aws.health %q", ErrNotInterruption, detailType)
	}
	if d == nil {
		return "", nil, fmt.Errorf("%w: %q without detail", ErrUnparseable, detailType)
	}
	// Karpenter compares these exactly, without case folding.
	if d.Service != healthService || d.EventTypeCategory != healthCategoryScheduled {
		return "", nil, fmt.Errorf("%w: health service %q category %q", ErrNotInterruption, d.Service, d.EventTypeCategory)
	}
	if len(d.AffectedEntities) == 0 {
		return "", nil, fmt.Errorf("%w: health event without affectedEntities", ErrUnparseable)
	}
	if len(d.AffectedEntities) > maxInstancesPerHealthItem {
		return "", nil, fmt.Errorf("%w: %d affectedEntities exceed %d", ErrUnparseable, len(d.AffectedEntities), maxInstancesPerHealthItem)
	}
	ids := make([]string, 0, len(d.AffectedEntities))
	for _, e := range d.AffectedEntities {
		// EC2 health events can also name dedicated hosts or volumes; only instances have owners.
		if instanceIDRE.MatchString(e.EntityValue) && !slices.Contains(ids, e.EntityValue) {
			ids = append(ids, e.EntityValue)
		}
	}
	if len(ids) == 0 {
		return "", nil, fmt.Errorf("%w: health event names no instance", ErrNotInterruption)
	}
	return ScheduledChange, ids, nil
}
