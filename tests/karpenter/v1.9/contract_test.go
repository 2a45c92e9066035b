// Package versiontest runs the bus's contract with Karpenter against the version this module pins.
package versiontest

import (
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/tests/karpenter/contract"
)

func TestContract(t *testing.T) { contract.Run(t) }

// FuzzAgreesWithKarpenter: make fuzz runs it; its seeds run in make test.
func FuzzAgreesWithKarpenter(f *testing.F) { contract.Fuzz(f) }
