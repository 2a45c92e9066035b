package karpenter

import (
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/contract"
)

func TestSupported(t *testing.T) {
	tests := []struct {
		version string
		want    bool
	}{
		{"1.6.0", true}, {"1.6.3", true}, {"v1.10.2", true}, {"1.14.1", true}, {"1.14.9", true}, {"1.14.0-rc.1", true},
		{"1.5.9", false}, {"0.37.0", false}, {"1.15.0", false}, {"2.0.0", false},
	}
	for _, tt := range tests {
		v, err := Parse(tt.version)
		if err != nil {
			t.Fatalf("Parse(%s): %v", tt.version, err)
		}
		if got := v.Supported(); got != tt.want {
			t.Errorf("%s supported = %t, want %t", tt.version, got, tt.want)
		}
	}
	if d, err := Parse(Default); err != nil || !d.Supported() {
		t.Errorf("the default %s is not a supported version: %v", Default, err)
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{"", "latest", "1.14", "1.14.1.2", "v", "1.x.0"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted it", s)
		}
	}
}

func TestActs(t *testing.T) {
	v := func(s string) Version { x, _ := Parse(s); return x }
	tests := []struct {
		version string
		kind    contract.Kind
		want    bool
	}{
		{"1.6.3", contract.KindSpotInterruption, true},
		{"1.6.3", contract.KindCapacityReservationInterruption, false},
		{"1.9.2", contract.KindCapacityReservationInterruption, false},
		{"1.10.0", contract.KindCapacityReservationInterruption, true},
		{"1.14.1", contract.KindCapacityReservationInterruption, true},
		{"1.14.1", contract.KindOtherEC2, false},
		{"1.14.1", contract.KindCanary, false},
		{"1.6.3", contract.KindCanary, false},
	}
	for _, tt := range tests {
		if got := Acts(v(tt.version), tt.kind); got != tt.want {
			t.Errorf("Acts(%s, %s) = %t, want %t", tt.version, tt.kind, got, tt.want)
		}
	}
}
