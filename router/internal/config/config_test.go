package config

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestLoadDefaults(t *testing.T) {
	c, err := Load(env(map[string]string{"CLUSTER_QUEUE_PREFIX": "kib-"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.QueuePrefix != "kib-" || c.CacheSize != DefaultCacheSize || c.OwnerTTL != DefaultOwnerTTL ||
		c.NoOwnerTTL != DefaultNoOwnerTTL || c.SendConcurrency != DefaultSendConcurrency ||
		c.MetricsNamespace != DefaultMetricsNamespace || c.BusName != DefaultBusName || c.LogLevel != slog.LevelInfo {
		t.Fatalf("defaults = %+v", c)
	}
}

func TestLoadAll(t *testing.T) {
	c, err := Load(env(map[string]string{
		"CLUSTER_QUEUE_PREFIX": "kib-", "OWNER_TAG_KEYS": " team/cluster, ,cluster ", "CACHE_SIZE": "10",
		"OWNER_CACHE_TTL": "2h", "NO_OWNER_CACHE_TTL": "30s", "QUEUE_URL_CACHE_TTL": "5m",
		"MISSING_QUEUE_CACHE_TTL": "10s", "SEND_CONCURRENCY": "3", "METRICS_NAMESPACE": "X", "BUS_NAME": "prod",
		"LOG_LEVEL": "debug",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.OwnerTagKeys, "|") != "team/cluster|cluster" || c.CacheSize != 10 || c.OwnerTTL != 2*time.Hour ||
		c.NoOwnerTTL != 30*time.Second || c.QueueURLTTL != 5*time.Minute || c.MissingQueueTTL != 10*time.Second ||
		c.SendConcurrency != 3 || c.MetricsNamespace != "X" || c.BusName != "prod" || c.LogLevel != slog.LevelDebug {
		t.Fatalf("config = %+v", c)
	}
}

func TestLoadReportsEveryError(t *testing.T) {
	_, err := Load(env(map[string]string{"CACHE_SIZE": "0", "OWNER_CACHE_TTL": "forever", "LOG_LEVEL": "loud"}))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, want := range []string{"CLUSTER_QUEUE_PREFIX: must not be empty", "CACHE_SIZE", "OWNER_CACHE_TTL", "LOG_LEVEL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}
