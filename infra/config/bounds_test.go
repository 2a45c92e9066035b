package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestEveryBoundIsItsOwn: each limit the validation enforces is taken at its edge and refused one step past it, so
// that moving a bound by one is seen here (the configuration reference, which docgen reads off the same validation,
// would change too, but in another package).
func TestEveryBoundIsItsOwn(t *testing.T) {
	create := func(nodes string) string {
		return `[{"name":"c","mode":"create","create":{"vpcId":"vpc-0123456789abcdef0","subnetIds":["subnet-0aaaaaaaaaaaaaaa1","subnet-0aaaaaaaaaaaaaaa2"],"systemNodes":` + nodes + `}}]`
	}
	named := func(field string, n int) string {
		return `[{"name":"c","karpenter":{"` + field + `":"` + strings.Repeat("a", n) + `"}}]`
	}
	tests := []struct {
		key       string
		ok, wrong string
		problem   string // the refused value's path
	}{
		{"namePrefix", strings.Repeat("a", MaxNamePrefix), strings.Repeat("a", MaxNamePrefix+1), "namePrefix"},
		{"providerBudgetMB", fmt.Sprint(MinProviderBudgetMB), fmt.Sprint(MinProviderBudgetMB - 1), "providerBudgetMB"},
		{"heartbeat", `{"rate":"1m"}`, `{"rate":"59s"}`, "heartbeat.rate"},
		{"heartbeat", `{"rate":"60m"}`, `{"rate":"61m"}`, "heartbeat.rate"},
		{"clusters", named("namespace", 63), named("namespace", 64), "clusters[0].karpenter.namespace"},
		{"clusters", named("serviceAccount", 253), named("serviceAccount", 254), "clusters[0].karpenter.serviceAccount"}, // a DNS subdomain
		{"clusters", create(`{"min":1,"max":1,"desired":1}`), create(`{"min":1,"max":1,"desired":2}`), "clusters[0].create.systemNodes"},
		{"clusters", create(`{"min":2,"max":2,"desired":2}`), create(`{"min":2,"max":3,"desired":1}`), "clusters[0].create.systemNodes"},
		{"clusters", create(`{"min":3,"max":3,"desired":3}`), create(`{"min":3,"max":2,"desired":3}`), "clusters[0].create.systemNodes"},
		{"router", `{"provisionedPollers":{"minimum":5,"maximum":5}}`, `{"provisionedPollers":{"minimum":5,"maximum":4}}`, "router.provisionedPollers.maximum"},
		{"router", `{"ownerTagKeys":["` + strings.Repeat("k", 128) + `"]}`, `{"ownerTagKeys":["` + strings.Repeat("k", 129) + `"]}`, "router.ownerTagKeys[0]"},
		{"centralQueue", `{"messageRetentionSeconds":60}`, `{"messageRetentionSeconds":59}`, "centralQueue.messageRetentionSeconds"},
		{"centralQueue", `{"messageRetentionSeconds":1209600}`, `{"messageRetentionSeconds":1209601}`, "centralQueue.messageRetentionSeconds"},
		{"centralQueue", `{"maxReceiveCount":1}`, `{"maxReceiveCount":0}`, "centralQueue.maxReceiveCount"},
		{"centralQueue", `{"maxReceiveCount":1000}`, `{"maxReceiveCount":1001}`, "centralQueue.maxReceiveCount"},
		{"centralQueue", `{"eventMaxAgeSeconds":60}`, `{"eventMaxAgeSeconds":59}`, "centralQueue.eventMaxAgeSeconds"},
		{"centralQueue", `{"eventMaxAgeSeconds":86400}`, `{"eventMaxAgeSeconds":86401}`, "centralQueue.eventMaxAgeSeconds"},
		// 6 x 7200 + 0 is SQS's 43200 s of visibility; 6 x 7200 + 1 is past it.
		{"router", `{"timeoutSeconds":900,"maximumBatchingWindowSeconds":0,"batchSize":10}`, ``, ""},
		{"alarms", `{"oldestMessageAgeSeconds":10}`, `{"oldestMessageAgeSeconds":9}`, "alarms.oldestMessageAgeSeconds"},
		{"organization", `{"id":"o-a1b2c3d4e5","callAs":"SELF"}`, `{"id":"o-a1b2c3d4e5","callAs":"OTHER"}`, "organization.callAs"},
		{"organization", `{"id":"o-a1b2c3d4e5","callAs":"DELEGATED_ADMIN"}`, `{"id":"o-a1b2c3d4e5","callAs":"delegated_admin"}`, "organization.callAs"},
	}
	for _, tt := range tests {
		if _, err := Load("dev", testAccount, map[string]string{tt.key: tt.ok}); err != nil {
			t.Errorf("%s %s refused: %v", tt.key, tt.ok, err)
		}
		if tt.wrong == "" {
			continue
		}
		if _, err := Load("dev", testAccount, map[string]string{tt.key: tt.wrong}); err == nil || !strings.Contains(err.Error(), tt.problem+": ") {
			t.Errorf("%s %s: error %v, want %s refused", tt.key, tt.wrong, err, tt.problem)
		}
	}
	// The central queue's visibility timeout (6 x the function's timeout + the window) at SQS's most, and past it.
	visible := Router{TimeoutSeconds: 7200, MaximumBatchingWindowSeconds: 0}
	if visible.VisibilityTimeout() != 43200 {
		t.Fatalf("visibility %d", visible.VisibilityTimeout())
	}
	var p problems
	validateCentralQueue(DefaultCentralQueue, visible, &p)
	if len(p) != 0 {
		t.Errorf("a visibility timeout of 43200 s refused: %v", p)
	}
	visible.MaximumBatchingWindowSeconds = 1
	validateCentralQueue(DefaultCentralQueue, visible, &p)
	if len(p) != 1 || p[0].Path != "router.timeoutSeconds" {
		t.Errorf("a visibility timeout of 43201 s: %v, want it refused", p)
	}
}

// TestOrganizationDefaults: an organization without callAs is created as a delegated administrator; the sizing model
// is given the batching window in seconds.
func TestOrganizationDefaults(t *testing.T) {
	c, err := Load("dev", testAccount, map[string]string{"organization": `{"id":"o-a1b2c3d4e5"}`})
	if err != nil || c.Organization.CallAs != CallAsDelegatedAdmin {
		t.Errorf("callAs %q, %v; want %s", c.Organization.CallAs, err, CallAsDelegatedAdmin)
	}
	c, err = Load("dev", testAccount, map[string]string{"organization": `{"id":"o-a1b2c3d4e5","callAs":"SELF"}`})
	if err != nil || c.Organization.CallAs != CallAsSelf {
		t.Errorf("callAs %q, %v; want %s kept", c.Organization.CallAs, err, CallAsSelf)
	}
	if got := (Router{MaximumBatchingWindowSeconds: 3}).Mapping().Window; got != 3*time.Second {
		t.Errorf("the model's window %s, want 3s", got)
	}
}
