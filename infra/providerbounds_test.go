package infra_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/karpenter-interruption-bus/karpenter-interruption-bus/offline/providerrules"
)

// TestWhatTheConfigurationTakesTheProviderTakes: every number of the configuration that reaches a provider's
// property, at every edge of what AWS's providers take (their rules, offline/providerrules) and of what the
// configuration documents, is either refused by the configuration's own checks, naming the field, before anything is
// declared, or declared with values every provider's rules take. No value the configuration takes fails a preview
// on the provider's check.
func TestWhatTheConfigurationTakesTheProviderTakes(t *testing.T) {
	edges := []int{-1, 0, 1, 2, 3, 9, 10, 11, 13, 14, 59, 60, 61, 127, 128, 129, 200, 201, 299, 300, 301, 365, 366, 899, 900, 901,
		999, 1000, 1001, 1024, 2000, 2001, 3653, 3654, 7200, 7201, 10000, 10001, 10240, 10241, 36500, 36501, 43200, 86400, 86401,
		262144, 262145, 1209600, 1209601}
	create := func(field string) func(n int) map[string]string {
		return func(n int) map[string]string {
			nodes := map[string]int{"min": 2, "max": 3, "desired": 2}
			nodes[field] = n
			return map[string]string{"clusters": fmt.Sprintf(`[{"name":"c","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0",`+
				`"subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"],"systemNodes":{"min":%d,"max":%d,"desired":%d}}}]`,
				nodes["min"], nodes["max"], nodes["desired"])}
		}
	}
	keyed := func(key, field string) func(n int) map[string]string {
		return func(n int) map[string]string {
			return map[string]string{"clusters": `[{"name":"c"}]`, key: fmt.Sprintf(`{%q:%d}`, field, n)}
		}
	}
	router := func(field string) func(n int) map[string]string {
		return func(n int) map[string]string {
			// The smallest batch with no window, so that each limit is met alone.
			r := map[string]int{"batchSize": 10, "maximumBatchingWindowSeconds": 0, "maximumConcurrency": 20}
			r[field] = n
			if r["batchSize"] > 10 && field != "maximumBatchingWindowSeconds" {
				r["maximumBatchingWindowSeconds"] = 1
			}
			var kv []string
			for k, v := range r {
				kv = append(kv, fmt.Sprintf("%q:%d", k, v))
			}
			return map[string]string{"clusters": `[{"name":"c"}]`, "router": "{" + strings.Join(kv, ",") + "}"}
		}
	}
	pollers := func(field string) func(n int) map[string]string {
		return func(n int) map[string]string {
			p := map[string]int{"minimum": 2, "maximum": 10}
			p[field] = n
			return map[string]string{"clusters": `[{"name":"c"}]`,
				"router": fmt.Sprintf(`{"provisionedPollers":{"minimum":%d,"maximum":%d}}`, p["minimum"], p["maximum"])}
		}
	}
	for _, tt := range []struct {
		path   string
		config func(n int) map[string]string
	}{
		{"router.batchSize", router("batchSize")},
		{"router.maximumBatchingWindowSeconds", router("maximumBatchingWindowSeconds")},
		{"router.maximumConcurrency", router("maximumConcurrency")},
		{"router.memoryMb", router("memoryMb")},
		{"router.timeoutSeconds", router("timeoutSeconds")},
		{"router.logRetentionDays", router("logRetentionDays")},
		{"router.canaryIntervalSeconds", router("canaryIntervalSeconds")},
		{"router.reservedConcurrency", router("reservedConcurrency")},
		{"router.provisionedPollers.minimum", pollers("minimum")},
		{"router.provisionedPollers.maximum", pollers("maximum")},
		{"centralQueue.messageRetentionSeconds", keyed("centralQueue", "messageRetentionSeconds")},
		{"centralQueue.maxReceiveCount", keyed("centralQueue", "maxReceiveCount")},
		{"centralQueue.eventMaxAgeSeconds", keyed("centralQueue", "eventMaxAgeSeconds")},
		{"archive.retentionDays", keyed("archive", "retentionDays")},
		{"alarms.oldestMessageAgeSeconds", keyed("alarms", "oldestMessageAgeSeconds")},
		{"clusters[0].create.systemNodes", create("min")},
		{"clusters[0].create.systemNodes", create("max")},
		{"clusters[0].create.systemNodes", create("desired")},
	} {
		taken := 0
		for _, n := range edges {
			_, err := run(t, "dev", tt.config(n))
			switch {
			case err == nil:
				taken++
			case strings.Contains(err.Error(), "has a problem") || strings.Contains(err.Error(), "no rule of offline/providerrules"):
				t.Errorf("%s %d: the configuration took it, the provider refuses it: %v", tt.path, n, err)
			case !strings.Contains(err.Error(), tt.path) && !strings.Contains(err.Error(), tt.path[:strings.LastIndex(tt.path, ".")+1]):
				// The field, or one beside it that the value contradicts (a minimum above its maximum).
				t.Errorf("%s %d: refused without naming the field: %v", tt.path, n, err)
			}
		}
		if taken == 0 {
			t.Errorf("%s: no value taken, the test proves nothing of it", tt.path)
		}
	}
	if _, ok := providerrules.Rules["aws:cloudwatch/logGroup:LogGroup"]; !ok {
		t.Error("no rules of the log group: the test above would prove nothing of its retention")
	}
}
