// Package config reads the router's settings from its environment, once, at start-up.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/router/queuename"
)

// Config is the router's validated configuration. README.md documents each variable.
type Config struct {
	QueuePrefix      string        // CLUSTER_QUEUE_PREFIX (required)
	OwnerTagKeys     []string      // OWNER_TAG_KEYS
	CacheSize        int           // CACHE_SIZE
	OwnerTTL         time.Duration // OWNER_CACHE_TTL
	NoOwnerTTL       time.Duration // NO_OWNER_CACHE_TTL
	QueueURLTTL      time.Duration // QUEUE_URL_CACHE_TTL
	MissingQueueTTL  time.Duration // MISSING_QUEUE_CACHE_TTL
	SendConcurrency  int           // SEND_CONCURRENCY
	MetricsNamespace string        // METRICS_NAMESPACE
	BusName          string        // BUS_NAME
	LogLevel         slog.Level    // LOG_LEVEL
}

// Defaults for the optional variables.
const (
	DefaultCacheSize        = 50000
	DefaultOwnerTTL         = 6 * time.Hour
	DefaultNoOwnerTTL       = time.Minute
	DefaultQueueURLTTL      = time.Hour
	DefaultMissingQueueTTL  = time.Minute
	DefaultSendConcurrency  = 8
	DefaultMetricsNamespace = "KarpenterInterruptionBus"
	DefaultBusName          = "default"
)

// Load reads the configuration through getenv (os.Getenv in main) and reports every problem at once.
func Load(getenv func(string) string) (Config, error) {
	c := Config{
		QueuePrefix:      getenv("CLUSTER_QUEUE_PREFIX"),
		MetricsNamespace: orDefault(getenv("METRICS_NAMESPACE"), DefaultMetricsNamespace),
		BusName:          orDefault(getenv("BUS_NAME"), DefaultBusName),
	}
	var errs []error
	if err := queuename.ValidatePrefix(c.QueuePrefix); err != nil {
		errs = append(errs, fmt.Errorf("CLUSTER_QUEUE_PREFIX: %w", err))
	}
	for _, k := range strings.Split(getenv("OWNER_TAG_KEYS"), ",") {
		if k = strings.TrimSpace(k); k != "" {
			c.OwnerTagKeys = append(c.OwnerTagKeys, k)
		}
	}
	positiveInt := func(name string, def int) int {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive integer", name, v))
		}
		return n
	}
	positiveDuration := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("%s: %q is not a positive duration such as 90s or 6h", name, v))
		}
		return d
	}
	c.CacheSize = positiveInt("CACHE_SIZE", DefaultCacheSize)
	c.SendConcurrency = positiveInt("SEND_CONCURRENCY", DefaultSendConcurrency)
	c.OwnerTTL = positiveDuration("OWNER_CACHE_TTL", DefaultOwnerTTL)
	c.NoOwnerTTL = positiveDuration("NO_OWNER_CACHE_TTL", DefaultNoOwnerTTL)
	c.QueueURLTTL = positiveDuration("QUEUE_URL_CACHE_TTL", DefaultQueueURLTTL)
	c.MissingQueueTTL = positiveDuration("MISSING_QUEUE_CACHE_TTL", DefaultMissingQueueTTL)
	if v := getenv("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			errs = append(errs, fmt.Errorf("LOG_LEVEL: %q is not one of debug, info, warn, error", v))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("invalid router configuration:\n%w", err)
	}
	return c, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
