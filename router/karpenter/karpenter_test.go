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
		{"1.6.0", true}, {"1.6.3", true}, {"v1.10.2", true}, {"1.14.1", true}, {"1.15.1", true}, {"1.15.9", true},
		{"1.15.0-rc.1", true}, {"1.5.9", false}, {"0.37.0", false}, {"1.16.0", false}, {"2.0.0", false},
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

func TestKubernetes(t *testing.T) {
	tests := []struct {
		version  string
		min, max int
	}{
		{"1.6.0", 26, 33}, {"1.6.5", 26, 33}, {"1.6.6", 26, 34}, {"1.6.8", 26, 34},
		{"1.7.3", 26, 33}, {"1.7.4", 26, 34}, {"1.8.0", 26, 34}, {"1.8.8", 26, 34},
		{"1.9.0", 26, 35}, {"1.12.2", 26, 35}, {"1.13.0", 26, 36}, {"1.14.1", 26, 36},
		{"1.15.0-rc.1", 26, 37}, {"1.15.0", 26, 37}, {"1.15.1", 26, 37},
	}
	for _, tt := range tests {
		v, err := Parse(tt.version)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := v.Kubernetes()
		if !ok || got != (KubernetesRange{tt.min, tt.max}) {
			t.Errorf("Karpenter %s runs on %v (%t), want 1.%d to 1.%d", tt.version, got, ok, tt.min, tt.max)
		}
	}
	if _, ok := (Version{Major: 1, Minor: 5}).Kubernetes(); ok {
		t.Error("an unsupported version has a Kubernetes range")
	}
}

func TestKubernetesRangeContains(t *testing.T) {
	r := KubernetesRange{26, 34}
	tests := []struct {
		k       string
		want    bool
		wantErr bool
	}{
		{"1.26", true, false}, {"1.34", true, false}, {"1.34.2", true, false}, {"v1.30", true, false},
		{"1.25", false, false}, {"1.35", false, false}, {"2.0", false, true}, {"", false, true}, {"1.x", false, true},
	}
	for _, tt := range tests {
		got, err := r.Contains(tt.k)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("%v contains %q = %t, %v; want %t (error %t)", r, tt.k, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestCompare(t *testing.T) {
	v := func(s string) Version { x, _ := Parse(s); return x }
	ordered := []string{"1.6.0", "1.6.10", "1.10.0-rc.1", "1.10.0-rc.2", "1.10.0", "1.15.1", "2.0.0"}
	for i := range ordered {
		for j := range ordered {
			got := v(ordered[i]).Compare(v(ordered[j]))
			if (i < j && got >= 0) || (i == j && got != 0) || (i > j && got <= 0) {
				t.Errorf("Compare(%s, %s) = %d", ordered[i], ordered[j], got)
			}
		}
	}
}

func TestMatrixAndMinors(t *testing.T) {
	minors := Minors()
	if len(minors) == 0 || minors[0] != (Version{Major: Oldest.Major, Minor: Oldest.Minor}) || minors[len(minors)-1].Minor != Newest.Minor {
		t.Errorf("Minors() = %v, want every minor version from %s to %d.%d", minors, Oldest, Newest.Major, Newest.Minor)
	}
	m := Matrix()
	for i := 1; i < len(m); i++ {
		if m[i].From.Compare(m[i-1].From) <= 0 {
			t.Errorf("the matrix is not ordered: %s after %s", m[i].From, m[i-1].From)
		}
	}
	for _, v := range minors {
		if _, ok := v.Kubernetes(); !ok || v.Compare(m[0].From) < 0 {
			t.Errorf("%s has no Kubernetes range", v)
		}
	}
}
