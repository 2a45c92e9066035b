package contract

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

func TestLoadSettingsDefaults(t *testing.T) {
	s, err := LoadSettings(getenv(map[string]string{EnvClusterQueuePrefix: "kib_"}))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultSettings
	want.ClusterQueuePrefix = "kib_"
	if !reflect.DeepEqual(s, want) {
		t.Fatalf("settings = %+v, want the defaults %+v", s, want)
	}
}

// TestSettingsRoundTrip: what the infrastructure renders is what the router reads, field for field, whether a
// field is set or left to its default.
func TestSettingsRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
	}{
		{"required only", Settings{ClusterQueuePrefix: "kib-dev_"}},
		{"every field", Settings{
			ClusterQueuePrefix: "kib-prod_", OwnerTagKeys: []string{"team/cluster", "cluster"}, CacheSize: 10,
			OwnerTTL: 2 * time.Hour, NoOwnerTTL: 30 * time.Second, QueueURLTTL: 5 * time.Minute,
			MissingQueueTTL: 10 * time.Second, SendConcurrency: 3, MetricsNamespace: "X", BusName: "kib-prod",
			LogLevel: "debug", BusQueues: []string{"kib-prod-central", "kib-prod-dlq"},
			CentralQueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/kib-prod-central",
			RetryDelay:      time.Second, RetryMaxDelay: 30 * time.Second,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadSettings(getenv(tt.s.Environ()))
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.s.WithDefaults(); !reflect.DeepEqual(got, want) {
				t.Fatalf("read back %+v\nwant      %+v", got, want)
			}
		})
	}
}

// TestEnvironSetsEveryField fails when a field is added to Settings without its variable.
func TestEnvironSetsEveryField(t *testing.T) {
	s := Settings{
		ClusterQueuePrefix: "p_", OwnerTagKeys: []string{"k"}, CacheSize: 1, OwnerTTL: 1, NoOwnerTTL: 1, QueueURLTTL: 1,
		MissingQueueTTL: 1, SendConcurrency: 1, MetricsNamespace: "n", BusName: "b", LogLevel: "warn",
		BusQueues: []string{"q"}, CentralQueueURL: "u", RetryDelay: 1, RetryMaxDelay: 1,
	}
	v := reflect.ValueOf(s)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test leaves %s zero: set it", v.Type().Field(i).Name)
		}
	}
	if got, want := len(s.Environ()), v.NumField(); got != want {
		t.Fatalf("Environ renders %d variables for %d fields", got, want)
	}
}

func TestLoadSettingsReportsEveryError(t *testing.T) {
	_, err := LoadSettings(getenv(map[string]string{
		EnvCacheSize: "0", EnvOwnerTTL: "forever", EnvLogLevel: "loud", EnvSendConcurrency: "x",
		EnvRetryDelay: "10s", EnvRetryMaxDelay: "5s",
	}))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{EnvClusterQueuePrefix + ": must not be empty", EnvCacheSize, EnvOwnerTTL, EnvLogLevel, EnvSendConcurrency, EnvRetryMaxDelay} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

func TestLoadSettingsTrimsOwnerTagKeys(t *testing.T) {
	s, err := LoadSettings(getenv(map[string]string{EnvClusterQueuePrefix: "kib_", EnvOwnerTagKeys: " team/cluster, ,cluster "}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.OwnerTagKeys, "|") != "team/cluster|cluster" {
		t.Fatalf("owner tag keys = %q", s.OwnerTagKeys)
	}
}
