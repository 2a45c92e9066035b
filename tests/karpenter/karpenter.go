// Package karpenter parses messages exactly as Karpenter v1.6.3's interruption controller does, with its own
// parser, so tests check what we forward against the consumer itself.
package karpenter

import (
	"slices"

	"github.com/aws/karpenter-provider-aws/pkg/controllers/interruption"
)

var parser = interruption.NewEventParser(interruption.DefaultParsers...)

// Parsed is what Karpenter makes of a message: its kind (e.g. "spot_interrupted", "no_op") and instances.
type Parsed struct {
	Kind        string
	InstanceIDs []string
}

// Parse returns Karpenter's reading of body; an error is what Karpenter would log before deleting it.
func Parse(body string) (Parsed, error) {
	msg, err := parser.Parse(body)
	if err != nil {
		return Parsed{}, err
	}
	ids := slices.Clone(msg.EC2InstanceIDs())
	slices.Sort(ids)
	return Parsed{Kind: string(msg.Kind()), InstanceIDs: ids}, nil
}
