package iam

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// scpExample is the service control policy docs/security.md shows ("A service control policy"), read from the page
// itself, so that what the page says and what the matrix judges cannot drift apart.
func scpExample(t *testing.T) (Policy, string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i := strings.Index(page, "### A service control policy")
	if i < 0 {
		t.Fatal("docs/security.md has no section \"A service control policy\"")
	}
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(page[i:])
	if m == nil {
		t.Fatal("the section \"A service control policy\" of docs/security.md has no JSON block")
	}
	var p Policy
	if err := json.Unmarshal([]byte(m[1]), &p); err != nil {
		t.Fatalf("the service control policy of docs/security.md: %v", err)
	}
	return p, m[1]
}

// The example's placeholders AWS chooses: the seal key's ID and the router's mapping's UUID.
const (
	exampleKey     = "arn:aws:kms:eu-west-1:" + account + ":key/1234abcd-12ab-34cd-56ef-1234567890ab"
	exampleMapping = "arn:aws:lambda:eu-west-1:" + account + ":event-source-mapping:a1b2c3d4-5678-90ab-cdef-11111EXAMPLE"
	deployRole     = "arn:aws:iam::" + account + ":role/pulumi-deploy"
)

// TestTheServiceControlPolicyExample: the SCP docs/security.md shows names the resources of the stack it is written for
// (kib-prod in 111122223333, eu-west-1: the prodStack the matrix renders), and within AWS Organizations' 5,120
// characters; under it, an administrator of the hub allowed everything (lambda:* included) is explicitly denied going
// around the central queue (invoking the router, a version of it, mapping a queue to it, changing, repointing or
// deleting its mapping), changing the router or passing its role, changing the quarantine's attributes, the seal key's
// policy or the archive's, and deleting a record, a version or a ledger entry once the bucket's policy is lifted; each
// row evaluated again without the SCP lets the administrator in (the row can fail), and the deploy role, which the SCP
// excepts, may do each one. What it must not stop: the administrator invoking or mapping another function, and the
// router and the redrive role doing their work.
func TestTheServiceControlPolicyExample(t *testing.T) {
	scp, text := scpExample(t)
	if n := len(compact(t, text)); n > 5120 {
		t.Errorf("the example is %d characters without white space, over the 5,120 AWS Organizations takes of an SCP", n)
	}
	s := load(t, "prod", account, "eu-west-1", render(t, "prod", prodStack, account))
	fn := s.ARN("lambda", "function:"+s.RouterFunction)
	names := []string{"*", s.Quarantine().ARN, exampleKey, s.Archive.ARN, s.Archive.ARN + "/*", s.Role(t, s.RouterRole).ARN, fn, fn + ":*", exampleMapping}
	for _, st := range statements(scp) {
		for _, r := range asList(st["Resource"]) {
			if !slices.Contains(names, r) {
				t.Errorf("statement %v names %s, which is none of the stack's %v", st["Sid"], r, names)
			}
		}
		cond, _ := st["Condition"].(map[string]any)
		if not, _ := cond["ArnNotLike"].(map[string]any); not["aws:PrincipalArn"] != deployRole {
			t.Errorf("statement %v excepts %v, want the deploy role %s alone", st["Sid"], not["aws:PrincipalArn"], deployRole)
		}
		if like, _ := cond["ArnLike"].(map[string]any); like != nil && !slices.Equal(asList(like["lambda:FunctionArn"]), []string{fn, fn + ":*"}) {
			t.Errorf("statement %v names the functions %v, want the router and its versions and aliases", st["Sid"], like["lambda:FunctionArn"])
		}
	}

	admin, deployer := s.admin("*"), s.session(&Role{Name: "pulumi-deploy", ARN: deployRole, Policies: s.admin("*").identity})
	other := s.ARN("lambda", "function:orders")
	record := s.Archive.ARN + "/refused/2026/11/27/m.forged_sender.json"
	claim := s.Archive.ARN + "/claims/4f1c9a/000000.json"
	lifted := withoutStatements(s.Archive.Policy, "NobodyDeletes")
	var rows []row
	for _, d := range []struct {
		what, action, resource string
		context                map[string]any
		policy                 Policy
	}{
		{"invokes the router", "lambda:InvokeFunction", fn, nil, nil},
		{"invokes a version of the router", "lambda:InvokeFunction", fn + ":7", nil, nil},
		{"invokes the router asynchronously", "lambda:InvokeAsync", fn, nil, nil},
		{"maps a queue of its own to the router", "lambda:CreateEventSourceMapping", "*", map[string]any{"lambda:FunctionArn": fn}, nil},
		{"maps a queue to an alias of the router", "lambda:CreateEventSourceMapping", "*", map[string]any{"lambda:FunctionArn": fn + ":live"}, nil},
		{"changes the router's mapping", "lambda:UpdateEventSourceMapping", exampleMapping, map[string]any{"lambda:FunctionArn": fn}, nil},
		{"points the router's mapping at a function of its own", "lambda:UpdateEventSourceMapping", exampleMapping, map[string]any{"lambda:FunctionArn": other}, nil},
		{"changes the router's mapping, naming no function", "lambda:UpdateEventSourceMapping", exampleMapping, nil, nil},
		{"deletes the router's mapping", "lambda:DeleteEventSourceMapping", exampleMapping, map[string]any{"lambda:FunctionArn": fn}, nil},
		{"changes the router's code", "lambda:UpdateFunctionCode", fn, nil, nil},
		{"changes the router's configuration", "lambda:UpdateFunctionConfiguration", fn, nil, nil},
		{"passes the router's role", "iam:PassRole", s.Role(t, s.RouterRole).ARN, nil, nil},
		{"sets the quarantine's attributes", "sqs:SetQueueAttributes", s.Quarantine().ARN, nil, s.Quarantine().Policy},
		{"changes the seal key's policy", "kms:PutKeyPolicy", exampleKey, nil, s.SealKey.Policy},
		{"changes the archive's policy", "s3:PutBucketPolicy", s.Archive.ARN, nil, s.Archive.Policy},
		{"deletes the archive's policy", "s3:DeleteBucketPolicy", s.Archive.ARN, nil, s.Archive.Policy},
		{"hides a ledger entry behind a delete marker, the bucket's policy lifted", "s3:DeleteObject", claim, nil, lifted},
		{"deletes a record, the bucket's policy lifted", "s3:DeleteObject", record, nil, lifted},
		{"deletes a record's version, the bucket's policy lifted", "s3:DeleteObjectVersion", record, nil, lifted},
		{"bypasses governance retention, the bucket's policy lifted", "s3:BypassGovernanceRetention", record, nil, lifted},
	} {
		who := admin
		for k, v := range d.context {
			who = who.with(k, v)
		}
		r := row{name: "under the SCP example, an administrator allowed * " + d.what, who: who, action: d.action, resource: d.resource,
			resourceAcc: s.Account, resourcePolicy: d.policy, scp: scp, want: explicitlyDenied}
		rows = append(rows, r, widened(r, "without the SCP", func(w *row) { w.scp = nil }))
		byDeployer := r
		byDeployer.name, byDeployer.want = "under the SCP example, the deploy role "+d.what, allowed
		byDeployer.who = deployer
		for k, v := range d.context {
			byDeployer.who = byDeployer.who.with(k, v)
		}
		rows = append(rows, byDeployer)
	}
	// What it must not stop.
	router, redrive := s.session(s.Role(t, s.RouterRole)), s.session(s.Role(t, s.RedriveRole))
	onArchive := func(who caller) caller { return who.with("s3:ResourceAccount", s.Account) }
	rows = append(rows,
		row{name: "under the SCP example, an administrator invokes another function", who: admin, action: "lambda:InvokeFunction", resource: other, scp: scp, want: allowed},
		row{name: "under the SCP example, an administrator maps a queue to another function", who: admin.with("lambda:FunctionArn", other),
			action: "lambda:CreateEventSourceMapping", resource: "*", scp: scp, want: allowed},
		row{name: "under the SCP example, an administrator changes another function's mapping", who: admin.with("lambda:FunctionArn", other),
			action: "lambda:UpdateEventSourceMapping", resource: s.ARN("lambda", "event-source-mapping:00000000-1111-2222-3333-444444444444"), scp: scp, want: allowed},
		row{name: "under the SCP example, the router archives a record", who: onArchive(router).with("s3:if-none-match", "*"), action: "s3:PutObject", resource: record,
			resourceAcc: s.Account, resourcePolicy: s.Archive.Policy, scp: scp, want: allowed},
		row{name: "under the SCP example, the router keeps a refusal in the quarantine", who: router, action: "sqs:SendMessage", resource: s.Quarantine().ARN,
			resourceAcc: s.Account, resourcePolicy: s.Quarantine().Policy, scp: scp, want: allowed},
		row{name: "under the SCP example, the redrive role reads a record", who: onArchive(redrive), action: "s3:GetObject", resource: record,
			resourceAcc: s.Account, resourcePolicy: s.Archive.Policy, scp: scp, want: allowed},
		row{name: "under the SCP example, the redrive role reads the quarantine", who: redrive, action: "sqs:ReceiveMessage", resource: s.Quarantine().ARN,
			resourceAcc: s.Account, resourcePolicy: s.Quarantine().Policy, scp: scp, want: allowed},
	)
	evaluate(t, rows)
	t.Logf("%d requests evaluated", len(rows))
}

// compact is JSON text without its insignificant white space.
func compact(t *testing.T, text string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// asList is a policy value (a string or a list of them) as a list.
func asList(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, e.(string))
		}
		return out
	}
	return nil
}
