// Package event parses the EventBridge events the router forwards and decides which of them are interruptions
// Karpenter acts on. It mirrors Karpenter's own parser (pkg/controllers/interruption in
// github.com/aws/karpenter-provider-aws) so that every event it accepts is one Karpenter can parse.
package event

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

const (
	maxBodyBytes              = 1 << 20 // the most any SQS queue takes (the bus's take 256 KiB: contract.MaxMessageBytes)
	maxInstancesPerHealthItem = 1000
)

var (
	// ErrUnparseable marks a body that is not a well-formed event of a kind the router knows.
	ErrUnparseable = errors.New("unparseable")
	// ErrNotInterruption marks a well-formed event that Karpenter would ignore.
	ErrNotInterruption = errors.New("not an interruption")
)

// The identifier formats are checked byte by byte: these run for every message, and regexp cost a sixth of the
// router's CPU.

// IsInstanceID reports whether id is an EC2 instance ID: "i-" and 8 (older) or 17 lowercase hex digits.
func IsInstanceID[S ~string | ~[]byte](id S) bool {
	if (len(id) != 10 && len(id) != 19) || id[0] != 'i' || id[1] != '-' {
		return false
	}
	for i := 2; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// isRegion reports whether r looks like a region of any partition (us-east-1, us-gov-west-1, cn-north-1):
// lowercase words joined by at least two hyphens, ending in a number.
func isRegion(r []byte) bool {
	if len(r) < 5 || len(r) > 30 || r[0] < 'a' || r[0] > 'z' || r[len(r)-1] < '0' || r[len(r)-1] > '9' {
		return false
	}
	hyphens := 0
	for i, c := range r {
		switch {
		case c == '-':
			if r[i-1] == '-' {
				return false
			}
			hyphens++
		case (c < 'a' || c > 'z') && (c < '0' || c > '9'):
			return false
		}
	}
	return hyphens >= 2
}

// Event is what the router needs of an interruption event; the body itself is forwarded untouched.
type Event struct {
	Kind    contract.Kind
	ID      string
	Account string
	Region  string
	Time    time.Time
	// InstanceIDs holds each instance the event names, once, in order of first appearance.
	InstanceIDs []string
	// Bus, To and Clusters are a canary's (KindCanary): the bus it is for, the account of its clusters (its
	// own Account when not named) and the clusters it must reach, each once, in order.
	Bus      string
	To       string
	Clusters []string
}

// envelope mirrors Karpenter's messages.Metadata plus the detail fields its parsers read, with the same JSON
// types, so a body that decodes here decodes there. Strings are tokens: checked, not copied.
type envelope struct {
	Version    token     `json:"version"`
	ID         token     `json:"id"`
	Source     token     `json:"source"`
	DetailType token     `json:"detail-type"`
	Account    token     `json:"account"`
	Region     token     `json:"region"`
	Time       time.Time `json:"time"`
	Resources  []token   `json:"resources"`
	Detail     detail    `json:"detail"`
}

// detail holds every field any kind's Karpenter parser reads, undecoded: each kind then checks only its own
// fields' types, as Karpenter's per-kind structs do, so a field another kind would read cannot fail this one.
type detail struct {
	InstanceID        raw `json:"instance-id"`
	InstanceAction    raw `json:"instance-action"`
	State             raw `json:"state"`
	Service           raw `json:"service"`
	EventTypeCategory raw `json:"eventTypeCategory"`
	EventARN          raw `json:"eventArn"`
	EventTypeCode     raw `json:"eventTypeCode"`
	StartTime         raw `json:"startTime"`
	EndTime           raw `json:"endTime"`
	EventDescription  raw `json:"eventDescription"`
	AffectedEntities  raw `json:"affectedEntities"`
	// A canary's (contract.CanaryDetail), which no Karpenter parser reads.
	Bus       raw `json:"bus"`
	ToAccount raw `json:"account"`
	Clusters  raw `json:"clusters"`
}

// description and affectedEntity type the AWS Health detail's arrays as Karpenter's scheduledchange.Detail does.
type description struct {
	LatestDescription token `json:"latestDescription"`
	Language          token `json:"language"`
}

type affectedEntity struct {
	EntityValue token `json:"entityValue"`
}

// Parse decodes body. Its error wraps ErrUnparseable or ErrNotInterruption and says why; with
// ErrNotInterruption the Event still holds the envelope (ID, Account, Region, Time) for logs. The strings of the
// returned Event may share memory with body.
func Parse(body []byte) (Event, error) {
	if len(body) > maxBodyBytes {
		return Event{}, fmt.Errorf("%w: body of %d bytes exceeds %d", ErrUnparseable, len(body), maxBodyBytes)
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return Event{}, fmt.Errorf("%w: decoding event: %w", ErrUnparseable, err)
	}
	if string(env.Version) != contract.EventVersion {
		return Event{}, fmt.Errorf("%w: version %q", ErrNotInterruption, env.Version)
	}
	if !contract.IsAccount(env.Account) {
		return Event{}, fmt.Errorf("%w: account %q is not an AWS account ID", ErrUnparseable, env.Account)
	}
	if !isRegion(env.Region) {
		return Event{}, fmt.Errorf("%w: region %q is not an AWS region", ErrUnparseable, env.Region)
	}
	ev := Event{ID: env.ID.String(), Account: env.Account.String(), Region: env.Region.String(), Time: env.Time}
	var err error
	t, known := contract.EventTypeOf(env.Source.String(), env.DetailType.String())
	switch {
	case !known && string(env.Source) == contract.SourceCanary && string(env.DetailType) == contract.DetailTypeCanary:
		ev.Kind = contract.KindCanary
		ev.Bus, ev.To, ev.Clusters, err = parseCanary(&env.Detail)
		if ev.To == "" {
			ev.To = ev.Account
		}
	case known && t.Source == contract.SourceHealth:
		ev.Kind, ev.InstanceIDs, err = parseHealth(t, &env.Detail)
	case known:
		ev.Kind, ev.InstanceIDs, err = parseEC2(t, &env.Detail)
	case string(env.Source) == contract.SourceEC2:
		// A type this table does not know yet: forwarded when it names an instance, for newer Karpenters.
		ev.Kind, ev.InstanceIDs, err = parseEC2(contract.EventType{Kind: contract.KindOtherEC2, DetailType: env.DetailType.String()}, &env.Detail)
	default:
		err = fmt.Errorf("%w: source %q detail-type %q", ErrNotInterruption, env.Source, env.DetailType)
	}
	if errors.Is(err, ErrNotInterruption) {
		return Event{ID: ev.ID, Account: ev.Account, Region: ev.Region, Time: ev.Time}, err
	}
	if err != nil {
		return Event{}, err
	}
	return ev, nil
}

// parseEC2 reads an aws.ec2 event of type t: only the detail fields t's Karpenter parser decodes are checked.
func parseEC2(t contract.EventType, d *detail) (contract.Kind, []string, error) {
	var strs []*raw // the detail fields this kind's Karpenter parser decodes as strings
	switch t.Kind {
	case contract.KindSpotInterruption, contract.KindCapacityReservationInterruption:
		strs = []*raw{&d.InstanceID, &d.InstanceAction}
	case contract.KindStateChange:
		strs = []*raw{&d.InstanceID, &d.State}
	default:
		strs = []*raw{&d.InstanceID}
	}
	if err := stringsOrNull(strs...); err != nil {
		return "", nil, fmt.Errorf("%w: detail: %w", ErrUnparseable, err)
	}
	id, _ := d.InstanceID.token()
	if t.Kind == contract.KindOtherEC2 && id == nil {
		return "", nil, fmt.Errorf("%w: aws.ec2 %q names no instance", ErrNotInterruption, t.DetailType)
	}
	if states, narrowed := t.Detail[contract.DetailState]; narrowed {
		if state, _ := d.State.token(); !oneOfFold(states, state.String()) {
			return "", nil, fmt.Errorf("%w: state %q", ErrNotInterruption, state)
		}
	}
	if id == nil {
		return "", nil, fmt.Errorf("%w: %q without detail.instance-id", ErrUnparseable, t.DetailType)
	}
	if !IsInstanceID(id) {
		return "", nil, fmt.Errorf("%w: detail.instance-id %q is not an instance ID", ErrUnparseable, id)
	}
	return t.Kind, []string{id.String()}, nil
}

// oneOfFold reports whether v is one of values, ignoring case, as Karpenter's statechange parser lowercases the
// state before comparing.
func oneOfFold(values []string, v string) bool {
	for _, x := range values {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// parseHealth reads an AWS Health event of type t.
func parseHealth(t contract.EventType, d *detail) (contract.Kind, []string, error) {
	if err := stringsOrNull(&d.EventARN, &d.EventTypeCode, &d.Service, &d.StartTime, &d.EndTime, &d.EventTypeCategory); err != nil {
		return "", nil, fmt.Errorf("%w: detail: %w", ErrUnparseable, err)
	}
	var descriptions []description
	if err := d.EventDescription.decode(&descriptions); err != nil {
		return "", nil, fmt.Errorf("%w: detail.eventDescription: %w", ErrUnparseable, err)
	}
	var entities []affectedEntity
	if err := d.AffectedEntities.decode(&entities); err != nil {
		return "", nil, fmt.Errorf("%w: detail.affectedEntities: %w", ErrUnparseable, err)
	}
	service, _ := d.Service.token()
	category, _ := d.EventTypeCategory.token()
	// Karpenter compares these exactly, without case folding.
	if !slices.Contains(t.Detail[contract.DetailService], service.String()) ||
		!slices.Contains(t.Detail[contract.DetailEventTypeCategory], category.String()) {
		return "", nil, fmt.Errorf("%w: health service %q category %q", ErrNotInterruption, service, category)
	}
	if len(entities) == 0 {
		return "", nil, fmt.Errorf("%w: health event without affectedEntities", ErrUnparseable)
	}
	if len(entities) > maxInstancesPerHealthItem {
		return "", nil, fmt.Errorf("%w: %d affectedEntities exceed %d", ErrUnparseable, len(entities), maxInstancesPerHealthItem)
	}
	ids := make([]string, 0, len(entities))
	for _, e := range entities {
		// EC2 health events can also name dedicated hosts or volumes; only instances have owners.
		if id := e.EntityValue.String(); IsInstanceID(id) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return "", nil, fmt.Errorf("%w: health event names no instance", ErrNotInterruption)
	}
	return t.Kind, ids, nil
}

// parseCanary reads a canary's detail: the bus, a string; the account, absent or an account ID; and 1 to
// contract.MaxCanaryClusters cluster names, each one a name a cluster queue can bear (queuename.ValidateCluster).
func parseCanary(d *detail) (bus, to string, clusters []string, err error) {
	b, err := d.Bus.token()
	if err != nil || len(b) == 0 {
		return "", "", nil, fmt.Errorf("%w: canary without detail.bus", ErrUnparseable)
	}
	a, err := d.ToAccount.token()
	if err != nil || (a != nil && !contract.IsAccount(a)) {
		return "", "", nil, fmt.Errorf("%w: canary detail.account %s is not an account ID", ErrUnparseable, d.ToAccount.first)
	}
	var names []string
	if err := d.Clusters.decode(&names); err != nil {
		return "", "", nil, fmt.Errorf("%w: canary detail.clusters: %w", ErrUnparseable, err)
	}
	if len(names) == 0 || len(names) > contract.MaxCanaryClusters {
		return "", "", nil, fmt.Errorf("%w: a canary names 1 to %d clusters, not %d", ErrUnparseable, contract.MaxCanaryClusters, len(names))
	}
	clusters = make([]string, 0, len(names))
	for _, c := range names {
		if err := queuename.ValidateCluster(c); err != nil {
			return "", "", nil, fmt.Errorf("%w: canary cluster %w", ErrUnparseable, err)
		}
		if !slices.Contains(clusters, c) {
			clusters = append(clusters, c)
		}
	}
	return b.String(), a.String(), clusters, nil
}
